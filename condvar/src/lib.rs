//! A [`Mutex`] and a [`Condvar`] written directly on [`parking_lot_core`] 0.10, checked under
//! loom and shuttle through the workspace crate `parkcheck`.
//!
//! It is the workspace's demonstration that `parkcheck` checks primitives other than the
//! semaphore, using what the semaphore does not: `unpark_requeue` ([`Condvar::notify_all`]
//! moves the waiters onto the mutex's queue instead of waking them all), `unpark_one`, and the
//! key `park`'s `timed_out` callback is given after a requeue (a timed wait moved onto the
//! mutex times out with the mutex's key, and must then leave the condition variable's state
//! alone).
//!
#![cfg_attr(not(any(feature = "loom", feature = "shuttle")), doc = "```")]
#![cfg_attr(any(feature = "loom", feature = "shuttle"), doc = "```ignore")]
//! use parksema_condvar::{Condvar, Mutex};
//! use std::collections::VecDeque;
//! use std::sync::Arc;
//! use std::thread;
//!
//! // A work queue: producers push and notify one consumer; `None` tells consumers to stop.
//! let queue = Arc::new((Mutex::new(VecDeque::new()), Condvar::new()));
//! let consumers: Vec<_> = (0..2)
//!     .map(|_| {
//!         let queue = Arc::clone(&queue);
//!         thread::spawn(move || {
//!             let (jobs, ready) = &*queue;
//!             let mut done = 0;
//!             let mut guard = jobs.lock();
//!             loop {
//!                 match guard.pop_front() {
//!                     Some(Some(job)) => done += job,
//!                     Some(None) => return done,
//!                     None => ready.wait(&mut guard),
//!                 }
//!             }
//!         })
//!     })
//!     .collect();
//! let (jobs, ready) = &*queue;
//! for job in 1..=10 {
//!     jobs.lock().push_back(Some(job));
//!     ready.notify_one();
//! }
//! jobs.lock().extend([None, None]);
//! ready.notify_all();
//! let total: i32 = consumers.into_iter().map(|c| c.join().unwrap()).sum();
//! assert_eq!(total, 55);
//! ```
//!
//! # Builds
//!
//! | feature | park table | atomics, data cell |
//! |---|---|---|
//! | none | `parking_lot_core` 0.10 | std |
//! | `loom` | `parkcheck`'s model on loom | loom's (the data cell is loom's `UnsafeCell`) |
//! | `shuttle` | `parkcheck`'s model on shuttle | shuttle's |
//!
//! The switch is one import in each file that parks (`use parkcheck as parking_lot_core;`
//! under the checker features) and the atomics from `parkcheck::sync::atomic`. Under the
//! checkers the constructors are not `const` (`parkcheck::const_fn!`) and deadlines are
//! taken from `parkcheck::now()`, the mocked clock.
//!
//! # Guarantees, and the checks that fail when one is broken
//!
//! - At most one holder of the mutex at a time, and each holder is ordered after the
//!   previous one's writes: loom `mutual_exclusion` (a causality violation on the data cell).
//! - A waiter that tested its condition under the mutex before a notifier changed it is
//!   reached by that notifier's `notify_one`, whether it notifies under the mutex or after
//!   it (no lost wake-up): loom `notify_one_predicate`, `ping_pong_two_turns`; shuttle and
//!   real threads `ping_pong`.
//! - `notify_all` reaches every waiter, wakes none of them itself while the mutex is held and
//!   at most one while it is free (the rest are requeued onto the mutex), and the requeued
//!   ones each get the mutex in turn: loom `notify_all_requeue`, `notify_all_after_unlock`;
//!   shuttle and real threads `notify_all_rounds`.
//! - A timed wait reports a timeout exactly when no notification counted it, also when a
//!   `notify_all` moved it onto the mutex and its deadline passed there; the condition
//!   variable works afterwards: loom `timed_wait_races_notify_all`,
//!   `timed_wait_requeued_times_out`; shuttle and real threads `timed_wait_*`.
//!
//! Beside these scenarios, generated programs of waits, notifications (under the mutex and
//! after it), clock advances and lockings are checked, in all three builds, against an
//! executable specification of the condition variable (every notification's result, every
//! wait's outcome, no spurious wake-up), which also catches each flaw below that its build
//! can see.
//!
//! # Deliberate flaws
//!
//! With the feature `broken_condvar`, `Flaw` lists deliberate flaws, selected per object by
//! hidden constructors, which the checks above are shown to catch (the README has the
//! matrix).

#[cfg(all(feature = "loom", feature = "shuttle"))]
compile_error!(
    "the `loom` and `shuttle` features are mutually exclusive: each replaces the park table \
     and the atomics with its own checker's; enable one at a time"
);

mod cell;
mod condvar;
#[cfg(feature = "broken_condvar")]
mod flaw;
mod mutex;
mod raw_mutex;

pub use condvar::{Condvar, WaitTimeoutResult};
#[cfg(feature = "broken_condvar")]
pub use flaw::Flaw;
pub use mutex::{Mutex, MutexGuard};
