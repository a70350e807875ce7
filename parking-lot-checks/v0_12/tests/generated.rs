//! The generated modules are parking_lot's and rsevents' published source with only their
//! `use` lines rewritten and the listed patches applied (`../generated.rs`).

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

#[path = "../../gen.rs"]
mod generate;

use generate::Patch;

include!("../src/patches.rs");

include!("../../generated.rs");
