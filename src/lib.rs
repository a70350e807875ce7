//! A blocking counting semaphore for threads, built on [`parking_lot_core`].
//!
//! The standard library has no semaphore. [`Semaphore`] is two words (the permit count and
//! a fairness timer), `const`-constructible (so it can be a `static`), and parks threads in
//! `parking_lot_core`'s global park table instead of owning a queue, so an idle semaphore
//! costs nothing but its two words. Its [`Fairness`] decides who gets a released permit
//! while threads wait: `Eventual` (the default), strict `Fifo`, or `Barging`.
//!
#![cfg_attr(not(any(feature = "loom", feature = "shuttle")), doc = "```")]
#![cfg_attr(any(feature = "loom", feature = "shuttle"), doc = "```ignore")]
//! use parksema::Semaphore;
//! use std::sync::Arc;
//! use std::thread;
//!
//! // Let at most three threads run an expensive job at once.
//! let jobs = Arc::new(Semaphore::new(3));
//! let workers: Vec<_> = (0..10)
//!     .map(|i| {
//!         let jobs = Arc::clone(&jobs);
//!         thread::spawn(move || {
//!             let _permit = jobs.acquire().expect("never closed here");
//!             i * i // the expensive job
//!         })
//!     })
//!     .collect();
//! let total: i32 = workers.into_iter().map(|w| w.join().unwrap()).sum();
//! assert_eq!(total, 285);
//! assert_eq!(jobs.available_permits(), 3);
//! ```
//!
//! # When to use it
//!
//! - **Instead of `tokio::sync::Semaphore`** when the waiters are OS threads rather than
//!   async tasks: this one blocks the thread, costs two words, needs no runtime, and
//!   `acquire` is a single CAS when a permit is free (`Fairness::Fifo` gives tokio's FIFO
//!   order). In async code use tokio's, since blocking a runtime worker thread stalls
//!   every task on it.
//! - **Instead of a `Mutex<usize>` + `Condvar`** when you want the uncontended path to be one
//!   atomic operation, no lost-wakeup reasoning of your own, timeouts, and a `static` without
//!   lazy initialization.
//! - **Not instead of a `Mutex`** when one permit guards data: a mutex ties the guard to the
//!   data and is the clearer tool.
//!
//! # The API at a glance
//!
//! - Construction: [`Semaphore::new`] (a `const fn`, [`Fairness::Eventual`]) and
//!   [`Semaphore::with_fairness`] (also `const`); both panic above
//!   [`Semaphore::MAX_PERMITS`] (`usize::MAX >> 3`). [`Semaphore::fairness`] reads the mode.
//! - Acquires, each returning a borrowed [`Permit`]: [`acquire`](Semaphore::acquire) and
//!   [`acquire_many`](Semaphore::acquire_many) block; [`try_acquire`](Semaphore::try_acquire)
//!   and [`try_acquire_many`](Semaphore::try_acquire_many) never block;
//!   [`try_acquire_for`](Semaphore::try_acquire_for),
//!   [`try_acquire_until`](Semaphore::try_acquire_until),
//!   [`try_acquire_many_for`](Semaphore::try_acquire_many_for) and
//!   [`try_acquire_many_until`](Semaphore::try_acquire_many_until) wait until a deadline. The
//!   same eight with `_owned` take an `Arc<Semaphore>` and return an [`OwnedPermit`] (`Send +
//!   Sync + 'static`).
//! - Releases: dropping a guard (also while unwinding), [`Permit::release_fair`] (hand the
//!   permits to the parked threads they satisfy), [`Semaphore::add_permits`] (panics, naming
//!   the numbers and leaving the count untouched, if the count would pass `MAX_PERMITS`) and
//!   [`Semaphore::try_add_permits`] (returns that as an [`AddPermitsError`]).
//! - Guards: [`num_permits`](Permit::num_permits), [`split`](Permit::split),
//!   [`merge`](Permit::merge), [`forget`](Permit::forget) and
//!   [`release_fair`](Permit::release_fair), on both [`Permit`] and [`OwnedPermit`].
//! - The rest: [`forget_permits`](Semaphore::forget_permits) (takes up to n free permits out
//!   for good, never touching a flag), [`close`](Semaphore::close) /
//!   [`is_closed`](Semaphore::is_closed), [`available_permits`](Semaphore::available_permits),
//!   and [`parked_threads`](Semaphore::parked_threads) (a diagnostic: it asks the park table).
//! - Errors: [`AcquireError`] (`Closed`, `TooLarge`) and [`TryAcquireError`] (`Closed`,
//!   `NoPermits`, `TimedOut`, `TooLarge`), both `#[non_exhaustive]`, `std::error::Error` and
//!   `Display`.
//!
//! # Semantics at the edges
//!
//! - **Closed is checked first**: every acquire of a closed semaphore fails, a request of
//!   zero included. On an open one a request of zero succeeds at once. A request of more than
//!   `MAX_PERMITS` fails at once with `TooLarge`, the blocking forms too: it could never be
//!   met.
//! - **Deadlines**: a zero duration or a deadline already past still takes permits that are
//!   free now, without parking (as `parking_lot`'s `try_lock_for`, Java's
//!   `tryAcquire(0, unit)` and C++'s `try_acquire_until` do), except under `Fifo` while a
//!   thread is parked (below). A duration too large to add to now (`Duration::MAX`) waits
//!   without a deadline. A timed-out call takes nothing.
//! - **Never wrapping**: `add_permits` and [`Permit::merge`] refuse a count past
//!   `MAX_PERMITS` (a panic naming the numbers, or an error from `try_add_permits`) and leave
//!   everything as it was; `merge` also panics for permits of two different semaphores.
//! - **Who gets a released permit** while threads wait is the semaphore's [`Fairness`]:
//!   - `Eventual` and `Barging`: a release wakes, in the order they parked, the waiters whose
//!     requests fit the free permits; a large request that does not fit does not hold up a
//!     small one behind it; a thread that arrives meanwhile may take the permits first.
//!     `Eventual` adds a timer: once a deadline drawn from 0–1 ms after the previous
//!     handoff has passed, the first release that finds a thread parked hands it its permits.
//!   - `Fifo`: no thread takes a permit while another is parked: the `try_` forms, and a zero
//!     or past deadline, fail then too, as Go's `x/sync/semaphore` `TryAcquire` does (Java's
//!     fair `Semaphore` lets its untimed `tryAcquire()` barge; its `tryAcquire(0, unit)` does
//!     not). Requests are served in arrival order (a request arrives when the park table
//!     queues it), and a small request behind a large head waits for it.
//!
//! The repository's `docs/fairness.md` has the measurements behind each mode, and its
//! `models/spec.rs` states all of this as a sequential model.
//!
//! # Guarantees, and the test that checks each
//!
//! The repository's `docs/promises.md` lists every guarantee with all the checks that were
//! shown to fail when it is broken; here is one each.
//!
//! - Never more permits held than put in, and every permit comes back: loom
//!   `one_permit_two_threads`, real `stress::never_exceeds_permits`.
//! - A closed semaphore never hands out a permit, and a parked acquire fails once closed:
//!   loom `add_after_close`.
//! - Closed is checked first (a request of zero fails too); on an open semaphore a request of
//!   zero succeeds at once; a request of more than [`Semaphore::MAX_PERMITS`] fails at once
//!   with `TooLarge`, never parks: `tests/api.rs`
//!   `closed_is_checked_first_for_every_acquire_and_every_size`.
//! - A release wakes, in the order they parked, the waiters whose requests fit the free
//!   permits, and without [`Fairness::Fifo`] a request that does not fit does not hold up a
//!   smaller one behind it: no waiter stays parked while its request fits and no other thread
//!   runs (starvation-free wake-up): loom `large_head_small_behind`,
//!   `woken_out_barged_passes_on`.
//! - Under [`Fairness::Fifo`] no thread takes a permit while another is parked (the `try_`
//!   forms fail then), and requests are served in arrival order, weighted ones included: loom
//!   `fifo_no_barging`, `fifo_keeps_arrival_order`; a head that times out lets the ones behind
//!   it through: loom `fifo_head_times_out`.
//! - A handoff (under `Fifo`, with [`Permit::release_fair`], and under `Eventual` once its
//!   fairness deadline has passed) never creates or loses a permit, and the writes of every
//!   thread whose permits were handed over happen-before the reads of the thread they went
//!   to: loom `handoff_from_two_releasers`; a permit handed to a waiter timing out at that
//!   moment is kept: loom `handoff_to_timing_out_waiter`.
//! - Under `Eventual`, once the fairness deadline (at most 1 ms after the previous turn) has
//!   passed, a release that wakes a parked thread hands it the permits: loom
//!   `eventual_timer_hands_over`.
//! - Without `Fifo` a large request *can* wait behind a stream of small ones; measured, not
//!   bounded, in the benchmark (the repository's `docs/fairness.md`).
//! - A timed-out call takes no permit, and a waiter timing out as permits are released to it
//!   loses neither them nor the wake-up owed to the next waiter: loom
//!   `timeout_races_release`.
//! - A zero duration or a deadline already past still takes permits that are free now,
//!   without parking; a duration too large to add to now waits without a deadline:
//!   `tests/api.rs` `zero_timeouts_and_past_deadlines_take_what_is_free_without_parking`.
//! - [`Semaphore::forget_permits`] never clears or sets a flag, so a closed semaphore stays
//!   closed: loom `forget_races_close`.
//! - [`Permit::merge`] never wraps and never loses a permit: `tests/api.rs`
//!   `a_merge_past_max_permits_panics_and_wraps_nothing`.
//! - Memory ordering (below): loom `visibility`, `close_publishes`.
//!
//! # The protocol
//!
//! The state word holds the permit count above three flag bits: `WAITERS` (some thread is
//! parked or about to park), `CLOSED`, and `FIFO` (set for good by [`Fairness::Fifo`]), so
//! [`Semaphore::MAX_PERMITS`] is `usize::MAX >> 3`. A second word holds the fairness mode and
//! `Eventual`'s timer: the next deadline (microseconds, modulo 2^30) and a xorshift32
//! generator's state.
//!
//! | permits | `CLOSED` | `WAITERS` | meaning |
//! |---------|----------|-----------|---------|
//! | p       | 0        | 0         | nobody waits: a request of n ≤ p takes n with one CAS; a larger one spins a little, then sets `WAITERS` |
//! | p       | 0        | 1         | threads parked or about to park, each for more than the p permits free when it parked (under `FIFO`: for any number); a release either hands its permits to the parked requests they satisfy or adds them and wakes those whose requests now fit |
//! | any     | 1        | any       | closed: every acquire fails; returned permits still count |
//!
//! - **acquire** of n: one CAS on the fast path. The slow path takes the n permits if they
//!   are free (even if others wait), spins only while `WAITERS` is clear, sets `WAITERS`, then
//!   parks with its request in the park token and a `validate` that re-checks under the park
//!   table's bucket lock that `WAITERS` is still set, the semaphore open, and fewer than n
//!   permits free. A woken thread runs the loop again; if it finds its permits gone (a
//!   barger took them), it wakes the waiters that what is left fits before it parks again or
//!   times out.
//! - **release** (dropping a [`Permit`], or [`Semaphore::add_permits`]): one checked CAS
//!   that adds the permits when `WAITERS` is clear. When it is set, the release either hands
//!   over (under `FIFO`, for [`Permit::release_fair`], and under `Eventual` when the fairness
//!   deadline has passed): under the bucket lock it walks the queue in order and unparks each
//!   request that its permits and the free ones satisfy with a token saying "handed over",
//!   taking the free ones it uses out of the word with an `Acquire` CAS (under `FIFO` the first
//!   request that does not fit stops the walk), then adds what is left; or it adds its
//!   permits and wakes, in queue order, each waiter whose request fits the permits not yet
//!   promised to one it woke. A thread handed its permits owns them when `park` returns.
//! - `WAITERS` is cleared only under the bucket lock, when no thread parked on this semaphore
//!   remains: in the unpark callback, or when the last waiter leaves by timing out.
//!
//! # Memory ordering
//!
//! Everything a thread did before returning a permit (dropping a [`Permit`] or calling
//! [`Semaphore::add_permits`]) happens-before everything a thread does after a later
//! acquire that takes it succeeds: the release is a `Release` CAS and the take an `Acquire`
//! CAS on the same word, and every write to that word is a read-modify-write, so the release
//! sequence is never broken. A thread handed its permits takes nothing from the word: it is
//! ordered after the releaser by the park table's wake-up, and after the earlier releasers
//! of the free permits the handoff used by the releaser's `Acquire` CAS that took them. With
//! one permit, the semaphore therefore protects data as a mutex does. Likewise, everything done before [`close`](Semaphore::close) happens-before
//! everything done after observing the semaphore closed.
//!
//! # Fairness
//!
//! Chosen per semaphore with [`Semaphore::with_fairness`] (a `const fn`):
//!
//! - [`Fairness::Eventual`] (what [`Semaphore::new`] gives): barging, as `parking_lot`'s and
//!   `std`'s mutexes do (a thread that arrives while others are parked may take freed permits
//!   before the woken thread runs, which saves a context switch when a releasing thread
//!   re-acquires at once), with `parking_lot`'s old eventual fairness restored per
//!   semaphore: once a deadline drawn uniformly from 0–1 ms after the previous handoff has
//!   passed, the first release that finds a thread parked hands it the permits (a release
//!   that finds nobody queued spends no turn). A thread that keeps re-acquiring loses the
//!   permits at its first such release. A large request can still wait behind a stream of
//!   small ones (the handoff goes to the first parked request the permits satisfy).
//! - [`Fairness::Fifo`]: strict arrival order, no barging, every contended release a
//!   handoff; the cost is a context switch per contended release (the repository's
//!   `docs/fairness.md` has the numbers).
//! - [`Fairness::Barging`]: no fairness at all, for the last bit of throughput.
//!
//! [`Permit::release_fair`] hands a guard's permits over whatever the mode.
//!
#![cfg_attr(not(any(feature = "loom", feature = "shuttle")), doc = "```")]
#![cfg_attr(any(feature = "loom", feature = "shuttle"), doc = "```ignore")]
//! use parksema::{Fairness, Semaphore};
//!
//! // A pool whose waiters are served strictly in turn.
//! static POOL: Semaphore = Semaphore::with_fairness(4, Fairness::Fifo);
//! let big = POOL.acquire_many(3).unwrap();
//! assert!(POOL.try_acquire().is_ok(), "nobody waits: free permits are taken");
//! drop(big);
//! ```
//!
//! # Where the time goes: the contention profile
//!
//! With the cargo feature `profile` (off by default), `Semaphore::profile` returns what the
//! semaphore's contended acquires did: how many there were, how often they spun, parked and
//! were woken to find nothing, how many were handed their permits, and percentiles of how
//! long they waited. The numbers live in a side table keyed by the semaphore's address, so
//! the type keeps its two words and the uncontended paths their cost; each contended acquire
//! records once, when it returns (one lock of one shard). See `Profile` for what moving a
//! semaphore does to its numbers.
//!
//! # How it is checked
//!
//! The same state machine is compiled three ways: against real `parking_lot_core` for stress
//! tests on OS threads under an in-process watchdog (a lost wakeup becomes a fast failure
//! with a report instead of a hung test); against loom with a mocked park table whose clock
//! the scenarios advance, for every interleaving of small scenarios within a stated
//! preemption bound, weak-memory races included; and against shuttle, for larger scenarios
//! under random and PCT schedules. The `broken_sema` feature compiles in deliberate flaws (an
//! over-issue by a lost update; `WAITERS` cleared while threads are still parked; relaxed
//! permit orderings; a parking decision made on a word read before the bucket lock; a
//! timed-out waiter swallowing a wake-up; a release stopping at a large request that does not
//! fit; a handoff that also counts the permits it hands over), and catch tests show each one
//! is detected, with the violated property named. The
//! repository's `docs/verification.md` says which check catches which flaw and how fast.
//!
//! # Cargo features
//!
//! All off by default; a user of the semaphore needs none of them.
//!
//! - `profile`: the contention profile above (real threads only).
//! - `loom`, `shuttle`: compile the semaphore against that model checker and parkcheck's park
//!   table (one at a time); only the verification suite's models build this way.
//! - `broken_sema`: the deliberate flaws, for the verification suite; never in a build you ship.
//! - `test-support`: the helpers the verification suite's scenarios share across the three
//!   builds (hidden, not an API). The repository's tests enable it themselves; from the
//!   published package alone they run with `cargo test --features test-support`.

/// The opening fence of a doc example: a tested example in the real build, ignored under the
/// model checkers (`loom`, `shuttle`), whose atomics work only inside a model.
#[cfg(not(any(feature = "loom", feature = "shuttle")))]
macro_rules! doc_fence {
    () => {
        "```"
    };
    (should_panic) => {
        "```should_panic"
    };
    (compile_fail) => {
        "```compile_fail"
    };
}
#[cfg(any(feature = "loom", feature = "shuttle"))]
macro_rules! doc_fence {
    ($($kind:ident)?) => {
        "```ignore"
    };
}
pub(crate) use doc_fence;

mod error;
#[cfg(feature = "broken_sema")]
mod flaw;
/// Without `broken_sema`: the same hooks, each the correct decision, compiled away.
#[cfg(not(feature = "broken_sema"))]
#[path = "flaw/off.rs"]
mod flaw;
mod permit;
mod profile;
mod semaphore;
mod sync;

pub use error::{AcquireError, AddPermitsError, TryAcquireError};
#[cfg(feature = "broken_sema")]
#[doc(hidden)]
pub use flaw::Flaw;
pub use permit::{OwnedPermit, Permit};
#[cfg(all(feature = "profile", not(any(feature = "loom", feature = "shuttle"))))]
pub use profile::Profile;
pub use semaphore::{Fairness, Semaphore};
/// The verification suite's helpers (feature `test-support`): not part of the API.
#[cfg(feature = "test-support")]
#[doc(hidden)]
pub use sync::model as __model;

/// The README's Rust example, compiled and run as a doc test in the real build.
#[cfg(all(doctest, not(any(feature = "loom", feature = "shuttle"))))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
