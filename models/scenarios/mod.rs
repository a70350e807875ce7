//! Scenario bodies written once and run under every build: loom (every interleaving, tiny
//! sizes), shuttle (random and PCT schedules, medium sizes) and real threads (`stress/`, large
//! sizes, repeated). They use only `parksema::__model`'s threads, `Arc` and atomics, which are
//! the checker's under `loom`/`shuttle` and std's otherwise.
//!
//! A file per group, each scenario a function under the name the report prints: `exclusion`
//! (holders and what they see), `wakeups`, `close`, `counts` (adds near the maximum, split,
//! merge, forget), `timeouts` and `fairness`. This file has what they share: the build, the
//! holder counters and the helpers.
//!
//! Invariants are asserted inside, with messages that name the violated property, so a
//! failure says what broke in any build:
//!
//! - `over-issue: max in use N > permits P`: more holders than permits;
//! - `permits not conserved: ...`: the count at the end is not what was put in;
//! - `close lost: ...`: an acquire that started after `close` returned got a permit;
//! - `close lost: ...`, `a parked acquire ...`: a closed semaphore handed out a permit;
//! - `WAITERS left set with nobody parked: ...`: the bit outlived the last waiter;
//! - `park table: ...`: a call cost more wake-ups than it may (under the checkers, whose
//!   mocked park table counts them per semaphore);
//! - `refused add: ...`, `impossible results: ...`: an operation's result fits no order of
//!   the operations that raced it;
//! - a lost wakeup shows as the checker's deadlock report (loom: `deadlock`, shuttle:
//!   `deadlock!`), or as a watchdog stall on real threads;
//! - a missing happens-before edge between two holders shows as loom's `Causality violation`;
//! - `timed out ...`: a timed acquire's result is not what its race allows (it took a permit
//!   it reported timing out on, or timed out where it could not);
//! - `forget_permits ...`: shrinking touched a flag or took more than was there;
//! - `fifo: ...`: under `Fairness::Fifo` a running thread took a permit while another was
//!   parked, or a later request was served before an earlier one;
//! - `eventual: ...`: under `Fairness::Eventual` a release whose fairness deadline had passed
//!   did not hand its permit to the parked thread;
//! - `lost handoff: ...`: a timed waiter handed its permits at its deadline neither kept
//!   them nor gave them back.

#![allow(dead_code)]

use std::time::Duration;

use parksema::__model::{
    Arc, AtomicUsize, Ordering, SharedCell, advance_clock, now, park_stats, thread,
};
use parksema::{AddPermitsError, Fairness, Semaphore, TryAcquireError};

mod close;
mod counts;
mod exclusion;
mod fairness;
mod timeouts;
mod wakeups;

pub(crate) use close::*;
pub(crate) use counts::*;
pub(crate) use exclusion::*;
pub(crate) use fairness::*;
pub(crate) use timeouts::*;
pub(crate) use wakeups::*;

/// Which semaphore a scenario runs against: the correct one, or (feature `broken_sema`) one
/// with a deliberate flaw, in a fairness mode (`Eventual`, what `Semaphore::new` gives,
/// unless a scenario or model says otherwise).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Build {
    /// The flaw, if any.
    #[cfg(feature = "broken_sema")]
    pub flaw: Option<parksema::Flaw>,
    /// The fairness mode.
    pub fairness: Fairness,
}

impl Build {
    /// The correct semaphore.
    pub(crate) const CORRECT: Build = Build {
        #[cfg(feature = "broken_sema")]
        flaw: None,
        fairness: Fairness::Eventual,
    };

    /// A semaphore with the deliberate flaw `flaw`.
    #[cfg(feature = "broken_sema")]
    pub(crate) const fn flawed(flaw: parksema::Flaw) -> Build {
        Build {
            flaw: Some(flaw),
            fairness: Fairness::Eventual,
        }
    }

    /// This build in the fairness mode `fairness`.
    pub(crate) const fn fair(mut self, fairness: Fairness) -> Build {
        self.fairness = fairness;
        self
    }

    /// A semaphore of this build holding `permits` permits.
    pub(crate) fn semaphore(self, permits: usize) -> Semaphore {
        #[cfg(feature = "broken_sema")]
        return Semaphore::with_fairness_and_flaw(permits, self.fairness, self.flaw);
        #[cfg(not(feature = "broken_sema"))]
        Semaphore::with_fairness(permits, self.fairness)
    }
}

/// Counts the threads holding a permit and fails at once when they outnumber the permits.
#[derive(Debug)]
pub(crate) struct Holders {
    in_use: AtomicUsize,
    max: AtomicUsize,
    /// 1 once an over-issue was reported: only the first thread to see one panics.
    reported: AtomicUsize,
    permits: usize,
}

impl Holders {
    /// A counter for a semaphore of `permits` permits.
    pub(crate) fn new(permits: usize) -> Self {
        Holders {
            in_use: AtomicUsize::new(0),
            max: AtomicUsize::new(0),
            reported: AtomicUsize::new(0),
            permits,
        }
    }

    /// Called right after a permit was taken.
    ///
    /// # Panics
    ///
    /// With `over-issue: max in use N > permits P` when more threads hold a permit than there
    /// are permits. Only the first thread to see an over-issue panics; the others go on: a
    /// second panic while the first unwinds would make shuttle report its own confusion
    /// ("panicked while another task was unwinding") instead of the over-issue.
    pub(crate) fn enter(&self) {
        // SeqCst: the counter must be one total order of its own, independent of the
        // semaphore's orderings, so it cannot hide an over-issue.
        let now = self.in_use.fetch_add(1, Ordering::SeqCst) + 1;
        let max = self.max.fetch_max(now, Ordering::SeqCst).max(now);
        if now > self.permits && self.reported.swap(1, Ordering::SeqCst) == 0 {
            panic!("over-issue: max in use {max} > permits {}", self.permits);
        }
    }

    /// Called right before a permit is returned.
    pub(crate) fn leave(&self) {
        self.in_use.fetch_sub(1, Ordering::SeqCst);
    }

    /// The largest number of simultaneous holders seen.
    pub(crate) fn max(&self) -> usize {
        self.max.load(Ordering::SeqCst)
    }
}

/// Spawns `n` threads running `body(i)` and joins them, re-raising the first panic.
fn run_threads<T: Send + 'static>(
    n: usize,
    body: impl Fn(usize) -> T + Send + Sync + 'static,
) -> Vec<T> {
    let body = Arc::new(body);
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let body = Arc::clone(&body);
            thread::spawn(move || body(i))
        })
        .collect();
    join(handles)
}

/// Joins every handle, then re-raises the first panic with its own message.
fn join<T>(handles: Vec<thread::JoinHandle<T>>) -> Vec<T> {
    results_or_first_panic(handles.into_iter().map(|h| h.join()))
}

/// The values of `joined` (threads' results, in order), or the first panic among them
/// re-raised with its own message once all are in, so a worker's violated property is what
/// the test reports.
pub(crate) fn results_or_first_panic<T>(
    joined: impl IntoIterator<Item = std::thread::Result<T>>,
) -> Vec<T> {
    let mut results = Vec::new();
    let mut first_panic = None;
    for result in joined {
        match result {
            Ok(v) => results.push(v),
            Err(payload) => {
                first_panic.get_or_insert(payload);
            }
        }
    }
    if let Some(payload) = first_panic {
        std::panic::resume_unwind(payload);
    }
    results
}

/// The text of a panic payload (`panic!` with a literal gives a `&str`, with arguments a
/// `String`); empty for any other payload.
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Asserts the semaphore ends with `expected` permits. More than that means a permit was
/// handed out twice and both copies came back (an over-issue whose holders did not overlap
/// in time); fewer means a permit was lost.
fn assert_conserved(sem: &Semaphore, expected: usize) {
    let left = sem.available_permits();
    assert!(
        left <= expected,
        "over-issue: {left} permits left > {expected} put in ({sem:?})"
    );
    assert!(
        left == expected,
        "permits lost: {left} left < {expected} put in ({sem:?})"
    );
}

/// Asserts that no `WAITERS` bit is left behind once every waiter has left: the unpark that
/// took the last one must have cleared it, or every later release takes the slow path.
fn assert_waiters_clear(sem: &Semaphore) {
    let state = format!("{sem:?}");
    assert!(
        state.contains("waiters: false"),
        "WAITERS left set with nobody parked: {state}"
    );
}

/// Yields (to the checker, or the OS) until `n` threads are parked on `sem`. Under loom and
/// shuttle a yielding loop is explored like any other code; on real threads it is bounded by
/// the caller's watchdog.
fn wait_parked(sem: &Semaphore, n: usize) {
    while sem.parked_threads() < n {
        thread::yield_now();
    }
}

/// Like [`Holders`], for weighted requests: counts the permits held and fails at once when
/// they exceed the permits put in.
#[derive(Debug)]
pub(crate) struct WeightedHolders {
    held: AtomicUsize,
    permits: usize,
}

impl WeightedHolders {
    pub(crate) fn new(permits: usize) -> Self {
        WeightedHolders {
            held: AtomicUsize::new(0),
            permits,
        }
    }

    /// Called right after `n` permits were taken.
    pub(crate) fn enter(&self, n: usize) {
        // SeqCst: one total order of its own, independent of the semaphore's orderings.
        let now = self.held.fetch_add(n, Ordering::SeqCst) + n;
        assert!(
            now <= self.permits,
            "over-issue: {now} permits held > {} permits",
            self.permits
        );
    }

    /// Called right before `n` permits are returned.
    pub(crate) fn leave(&self, n: usize) {
        self.held.fetch_sub(n, Ordering::SeqCst);
    }
}

/// Where a thread writes before it returns its permits and the thread they go to reads
/// after it has them, with nothing else ordering the two: under loom a missing edge is a
/// causality violation.
type Note = Arc<SharedCell<u32>>;

/// Writes `value` to `note` (the caller holds a permit that the reader will get).
fn write_note(note: &Note, value: u32) {
    // SAFETY: the writer holds a permit the reader does not have yet; the permit's release
    // and the reader's acquire (here: the handoff) order this write before the read, which
    // is what loom checks.
    note.with_mut(|n| unsafe { *n = value });
}

/// Reads `note` (the caller holds the permits its writer returned).
fn read_note(note: &Note) -> u32 {
    // SAFETY: as in `write_note`: the reader holds the permits the writer returned.
    note.with(|n| unsafe { *n })
}
