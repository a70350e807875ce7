//! The model checker in use (loom or shuttle): its atomics, and what the semaphore needs
//! besides the park table (which `parkcheck` models), under one set of names.

#[cfg(all(feature = "loom", feature = "broken_sema"))]
pub(crate) use loom::hint::spin_loop as flaw_window;
#[cfg(feature = "loom")]
pub(crate) use loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering, fence};

#[cfg(all(feature = "shuttle", not(feature = "loom"), feature = "broken_sema"))]
pub(crate) use shuttle::hint::spin_loop as flaw_window;
#[cfg(all(feature = "shuttle", not(feature = "loom")))]
pub(crate) use shuttle::sync::atomic::{AtomicU64, AtomicUsize, Ordering, fence};

/// Marks a run of the semaphore's guarded try loop: the real build's unit tests count them;
/// the checkers do not.
#[inline(always)]
pub(crate) fn note_guarded(key: usize) {
    let _ = key;
}

/// Marks a run of the semaphore's out-of-line release: counted as `note_guarded`'s runs are.
#[inline(always)]
pub(crate) fn note_slow_release(key: usize) {
    let _ = key;
}

/// Microseconds the mocked clock has advanced in this execution: the eventual-fairness
/// timer's clock under the checkers (it synchronizes with nothing).
pub(crate) fn clock_micros() -> u64 {
    // Truncating, as the real clock: the timer keeps 30 bits.
    parkcheck::elapsed().as_micros() as u64
}
