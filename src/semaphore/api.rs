//! The public API apart from acquiring: the constructors; adding permits (through `give`);
//! `forget_permits` (a compare-exchange loop on the state word) and `close` (a `fetch_or`,
//! then waking every parked thread); and the queries.

use super::*;

impl Semaphore {
    /// The largest number of permits a semaphore can hold: `usize::MAX >> 3`.
    ///
    /// The low three bits of the state word are flags (the fairness timer has a word of its
    /// own, so this number did not change when fairness came).
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
            Semaphore::with_fairness(permits, Fairness::Eventual)
        }
    }

    const_fn! {
        /// Creates a semaphore holding `permits` permits that orders its waiters by
        /// `fairness` ([`new`](Semaphore::new) gives [`Fairness::Eventual`]).
        ///
        /// # Panics
        ///
        /// If `permits > Semaphore::MAX_PERMITS`, as [`new`](Semaphore::new).
        ///
        /// # Examples
        ///
        #[doc = crate::doc_fence!()]
        /// use parksema::{Fairness, Semaphore, TryAcquireError};
        /// use std::{sync::Arc, thread};
        ///
        /// let sem = Arc::new(Semaphore::with_fairness(1, Fairness::Fifo));
        /// let held = sem.acquire().unwrap();
        /// let waiter = {
        ///     let sem = Arc::clone(&sem);
        ///     // The waiter holds its permit until the join.
        ///     thread::spawn(move || sem.acquire().unwrap().forget())
        /// };
        /// while sem.parked_threads() == 0 {
        ///     thread::yield_now();
        /// }
        /// drop(held); // handed to the parked thread: it never shows in the count
        /// assert_eq!(sem.try_acquire().unwrap_err(), TryAcquireError::NoPermits);
        /// waiter.join().unwrap();
        /// sem.add_permits(1); // the one the waiter forgot
        /// assert_eq!(sem.available_permits(), 1);
        /// ```
        pub fn with_fairness(permits: usize, fairness: Fairness) -> Semaphore {
            Semaphore {
                state: AtomicUsize::new(initial_state(permits, fairness)),
                timer: AtomicU64::new(mode_code(fairness)),
                flaw: flaw::Slot::NONE,
            }
        }
    }

    /// Creates a semaphore that runs with the deliberate flaw `flaw` (`None`: the correct
    /// protocol). For the verification suite only.
    #[cfg(feature = "broken_sema")]
    #[doc(hidden)]
    pub fn with_flaw(permits: usize, flaw: Option<Flaw>) -> Semaphore {
        Semaphore::with_fairness_and_flaw(permits, Fairness::Eventual, flaw)
    }

    /// Creates a semaphore of the given fairness that runs with the deliberate flaw `flaw`.
    /// For the verification suite only.
    #[cfg(feature = "broken_sema")]
    #[doc(hidden)]
    pub fn with_fairness_and_flaw(
        permits: usize,
        fairness: Fairness,
        flaw: Option<Flaw>,
    ) -> Semaphore {
        let mut sem = Semaphore::with_fairness(permits, fairness);
        sem.flaw = flaw::Slot::new(flaw);
        sem
    }

    /// The fairness this semaphore was created with.
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::{Fairness, Semaphore};
    ///
    /// assert_eq!(Semaphore::with_fairness(2, Fairness::Barging).fairness(), Fairness::Barging);
    /// ```
    #[must_use]
    pub fn fairness(&self) -> Fairness {
        match self.timer.load(Ordering::Relaxed) & MODE_MASK {
            0 => Fairness::Eventual,
            1 => Fairness::Fifo,
            _ => Fairness::Barging,
        }
    }

    /// Adds `n` permits for the parked threads, as the semaphore's [`Fairness`] says. Under
    /// `Eventual` and `Barging` it wakes, in the order they parked, every parked thread whose
    /// request fits the permits then free (a request that does not fit does not hold up a
    /// smaller one behind it), and a running thread may take them first; `Eventual`, once its
    /// fairness deadline has passed, hands them over instead, as `Fifo` always does: to the
    /// parked requests in arrival order, stopping at the first that does not fit (`Eventual`
    /// passes over it).
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

    /// Adds `n` permits and wakes the parked threads they let proceed (as
    /// [`add_permits`](Semaphore::add_permits)), unless the count would exceed
    /// [`MAX_PERMITS`](Semaphore::MAX_PERMITS).
    ///
    /// # Errors
    ///
    /// [`AddPermitsError`] if `available + n > MAX_PERMITS`; nothing was added and nothing
    /// was handed to a parked thread, in every fairness mode. (One race remains: a release
    /// that hands over checks the count before it hands over and again when it adds what
    /// is left; if other adds push the count past `MAX_PERMITS` in between, the permits
    /// already handed over were delivered, and the error names the rest.)
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
        self.release(n, false)
    }

    /// Takes up to `n` of the available permits out of circulation for good, and returns how
    /// many it took (fewer than `n` when fewer are available; it never waits). The flags are
    /// untouched: a closed semaphore stays closed, and parked threads stay parked (fewer
    /// permits never let a waiter proceed).
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    ///
    /// let sem = Semaphore::new(5);
    /// assert_eq!(sem.forget_permits(2), 2);
    /// assert_eq!(sem.forget_permits(9), 3);
    /// assert_eq!(sem.available_permits(), 0);
    /// sem.close();
    /// sem.add_permits(1);
    /// assert_eq!(sem.forget_permits(1), 1);
    /// assert!(sem.is_closed(), "forgetting permits never reopens a semaphore");
    /// ```
    pub fn forget_permits(&self, n: usize) -> usize {
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            let taken = n.min(s >> FLAG_BITS);
            if taken == 0 {
                return 0;
            }
            // Relaxed: the permits go to nobody, so there is no holder to order after their
            // last holder; being a read-modify-write, it keeps every release sequence on the
            // word intact.
            match self.state.compare_exchange_weak(
                s,
                s - taken * ONE,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return taken,
                Err(now) => s = now,
            }
        }
    }

    /// Closes the semaphore: every parked and every future acquire fails with the `Closed`
    /// error ([`AcquireError::Closed`], [`TryAcquireError::Closed`]). Permits still held may
    /// be returned as usual. Closing twice is harmless.
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
            self.unpark_waiters(true);
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
    #[must_use]
    pub fn is_closed(&self) -> bool {
        // Acquire: pairs with `close`'s Release.
        self.state.load(Ordering::Acquire) & CLOSED != 0
    }

    /// The number of permits available now. Under concurrency it may be stale as soon as it
    /// is returned. A release that hands permits over to parked threads (under
    /// [`Fairness::Fifo`], [`Permit::release_fair`], an `Eventual` turn) takes the free
    /// permits it hands out of the count one parked thread at a time: a read during it may
    /// still count free permits it is about to hand to the next.
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// let sem = parksema::Semaphore::new(2);
    /// let _p = sem.acquire().unwrap();
    /// assert_eq!(sem.available_permits(), 1);
    /// ```
    #[must_use]
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
    #[must_use]
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

    /// What this semaphore's contended acquires have cost so far (feature `profile`, real
    /// threads only): see [`Profile`](crate::Profile). Reading it locks one shard of a side
    /// table that contended acquires also write.
    #[cfg(all(feature = "profile", not(any(feature = "loom", feature = "shuttle"))))]
    #[must_use]
    pub fn profile(&self) -> crate::Profile {
        profile::read(self.key())
    }

    /// Starts this semaphore's profile over (feature `profile`): the counts go to zero and
    /// the wait histogram empties.
    #[cfg(all(feature = "profile", not(any(feature = "loom", feature = "shuttle"))))]
    pub fn reset_profile(&self) {
        profile::forget(self.key());
    }
}
