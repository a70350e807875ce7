//! [`Condvar`]: waiting for a condition under a [`Mutex`](crate::Mutex), on the park table.

#[cfg(any(feature = "loom", feature = "shuttle"))]
use parkcheck as parking_lot_core;

use std::fmt;
use std::ptr;
use std::time::{Duration, Instant};

use parkcheck::sync::atomic::{AtomicPtr, Ordering};
use parking_lot_core::{
    DEFAULT_PARK_TOKEN, DEFAULT_UNPARK_TOKEN, ParkResult, RequeueOp, UnparkResult,
};

#[cfg(feature = "broken_condvar")]
use crate::Flaw;
use crate::mutex::MutexGuard;
use crate::raw_mutex::RawMutex;

/// A condition variable: threads wait on it, holding the guard of a [`Mutex`](crate::Mutex),
/// until another thread notifies them.
///
/// [`wait`](Condvar::wait) releases the mutex and parks the thread as one step with respect
/// to notifiers (a notifier that takes the mutex after the waiter entered `wait` finds it
/// parked), and takes the mutex again before it returns. It never returns spuriously (the
/// park table has no spurious wake-ups), but a waiter should still test its condition in a
/// loop: another thread may have changed it between the notification and the moment the
/// waiter got the mutex back.
///
/// [`notify_all`](Condvar::notify_all) does not wake every waiter to fight for the mutex: it
/// wakes at most one (none if the mutex is held) and moves the others onto the mutex's own
/// queue in the park table, from where each unlock wakes the next.
///
/// One condition variable serves one mutex at a time: waiting on it with the guard of a
/// second mutex while threads still wait with the first panics.
///
#[cfg_attr(not(any(feature = "loom", feature = "shuttle")), doc = "```")]
#[cfg_attr(any(feature = "loom", feature = "shuttle"), doc = "```ignore")]
/// use parksema_condvar::{Condvar, Mutex};
/// use std::sync::Arc;
/// use std::thread;
///
/// let pair = Arc::new((Mutex::new(false), Condvar::new()));
/// let other = Arc::clone(&pair);
/// let setter = thread::spawn(move || {
///     let (ready, cv) = &*other;
///     *ready.lock() = true;
///     cv.notify_one();
/// });
/// let (ready, cv) = &*pair;
/// let mut guard = ready.lock();
/// while !*guard {
///     cv.wait(&mut guard);
/// }
/// drop(guard);
/// setter.join().unwrap();
/// ```
pub struct Condvar {
    /// The lock of the mutex the waiters use, or null when no thread waits:
    ///
    /// | state    | meaning                                                          |
    /// |----------|------------------------------------------------------------------|
    /// | null     | nobody parked on this condition variable's key: notify is a load  |
    /// | `mutex`  | threads parked on the key, all waiting with that mutex           |
    ///
    /// Invariant (under the bucket lock of the condition variable's key): the state is
    /// non-null exactly when some thread is parked on the key. Every write is made under
    /// that lock: a waiter's `validate` binds it (null to its mutex) as it queues; it is
    /// cleared by the notify that unparks or requeues the last thread with the key, or by
    /// the `timed_out` of the last such thread when it times out *on this key* (a wait
    /// requeued onto the mutex that times out there is not on this key any more, and the
    /// state, cleared by the `notify_all` that moved it, may belong to newer waiters).
    state: AtomicPtr<RawMutex>,
    #[cfg(feature = "broken_condvar")]
    flaw: Option<Flaw>,
}

/// Whether a timed wait ([`Condvar::wait_for`], [`Condvar::wait_until`]) returned because its
/// deadline passed.
///
/// A wait that a notification reached (woken, or moved onto the mutex's queue by
/// [`Condvar::notify_all`]) is not timed out, even if its deadline passed while it then
/// waited for the mutex: the notifier counted it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WaitTimeoutResult(bool);

impl WaitTimeoutResult {
    /// `true` if the wait ended because its deadline passed, with no notification.
    ///
    #[cfg_attr(not(any(feature = "loom", feature = "shuttle")), doc = "```")]
    #[cfg_attr(any(feature = "loom", feature = "shuttle"), doc = "```ignore")]
    /// use parksema_condvar::{Condvar, Mutex};
    /// use std::time::Duration;
    ///
    /// let (m, cv) = (Mutex::new(()), Condvar::new());
    /// let mut guard = m.lock();
    /// assert!(cv.wait_for(&mut guard, Duration::from_millis(1)).timed_out());
    /// ```
    pub fn timed_out(self) -> bool {
        self.0
    }
}

impl Condvar {
    parkcheck::const_fn! {
        /// A condition variable nobody waits on (`const` in the real build, so it can be a
        /// `static`).
        ///
        #[cfg_attr(not(any(feature = "loom", feature = "shuttle")), doc = "```")]
        #[cfg_attr(any(feature = "loom", feature = "shuttle"), doc = "```ignore")]
        /// use parksema_condvar::Condvar;
        ///
        /// static CHANGED: Condvar = Condvar::new();
        /// assert!(!CHANGED.notify_one());
        /// ```
        pub fn new() -> Condvar {
            Condvar {
                state: AtomicPtr::new(ptr::null_mut()),
                #[cfg(feature = "broken_condvar")]
                flaw: None,
            }
        }
    }

    /// A condition variable with the deliberate flaw `flaw` (feature `broken_condvar`). For
    /// the verification suite only.
    #[cfg(feature = "broken_condvar")]
    #[doc(hidden)]
    pub fn with_flaw(flaw: Option<Flaw>) -> Condvar {
        Condvar {
            state: AtomicPtr::new(ptr::null_mut()),
            flaw,
        }
    }

    /// Whether this condition variable carries the deliberate flaw `flaw`.
    #[cfg(feature = "broken_condvar")]
    fn flawed(&self, flaw: Flaw) -> bool {
        self.flaw == Some(flaw)
    }

    /// The park-table key of this condition variable: its address. For the verification
    /// suite's model checks (`parkcheck::parked`, `parkcheck::stats`).
    #[doc(hidden)]
    pub fn __park_key(&self) -> usize {
        ptr::from_ref(self).addr()
    }

    /// Whether the state names a mutex (threads wait, or the state is stale). A snapshot; for
    /// the verification suite's end-of-scenario checks.
    #[doc(hidden)]
    pub fn __in_use(&self) -> bool {
        !self.state.load(Ordering::Relaxed).is_null()
    }

    /// Releases the guard's mutex, parks until notified, and takes the mutex again before
    /// returning.
    ///
    /// # Panics
    ///
    /// If other threads are waiting on this condition variable with a different mutex (the
    /// guard is still held then).
    ///
    #[cfg_attr(not(any(feature = "loom", feature = "shuttle")), doc = "```")]
    #[cfg_attr(any(feature = "loom", feature = "shuttle"), doc = "```ignore")]
    /// use parksema_condvar::{Condvar, Mutex};
    /// use std::sync::Arc;
    /// use std::thread;
    ///
    /// // A one-slot mailbox.
    /// let mailbox = Arc::new((Mutex::new(None), Condvar::new()));
    /// let sender = Arc::clone(&mailbox);
    /// thread::spawn(move || {
    ///     let (slot, cv) = &*sender;
    ///     *slot.lock() = Some("hello");
    ///     cv.notify_one();
    /// });
    /// let (slot, cv) = &*mailbox;
    /// let mut guard = slot.lock();
    /// let letter = loop {
    ///     if let Some(letter) = guard.take() {
    ///         break letter;
    ///     }
    ///     cv.wait(&mut guard);
    /// };
    /// assert_eq!(letter, "hello");
    /// ```
    pub fn wait<T>(&self, guard: &mut MutexGuard<'_, T>) {
        self.wait_until_internal(&guard.mutex.raw, None);
    }

    /// As [`wait`](Condvar::wait), giving up once `timeout` has passed. A timeout too large
    /// to add to the current time waits without a deadline.
    ///
    /// Under the model checkers the deadline is taken from `parkcheck::now()` (the mocked
    /// clock that `parkcheck::advance_clock` moves).
    ///
    /// # Panics
    ///
    /// As [`wait`](Condvar::wait).
    ///
    #[cfg_attr(not(any(feature = "loom", feature = "shuttle")), doc = "```")]
    #[cfg_attr(any(feature = "loom", feature = "shuttle"), doc = "```ignore")]
    /// use parksema_condvar::{Condvar, Mutex};
    /// use std::time::Duration;
    ///
    /// let (done, cv) = (Mutex::new(false), Condvar::new());
    /// let mut guard = done.lock();
    /// // Nobody will notify: the wait times out and the guard is held again.
    /// let result = cv.wait_for(&mut guard, Duration::from_millis(10));
    /// assert!(result.timed_out());
    /// assert!(!*guard);
    /// ```
    pub fn wait_for<T>(
        &self,
        guard: &mut MutexGuard<'_, T>,
        timeout: Duration,
    ) -> WaitTimeoutResult {
        let deadline = parkcheck::now().checked_add(timeout);
        WaitTimeoutResult(self.wait_until_internal(&guard.mutex.raw, deadline))
    }

    /// As [`wait`](Condvar::wait), giving up once `deadline` has passed.
    ///
    /// Under the model checkers `deadline` must be computed from `parkcheck::now()` (the
    /// mocked clock); one computed from `Instant::now()` is compared with a clock that does
    /// not move by itself.
    ///
    /// # Panics
    ///
    /// As [`wait`](Condvar::wait).
    ///
    #[cfg_attr(not(any(feature = "loom", feature = "shuttle")), doc = "```")]
    #[cfg_attr(any(feature = "loom", feature = "shuttle"), doc = "```ignore")]
    /// use parksema_condvar::{Condvar, Mutex};
    /// use std::time::{Duration, Instant};
    ///
    /// let (m, cv) = (Mutex::new(0), Condvar::new());
    /// let deadline = Instant::now() + Duration::from_millis(10);
    /// let mut guard = m.lock();
    /// while *guard == 0 {
    ///     if cv.wait_until(&mut guard, deadline).timed_out() {
    ///         break;
    ///     }
    /// }
    /// assert!(Instant::now() >= deadline);
    /// ```
    pub fn wait_until<T>(
        &self,
        guard: &mut MutexGuard<'_, T>,
        deadline: Instant,
    ) -> WaitTimeoutResult {
        WaitTimeoutResult(self.wait_until_internal(&guard.mutex.raw, Some(deadline)))
    }

    /// Wakes one thread waiting on this condition variable, if any, and says whether there
    /// was one. The woken thread then takes the mutex again (it competes for it like any
    /// other thread).
    ///
    /// A notifier that changed the waiters' condition while holding the mutex is sure to
    /// reach every thread that tested the condition before that (it entered `wait` before
    /// the notifier took the mutex). Notifying while holding the mutex or after releasing it
    /// are both correct.
    ///
    #[cfg_attr(not(any(feature = "loom", feature = "shuttle")), doc = "```")]
    #[cfg_attr(any(feature = "loom", feature = "shuttle"), doc = "```ignore")]
    /// use parksema_condvar::Condvar;
    ///
    /// // Nobody waits: nothing to wake.
    /// assert!(!Condvar::new().notify_one());
    /// ```
    #[inline]
    pub fn notify_one(&self) -> bool {
        // Relaxed: a notifier that changed the condition under the mutex is ordered after
        // every waiter that tested it before: such a waiter bound this state in `validate`
        // while it still held the mutex, and released the mutex (Release) only in
        // `before_sleep`, which this notifier's lock (Acquire) followed. So a null read here
        // means no such waiter exists. (A notifier that changes the condition without the
        // mutex gets no such promise, with any condition variable.)
        if self.state.load(Ordering::Relaxed).is_null() {
            return false;
        }
        self.notify_one_slow()
    }

    #[cold]
    fn notify_one_slow(&self) -> bool {
        // Under the bucket lock of this key.
        let callback = |result: UnparkResult| {
            // The last thread with this key is gone (or there was none): nobody waits now.
            // Relaxed: every write of the state is made under this bucket lock, which orders
            // them.
            if !result.have_more_threads {
                self.state.store(ptr::null_mut(), Ordering::Relaxed);
            }
            DEFAULT_UNPARK_TOKEN
        };
        // SAFETY:
        // - the key is this condition variable's own address, on which only its waiters
        //   park;
        // - `callback` runs under the bucket lock: it stores to the state and returns a
        //   constant token, so it neither unwinds nor calls into the park table.
        let result = unsafe { parking_lot_core::unpark_one(self.__park_key(), callback) };
        result.unparked_threads != 0
    }

    /// Wakes every thread waiting on this condition variable and returns how many there were.
    ///
    /// They are not all woken at once: if the mutex is held, all of them are moved onto the
    /// mutex's queue (none wakes now); if it is free, the first is woken and the others are
    /// moved there. Each unlock of the mutex then wakes the next, so they take the mutex one
    /// after another instead of all waking to fight for it.
    ///
    #[cfg_attr(not(any(feature = "loom", feature = "shuttle")), doc = "```")]
    #[cfg_attr(any(feature = "loom", feature = "shuttle"), doc = "```ignore")]
    /// use parksema_condvar::{Condvar, Mutex};
    /// use std::sync::Arc;
    /// use std::thread;
    ///
    /// let gate = Arc::new((Mutex::new((false, 0)), Condvar::new()));
    /// let waiters: Vec<_> = (0..3)
    ///     .map(|_| {
    ///         let gate = Arc::clone(&gate);
    ///         thread::spawn(move || {
    ///             let (state, cv) = &*gate;
    ///             let mut guard = state.lock();
    ///             guard.1 += 1;
    ///             while !guard.0 {
    ///                 cv.wait(&mut guard);
    ///             }
    ///         })
    ///     })
    ///     .collect();
    /// let (state, cv) = &*gate;
    /// // Open the gate once all three are waiting (each counts itself, then waits).
    /// loop {
    ///     let mut guard = state.lock();
    ///     if guard.1 == 3 {
    ///         guard.0 = true;
    ///         assert_eq!(cv.notify_all(), 3);
    ///         break;
    ///     }
    ///     drop(guard);
    ///     thread::yield_now();
    /// }
    /// for w in waiters {
    ///     w.join().unwrap();
    /// }
    /// ```
    #[inline]
    pub fn notify_all(&self) -> usize {
        // Relaxed: as in `notify_one`.
        let mutex = self.state.load(Ordering::Relaxed);
        if mutex.is_null() {
            return 0;
        }
        self.notify_all_slow(mutex)
    }

    #[cold]
    fn notify_all_slow(&self, mutex: *mut RawMutex) -> usize {
        #[cfg(feature = "broken_condvar")]
        let mark = !self.flawed(Flaw::RequeueWithoutParkedBit);
        #[cfg(not(feature = "broken_condvar"))]
        let mark = true;

        // Under the bucket locks of both keys (the condition variable's and the mutex's).
        let validate = || {
            // Relaxed: every write of the state is made under this key's bucket lock.
            // A different state (null, or another mutex) means every thread that waited with
            // `mutex` has been woken or moved since the load above: nothing to do.
            if self.state.load(Ordering::Relaxed) != mutex {
                return RequeueOp::Abort;
            }
            // Every thread with this key is unparked or moved below: nobody waits after this.
            self.state.store(ptr::null_mut(), Ordering::Relaxed);
            // SAFETY: the state was `mutex` under this key's bucket lock, so a thread is
            // parked on the key (the state's invariant) inside `wait` with a guard of that
            // mutex: the mutex is borrowed, and so alive, until that thread returns, which
            // it cannot do before this call releases the bucket locks.
            let lock = unsafe { &*mutex };
            // If the mutex is held, move everyone onto it and wake nobody: the holder's
            // unlock wakes the first. `PARKED` must be set before the holder can look, and it
            // is: the holder's unlock finds the bit and takes the mutex's bucket lock, which
            // this thread holds until the threads are on the mutex's queue.
            let held = if mark {
                lock.mark_parked_if_locked()
            } else {
                lock.is_locked()
            };
            if held {
                RequeueOp::RequeueAll
            } else {
                // Free (it may be taken by the time the woken one tries; then that one
                // parks on it as any locker does).
                RequeueOp::UnparkOneRequeueRest
            }
        };
        // Under the same bucket locks, after the threads were moved.
        let callback = |op: RequeueOp, result: UnparkResult| {
            // Threads now wait on the mutex's key: mark it, so that the unlock of whoever
            // holds it next wakes them (`RequeueAll` marked it in `validate` already).
            if mark && op == RequeueOp::UnparkOneRequeueRest && result.requeued_threads != 0 {
                // SAFETY: as in `validate`: the requeued threads are still parked inside
                // `wait` with guards of this mutex, and cannot return before the bucket locks
                // are released.
                unsafe { &*mutex }.mark_parked();
            }
            DEFAULT_UNPARK_TOKEN
        };
        // SAFETY:
        // - `key_from` is this condition variable's own address and `key_to` the mutex's
        //   lock, whose protocol expects waiters to be requeued onto it (they are woken by its
        //   unlock as its own lockers are, and retry `lock`);
        // - `validate` and `callback` run under both bucket locks: they only load and store
        //   atomics (no allocation, no panic) and never call into the park table.
        let result = unsafe {
            parking_lot_core::unpark_requeue(self.__park_key(), mutex.addr(), validate, callback)
        };
        result.unparked_threads + result.requeued_threads
    }

    /// The wait itself; returns `true` if it timed out (with no notification).
    fn wait_until_internal(&self, mutex: &RawMutex, deadline: Option<Instant>) -> bool {
        let key = self.__park_key();
        let bound = ptr::from_ref(mutex).cast_mut();
        let mut requeued = false;

        #[cfg(feature = "broken_condvar")]
        let unlock_early = self.flawed(Flaw::UnlockBeforePark);
        #[cfg(not(feature = "broken_condvar"))]
        let unlock_early = false;
        #[cfg(feature = "broken_condvar")]
        let ignore_key = self.flawed(Flaw::TimeoutIgnoresRequeue);
        #[cfg(not(feature = "broken_condvar"))]
        let ignore_key = false;

        if unlock_early {
            // SAFETY: the caller's guard holds the lock; the flaw releases it here instead of
            // in `before_sleep` (and takes it again below before the guard is used).
            unsafe { mutex.unlock() };
            #[cfg(feature = "broken_condvar")]
            crate::flaw::unlock_before_park_gap();
        }

        // Under the bucket lock of this key.
        let validate = || {
            // Relaxed: every write of the state is made under this bucket lock.
            let state = self.state.load(Ordering::Relaxed);
            if state.is_null() {
                // The first waiter binds the condition variable to its mutex.
                self.state.store(bound, Ordering::Relaxed);
                true
            } else {
                // Waiters with another mutex are parked: refuse (the caller panics).
                state == bound
            }
        };
        // After this thread is queued and the bucket lock released: only now can the mutex
        // go, so a notifier that takes it finds this thread parked.
        let before_sleep = || {
            if !unlock_early {
                // SAFETY: the caller's guard holds the lock, and `wait` borrows it mutably
                // until the lock is taken again below, so nobody else releases it.
                unsafe { mutex.unlock() };
            }
        };
        // Under the bucket lock of `key_now`, the key this thread was parked on when its
        // deadline passed: this condition variable's, or the mutex's after a `notify_all`
        // moved it there.
        let timed_out = |key_now: usize, was_last: bool| {
            // Moved onto the mutex: `notify_all` reached this thread (and counted it); it
            // just did not get the mutex before its deadline. Not a timeout, and the state is
            // not this thread's to touch any more (that `notify_all` cleared it; it may name
            // the mutex of newer waiters).
            requeued = key_now != key && !ignore_key;
            if !requeued && was_last {
                // Relaxed: under this key's bucket lock, as every write of the state.
                self.state.store(ptr::null_mut(), Ordering::Relaxed);
            }
        };
        // SAFETY:
        // - the key is this condition variable's own address, on which only its waiters
        //   park;
        // - `validate` and `timed_out` run under the bucket lock: they load and store the
        //   state and a local flag, so they neither unwind nor call into the park table;
        // - `before_sleep` runs outside the bucket lock and may call `unpark_one`, which the
        //   mutex's unlock does when threads are parked on it; it never parks and does not
        //   unwind (the unlock only stores atomics and unparks).
        let result = unsafe {
            parking_lot_core::park(
                key,
                validate,
                before_sleep,
                timed_out,
                DEFAULT_PARK_TOKEN,
                deadline,
            )
        };

        if result == ParkResult::Invalid {
            if unlock_early {
                mutex.lock();
            }
            // The guard is still held: the caller's unwinding releases it.
            panic!(
                "parksema_condvar::Condvar: waited on with a second mutex while threads still \
                 wait on it with another; a Condvar serves one mutex at a time"
            );
        }

        // No handoff: a woken or moved thread takes the mutex as any locker does.
        mutex.lock();
        !(result.is_unparked() || requeued)
    }
}

impl Default for Condvar {
    fn default() -> Self {
        Condvar::new()
    }
}

impl fmt::Debug for Condvar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Condvar")
            .field("in_use", &self.__in_use())
            .finish()
    }
}
