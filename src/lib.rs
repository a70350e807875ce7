//! A blocking counting semaphore for threads, built on [`parking_lot_core`].
//!
//! The standard library has no semaphore. [`Semaphore`] is one word, `const`-constructible
//! (so it can be a `static`), and parks threads in `parking_lot_core`'s global park table
//! instead of owning a queue, so an idle semaphore costs nothing but its word.
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
//! # The protocol
//!
//! The state word holds the permit count above three flag bits: `WAITERS` (some thread is
//! parked or about to park), `CLOSED`, and one reserved bit, so
//! [`Semaphore::MAX_PERMITS`] is `usize::MAX >> 3` and never changes.
//!
//! | permits | `CLOSED` | `WAITERS` | meaning |
//! |---------|----------|-----------|---------|
//! | n > 0   | 0        | 0         | n permits free, nobody waits: `acquire` takes one with a single CAS |
//! | 0       | 0        | 0         | no permit, nobody waits: an acquirer spins a little, then sets `WAITERS` |
//! | 0       | 0        | 1         | no permit, threads parked or about to park: the only state in which a thread may park |
//! | n > 0   | 0        | 1         | permits came back while threads wait: the releaser wakes up to n of them |
//! | any     | 1        | any       | closed: `acquire` fails; returned permits still count |
//!
//! - **acquire**: one CAS on the fast path. The slow path takes a permit if there is one
//!   (even if others wait), spins only while `WAITERS` is clear, sets `WAITERS`, then parks
//!   with a `validate` that re-checks under the park table's bucket lock that the state is
//!   still exactly `WAITERS`. A woken thread runs the loop again.
//! - **release** (dropping a [`Permit`], or [`Semaphore::add_permits`]): one checked CAS
//!   that adds the permits; only if `WAITERS` was set does it take the slow path and unpark
//!   up to that many threads.
//! - `WAITERS` is cleared only under the bucket lock, in the unpark callback, when no thread
//!   parked on this semaphore remains. So a waiter that queued before the clear keeps the
//!   bit set, a waiter that set the bit but validates after the clear sees it gone and starts
//!   over, and an unpark that finds nobody clears the bit so later releases stay on the fast
//!   path.
//!
//! # Memory ordering
//!
//! Everything a thread did before returning a permit (dropping a [`Permit`] or calling
//! [`Semaphore::add_permits`]) happens-before everything a thread does after a later
//! [`acquire`](Semaphore::acquire) or [`try_acquire`](Semaphore::try_acquire) succeeds: the
//! release is a `Release` CAS and the take an `Acquire` CAS on the same word, and every write
//! to that word is a read-modify-write, so the release sequence is never broken. With one
//! permit, the semaphore therefore protects data as a mutex does. Likewise, everything done
//! before [`close`](Semaphore::close) happens-before everything done after observing the
//! semaphore closed.
//!
//! # Fairness
//!
//! None, by design for now: a thread that arrives while others are parked may take a freed
//! permit before the woken thread runs (barging), as with `parking_lot`'s and `std`'s
//! mutexes. This gives throughput, since a releasing thread that re-acquires at once needs
//! no context switch, but a thread can starve under a steady stream of bargers. Woken
//! threads are not handed their permit; they compete for it and park again if they lose.
//!
//! # When to use it
//!
//! - **Instead of `tokio::sync::Semaphore`** when the waiters are OS threads rather than
//!   async tasks: this one blocks the thread, costs one word, needs no runtime, and
//!   `acquire` is a single CAS when a permit is free. Tokio's is FIFO-fair and supports
//!   acquiring several permits at once; in async code use it, since blocking a runtime worker
//!   thread stalls every task on it.
//! - **Instead of a `Mutex<usize>` + `Condvar`** when you want the uncontended path to be one
//!   atomic operation, no lost-wakeup reasoning of your own, and a `static` without lazy
//!   initialization.
//! - **Not instead of a `Mutex`** when one permit guards data: a mutex ties the guard to the
//!   data and is the clearer tool.
//!
//! # How it is checked
//!
//! The same state machine is compiled three ways: against real `parking_lot_core` for stress
//! tests on OS threads under an in-process watchdog (a lost wakeup becomes a fast failure
//! with a report instead of a hung test); against loom with a mocked park table, for every
//! interleaving of small scenarios within a stated preemption bound, weak-memory races
//! included; and against shuttle, for larger scenarios under random and PCT schedules. The
//! `broken_sema` feature compiles in deliberate flaws (an over-issue by a lost update;
//! `WAITERS` cleared while threads are still parked; relaxed permit orderings; a parking
//! decision made on a word read before the bucket lock), and catch tests show each one is
//! detected by at least two checks, with the violated property named. The repository's
//! `docs/promises.md` lists every guarantee above with the checks that fail when it is
//! broken, and the README's matrices say which check catches which flaw and how fast.

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
mod permit;
mod semaphore;
mod sync;

pub use error::{AcquireError, AddPermitsError, TryAcquireError};
#[cfg(feature = "broken_sema")]
#[doc(hidden)]
pub use flaw::Flaw;
pub use permit::{OwnedPermit, Permit};
pub use semaphore::Semaphore;
#[doc(hidden)]
pub use sync::model as __model;

/// The README's Rust example, compiled and run as a doc test in the real build.
#[cfg(all(doctest, not(any(feature = "loom", feature = "shuttle"))))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
