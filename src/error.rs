//! Error types.

use core::fmt;

use crate::Semaphore;

/// [`Semaphore::acquire`] failed because the semaphore is closed.
///
#[doc = crate::doc_fence!()]
/// let sem = parksema::Semaphore::new(1);
/// sem.close();
/// let err = sem.acquire().unwrap_err();
/// assert_eq!(err.to_string(), "semaphore closed");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AcquireError(());

impl AcquireError {
    pub(crate) const fn new() -> Self {
        AcquireError(())
    }
}

impl fmt::Display for AcquireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("semaphore closed")
    }
}

impl std::error::Error for AcquireError {}

/// [`Semaphore::try_acquire`] took no permit.
///
#[doc = crate::doc_fence!()]
/// use parksema::{Semaphore, TryAcquireError};
///
/// let sem = Semaphore::new(0);
/// assert_eq!(sem.try_acquire().unwrap_err(), TryAcquireError::NoPermits);
/// sem.close();
/// assert_eq!(sem.try_acquire().unwrap_err(), TryAcquireError::Closed);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TryAcquireError {
    /// The semaphore is closed.
    Closed,
    /// No permit is available now.
    NoPermits,
}

impl fmt::Display for TryAcquireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TryAcquireError::Closed => "semaphore closed",
            TryAcquireError::NoPermits => "no permits available",
        })
    }
}

impl std::error::Error for TryAcquireError {}

/// [`Semaphore::try_add_permits`] would have pushed the count past
/// [`Semaphore::MAX_PERMITS`]; nothing was added.
///
#[doc = crate::doc_fence!()]
/// use parksema::Semaphore;
///
/// let sem = Semaphore::new(Semaphore::MAX_PERMITS);
/// let err = sem.try_add_permits(1).unwrap_err();
/// assert_eq!(err.available(), Semaphore::MAX_PERMITS);
/// assert_eq!(err.added(), 1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddPermitsError {
    available: usize,
    added: usize,
}

impl AddPermitsError {
    pub(crate) const fn new(available: usize, added: usize) -> Self {
        AddPermitsError { available, added }
    }

    /// The permits that were available when the addition was refused.
    ///
    #[doc = crate::doc_fence!()]
    /// let sem = parksema::Semaphore::new(7);
    /// assert_eq!(sem.try_add_permits(usize::MAX).unwrap_err().available(), 7);
    /// ```
    pub const fn available(&self) -> usize {
        self.available
    }

    /// The permits the caller tried to add.
    ///
    #[doc = crate::doc_fence!()]
    /// let sem = parksema::Semaphore::new(7);
    /// assert_eq!(sem.try_add_permits(usize::MAX).unwrap_err().added(), usize::MAX);
    /// ```
    pub const fn added(&self) -> usize {
        self.added
    }
}

impl fmt::Display for AddPermitsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot add {} permits to the {} available: the total would exceed \
             Semaphore::MAX_PERMITS ({}); the count is unchanged",
            self.added,
            self.available,
            Semaphore::MAX_PERMITS
        )
    }
}

impl std::error::Error for AddPermitsError {}
