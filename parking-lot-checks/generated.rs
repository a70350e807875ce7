// The test that the generated modules are parking_lot's published source with only their
// `use` lines changed, shared by both versions' `tests/generated.rs` (each lists, in
// `CHANGED`, how many lines of each file the rewrite changes).

include!(concat!(env!("OUT_DIR"), "/sources.rs"));

/// Each allowed rewrite: the prefix the generated line has after `use ` (or `pub use `), and
/// the start of the published path it goes before.
const REWRITES: &[(&str, &str)] = &[
    ("crate::shim::", "core::"),
    ("crate::shim::", "std::"),
    ("crate::", "parking_lot_core::"),
];

/// Whether `generated` is `published` with one allowed rewrite.
fn is_use_rewrite(published: &str, generated: &str) -> bool {
    ["use ", "pub use "].iter().any(|keyword| {
        REWRITES.iter().any(|(prefix, path)| {
            published.starts_with(&format!("{keyword}{path}"))
                && generated.strip_prefix(&format!("{keyword}{prefix}"))
                    == published.strip_prefix(keyword)
        })
    })
}

#[test]
fn generated_files_differ_from_the_published_source_only_in_use_lines() {
    let out_dir = std::path::Path::new(env!("OUT_DIR"));
    assert_eq!(
        SOURCES.iter().map(|(f, _)| *f).collect::<Vec<_>>(),
        CHANGED.iter().map(|(f, _)| *f).collect::<Vec<_>>(),
        "the files generated are the files listed in CHANGED"
    );
    for (&(file, published), &(_, expected)) in SOURCES.iter().zip(CHANGED) {
        let published = std::fs::read_to_string(published).unwrap();
        let generated = std::fs::read_to_string(out_dir.join(file)).unwrap();
        let (old, new): (Vec<_>, Vec<_>) = (published.lines().collect(), generated.lines().collect());
        assert_eq!(old.len(), new.len(), "{file}: the rewrite adds or removes lines");
        let mut changed = 0;
        for (n, (a, b)) in old.iter().zip(&new).enumerate() {
            if a != b {
                assert!(
                    is_use_rewrite(a, b),
                    "{file}:{}: a change that is not a use line's rewrite:\n  published: {a}\n  generated: {b}",
                    n + 1
                );
                changed += 1;
            }
        }
        assert_eq!(changed, expected, "{file}: use lines rewritten");
    }
}

#[test]
fn the_rewrite_check_rejects_other_changes() {
    assert!(is_use_rewrite(
        "use core::sync::atomic::{AtomicU8, Ordering};",
        "use crate::shim::core::sync::atomic::{AtomicU8, Ordering};"
    ));
    assert!(!is_use_rewrite("let x = 1;", "let x = 2;"));
    assert!(!is_use_rewrite(
        "use core::sync::atomic::{AtomicU8, Ordering};",
        "use crate::shim::core::sync::atomic::{AtomicU16, Ordering};"
    ));
    assert!(!is_use_rewrite("use lock_api::RawMutex;", "use crate::lock_api::RawMutex;"));
}
