//! Error types.

use core::fmt;

use crate::Semaphore;

/// A blocking acquire ([`Semaphore::acquire`], [`Semaphore::acquire_many`] and their owned
/// forms) took no permit.
///
#[doc = crate::doc_fence!()]
/// use parksema::{AcquireError, Semaphore};
///
/// let sem = Semaphore::new(1);
/// let err = sem.acquire_many(Semaphore::MAX_PERMITS + 1).unwrap_err();
/// assert_eq!(err, AcquireError::TooLarge { requested: Semaphore::MAX_PERMITS + 1 });
/// sem.close();
/// let err = sem.acquire().unwrap_err();
/// assert_eq!(err, AcquireError::Closed);
/// assert_eq!(err.to_string(), "semaphore closed");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AcquireError {
    /// The semaphore is closed: it was closed before the call, or while the thread waited.
    /// Checked before anything else, so a request of zero permits fails too.
    Closed,
    /// More permits were requested than [`Semaphore::MAX_PERMITS`], so many that the request
    /// could never succeed; the call returned at once instead of waiting forever.
    TooLarge {
        /// The number of permits requested.
        requested: usize,
    },
}

impl fmt::Display for AcquireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            AcquireError::Closed => f.write_str("semaphore closed"),
            AcquireError::TooLarge { requested } => too_large(f, requested),
        }
    }
}

impl std::error::Error for AcquireError {}

/// A non-blocking or timed acquire ([`Semaphore::try_acquire`],
/// [`Semaphore::try_acquire_many`], [`Semaphore::try_acquire_for`] and the rest of that family)
/// took no permit.
///
#[doc = crate::doc_fence!()]
/// use parksema::{Semaphore, TryAcquireError};
/// use std::time::Duration;
///
/// let sem = Semaphore::new(0);
/// assert_eq!(sem.try_acquire().unwrap_err(), TryAcquireError::NoPermits);
/// let err = sem.try_acquire_for(Duration::from_millis(1)).unwrap_err();
/// assert_eq!(err, TryAcquireError::TimedOut);
/// sem.close();
/// assert_eq!(sem.try_acquire().unwrap_err(), TryAcquireError::Closed);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TryAcquireError {
    /// The semaphore is closed (checked first, so a request of zero permits fails too).
    Closed,
    /// Not enough permits are available now (from the calls that do not wait).
    NoPermits,
    /// Not enough permits became available before the deadline (from the timed calls; also
    /// for a zero duration or a deadline already past when too few permits are free).
    TimedOut,
    /// More permits were requested than [`Semaphore::MAX_PERMITS`]: the request could never
    /// succeed.
    TooLarge {
        /// The number of permits requested.
        requested: usize,
    },
}

impl fmt::Display for TryAcquireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TryAcquireError::Closed => f.write_str("semaphore closed"),
            TryAcquireError::NoPermits => f.write_str("no permits available"),
            TryAcquireError::TimedOut => f.write_str("timed out waiting for permits"),
            TryAcquireError::TooLarge { requested } => too_large(f, requested),
        }
    }
}

impl std::error::Error for TryAcquireError {}

/// The message of both `TooLarge` variants.
fn too_large(f: &mut fmt::Formatter<'_>, requested: usize) -> fmt::Result {
    write!(
        f,
        "requested {requested} permits, more than any semaphore can hold \
         (Semaphore::MAX_PERMITS = {}): the request can never succeed",
        Semaphore::MAX_PERMITS
    )
}

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
            "cannot add {} permit{} to the {} available: the total would exceed \
             Semaphore::MAX_PERMITS ({}); the count is unchanged",
            self.added,
            if self.added == 1 { "" } else { "s" },
            self.available,
            Semaphore::MAX_PERMITS
        )
    }
}

impl std::error::Error for AddPermitsError {}
