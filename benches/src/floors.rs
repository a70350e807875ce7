//! The floors the semaphores are measured against: the fewest atomic operations an
//! acquire + release pair can be, used by the criterion benchmarks and the instruction
//! counter alike.

use std::sync::atomic::{AtomicUsize, Ordering};

/// One permit in the word, counted as the semaphore counts it (above three flag bits).
pub const ONE: usize = 8;

/// The unchecked floor: a load and a compare-exchange to take a permit, a `fetch_add` to
/// return it.
#[inline]
pub fn pair(word: &AtomicUsize) {
    let s = word.load(Ordering::Relaxed);
    let _ = word.compare_exchange(s, s - ONE, Ordering::Acquire, Ordering::Relaxed);
    word.fetch_add(ONE, Ordering::Release);
}

/// The checked floor: what a semaphore that refuses to over-issue or wrap must do at least,
/// a load and a compare-exchange to take (the count is checked first) and a load and a
/// compare-exchange to return (the sum is checked against the maximum first).
#[inline]
pub fn checked_pair(word: &AtomicUsize) {
    let s = word.load(Ordering::Relaxed);
    if s >= ONE {
        let _ = word.compare_exchange(s, s - ONE, Ordering::Acquire, Ordering::Relaxed);
    }
    let s = word.load(Ordering::Relaxed);
    if s <= usize::MAX - ONE {
        let _ = word.compare_exchange(s, s + ONE, Ordering::Release, Ordering::Relaxed);
    }
}
