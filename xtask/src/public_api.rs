//! `cargo xtask public-api`: the public API of each publishable crate, in its default feature
//! set, against the listing committed in `api/<package>.txt`, so that any change to what users
//! can name shows in review as a change to that file. `--bless` rewrites the listings.
//!
//! The listing comes from rustdoc's JSON output, read by the `public-api` crate (one line per
//! item, sorted). Rustdoc emits JSON only as an unstable option; it is asked of the workspace's
//! own toolchain with `RUSTC_BOOTSTRAP=1` rather than of a nightly, so the check needs nothing
//! a fresh machine lacks and its input does not move with whatever nightly is installed. The
//! JSON format changes between Rust releases: `public-api` 0.52.1 reads format 57, Rust 1.95's.
//! A toolchain with another format is refused with a message naming both, and the pin in
//! `xtask/Cargo.toml` moves with the workspace's Rust version.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use crate::workspace_root;

/// The publishable packages and their library names (the JSON file rustdoc writes).
const PACKAGES: [(&str, &str); 5] = [
    ("parksema", "parksema"),
    ("parkcheck", "parkcheck"),
    ("parksema-watchdog", "watchdog"),
    ("parksema-condvar", "parksema_condvar"),
    ("parksema-rwlock", "parksema_rwlock"),
];

/// The rustdoc JSON format `public-api` 0.52.1 reads.
const FORMAT_VERSION: u64 = 57;

/// Builds `package`'s rustdoc JSON in its default feature set; returns its path.
fn rustdoc_json(root: &Path, target: &Path, package: &str, lib: &str) -> Result<PathBuf, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root)
        .env("RUSTC_BOOTSTRAP", "1")
        .args(["rustdoc", "--quiet", "--lib", "-p", package, "--target-dir"])
        .arg(target)
        .args(["--", "-Z", "unstable-options", "--output-format", "json"]);
    if !crate::run(&mut cmd) {
        return Err(format!(
            "rustdoc's JSON output for {package} failed (above)"
        ));
    }
    let path = target.join("doc").join(format!("{lib}.json"));
    let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let format = serde_json::from_str::<serde_json::Value>(&text)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .get("format_version")
        .and_then(serde_json::Value::as_u64);
    if format != Some(FORMAT_VERSION) {
        return Err(format!(
            "{}: rustdoc JSON format {format:?}, but public-api 0.52.1 reads format \
             {FORMAT_VERSION} (Rust 1.95): move the pin in xtask/Cargo.toml with the toolchain",
            path.display()
        ));
    }
    Ok(path)
}

/// The listing of `package`'s public API, one item a line, ending in a newline.
fn listing(root: &Path, target: &Path, package: &str, lib: &str) -> Result<String, String> {
    let json = rustdoc_json(root, target, package, lib)?;
    let api = public_api::Builder::from_rustdoc_json(&json)
        .build()
        .map_err(|e| format!("{}: {e}", json.display()))?;
    Ok(format!("{api}"))
}

/// The lines only in `old` (`-`) and only in `new` (`+`).
fn changes(old: &str, new: &str) -> Vec<String> {
    let old: BTreeSet<&str> = old.lines().collect();
    let new: BTreeSet<&str> = new.lines().collect();
    let removed = old.difference(&new).map(|l| format!("- {l}"));
    let added = new.difference(&old).map(|l| format!("+ {l}"));
    removed.chain(added).collect()
}

pub(crate) fn public_api(bless: bool) -> ExitCode {
    let root = workspace_root();
    let target = root.join("target").join("public-api");
    let mut failed = false;
    for (package, lib) in PACKAGES {
        let committed_path = root.join("api").join(format!("{package}.txt"));
        let now = match listing(&root, &target, package, lib) {
            Ok(now) => now,
            Err(e) => {
                eprintln!("xtask public-api: {e}");
                failed = true;
                continue;
            }
        };
        if bless {
            if let Err(e) =
                fs::create_dir_all(root.join("api")).and_then(|()| fs::write(&committed_path, &now))
            {
                eprintln!("xtask public-api: {}: {e}", committed_path.display());
                failed = true;
            } else {
                println!("{package}: {} items written", now.lines().count());
            }
            continue;
        }
        let committed = fs::read_to_string(&committed_path).unwrap_or_default();
        let diff = changes(&committed, &now);
        if diff.is_empty() && committed == now {
            println!("{package}: {} items, as committed", now.lines().count());
        } else if diff.is_empty() {
            // The same items, listed in another order or with an `impl` header repeated: what
            // moving methods between files does. Not an API change, but the file is refreshed so
            // that a later real change shows as a clean diff.
            failed = true;
            println!(
                "{package}: the same items as api/{package}.txt, listed in another order \
                 (methods moved between impl blocks); run `cargo xtask public-api --bless`"
            );
        } else {
            failed = true;
            println!(
                "{package}: the public API differs from api/{package}.txt \
                 (run `cargo xtask public-api --bless` if the change is meant):"
            );
            for line in diff {
                println!("  {line}");
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::changes;

    #[test]
    fn changes_name_removed_then_added_lines() {
        let old = "pub fn a()\npub fn b()\n";
        let new = "pub fn b()\npub fn c()\n";
        assert_eq!(changes(old, new), ["- pub fn a()", "+ pub fn c()"]);
        assert!(changes(old, old).is_empty());
    }
}
