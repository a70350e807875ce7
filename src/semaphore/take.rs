//! The raw protocol, acquiring: the fast path (one compare-exchange on the state word), the
//! guarded loop `Fifo` takes, and the slow path (spin, announce `WAITERS`, park, and what a
//! woken or timed-out thread owes the others). The public acquire family (`acquire.rs`) is
//! wrappers over `acquire_n`, `acquire_timed` and `try_acquire_n`.

use super::*;

impl Semaphore {
    /// The park-table key: this semaphore's address.
    pub(crate) fn key(&self) -> usize {
        core::ptr::from_ref(self).addr()
    }

    /// Takes `n` permits or reports why not, parking as long as needed.
    ///
    /// The fast path is `try_acquire`'s: the permits are taken with no spinning and no
    /// park-table call whenever they are free. Sharing it leaves no separate fast-path test
    /// whose every mutation only costs time.
    #[inline]
    pub(super) fn acquire_n(&self, n: usize) -> Result<(), AcquireError> {
        match self.try_acquire_n(n) {
            Ok(()) => Ok(()),
            // Without a deadline the slow path fails only when the semaphore is closed.
            Err(TryAcquireError::NoPermits) => {
                self.acquire_slow(n, None).map_err(|_| AcquireError::Closed)
            }
            Err(e) => Err(blocking_error(e)),
        }
    }

    /// Takes `n` permits, waiting until the deadline that `deadline` computes (`None`: no
    /// deadline). The clock is read only once the fast path has failed.
    #[inline]
    pub(super) fn acquire_timed(
        &self,
        n: usize,
        deadline: impl FnOnce() -> Option<Instant>,
    ) -> Result<(), TryAcquireError> {
        match self.try_acquire_n(n) {
            Err(TryAcquireError::NoPermits) => self.acquire_slow(n, deadline()),
            other => other,
        }
    }

    /// Takes `n` permits if they are available now.
    #[inline]
    pub(super) fn try_acquire_n(&self, n: usize) -> Result<(), TryAcquireError> {
        self.try_acquire_loop::<false>(n)
    }

    /// `try_acquire_n` on a word that has `CLOSED` or `FIFO` set: the same checks, in the
    /// same order, with closed first and, under `FIFO`, no permit taken while threads are
    /// parked. Out of line, so the modes without `FIFO` pay nothing for it.
    #[cold]
    #[inline(never)]
    pub(super) fn try_acquire_guarded(&self, n: usize) -> Result<(), TryAcquireError> {
        note_guarded(self.key());
        self.try_acquire_loop::<true>(n)
    }

    /// The loop of `try_acquire_n`. Unguarded, one test sends a word with `CLOSED` or `FIFO`
    /// set to the guarded loop, which checks both.
    #[inline(always)]
    pub(super) fn try_acquire_loop<const GUARDED: bool>(
        &self,
        n: usize,
    ) -> Result<(), TryAcquireError> {
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            if !GUARDED && s & (CLOSED | FIFO) != 0 {
                return self.try_acquire_guarded(n);
            }
            // Only the guarded loop sees `CLOSED` or `FIFO`.
            if GUARDED && s & CLOSED != 0 {
                // Acquire: pairs with `close`'s Release.
                fence(Ordering::Acquire);
                return Err(TryAcquireError::Closed);
            }
            if n > Self::MAX_PERMITS {
                return Err(TryAcquireError::TooLarge { requested: n });
            }
            if n == 0 {
                return Ok(());
            }
            // Under `FIFO` a request that fits still waits for the parked ones.
            let free = if GUARDED { may_take(s, n) } else { fits(s, n) };
            if !free {
                return Err(TryAcquireError::NoPermits);
            }
            match self.take(s, n) {
                Ok(_) => return Ok(()),
                Err(now) => s = now,
            }
        }
    }

    /// Takes `n` permits (`0 < n <= permits in s`) if the state word is still `s`.
    #[inline]
    pub(super) fn take(&self, s: usize, n: usize) -> Result<usize, usize> {
        if let Some(lost_update) = self.flaw.take(&self.state, s, n) {
            return lost_update;
        }
        // Acquire: pairs with the Release of the `try_add_permits` CAS that put the permits
        // into the word, so the previous holders' writes happen-before this holder's.
        self.state.compare_exchange_weak(
            s,
            s - n * ONE,
            self.permit_ordering(Ordering::Acquire),
            Ordering::Relaxed,
        )
    }

    /// The ordering of a CAS that moves a permit: `correct`, unless this semaphore runs with
    /// the `RelaxedOrdering` flaw.
    #[inline(always)]
    pub(super) fn permit_ordering(&self, correct: Ordering) -> Ordering {
        self.flaw.permit_ordering(correct)
    }

    /// The slow path of every waiting acquire of `n` permits (`0 < n <= MAX_PERMITS`): take
    /// them if they are free (barging), give up once `deadline` has passed, spin while nobody
    /// waits, set `WAITERS`, park, and start over when woken. Fails with `Closed` or (only
    /// with a deadline) `TimedOut`.
    #[cold]
    pub(super) fn acquire_slow(
        &self,
        n: usize,
        deadline: Option<Instant>,
    ) -> Result<(), TryAcquireError> {
        let mut rec = profile::Acquire::start();
        let result = self.acquire_contended(n, deadline, &mut rec);
        rec.finish(
            self.key(),
            match result {
                Ok(()) => profile::Outcome::Acquired,
                Err(TryAcquireError::Closed) => profile::Outcome::Closed,
                Err(_) => profile::Outcome::TimedOut,
            },
        );
        result
    }

    /// `acquire_slow`'s loop, telling `rec` (the contention profile's hooks) what it does.
    #[inline(always)]
    pub(super) fn acquire_contended(
        &self,
        n: usize,
        deadline: Option<Instant>,
        rec: &mut profile::Acquire,
    ) -> Result<(), TryAcquireError> {
        let mut spin = SpinWait::new();
        // Set when an unpark chose this thread, until it has taken its permits or passed the
        // wake-up on.
        let mut woken = false;
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            if s & CLOSED != 0 {
                // Acquire: pairs with `close`'s Release (also for a thread `close` woke).
                fence(Ordering::Acquire);
                return Err(TryAcquireError::Closed);
            }

            // The permits are free: take them, even if others are parked (unless the
            // semaphore is `FIFO`), and even if the deadline has passed (a zero timeout still
            // takes what is free now).
            if may_take(s, n) {
                match self.take(s, n) {
                    Ok(_) => return Ok(()),
                    Err(now) => s = now,
                }
                continue;
            }

            if woken {
                // An unpark chose this thread for permits it does not find: a barger took
                // them, or they were forgotten. Smaller requests behind it may fit what is
                // left, and the release that woke this thread counted on it to take them:
                // pass the wake-up on before parking again or giving up.
                woken = false;
                rec.woken();
                self.pass_on(s);
            }

            if deadline.is_some_and(|d| d <= now()) {
                return Err(TryAcquireError::TimedOut);
            }

            if s & WAITERS == 0 {
                // Nobody is parked (and the permits do not fit): they may come back soon, so
                // spin a little first.
                if spin.spin() {
                    rec.spun();
                    s = self.state.load(Ordering::Relaxed);
                    continue;
                }
                // Announce that a thread is about to park, so releases take the slow path.
                // Under `FIFO` the parking thread's `validate` sets it instead, under the
                // lock that queues the thread: an announcer not yet queued would otherwise
                // send a request that fits, arriving after it, to sleep ahead of it.
                if self.announces_before_park(s)
                    && let Err(now) = self.state.compare_exchange_weak(
                        s,
                        s | WAITERS,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    )
                {
                    s = now;
                    continue;
                }
            }

            rec.parked();
            match self.park(n, deadline) {
                ParkResult::Unparked(token) => {
                    if self.flaw.gives_up_when_woken(deadline) {
                        return Err(TryAcquireError::TimedOut);
                    }
                    // Handed over: the permits are this thread's, also if its deadline has
                    // passed or the semaphore closed since (the handoff came first). The
                    // releaser's writes, and those of every thread whose permits it took
                    // from the word (its Acquire CAS), happen-before this return: the park
                    // table's wake carries the edge from the releaser.
                    if token == HANDED {
                        rec.handed();
                        return Ok(());
                    }
                    woken = true;
                }
                // The deadline passed while this thread was still queued: no unpark chose
                // it, so it owes nobody a wake-up, and `timed_out` has cleared `WAITERS` if
                // it was the last waiter. Under `FIFO` it may have been the head that held
                // up the requests behind it: they may fit the free permits now.
                ParkResult::TimedOut => {
                    self.after_timeout();
                    return Err(TryAcquireError::TimedOut);
                }
                ParkResult::Invalid => {}
            }
            spin.reset();
            s = self.state.load(Ordering::Relaxed);
        }
    }

    /// Whether an acquirer about to park on the word `s` announces itself with `WAITERS`
    /// before it takes the bucket lock: always without `FIFO`; under `FIFO` never (its
    /// `validate` sets the bit, see `fifo_park_word`).
    pub(super) fn announces_before_park(&self, s: usize) -> bool {
        self.flaw.announces_before_park(s & FIFO == 0)
    }

    /// `park`'s `validate` for a request of `n` permits, under the bucket lock: whether this
    /// thread may be queued on the word as it is now (`may_park`; under `FIFO`
    /// `fifo_park_word`, whose `WAITERS` this sets).
    pub(super) fn may_queue(&self, n: usize) -> bool {
        // Relaxed: under the bucket lock, which every clear of `WAITERS` also holds; the
        // permits are taken (after an `Invalid`) with `take`'s own Acquire CAS.
        let mut s = self.state.load(Ordering::Relaxed);
        if s & FIFO == 0 {
            return may_park(s, n);
        }
        loop {
            let Some(queued) = fifo_park_word(s, n) else {
                return false;
            };
            if queued == s {
                return true;
            }
            // Relaxed: the bit orders nothing by itself; a release that adds permits outside
            // the lock either lands first (and this sees them) or sees the bit and takes the
            // lock, which queues this thread before the release looks at the queue.
            match self
                .state
                .compare_exchange_weak(s, queued, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
    }

    /// After a `FIFO` waiter timed out: if threads are still parked and permits are free,
    /// hand them to the requests now at the head that they satisfy.
    pub(super) fn after_timeout(&self) {
        let s = self.state.load(Ordering::Relaxed);
        if s & FIFO != 0 && s & WAITERS != 0 && s >= ONE {
            // Hands over nothing of its own, so nothing can be refused.
            let _ = self.hand_over(0, None);
        }
    }

    /// Hands on the wake-up of a thread that was woken for permits it did not take, when the
    /// word `s` shows permits free and threads parked.
    pub(super) fn pass_on(&self, s: usize) {
        if s & WAITERS != 0 && s >= ONE {
            self.unpark_waiters(false);
        }
    }

    /// Parks this thread, which requests `n` permits, until a release or `close` unparks it
    /// or `deadline` passes, unless, when the bucket is locked, the word no longer says it
    /// may park.
    pub(super) fn park(&self, n: usize, deadline: Option<Instant>) -> ParkResult {
        // Runs under the bucket lock, which every clear of WAITERS also holds, so a clear
        // either happened before (and this sees it) or happens after this thread is queued
        // (and the clearing unpark finds it).
        let stale = self.flaw.stale_read(&self.state);
        let validate = || match &stale {
            Some(stale) => stale.may_queue(&self.state, n),
            None => self.may_queue(n),
        };
        let timed_out = |_, was_last| self.leave_queue(was_last);
        // SAFETY:
        // - `key` is this semaphore's own address, which only this semaphore parks on;
        // - `validate` and `timed_out` run under the bucket lock: relaxed loads, comparisons
        //   and a compare-exchange loop (`may_queue`), and at most one atomic RMW
        //   (`leave_queue`), none of which can unwind or call into the park table;
        // - `before_sleep` does nothing;
        // - this is not a signal handler.
        unsafe {
            park(
                self.key(),
                validate,
                || {},
                timed_out,
                ParkToken(n),
                deadline,
            )
        }
    }

    /// `park`'s `timed_out` callback: this thread's deadline passed and it left the queue,
    /// the last thread parked on this semaphore if `was_last`; only then does `WAITERS` go
    /// (another waiter still needs the releases to take the slow path).
    pub(super) fn leave_queue(&self, was_last: bool) {
        if was_last {
            // Relaxed: this runs under the bucket lock, as every `validate` does.
            self.state.fetch_and(!WAITERS, Ordering::Relaxed);
        }
    }
}

/// The error of a blocking acquire for the fast path's failure `e` (never `NoPermits`, which
/// sends it to the slow path).
pub(super) fn blocking_error(e: TryAcquireError) -> AcquireError {
    match e {
        TryAcquireError::TooLarge { requested } => AcquireError::TooLarge { requested },
        _ => AcquireError::Closed,
    }
}
