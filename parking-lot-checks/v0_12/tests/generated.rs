//! The generated modules are parking_lot's and rsevents' published source with only their
//! `use` lines rewritten and the listed patches applied (`parkcheck_gen::verify`).

/// How many lines of each generated file the rewrite changes (a change here is a change in
/// the published source, to be read before it is checked).
const CHANGED: &[(&str, usize)] = &[
    ("parking_lot/raw_mutex.rs", 2),
    ("parking_lot/raw_fair_mutex.rs", 0),
    ("parking_lot/raw_rwlock.rs", 2),
    ("parking_lot/condvar.rs", 2),
    ("parking_lot/once.rs", 2),
    ("rsevents/lib.rs", 4),
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
