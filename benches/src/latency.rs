//! Wake latency: two threads bounce one permit through two empty semaphores, so every
//! hand-off wakes a thread that is (or is about to be) blocked.

use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Instant;

use crate::peers::Signal;

/// Nanoseconds per one-way hand-off (a round trip is two), the median of `reps` runs of
/// `round_trips` round trips each.
pub fn ping_pong<S: Signal>(round_trips: u64, reps: usize) -> f64 {
    let mut runs: Vec<f64> = (0..reps).map(|_| once::<S>(round_trips)).collect();
    runs.sort_by(f64::total_cmp);
    runs[runs.len() / 2]
}

fn once<S: Signal>(round_trips: u64) -> f64 {
    let ping = Arc::new(S::empty());
    let pong = Arc::new(S::empty());
    let ready = Arc::new(Barrier::new(2));
    let echo = {
        let (ping, pong, ready) = (ping.clone(), pong.clone(), ready.clone());
        thread::spawn(move || {
            ping.prepare_taker();
            ready.wait();
            for _ in 0..round_trips {
                ping.take();
                pong.give();
            }
        })
    };
    pong.prepare_taker();
    ready.wait();
    let start = Instant::now();
    for _ in 0..round_trips {
        ping.give();
        pong.take();
    }
    let elapsed = start.elapsed();
    echo.join().expect("the echo thread panicked");
    elapsed.as_nanos() as f64 / (2 * round_trips) as f64
}

/// Wake latency from a real sleep: the giver waits `gap` (busy, on the clock) after the
/// taker has started blocking, so that every peer has stopped spinning and gone to sleep,
/// then notes the time and gives; the taker notes the time it returns. Returns the median
/// and the 99th percentile of those intervals, in nanoseconds, over `wakes` wake-ups.
///
/// Both timestamps come from one monotonic clock (`Instant`), so the difference is the
/// latency itself, not half a round trip.
pub fn parked_wake<S: Signal>(wakes: usize, gap: std::time::Duration) -> (f64, f64) {
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

    let sem = Arc::new(S::empty());
    let base = Instant::now();
    // The giver's timestamp (ns since `base`) for the current round.
    let given_at = Arc::new(AtomicU64::new(0));
    // Rounds the taker has finished; the giver starts the next round after it.
    let done = Arc::new(AtomicUsize::new(0));
    let ready = Arc::new(Barrier::new(2));
    let taker = {
        let (sem, given_at, done, ready) =
            (sem.clone(), given_at.clone(), done.clone(), ready.clone());
        thread::spawn(move || {
            sem.prepare_taker();
            ready.wait();
            let mut latencies = Vec::with_capacity(wakes);
            for round in 0..wakes {
                sem.take();
                let now = base.elapsed().as_nanos() as u64;
                // Acquire: pairs with the giver's Release store, made before it gave.
                let given = given_at.load(Ordering::Acquire);
                latencies.push(now.saturating_sub(given) as f64);
                done.store(round + 1, Ordering::Release);
            }
            latencies
        })
    };
    ready.wait();
    for round in 0..wakes {
        while done.load(Ordering::Acquire) < round {
            std::hint::spin_loop();
        }
        // The taker is now blocking in `take` (or about to): wait until it has surely
        // stopped spinning.
        let start = Instant::now();
        while start.elapsed() < gap {
            std::hint::spin_loop();
        }
        given_at.store(base.elapsed().as_nanos() as u64, Ordering::Release);
        sem.give();
    }
    let mut latencies = taker.join().expect("the taker panicked");
    latencies.sort_by(f64::total_cmp);
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.99))
}
