//! Permit guards: the permits go back to their semaphore when the guard is dropped.

use core::fmt;
use std::sync::Arc;

use crate::Semaphore;

/// Panics for a `merge` (`call`: `Permit::merge` or `OwnedPermit::merge`) of permits from
/// two different semaphores, naming both.
#[cold]
#[track_caller]
fn different_semaphores(call: &str, mine: &Semaphore, theirs: &Semaphore) -> ! {
    panic!(
        "{call}: the permits come from different semaphores ({:p}: {mine:?}; {:p}: \
         {theirs:?}); merge only permits of one semaphore (both guards are left as they \
         were: the merged-in one is dropped, which returns its permits to its own semaphore)",
        mine, theirs
    )
}

/// The permits of a `merge` of `mine` and `theirs`, or a panic naming the numbers if the sum
/// could never go back to a semaphore (more than [`Semaphore::MAX_PERMITS`]; with
/// `MAX_PERMITS = usize::MAX >> 3` that bound is also what keeps the sum from wrapping).
#[track_caller]
fn merged(call: &str, mine: usize, theirs: usize) -> usize {
    match mine.checked_add(theirs) {
        Some(sum) if sum <= Semaphore::MAX_PERMITS => sum,
        _ => panic!(
            "{call}: {mine} + {theirs} permits exceed Semaphore::MAX_PERMITS ({}), \
             so the merged permit could never be returned; both permits are left as they \
             were (the merged-in one is dropped, which returns its permits)",
            Semaphore::MAX_PERMITS
        ),
    }
}

/// Permits borrowed from a [`Semaphore`]; dropping the guard returns them, also during
/// unwinding.
///
/// # Panics
///
/// Dropping it panics if the permits would push the semaphore's count past
/// [`Semaphore::MAX_PERMITS`] (only possible after [`Semaphore::add_permits`] filled it while
/// these were out), unless the thread is already unwinding: a second panic would abort the
/// process, so then the permits are dropped and the count stays at its maximum.
///
/// # Examples
///
#[doc = crate::doc_fence!()]
/// let sem = parksema::Semaphore::new(3);
/// {
///     let mut permit = sem.acquire_many(3).unwrap();
///     let one = permit.split(1).unwrap();
///     assert_eq!((permit.num_permits(), one.num_permits()), (2, 1));
///     drop(one);
///     assert_eq!(sem.available_permits(), 1);
/// }
/// assert_eq!(sem.available_permits(), 3);
/// ```
#[must_use = "the permits go back to the semaphore as soon as the guard is dropped"]
pub struct Permit<'a> {
    sem: &'a Semaphore,
    /// Permits returned on drop: what was acquired, changed by `split` and `merge`, 0 once
    /// forgotten.
    permits: usize,
}

impl<'a> Permit<'a> {
    #[inline]
    pub(crate) fn new(sem: &'a Semaphore, permits: usize) -> Self {
        Permit { sem, permits }
    }

    /// Consumes the guard without returning its permits: the semaphore has that many
    /// permits fewer for good.
    ///
    #[doc = crate::doc_fence!()]
    /// let sem = parksema::Semaphore::new(3);
    /// sem.acquire_many(2).unwrap().forget();
    /// assert_eq!(sem.available_permits(), 1);
    /// ```
    pub fn forget(mut self) {
        self.permits = 0;
    }

    /// The number of permits this guard holds (and returns on drop).
    ///
    #[doc = crate::doc_fence!()]
    /// let sem = parksema::Semaphore::new(5);
    /// assert_eq!(sem.acquire_many(4).unwrap().num_permits(), 4);
    /// assert_eq!(sem.acquire().unwrap().num_permits(), 1);
    /// ```
    #[must_use]
    pub fn num_permits(&self) -> usize {
        self.permits
    }

    /// Moves `n` of this guard's permits into a new guard of the same semaphore, or returns
    /// `None` (and changes nothing) if this guard holds fewer than `n`.
    ///
    #[doc = crate::doc_fence!()]
    /// let sem = parksema::Semaphore::new(3);
    /// let mut permit = sem.acquire_many(3).unwrap();
    /// assert!(permit.split(4).is_none());
    /// let two = permit.split(2).unwrap();
    /// assert_eq!((permit.num_permits(), two.num_permits()), (1, 2));
    /// drop(two);
    /// assert_eq!(sem.available_permits(), 2);
    /// ```
    ///
    /// Dropping the split-off guard at once releases its permits, which is never what a
    /// bare `permit.split(2);` means, so the result must be used:
    ///
    #[doc = crate::doc_fence!(compile_fail)]
    /// #![deny(unused_must_use)]
    /// let sem = parksema::Semaphore::new(3);
    /// let mut permit = sem.acquire_many(3).unwrap();
    /// permit.split(2);
    /// ```
    #[must_use = "the split-off permits go back to the semaphore at once if dropped"]
    pub fn split(&mut self, n: usize) -> Option<Permit<'a>> {
        let left = self.permits.checked_sub(n)?;
        self.permits = left;
        Some(Permit::new(self.sem, n))
    }

    /// Moves `other`'s permits into this guard.
    ///
    /// # Panics
    ///
    /// If `other` comes from a different semaphore (the message names both), or if the sum
    /// would exceed [`Semaphore::MAX_PERMITS`] (it could never be returned); this guard is
    /// then unchanged, and `other`, dropped as the panic unwinds, returns its own permits.
    ///
    #[doc = crate::doc_fence!()]
    /// let sem = parksema::Semaphore::new(3);
    /// let mut permit = sem.acquire().unwrap();
    /// permit.merge(sem.acquire_many(2).unwrap());
    /// assert_eq!(permit.num_permits(), 3);
    /// drop(permit);
    /// assert_eq!(sem.available_permits(), 3);
    /// ```
    #[track_caller]
    pub fn merge(&mut self, mut other: Permit<'a>) {
        if !core::ptr::eq(self.sem, other.sem) {
            different_semaphores("Permit::merge", self.sem, other.sem);
        }
        self.permits = merged("Permit::merge", self.permits, other.permits);
        other.permits = 0;
    }

    /// Returns the permits, handing them to the threads parked when it runs that they
    /// satisfy (in queue order, together with permits already free) instead of adding them to
    /// the count, whatever the semaphore's [`Fairness`](crate::Fairness): no running thread
    /// can take them first. A thread that an earlier release woke and that has not parked
    /// again is not parked: outside `Fifo` (where every wake-up is a handoff) it competes for
    /// these permits as after any release, and may lose them to a barger or to
    /// [`close`](Semaphore::close). With nobody parked it is a plain release.
    ///
    /// # Panics
    ///
    /// As dropping the guard: if the permits would push the count past
    /// [`Semaphore::MAX_PERMITS`].
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::{Semaphore, TryAcquireError};
    /// use std::thread;
    ///
    /// let sem = Semaphore::new(1);
    /// let held = sem.acquire().unwrap();
    /// thread::scope(|s| {
    ///     // The waiter holds its permit until the join.
    ///     let waiter = s.spawn(|| sem.acquire().unwrap());
    ///     while sem.parked_threads() == 0 {
    ///         thread::yield_now();
    ///     }
    ///     held.release_fair();
    ///     // The permit went to the parked thread, not into the count.
    ///     assert_eq!(sem.try_acquire().unwrap_err(), TryAcquireError::NoPermits);
    ///     assert_eq!(waiter.join().unwrap().num_permits(), 1);
    /// });
    /// assert_eq!(sem.available_permits(), 1);
    /// ```
    #[track_caller]
    pub fn release_fair(mut self) {
        self.sem.release_fair(core::mem::take(&mut self.permits));
    }

    /// The semaphore these permits came from.
    ///
    #[doc = crate::doc_fence!()]
    /// let sem = parksema::Semaphore::new(1);
    /// let permit = sem.acquire().unwrap();
    /// assert!(std::ptr::eq(permit.semaphore(), &sem));
    /// ```
    #[must_use]
    pub fn semaphore(&self) -> &'a Semaphore {
        self.sem
    }
}

impl Drop for Permit<'_> {
    #[inline]
    fn drop(&mut self) {
        self.sem.release_from_guard(self.permits);
    }
}

impl fmt::Debug for Permit<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permit")
            .field("permits", &self.permits)
            .field("semaphore", self.sem)
            .finish()
    }
}

/// Permits from a [`Semaphore`] in an [`Arc`], from [`Semaphore::acquire_owned`] and the
/// other `_owned` calls; the guard keeps the semaphore alive, can be moved between threads
/// (it is `Send + Sync + 'static`), and returns its permits when dropped.
///
/// # Panics
///
/// As [`Permit`]: dropping it panics if the permits would push the count past
/// [`Semaphore::MAX_PERMITS`], unless the thread is already unwinding.
///
/// # Examples
///
#[doc = crate::doc_fence!()]
/// use parksema::Semaphore;
/// use std::sync::Arc;
///
/// let sem = Arc::new(Semaphore::new(2));
/// let mut permit = Arc::clone(&sem).acquire_many_owned(2).unwrap();
/// let one = permit.split(1).unwrap();
/// std::thread::spawn(move || drop(one)).join().unwrap();
/// assert!(Arc::ptr_eq(permit.semaphore(), &sem));
/// drop(permit);
/// assert_eq!(sem.available_permits(), 2);
/// ```
#[must_use = "the permits go back to the semaphore as soon as the guard is dropped"]
pub struct OwnedPermit {
    sem: Arc<Semaphore>,
    /// Permits returned on drop: what was acquired, changed by `split` and `merge`, 0 once
    /// forgotten.
    permits: usize,
}

impl OwnedPermit {
    #[inline]
    pub(crate) fn new(sem: Arc<Semaphore>, permits: usize) -> Self {
        OwnedPermit { sem, permits }
    }

    /// Consumes the guard without returning its permits; the reference to the semaphore is
    /// released.
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::sync::Arc;
    ///
    /// let sem = Arc::new(Semaphore::new(1));
    /// Arc::clone(&sem).acquire_owned().unwrap().forget();
    /// assert_eq!(sem.available_permits(), 0);
    /// assert_eq!(Arc::strong_count(&sem), 1);
    /// ```
    pub fn forget(mut self) {
        self.permits = 0;
    }

    /// The number of permits this guard holds (and returns on drop).
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::sync::Arc;
    ///
    /// let sem = Arc::new(Semaphore::new(3));
    /// assert_eq!(sem.acquire_many_owned(3).unwrap().num_permits(), 3);
    /// ```
    #[must_use]
    pub fn num_permits(&self) -> usize {
        self.permits
    }

    /// Moves `n` of this guard's permits into a new guard of the same semaphore, or returns
    /// `None` (and changes nothing) if this guard holds fewer than `n`.
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::sync::Arc;
    ///
    /// let sem = Arc::new(Semaphore::new(2));
    /// let mut permit = Arc::clone(&sem).acquire_many_owned(2).unwrap();
    /// assert!(permit.split(3).is_none());
    /// let one = permit.split(1).unwrap();
    /// assert_eq!((permit.num_permits(), one.num_permits()), (1, 1));
    /// ```
    #[must_use = "the split-off permits go back to the semaphore at once if dropped"]
    pub fn split(&mut self, n: usize) -> Option<OwnedPermit> {
        let left = self.permits.checked_sub(n)?;
        self.permits = left;
        Some(OwnedPermit::new(Arc::clone(&self.sem), n))
    }

    /// Moves `other`'s permits into this guard.
    ///
    /// # Panics
    ///
    /// As [`Permit::merge`]: if `other` comes from a different semaphore, or the sum would
    /// exceed [`Semaphore::MAX_PERMITS`]; this guard is then unchanged and `other` returns its
    /// own permits as it is dropped.
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::sync::Arc;
    ///
    /// let sem = Arc::new(Semaphore::new(2));
    /// let mut permit = Arc::clone(&sem).acquire_owned().unwrap();
    /// permit.merge(Arc::clone(&sem).acquire_owned().unwrap());
    /// assert_eq!(permit.num_permits(), 2);
    /// ```
    #[track_caller]
    pub fn merge(&mut self, mut other: OwnedPermit) {
        if !Arc::ptr_eq(&self.sem, &other.sem) {
            different_semaphores("OwnedPermit::merge", &self.sem, &other.sem);
        }
        self.permits = merged("OwnedPermit::merge", self.permits, other.permits);
        other.permits = 0;
    }

    /// Returns the permits, handing them to the parked threads they satisfy; as
    /// [`Permit::release_fair`].
    ///
    /// # Panics
    ///
    /// As dropping the guard.
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::sync::Arc;
    ///
    /// let sem = Arc::new(Semaphore::new(1));
    /// Arc::clone(&sem).acquire_owned().unwrap().release_fair();
    /// assert_eq!(sem.available_permits(), 1);
    /// ```
    #[track_caller]
    pub fn release_fair(mut self) {
        self.sem.release_fair(core::mem::take(&mut self.permits));
    }

    /// The semaphore these permits came from.
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::sync::Arc;
    ///
    /// let sem = Arc::new(Semaphore::new(1));
    /// let permit = Arc::clone(&sem).acquire_owned().unwrap();
    /// assert_eq!(permit.semaphore().available_permits(), 0);
    /// ```
    #[must_use]
    pub fn semaphore(&self) -> &Arc<Semaphore> {
        &self.sem
    }
}

impl Drop for OwnedPermit {
    #[inline]
    fn drop(&mut self) {
        self.sem.release_from_guard(self.permits);
    }
}

impl fmt::Debug for OwnedPermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedPermit")
            .field("permits", &self.permits)
            .field("semaphore", &*self.sem)
            .finish()
    }
}
