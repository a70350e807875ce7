//! The state machine: the only file with protocol logic.
//!
//! Everything it uses for synchronization comes from [`crate::sync`], so the same code can
//! be compiled against real `parking_lot_core` or against a checker's mocked park table.

use core::fmt;
use std::sync::Arc;

use crate::error::{AcquireError, AddPermitsError, TryAcquireError};
use crate::permit::{OwnedPermit, Permit};
use crate::sync::{
    AtomicUsize, DEFAULT_PARK_TOKEN, DEFAULT_UNPARK_TOKEN, FilterOp, Ordering, ParkResult,
    SpinWait, UnparkResult, const_fn, fence, park, unpark_filter,
};

#[cfg(feature = "broken_sema")]
use crate::flaw::{self, Flaw};

// The flags are written as literals, not shifts: `1 << 0` and `1 >> 0` are the same number,
// so a shift here would only give `cargo mutants` an equivalent mutant to report.

/// Some thread is parked, or is about to park, on this semaphore.
const WAITERS: usize = 0b001;
/// The semaphore is closed.
const CLOSED: usize = 0b010;
/// Bit 0b100 is reserved so that `MAX_PERMITS` never changes when a flag is added. It is
/// never set; `FLAG_BITS` counts it.
/// The number of flag bits below the permit count.
const FLAG_BITS: u32 = 3;
/// One permit, as it is counted in the state word.
const ONE: usize = 1 << FLAG_BITS;

/// A blocking counting semaphore for threads.
///
/// A semaphore holds a number of permits. [`acquire`](Semaphore::acquire) takes one,
/// parking the thread until one is available; the returned [`Permit`] gives it back when
/// dropped. [`close`](Semaphore::close) makes every parked and future `acquire` fail.
///
/// The whole semaphore is one word (`size_of::<Semaphore>() == size_of::<usize>()`), needs
/// no allocation and can live in a `static`. Parked threads wait in `parking_lot_core`'s
/// global park table, keyed by the semaphore's address.
///
/// # Examples
///
#[doc = crate::doc_fence!()]
/// use parksema::Semaphore;
/// use std::thread;
///
/// // At most two threads are inside the guarded section at once.
/// static SLOTS: Semaphore = Semaphore::new(2);
///
/// let handles: Vec<_> = (0..8)
///     .map(|_| {
///         thread::spawn(|| {
///             let _permit = SLOTS.acquire().expect("the semaphore is never closed");
///             // ... at most two threads run here at a time ...
///         })
///     })
///     .collect();
/// for h in handles {
///     h.join().unwrap();
/// }
/// assert_eq!(SLOTS.available_permits(), 2);
/// ```
pub struct Semaphore {
    /// The permit count and the flags, in one word: `permits * ONE | CLOSED | WAITERS`.
    ///
    /// | permits | `CLOSED` | `WAITERS` | meaning |
    /// |---------|----------|-----------|---------|
    /// | n > 0   | 0        | 0         | n permits free, nobody waits: acquire's fast path takes one with a single CAS |
    /// | 0       | 0        | 0         | no permit, nobody waits: an acquirer spins a little, then sets `WAITERS` |
    /// | 0       | 0        | 1         | no permit, threads parked or about to park: the only state in which `validate` lets a thread park |
    /// | n > 0   | 0        | 1         | permits came back while threads wait: the releaser wakes up to n of them; a woken thread or a barging one takes them |
    /// | any     | 1        | 0         | closed: acquire fails; permits still count, so held ones come back |
    /// | any     | 1        | 1         | closed while threads waited: `close` is waking them all and clears `WAITERS` |
    ///
    /// Transitions:
    ///
    /// - acquire takes a permit with a CAS `s -> s - ONE` (`Acquire` on success); it never
    ///   takes one from a closed semaphore;
    /// - an acquirer that finds no permit sets `WAITERS` with a CAS, then parks with a
    ///   `validate` that re-checks, under the bucket lock, that the state is exactly
    ///   `WAITERS`; a woken thread re-runs the loop and is not handed a permit (barging);
    /// - a release adds n permits with a checked CAS (`Release`); only if the old state had
    ///   `WAITERS` does it unpark up to n threads;
    /// - `close` sets `CLOSED` with `fetch_or` (`Release`) and, if `WAITERS` was set, unparks
    ///   every waiter.
    ///
    /// Invariants:
    ///
    /// - `WAITERS` — some thread is parked, or is about to park, on this semaphore. Set only by an acquirer
    ///   (CAS) before it parks. Cleared **only under the bucket lock**: in the `unpark_*` callback when no
    ///   thread with this key remains, or in `timed_out` when the last waiter leaves.
    /// - `CLOSED` — set once by `close()`, never cleared.
    ///
    /// Every write to the word is a read-modify-write (the flawed semaphores of the
    /// `broken_sema` feature excepted), so no release sequence is ever broken.
    state: AtomicUsize,

    /// The deliberate flaw this semaphore runs with, if any.
    #[cfg(feature = "broken_sema")]
    flaw: Option<Flaw>,
}

/// Whether a thread may park when the state word is `s`: only in the state exactly
/// `WAITERS` (no permit, not closed, the bit set). The parking thread's `validate` asks this
/// under the bucket lock.
fn may_park(s: usize) -> bool {
    s == WAITERS
}

/// Builds the initial state word, refusing counts that do not fit.
const fn initial_state(permits: usize) -> usize {
    assert!(
        permits <= Semaphore::MAX_PERMITS,
        "Semaphore::new: the permit count exceeds Semaphore::MAX_PERMITS (usize::MAX >> 3)"
    );
    permits << FLAG_BITS
}

impl Semaphore {
    /// The largest number of permits a semaphore can hold: `usize::MAX >> 3`.
    ///
    /// The low three bits of the state word are flags (two used, one reserved so that this
    /// number never changes).
    ///
    #[doc = crate::doc_fence!()]
    /// assert_eq!(parksema::Semaphore::MAX_PERMITS, usize::MAX >> 3);
    /// ```
    pub const MAX_PERMITS: usize = usize::MAX >> FLAG_BITS;

    const_fn! {
        /// Creates a semaphore holding `permits` permits.
        ///
        /// This is a `const fn`, so a semaphore can be a `static`.
        ///
        /// # Panics
        ///
        /// If `permits > Semaphore::MAX_PERMITS` (at compile time when evaluated in a
        /// constant).
        ///
        /// # Examples
        ///
        #[doc = crate::doc_fence!()]
        /// use parksema::Semaphore;
        ///
        /// static LIMIT: Semaphore = Semaphore::new(4);
        /// assert_eq!(LIMIT.available_permits(), 4);
        /// ```
        ///
        #[doc = crate::doc_fence!(should_panic)]
        /// let _ = parksema::Semaphore::new(parksema::Semaphore::MAX_PERMITS + 1);
        /// ```
        pub fn new(permits: usize) -> Semaphore {
            Semaphore {
                state: AtomicUsize::new(initial_state(permits)),
                #[cfg(feature = "broken_sema")]
                flaw: None,
            }
        }
    }

    /// Creates a semaphore that runs with the deliberate flaw `flaw` (`None`: the correct
    /// protocol). For the verification suite only.
    #[cfg(feature = "broken_sema")]
    #[doc(hidden)]
    pub fn with_flaw(permits: usize, flaw: Option<Flaw>) -> Semaphore {
        Semaphore {
            state: AtomicUsize::new(initial_state(permits)),
            flaw,
        }
    }

    /// Takes a permit, parking the thread until one is available.
    ///
    /// Returns an error once the semaphore is closed, also for a thread that was already
    /// parked when [`close`](Semaphore::close) was called. A closed semaphore never hands
    /// out a permit, even if it has some.
    ///
    /// Everything a thread did before it returned a permit (by dropping a [`Permit`] or by
    /// [`add_permits`](Semaphore::add_permits)) happens-before everything the thread that
    /// acquires after it does once `acquire` returns.
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    ///
    /// let sem = Semaphore::new(1);
    /// let permit = sem.acquire().unwrap();
    /// assert_eq!(sem.available_permits(), 0);
    /// drop(permit);
    /// assert_eq!(sem.available_permits(), 1);
    /// ```
    #[inline]
    pub fn acquire(&self) -> Result<Permit<'_>, AcquireError> {
        self.acquire_one()?;
        Ok(Permit::new(self))
    }

    /// Takes a permit if one is available now; never blocks.
    ///
    /// # Errors
    ///
    /// [`TryAcquireError::Closed`] if the semaphore is closed (checked first),
    /// [`TryAcquireError::NoPermits`] if no permit is available.
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::{Semaphore, TryAcquireError};
    ///
    /// let sem = Semaphore::new(1);
    /// let held = sem.try_acquire().unwrap();
    /// assert_eq!(sem.try_acquire().unwrap_err(), TryAcquireError::NoPermits);
    /// drop(held);
    /// sem.close();
    /// assert_eq!(sem.try_acquire().unwrap_err(), TryAcquireError::Closed);
    /// ```
    #[inline]
    pub fn try_acquire(&self) -> Result<Permit<'_>, TryAcquireError> {
        self.try_acquire_one()?;
        Ok(Permit::new(self))
    }

    /// Like [`acquire`](Semaphore::acquire), for a semaphore in an [`Arc`]: the permit owns a
    /// reference to the semaphore and can be moved to another thread or stored.
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::{sync::Arc, thread};
    ///
    /// let sem = Arc::new(Semaphore::new(1));
    /// let permit = Arc::clone(&sem).acquire_owned().unwrap();
    /// thread::spawn(move || drop(permit)).join().unwrap();
    /// assert_eq!(sem.available_permits(), 1);
    /// ```
    #[inline]
    pub fn acquire_owned(self: Arc<Self>) -> Result<OwnedPermit, AcquireError> {
        self.acquire_one()?;
        Ok(OwnedPermit::new(self))
    }

    /// Like [`try_acquire`](Semaphore::try_acquire), for a semaphore in an [`Arc`].
    ///
    /// # Errors
    ///
    /// As [`try_acquire`](Semaphore::try_acquire); the `Arc` is dropped.
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::sync::Arc;
    ///
    /// let sem = Arc::new(Semaphore::new(1));
    /// let permit = Arc::clone(&sem).try_acquire_owned().unwrap();
    /// assert!(Arc::clone(&sem).try_acquire_owned().is_err());
    /// drop(permit);
    /// assert_eq!(sem.available_permits(), 1);
    /// ```
    #[inline]
    pub fn try_acquire_owned(self: Arc<Self>) -> Result<OwnedPermit, TryAcquireError> {
        self.try_acquire_one()?;
        Ok(OwnedPermit::new(self))
    }

    /// Adds `n` permits and wakes up to `n` parked threads.
    ///
    /// Permits may be added to a closed semaphore (a held permit still comes back); they
    /// are counted but never handed out.
    ///
    /// # Panics
    ///
    /// If the count would exceed [`MAX_PERMITS`](Semaphore::MAX_PERMITS). The message names
    /// the numbers, and the count is left untouched.
    /// [`try_add_permits`](Semaphore::try_add_permits) returns this case as an error instead.
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    ///
    /// let sem = Semaphore::new(0);
    /// sem.add_permits(3);
    /// assert_eq!(sem.available_permits(), 3);
    /// ```
    #[inline]
    #[track_caller]
    pub fn add_permits(&self, n: usize) {
        if let Err(e) = self.try_add_permits(n) {
            panic!("{e}");
        }
    }

    /// Adds `n` permits and wakes up to `n` parked threads, unless the count would exceed
    /// [`MAX_PERMITS`](Semaphore::MAX_PERMITS).
    ///
    /// # Errors
    ///
    /// [`AddPermitsError`] if `available + n > MAX_PERMITS`; nothing was added.
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    ///
    /// let sem = Semaphore::new(Semaphore::MAX_PERMITS - 1);
    /// let err = sem.try_add_permits(2).unwrap_err();
    /// assert_eq!((err.available(), err.added()), (Semaphore::MAX_PERMITS - 1, 2));
    /// assert_eq!(sem.available_permits(), Semaphore::MAX_PERMITS - 1);
    /// sem.try_add_permits(1).unwrap();
    /// ```
    #[inline]
    pub fn try_add_permits(&self, n: usize) -> Result<(), AddPermitsError> {
        if n == 0 {
            return Ok(());
        }
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            let available = s >> FLAG_BITS;
            if n > Self::MAX_PERMITS - available {
                return Err(AddPermitsError::new(available, n));
            }
            // Release: pairs with the Acquire of `take_one`'s CAS in the thread that takes one
            // of these permits, so this thread's writes (a holder's, when a permit is dropped)
            // happen-before that thread's.
            match self.state.compare_exchange_weak(
                s,
                s + n * ONE,
                self.release_ordering(s),
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => s = now,
            }
        }
        if s & WAITERS != 0 {
            self.unpark_waiters(n);
        }
        Ok(())
    }

    /// Returns `n` permits from a dropped guard: as [`add_permits`](Semaphore::add_permits),
    /// except while this thread is already unwinding, where a second panic would abort the
    /// process; then the refused permits are dropped and the count stays at its maximum.
    #[inline]
    pub(crate) fn release_from_guard(&self, n: usize) {
        if let Err(e) = self.try_add_permits(n)
            && !std::thread::panicking()
        {
            panic!("{e}");
        }
    }

    /// Closes the semaphore: every parked and every future [`acquire`](Semaphore::acquire)
    /// returns [`AcquireError`], and [`try_acquire`](Semaphore::try_acquire) returns
    /// [`TryAcquireError::Closed`]. Permits still held may be returned as usual. Closing
    /// twice is harmless.
    ///
    /// Everything a thread did before `close` happens-before everything a thread does after
    /// it observes the semaphore closed (an acquire error, or `is_closed` returning `true`).
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::{sync::Arc, thread};
    ///
    /// let sem = Arc::new(Semaphore::new(0));
    /// let waiter = {
    ///     let sem = Arc::clone(&sem);
    ///     thread::spawn(move || sem.acquire().is_err())
    /// };
    /// sem.close();
    /// assert!(waiter.join().unwrap(), "a parked acquire fails once closed");
    /// assert!(sem.is_closed());
    /// ```
    pub fn close(&self) {
        // Release: pairs with the Acquire fence an acquirer runs when it observes CLOSED, and
        // with `is_closed`'s Acquire load.
        let old = self.state.fetch_or(CLOSED, Ordering::Release);
        if old & WAITERS != 0 {
            self.unpark_waiters(usize::MAX);
        }
    }

    /// Whether [`close`](Semaphore::close) has been called.
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// let sem = parksema::Semaphore::new(1);
    /// assert!(!sem.is_closed());
    /// sem.close();
    /// assert!(sem.is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        // Acquire: pairs with `close`'s Release.
        self.state.load(Ordering::Acquire) & CLOSED != 0
    }

    /// The number of permits available now. Under concurrency it may be stale as soon as it
    /// is returned.
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// let sem = parksema::Semaphore::new(2);
    /// let _p = sem.acquire().unwrap();
    /// assert_eq!(sem.available_permits(), 1);
    /// ```
    pub fn available_permits(&self) -> usize {
        self.state.load(Ordering::Relaxed) >> FLAG_BITS
    }

    /// The number of threads parked on this semaphore at one instant: a diagnostic for tests
    /// and stall reports. It takes the park table's bucket lock, so it is not free, and the
    /// number may be stale as soon as it is returned.
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::time::{Duration, Instant};
    /// use std::{sync::Arc, thread};
    ///
    /// let sem = Arc::new(Semaphore::new(0));
    /// let waiter = {
    ///     let sem = Arc::clone(&sem);
    ///     thread::spawn(move || drop(sem.acquire()))
    /// };
    /// // Bounded, so that a `parked_threads` that never counts the waiter fails this example
    /// // instead of hanging it.
    /// let give_up = Instant::now() + Duration::from_secs(10);
    /// while sem.parked_threads() == 0 {
    ///     assert!(Instant::now() < give_up, "the waiter never showed up as parked");
    ///     thread::yield_now();
    /// }
    /// sem.add_permits(1);
    /// waiter.join().unwrap();
    /// assert_eq!(sem.parked_threads(), 0);
    /// ```
    pub fn parked_threads(&self) -> usize {
        let mut parked = 0;
        let count = |_| {
            parked += 1;
            FilterOp::Skip
        };
        // SAFETY:
        // - `key` is this semaphore's own address, which only this semaphore parks on;
        // - `count` and the callback run under the bucket lock: they only increment a local
        //   counter and return a constant, so they cannot unwind or call into the park table;
        // - this is not a signal handler.
        unsafe { unpark_filter(self.key(), count, |_| DEFAULT_UNPARK_TOKEN) };
        parked
    }

    /// The park-table key: this semaphore's address.
    pub(crate) fn key(&self) -> usize {
        core::ptr::from_ref(self).addr()
    }

    /// Takes one permit or reports that the semaphore is closed, parking as long as needed.
    ///
    /// The fast path is `try_acquire`'s: a permit is taken with no spinning and no park-table
    /// call whenever one is free. Sharing it leaves no separate fast-path test whose every
    /// mutation only costs time.
    #[inline]
    fn acquire_one(&self) -> Result<(), AcquireError> {
        match self.try_acquire_one() {
            Ok(()) => Ok(()),
            Err(TryAcquireError::Closed) => Err(AcquireError::new()),
            Err(TryAcquireError::NoPermits) => self.acquire_slow(),
        }
    }

    /// Takes one permit if the state word is still `s`.
    #[inline]
    fn take_one(&self, s: usize) -> Result<usize, usize> {
        #[cfg(feature = "broken_sema")]
        if self.flaw == Some(Flaw::OverIssue) {
            return flaw::over_issue_take(&self.state, s, ONE);
        }
        // Acquire: pairs with the Release of the `try_add_permits` CAS that put the permit
        // into the word, so the previous holder's writes happen-before this holder's.
        self.state.compare_exchange_weak(
            s,
            s - ONE,
            self.permit_ordering(Ordering::Acquire),
            Ordering::Relaxed,
        )
    }

    /// The ordering of a CAS that moves a permit: `correct`, unless this semaphore runs with
    /// the `RelaxedOrdering` flaw.
    #[inline(always)]
    fn permit_ordering(&self, correct: Ordering) -> Ordering {
        #[cfg(feature = "broken_sema")]
        if self.flaw == Some(Flaw::RelaxedOrdering) {
            return flaw::relaxed_ordering();
        }
        correct
    }

    /// The ordering of a release's CAS, which replaces the word `s`: `Release`, unless this
    /// semaphore runs with a flaw that weakens it.
    #[inline(always)]
    fn release_ordering(&self, s: usize) -> Ordering {
        #[cfg(feature = "broken_sema")]
        if flaw::is(self.flaw, Flaw::RelaxedWhenWaited) {
            return flaw::relaxed_when_waited(s, WAITERS, Ordering::Release);
        }
        let _ = s;
        self.permit_ordering(Ordering::Release)
    }

    /// Takes one permit if one is available now.
    #[inline]
    fn try_acquire_one(&self) -> Result<(), TryAcquireError> {
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            if s & CLOSED != 0 {
                // Acquire: pairs with `close`'s Release.
                fence(Ordering::Acquire);
                return Err(TryAcquireError::Closed);
            }
            if s < ONE {
                return Err(TryAcquireError::NoPermits);
            }
            match self.take_one(s) {
                Ok(_) => return Ok(()),
                Err(now) => s = now,
            }
        }
    }

    /// The slow path of `acquire`: grab a permit if there is one (barging), spin while
    /// nobody waits, set `WAITERS`, park, and start over when woken.
    #[cold]
    fn acquire_slow(&self) -> Result<(), AcquireError> {
        let mut spin = SpinWait::new();
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            if s & CLOSED != 0 {
                // Acquire: pairs with `close`'s Release.
                fence(Ordering::Acquire);
                return Err(AcquireError::new());
            }

            // A permit is free: take it, even if others are parked.
            if s >= ONE {
                match self.take_one(s) {
                    Ok(_) => return Ok(()),
                    Err(now) => s = now,
                }
                continue;
            }

            if s & WAITERS == 0 {
                // Nobody is parked: a permit may come back soon, so spin a little first.
                if spin.spin() {
                    s = self.state.load(Ordering::Relaxed);
                    continue;
                }
                // Announce that a thread is about to park, so releases take the slow path.
                // `WAITERS` is clear here, so adding it sets it; `s | WAITERS` would be the
                // same number as `s ^ WAITERS`, an equivalent mutant for `cargo mutants`.
                if let Err(now) = self.state.compare_exchange_weak(
                    s,
                    s + WAITERS,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    s = now;
                    continue;
                }
            }

            self.park();
            spin.reset();
            s = self.state.load(Ordering::Relaxed);
        }
    }

    /// Parks this thread until a release or `close` unparks it, unless the state is no
    /// longer exactly `WAITERS` when the bucket is locked.
    fn park(&self) {
        // Runs under the bucket lock, which every clear of WAITERS also holds, so a clear
        // either happened before (and this sees it) or happens after this thread is queued
        // (and the clearing unpark finds it).
        #[cfg(feature = "broken_sema")]
        let stale = flaw::is(self.flaw, Flaw::StaleValidate).then(|| {
            let seen = self.state.load(Ordering::Relaxed);
            flaw::stale_validate_gap();
            seen
        });
        let validate = || {
            #[cfg(feature = "broken_sema")]
            if let Some(seen) = stale {
                return flaw::stale_validate(seen, WAITERS);
            }
            may_park(self.state.load(Ordering::Relaxed))
        };
        // No timeout is passed, so `timed_out` is never called.
        let timed_out = |_, _| {};
        // SAFETY:
        // - `key` is this semaphore's own address, which only this semaphore parks on;
        // - `validate` (and `timed_out`, never called) run under the bucket lock: one
        //   relaxed load and a comparison, which cannot unwind or call into the park table;
        // - `before_sleep` does nothing;
        // - this is not a signal handler.
        let result = unsafe {
            park(
                self.key(),
                validate,
                || {},
                timed_out,
                DEFAULT_PARK_TOKEN,
                None,
            )
        };
        debug_assert_ne!(result, ParkResult::TimedOut, "no timeout was passed");
    }

    /// Unparks up to `max` threads; clears `WAITERS` if none is left parked.
    #[cold]
    fn unpark_waiters(&self, max: usize) {
        let mut unparked = 0;
        let filter = |_| {
            if unparked < max {
                unparked += 1;
                FilterOp::Unpark
            } else {
                FilterOp::Stop
            }
        };
        let callback = |result: UnparkResult| {
            if self.no_waiter_left(&result) {
                // Relaxed: this runs under the bucket lock, and so does every `validate`,
                // which the lock orders before or after this clear.
                self.state.fetch_and(!WAITERS, Ordering::Relaxed);
            }
            DEFAULT_UNPARK_TOKEN
        };
        // SAFETY:
        // - `key` is this semaphore's own address, which only this semaphore parks on;
        // - `filter` and `callback` run under the bucket lock: a counter comparison and one
        //   atomic RMW, which cannot unwind or call into the park table;
        // - this is not a signal handler.
        unsafe { unpark_filter(self.key(), filter, callback) };
    }

    /// Whether an unpark left no thread parked on this semaphore, so `WAITERS` must go.
    fn no_waiter_left(&self, result: &UnparkResult) -> bool {
        #[cfg(feature = "broken_sema")]
        if self.flaw == Some(Flaw::LostWaiters) {
            return flaw::lost_waiters_clears(result);
        }
        !result.have_more_threads
    }
}

impl fmt::Debug for Semaphore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.state.load(Ordering::Relaxed);
        let mut d = f.debug_struct("Semaphore");
        d.field("permits", &(s >> FLAG_BITS))
            .field("waiters", &(s & WAITERS != 0))
            .field("closed", &(s & CLOSED != 0))
            .field("state", &format_args!("{s:#x}"));
        #[cfg(feature = "broken_sema")]
        d.field("flaw", &self.flaw);
        d.finish()
    }
}

// The real build keeps the semaphore to one word; the flawed build adds a field, and the
// checkers' atomics carry their own bookkeeping.
#[cfg(not(any(feature = "broken_sema", feature = "loom", feature = "shuttle")))]
const _: () = assert!(size_of::<Semaphore>() == size_of::<usize>());

// A plain `#[cfg(test)]` on the module, which `cargo mutants` recognizes and skips (it does
// not mutate tests; it did not recognize `cfg(all(test, ...))`); the backend condition is a
// second attribute.
#[cfg(test)]
#[cfg(not(any(feature = "loom", feature = "shuttle")))]
mod tests {
    //! What a call costs in the park table, seen through the real backend's test counters
    //! (`sync::real::counted`): properties that no functional test observes, because a
    //! spurious unpark only costs time.

    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::thread;

    use super::*;
    use crate::sync::counted::{Counts, counts, reset};

    /// These tests run first in `cargo test` and so meet most mutants first; a mutant that
    /// leaves a thread parked (or never parks it) must fail fast. They take milliseconds, so
    /// 3 s without finishing is a hang (`WATCHDOG_STALL_SECS` widens it on a slow machine).
    fn hang_guard(test: &str) -> watchdog::Watchdog {
        watchdog::Watchdog::arm(
            format!("semaphore::tests::{test}"),
            watchdog::stall_limit(std::time::Duration::from_secs(3)),
        )
    }

    fn wait_until(what: impl Fn() -> bool) {
        while !what() {
            thread::yield_now();
        }
    }

    #[test]
    fn nobody_waiting_means_no_park_table_call() {
        let _guard = hang_guard("nobody_waiting_means_no_park_table_call");
        let sem = Semaphore::new(0);
        reset(sem.key());
        sem.add_permits(2);
        sem.try_add_permits(1).unwrap();
        drop(sem.acquire().unwrap());
        drop(sem.try_acquire().unwrap());
        sem.close();
        sem.close();
        assert_eq!(sem.available_permits(), 3);
        assert_eq!(counts(sem.key()), Counts::default(), "{sem:?}");
    }

    #[test]
    fn a_release_of_n_permits_wakes_at_most_n_threads() {
        let _guard = hang_guard("a_release_of_n_permits_wakes_at_most_n_threads");
        let sem = Semaphore::new(0);
        reset(sem.key());
        let taken = AtomicUsize::new(0);
        let woken_by_one_permit = thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    sem.acquire().unwrap().forget();
                    taken.fetch_add(1, SeqCst);
                });
            }
            wait_until(|| sem.parked_threads() == 3);
            sem.add_permits(1);
            // Once the permit is taken and everyone else is parked again, a thread woken
            // in vain would have been counted.
            wait_until(|| taken.load(SeqCst) == 1 && sem.parked_threads() == 2);
            let woken = counts(sem.key()).woken;
            // Release the others before asserting: a failed assertion inside the scope
            // would wait for them forever and show up as a stall, not as this failure.
            sem.add_permits(2);
            woken
        });
        assert_eq!(woken_by_one_permit, 1, "one permit, one wake-up");
        assert_eq!(counts(sem.key()).woken, 3);
        assert_eq!(sem.available_permits(), 0);
    }

    #[test]
    fn close_wakes_every_parked_thread_once() {
        let _guard = hang_guard("close_wakes_every_parked_thread_once");
        let sem = Semaphore::new(0);
        reset(sem.key());
        thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| assert!(sem.acquire().is_err()));
            }
            wait_until(|| sem.parked_threads() == 3);
            sem.close();
        });
        assert_eq!(counts(sem.key()).woken, 3);
        assert_eq!(
            sem.state.load(Ordering::Relaxed),
            CLOSED,
            "WAITERS cleared, no permit"
        );
    }

    /// The state table's rule, row by row: a thread may park only in the state exactly
    /// `WAITERS`. Parking in a state that has the bit *and* a permit (or `CLOSED`) is rescued
    /// by the release (or close) that is about to unpark, so no scenario can see it; this
    /// test can.
    #[test]
    fn a_thread_may_park_only_in_the_state_exactly_waiters() {
        for permits in [0, 1, 2, Semaphore::MAX_PERMITS] {
            for closed in [0, CLOSED] {
                for waiters in [0, WAITERS] {
                    let s = (permits * ONE) | closed | waiters;
                    let expected = permits == 0 && closed == 0 && waiters == WAITERS;
                    assert_eq!(may_park(s), expected, "state {s:#x}");
                }
            }
        }
    }

    #[cfg(feature = "broken_sema")]
    #[test]
    fn only_the_relaxed_ordering_flaw_weakens_permit_orderings() {
        for flaw in [
            None,
            Some(Flaw::OverIssue),
            Some(Flaw::LostWaiters),
            Some(Flaw::StaleValidate),
            Some(Flaw::RelaxedWhenWaited),
        ] {
            let sem = Semaphore::with_flaw(1, flaw);
            assert_eq!(
                sem.permit_ordering(Ordering::Acquire),
                Ordering::Acquire,
                "{flaw:?}"
            );
            assert_eq!(
                sem.permit_ordering(Ordering::Release),
                Ordering::Release,
                "{flaw:?}"
            );
        }
        let sem = Semaphore::with_flaw(1, Some(Flaw::RelaxedOrdering));
        assert_eq!(sem.permit_ordering(Ordering::Acquire), Ordering::Relaxed);
        assert_eq!(sem.permit_ordering(Ordering::Release), Ordering::Relaxed);
    }
}
