//! How long a large request waits behind a stream of small ones, in each fairness mode. A
//! barging semaphore (`Barging`, and `Eventual` between its handoffs) lets a thread that
//! finds permits free take them, whoever is parked, so a request for every permit waits
//! until all the small holders happen to be out at once; under `Fifo` the small requests
//! queue behind it once it has parked. Measured, not asserted.
//!
//! `small` threads loop taking one permit, holding it for `hold`, returning it, and doing
//! `between` of work before the next take; one thread loops taking all `permits` at once
//! with `acquire_many` and returning them at once. Each large wait is timed; a wait still
//! running when the window closes is cut there (the small threads stop, the permits come
//! free) and counted as cut.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::contention::Work;

/// One measured shape.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The semaphore's fairness mode.
    pub mode: String,
    /// Permits, all of which the large request takes.
    pub permits: usize,
    /// Threads taking one permit at a time.
    pub small_threads: usize,
    /// Work while a small thread holds its permit, nanoseconds.
    pub hold_ns: u64,
    /// Work between a small thread's takes, nanoseconds.
    pub between_ns: u64,
    /// The window, milliseconds.
    pub window_ms: u64,
    /// Large requests that were met within the window.
    pub large_acquired: u64,
    /// Small takes in the window.
    pub small_ops: u64,
    /// The median of the large request's waits, nanoseconds (including a cut one).
    pub large_wait_p50_ns: u64,
    /// The longest large wait, nanoseconds.
    pub large_wait_max_ns: u64,
    /// Whether the last large wait was still running when the window closed.
    pub last_wait_cut: bool,
}

/// Runs one shape for `window`.
pub fn run(
    fairness: parksema::Fairness,
    permits: usize,
    small: usize,
    hold: Work,
    between: Work,
    window: Duration,
) -> Row {
    let sem = Arc::new(parksema::Semaphore::with_fairness(permits, fairness));
    let stop = Arc::new(AtomicBool::new(false));
    let small_ops = Arc::new(AtomicU64::new(0));
    let start = Arc::new(Barrier::new(small + 2));
    let smalls: Vec<_> = (0..small)
        .map(|_| {
            let (sem, stop, ops, start) = (
                Arc::clone(&sem),
                Arc::clone(&stop),
                Arc::clone(&small_ops),
                Arc::clone(&start),
            );
            thread::spawn(move || {
                start.wait();
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    let permit = sem.acquire().expect("never closed");
                    hold.run();
                    drop(permit);
                    between.run();
                    n += 1;
                }
                ops.fetch_add(n, Ordering::Relaxed);
            })
        })
        .collect();
    let large = {
        let (sem, stop, start) = (Arc::clone(&sem), Arc::clone(&stop), Arc::clone(&start));
        thread::spawn(move || {
            start.wait();
            let mut waits = Vec::new();
            let mut cut = false;
            while !stop.load(Ordering::Relaxed) {
                let t0 = Instant::now();
                let all = sem.acquire_many(permits).expect("never closed");
                waits.push(t0.elapsed().as_nanos() as u64);
                cut = stop.load(Ordering::Relaxed);
                drop(all);
            }
            (waits, cut)
        })
    };
    start.wait();
    thread::sleep(window);
    stop.store(true, Ordering::Relaxed);
    for s in smalls {
        s.join().expect("a small thread panicked");
    }
    let (mut waits, cut) = large.join().expect("the large thread panicked");
    let acquired = waits.len() as u64 - u64::from(cut);
    waits.sort_unstable();
    Row {
        mode: format!("{fairness:?}"),
        permits,
        small_threads: small,
        hold_ns: hold.nominal_ns,
        between_ns: between.nominal_ns,
        window_ms: window.as_millis() as u64,
        large_acquired: acquired,
        small_ops: small_ops.load(Ordering::Relaxed),
        large_wait_p50_ns: waits.get(waits.len() / 2).copied().unwrap_or(0),
        large_wait_max_ns: waits.last().copied().unwrap_or(0),
        last_wait_cut: cut,
    }
}

/// The markdown table of `rows`.
pub fn table(rows: &[Row]) -> String {
    let mut md = String::from(
        "| mode | permits | small threads | hold | between | large requests met | small takes | \
         large wait p50 | longest large wait | last wait cut by the window |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
    );
    for r in rows {
        md.push_str(&format!(
            "| {} | {} | {} | {} ns | {} ns | {} in {} ms | {} | {:.1} µs | {:.1} µs | {} |\n",
            r.mode,
            r.permits,
            r.small_threads,
            r.hold_ns,
            r.between_ns,
            r.large_acquired,
            r.window_ms,
            r.small_ops,
            r.large_wait_p50_ns as f64 / 1e3,
            r.large_wait_max_ns as f64 / 1e3,
            if r.last_wait_cut { "yes" } else { "no" }
        ));
    }
    md
}
