//! The generated modules are once_cell's published `imp_pl.rs` with only their `use` lines
//! rewritten, and the flawed copy with its one patch (`parkcheck_gen::verify`).

/// How many lines of each generated file the rewrite changes (a change here is a change in
/// the published source, to be read before it is checked).
const CHANGED: &[(&str, usize)] = &[
    ("once_cell/1.11.0/imp_pl.rs", 1),
    ("once_cell/1.12.0-pre.1/imp_pl.rs", 1),
    ("once_cell/1.12.1/imp_pl.rs", 1),
    ("once_cell/1.16.0-pre.1/imp_pl.rs", 1),
    ("once_cell/1.18.0/imp_pl.rs", 1),
    ("once_cell/1.21.4/imp_pl.rs", 1),
    ("once_cell/flawed-no-wake-up/imp_pl.rs", 1),
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
