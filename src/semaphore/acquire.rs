//! The public acquire family: blocking, `try_`, timed (`_for`, `_until`) and owned forms,
//! for one permit or `n`. Each is a wrapper over the raw protocol of `take.rs` that builds
//! the guard.

use super::*;

impl Semaphore {
    /// Takes a permit, parking the thread until one is available.
    ///
    /// Returns [`AcquireError::Closed`] once the semaphore is closed, also for a thread that
    /// was already parked when [`close`](Semaphore::close) was called. A closed semaphore
    /// never hands out a permit, even if it has some.
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
        self.acquire_n(1)?;
        Ok(Permit::new(self, 1))
    }

    /// Takes `n` permits at once, parking the thread until `n` are available.
    ///
    /// The permits are taken together or not at all: a thread never holds part of its
    /// request while it waits, so two threads waiting for more than half of the permits each
    /// cannot deadlock each other. Who goes first while it waits is the semaphore's
    /// [`Fairness`]. Under `Eventual` and `Barging` smaller requests that fit may go ahead of
    /// it: a large request can wait behind a stream of small ones, but a parked thread is
    /// never left asleep while its request fits the free permits and no other thread is
    /// running (a large request parked first does not hold up a small one behind it). Under
    /// `Fifo` requests are served in arrival order: a large request waits only for those
    /// ahead of it, and holds up the ones behind it until it is served.
    ///
    /// # Errors
    ///
    /// [`AcquireError::Closed`] if the semaphore is closed (checked first, so `n == 0` fails
    /// too) or closes while the thread waits; [`AcquireError::TooLarge`] at once if
    /// `n > Semaphore::MAX_PERMITS`, a request that could never be met. On an open semaphore
    /// `n == 0` succeeds at once.
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::{sync::Arc, thread};
    ///
    /// let sem = Arc::new(Semaphore::new(1));
    /// let waiter = {
    ///     let sem = Arc::clone(&sem);
    ///     thread::spawn(move || sem.acquire_many(3).unwrap().num_permits())
    /// };
    /// sem.add_permits(2);
    /// assert_eq!(waiter.join().unwrap(), 3);
    /// assert_eq!(sem.available_permits(), 3);
    /// ```
    #[inline]
    pub fn acquire_many(&self, n: usize) -> Result<Permit<'_>, AcquireError> {
        self.acquire_n(n)?;
        Ok(Permit::new(self, n))
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
        self.try_acquire_n(1)?;
        Ok(Permit::new(self, 1))
    }

    /// Takes `n` permits if that many are available now; never blocks.
    ///
    /// # Errors
    ///
    /// [`TryAcquireError::Closed`] if the semaphore is closed (checked first, also for
    /// `n == 0`), [`TryAcquireError::TooLarge`] if `n > Semaphore::MAX_PERMITS`,
    /// [`TryAcquireError::NoPermits`] if fewer than `n` are available.
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::{Semaphore, TryAcquireError};
    ///
    /// let sem = Semaphore::new(3);
    /// let two = sem.try_acquire_many(2).unwrap();
    /// assert_eq!(sem.try_acquire_many(2).unwrap_err(), TryAcquireError::NoPermits);
    /// assert_eq!(sem.try_acquire_many(0).unwrap().num_permits(), 0);
    /// drop(two);
    /// assert_eq!(sem.available_permits(), 3);
    /// ```
    #[inline]
    pub fn try_acquire_many(&self, n: usize) -> Result<Permit<'_>, TryAcquireError> {
        self.try_acquire_n(n)?;
        Ok(Permit::new(self, n))
    }

    /// Takes a permit, waiting at most `timeout` for one.
    ///
    /// A permit that is free at the call is taken without parking, even if `timeout` is zero
    /// (as `parking_lot`'s `try_lock_for`, Java's `tryAcquire(0, unit)` and C++'s
    /// `try_acquire_for` do). A `timeout` too large to add to the current time (such as
    /// [`Duration::MAX`]) waits without a deadline. A call that times out takes no permit.
    ///
    /// # Errors
    ///
    /// [`TryAcquireError::Closed`] if the semaphore is closed or closes while the thread
    /// waits, [`TryAcquireError::TimedOut`] if no permit came before the deadline.
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::{Semaphore, TryAcquireError};
    /// use std::time::Duration;
    ///
    /// let sem = Semaphore::new(1);
    /// let held = sem.try_acquire_for(Duration::ZERO).unwrap();
    /// let err = sem.try_acquire_for(Duration::from_millis(5)).unwrap_err();
    /// assert_eq!(err, TryAcquireError::TimedOut);
    /// drop(held);
    /// assert_eq!(sem.available_permits(), 1);
    /// ```
    #[inline]
    pub fn try_acquire_for(&self, timeout: Duration) -> Result<Permit<'_>, TryAcquireError> {
        self.try_acquire_many_for(1, timeout)
    }

    /// Takes a permit, waiting until `deadline` at most. A deadline already past still takes
    /// a permit that is free now, without parking. Otherwise as
    /// [`try_acquire_for`](Semaphore::try_acquire_for).
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::{Semaphore, TryAcquireError};
    /// use std::time::{Duration, Instant};
    ///
    /// let sem = Semaphore::new(1);
    /// let past = Instant::now();
    /// let held = sem.try_acquire_until(past).unwrap();
    /// let soon = Instant::now() + Duration::from_millis(5);
    /// assert_eq!(sem.try_acquire_until(soon).unwrap_err(), TryAcquireError::TimedOut);
    /// drop(held);
    /// ```
    #[inline]
    pub fn try_acquire_until(&self, deadline: Instant) -> Result<Permit<'_>, TryAcquireError> {
        self.try_acquire_many_until(1, deadline)
    }

    /// Takes `n` permits at once, waiting at most `timeout` for them; as
    /// [`try_acquire_for`](Semaphore::try_acquire_for) for the timeout and
    /// [`acquire_many`](Semaphore::acquire_many) for the request.
    ///
    /// # Errors
    ///
    /// [`TryAcquireError::Closed`] (checked first), [`TryAcquireError::TooLarge`] at once if
    /// `n > Semaphore::MAX_PERMITS`, [`TryAcquireError::TimedOut`] if fewer than `n`
    /// permits were free at the deadline. A timed-out call takes none of them.
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::{Semaphore, TryAcquireError};
    /// use std::time::Duration;
    ///
    /// let sem = Semaphore::new(2);
    /// let err = sem.try_acquire_many_for(3, Duration::from_millis(5)).unwrap_err();
    /// assert_eq!(err, TryAcquireError::TimedOut);
    /// assert_eq!(sem.available_permits(), 2, "a timed-out call takes nothing");
    /// assert_eq!(sem.try_acquire_many_for(2, Duration::ZERO).unwrap().num_permits(), 2);
    /// ```
    #[inline]
    pub fn try_acquire_many_for(
        &self,
        n: usize,
        timeout: Duration,
    ) -> Result<Permit<'_>, TryAcquireError> {
        self.acquire_timed(n, || now().checked_add(timeout))?;
        Ok(Permit::new(self, n))
    }

    /// Takes `n` permits at once, waiting until `deadline` at most; as
    /// [`try_acquire_many_for`](Semaphore::try_acquire_many_for).
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::time::{Duration, Instant};
    ///
    /// let sem = Semaphore::new(2);
    /// let deadline = Instant::now() + Duration::from_secs(1);
    /// assert_eq!(sem.try_acquire_many_until(2, deadline).unwrap().num_permits(), 2);
    /// ```
    #[inline]
    pub fn try_acquire_many_until(
        &self,
        n: usize,
        deadline: Instant,
    ) -> Result<Permit<'_>, TryAcquireError> {
        self.acquire_timed(n, || Some(deadline))?;
        Ok(Permit::new(self, n))
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
        self.acquire_n(1)?;
        Ok(OwnedPermit::new(self, 1))
    }

    /// Like [`acquire_many`](Semaphore::acquire_many), for a semaphore in an [`Arc`].
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::sync::Arc;
    ///
    /// let sem = Arc::new(Semaphore::new(3));
    /// let permit = Arc::clone(&sem).acquire_many_owned(3).unwrap();
    /// assert_eq!((permit.num_permits(), sem.available_permits()), (3, 0));
    /// ```
    #[inline]
    pub fn acquire_many_owned(self: Arc<Self>, n: usize) -> Result<OwnedPermit, AcquireError> {
        self.acquire_n(n)?;
        Ok(OwnedPermit::new(self, n))
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
        self.try_acquire_n(1)?;
        Ok(OwnedPermit::new(self, 1))
    }

    /// Like [`try_acquire_many`](Semaphore::try_acquire_many), for a semaphore in an [`Arc`].
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::sync::Arc;
    ///
    /// let sem = Arc::new(Semaphore::new(2));
    /// assert!(Arc::clone(&sem).try_acquire_many_owned(3).is_err());
    /// assert_eq!(sem.try_acquire_many_owned(2).unwrap().num_permits(), 2);
    /// ```
    #[inline]
    pub fn try_acquire_many_owned(
        self: Arc<Self>,
        n: usize,
    ) -> Result<OwnedPermit, TryAcquireError> {
        self.try_acquire_n(n)?;
        Ok(OwnedPermit::new(self, n))
    }

    /// Like [`try_acquire_for`](Semaphore::try_acquire_for), for a semaphore in an [`Arc`].
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::{sync::Arc, time::Duration};
    ///
    /// let sem = Arc::new(Semaphore::new(1));
    /// let permit = Arc::clone(&sem).try_acquire_for_owned(Duration::ZERO).unwrap();
    /// assert!(Arc::clone(&sem).try_acquire_for_owned(Duration::ZERO).is_err());
    /// drop(permit);
    /// ```
    #[inline]
    pub fn try_acquire_for_owned(
        self: Arc<Self>,
        timeout: Duration,
    ) -> Result<OwnedPermit, TryAcquireError> {
        self.try_acquire_many_for_owned(1, timeout)
    }

    /// Like [`try_acquire_until`](Semaphore::try_acquire_until), for a semaphore in an
    /// [`Arc`].
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::{sync::Arc, time::Instant};
    ///
    /// let sem = Arc::new(Semaphore::new(1));
    /// assert!(sem.try_acquire_until_owned(Instant::now()).is_ok());
    /// ```
    #[inline]
    pub fn try_acquire_until_owned(
        self: Arc<Self>,
        deadline: Instant,
    ) -> Result<OwnedPermit, TryAcquireError> {
        self.try_acquire_many_until_owned(1, deadline)
    }

    /// Like [`try_acquire_many_for`](Semaphore::try_acquire_many_for), for a semaphore in an
    /// [`Arc`].
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::{sync::Arc, time::Duration};
    ///
    /// let sem = Arc::new(Semaphore::new(2));
    /// let permit = Arc::clone(&sem).try_acquire_many_for_owned(2, Duration::MAX).unwrap();
    /// assert_eq!(permit.num_permits(), 2);
    /// ```
    #[inline]
    pub fn try_acquire_many_for_owned(
        self: Arc<Self>,
        n: usize,
        timeout: Duration,
    ) -> Result<OwnedPermit, TryAcquireError> {
        self.acquire_timed(n, || now().checked_add(timeout))?;
        Ok(OwnedPermit::new(self, n))
    }

    /// Like [`try_acquire_many_until`](Semaphore::try_acquire_many_until), for a semaphore in
    /// an [`Arc`].
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::{Semaphore, TryAcquireError};
    /// use std::{sync::Arc, time::Instant};
    ///
    /// let sem = Arc::new(Semaphore::new(1));
    /// let err = sem.try_acquire_many_until_owned(2, Instant::now()).unwrap_err();
    /// assert_eq!(err, TryAcquireError::TimedOut);
    /// ```
    #[inline]
    pub fn try_acquire_many_until_owned(
        self: Arc<Self>,
        n: usize,
        deadline: Instant,
    ) -> Result<OwnedPermit, TryAcquireError> {
        self.acquire_timed(n, || Some(deadline))?;
        Ok(OwnedPermit::new(self, n))
    }
}
