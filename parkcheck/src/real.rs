//! The real build: `parking_lot_core` 0.10 re-exported unchanged, and the clock on real time.

pub use parking_lot_core::{
    SpinWait, deadlock, park, unpark_all, unpark_filter, unpark_one, unpark_requeue,
};

use std::time::{Duration, Instant};

/// The clock deadlines are computed from: `Instant::now` in the real build (under a checker,
/// the mocked clock, which only [`advance_clock`] moves).
#[inline]
pub fn now() -> Instant {
    Instant::now()
}

/// Lets `by` pass: in the real build time passes by itself, so this sleeps it out, so that a
/// deadline computed from [`now`] has passed when it returns (under a checker it moves the
/// mocked clock and wakes the parked threads whose deadline passed). It orders no threads.
pub fn advance_clock(by: Duration) {
    std::thread::sleep(by);
}
