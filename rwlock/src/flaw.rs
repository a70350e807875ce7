//! The deliberate flaw, compiled in by the `broken_rwlock` feature.
//!
//! It is selected per lock by the hidden constructor
//! `RwLock::with_flaw(value, max_readers, fairness, Some(flaw))`, so one test binary runs
//! every check against the correct lock (which must pass) and against the flaw (which must be
//! caught, with the violated property named). The crate's README says which check catches it
//! and how fast.

/// A deliberate flaw in the lock's construction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Flaw {
    /// The writer takes `max_readers - 1` permits instead of all `max_readers`, so one
    /// permit stays free while a writer holds the lock: one reader can take it and read
    /// while the writer writes (exclusion is broken; with `max_readers == 1` the writer takes
    /// nothing, and two writers can hold the lock at once too). The lock never deadlocks and
    /// every permit comes back, so only a check that looks at who is inside, or at the
    /// accesses to the value, can see it.
    ///
    /// Caught by: the entry check of the exclusion scenario (`tests/scenarios.rs`),
    /// `exclusion: a writer inside while 1 reader(s) hold the lock` or `exclusion: a reader
    /// inside while a writer holds the lock`, in every build: the loom test
    /// `catches_writer_short` (in the model's first execution, where a holder yields while
    /// inside), the shuttle test `catches_writer_short` (random and PCT schedulers, each in
    /// its first schedule here), and the real-thread test `catches_writer_short` (first try
    /// here). Loom's data cell sees it on its own too: without the yields, the first failing
    /// execution has a reader read the value with no happens-before edge from the writer's
    /// write (`Causality violation`, `catches_writer_short_by_the_data_cell`). The checks of
    /// writer progress cannot see it: a short writer gets in sooner, not later.
    WriterShort,
}
