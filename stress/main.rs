//! Real-thread stress tests of `parksema`, every one under the in-process watchdog, so a
//! lost wakeup ends as a fast stall report instead of a hung test.
//!
//! Sizes: release builds run seed 000's full sizes; debug builds run a tenth of the
//! iterations (the same thread counts), which keeps `cargo test` quick while still parking
//! and waking thousands of times.
//!
//! With the `broken_sema` feature the same binary also holds the catch tests (`catches_*`),
//! which run these scenarios against each deliberate flaw in a child process and pass only
//! when the flaw is reported with the property it violates.

// A real-thread test: under the model checkers the semaphore only works inside a model.
#![cfg(not(any(feature = "loom", feature = "shuttle")))]

mod child;
mod scenarios;
mod support;

#[cfg(feature = "broken_sema")]
mod catches;

use support::Build;

/// Iterations per thread for the long-running scenarios: seed 000's 20 000 in release
/// builds, a tenth of that in debug builds (unoptimized atomics and park calls are about ten
/// times slower, and the debug run is the quick one).
pub(crate) const PER_THREAD: usize = if cfg!(debug_assertions) {
    2_000
} else {
    20_000
};

#[test]
fn never_exceeds_permits() {
    // Seed 000's sizes: 1 permit among 8 threads, 3 among 16, 8 among 32.
    for (permits, threads) in [(1, 8), (3, 16), (8, 32)] {
        let summary =
            scenarios::never_exceeds_permits(Build::CORRECT, permits, threads, PER_THREAD);
        println!("{summary}");
    }
}

#[test]
fn wakes_every_parked_thread() {
    println!(
        "{}",
        scenarios::wakes_every_parked_thread(Build::CORRECT, 32)
    );
}

#[test]
fn mixed_traffic() {
    println!(
        "{}",
        scenarios::mixed_traffic(Build::CORRECT, 4, 16, PER_THREAD)
    );
}

#[test]
fn many_semaphores_share_buckets() {
    // 100 rounds move each of the 64 tokens through all 16 threads 100 times: 102 400 takes,
    // nearly all parked, in about a second in release; a tenth of that in debug.
    println!(
        "{}",
        scenarios::many_semaphores(Build::CORRECT, 16, 64, PER_THREAD / 200)
    );
}

#[test]
fn close_while_parked() {
    println!("{}", scenarios::close_while_parked(Build::CORRECT, 16));
}

#[test]
fn close_during_traffic() {
    println!(
        "{}",
        scenarios::close_during_traffic(Build::CORRECT, 2, 16, PER_THREAD / 2)
    );
}

#[test]
fn holder_panics_returns_permit() {
    println!("{}", scenarios::holder_panics(Build::CORRECT));
}
