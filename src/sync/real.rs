//! The real backend: std atomics and `parking_lot_core` 0.10, re-exported unchanged.

#[cfg(test)]
pub(crate) use counted::{note_guarded, note_slow_release, park, unpark_filter};
pub(crate) use parking_lot_core::{
    DEFAULT_UNPARK_TOKEN, FilterOp, ParkResult, ParkToken, SpinWait, UnparkResult, UnparkToken,
};
#[cfg(not(test))]
pub(crate) use parking_lot_core::{park, unpark_filter};
pub(crate) use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering, fence};

/// Marks a run of the semaphore's guarded (out-of-line) try loop on `key`: nothing outside
/// the library's unit tests, which count the runs (the modes without `FIFO` must never take
/// that path on an open semaphore).
#[cfg(not(test))]
#[inline(always)]
pub(crate) fn note_guarded(key: usize) {
    let _ = key;
}

/// Marks a run of the semaphore's out-of-line release on `key`: nothing outside the library's
/// unit tests, which count the runs (a release with nobody waiting must stay on the fast path).
#[cfg(not(test))]
#[inline(always)]
pub(crate) fn note_slow_release(key: usize) {
    let _ = key;
}

/// The clock deadlines are computed from: the real one. (Under the checkers it is the mocked
/// clock, so the checker decides when a deadline passes.)
#[inline]
pub(crate) fn now() -> std::time::Instant {
    std::time::Instant::now()
}
/// Microseconds since a fixed instant of this process (the first call): the clock of the
/// eventual-fairness timer, which keeps only its low 30 bits. (Under the checkers it is the
/// mocked clock's elapsed time, so every execution reads the same values.)
#[inline]
pub(crate) fn clock_micros() -> u64 {
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let epoch = *EPOCH.get_or_init(std::time::Instant::now);
    // Truncating: the timer keeps 30 bits of it and compares them modulo 2^30.
    std::time::Instant::now()
        .saturating_duration_since(epoch)
        .as_micros() as u64
}

/// The gap the `OverIssue` flaw leaves between its load and its store. On real threads it
/// yields the CPU, so that another thread runs inside the gap often enough for the
/// real-thread check to see the lost update within milliseconds even on two cores (a spin
/// hint alone left it unseen in some debug-build runs on a loaded machine).
#[cfg(feature = "broken_sema")]
pub(crate) use std::thread::yield_now as flaw_window;

/// Declares a constructor that is a `const fn` in the real build.
///
/// Model checkers' atomics cannot be built in a `const` context, so a checker backend
/// defines this macro to emit a plain `fn` instead; the constructor's body is the same in
/// every build.
macro_rules! const_fn {
    ($(#[$attr:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty $body:block) => {
        $(#[$attr])* $vis const fn $name($($arg: $ty),*) -> $ret $body
    };
}
pub(crate) use const_fn;

/// The library's unit tests see the park table through counters, so they can assert what a
/// call costs (a release with nobody waiting never enters the table; a release of n permits
/// wakes at most n threads) — properties no functional test observes.
#[cfg(test)]
pub(crate) mod counted {
    use std::collections::HashMap;
    use std::sync::Mutex;
    use std::time::Instant;

    use parking_lot_core::{FilterOp, ParkResult, ParkToken, UnparkResult, UnparkToken};

    /// What happened on one park-table key.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub(crate) struct Counts {
        /// `unpark_filter` calls.
        pub(crate) unpark_calls: usize,
        /// `park` calls that returned because a thread was unparked.
        pub(crate) woken: usize,
        /// Runs of the guarded try loop (`note_guarded`).
        pub(crate) guarded: usize,
        /// Runs of the out-of-line release (`note_slow_release`).
        pub(crate) slow_releases: usize,
        /// `park` calls that returned with a token other than `DEFAULT_UNPARK_TOKEN`: the
        /// semaphore's handoff, which only a handing-over release sends.
        pub(crate) handed_over: usize,
    }

    /// Counts per key. Tests use their own semaphores, so two live ones never share a key;
    /// but a later test's semaphore may reuse a finished one's address, so each test starts
    /// with [`reset`].
    static COUNTS: Mutex<Option<HashMap<usize, Counts>>> = Mutex::new(None);

    fn record(key: usize, f: impl FnOnce(&mut Counts)) {
        let mut map = COUNTS.lock().unwrap_or_else(|e| e.into_inner());
        f(map.get_or_insert_with(HashMap::new).entry(key).or_default());
    }

    /// Forgets what was counted for `key` (by a semaphore that lived at this address before).
    pub(crate) fn reset(key: usize) {
        let mut map = COUNTS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(map) = map.as_mut() {
            map.remove(&key);
        }
    }

    /// The counts of `key` so far.
    pub(crate) fn counts(key: usize) -> Counts {
        let map = COUNTS.lock().unwrap_or_else(|e| e.into_inner());
        map.as_ref()
            .and_then(|m| m.get(&key).copied())
            .unwrap_or_default()
    }

    /// Counts a run of the guarded try loop on `key`.
    pub(crate) fn note_guarded(key: usize) {
        record(key, |c| c.guarded += 1);
    }

    /// Counts a run of the out-of-line release on `key`.
    pub(crate) fn note_slow_release(key: usize) {
        record(key, |c| c.slow_releases += 1);
    }

    /// `parking_lot_core::park`, counted.
    ///
    /// # Safety
    ///
    /// As for `parking_lot_core::park`.
    pub(crate) unsafe fn park(
        key: usize,
        validate: impl FnOnce() -> bool,
        before_sleep: impl FnOnce(),
        timed_out: impl FnOnce(usize, bool),
        park_token: ParkToken,
        timeout: Option<Instant>,
    ) -> ParkResult {
        // SAFETY: the caller upholds `park`'s contract; the arguments pass through unchanged.
        let result = unsafe {
            parking_lot_core::park(key, validate, before_sleep, timed_out, park_token, timeout)
        };
        if let ParkResult::Unparked(token) = result {
            record(key, |c| {
                c.woken += 1;
                c.handed_over += usize::from(token != parking_lot_core::DEFAULT_UNPARK_TOKEN);
            });
        }
        result
    }

    /// `parking_lot_core::unpark_filter`, counted.
    ///
    /// # Safety
    ///
    /// As for `parking_lot_core::unpark_filter`.
    pub(crate) unsafe fn unpark_filter(
        key: usize,
        filter: impl FnMut(ParkToken) -> FilterOp,
        callback: impl FnOnce(UnparkResult) -> UnparkToken,
    ) -> UnparkResult {
        record(key, |c| c.unpark_calls += 1);
        // SAFETY: the caller upholds `unpark_filter`'s contract; the arguments pass through
        // unchanged.
        unsafe { parking_lot_core::unpark_filter(key, filter, callback) }
    }
}
