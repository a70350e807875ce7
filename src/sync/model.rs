//! What the verification suite's scenario bodies use to spawn threads and share data, so that
//! one body runs under every build: std threads in the real build, the checker's threads
//! under `loom` or `shuttle`. Not part of the semaphore's API.

#[cfg(not(any(feature = "loom", feature = "shuttle")))]
pub use std::{
    sync::Arc,
    sync::atomic::{AtomicBool, AtomicUsize, Ordering},
    thread,
};

#[cfg(feature = "loom")]
pub use loom::{
    sync::Arc,
    sync::atomic::{AtomicBool, AtomicUsize, Ordering},
    thread,
};

#[cfg(all(feature = "shuttle", not(feature = "loom")))]
pub use shuttle::{
    sync::Arc,
    sync::atomic::{AtomicBool, AtomicUsize, Ordering},
    thread,
};

#[cfg(any(feature = "loom", feature = "shuttle"))]
pub use parkcheck::{
    SPINS, Settings as MockSettings, advance_clock, now, settings as mock_settings, with_settings,
};

/// How many threads are parked on `sem` now, without a happens-before edge or a scheduling
/// point under the checkers (parkcheck's untracked copy of its queue; `None` while a table
/// operation is under way); on real threads `parked_threads`, which takes the bucket lock.
pub fn parked_untracked(sem: &crate::Semaphore) -> Option<usize> {
    #[cfg(any(feature = "loom", feature = "shuttle"))]
    return parkcheck::parked_untracked(sem.key());
    #[cfg(not(any(feature = "loom", feature = "shuttle")))]
    Some(sem.parked_threads())
}

/// The clock deadlines are computed from: `Instant::now` on real threads (under the checkers,
/// the mocked clock, which only [`advance_clock`] moves).
#[cfg(not(any(feature = "loom", feature = "shuttle")))]
pub fn now() -> std::time::Instant {
    std::time::Instant::now()
}

/// Lets `by` pass: on real threads time passes by itself, so this sleeps it out (not to
/// order threads, only so that a deadline computed from [`now`] has passed when it returns);
/// under the checkers it moves the mocked clock and wakes the parked threads whose deadline
/// passed.
#[cfg(not(any(feature = "loom", feature = "shuttle")))]
pub fn advance_clock(by: std::time::Duration) {
    std::thread::sleep(by);
}

/// What one semaphore has cost in the park table so far, as the mocked park table counts it
/// per key (under `loom` and `shuttle`; each execution starts from zero).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParkStats {
    /// `park` calls whose `validate` let the thread queue.
    pub parks: usize,
    /// `unpark_*` calls on this key (a release that found `WAITERS`, or `close`).
    pub unpark_calls: usize,
    /// Threads those calls unparked, in all.
    pub woken: usize,
    /// The most threads one of those calls unparked.
    pub most_woken_by_one_call: usize,
    /// Threads unparked with their permits handed over (the `HANDED` token).
    pub handed: usize,
}

/// The park-table counters of `sem`: `Some` under the checkers, whose mocked table counts
/// them; `None` on real threads (the library's own unit tests count the real table).
pub fn park_stats(sem: &crate::Semaphore) -> Option<ParkStats> {
    #[cfg(any(feature = "loom", feature = "shuttle"))]
    {
        let s = parkcheck::stats(sem.key());
        Some(ParkStats {
            parks: s.parks,
            unpark_calls: s.unpark_calls,
            woken: s.woken,
            most_woken_by_one_call: s.most_woken_by_one_call,
            handed: s.handed,
        })
    }
    #[cfg(not(any(feature = "loom", feature = "shuttle")))]
    {
        let _ = sem;
        None
    }
}

/// What the calling thread's own park-table calls on `sem` have cost so far in this
/// execution (parkcheck's per-thread counters, read with no happens-before edge and no
/// scheduling point): `Some` under the checkers, `None` on real threads. Read before and after
/// one call, the difference is what that call did in the table.
pub fn thread_park_stats(sem: &crate::Semaphore) -> Option<ParkStats> {
    #[cfg(any(feature = "loom", feature = "shuttle"))]
    {
        let s = parkcheck::thread_stats(sem.key());
        Some(ParkStats {
            parks: s.parks,
            unpark_calls: s.unpark_calls,
            woken: s.woken,
            most_woken_by_one_call: s.most_woken_by_one_call,
            handed: s.handed,
        })
    }
    #[cfg(not(any(feature = "loom", feature = "shuttle")))]
    {
        let _ = sem;
        None
    }
}

#[cfg(feature = "loom")]
type Inner<T> = loom::cell::UnsafeCell<T>;

/// The std cell behind [`SharedCell`] outside loom, with loom's access methods.
#[cfg(not(feature = "loom"))]
#[derive(Debug)]
struct Inner<T>(std::cell::UnsafeCell<T>);

#[cfg(not(feature = "loom"))]
impl<T> Inner<T> {
    fn new(value: T) -> Self {
        Inner(std::cell::UnsafeCell::new(value))
    }

    fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

/// Data shared between threads without synchronization of its own, protected only by a
/// semaphore's permit. Under loom every access is tracked, so a missing happens-before edge
/// between two holders is reported as a causality violation (a data race).
#[derive(Debug)]
pub struct SharedCell<T>(Inner<T>);

// SAFETY: a `SharedCell` is only accessed through `with`/`with_mut`, whose callers promise
// that accesses do not overlap (in the scenarios: only a permit holder touches it). Checking
// that promise is the point of the cell: loom reports any access that is not ordered by
// happens-before.
unsafe impl<T: Send> Sync for SharedCell<T> {}

impl<T> SharedCell<T> {
    /// A cell holding `value`.
    pub fn new(value: T) -> Self {
        SharedCell(Inner::new(value))
    }

    /// Reads through a shared pointer.
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        self.0.with(f)
    }

    /// Writes through an exclusive pointer.
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        self.0.with_mut(f)
    }
}
