//! The word lock under [`Mutex`](crate::Mutex): one byte of state, threads parked in
//! `parking_lot_core`'s table on the lock's address.

#[cfg(any(feature = "loom", feature = "shuttle"))]
use parkcheck as parking_lot_core;

use parkcheck::sync::atomic::{AtomicU8, Ordering};
use parking_lot_core::{
    DEFAULT_PARK_TOKEN, DEFAULT_UNPARK_TOKEN, ParkResult, SpinWait, UnparkResult,
};

#[cfg(feature = "broken_condvar")]
use crate::Flaw;

/// The lock is held.
const LOCKED: u8 = 0b01;
/// Some thread is parked on the lock's key, or is about to park there.
const PARKED: u8 = 0b10;

/// A mutual-exclusion lock without data: the protocol of [`Mutex`](crate::Mutex).
///
/// No handoff: a thread woken by `unlock` is not given the lock, it competes for it again
/// with every other thread (a thread that finds the lock free takes it, parked threads or
/// not). `parking_lot_core` 0.10 has no eventual-fairness timer, and this lock adds none.
pub(crate) struct RawMutex {
    /// The state word:
    ///
    /// | state             | meaning                                                      |
    /// |-------------------|--------------------------------------------------------------|
    /// | `0`               | free, nobody parked                                          |
    /// | `LOCKED`          | held, nobody parked: unlock is one CAS                       |
    /// | `LOCKED \| PARKED` | held, threads parked (or about to): unlock wakes one        |
    /// | `PARKED`          | free, threads parked: a woken thread or a barger takes it    |
    ///
    /// Invariants (under the bucket lock of the lock's key):
    /// - a thread is parked on the key only while `PARKED` is set. A locker sets it (CAS)
    ///   before it parks, and its `validate` re-checks `LOCKED | PARKED` under the bucket
    ///   lock; `Condvar::notify_all` sets it under the bucket lock before the requeued
    ///   threads can be seen there;
    /// - `PARKED` is cleared only under the bucket lock, in unlock's callback when no thread
    ///   with this key remains. It may be set with nobody parked (a requeued waiter that
    ///   timed out on this key leaves it); that costs one slow unlock, never a lost wakeup.
    state: AtomicU8,
    #[cfg(feature = "broken_condvar")]
    flaw: Option<Flaw>,
}

impl RawMutex {
    parkcheck::const_fn! {
        /// An unlocked lock (`const` in the real build).
        pub(crate) fn new() -> RawMutex {
            RawMutex {
                state: AtomicU8::new(0),
                #[cfg(feature = "broken_condvar")]
                flaw: None,
            }
        }
    }

    /// An unlocked lock with the deliberate flaw `flaw`.
    #[cfg(feature = "broken_condvar")]
    pub(crate) fn with_flaw(flaw: Option<Flaw>) -> RawMutex {
        RawMutex {
            state: AtomicU8::new(0),
            flaw,
        }
    }

    /// The park-table key of this lock: its address.
    pub(crate) fn key(&self) -> usize {
        std::ptr::from_ref(self).addr()
    }

    /// Whether this lock carries the deliberate flaw `flaw`.
    #[cfg(feature = "broken_condvar")]
    fn flawed(&self, flaw: Flaw) -> bool {
        self.flaw == Some(flaw)
    }

    /// Takes the lock, parking until it is free.
    #[inline]
    pub(crate) fn lock(&self) {
        // Acquire: pairs with the Release of the unlock that freed the lock last (the fast
        // path's CAS, or the store in `unlock_slow`'s callback), so every write of the
        // previous holder happens-before this holder's reads.
        if self
            .state
            .compare_exchange_weak(0, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_slow();
        }
    }

    /// Takes the lock if it is free now, without parking.
    #[inline]
    pub(crate) fn try_lock(&self) -> bool {
        let mut state = self.state.load(Ordering::Relaxed);
        loop {
            if state & LOCKED != 0 {
                return false;
            }
            // Acquire: pairs with the Release of the unlock that freed the lock, as in `lock`.
            match self.state.compare_exchange_weak(
                state,
                state | LOCKED,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => state = now,
            }
        }
    }

    /// Whether the lock is held now (a snapshot, for `Debug`).
    pub(crate) fn is_locked(&self) -> bool {
        self.state.load(Ordering::Relaxed) & LOCKED != 0
    }

    #[cold]
    fn lock_slow(&self) {
        let mut spin = SpinWait::new();
        let mut state = self.state.load(Ordering::Relaxed);
        loop {
            // Free: take it, whether threads are parked or not (no handoff).
            if state & LOCKED == 0 {
                // Acquire: pairs with the Release of the unlock that freed it, as in `lock`.
                match self.state.compare_exchange_weak(
                    state,
                    state | LOCKED,
                    Ordering::Acquire,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return,
                    Err(now) => state = now,
                }
                continue;
            }

            // Held and nobody parked: the holder may let go soon, spin a little first.
            if state & PARKED == 0 && spin.spin() {
                state = self.state.load(Ordering::Relaxed);
                continue;
            }

            // Announce this thread before parking, so the holder's unlock takes the slow
            // path. Relaxed: the bit carries no data; what it orders (the unlocker finding
            // this thread queued) is ordered by the bucket lock, which `validate` below and
            // the unlocker's `unpark_one` both take.
            if state & PARKED == 0
                && let Err(now) = self.state.compare_exchange_weak(
                    state,
                    state | PARKED,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                )
            {
                state = now;
                continue;
            }

            let key = self.key();
            // Under the bucket lock: park only if the lock is still held and marked, so an
            // unlock that cleared the bit (and so will not look for this thread) cannot be
            // missed. Relaxed: the bucket lock orders this read after any unlock callback.
            let validate = || self.state.load(Ordering::Relaxed) == LOCKED | PARKED;
            let before_sleep = || {};
            // No deadline is given, so this never runs.
            let timed_out = |_, _| {};
            // SAFETY:
            // - `key` is this lock's own address, which only this lock parks or unparks on
            //   (a condition variable requeues its waiters onto it, as the lock's protocol
            //   intends), so no other primitive's threads are disturbed;
            // - `validate` and `timed_out` run under the bucket lock: they only read the
            //   state word (an atomic load cannot unwind) and never call into the park table;
            // - `before_sleep` does nothing, so it neither parks nor unwinds.
            let result = unsafe {
                parking_lot_core::park(
                    key,
                    validate,
                    before_sleep,
                    timed_out,
                    DEFAULT_PARK_TOKEN,
                    None,
                )
            };
            debug_assert_ne!(result, ParkResult::TimedOut, "a park without a deadline");

            // Woken, or `validate` said no: compete again from the start (no handoff).
            spin.reset();
            state = self.state.load(Ordering::Relaxed);
        }
    }

    /// Releases the lock, waking one parked thread if any.
    ///
    /// # Safety
    ///
    /// The lock must be held by the caller's context (a guard, or a waiting condition
    /// variable that holds it for a guard).
    #[inline]
    pub(crate) unsafe fn unlock(&self) {
        // Release: pairs with the Acquire CAS of the next locker (`lock`, `try_lock`,
        // `lock_slow`), so this holder's writes happen-before the next holder's reads.
        let release = Ordering::Release;
        #[cfg(feature = "broken_condvar")]
        let release = if self.flawed(Flaw::RelaxedUnlock) {
            Ordering::Relaxed
        } else {
            release
        };
        if self
            .state
            .compare_exchange(LOCKED, 0, release, Ordering::Relaxed)
            .is_ok()
        {
            return;
        }
        self.unlock_slow();
    }

    #[cold]
    fn unlock_slow(&self) {
        // Under the bucket lock. The state is `LOCKED | PARKED` here and nothing else can
        // change it: only the holder (this thread) clears `LOCKED` or `PARKED`, a locker's
        // CAS needs `LOCKED` clear, and `PARKED` is already set.
        let callback = |result: UnparkResult| {
            let next = if result.have_more_threads { PARKED } else { 0 };
            // Release: pairs with the Acquire CAS of the next holder (the woken thread or a
            // barger), as the fast path's CAS does.
            self.state.store(next, Ordering::Release);
            DEFAULT_UNPARK_TOKEN
        };
        // SAFETY:
        // - the key is this lock's own address (see `lock_slow`);
        // - `callback` runs under the bucket lock: it stores to the state word and returns a
        //   constant token, so it neither unwinds nor calls into the park table.
        unsafe { parking_lot_core::unpark_one(self.key(), callback) };
    }

    /// Sets `PARKED` if the lock is held, and says whether it did. Called by
    /// `Condvar::notify_all`'s `validate`, under the bucket locks of the condition variable's
    /// and this lock's keys, before it requeues waiters onto this lock.
    ///
    /// Setting it under this lock's bucket lock is what makes the requeue safe: a holder
    /// whose unlock finds the bit set must take this same bucket lock (`unpark_one`) and so
    /// finds the requeued threads; a holder that unlocked before the bit was set makes the
    /// CAS fail, and the retry sees the lock free.
    pub(crate) fn mark_parked_if_locked(&self) -> bool {
        let mut state = self.state.load(Ordering::Relaxed);
        loop {
            if state & LOCKED == 0 {
                return false;
            }
            // Relaxed: the bit carries no data, and a read-modify-write always reads the
            // latest state, so it cannot be lost against a concurrent unlock.
            match self.state.compare_exchange_weak(
                state,
                state | PARKED,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => state = now,
            }
        }
    }

    /// Sets `PARKED` whatever the lock's state. Called by `Condvar::notify_all`'s callback,
    /// under the bucket locks, when it woke one waiter and requeued the rest onto this lock.
    pub(crate) fn mark_parked(&self) {
        // Relaxed: as in `mark_parked_if_locked`.
        self.state.fetch_or(PARKED, Ordering::Relaxed);
    }
}
