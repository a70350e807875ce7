//! The test that the generated modules are the published source with only their `use`
//! lines rewritten and the listed patches applied, which each checks crate's
//! `tests/generated.rs` runs on its own files (listing, in `changed`, how many lines of each
//! file the rewrite changes). The rewrite is checked here against rules of its own, not by
//! running the generator again.

use crate::Patch;
use std::path::Path;

/// Each allowed rewrite: the prefix the generated line has after `use ` (or `pub use `), and
/// the start of the published path it goes before.
const REWRITES: &[(&str, &str)] = &[
    ("crate::shim::", "core::"),
    ("crate::shim::", "std::"),
    ("crate::", "parking_lot_core"),
];

/// Whether `generated` is `published` with one allowed rewrite (`root`: the module a crate
/// root is compiled as, whose `use crate::` lines name it).
fn is_use_rewrite(published: &str, generated: &str, root: Option<&str>) -> bool {
    let nested = root.map(|m| format!("crate::{m}::"));
    let rules = REWRITES
        .iter()
        .map(|&(prefix, path)| (prefix.to_string(), path))
        .chain(nested.map(|n| (n, "")));
    let rules: Vec<_> = rules.collect();
    ["use ", "pub use "].iter().any(|keyword| {
        rules.iter().any(|(prefix, path)| {
            let Some(old) = published.strip_prefix(keyword) else {
                return false;
            };
            let new = generated.strip_prefix(&format!("{keyword}{prefix}"));
            let root_rule = path.is_empty();
            let (old, expected_path) = if root_rule {
                (old.strip_prefix("crate::").unwrap_or("\u{0}"), "")
            } else {
                (old, *path)
            };
            old.starts_with(expected_path) && new == Some(old)
        })
    })
}

/// Asserts that each generated file of `sources` (its name under `out_dir`, its published
/// source, and for a crate root the module it becomes: the build script's `sources.rs`)
/// differs from its published source only by the `use` rewrites, `changed` lines of them (in
/// the order of `sources`), and by `patches`, each applied as many times as it says.
pub fn assert_generated_as_listed(
    out_dir: &Path,
    sources: &[(&str, &str, Option<&str>)],
    changed: &[(&str, usize)],
    patches: &[Patch],
) {
    assert_eq!(
        sources.iter().map(|(f, _, _)| *f).collect::<Vec<_>>(),
        changed.iter().map(|(f, _)| *f).collect::<Vec<_>>(),
        "the files generated are the files listed as changed"
    );
    for (&(file, published, root), &(_, expected)) in sources.iter().zip(changed) {
        let published = std::fs::read_to_string(published).unwrap();
        let generated = std::fs::read_to_string(out_dir.join(file)).unwrap();
        let old: Vec<_> = published.lines().collect();
        let new: Vec<_> = generated.lines().collect();
        assert_eq!(old.len(), new.len(), "{file}: lines added or removed");
        let mut rewritten = 0;
        let mut patched = vec![0; patches.len()];
        for (n, (a, b)) in old.iter().zip(&new).enumerate() {
            if a == b {
                continue;
            }
            let patch = patches
                .iter()
                .position(|p| p.file == file && p.from == *a && p.to == *b);
            if let Some(i) = patch {
                patched[i] += 1;
            } else {
                // An indented statement keeps its indentation.
                let indent = a.len() - a.trim_start().len();
                assert!(
                    a[..indent] == b[..indent.min(b.len())]
                        && is_use_rewrite(&a[indent..], &b[indent..], root),
                    "{file}:{}: a change that is neither a use line's rewrite nor a listed \
                     patch:\n  published: {a}\n  generated: {b}",
                    n + 1
                );
                rewritten += 1;
            }
        }
        assert_eq!(rewritten, expected, "{file}: use lines rewritten");
        for (p, n) in patches.iter().zip(patched) {
            if p.file == file {
                assert_eq!(
                    n, p.times,
                    "{file}: {:?} patched {n} times ({})",
                    p.from, p.why
                );
            }
        }
    }
}

#[test]
fn the_rewrite_check_rejects_other_changes() {
    assert!(is_use_rewrite(
        "use core::sync::atomic::{AtomicU8, Ordering};",
        "use crate::shim::core::sync::atomic::{AtomicU8, Ordering};",
        None
    ));
    assert!(is_use_rewrite(
        "use parking_lot_core as plc;",
        "use crate::parking_lot_core as plc;",
        None
    ));
    assert!(is_use_rewrite(
        "    use crate::{Awaitable, AwaitableError};".trim_start(),
        "use crate::rsevents::{Awaitable, AwaitableError};",
        Some("rsevents")
    ));
    assert!(!is_use_rewrite("let x = 1;", "let x = 2;", None));
    assert!(!is_use_rewrite(
        "use core::sync::atomic::{AtomicU8, Ordering};",
        "use crate::shim::core::sync::atomic::{AtomicU16, Ordering};",
        None
    ));
    assert!(!is_use_rewrite(
        "use lock_api::RawMutex;",
        "use crate::lock_api::RawMutex;",
        None
    ));
}
