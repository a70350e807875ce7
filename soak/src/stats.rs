//! What the soak counts: operations per kind and outcome, the longest wait in an acquire,
//! the longest streak of one thread, and what each thread is doing right now (for the stall
//! report).
//!
//! Each thread of a round owns one [`Slot`] and is its only writer; readers (the progress
//! display, the stall report, the final report) only load. So a slot's counters are updated
//! with a plain load and store, never a locked read-modify-write: the counting puts no
//! barrier between the semaphore's operations and shares no cache line between threads (the
//! slots are 128-byte aligned). A round's threads are joined before the next round's start,
//! so a slot never has two writers.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// An operation the soak performs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `acquire`.
    Acquire,
    /// `acquire_many(n)`.
    AcquireMany,
    /// `acquire_many_owned(n)`.
    AcquireManyOwned,
    /// `try_acquire`.
    TryAcquire,
    /// `try_acquire_many(n)`.
    TryAcquireMany,
    /// `try_acquire_many_owned(n)`.
    TryAcquireManyOwned,
    /// `try_acquire_for` / `try_acquire_many_for`.
    TryAcquireFor,
    /// `try_acquire_until` / `try_acquire_many_until`.
    TryAcquireUntil,
    /// A guard dropped.
    Release,
    /// A permit split off a guard and dropped.
    Split,
    /// A second take merged into a guard.
    Merge,
    /// `release_fair`.
    ReleaseFair,
    /// A guard forgotten and its permits added back.
    ForgetAndAdd,
    /// `forget_permits(n)`.
    ForgetPermits,
    /// `add_permits(n)` of new permits.
    AddPermits,
    /// `try_add_permits` past `MAX_PERMITS`, refused.
    RefusedAdd,
    /// `close`.
    Close,
    /// A take by a running thread while others are parked (the queue's barging probe).
    BargeProbe,
}

impl Kind {
    /// Every kind, in the report's order.
    pub(crate) const ALL: [Kind; 18] = [
        Kind::Acquire,
        Kind::AcquireMany,
        Kind::AcquireManyOwned,
        Kind::TryAcquire,
        Kind::TryAcquireMany,
        Kind::TryAcquireManyOwned,
        Kind::TryAcquireFor,
        Kind::TryAcquireUntil,
        Kind::Release,
        Kind::Split,
        Kind::Merge,
        Kind::ReleaseFair,
        Kind::ForgetAndAdd,
        Kind::ForgetPermits,
        Kind::AddPermits,
        Kind::RefusedAdd,
        Kind::Close,
        Kind::BargeProbe,
    ];

    /// The name in reports and in the watchdog's "last op".
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Acquire => "acquire",
            Kind::AcquireMany => "acquire_many",
            Kind::AcquireManyOwned => "acquire_many_owned",
            Kind::TryAcquire => "try_acquire",
            Kind::TryAcquireMany => "try_acquire_many",
            Kind::TryAcquireManyOwned => "try_acquire_many_owned",
            Kind::TryAcquireFor => "try_acquire_for",
            Kind::TryAcquireUntil => "try_acquire_until",
            Kind::Release => "release (drop)",
            Kind::Split => "split + drop",
            Kind::Merge => "merge",
            Kind::ReleaseFair => "release_fair",
            Kind::ForgetAndAdd => "forget + add_permits",
            Kind::ForgetPermits => "forget_permits",
            Kind::AddPermits => "add_permits",
            Kind::RefusedAdd => "refused add",
            Kind::Close => "close",
            Kind::BargeProbe => "barge probe",
        }
    }

    /// Its index in [`Kind::ALL`].
    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// How an operation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// It succeeded (an acquire took its permits).
    Ok,
    /// `NoPermits` (the non-blocking forms).
    NoPermits,
    /// `TimedOut` (the timed forms).
    TimedOut,
    /// `Closed`.
    Closed,
    /// `TooLarge` (never expected: the soak asks for at most 16 permits).
    TooLarge,
}

impl Outcome {
    /// The number of outcomes.
    pub(crate) const COUNT: usize = 5;
}

/// Adds `by` to a counter that only the calling thread writes.
fn bump(counter: &AtomicU64, by: u64) {
    counter.store(counter.load(Relaxed) + by, Relaxed);
}

/// One thread's counters and its current operation.
#[derive(Debug)]
#[repr(align(128))]
pub(crate) struct Slot {
    /// Operations per kind and outcome.
    counts: [[AtomicU64; Outcome::COUNT]; Kind::ALL.len()],
    /// All operations (the progress display sums these).
    ops: AtomicU64,
    /// The longest time one acquire call took, nanoseconds.
    longest_wait_ns: AtomicU64,
    /// Where that was: `round << 8 | kind`.
    longest_wait_at: AtomicU64,
    /// The acquire in progress: `n << 8 | (kind + 1)`, or 0 for none.
    pending: AtomicU64,
    /// When it started, nanoseconds since the soak's start.
    pending_since_ns: AtomicU64,
}

impl Default for Slot {
    fn default() -> Slot {
        Slot {
            counts: std::array::from_fn(|_| std::array::from_fn(|_| AtomicU64::new(0))),
            ops: AtomicU64::new(0),
            longest_wait_ns: AtomicU64::new(0),
            longest_wait_at: AtomicU64::new(0),
            pending: AtomicU64::new(0),
            pending_since_ns: AtomicU64::new(0),
        }
    }
}

impl Slot {
    /// Counts one operation of `kind` that ended with `outcome`.
    pub(crate) fn count(&self, kind: Kind, outcome: Outcome) {
        bump(&self.counts[kind.index()][outcome as usize], 1);
        bump(&self.ops, 1);
    }

    /// Records that an acquire of `kind` for `n` permits starts now (`now_ns` since the soak's
    /// start), for the stall report.
    pub(crate) fn begin(&self, kind: Kind, n: usize, now_ns: u64) {
        self.pending_since_ns.store(now_ns, Relaxed);
        self.pending
            .store((n as u64) << 8 | (kind.index() as u64 + 1), Relaxed);
    }

    /// Records that the acquire begun last ended with `outcome` after `waited`, in `round`.
    pub(crate) fn end(&self, kind: Kind, outcome: Outcome, waited: Duration, round: u64) {
        self.pending.store(0, Relaxed);
        self.count(kind, outcome);
        let ns = u64::try_from(waited.as_nanos()).unwrap_or(u64::MAX);
        if ns > self.longest_wait_ns.load(Relaxed) {
            self.longest_wait_ns.store(ns, Relaxed);
            self.longest_wait_at
                .store(round << 8 | kind.index() as u64, Relaxed);
        }
    }

    /// All operations counted so far.
    pub(crate) fn ops(&self) -> u64 {
        self.ops.load(Relaxed)
    }

    /// The count of `kind` ending with `outcome`.
    pub(crate) fn get(&self, kind: Kind, outcome: Outcome) -> u64 {
        self.counts[kind.index()][outcome as usize].load(Relaxed)
    }

    /// The longest wait, and the round and kind it was in.
    pub(crate) fn longest_wait(&self) -> (Duration, u64, Kind) {
        let at = self.longest_wait_at.load(Relaxed);
        (
            Duration::from_nanos(self.longest_wait_ns.load(Relaxed)),
            at >> 8,
            Kind::ALL[(at & 0xff) as usize % Kind::ALL.len()],
        )
    }

    /// The acquire in progress: its kind, its request and when it started (ns since the
    /// soak's start).
    pub(crate) fn pending(&self) -> Option<(Kind, u64, u64)> {
        let p = self.pending.load(Relaxed);
        (p != 0).then(|| {
            (
                Kind::ALL[((p & 0xff) - 1) as usize % Kind::ALL.len()],
                p >> 8,
                self.pending_since_ns.load(Relaxed),
            )
        })
    }
}

/// The longest streak of acquisitions by one thread on one semaphore, as the fairness
/// benchmark (`benches/src/fairness.rs`) measures it: every successful acquisition records
/// its thread; a streak is a run of consecutive records by the same thread.
///
/// The last thread and the current run share one word, updated by compare-exchange, so
/// concurrent holders (more than one permit) still count exactly; `Relaxed`, because it
/// orders nothing (the soak's own counters must not add synchronization the semaphore lacks,
/// beyond the one read-modify-write per acquisition that the holder count already costs).
#[derive(Debug, Default)]
pub(crate) struct Streak {
    /// `run << 8 | (thread + 1)`.
    word: AtomicU64,
    /// The longest run seen.
    longest: AtomicU64,
}

impl Streak {
    /// Records an acquisition by thread `me`.
    pub(crate) fn record(&self, me: usize) {
        let id = (me as u64 + 1) & 0xff;
        let mut cur = self.word.load(Relaxed);
        loop {
            let run = if cur & 0xff == id { (cur >> 8) + 1 } else { 1 };
            match self
                .word
                .compare_exchange_weak(cur, run << 8 | id, Relaxed, Relaxed)
            {
                Ok(_) => {
                    self.longest.fetch_max(run, Relaxed);
                    return;
                }
                Err(now) => cur = now,
            }
        }
    }

    /// The longest run recorded.
    pub(crate) fn longest(&self) -> u64 {
        self.longest.load(Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_streak_is_the_longest_run_of_one_thread() {
        let s = Streak::default();
        for me in [0, 0, 1, 1, 1, 0, 2, 2] {
            s.record(me);
        }
        assert_eq!(s.longest(), 3);
    }

    #[test]
    fn a_slot_counts_and_keeps_the_longest_wait() {
        let slot = Slot::default();
        slot.begin(Kind::AcquireMany, 3, 10);
        assert_eq!(slot.pending(), Some((Kind::AcquireMany, 3, 10)));
        slot.end(Kind::AcquireMany, Outcome::Ok, Duration::from_millis(5), 7);
        slot.end(Kind::Acquire, Outcome::Closed, Duration::from_millis(1), 8);
        assert_eq!(slot.pending(), None);
        assert_eq!(slot.ops(), 2);
        assert_eq!(slot.get(Kind::Acquire, Outcome::Closed), 1);
        assert_eq!(
            slot.longest_wait(),
            (Duration::from_millis(5), 7, Kind::AcquireMany)
        );
    }
}
