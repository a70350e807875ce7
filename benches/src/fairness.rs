//! The fairness experiment: two threads, each looping "acquire, hold `h` (busy), release,
//! re-acquire at once", one permit. A lock without fairness lets the releasing thread take
//! it straight back (it is running; the other is parked and must be woken first), so one
//! thread keeps it for long streaks; a fair handoff makes them alternate.
//!
//! Measured, per peer and hold time: the acquisitions, the fraction that were by the same
//! thread as the one before (a re-acquisition), the longest run of acquisitions by one
//! thread, and each thread's share.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

use serde::Serialize;

use crate::contention::Work;
use crate::peers::Peer;

/// One measured cell.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The peer.
    pub peer: String,
    /// The hold time, microseconds.
    pub hold_us: u64,
    /// Which run of the cell this is (0-based).
    pub run: usize,
    /// The window, milliseconds.
    pub window_ms: u64,
    /// Acquisitions in the window (both threads).
    pub acquisitions: u64,
    /// Acquisitions by the same thread as the acquisition before, as a fraction of all but
    /// the first.
    pub same_thread: f64,
    /// The longest run of consecutive acquisitions by one thread.
    pub longest_streak: u64,
    /// The first thread's share of the acquisitions.
    pub share_a: f64,
    /// The second thread's share.
    pub share_b: f64,
}

/// What the holder records, under the lock.
#[derive(Default)]
struct Log {
    /// The thread that acquired last (1 or 2; 0: nobody yet).
    last: AtomicUsize,
    /// The current run's length and the longest.
    streak: AtomicU64,
    longest: AtomicU64,
    /// Re-acquisitions by the same thread.
    same: AtomicU64,
    /// Acquisitions per thread.
    by: [AtomicU64; 2],
}

impl Log {
    /// Records an acquisition by thread `me` (0 or 1). Called while holding the lock, so
    /// the holders' calls are serialized by it; the atomics are only for sharing (Relaxed).
    fn record(&self, me: usize) {
        let id = me + 1;
        let prev = self.last.swap(id, Ordering::Relaxed);
        let streak = if prev == id {
            self.same.fetch_add(1, Ordering::Relaxed);
            self.streak.load(Ordering::Relaxed) + 1
        } else {
            1
        };
        self.streak.store(streak, Ordering::Relaxed);
        self.longest.fetch_max(streak, Ordering::Relaxed);
        self.by[me].fetch_add(1, Ordering::Relaxed);
    }
}

/// Runs one cell: peer `P`, hold `hold`, for `window`.
pub fn run<P: Peer>(hold: Work, window: Duration) -> Row {
    let lock = Arc::new(P::with_permits(1));
    let log = Arc::new(Log::default());
    let stop = Arc::new(AtomicBool::new(false));
    let start = Arc::new(Barrier::new(3));
    let threads: Vec<_> = (0..2)
        .map(|me| {
            let (lock, log, stop, start) = (
                Arc::clone(&lock),
                Arc::clone(&log),
                Arc::clone(&stop),
                Arc::clone(&start),
            );
            thread::spawn(move || {
                start.wait();
                while !stop.load(Ordering::Relaxed) {
                    lock.hold(|| {
                        log.record(me);
                        hold.run();
                    });
                }
            })
        })
        .collect();
    start.wait();
    thread::sleep(window);
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().expect("a fairness thread panicked");
    }
    let by = [
        log.by[0].load(Ordering::Relaxed),
        log.by[1].load(Ordering::Relaxed),
    ];
    let total = by[0] + by[1];
    Row {
        peer: P::NAME.to_string(),
        hold_us: hold.nominal_ns / 1_000,
        run: 0,
        window_ms: window.as_millis() as u64,
        acquisitions: total,
        same_thread: log.same.load(Ordering::Relaxed) as f64
            / total.saturating_sub(1).max(1) as f64,
        longest_streak: log.longest.load(Ordering::Relaxed),
        share_a: by[0] as f64 / total.max(1) as f64,
        share_b: by[1] as f64 / total.max(1) as f64,
    }
}

/// The runs of one peer at one hold time, summarized.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// The peer.
    pub peer: String,
    /// The hold time, microseconds.
    pub hold_us: u64,
    /// The runs summarized.
    pub runs: usize,
    /// The median of the runs' acquisitions.
    pub acquisitions: u64,
    /// The median of the runs' same-thread fractions.
    pub same_thread: f64,
    /// The median of the runs' longest streaks.
    pub streak_median: u64,
    /// The least of the runs' longest streaks.
    pub streak_min: u64,
    /// The greatest of the runs' longest streaks.
    pub streak_max: u64,
    /// The median of the runs' smaller shares.
    pub smaller_share: f64,
}

/// The upper median of `v` (sorted in place): for an odd count, the median.
fn median<T: Copy + PartialOrd>(v: &mut [T]) -> T {
    v.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    v[v.len() / 2]
}

/// One summary per (peer, hold time) of `rows`, in the order they first appear.
pub fn summarize(rows: &[Row]) -> Vec<Summary> {
    let mut keys: Vec<(&str, u64)> = Vec::new();
    for r in rows {
        if !keys.contains(&(r.peer.as_str(), r.hold_us)) {
            keys.push((r.peer.as_str(), r.hold_us));
        }
    }
    keys.into_iter()
        .map(|(peer, hold_us)| {
            let runs: Vec<&Row> = rows
                .iter()
                .filter(|r| r.peer == peer && r.hold_us == hold_us)
                .collect();
            let mut streaks: Vec<u64> = runs.iter().map(|r| r.longest_streak).collect();
            Summary {
                peer: peer.to_string(),
                hold_us,
                runs: runs.len(),
                acquisitions: median(&mut runs.iter().map(|r| r.acquisitions).collect::<Vec<_>>()),
                same_thread: median(&mut runs.iter().map(|r| r.same_thread).collect::<Vec<_>>()),
                streak_median: median(&mut streaks),
                streak_min: streaks[0],
                streak_max: streaks[streaks.len() - 1],
                smaller_share: median(
                    &mut runs
                        .iter()
                        .map(|r| r.share_a.min(r.share_b))
                        .collect::<Vec<_>>(),
                ),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(peer: &str, streak: u64, share_a: f64) -> Row {
        Row {
            peer: peer.into(),
            hold_us: 10,
            run: 0,
            window_ms: 1,
            acquisitions: streak * 10,
            same_thread: 0.5,
            longest_streak: streak,
            share_a,
            share_b: 1.0 - share_a,
        }
    }

    #[test]
    fn summaries_take_the_median_and_the_range_per_peer() {
        let rows = [
            row("a", 5, 0.4),
            row("b", 1, 0.5),
            row("a", 1, 0.7),
            row("a", 9, 0.45),
        ];
        let s = summarize(&rows);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].peer.as_str(), s[0].runs), ("a", 3));
        assert_eq!(
            (s[0].streak_median, s[0].streak_min, s[0].streak_max),
            (5, 1, 9)
        );
        assert_eq!(s[0].acquisitions, 50);
        assert!(
            (s[0].smaller_share - 0.4).abs() < 1e-9,
            "{}",
            s[0].smaller_share
        );
        assert_eq!((s[1].streak_median, s[1].runs), (1, 1));
    }
}
