//! parking_lot 0.13's raw locks, condition variable and `Once`, compiled from the published
//! source of parking_lot 0.13.0 with two changes made by the build script (`parkcheck-gen`):
//! their atomics are the checker's (`parkcheck-shim`) and their `parking_lot_core` (0.10) is
//! parkcheck's model of it. Without a checker feature they are parking_lot's own code on the
//! real crate and std's atomics. What the files take from the rest of their crate is written
//! out here.

/// The checker's atomics for the generated modules' `use` lines (`parkcheck-shim`).
use parkcheck_shim as shim;

/// The park table the generated modules call: parkcheck's model of `parking_lot_core` 0.10
/// under a checker, the real crate otherwise.
use parkcheck as parking_lot_core;

include!(concat!(env!("OUT_DIR"), "/modules.rs"));

/// The deliberate flaw the models are shown to catch: every shimmed atomic `Relaxed`, every
/// fence dropped, for the run `f` makes (`parkcheck-shim`). Never for checking code.
#[cfg(any(feature = "loom", feature = "shuttle"))]
#[doc(hidden)]
pub use shim::atomic::with_relaxed_orderings;

/// What parking_lot's `util` module gives the files.
mod util {
    use std::time::{Duration, Instant};

    /// Runs `f`; a panic out of it aborts the process (parking_lot's rule: a panic while
    /// lock ownership changes hands would leave the lock in an unknown state).
    pub(crate) fn abort_on_panic<T>(f: impl FnOnce() -> T) -> T {
        struct AbortOnDrop;
        impl Drop for AbortOnDrop {
            fn drop(&mut self) {
                panic!("aborting due to panic while changing lock ownership");
            }
        }
        let guard = AbortOnDrop;
        let result = f();
        std::mem::forget(guard);
        result
    }

    /// A deadline `timeout` from now, on parkcheck's clock (the mocked one under a
    /// checker, which only `parkcheck::advance_clock` moves; `Instant::now` otherwise).
    pub(crate) fn to_deadline(timeout: Duration) -> Option<Instant> {
        parkcheck::now().checked_add(timeout)
    }
}

/// What parking_lot's `deadlock` module gives the files: parkcheck's resource calls, which
/// check that they are not made from a park-table callback.
mod deadlock {
    /// # Safety
    ///
    /// As `parking_lot_core::deadlock::acquire_resource`.
    pub(crate) unsafe fn acquire_resource(key: usize) {
        // SAFETY: the caller's promise.
        unsafe { parkcheck::deadlock::acquire_resource(key) }
    }

    /// # Safety
    ///
    /// As `parking_lot_core::deadlock::release_resource`.
    pub(crate) unsafe fn release_resource(key: usize) {
        // SAFETY: the caller's promise.
        unsafe { parkcheck::deadlock::release_resource(key) }
    }
}

/// parking_lot's guard marker without its `send_guard` feature.
type GuardMarker = lock_api::GuardNoSend;

pub use condvar::{Condvar, WaitTimeoutResult};
pub use once::{Once, OnceState};
pub use raw_condvar::RawCondvar;
pub use raw_fair_mutex::RawFairMutex;
pub use raw_mutex::RawMutex;
pub use raw_rwlock::{RawRwLock, RawRwLockRecursive};

/// parking_lot's `Mutex`.
pub type Mutex<T> = lock_api::Mutex<RawMutex, T>;
/// parking_lot's `MutexGuard`.
pub type MutexGuard<'a, T> = lock_api::MutexGuard<'a, RawMutex, T>;
/// parking_lot's `FairMutex`.
pub type FairMutex<T> = lock_api::Mutex<RawFairMutex, T>;
/// parking_lot's `RwLock`.
pub type RwLock<T> = lock_api::RwLock<RawRwLock, T>;
