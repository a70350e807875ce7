//! The raw protocol, releasing: the fast path (one add when nobody waits), and the slow path
//! that wakes what fits or, when a handoff is due (`Fifo`, an `Eventual` turn,
//! `release_fair`), hands the permits to parked threads without freeing them.

use super::*;

impl Semaphore {
    /// Returns `n > 0` permits (`fair`: handing them over to the parked requests they
    /// satisfy, whatever the mode). Nobody waiting: one checked CAS, in line; everything else
    /// goes to the out-of-line `release_slow`.
    #[inline]
    pub(super) fn release(&self, n: usize, fair: bool) -> Result<(), AddPermitsError> {
        if self.release_unwaited(n) {
            return Ok(());
        }
        self.release_slow(n, fair)
    }

    /// The fast path of every release: adds `n` permits with one CAS if nobody waits, they
    /// fit the count and the word does not change under it; `false` (nothing done) otherwise.
    /// Its failures go to an out-of-line call with nothing live across it, so a guard's
    /// `drop` compiles to a load, a few tests, a CAS and no stack frame.
    #[inline(always)]
    pub(super) fn release_unwaited(&self, n: usize) -> bool {
        let s = self.state.load(Ordering::Relaxed);
        s & WAITERS == 0 && room(s, n).is_ok() && self.add(s, n).is_ok()
    }

    /// `release` once its fast path has failed: refuses what does not fit, hands over or adds
    /// and wakes while threads wait (`release_waited`), and retries a lost race.
    #[cold]
    #[inline(never)]
    pub(super) fn release_slow(&self, n: usize, fair: bool) -> Result<(), AddPermitsError> {
        note_slow_release(self.key());
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            if s & WAITERS != 0 {
                match self.release_waited(s, n, fair)? {
                    None => return Ok(()),
                    Some(now) => {
                        s = now;
                        continue;
                    }
                }
            }
            room(s, n)?;
            match self.add(s, n) {
                Ok(_) => return Ok(()),
                Err(now) => s = now,
            }
        }
    }

    /// Adds `n` permits to the word if it is still `s` (`Err(now)` if it is not); the caller
    /// has checked that they fit (`room`). A strong CAS: a spurious failure would only take
    /// the slow path, but the unit tests count the slow path's runs and must see none without
    /// a race.
    #[inline]
    pub(super) fn add(&self, s: usize, n: usize) -> Result<usize, usize> {
        // Release: pairs with the Acquire of `take`'s CAS (or of a handing-over release's
        // `hand_to` CAS) in the thread that takes one of these permits, so this thread's
        // writes (a holder's, when a permit is dropped) happen-before that thread's.
        self.state
            .compare_exchange(s, s + n * ONE, self.release_ordering(s), Ordering::Relaxed)
    }

    /// Returns `n > 0` permits on the word `s`, which has `WAITERS` set: refuses them if
    /// they would not fit the count (`room`), whoever would take them; else hands them over
    /// if `fair` or the semaphore's fairness says so, or adds them to the count if the word
    /// is still `s` and wakes the parked requests they let proceed. `Some(now)` if the word
    /// had changed (the caller looks again).
    #[cold]
    #[inline(never)]
    pub(super) fn release_waited(
        &self,
        s: usize,
        n: usize,
        fair: bool,
    ) -> Result<Option<usize>, AddPermitsError> {
        // Checked before a handoff too: a refused add hands nothing over, so the refusal
        // means what it says in every mode (a handoff would otherwise deliver some of an
        // over-full add's permits and refuse only the rest).
        room(s, n)?;
        if fair || s & FIFO != 0 {
            return self.hand_over(n, None).map(|()| None);
        }
        if let Some(now) = self.turn_due() {
            return self.hand_over(n, Some(now)).map(|()| None);
        }
        match self.add(s, n) {
            Ok(_) => {
                self.unpark_waiters(false);
                Ok(None)
            }
            Err(now) => Ok(Some(now)),
        }
    }

    /// Returns `n` permits from a guard's `release_fair`: handed to the parked requests they
    /// satisfy (with the free permits), whatever the semaphore's fairness.
    #[track_caller]
    pub(crate) fn release_fair(&self, n: usize) {
        if n == 0 {
            return;
        }
        // As a guard's drop: a refused release while unwinding leaves the count as it was
        // instead of turning the unwinding into an abort.
        if let Err(e) = self.release(n, true)
            && !std::thread::panicking()
        {
            panic!(
                "release_fair could not return the guard's {n} permit{}: {e}; those it handed \
                 to parked threads are theirs, the {} refused are forgotten",
                plural(n),
                e.added()
            );
        }
    }

    /// Returns `n` permits from a dropped guard: as [`add_permits`](Semaphore::add_permits),
    /// except while this thread is already unwinding, where a second panic would abort the
    /// process; then the refused permits are dropped and the count stays at its maximum.
    #[inline]
    pub(crate) fn release_from_guard(&self, n: usize) {
        if !self.release_unwaited(n) {
            self.release_from_guard_slow(n);
        }
    }

    /// `release_from_guard` once its fast path has failed; out of line with the panic, so a
    /// guard's `drop` in line is only the fast path.
    #[cold]
    #[inline(never)]
    pub(super) fn release_from_guard_slow(&self, n: usize) {
        if let Err(e) = self.try_add_permits(n)
            && !std::thread::panicking()
        {
            panic!(
                "a dropped permit guard could not return its {n} permit{}: {e}; they are \
                 forgotten (the semaphore was filled while they were out)",
                plural(n)
            );
        }
    }

    /// The ordering of a release's CAS, which replaces the word `s`: `Release`, unless this
    /// semaphore runs with a flaw that weakens it.
    #[inline(always)]
    pub(super) fn release_ordering(&self, s: usize) -> Ordering {
        self.flaw.release_ordering(s, Ordering::Release)
    }

    /// Hands `own` permits (a release's, not yet in the word) together with the free ones to
    /// the parked requests they satisfy, in queue order, unparking each with `HANDED`; under
    /// `FIFO` the first request that does not fit stops the walk (the ones behind it wait for
    /// it). What is left of `own` goes into the count, and `WAITERS` goes if nobody is left
    /// parked. `Err` if that count would pass `MAX_PERMITS`: those permits are refused (the
    /// ones handed over were delivered).
    ///
    /// `turn`: this handoff is an `Eventual` fairness turn taken at that clock reading, spent
    /// only if it unparks a thread.
    #[cold]
    pub(super) fn hand_over(&self, own: usize, turn: Option<u64>) -> Result<(), AddPermitsError> {
        // This release's permits not handed over yet, and the permits handed over in all.
        let own = core::cell::Cell::new(own);
        let handed = core::cell::Cell::new(0);
        let mut refused = None;
        let filter = |token: ParkToken| self.hand_to(&own, &handed, token.0);
        let callback = |result: UnparkResult| {
            let back = self.flaw.returned_to_count(own.get(), handed.get());
            refused = self.deposit(back, self.no_waiter_left(&result)).err();
            if result.unparked_threads == 0 {
                return DEFAULT_UNPARK_TOKEN;
            }
            if let Some(now) = turn {
                self.spend_turn(now);
            }
            HANDED
        };
        // SAFETY:
        // - `key` is this semaphore's own address, which only this semaphore parks on;
        // - `filter` and `callback` run under the bucket lock: relaxed loads, compare-exchange
        //   loops on the state word, a load and a store of the timer word (`spend_turn`), and
        //   arithmetic that cannot overflow (`hand_to`, `deposit` check it, `next_timer`
        //   masks), none of which can unwind or call into the park table;
        // - this is not a signal handler.
        unsafe { unpark_filter(self.key(), filter, callback) };
        refused.map_or(Ok(()), Err)
    }

    /// `hand_over`'s filter for a parked request of `want` permits, with `own` of the
    /// release's permits not yet handed over: unpark it (taking from the word what `own` does
    /// not cover) if they satisfy it, else pass over it or stop (`handoff_op`).
    pub(super) fn hand_to(
        &self,
        own: &core::cell::Cell<usize>,
        handed: &core::cell::Cell<usize>,
        want: usize,
    ) -> FilterOp {
        loop {
            // Relaxed: under the bucket lock; the permits it uses are taken with the Acquire
            // CAS below.
            let s = self.state.load(Ordering::Relaxed);
            let op = handoff_op(s, own.get(), want);
            if op != FilterOp::Unpark {
                return op;
            }
            let from_word = want.saturating_sub(own.get());
            // Acquire: pairs with the Release of the add (`add`, `deposit`) that put these
            // permits into the word, so their last holders' writes happen-before this
            // thread's unpark of the waiter, and so before the waiter's return.
            if from_word != 0
                && self
                    .state
                    .compare_exchange_weak(
                        s,
                        s - from_word * ONE,
                        self.permit_ordering(Ordering::Acquire),
                        Ordering::Relaxed,
                    )
                    .is_err()
            {
                continue;
            }
            own.set(own.get() - (want - from_word));
            handed.set(handed.get() + want);
            return op;
        }
    }

    /// Adds `n` permits to the count (refusing them, count untouched, if it would pass
    /// `MAX_PERMITS`) and, with `clear`, clears `WAITERS`: the end of a handing-over release,
    /// under the bucket lock.
    pub(super) fn deposit(&self, n: usize, clear: bool) -> Result<(), AddPermitsError> {
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            let available = s >> FLAG_BITS;
            let refused = n > Self::MAX_PERMITS - available;
            let added = if refused { s } else { s + n * ONE };
            let new = if clear { added & !WAITERS } else { added };
            // Release: pairs with the Acquire of the CAS that takes these permits (`take`, or
            // a later `hand_to`). Clearing `WAITERS` needs no ordering of its own: it happens
            // under the bucket lock, as every `validate` does.
            match self.state.compare_exchange_weak(
                s,
                new,
                self.release_ordering(s),
                Ordering::Relaxed,
            ) {
                Ok(_) if refused => return Err(AddPermitsError::new(available, n)),
                Ok(_) => return Ok(()),
                Err(now) => s = now,
            }
        }
    }

    /// Unparks, in queue order, the parked threads whose requests fit the permits free when
    /// the bucket is locked (or, with `all`, every parked thread); clears `WAITERS` if none
    /// is left parked.
    #[cold]
    pub(super) fn unpark_waiters(&self, all: bool) {
        // The permits not yet promised to a thread this call woke, read under the lock at
        // the first parked thread.
        let mut left = None;
        let filter = |token: ParkToken| {
            if all {
                return FilterOp::Unpark;
            }
            // Relaxed: under the bucket lock; the woken thread takes its permits with its own
            // Acquire CAS.
            let left = left.get_or_insert_with(|| self.state.load(Ordering::Relaxed) >> FLAG_BITS);
            self.wake_if_fits(left, token.0)
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
        // - `filter` and `callback` run under the bucket lock: a relaxed load, counter
        //   arithmetic that cannot overflow (`wake_if_fits`), and one atomic RMW, none of which
        //   can unwind or call into the park table;
        // - this is not a signal handler.
        unsafe { unpark_filter(self.key(), filter, callback) };
    }

    /// The unpark filter's decision for a parked request of `want` permits when `left`
    /// permits are not yet promised to a thread woken by this call: wake it if it fits (and
    /// promise it those permits), else pass over it to the smaller requests behind it; stop
    /// once nothing is left (every parked request is for at least one permit).
    pub(super) fn wake_if_fits(&self, left: &mut usize, want: usize) -> FilterOp {
        if *left == 0 {
            return FilterOp::Stop;
        }
        if want <= *left {
            *left -= want;
            return FilterOp::Unpark;
        }
        self.flaw.not_fitting(FilterOp::Skip)
    }

    /// Whether an unpark left no thread parked on this semaphore, so `WAITERS` must go.
    pub(super) fn no_waiter_left(&self, result: &UnparkResult) -> bool {
        self.flaw.clears_waiters(result, !result.have_more_threads)
    }
}

/// The plural ending for `n` permits.
fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
