//! What every stress scenario shares: the watchdog set-up, joining threads without losing a
//! panic's message, and a small generator. Which semaphore to build (`Build`) and the holder
//! counter that detects over-issue (`Holders`) come from the scenarios shared with the
//! model checkers.

use std::sync::Arc;
use std::thread::ScopedJoinHandle;
use std::time::Duration;

use parksema::Semaphore;
use watchdog::Watchdog;

pub(crate) use crate::shared::{Build, Holders};

/// The stall limit of every scenario: no worker reports an operation for this long means a
/// thread is lost. Ten seconds is far above any legitimate pause on a loaded 2-core machine
/// (the longest seen between two operations is a scheduler delay of milliseconds), and a
/// stall costs its test no more than that. `WATCHDOG_STALL_SECS` overrides it; the catch
/// tests set 2 s for their child processes so that a caught flaw is reported quickly.
pub(crate) const STALL: Duration = Duration::from_secs(10);

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

/// Joins every handle, then re-raises the first panic with its own message, so a worker's
/// violated property is what the test reports.
pub(crate) fn join_all<T>(handles: Vec<ScopedJoinHandle<'_, T>>) -> Vec<T> {
    crate::shared::results_or_first_panic(handles.into_iter().map(|h| h.join()))
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
