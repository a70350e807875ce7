//! What every stress scenario shares: which semaphore to build, the holder counter that
//! detects over-issue, the watchdog set-up, and joining threads without losing a panic's
//! message.

use std::any::Any;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::ScopedJoinHandle;
use std::time::Duration;

use parksema::Semaphore;
use watchdog::Watchdog;

/// The stall limit of every scenario: no worker reports an operation for this long means a
/// thread is lost. Ten seconds is far above any legitimate pause on a loaded 2-core machine
/// (the longest seen between two operations is a scheduler delay of milliseconds), and a
/// stall costs its test no more than that. `WATCHDOG_STALL_SECS` overrides it; the catch
/// tests set 2 s for their child processes so that a caught flaw is reported quickly.
pub(crate) const STALL: Duration = Duration::from_secs(10);

/// Which semaphore a scenario runs against: the correct one, or (feature `broken_sema`) one
/// with a deliberate flaw.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Build {
    #[cfg(feature = "broken_sema")]
    pub(crate) flaw: Option<parksema::Flaw>,
}

impl Build {
    /// The correct semaphore.
    pub(crate) const CORRECT: Build = Build {
        #[cfg(feature = "broken_sema")]
        flaw: None,
    };

    /// A semaphore of this build holding `permits` permits.
    pub(crate) fn semaphore(self, permits: usize) -> Semaphore {
        #[cfg(feature = "broken_sema")]
        return Semaphore::with_flaw(permits, self.flaw);
        #[cfg(not(feature = "broken_sema"))]
        Semaphore::new(permits)
    }
}

/// Arms the watchdog for `scenario`, describing `sem` in its stall report.
pub(crate) fn arm(scenario: impl Into<String>, sem: &Arc<Semaphore>) -> Watchdog {
    let sem = Arc::clone(sem);
    arm_with(scenario, move || describe(&sem))
}

/// Arms the watchdog for `scenario`, with `state` describing what is under test.
pub(crate) fn arm_with(
    scenario: impl Into<String>,
    state: impl Fn() -> String + Send + Sync + 'static,
) -> Watchdog {
    let wd = Watchdog::arm(scenario, watchdog::stall_limit(STALL));
    wd.describe(state);
    wd
}

/// A semaphore's state word and parked-thread count, for reports.
pub(crate) fn describe(sem: &Semaphore) -> String {
    format!("{sem:?}, parked threads: {}", sem.parked_threads())
}

/// Counts the threads holding a permit and fails at once when they outnumber the permits.
#[derive(Debug)]
pub(crate) struct Holders {
    in_use: AtomicUsize,
    max: AtomicUsize,
    permits: usize,
}

impl Holders {
    pub(crate) fn new(permits: usize) -> Self {
        Holders {
            in_use: AtomicUsize::new(0),
            max: AtomicUsize::new(0),
            permits,
        }
    }

    /// Called right after a permit was taken.
    ///
    /// # Panics
    ///
    /// With `over-issue: max in use N > permits P` when more threads hold a permit than
    /// there are permits.
    pub(crate) fn enter(&self) {
        // SeqCst: the counter must be one total order across all threads, independent of
        // the semaphore's own orderings, so it cannot hide an over-issue.
        let now = self.in_use.fetch_add(1, Ordering::SeqCst) + 1;
        let max = self.max.fetch_max(now, Ordering::SeqCst).max(now);
        assert!(
            now <= self.permits,
            "over-issue: max in use {max} > permits {}",
            self.permits
        );
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

/// Joins every handle, then re-raises the first panic with its own message, so a worker's
/// violated property is what the test reports.
pub(crate) fn join_all<T>(handles: Vec<ScopedJoinHandle<'_, T>>) -> Vec<T> {
    let mut results = Vec::with_capacity(handles.len());
    let mut first_panic: Option<Box<dyn Any + Send>> = None;
    for h in handles {
        match h.join() {
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

/// A small deterministic generator (xorshift64*), one per thread, so that each run's
/// choices are reproducible from the thread index and no dependency is needed.
#[derive(Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}

/// Waits until `count()` reaches at least `target`, yielding between polls. It reports
/// progress to the watchdog only when the count changes, so a count that never gets there is
/// a stall, reported as one.
pub(crate) fn wait_until(
    w: &watchdog::Worker,
    op: &'static str,
    target: usize,
    count: impl Fn() -> usize,
) {
    let mut last = usize::MAX;
    loop {
        let now = count();
        if now >= target {
            return;
        }
        if now != last {
            w.op(op);
            last = now;
        }
        std::thread::yield_now();
    }
}
