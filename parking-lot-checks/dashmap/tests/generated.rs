//! The generated modules are dashmap's published `lock.rs` with only their `use` lines
//! rewritten, and the flawed copy with its one patch (`parkcheck_gen::verify`).

/// How many lines of each generated file the rewrite changes (a change here is a change in
/// the published source, to be read before it is checked).
const CHANGED: &[(&str, usize)] = &[
    ("dashmap/5.3.4/lock.rs", 2),
    ("dashmap/7.0.0-rc0/lock.rs", 2),
    ("dashmap/flawed-reader-wakes-nobody/lock.rs", 2),
];

use parkcheck_gen::Patch;

include!("../src/patches.rs");

include!(concat!(env!("OUT_DIR"), "/sources.rs"));

#[test]
fn generated_files_differ_from_the_published_source_only_as_listed() {
    parkcheck_gen::verify::assert_generated_as_listed(
        std::path::Path::new(env!("OUT_DIR")),
        SOURCES,
        CHANGED,
        PATCHES,
    );
}
