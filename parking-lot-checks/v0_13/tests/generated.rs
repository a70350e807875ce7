//! The generated modules are parking_lot's published source with only their `use` lines
//! changed (`../generated.rs`).

/// How many lines of each generated file the rewrite changes (a change here is a change in
/// the published source, to be read before it is checked).
const CHANGED: &[(&str, usize)] = &[
    ("raw_mutex.rs", 2),
    ("raw_fair_mutex.rs", 0),
    ("raw_rwlock.rs", 2),
    ("raw_condvar.rs", 2),
    ("condvar.rs", 0),
    ("once.rs", 2),
];

include!("../../generated.rs");
