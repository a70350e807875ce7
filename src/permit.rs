//! Permit guards: a permit goes back to its semaphore when its guard is dropped.

use core::fmt;
use std::sync::Arc;

use crate::Semaphore;

/// A permit borrowed from a [`Semaphore`]; dropping it returns the permit, also during
/// unwinding.
///
/// # Panics
///
/// Dropping it panics if the semaphore already holds [`Semaphore::MAX_PERMITS`] (only
/// possible after [`Semaphore::add_permits`] filled it while this permit was out), unless the
/// thread is already unwinding: a second panic would abort the process, so then the permit
/// is dropped and the count stays at its maximum.
///
/// # Examples
///
#[doc = crate::doc_fence!()]
/// let sem = parksema::Semaphore::new(1);
/// {
///     let _permit = sem.acquire().unwrap();
///     assert_eq!(sem.available_permits(), 0);
/// }
/// assert_eq!(sem.available_permits(), 1);
/// ```
#[must_use = "the permit goes back to the semaphore as soon as it is dropped"]
pub struct Permit<'a> {
    sem: &'a Semaphore,
    /// Permits returned on drop: 1, or 0 once forgotten.
    permits: usize,
}

impl<'a> Permit<'a> {
    #[inline]
    pub(crate) fn new(sem: &'a Semaphore) -> Self {
        Permit { sem, permits: 1 }
    }

    /// Consumes the permit without returning it: the semaphore has one permit fewer for
    /// good.
    ///
    #[doc = crate::doc_fence!()]
    /// let sem = parksema::Semaphore::new(2);
    /// sem.acquire().unwrap().forget();
    /// assert_eq!(sem.available_permits(), 1);
    /// ```
    pub fn forget(mut self) {
        self.permits = 0;
    }

    /// The semaphore this permit came from.
    ///
    #[doc = crate::doc_fence!()]
    /// let sem = parksema::Semaphore::new(1);
    /// let permit = sem.acquire().unwrap();
    /// assert!(std::ptr::eq(permit.semaphore(), &sem));
    /// ```
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
            .field("semaphore", self.sem)
            .finish()
    }
}

/// A permit from a [`Semaphore`] in an [`Arc`], from [`Semaphore::acquire_owned`]; it keeps
/// the semaphore alive, can be moved between threads, and returns the permit when dropped.
///
/// # Panics
///
/// As [`Permit`]: dropping it panics if the semaphore already holds
/// [`Semaphore::MAX_PERMITS`], unless the thread is already unwinding.
///
/// # Examples
///
#[doc = crate::doc_fence!()]
/// use parksema::Semaphore;
/// use std::sync::Arc;
///
/// let sem = Arc::new(Semaphore::new(1));
/// let permit = Arc::clone(&sem).acquire_owned().unwrap();
/// assert!(Arc::ptr_eq(permit.semaphore(), &sem));
/// drop(permit);
/// assert_eq!(sem.available_permits(), 1);
/// ```
#[must_use = "the permit goes back to the semaphore as soon as it is dropped"]
pub struct OwnedPermit {
    sem: Arc<Semaphore>,
    /// Permits returned on drop: 1, or 0 once forgotten.
    permits: usize,
}

impl OwnedPermit {
    #[inline]
    pub(crate) fn new(sem: Arc<Semaphore>) -> Self {
        OwnedPermit { sem, permits: 1 }
    }

    /// Consumes the permit without returning it; the reference to the semaphore is
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

    /// The semaphore this permit came from.
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::sync::Arc;
    ///
    /// let sem = Arc::new(Semaphore::new(1));
    /// let permit = Arc::clone(&sem).acquire_owned().unwrap();
    /// assert_eq!(permit.semaphore().available_permits(), 0);
    /// ```
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
            .field("semaphore", &*self.sem)
            .finish()
    }
}
