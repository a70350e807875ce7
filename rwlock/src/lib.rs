//! A reader-writer lock for threads, built on [`parksema`]'s weighted semaphore.
//!
//! The construction is tokio's (its `RwLock` on the batch semaphore): the lock is a
//! [`parksema::Semaphore`] holding `max_readers` permits and the value. A reader takes one
//! permit, so up to `max_readers` readers hold the lock at once; a writer takes all
//! `max_readers` at once (parksema's requests are all-or-nothing), so while it holds them no
//! reader and no other writer can hold any. The guards are parksema's [`Permit`]s with a
//! reference to the value: dropping one returns its permits, also during unwinding, so a
//! panicking holder never leaves the lock held (there is no poisoning).
//!
#![cfg_attr(not(any(feature = "loom", feature = "shuttle")), doc = "```")]
#![cfg_attr(any(feature = "loom", feature = "shuttle"), doc = "```ignore")]
//! use parksema_rwlock::RwLock;
//! use std::sync::Arc;
//! use std::thread;
//!
//! // A configuration read by many threads and replaced now and then.
//! let config = Arc::new(RwLock::new(String::from("v1"), 8));
//! let readers: Vec<_> = (0..4)
//!     .map(|_| {
//!         let config = Arc::clone(&config);
//!         thread::spawn(move || config.read().len())
//!     })
//!     .collect();
//! *config.write() = String::from("v2");
//! for reader in readers {
//!     assert_eq!(reader.join().unwrap(), 2);
//! }
//! assert_eq!(*config.read(), "v2");
//! ```
//!
//! # Fairness
//!
//! The semaphore's [`Fairness`] decides who gets the lock when several threads wait.
//! [`RwLock::new`] uses [`Fairness::Fifo`]: once a writer waits, no reader that arrives after
//! it gets in before it (the semaphore serves requests in arrival order and lets no thread
//! take a permit while another is parked), so a stream of overlapping readers cannot starve a
//! writer. The price is that readers arriving behind a waiting writer wait too, even though
//! they could share the lock with the readers inside. [`RwLock::with_fairness`] takes the
//! other modes: under [`Fairness::Barging`] readers that keep overlapping keep the free
//! permits below `max_readers` and a writer can wait for as long as they do (the tests
//! `writer_progress_fails_on_barging`, under shuttle and on real threads, show a reader
//! getting in ahead of a parked writer); [`Fairness::Eventual`] does not bound it either: past
//! its deadline a release is handed, with the permits already free, to the first parked
//! request they satisfy, and a reader's release satisfies a parked writer's `max_readers`
//! only when that reader is the last one out (the lock has drained), which overlapping
//! readers can put off for as long as they keep coming.
//!
//! # Memory ordering
//!
//! Everything a writer did before dropping its guard happens-before everything a thread does
//! after it next acquires the lock, reader or writer, and everything a reader did before
//! dropping its guard happens-before everything the next writer does: parksema's release is a
//! `Release` and its take an `Acquire` on the same word (a handed-over permit is ordered by the
//! park table's wake-up), and a writer's take is one take of all the permits, so it is ordered
//! after every reader that returned one.
//!
//! # How it is checked
//!
//! The crate's tests run one exclusion scenario in three builds: every interleaving of a
//! writer and two readers under loom (within a stated preemption bound, with the value in
//! loom's tracked cell, so a missing happens-before edge is reported too), three readers and
//! two writers under shuttle's random and PCT schedulers, and readers and writers hammering the
//! lock on real threads under an in-process watchdog. Each entry into the lock is checked
//! where it happens (`exclusion: a reader inside while a writer holds the lock`). Writer
//! progress under `Fifo` is checked exactly, under shuttle and on real threads: no reader that
//! arrives after a writer parked gets the lock before it (the same check fails on a `Barging`
//! lock, in both); on real threads the readers also loop until the writers are done, and the
//! watchdog fails the test if no write completes within its stall limit. Generated programs
//! of readers and writers in every mode and form are checked, in all three builds, against the
//! semaphore's executable specification at `max_readers` permits (a read one permit, a write
//! all of them). The `broken_rwlock` feature compiles in a deliberate flaw (a writer that
//! takes one permit too few) that every exclusion check and the generated programs are shown
//! to catch. The crate's README has the measured sizes and times.

use core::fmt;
use core::marker::PhantomData;
use core::ops::{Deref, DerefMut};
use std::time::Duration;

pub use parksema::Fairness;
use parksema::{AcquireError, Permit, Semaphore};

mod cell;
#[cfg(feature = "broken_rwlock")]
mod flaw;

#[cfg(feature = "broken_rwlock")]
#[doc(hidden)]
pub use flaw::Flaw;

use cell::Cell;

/// The opening fence of a doc example: a tested example in the real build, ignored under the
/// model checkers (`loom`, `shuttle`), whose atomics work only inside a model.
#[cfg(not(any(feature = "loom", feature = "shuttle")))]
macro_rules! doc_fence {
    () => {
        "```"
    };
    (should_panic) => {
        "```should_panic"
    };
}
#[cfg(any(feature = "loom", feature = "shuttle"))]
macro_rules! doc_fence {
    ($($kind:ident)?) => {
        "```ignore"
    };
}

/// A reader-writer lock: any number of readers up to `max_readers`, or one writer.
///
/// The lock is a parksema [`Semaphore`] of `max_readers` permits: [`read`](RwLock::read)
/// takes one, [`write`](RwLock::write) takes all of them. Its size is the semaphore's two
/// words, the permit count a writer takes and the value.
///
/// # Examples
///
#[doc = doc_fence!()]
/// use parksema_rwlock::RwLock;
///
/// let lock = RwLock::new(5, 4);
/// {
///     let r1 = lock.read();
///     let r2 = lock.read();
///     assert_eq!(*r1 + *r2, 10);
///     assert!(lock.try_write().is_none(), "readers are inside");
/// }
/// *lock.write() += 1;
/// assert_eq!(lock.into_inner(), 6);
/// ```
pub struct RwLock<T> {
    /// `max_readers` permits while nobody holds the lock.
    sem: Semaphore,
    /// The permits [`RwLock::write`] takes: `max_readers` (one fewer under
    /// `Flaw::WriterShort`).
    write_permits: usize,
    /// The permits the semaphore started with.
    max_readers: usize,
    /// The value: read through a read guard (one permit), written through a write guard (all
    /// of them).
    data: Cell<T>,
}

// SAFETY: `RwLock<T>` is `Send` by the auto trait already when `T: Send` (the semaphore is
// plain atomics, the cell owns its `T`), so only `Sync` is implemented here. Sharing the lock
// lets several threads read `T` at once through read guards (each a `&T`), which needs
// `T: Sync`, and lets a thread write `T` through a write guard, or take it out with
// `into_inner` after it came from another thread's write, which moves `T` across threads in
// effect and needs `T: Send`. The semaphore guarantees that a write guard is never alive
// together with any other guard: a writer holds all `max_readers` permits and a reader holds
// one, so while either is held the other cannot be taken (tokio's `RwLock` has the same
// bounds for the same reasons).
unsafe impl<T: Send + Sync> Sync for RwLock<T> {}

/// Panics unless `max_readers` is a size the lock can be built with.
#[track_caller]
fn check_max_readers(max_readers: usize) {
    assert!(
        max_readers != 0,
        "RwLock: max_readers must be at least 1 (with 0 permits no reader and no writer \
         could ever take the lock: every read and write would wait forever)"
    );
    assert!(
        max_readers <= Semaphore::MAX_PERMITS,
        "RwLock: max_readers {max_readers} exceeds parksema's Semaphore::MAX_PERMITS ({}), \
         the most permits its semaphore can hold",
        Semaphore::MAX_PERMITS
    );
}

/// The permits of an acquire that cannot fail: the lock never closes its semaphore (which it
/// does not hand out) and never asks for more than `Semaphore::MAX_PERMITS` (checked at
/// construction), the only two ways parksema's blocking acquire returns an error.
fn taken(result: Result<Permit<'_>, AcquireError>) -> Permit<'_> {
    match result {
        Ok(permit) => permit,
        Err(e) => unreachable!(
            "RwLock: an acquire on the lock's semaphore failed ({e}), but the lock never \
             closes it and never asks for more than Semaphore::MAX_PERMITS"
        ),
    }
}

impl<T> RwLock<T> {
    /// Creates a lock holding `value` that admits up to `max_readers` readers at once, with
    /// [`Fairness::Fifo`]: waiting threads get the lock in arrival order, so a writer waits
    /// only for the holders and the waiters that arrived before it, never for readers that
    /// arrive after it.
    ///
    /// # Panics
    ///
    /// If `max_readers == 0` (no thread could ever take the lock) or
    /// `max_readers > Semaphore::MAX_PERMITS` (more permits than parksema's semaphore holds),
    /// with a message naming the number.
    ///
    /// # Examples
    ///
    #[doc = doc_fence!()]
    /// use parksema_rwlock::{Fairness, RwLock};
    ///
    /// let lock = RwLock::new(vec![1, 2, 3], 16);
    /// assert_eq!(lock.max_readers(), 16);
    /// assert_eq!(lock.fairness(), Fairness::Fifo);
    /// assert_eq!(lock.read().len(), 3);
    /// ```
    ///
    #[doc = doc_fence!(should_panic)]
    /// // A lock nobody could ever take is refused at once.
    /// let _ = parksema_rwlock::RwLock::new((), 0);
    /// ```
    #[track_caller]
    pub fn new(value: T, max_readers: usize) -> RwLock<T> {
        RwLock::with_fairness(value, max_readers, Fairness::Fifo)
    }

    /// Creates a lock holding `value` that admits up to `max_readers` readers at once, whose
    /// waiting threads are ordered by `fairness` (see the crate docs' "Fairness": only
    /// [`Fairness::Fifo`], what [`new`](RwLock::new) gives, keeps readers from starving a
    /// writer).
    ///
    /// # Panics
    ///
    /// As [`new`](RwLock::new): if `max_readers == 0` or
    /// `max_readers > Semaphore::MAX_PERMITS`.
    ///
    /// # Examples
    ///
    #[doc = doc_fence!()]
    /// use parksema_rwlock::{Fairness, RwLock};
    ///
    /// // Throughput first: a waiting writer does not hold up arriving readers.
    /// let lock = RwLock::with_fairness(0_u64, 4, Fairness::Barging);
    /// let r = lock.read();
    /// assert!(lock.try_read().is_some());
    /// drop(r);
    /// assert_eq!(lock.fairness(), Fairness::Barging);
    /// ```
    ///
    #[doc = doc_fence!(should_panic)]
    /// use parksema::Semaphore;
    /// use parksema_rwlock::{Fairness, RwLock};
    ///
    /// let _ = RwLock::with_fairness((), Semaphore::MAX_PERMITS + 1, Fairness::Fifo);
    /// ```
    #[track_caller]
    pub fn with_fairness(value: T, max_readers: usize, fairness: Fairness) -> RwLock<T> {
        check_max_readers(max_readers);
        RwLock {
            sem: Semaphore::with_fairness(max_readers, fairness),
            write_permits: max_readers,
            max_readers,
            data: Cell::new(value),
        }
    }

    /// Creates a lock that runs with the deliberate flaw `flaw` (`None`: the correct lock).
    /// For the verification suite only.
    #[cfg(feature = "broken_rwlock")]
    #[doc(hidden)]
    #[track_caller]
    pub fn with_flaw(
        value: T,
        max_readers: usize,
        fairness: Fairness,
        flaw: Option<Flaw>,
    ) -> RwLock<T> {
        let mut lock = RwLock::with_fairness(value, max_readers, fairness);
        if flaw == Some(Flaw::WriterShort) {
            lock.write_permits = max_readers - 1;
        }
        lock
    }

    /// How many readers can hold the lock at once: the `max_readers` it was created with,
    /// and the number of permits a writer takes.
    ///
    /// # Examples
    ///
    #[doc = doc_fence!()]
    /// let lock = parksema_rwlock::RwLock::new('x', 3);
    /// assert_eq!(lock.max_readers(), 3);
    /// let guards: Vec<_> = (0..3).map(|_| lock.try_read().unwrap()).collect();
    /// assert!(lock.try_read().is_none(), "a fourth reader does not fit");
    /// drop(guards);
    /// ```
    pub fn max_readers(&self) -> usize {
        self.max_readers
    }

    /// The fairness the lock's semaphore was created with.
    ///
    /// # Examples
    ///
    #[doc = doc_fence!()]
    /// use parksema_rwlock::{Fairness, RwLock};
    ///
    /// assert_eq!(RwLock::new((), 1).fairness(), Fairness::Fifo);
    /// ```
    pub fn fairness(&self) -> Fairness {
        self.sem.fairness()
    }

    /// Takes the lock for reading, parking the thread until a reader fits: until fewer than
    /// `max_readers` readers hold it and no writer does (and, under [`Fairness::Fifo`], every
    /// thread that was waiting before this one got the lock).
    ///
    /// Everything the last writer did before dropping its guard happens-before everything
    /// this thread does once `read` returns.
    ///
    /// # Examples
    ///
    #[doc = doc_fence!()]
    /// use parksema_rwlock::RwLock;
    /// use std::{sync::Arc, thread};
    ///
    /// let lock = Arc::new(RwLock::new(0, 2));
    /// let mut w = lock.write();
    /// let reader = {
    ///     let lock = Arc::clone(&lock);
    ///     thread::spawn(move || *lock.read()) // parks until the writer is done
    /// };
    /// *w = 7;
    /// drop(w);
    /// assert_eq!(reader.join().unwrap(), 7);
    /// ```
    pub fn read(&self) -> ReadGuard<'_, T> {
        ReadGuard::new(self, taken(self.sem.acquire()))
    }

    /// Takes the lock for reading if a reader fits now; never blocks. Under
    /// [`Fairness::Fifo`] it also fails while any thread waits for the lock (a reader must not
    /// pass a waiting writer), even when the readers inside leave room.
    ///
    /// # Examples
    ///
    #[doc = doc_fence!()]
    /// use parksema_rwlock::RwLock;
    ///
    /// let lock = RwLock::new("text", 1);
    /// let r = lock.try_read().unwrap();
    /// assert!(lock.try_read().is_none(), "max_readers is 1");
    /// drop(r);
    /// let w = lock.write();
    /// assert!(lock.try_read().is_none(), "a writer is inside");
    /// drop(w);
    /// ```
    pub fn try_read(&self) -> Option<ReadGuard<'_, T>> {
        let permit = self.sem.try_acquire().ok()?;
        Some(ReadGuard::new(self, permit))
    }

    /// Takes the lock for reading, waiting at most `timeout` for a reader to fit.
    ///
    /// A reader that fits at the call gets in without parking, even if `timeout` is zero,
    /// except under [`Fairness::Fifo`] while other threads wait, where a zero timeout behaves
    /// as [`try_read`](RwLock::try_read) (parksema's rule for timed acquires). A `timeout`
    /// too large to add to the current time waits without a deadline. `None` if no reader fit
    /// before the deadline; the lock is then as it was.
    ///
    /// # Examples
    ///
    #[doc = doc_fence!()]
    /// use parksema_rwlock::RwLock;
    /// use std::time::Duration;
    ///
    /// let lock = RwLock::new(1, 4);
    /// let w = lock.write();
    /// assert!(lock.try_read_for(Duration::from_millis(5)).is_none());
    /// drop(w);
    /// assert_eq!(*lock.try_read_for(Duration::ZERO).unwrap(), 1);
    /// ```
    pub fn try_read_for(&self, timeout: Duration) -> Option<ReadGuard<'_, T>> {
        let permit = self.sem.try_acquire_for(timeout).ok()?;
        Some(ReadGuard::new(self, permit))
    }

    /// Takes the lock for writing, parking the thread until no reader and no writer holds it
    /// (and, under [`Fairness::Fifo`], every thread that was waiting before this one got it).
    /// The writer takes all `max_readers` permits at once: it never holds part of them while
    /// it waits, so two writers cannot deadlock each other and readers can still share the
    /// lock while it waits (unless the lock is `Fifo`, where the readers that arrive after
    /// the writer queue behind it).
    ///
    /// Everything every earlier holder did before dropping its guard happens-before
    /// everything this thread does once `write` returns.
    ///
    /// # Examples
    ///
    #[doc = doc_fence!()]
    /// use parksema_rwlock::RwLock;
    /// use std::{sync::Arc, thread};
    ///
    /// let lock = Arc::new(RwLock::new(Vec::new(), 4));
    /// let writers: Vec<_> = (0..4)
    ///     .map(|i| {
    ///         let lock = Arc::clone(&lock);
    ///         thread::spawn(move || lock.write().push(i))
    ///     })
    ///     .collect();
    /// for w in writers {
    ///     w.join().unwrap();
    /// }
    /// let mut all = lock.read().clone();
    /// all.sort();
    /// assert_eq!(all, [0, 1, 2, 3]);
    /// ```
    pub fn write(&self) -> WriteGuard<'_, T> {
        WriteGuard::new(self, taken(self.sem.acquire_many(self.write_permits)))
    }

    /// Takes the lock for writing if nobody holds it now; never blocks. Under
    /// [`Fairness::Fifo`] it also fails while any thread waits for the lock.
    ///
    /// # Examples
    ///
    #[doc = doc_fence!()]
    /// use parksema_rwlock::RwLock;
    ///
    /// let lock = RwLock::new(0, 8);
    /// let r = lock.read();
    /// assert!(lock.try_write().is_none(), "a reader is inside");
    /// drop(r);
    /// *lock.try_write().unwrap() = 3;
    /// assert_eq!(*lock.read(), 3);
    /// ```
    pub fn try_write(&self) -> Option<WriteGuard<'_, T>> {
        let permit = self.sem.try_acquire_many(self.write_permits).ok()?;
        Some(WriteGuard::new(self, permit))
    }

    /// Takes the lock for writing, waiting at most `timeout` for the holders to leave.
    ///
    /// A lock nobody holds at the call is taken without parking, even if `timeout` is zero,
    /// except under [`Fairness::Fifo`] while other threads wait (then a zero timeout behaves
    /// as [`try_write`](RwLock::try_write)). A `timeout` too large to add to the current time
    /// waits without a deadline. `None` if the lock did not come free before the deadline; a
    /// writer that times out takes nothing, so the readers it waited behind are not held up
    /// by it afterwards.
    ///
    /// # Examples
    ///
    #[doc = doc_fence!()]
    /// use parksema_rwlock::RwLock;
    /// use std::time::Duration;
    ///
    /// let lock = RwLock::new(0, 2);
    /// let r = lock.read();
    /// assert!(lock.try_write_for(Duration::from_millis(5)).is_none());
    /// assert!(lock.try_read().is_some(), "the timed-out writer took no permit");
    /// drop(r);
    /// *lock.try_write_for(Duration::from_secs(1)).unwrap() = 1;
    /// ```
    pub fn try_write_for(&self, timeout: Duration) -> Option<WriteGuard<'_, T>> {
        let permit = self
            .sem
            .try_acquire_many_for(self.write_permits, timeout)
            .ok()?;
        Some(WriteGuard::new(self, permit))
    }

    /// A mutable reference to the value, without locking: `&mut self` proves that no guard
    /// exists.
    ///
    /// # Examples
    ///
    #[doc = doc_fence!()]
    /// let mut lock = parksema_rwlock::RwLock::new(1, 2);
    /// *lock.get_mut() = 2;
    /// assert_eq!(*lock.read(), 2);
    /// ```
    pub fn get_mut(&mut self) -> &mut T {
        // SAFETY: `&mut self` borrows the lock exclusively, so no guard (each borrows the
        // lock) and no other reference to the value exists while the returned borrow lives.
        unsafe { &mut *self.data.write_ptr() }
    }

    /// Consumes the lock and returns the value. Taking `self` by value proves that no guard
    /// exists.
    ///
    /// # Examples
    ///
    #[doc = doc_fence!()]
    /// let lock = parksema_rwlock::RwLock::new(String::from("done"), 2);
    /// lock.write().push('!');
    /// assert_eq!(lock.into_inner(), "done!");
    /// ```
    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }

    /// The number of threads parked on the lock's semaphore at one instant (readers and
    /// writers): a diagnostic for the verification suite and stall reports. It takes the park
    /// table's bucket lock; the number may be stale as soon as it is returned.
    #[doc(hidden)]
    pub fn parked_threads(&self) -> usize {
        self.sem.parked_threads()
    }

    /// The permits free in the lock's semaphore now (`max_readers` when nobody holds it): a
    /// diagnostic for the verification suite and stall reports.
    #[doc(hidden)]
    pub fn available_permits(&self) -> usize {
        self.sem.available_permits()
    }
}

/// Shows `max_readers`, the fairness, the free permits and the value if a reader fits now
/// (taken with [`try_read`](RwLock::try_read); `<locked>` otherwise).
///
/// # Examples
///
#[doc = doc_fence!()]
/// let lock = parksema_rwlock::RwLock::new(5, 2);
/// assert!(format!("{lock:?}").contains("data: 5"));
/// let w = lock.write();
/// assert!(format!("{lock:?}").contains("data: <locked>"));
/// drop(w);
/// ```
impl<T: fmt::Debug> fmt::Debug for RwLock<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("RwLock");
        d.field("max_readers", &self.max_readers)
            .field("fairness", &self.fairness())
            .field("available_permits", &self.sem.available_permits());
        match self.try_read() {
            Some(guard) => d.field("data", &&*guard),
            None => d.field("data", &format_args!("<locked>")),
        };
        d.finish()
    }
}

/// Shared access to the value of a [`RwLock`]: one of its `max_readers` permits, returned
/// when the guard is dropped (also during unwinding).
///
/// # Examples
///
#[doc = doc_fence!()]
/// let lock = parksema_rwlock::RwLock::new([1, 2], 2);
/// let guard = lock.read();
/// assert_eq!(guard.len(), 2);
/// assert!(lock.try_write().is_none());
/// drop(guard);
/// assert!(lock.try_write().is_some());
/// ```
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct ReadGuard<'a, T> {
    lock: &'a RwLock<T>,
    /// Returned to the semaphore on drop.
    _permit: Permit<'a>,
    /// `ReadGuard` hands out `&T` only.
    _shared: PhantomData<&'a T>,
}

impl<'a, T> ReadGuard<'a, T> {
    fn new(lock: &'a RwLock<T>, permit: Permit<'a>) -> Self {
        ReadGuard {
            lock,
            _permit: permit,
            _shared: PhantomData,
        }
    }
}

impl<T> Deref for ReadGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: this guard holds one of the lock's permits until it is dropped, and the
        // returned borrow cannot outlive the guard. A write guard holds all `max_readers`
        // permits, so none exists while this one does, and a write guard is the only way to
        // write the value through a shared lock (`get_mut` and `into_inner` need the lock
        // exclusively, which a guard's borrow rules out). Other readers only read.
        unsafe { &*self.lock.data.read_ptr() }
    }
}

/// Shows the value, as `&T` would.
///
/// # Examples
///
#[doc = doc_fence!()]
/// let lock = parksema_rwlock::RwLock::new(3, 2);
/// assert_eq!(format!("{:?}", lock.read()), "3");
/// ```
impl<T: fmt::Debug> fmt::Debug for ReadGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// Exclusive access to the value of a [`RwLock`]: all its `max_readers` permits, returned
/// when the guard is dropped (also during unwinding).
///
/// # Examples
///
#[doc = doc_fence!()]
/// let lock = parksema_rwlock::RwLock::new(vec![1], 4);
/// let mut guard = lock.write();
/// guard.push(2);
/// assert!(lock.try_read().is_none());
/// drop(guard);
/// assert_eq!(*lock.read(), [1, 2]);
/// ```
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct WriteGuard<'a, T> {
    lock: &'a RwLock<T>,
    /// Returned to the semaphore on drop.
    _permit: Permit<'a>,
    /// `WriteGuard` hands out `&mut T`: invariant in `T`, as `&'a mut T` is.
    _exclusive: PhantomData<&'a mut T>,
}

impl<'a, T> WriteGuard<'a, T> {
    fn new(lock: &'a RwLock<T>, permit: Permit<'a>) -> Self {
        WriteGuard {
            lock,
            _permit: permit,
            _exclusive: PhantomData,
        }
    }
}

impl<T> Deref for WriteGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: this guard holds all `max_readers` permits until it is dropped, so no other
        // guard, read or write, exists while the returned borrow (which cannot outlive the
        // guard) lives; the only writes are through this guard's `deref_mut`, whose borrow of
        // the guard rules out this one.
        unsafe { &*self.lock.data.read_ptr() }
    }
}

impl<T> DerefMut for WriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: this guard holds all `max_readers` permits until it is dropped, so no other
        // guard exists, and `&mut self` rules out every other borrow through this guard, for
        // as long as the returned borrow lives.
        unsafe { &mut *self.lock.data.write_ptr() }
    }
}

/// Shows the value, as `&T` would.
///
/// # Examples
///
#[doc = doc_fence!()]
/// let lock = parksema_rwlock::RwLock::new("w", 2);
/// assert_eq!(format!("{:?}", lock.write()), "\"w\"");
/// ```
impl<T: fmt::Debug> fmt::Debug for WriteGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// The README's example, compiled and run as a doc test in the real build.
#[cfg(all(doctest, not(any(feature = "loom", feature = "shuttle"))))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
