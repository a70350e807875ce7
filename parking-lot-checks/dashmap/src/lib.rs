//! dashmap's own `RawRwLock` (`src/lock.rs`) at every published version built on
//! `parking_lot_core` (5.3.4 to 7.0.0-rc2, and 6.2.1), compiled from the registry's source
//! with one change made by the build script (`parkcheck-gen`): its atomics are the checker's
//! (`parkcheck-shim`). Its `parking_lot_core` is parkcheck's model of it through the
//! dependency's name (`Cargo.toml`). Versions whose file is the same text share one module
//! ([`VERSIONS`]); [`FLAWED_READER_WAKES_NOBODY`] is a deliberately broken copy, for showing
//! that the models catch a lost wake-up. Without a checker feature it is dashmap's own code
//! on the real crate and std's atomics. What the file takes from the rest of its crate is
//! written out here.

/// The checker's atomics for the generated modules' `use` lines (`parkcheck-shim`).
use parkcheck_shim as shim;

/// The plain cell the models protect with the lock (`parkcheck-shim`).
pub use parkcheck_shim::DataCell;

/// parkcheck, which the models run on: a dependency here under the name dashmap calls it
/// by, `parking_lot_core`; the file's `use parking_lot_core::…` line (rewritten to
/// `crate::parking_lot_core::…`) reaches it through this import.
pub use ::parking_lot_core as parkcheck;
use ::parking_lot_core;

/// The deliberate flaw the models are shown to catch under loom: every shimmed atomic
/// `Relaxed`, for the run `f` makes. Never for checking code.
#[cfg(any(feature = "loom", feature = "shuttle"))]
#[doc(hidden)]
pub use shim::atomic::with_relaxed_orderings;

/// What dashmap 7's `util` module gives the file: its detached guard types, which the file
/// names in two type aliases and nothing here uses.
mod util {
    use core::marker::PhantomData;

    /// dashmap 7's read guard without its data.
    #[allow(dead_code, reason = "named by a type alias only")]
    pub(crate) struct RwLockReadGuardDetached<'a, R>(PhantomData<&'a R>);

    /// dashmap 7's write guard without its data.
    #[allow(dead_code, reason = "named by a type alias only")]
    pub(crate) struct RwLockWriteGuardDetached<'a, R>(PhantomData<&'a R>);
}

/// One version's `RwLock<DataCell>` (`lock_api::RwLock` on its `RawRwLock`), through the
/// calls dashmap's shards make.
pub trait Lock: Send + Sync {
    /// Write-locks (parking while it must), runs `f` on the data, unlocks.
    fn write(&self, f: &mut dyn FnMut(&DataCell));
    /// Read-locks (parking while it must), runs `f` on the data, unlocks.
    fn read(&self, f: &mut dyn FnMut(&DataCell));
    /// Write-locks if it is free now: runs `f` and unlocks, and says whether it did.
    fn try_write(&self, f: &mut dyn FnMut(&DataCell)) -> bool;
    /// Write-locks, runs `write`, downgrades to a read lock (readers waiting may enter),
    /// runs `read`, unlocks.
    fn write_then_downgrade(
        &self,
        write: &mut dyn FnMut(&DataCell),
        read: &mut dyn FnMut(&DataCell),
    );
}

impl<R> Lock for lock_api::RwLock<R, DataCell>
where
    R: lock_api::RawRwLockDowngrade + Send + Sync,
{
    fn write(&self, f: &mut dyn FnMut(&DataCell)) {
        f(&self.write());
    }

    fn read(&self, f: &mut dyn FnMut(&DataCell)) {
        f(&self.read());
    }

    fn try_write(&self, f: &mut dyn FnMut(&DataCell)) -> bool {
        self.try_write().map(|guard| f(&guard)).is_some()
    }

    fn write_then_downgrade(
        &self,
        write: &mut dyn FnMut(&DataCell),
        read: &mut dyn FnMut(&DataCell),
    ) {
        let guard = self.write();
        write(&guard);
        let guard = lock_api::RwLockWriteGuard::downgrade(guard);
        read(&guard);
    }
}

/// One distinct text of `lock.rs`.
#[derive(Debug)]
pub struct Source {
    /// The published versions whose file it is.
    pub versions: &'static [&'static str],
    /// A new, unlocked lock of it around a cell holding 0.
    pub new: fn() -> Box<dyn Lock>,
}

include!(concat!(env!("OUT_DIR"), "/modules.rs"));
