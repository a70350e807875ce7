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
