//! The semaphores a user would pick instead of parksema, behind one trait.
//!
//! Every peer is used the way its documentation shows: a guard where the API gives one, a
//! plain wait/post pair where it does not. Each `hold` takes one permit, runs the closure and
//! gives the permit back.

use std::cell::UnsafeCell;
use std::io;
use std::sync::{Condvar, Mutex};

use rsevents::Awaitable;

/// Debug output for the peers: their name (not every peer's inner type is `Debug`).
macro_rules! debug_as_name {
    ($($ty:ty => $name:expr),* $(,)?) => {
        $(impl std::fmt::Debug for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str($name)
            }
        })*
    };
}

debug_as_name! {
    PosixSem => "sem_t",
    CondvarSem => "Mutex+Condvar",
    RsEvents => "rsevents-extra",
    AsyncLock => "async-lock",
    StdMutex => "std::sync::Mutex",
    ParkFloor => "thread::park",
}

/// A semaphore (or a lock standing in for one at one permit) under test.
pub trait Peer: Send + Sync + 'static {
    /// The name in tables, charts and CSV files.
    const NAME: &'static str;
    /// Whether this peer only exists with one permit (a mutex).
    const ONE_PERMIT_ONLY: bool = false;
    /// A fresh instance holding `permits` permits.
    fn with_permits(permits: usize) -> Self;
    /// Takes a permit, runs `f`, returns the permit.
    fn hold<R>(&self, f: impl FnOnce() -> R) -> R;
    /// Tries to take a permit without blocking; returns it at once if it got one.
    fn try_hold(&self) -> bool;
    /// The semaphore's own counts of what its contended acquires did, where it keeps them
    /// (parksema built with the `profile` feature).
    fn own_counts(&self) -> Option<OwnCounts> {
        None
    }
}

/// What a semaphore's contended acquires did (parksema's contention profile), in all or per
/// operation.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct OwnCounts {
    /// Acquires that did not find a permit free.
    pub contended: f64,
    /// Rounds of spinning before parking.
    pub spins: f64,
    /// Parks.
    pub parks: f64,
    /// Wake-ups that found no permit (another thread took it first).
    pub wakeups_without_permits: f64,
    /// Acquires handed their permit by a release.
    pub handoffs: f64,
}

impl OwnCounts {
    /// These counts divided by `ops` operations.
    pub fn per_op(self, ops: u64) -> OwnCounts {
        let d = ops.max(1) as f64;
        OwnCounts {
            contended: self.contended / d,
            spins: self.spins / d,
            parks: self.parks / d,
            wakeups_without_permits: self.wakeups_without_permits / d,
            handoffs: self.handoffs / d,
        }
    }
}

/// parksema's contention profile as `OwnCounts` (feature `profile`).
#[cfg(feature = "profile")]
fn parksema_counts(sem: &parksema::Semaphore) -> Option<OwnCounts> {
    let p = sem.profile();
    Some(OwnCounts {
        contended: p.contended_acquires as f64,
        spins: p.spins as f64,
        parks: p.parks as f64,
        wakeups_without_permits: p.wakeups_without_permits as f64,
        handoffs: p.handoffs as f64,
    })
}
#[cfg(not(feature = "profile"))]
fn parksema_counts(sem: &parksema::Semaphore) -> Option<OwnCounts> {
    let _ = sem;
    None
}

/// A semaphore that can be signalled without a guard: the ping-pong of the wake-latency run.
pub trait Signal: Send + Sync + 'static {
    /// The name in tables.
    const NAME: &'static str;
    /// A semaphore with no permit.
    fn empty() -> Self;
    /// Called once by the thread that will `take`, before the run starts.
    fn prepare_taker(&self) {}
    /// Takes one permit for good, blocking until there is one.
    fn take(&self);
    /// Adds one permit, waking a waiter if there is one.
    fn give(&self);
}

/// parksema itself.
pub type Parksema = parksema::Semaphore;

impl Peer for Parksema {
    const NAME: &'static str = "parksema";
    fn with_permits(permits: usize) -> Self {
        parksema::Semaphore::new(permits)
    }
    #[inline]
    fn hold<R>(&self, f: impl FnOnce() -> R) -> R {
        let _permit = self
            .acquire()
            .expect("the benchmark never closes a semaphore");
        f()
    }
    #[inline]
    fn try_hold(&self) -> bool {
        self.try_acquire().is_ok()
    }
    fn own_counts(&self) -> Option<OwnCounts> {
        parksema_counts(self)
    }
}

impl Signal for Parksema {
    const NAME: &'static str = "parksema";
    fn empty() -> Self {
        parksema::Semaphore::new(0)
    }
    fn take(&self) {
        self.acquire().expect("never closed").forget();
    }
    fn give(&self) {
        self.add_permits(1);
    }
}

/// glibc's POSIX semaphore, `sem_t`, through `libc`.
pub struct PosixSem {
    // Boxed so its address never changes after `sem_init` (POSIX forbids copying a `sem_t`).
    sem: Box<UnsafeCell<libc::sem_t>>,
}

// SAFETY: a `sem_t` initialized with `pshared = 0` is meant to be shared between the threads
// of one process; every access goes through the `sem_*` functions, which synchronize.
unsafe impl Send for PosixSem {}
// SAFETY: as for `Send`.
unsafe impl Sync for PosixSem {}

impl PosixSem {
    fn new(permits: usize) -> Self {
        let value = libc::c_uint::try_from(permits).expect("sem_t counts fit in a c_uint");
        // SAFETY: an all-zero `sem_t` is a valid bit pattern for a plain C struct; `sem_init`
        // overwrites it below before any other use.
        let sem = Box::new(UnsafeCell::new(unsafe {
            std::mem::zeroed::<libc::sem_t>()
        }));
        // SAFETY: the pointer is valid, aligned and unique; `pshared = 0` (threads of this
        // process only); the value is at most `c_uint::MAX`, which glibc accepts up to
        // SEM_VALUE_MAX and reports otherwise (checked below).
        let rc = unsafe { libc::sem_init(sem.get(), 0, value) };
        assert_eq!(rc, 0, "sem_init: {}", io::Error::last_os_error());
        PosixSem { sem }
    }

    fn wait(&self) {
        loop {
            // SAFETY: `self.sem` was initialized by `sem_init` and is destroyed only in `drop`.
            if unsafe { libc::sem_wait(self.sem.get()) } == 0 {
                return;
            }
            let err = io::Error::last_os_error();
            assert_eq!(err.kind(), io::ErrorKind::Interrupted, "sem_wait: {err}");
        }
    }

    fn post(&self) {
        // SAFETY: as in `wait`.
        let rc = unsafe { libc::sem_post(self.sem.get()) };
        assert_eq!(rc, 0, "sem_post: {}", io::Error::last_os_error());
    }

    fn try_wait(&self) -> bool {
        // SAFETY: as in `wait`.
        unsafe { libc::sem_trywait(self.sem.get()) == 0 }
    }
}

impl Drop for PosixSem {
    fn drop(&mut self) {
        // SAFETY: initialized in `new`; `&mut self` proves no thread is blocked on it.
        unsafe { libc::sem_destroy(self.sem.get()) };
    }
}

impl Peer for PosixSem {
    const NAME: &'static str = "sem_t";
    fn with_permits(permits: usize) -> Self {
        PosixSem::new(permits)
    }
    #[inline]
    fn hold<R>(&self, f: impl FnOnce() -> R) -> R {
        self.wait();
        let r = f();
        self.post();
        r
    }
    #[inline]
    fn try_hold(&self) -> bool {
        let ok = self.try_wait();
        if ok {
            self.post();
        }
        ok
    }
}

impl Signal for PosixSem {
    const NAME: &'static str = "sem_t";
    fn empty() -> Self {
        PosixSem::new(0)
    }
    fn take(&self) {
        self.wait();
    }
    fn give(&self) {
        self.post();
    }
}

/// The textbook semaphore: a counter under a `std::sync::Mutex` and a `Condvar`.
pub struct CondvarSem {
    count: Mutex<usize>,
    nonzero: Condvar,
}

impl CondvarSem {
    fn new(permits: usize) -> Self {
        CondvarSem {
            count: Mutex::new(permits),
            nonzero: Condvar::new(),
        }
    }
    fn down(&self) {
        let mut count = self.count.lock().unwrap();
        while *count == 0 {
            count = self.nonzero.wait(count).unwrap();
        }
        *count -= 1;
    }
    fn up(&self) {
        *self.count.lock().unwrap() += 1;
        self.nonzero.notify_one();
    }
}

impl Peer for CondvarSem {
    const NAME: &'static str = "Mutex+Condvar";
    fn with_permits(permits: usize) -> Self {
        CondvarSem::new(permits)
    }
    #[inline]
    fn hold<R>(&self, f: impl FnOnce() -> R) -> R {
        self.down();
        let r = f();
        self.up();
        r
    }
    #[inline]
    fn try_hold(&self) -> bool {
        let mut count = self.count.lock().unwrap();
        if *count == 0 {
            return false;
        }
        *count -= 1;
        drop(count);
        self.up();
        true
    }
}

impl Signal for CondvarSem {
    const NAME: &'static str = "Mutex+Condvar";
    fn empty() -> Self {
        CondvarSem::new(0)
    }
    fn take(&self) {
        self.down();
    }
    fn give(&self) {
        self.up();
    }
}

/// `rsevents-extra`'s `Semaphore` (parking_lot_core 0.9 underneath, counts are `u16`).
pub struct RsEvents(rsevents_extra::Semaphore);

impl Peer for RsEvents {
    const NAME: &'static str = "rsevents-extra";
    fn with_permits(permits: usize) -> Self {
        let n = u16::try_from(permits).expect("rsevents-extra counts are u16");
        RsEvents(rsevents_extra::Semaphore::new(n, n))
    }
    #[inline]
    fn hold<R>(&self, f: impl FnOnce() -> R) -> R {
        let _guard = self.0.wait();
        f()
    }
    #[inline]
    fn try_hold(&self) -> bool {
        self.0.try_wait0().is_ok()
    }
}

impl Signal for RsEvents {
    const NAME: &'static str = "rsevents-extra";
    fn empty() -> Self {
        RsEvents(rsevents_extra::Semaphore::new(0, 1))
    }
    fn take(&self) {
        self.0.wait().forget();
    }
    fn give(&self) {
        self.0.release(1);
    }
}

/// `async-lock`'s `Semaphore`, used from threads through `acquire_blocking`.
pub struct AsyncLock(async_lock::Semaphore);

impl Peer for AsyncLock {
    const NAME: &'static str = "async-lock";
    fn with_permits(permits: usize) -> Self {
        AsyncLock(async_lock::Semaphore::new(permits))
    }
    #[inline]
    fn hold<R>(&self, f: impl FnOnce() -> R) -> R {
        let _guard = self.0.acquire_blocking();
        f()
    }
    #[inline]
    fn try_hold(&self) -> bool {
        self.0.try_acquire().is_some()
    }
}

impl Signal for AsyncLock {
    const NAME: &'static str = "async-lock";
    fn empty() -> Self {
        AsyncLock(async_lock::Semaphore::new(0))
    }
    fn take(&self) {
        self.0.acquire_blocking().forget();
    }
    fn give(&self) {
        self.0.add_permits(1);
    }
}

/// parksema in `Fairness::Fifo` mode.
#[derive(Debug)]
pub struct ParksemaFifo(parksema::Semaphore);

impl Peer for ParksemaFifo {
    const NAME: &'static str = "parksema Fifo";
    fn with_permits(permits: usize) -> Self {
        ParksemaFifo(parksema::Semaphore::with_fairness(
            permits,
            parksema::Fairness::Fifo,
        ))
    }
    #[inline]
    fn hold<R>(&self, f: impl FnOnce() -> R) -> R {
        self.0.hold(f)
    }
    #[inline]
    fn try_hold(&self) -> bool {
        self.0.try_hold()
    }
    fn own_counts(&self) -> Option<OwnCounts> {
        parksema_counts(&self.0)
    }
}

/// parksema in `Fairness::Barging` mode (no fairness timer).
#[derive(Debug)]
pub struct ParksemaBarging(parksema::Semaphore);

impl Peer for ParksemaBarging {
    const NAME: &'static str = "parksema Barging";
    fn with_permits(permits: usize) -> Self {
        ParksemaBarging(parksema::Semaphore::with_fairness(
            permits,
            parksema::Fairness::Barging,
        ))
    }
    #[inline]
    fn hold<R>(&self, f: impl FnOnce() -> R) -> R {
        self.0.hold(f)
    }
    #[inline]
    fn try_hold(&self) -> bool {
        self.0.try_hold()
    }
    fn own_counts(&self) -> Option<OwnCounts> {
        parksema_counts(&self.0)
    }
}

/// parksema (`Eventual`, the default), every permit returned with `release_fair`.
#[derive(Debug)]
pub struct ParksemaReleaseFair(parksema::Semaphore);

impl Peer for ParksemaReleaseFair {
    const NAME: &'static str = "parksema release_fair";
    fn with_permits(permits: usize) -> Self {
        ParksemaReleaseFair(parksema::Semaphore::new(permits))
    }
    #[inline]
    fn hold<R>(&self, f: impl FnOnce() -> R) -> R {
        let permit = self.0.acquire().expect("never closed");
        let r = f();
        permit.release_fair();
        r
    }
    #[inline]
    fn try_hold(&self) -> bool {
        self.0.try_acquire().map(|p| p.release_fair()).is_ok()
    }
    fn own_counts(&self) -> Option<OwnCounts> {
        parksema_counts(&self.0)
    }
}

/// The three ways parking_lot offers a mutex, as peers of one version of the crate: `Mutex`
/// (0.12: barging, with an eventual-fairness timer that makes an unlock hand over about once
/// a millisecond; 0.13 removed the timer), `FairMutex` (every unlock that finds a parked
/// thread hands the lock over) and `Mutex` unlocked with `MutexGuard::unlock_fair` (the same
/// handoff, chosen per unlock).
macro_rules! parking_lot_peers {
    ($krate:ident, $version:literal, $mutex:ident, $fair:ident, $unlock_fair:ident) => {
        #[doc = concat!("`parking_lot::Mutex<()>` ", $version, ".")]
        pub struct $mutex($krate::Mutex<()>);

        impl Peer for $mutex {
            const NAME: &'static str = concat!("parking_lot ", $version, " Mutex");
            const ONE_PERMIT_ONLY: bool = true;
            fn with_permits(permits: usize) -> Self {
                assert_eq!(permits, 1, "a mutex has one permit");
                $mutex($krate::Mutex::new(()))
            }
            #[inline]
            fn hold<R>(&self, f: impl FnOnce() -> R) -> R {
                let _guard = self.0.lock();
                f()
            }
            #[inline]
            fn try_hold(&self) -> bool {
                self.0.try_lock().is_some()
            }
        }

        #[doc = concat!("`parking_lot::FairMutex<()>` ", $version, ".")]
        pub struct $fair($krate::FairMutex<()>);

        impl Peer for $fair {
            const NAME: &'static str = concat!("parking_lot ", $version, " FairMutex");
            const ONE_PERMIT_ONLY: bool = true;
            fn with_permits(permits: usize) -> Self {
                assert_eq!(permits, 1, "a mutex has one permit");
                $fair($krate::FairMutex::new(()))
            }
            #[inline]
            fn hold<R>(&self, f: impl FnOnce() -> R) -> R {
                let _guard = self.0.lock();
                f()
            }
            #[inline]
            fn try_hold(&self) -> bool {
                self.0.try_lock().is_some()
            }
        }

        #[doc = concat!("`parking_lot::Mutex<()>` ", $version, ", every unlock `unlock_fair`.")]
        pub struct $unlock_fair($krate::Mutex<()>);

        impl Peer for $unlock_fair {
            const NAME: &'static str = concat!("parking_lot ", $version, " unlock_fair");
            const ONE_PERMIT_ONLY: bool = true;
            fn with_permits(permits: usize) -> Self {
                assert_eq!(permits, 1, "a mutex has one permit");
                $unlock_fair($krate::Mutex::new(()))
            }
            #[inline]
            fn hold<R>(&self, f: impl FnOnce() -> R) -> R {
                let guard = self.0.lock();
                let r = f();
                $krate::MutexGuard::unlock_fair(guard);
                r
            }
            #[inline]
            fn try_hold(&self) -> bool {
                self.0
                    .try_lock()
                    .map($krate::MutexGuard::unlock_fair)
                    .is_some()
            }
        }

        debug_as_name! {
            $mutex => concat!("parking_lot ", $version, " Mutex"),
            $fair => concat!("parking_lot ", $version, " FairMutex"),
            $unlock_fair => concat!("parking_lot ", $version, " unlock_fair"),
        }
    };
}

parking_lot_peers!(
    parking_lot_0_12,
    "0.12",
    PlMutex012,
    PlFairMutex012,
    PlUnlockFair012
);
parking_lot_peers!(parking_lot, "0.13", PlMutex, PlFairMutex, PlUnlockFair);

/// `std::sync::Mutex<()>` (futex-based on Linux).
pub struct StdMutex(Mutex<()>);

impl Peer for StdMutex {
    const NAME: &'static str = "std::sync::Mutex";
    const ONE_PERMIT_ONLY: bool = true;
    fn with_permits(permits: usize) -> Self {
        assert_eq!(permits, 1, "a mutex has one permit");
        StdMutex(Mutex::new(()))
    }
    #[inline]
    fn hold<R>(&self, f: impl FnOnce() -> R) -> R {
        let _guard = self.0.lock().unwrap();
        f()
    }
    #[inline]
    fn try_hold(&self) -> bool {
        self.0.try_lock().is_ok()
    }
}

/// The floor of the wake-latency run: `thread::park` / `Thread::unpark` on a flag.
pub struct ParkFloor {
    flag: std::sync::atomic::AtomicBool,
    waiter: std::sync::OnceLock<std::thread::Thread>,
}

impl Signal for ParkFloor {
    const NAME: &'static str = "thread::park (floor)";
    fn empty() -> Self {
        ParkFloor {
            flag: std::sync::atomic::AtomicBool::new(false),
            waiter: std::sync::OnceLock::new(),
        }
    }
    fn prepare_taker(&self) {
        // Registered before the run (a barrier follows), so `give` always finds the taker.
        self.waiter
            .set(std::thread::current())
            .expect("one taker per ParkFloor");
    }
    fn take(&self) {
        use std::sync::atomic::Ordering;
        // Acquire: pairs with `give`'s Release swap.
        while !self.flag.swap(false, Ordering::Acquire) {
            std::thread::park();
        }
    }
    fn give(&self) {
        use std::sync::atomic::Ordering;
        self.flag.store(true, Ordering::Release);
        self.waiter
            .get()
            .expect("prepare_taker ran before the run")
            .unpark();
    }
}
