//! parking_lot 0.12's raw locks, condition variable and `Once`, and rsevents 0.3's events,
//! compiled from the published source of parking_lot 0.12.5 and rsevents 0.3.1 with two
//! changes made by the build script (`parkcheck-gen`): their atomics are the checker's
//! (`parkcheck-shim`) and their `parking_lot_core` (0.9) is parkcheck's model of it
//! (`parkcheck::v0_9`); rsevents' crate root, compiled as the module `rsevents`, also has
//! its `use crate::` lines pointed there and the two patches of `src/patches.rs`. Without a checker feature they are
//! parking_lot's own code on the real crate and std's atomics. What the files take from the
//! rest of their crate is written out here.

/// The checker's atomics for the generated modules' `use` lines (`parkcheck-shim`).
use parkcheck_shim as shim;

/// The park table the generated modules call: parkcheck's model of `parking_lot_core` 0.9
/// under a checker, the real crate otherwise.
use parkcheck::v0_9 as parking_lot_core;

include!(concat!(env!("OUT_DIR"), "/modules.rs"));

/// The deliberate flaw the models are shown to catch: every shimmed atomic `Relaxed`, every
/// fence dropped, for the run `f` makes (`parkcheck-shim`). Never for checking code.
#[cfg(any(feature = "loom", feature = "shuttle"))]
#[doc(hidden)]
pub use shim::atomic::with_relaxed_orderings;

/// What parking_lot's `util` module gives the files.
mod util {
    use std::time::{Duration, Instant};

    /// `Option::unwrap` where the caller knows the value is there (parking_lot's own is
    /// `unreachable_unchecked` in release builds; this one panics, which only a bug in the
    /// checked code reaches).
    pub(crate) trait UncheckedOptionExt<T> {
        /// The value.
        ///
        /// # Safety
        ///
        /// `self` is `Some`.
        unsafe fn unchecked_unwrap(self) -> T;
    }

    impl<T> UncheckedOptionExt<T> for Option<T> {
        unsafe fn unchecked_unwrap(self) -> T {
            self.expect("unchecked_unwrap on None: the caller's promise is broken")
        }
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
    pub(crate) use parkcheck::v0_9::deadlock::{acquire_resource, release_resource};
}

/// What parking_lot's `elision` module gives the files without its `hardware-lock-elision`
/// feature: no elision (so its two operations are never called).
mod elision {
    use crate::shim::atomic::AtomicUsize;

    /// Whether to use hardware lock elision: never here.
    pub(crate) fn have_elision() -> bool {
        false
    }

    /// The elided operations, which `have_elision() == false` keeps from being called.
    pub(crate) trait AtomicElisionExt {
        type IntType;
        fn elision_compare_exchange_acquire(
            &self,
            current: Self::IntType,
            new: Self::IntType,
        ) -> Result<Self::IntType, Self::IntType>;
        fn elision_fetch_sub_release(&self, val: Self::IntType) -> Self::IntType;
    }

    impl AtomicElisionExt for AtomicUsize {
        type IntType = usize;

        fn elision_compare_exchange_acquire(&self, _: usize, _: usize) -> Result<usize, usize> {
            unreachable!("have_elision() is false");
        }

        fn elision_fetch_sub_release(&self, _: usize) -> usize {
            unreachable!("have_elision() is false");
        }
    }
}

/// What parking_lot's `mutex` module gives `condvar.rs`.
mod mutex {
    /// parking_lot's `MutexGuard`.
    pub type MutexGuard<'a, T> = lock_api::MutexGuard<'a, crate::RawMutex, T>;
}

/// parking_lot's guard marker without its `send_guard` feature.
type GuardMarker = lock_api::GuardNoSend;

pub use condvar::{Condvar, WaitTimeoutResult};
pub use mutex::MutexGuard;
pub use once::{Once, OnceState};
pub use raw_fair_mutex::RawFairMutex;
pub use raw_mutex::RawMutex;
pub use raw_rwlock::RawRwLock;
pub use rsevents::{AutoResetEvent, Awaitable, EventState, ManualResetEvent};

/// parking_lot's `Mutex`.
pub type Mutex<T> = lock_api::Mutex<RawMutex, T>;
/// parking_lot's `FairMutex`.
pub type FairMutex<T> = lock_api::Mutex<RawFairMutex, T>;
/// parking_lot's `RwLock`.
pub type RwLock<T> = lock_api::RwLock<RawRwLock, T>;
