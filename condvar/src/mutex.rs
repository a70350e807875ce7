//! [`Mutex`] and its guard: a value behind [`RawMutex`].

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

#[cfg(feature = "broken_condvar")]
use crate::Flaw;
use crate::cell::Cell;
use crate::raw_mutex::RawMutex;

/// A mutual-exclusion lock protecting a value of type `T`, written directly on
/// `parking_lot_core`: one byte of state, parked threads kept in the global park table.
///
/// [`lock`](Mutex::lock) returns a [`MutexGuard`]; the value is reached through it, and the
/// lock is released when the guard is dropped. A [`Condvar`](crate::Condvar) waits on a
/// guard. There is no poisoning (a panic while holding the guard just releases it) and no
/// handoff: a thread woken by an unlock competes for the lock again with every other thread.
///
#[cfg_attr(not(any(feature = "loom", feature = "shuttle")), doc = "```")]
#[cfg_attr(any(feature = "loom", feature = "shuttle"), doc = "```ignore")]
/// use parksema_condvar::Mutex;
/// use std::sync::Arc;
/// use std::thread;
///
/// let counter = Arc::new(Mutex::new(0));
/// let threads: Vec<_> = (0..4)
///     .map(|_| {
///         let counter = Arc::clone(&counter);
///         thread::spawn(move || {
///             for _ in 0..1000 {
///                 *counter.lock() += 1;
///             }
///         })
///     })
///     .collect();
/// for t in threads {
///     t.join().unwrap();
/// }
/// assert_eq!(*counter.lock(), 4000);
/// ```
pub struct Mutex<T> {
    pub(crate) raw: RawMutex,
    data: Cell<T>,
}

// SAFETY: the mutex gives at most one thread at a time access to the value (through its
// guard), so sharing the mutex hands the value from thread to thread: `T: Send` suffices, as
// for `std::sync::Mutex`.
unsafe impl<T: Send> Sync for Mutex<T> {}
// SAFETY: the mutex owns the value, so moving it moves the value: `T: Send` suffices.
unsafe impl<T: Send> Send for Mutex<T> {}

impl<T> Mutex<T> {
    parkcheck::const_fn! {
        /// A new, unlocked mutex holding `value` (`const` in the real build, so it can be a
        /// `static`).
        ///
        #[cfg_attr(not(any(feature = "loom", feature = "shuttle")), doc = "```")]
        #[cfg_attr(any(feature = "loom", feature = "shuttle"), doc = "```ignore")]
        /// use parksema_condvar::Mutex;
        ///
        /// static NAMES: Mutex<Vec<&str>> = Mutex::new(Vec::new());
        /// NAMES.lock().push("one");
        /// assert_eq!(NAMES.lock().len(), 1);
        /// ```
        pub fn new(value: T) -> Mutex<T> {
            Mutex {
                raw: RawMutex::new(),
                data: Cell::new(value),
            }
        }
    }

    /// A new mutex holding `value` with the deliberate flaw `flaw` (feature
    /// `broken_condvar`; only [`Flaw::RelaxedUnlock`] changes a mutex). For the verification
    /// suite only.
    #[cfg(feature = "broken_condvar")]
    #[doc(hidden)]
    pub fn with_flaw(value: T, flaw: Option<Flaw>) -> Mutex<T> {
        Mutex {
            raw: RawMutex::with_flaw(flaw),
            data: Cell::new(value),
        }
    }

    /// Takes the lock, parking the thread until it is free, and returns the guard through
    /// which the value is reached. The lock is not reentrant: locking it again on the thread
    /// that holds it parks that thread forever.
    ///
    #[cfg_attr(not(any(feature = "loom", feature = "shuttle")), doc = "```")]
    #[cfg_attr(any(feature = "loom", feature = "shuttle"), doc = "```ignore")]
    /// use parksema_condvar::Mutex;
    ///
    /// let m = Mutex::new(String::from("a"));
    /// m.lock().push('b');
    /// assert_eq!(*m.lock(), "ab");
    /// ```
    pub fn lock(&self) -> MutexGuard<'_, T> {
        self.raw.lock();
        MutexGuard::new(self)
    }

    /// Takes the lock if it is free now, without parking.
    ///
    #[cfg_attr(not(any(feature = "loom", feature = "shuttle")), doc = "```")]
    #[cfg_attr(any(feature = "loom", feature = "shuttle"), doc = "```ignore")]
    /// use parksema_condvar::Mutex;
    ///
    /// let m = Mutex::new(1);
    /// let held = m.lock();
    /// assert!(m.try_lock().is_none());
    /// drop(held);
    /// assert_eq!(m.try_lock().map(|g| *g), Some(1));
    /// ```
    pub fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
        self.raw.try_lock().then(|| MutexGuard::new(self))
    }

    /// Whether the lock is held now: a snapshot, already stale when it returns (for
    /// diagnostics, not for synchronization).
    ///
    #[cfg_attr(not(any(feature = "loom", feature = "shuttle")), doc = "```")]
    #[cfg_attr(any(feature = "loom", feature = "shuttle"), doc = "```ignore")]
    /// use parksema_condvar::Mutex;
    ///
    /// let m = Mutex::new(());
    /// let guard = m.lock();
    /// assert!(m.is_locked());
    /// drop(guard);
    /// assert!(!m.is_locked());
    /// ```
    pub fn is_locked(&self) -> bool {
        self.raw.is_locked()
    }

    /// The value, through an exclusive borrow of the mutex (no locking needed).
    ///
    #[cfg_attr(not(any(feature = "loom", feature = "shuttle")), doc = "```")]
    #[cfg_attr(any(feature = "loom", feature = "shuttle"), doc = "```ignore")]
    /// use parksema_condvar::Mutex;
    ///
    /// let mut m = Mutex::new(1);
    /// *m.get_mut() += 1;
    /// assert_eq!(m.into_inner(), 2);
    /// ```
    pub fn get_mut(&mut self) -> &mut T {
        self.data.get_mut()
    }

    /// The value, out of the mutex.
    ///
    #[cfg_attr(not(any(feature = "loom", feature = "shuttle")), doc = "```")]
    #[cfg_attr(any(feature = "loom", feature = "shuttle"), doc = "```ignore")]
    /// use parksema_condvar::Mutex;
    ///
    /// assert_eq!(Mutex::new(vec![1, 2]).into_inner(), [1, 2]);
    /// ```
    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }

    /// This mutex's park-table key (the address of its lock word): where its parked threads
    /// and the waiters a `notify_all` requeued are queued. For the verification suite's
    /// model checks (`parkcheck::parked`, `parkcheck::stats`).
    #[doc(hidden)]
    pub fn __park_key(&self) -> usize {
        self.raw.key()
    }
}

impl<T: Default> Default for Mutex<T> {
    fn default() -> Self {
        Mutex::new(T::default())
    }
}

impl<T> From<T> for Mutex<T> {
    fn from(value: T) -> Self {
        Mutex::new(value)
    }
}

impl<T: fmt::Debug> fmt::Debug for Mutex<T> {
    /// Shows the value if the lock is free now (taken and released at once), else
    /// `<locked>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Mutex");
        match self.try_lock() {
            Some(guard) => d.field("data", &&*guard),
            None => d.field("data", &format_args!("<locked>")),
        };
        d.finish()
    }
}

/// Proof that the lock of a [`Mutex`] is held: the value is reached through it
/// ([`Deref`]/[`DerefMut`]), and dropping it releases the lock. A
/// [`Condvar`](crate::Condvar) waits on it.
///
/// It is not `Send`: the lock is released on the thread that took it.
#[must_use = "dropping the guard releases the lock at once"]
pub struct MutexGuard<'a, T> {
    pub(crate) mutex: &'a Mutex<T>,
    /// Not `Send` (nor, by default, `Sync`; see the impl below).
    _not_send: PhantomData<*const ()>,
}

// SAFETY: sharing the guard shares only `&T` (through `Deref`), so it is `Sync` exactly when
// `T` is, as `std::sync::MutexGuard` is.
unsafe impl<T: Sync> Sync for MutexGuard<'_, T> {}

impl<'a, T> MutexGuard<'a, T> {
    /// The guard of `mutex`, whose lock the caller has just taken.
    fn new(mutex: &'a Mutex<T>) -> Self {
        MutexGuard {
            mutex,
            _not_send: PhantomData,
        }
    }
}

impl<T> Deref for MutexGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: this guard proves the lock is held, so no thread writes the value while
        // the shared borrow lives (it borrows the guard, and the lock is released only when
        // the guard drops or, inside `Condvar::wait`, while the guard is mutably borrowed).
        unsafe { &*self.mutex.data.read_ptr() }
    }
}

impl<T> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: this guard proves the lock is held, so this is the only access to the
        // value while the exclusive borrow (of the guard) lives.
        unsafe { &mut *self.mutex.data.write_ptr() }
    }
}

impl<T> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        // SAFETY: this guard holds the lock (taken in `lock`/`try_lock`, or taken again by
        // `Condvar::wait` before it returned), and it is released once, here.
        unsafe { self.mutex.raw.unlock() };
    }
}

impl<T: fmt::Debug> fmt::Debug for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: fmt::Display> fmt::Display for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&**self, f)
    }
}
