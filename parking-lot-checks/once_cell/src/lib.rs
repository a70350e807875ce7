//! once_cell's `parking_lot` `OnceCell` (`src/imp_pl.rs`) at every published version built on
//! `parking_lot_core` (1.11.0 to 1.21.4), compiled from the registry's source with one
//! change made by the build script (`parkcheck-gen`): its atomics are the checker's
//! (`parkcheck-shim`). Its `parking_lot_core` is parkcheck's model of it through the
//! dependency's name (`Cargo.toml`). Versions whose file is the same text share one module
//! ([`VERSIONS`]); [`FLAWED_NO_WAKE_UP`] is a deliberately broken copy of the latest, for
//! showing that the models catch a lost wake-up. Without a checker feature it is once_cell's
//! own code on the real crate and std's atomics. What the file takes from the rest of its
//! crate is written out here.

/// The checker's atomics for the generated modules' `use` lines (`parkcheck-shim`).
use parkcheck_shim as shim;

/// parkcheck, which the models run on: a dependency here under the name once_cell calls it
/// by, `parking_lot_core`.
pub use parking_lot_core as parkcheck;

/// The deliberate flaw the models are shown to catch under loom: every shimmed atomic
/// `Relaxed`, for the run `f` makes. Never for checking code.
#[cfg(any(feature = "loom", feature = "shuttle"))]
#[doc(hidden)]
pub use shim::atomic::with_relaxed_orderings;

/// once_cell's `take_unchecked` (1.11 to 1.16), which its `initialize` calls: here a panic
/// where once_cell's is undefined behaviour, which only a bug in the checked code reaches.
///
/// # Safety
///
/// `val` is `Some`.
unsafe fn take_unchecked<T>(val: &mut Option<T>) -> T {
    val.take()
        .expect("take_unchecked on None: the caller's promise is broken")
}

/// once_cell's `unwrap_unchecked` (1.17 and 1.18), as [`take_unchecked`].
///
/// # Safety
///
/// `val` is `Some`.
unsafe fn unwrap_unchecked<T>(val: Option<T>) -> T {
    val.expect("unwrap_unchecked on None: the caller's promise is broken")
}

/// The value the models store: a plain cell the checker watches (`parkcheck-shim`'s
/// `DataCell`: under loom, a read not ordered after the write is a race it reports).
#[derive(Debug)]
pub struct Value(shim::DataCell);

impl Value {
    /// A value holding `v`, written by the calling thread.
    pub fn new(v: u32) -> Value {
        let value = Value(shim::DataCell::new());
        value.0.set(v as usize);
        value
    }

    /// What the value holds (under loom, a race if this read is not ordered after the write).
    pub fn read(&self) -> u32 {
        self.0.get() as u32
    }
}

/// What an initializer that fails returns (once_cell's `get_or_try_init` passes it through).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InitError;

/// One version's `OnceCell<Value>`, through the calls its `sync::OnceCell` makes.
pub trait Cell: Send + Sync {
    /// `initialize`: runs `f` unless the cell is (or becomes) initialized, at most one
    /// caller at a time; the others park until it is done.
    fn initialize(
        &self,
        f: Box<dyn FnOnce() -> Result<Value, InitError> + '_>,
    ) -> Result<(), InitError>;
    /// `wait` (from 1.12.0): returns once the cell is initialized. Panics on a version
    /// without it ([`Source::has_wait`]).
    fn wait(&self);
    /// `is_initialized`.
    fn is_initialized(&self) -> bool;
    /// The value, if `is_initialized` says there is one (`get_unchecked` after it, as
    /// `sync::OnceCell::get` does).
    fn get(&self) -> Option<&Value>;
}

/// One distinct text of `imp_pl.rs`.
#[derive(Debug)]
pub struct Source {
    /// The published versions whose file it is.
    pub versions: &'static [&'static str],
    /// Whether it has `wait` (1.12.0 on).
    pub has_wait: bool,
    /// A new, empty cell of it.
    pub new: fn() -> Box<dyn Cell>,
}

/// `Cell` for one generated module.
macro_rules! adapt {
    ($module:ident, true) => {
        adapt!($module, self_ => self_.wait());
    };
    ($module:ident, false) => {
        adapt!($module, _self => unreachable!("this version of once_cell has no `wait`"));
    };
    ($module:ident, $me:ident => $wait:expr) => {
        impl Cell for $module::OnceCell<Value> {
            fn initialize(
                &self,
                f: Box<dyn FnOnce() -> Result<Value, InitError> + '_>,
            ) -> Result<(), InitError> {
                $module::OnceCell::initialize(self, f)
            }

            fn wait(&self) {
                let $me = self;
                $wait
            }

            fn is_initialized(&self) -> bool {
                $module::OnceCell::is_initialized(self)
            }

            fn get(&self) -> Option<&Value> {
                // SAFETY: `is_initialized` read `COMPLETE` with `Acquire`, which orders the
                // value's write before this read (the contract of `get_unchecked`).
                self.is_initialized()
                    .then(|| unsafe { $module::OnceCell::get_unchecked(self) })
            }
        }
    };
}

include!(concat!(env!("OUT_DIR"), "/modules.rs"));
