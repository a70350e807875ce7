//! `parking_lot_core` 0.10's park table, modelled for the model checkers
//! [loom](https://docs.rs/loom) and [shuttle](https://docs.rs/shuttle).
//!
//! A synchronization primitive written on `parking_lot_core` (a mutex, a condition variable,
//! a semaphore, an event) keeps its parked threads in that crate's global park table. Neither
//! checker can run it: loom cannot see the table's OS-level parking and has no timed park;
//! shuttle's `park_timeout` never fires. This crate has the same functions, types and
//! contract as `parking_lot_core` 0.10, built on the checker's own locks and threads, so the
//! primitive compiles unchanged and every step of it, park table included, is under the
//! checker's control:
//!
//! | feature | what `parkcheck::park` and the rest are |
//! |---|---|
//! | none | `parking_lot_core` 0.10 itself, re-exported unchanged |
//! | `loom` | the model, on loom's `Mutex`, threads and `lazy_static` (reset every execution) |
//! | `shuttle` | the model, on shuttle's |
//!
//! A primitive on `parking_lot_core` 0.9 uses [`v0_9`] instead: the same table with 0.9's
//! types and its `UnparkResult::be_fair`.
//!
//! Adoption is one import (`use parkcheck as parking_lot_core;`, or a Cargo rename); the
//! README says what else a crate changes (its atomics, its deadlines' clock, its `const`
//! constructors) and shows a loom model and a shuttle test.
//!
//! Besides `parking_lot_core`'s API it exports what a primitive needs to run under a checker
//! at all: the clock deadlines are computed from ([`now`], moved by [`advance_clock`]), the
//! checker's atomics, `Arc` and threads ([`sync`]), and [`const_fn!`] for constructors that
//! can be `const` only in the real build.
//!
//! # What the model models
//!
//! - one table per execution (the checkers reset their statics between executions; the table
//!   itself is not a checker static, whose every access the checker would order after the
//!   access that created it);
//! - FIFO queues keyed by address, **one bucket per key**, each under a lock of its own: no two
//!   keys collide, so table operations on different keys run in parallel and are not ordered
//!   by the table, as in the real crate for keys that hash apart (`unpark_requeue` locks both
//!   of its keys in the order the execution first used them, a total order as arbitrary as
//!   the real crate's bucket-index order, and, unlike the keys' addresses, the same in every
//!   execution of a model that follows the same schedule, as loom's replay needs);
//! - `validate`, `timed_out`, the unpark callbacks, the filter and `unpark_requeue`'s
//!   `validate` run under the key's bucket lock, as the real crate runs them;
//! - `UnparkResult` computed as the real crate computes it: `have_more_threads` counts threads
//!   with the same key only (in `unpark_filter`, it is set exactly when the filter skipped or
//!   stopped at a thread of that key; in `unpark_requeue`, only after `UnparkOne` or
//!   `RequeueOne`), `requeued_threads` counts the threads moved to `key_to`, which join the
//!   end of its queue in their order;
//! - no spurious returns from [`park`]: `Unparked` only after an unpark chose this thread,
//!   `TimedOut` only after its timeout, `Invalid` only when `validate` said no;
//! - `timed_out` is given the key the thread is parked on when it times out (after a requeue,
//!   the new one) and whether it was the last thread with that key;
//! - **happens-before where the real crate has it, with one exception below**, and tested
//!   (the conformance suite's `edge_*` and `clock_moves_are_explored` cases, under loom):
//!   - table operations on the same key are ordered by its bucket lock; operations on
//!     different keys are not ordered at all;
//!   - a woken thread is ordered after its waker's history up to the unpark, and after
//!     nothing later. In `parking_lot_core` the unparker, holding the bucket lock, stores the
//!     woken thread's futex word (`Release`); the woken thread loads it (`Acquire`) when it
//!     goes to sleep or wakes, after its `before_sleep`. Here the unparker stores the
//!     thread's own word (a checker atomic) under the bucket lock, and calls the checker's
//!     `unpark` only if the thread is already asleep in the checker's `park` (loom's `unpark`
//!     joins the waker's history into the thread at once, which while the thread still ran
//!     `before_sleep` would order that code after the waker);
//!   - **the one edge the real crate lacks**: a thread that times out under
//!     `Timeouts::Clock` is ordered after the thread that moved the clock ([`advance_clock`]
//!     locks the bucket of each key with a thread whose deadline it passes and wakes that
//!     thread through the checker's `unpark`). Loom cannot wake a blocked thread without
//!     ordering it after the waker, and a clock move loom does not see is one whose place
//!     among the other threads' steps it does not explore (a polling wait tried for this
//!     missed orders that this one reaches: the `ClockUnseen` variant and the
//!     `clock_moves_are_explored` case). What the edge can hide: a missing `Acquire` on a
//!     path that runs after a timeout, for what the clock-moving thread wrote before it
//!     moved the clock or did on that key before. A scenario avoids it by moving the clock
//!     from a thread that does nothing else, or with `Timeouts::CheckerChooses`, whose
//!     timeouts have no waker at all;
//!   - reading the clock ([`now`], `elapsed`) or the untracked counts is no operation of
//!     the execution at all.
//!
//!   (`Settings::relock_on_wake` adds the extra edge of a re-lock, for measuring what such
//!   an edge hides in a primitive's models);
//! - timeouts as events the checker controls, never wall time (`Timeouts`): by default a
//!   deadline is an `Instant` compared with a mocked clock that starts at [`now`] and moves
//!   only when a scenario calls [`advance_clock`] (from its own thread), so the checker
//!   explores every point at which a timeout can fire relative to the other threads; with
//!   `Timeouts::CheckerChooses`, every timed park may time out at once, and the checker
//!   chooses at each one whether it does before any unpark reaches it. Reading the clock
//!   synchronizes with nothing (as `Instant::now` does not);
//! - [`SpinWait`] spins a bounded number of times (`SPINS`, or `Settings::spins`), each
//!   spin a checker `yield_now` (loom accepts a loop that yields), so the checkers explore the
//!   spin branch of a protocol, not only the park branch; `spin_no_yield` is one checker spin
//!   hint (a yield under both checkers);
//! - the contract is enforced: a callback that calls into the table, a `before_sleep` that
//!   parks (also after it called an `unpark_*`, which it may), a callback that panics, or a
//!   [`deadlock`] function called from a callback fails the run with a message naming the
//!   rule (the real crate would deadlock, corrupt its queue, or abort);
//! - per-key counters (`stats`) and the number of threads parked on a key (`parked`), so a
//!   scenario can assert what a call cost in the table and wait for a thread to be queued.
//!
//! # What it does not model
//!
//! - keys that share a bucket, by default: no two keys do, so operations on different keys
//!   are never serialized by the table (the real crate serializes them, and orders them,
//!   when their keys hash into one bucket; a primitive must not depend on either).
//!   `Settings::one_bucket` puts every key in one bucket, to check that case;
//! - `SpinWait`'s exponential back-off and its 10-spin limit (its spins are yields here);
//! - the `deadlock_detection` feature: [`deadlock`]'s functions only check where they are
//!   called from, and `check_deadlock` does not exist (the checkers report deadlocks
//!   themselves);
//! - the table's growth with the number of threads, its hashing, and the real crate's
//!   `AbortOnPanic` (a panicking callback fails the run instead of aborting the process);
//! - real time: under the default `Timeouts::Clock` a timed park never expires unless a
//!   scenario advances the clock;
//! - the real table's own synchronization: its creation (an `Acquire` load of the table
//!   pointer, paired with its creator's `Release`) and its growth (`grow_hashtable` locks
//!   every bucket when enough threads exist) order threads in the real crate too, but no
//!   primitive can count on when they happen, so the model gives neither;
//! - the real fair timer's random waits: [`v0_9`]'s `be_fair` comes from a timer per bucket
//!   on the mocked clock, seeded alike for every bucket (the module docs say how it starts
//!   and when it is due again).
//!
//! Its fidelity is tested, not asserted: `tests/conformance.rs` runs the same suite against
//! the real crate on OS threads and against this model under loom and under shuttle, and is
//! shown to fail on deliberately unfaithful variants of the model (feature `unfaithful`).

#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(all(feature = "loom", feature = "shuttle"))]
compile_error!(
    "parkcheck's `loom` and `shuttle` features are mutually exclusive: each builds the park \
     table on its own checker; enable one at a time"
);

#[cfg(not(any(feature = "loom", feature = "shuttle")))]
mod real;
#[cfg(not(any(feature = "loom", feature = "shuttle")))]
pub use real::*;

#[cfg(any(feature = "loom", feature = "shuttle"))]
mod checker;
#[cfg(any(feature = "loom", feature = "shuttle"))]
mod model;
#[cfg(any(feature = "loom", feature = "shuttle"))]
pub use model::*;

pub mod v0_9;

// The token and result types are the real crate's in every build, so code that names them
// (or matches on them) is the same code under a checker.
pub use parking_lot_core::{
    DEFAULT_PARK_TOKEN, DEFAULT_UNPARK_TOKEN, FilterOp, ParkResult, ParkToken, RequeueOp,
    UnparkResult, UnparkToken,
};

/// The checker's atomics, `Arc` and threads (std's in the real build): what a primitive's
/// own state and a scenario's threads are built from, so that the checker sees them too.
pub mod sync {
    #[cfg(feature = "loom")]
    pub use loom::{
        sync::{Arc, atomic},
        thread,
    };
    #[cfg(all(feature = "shuttle", not(feature = "loom")))]
    pub use shuttle::{
        sync::{Arc, atomic},
        thread,
    };
    #[cfg(not(any(feature = "loom", feature = "shuttle")))]
    pub use std::{
        sync::{Arc, atomic},
        thread,
    };
}

/// Declares a constructor that is a `const fn` in the real build and a plain `fn` under the
/// checkers, whose atomics cannot be built in a `const` context. The body is the same in
/// every build.
///
/// ```
/// use parkcheck::sync::atomic::AtomicUsize;
///
/// pub struct Event {
///     state: AtomicUsize,
/// }
///
/// impl Event {
///     parkcheck::const_fn! {
///         /// An event not yet set.
///         pub fn new() -> Event {
///             Event { state: AtomicUsize::new(0) }
///         }
///     }
/// }
/// # let _ = Event::new();
/// ```
#[cfg(not(any(feature = "loom", feature = "shuttle")))]
#[macro_export]
macro_rules! const_fn {
    ($(#[$attr:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty $body:block) => {
        $(#[$attr])* $vis const fn $name($($arg: $ty),*) -> $ret $body
    };
}

/// Declares a constructor that is a `const fn` in the real build and a plain `fn` under the
/// checkers, whose atomics cannot be built in a `const` context.
#[cfg(any(feature = "loom", feature = "shuttle"))]
#[macro_export]
macro_rules! const_fn {
    ($(#[$attr:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty $body:block) => {
        $(#[$attr])* $vis fn $name($($arg: $ty),*) -> $ret $body
    };
}
