//! The generation step of the parking_lot checks, shared by each version's `build.rs` and by
//! its `generated` test: parking_lot's published source, found through `cargo metadata`,
//! with its `use` lines rewritten and nothing else changed.
//!
//! The rewrite: a `use` statement at the top level of a file (column 0) whose path starts at
//! `core::` or `std::` and names an atomic gets the prefix `crate::shim::` (the checker's
//! atomics, in a module that is `core`/`std` otherwise); one that starts at
//! `parking_lot_core::` gets the prefix `crate::` (the crate's `parking_lot_core` is
//! parkcheck's model of it). Every other line is the published line. The files' own
//! `#[cfg(test)]` modules stay, inert: the generated library is never built as a test.

#![allow(dead_code, reason = "each user takes the part it needs")]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The source directory of the package `name` at exactly `version` in the dependency graph
/// of the manifest in `manifest_dir`, from `cargo metadata` (the package must be a
/// dependency of that manifest, so that cargo has downloaded it).
pub fn source_dir(manifest_dir: &Path, name: &str, version: &str) -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--locked",
            "--manifest-path",
        ])
        .arg(manifest_dir.join("Cargo.toml"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata is JSON");
    let packages = meta["packages"]
        .as_array()
        .expect("metadata lists packages");
    let manifest = packages
        .iter()
        .find(|p| p["name"] == name && p["version"] == version)
        .and_then(|p| p["manifest_path"].as_str())
        .unwrap_or_else(|| panic!("{name} {version} is not in the dependency graph"));
    Path::new(manifest)
        .parent()
        .expect("a manifest has a directory")
        .to_path_buf()
}

/// How a top-level `use` statement is rewritten, if it is: the prefix put before its path.
pub fn prefix_for(statement: &str) -> Option<&'static str> {
    let path = statement
        .strip_prefix("pub use ")
        .or_else(|| statement.strip_prefix("use "))?;
    if path.starts_with("parking_lot_core::") {
        Some("crate::")
    } else if (path.starts_with("core::") || path.starts_with("std::"))
        && statement.contains("atomic")
    {
        Some("crate::shim::")
    } else {
        None
    }
}

/// `source` with its top-level `use` statements rewritten (the module docs say how).
pub fn generate(source: &str) -> String {
    let lines: Vec<&str> = source.split_inclusive('\n').collect();
    let mut out = String::with_capacity(source.len() + 256);
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if !(line.starts_with("use ") || line.starts_with("pub use ")) {
            out.push_str(line);
            i += 1;
            continue;
        }
        // The statement runs to the line that ends it.
        let start = i;
        while !lines[i].trim_end().ends_with(';') {
            i += 1;
        }
        let statement: String = lines[start..=i].concat();
        match prefix_for(&statement) {
            Some(prefix) => {
                let (keyword, path) = statement
                    .split_once("use ")
                    .expect("a use statement has `use `");
                out.push_str(keyword);
                out.push_str("use ");
                out.push_str(prefix);
                out.push_str(path);
            }
            None => out.push_str(&statement),
        }
        i += 1;
    }
    out
}

/// The build script's work: generates each of `files` of `name` `version` into `OUT_DIR`,
/// and writes `modules.rs` there (each file as a module of the crate, by its absolute path)
/// and `sources.rs` (each file's published path, for the `generated` test).
pub fn build(name: &str, version: &str, files: &[&str]) {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it"));
    let src = source_dir(&manifest_dir, name, version).join("src");
    let mut modules = String::new();
    let mut sources = String::from(
        "/// Each generated file's published source.\npub(crate) const SOURCES: &[(&str, &str)] = &[\n",
    );
    for file in files {
        let original = src.join(file);
        let text = std::fs::read_to_string(&original)
            .unwrap_or_else(|e| panic!("{}: {e}", original.display()));
        let generated = out_dir.join(file);
        std::fs::write(&generated, generate(&text)).expect("OUT_DIR is writable");
        let module = file.trim_end_matches(".rs");
        modules.push_str(&format!(
            "#[path = {:?}]\n#[allow(warnings, clippy::all, clippy::pedantic, reason = \"published source, unchanged but for its use lines\")]\nmod {module};\n",
            generated.display().to_string()
        ));
        sources.push_str(&format!(
            "    ({file:?}, {:?}),\n",
            original.display().to_string()
        ));
        println!("cargo::rerun-if-changed={}", original.display());
    }
    sources.push_str("];\n");
    std::fs::write(out_dir.join("modules.rs"), modules).expect("OUT_DIR is writable");
    std::fs::write(out_dir.join("sources.rs"), sources).expect("OUT_DIR is writable");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=../gen.rs");
}
