//! The generation step of the checks of published crates, used by each checks crate's
//! `build.rs` and by its `generated` test: the published source of the checked crates, taken
//! from the registry through `cargo metadata`, with its `use` lines rewritten and nothing else
//! changed but listed patches ([`verify`] is the test of that).
//!
//! The rewrite: a `use` statement at the top level of a file (column 0) whose path starts at
//! `core::` or `std::` and names an atomic gets the prefix `crate::shim::` (the checker's
//! atomics, in a module that is `core`/`std` otherwise: `parkcheck-shim`); one whose path is
//! `parking_lot_core` gets the prefix `crate::` (the crate's `parking_lot_core` is
//! parkcheck's model of it); in a crate root compiled as a module (rsevents' `lib.rs`), one
//! that starts at `crate::` gets that module's path after `crate::`. Every other line is the
//! published line, except the whole-line patches each crate lists with their reasons
//! (`src/patches.rs`), each asserted to apply exactly as many times as listed. The files' own
//! `#[cfg(test)]` modules stay, inert: the generated library is never built as a test.

pub mod verify;

use std::path::{Path, PathBuf};
use std::process::Command;

/// One source file to generate: its path under the package's `src/`, the module it becomes,
/// and whether it is a crate root compiled as that module (its `use crate::` lines then name
/// the module).
pub struct File {
    pub path: &'static str,
    pub module: &'static str,
    pub root: bool,
}

/// One published package and the files taken from it.
pub struct Source {
    pub package: &'static str,
    pub version: &'static str,
    pub files: &'static [File],
}

/// A whole-line change beyond the `use` rewrite: in `file` (`package/path`), each line equal
/// to `from` becomes `to`, `times` times in all; `why` is the reason.
pub struct Patch {
    pub file: &'static str,
    pub from: &'static str,
    pub to: &'static str,
    pub times: usize,
    pub why: &'static str,
}

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

/// The source directory of the package `name` at exactly `version`, taken from the registry
/// by cargo through a manifest of its own under `scratch` (made there if missing): for the
/// versions that cannot all be dependencies of one manifest, since cargo keeps one version
/// of each semver-compatible range in a dependency graph. Cargo selects a `yanked` version
/// only on request (`cargo update --precise`), as for any dependency.
pub fn fetch_source_dir(scratch: &Path, name: &str, version: &str, yanked: bool) -> PathBuf {
    let dir = scratch.join(format!("{name}-{version}"));
    std::fs::create_dir_all(&dir).expect("the scratch directory is writable");
    // A yanked version is reached from the highest one below it that is not.
    let requirement = if yanked {
        format!("<={version}")
    } else {
        format!("={version}")
    };
    let manifest = format!(
        "[package]\nname = \"fetch\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
         publish = false\n\n[lib]\npath = \"lib.rs\"\n\n[dependencies]\n\
         {name} = {{ version = \"{requirement}\", default-features = false }}\n\n[workspace]\n"
    );
    let path = dir.join("Cargo.toml");
    if std::fs::read_to_string(&path).ok().as_deref() != Some(manifest.as_str()) {
        std::fs::write(&path, &manifest).expect("the scratch directory is writable");
        std::fs::write(dir.join("lib.rs"), "").expect("the scratch directory is writable");
        let _ = std::fs::remove_file(dir.join("Cargo.lock"));
    }
    if !dir.join("Cargo.lock").exists() {
        cargo(&dir, &["generate-lockfile"]);
        if yanked {
            cargo(&dir, &["update", "--package", name, "--precise", version]);
        }
    }
    source_dir(&dir, name, version)
}

/// One distinct text of a file across published versions.
pub struct Distinct {
    /// The file's text.
    pub text: String,
    /// The versions that publish it, in the order given.
    pub versions: Vec<&'static str>,
    /// Where the first of them has it.
    pub published: PathBuf,
}

/// `file` (a path under `src/`) of the package `name` at each of `versions` (with whether it
/// is yanked), each taken from the registry ([`fetch_source_dir`], under `scratch`), grouped
/// by text in the order first seen: versions that share a text are one check.
pub fn fetch_distinct(
    scratch: &Path,
    name: &str,
    versions: &[(&'static str, bool)],
    file: &str,
) -> Vec<Distinct> {
    let mut distinct: Vec<Distinct> = Vec::new();
    for &(version, yanked) in versions {
        let path = fetch_source_dir(scratch, name, version, yanked)
            .join("src")
            .join(file);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        match distinct.iter_mut().find(|d| d.text == text) {
            Some(d) => d.versions.push(version),
            None => distinct.push(Distinct {
                text,
                versions: vec![version],
                published: path,
            }),
        }
    }
    distinct
}

/// The module a generated copy named `dir` is compiled as: `v` and the version with `.` and
/// `-` as `_` (`1.12.0-pre.1`: `v1_12_0_pre_1`), or a name that is no version with `-` as `_`.
pub fn module_name(dir: &str) -> String {
    if dir.starts_with(|c: char| c.is_ascii_digit()) {
        format!("v{}", dir.replace(['.', '-'], "_"))
    } else {
        dir.replace('-', "_")
    }
}

/// Writes `text` of `file` generated ([`generate`], with `patches`) to `out_dir/name`, and
/// returns the `#[path]` module declaration of it as `module` for `modules.rs`.
pub fn write_module(
    out_dir: &Path,
    name: &str,
    module: &str,
    text: &str,
    patches: &[Patch],
) -> String {
    let generated = out_dir.join(name);
    std::fs::create_dir_all(generated.parent().expect("a file has a directory"))
        .expect("OUT_DIR is writable");
    std::fs::write(&generated, generate(text, name, None, patches)).expect("OUT_DIR is writable");
    format!(
        "#[path = {:?}]\n#[allow(warnings, clippy::all, clippy::pedantic, reason = \"published source\")]\nmod {module};\n",
        generated.display().to_string(),
    )
}

/// Runs cargo with `args` on the manifest in `dir`, asserting that it succeeds.
fn cargo(dir: &Path, args: &[&str]) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out = Command::new(cargo)
        .args(args)
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"))
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A top-level `use` statement rewritten (the module docs say how), or `None` if it stays;
/// `module` is the module a crate root is compiled as.
pub fn rewrite(statement: &str, module: Option<&str>) -> Option<String> {
    let (keyword, path) = match statement.strip_prefix("pub use ") {
        Some(path) => ("pub use ", path),
        None => ("use ", statement.strip_prefix("use ")?),
    };
    // (No `let` chains: the 0.12 crate's build script is edition 2021.)
    let plc = path.strip_prefix("parking_lot_core");
    if plc.is_some_and(|rest| {
        rest.starts_with("::") || rest.starts_with(" as ") || rest.starts_with(';')
    }) {
        return Some(format!("{keyword}crate::{path}"));
    }
    if (path.starts_with("core::") || path.starts_with("std::")) && statement.contains("atomic") {
        return Some(format!("{keyword}crate::shim::{path}"));
    }
    if let (Some(module), Some(rest)) = (module, path.strip_prefix("crate::")) {
        return Some(format!("{keyword}crate::{module}::{rest}"));
    }
    None
}

/// `source` (the file `file`) with `patches` applied and its top-level `use` statements
/// rewritten; `module` is the module a crate root is compiled as.
pub fn generate(source: &str, file: &str, module: Option<&str>, patches: &[Patch]) -> String {
    rewrite_uses(&patch(source, file, patches), module)
}

/// `source` with the whole-line `patches` of `file` applied, each asserted to apply exactly
/// as many times as it says.
pub fn patch(source: &str, file: &str, patches: &[Patch]) -> String {
    let mut out = String::with_capacity(source.len());
    let mut applied = vec![0; patches.len()];
    for line in source.split_inclusive('\n') {
        let text = line.trim_end_matches('\n');
        match patches
            .iter()
            .position(|p| p.file == file && p.from == text)
        {
            Some(i) => {
                applied[i] += 1;
                out.push_str(patches[i].to);
                out.push_str(&line[text.len()..]);
            }
            None => out.push_str(line),
        }
    }
    for (p, n) in patches.iter().zip(applied) {
        if p.file == file {
            assert_eq!(
                n, p.times,
                "{file}: the patch of {:?} applied {n} times",
                p.from
            );
        }
    }
    out
}

/// `source` with its `use` statements rewritten (line for line: a statement keeps its lines,
/// the prefix goes into its first). Top-level statements get every rule; an indented one (in
/// an inline module) only a crate root's `crate::` rule, since the other indented ones are
/// the files' own test modules, which stay as published.
fn rewrite_uses(source: &str, module: Option<&str>) -> String {
    let lines: Vec<&str> = source.split_inclusive('\n').collect();
    let mut out = String::with_capacity(source.len() + 256);
    let mut i = 0;
    while i < lines.len() {
        let text = lines[i].trim_start();
        if !(text.starts_with("use ") || text.starts_with("pub use ")) {
            out.push_str(lines[i]);
            i += 1;
            continue;
        }
        let indent = &lines[i][..lines[i].len() - text.len()];
        let start = i;
        while !lines[i].trim_end().ends_with(';') {
            i += 1;
        }
        let statement: String = lines[start..=i].concat();
        let new = rewrite(statement.trim_start(), module).filter(|new| {
            indent.is_empty()
                || new.contains("crate::")
                    && !new.contains("crate::shim::")
                    && !new.contains("crate::parking_lot_core")
        });
        match new {
            Some(new) => {
                out.push_str(indent);
                out.push_str(&new);
            }
            None => out.push_str(&statement),
        }
        i += 1;
    }
    out
}

/// The build script's work: generates each file of `sources` into `OUT_DIR` (as
/// `package/path`, with `patches` applied), and writes `modules.rs` there (each file as a
/// module of the crate, by its absolute path) and `sources.rs` (each file's name, published
/// path and, for a crate root, its module: for the `generated` test).
pub fn build(sources: &[Source], patches: &[Patch]) {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it"));
    let mut modules = String::new();
    let mut listed = String::from(
        "/// Each generated file: its name, its published source, and for a crate root the \
         module it becomes.\npub(crate) const SOURCES: &[(&str, &str, Option<&str>)] = &[\n",
    );
    for source in sources {
        let src = source_dir(&manifest_dir, source.package, source.version).join("src");
        std::fs::create_dir_all(out_dir.join(source.package)).expect("OUT_DIR is writable");
        for file in source.files {
            let original = src.join(file.path);
            let text = std::fs::read_to_string(&original)
                .unwrap_or_else(|e| panic!("{}: {e}", original.display()));
            let name = format!("{}/{}", source.package, file.path);
            let root = file.root.then_some(file.module);
            let generated = out_dir.join(&name);
            std::fs::write(&generated, generate(&text, &name, root, patches))
                .expect("OUT_DIR is writable");
            modules.push_str(&format!(
                "#[path = {:?}]\n#[allow(warnings, clippy::all, clippy::pedantic, reason = \"published source\")]\nmod {};\n",
                generated.display().to_string(),
                file.module
            ));
            listed.push_str(&format!(
                "    ({name:?}, {:?}, {root:?}),\n",
                original.display().to_string()
            ));
            println!("cargo::rerun-if-changed={}", original.display());
        }
    }
    listed.push_str("];\n");
    std::fs::write(out_dir.join("modules.rs"), modules).expect("OUT_DIR is writable");
    std::fs::write(out_dir.join("sources.rs"), listed).expect("OUT_DIR is writable");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/patches.rs");
}
