//! The real backend: std atomics and `parking_lot_core` 0.10, re-exported unchanged.

pub(crate) use parking_lot_core::{
    DEFAULT_PARK_TOKEN, DEFAULT_UNPARK_TOKEN, FilterOp, ParkResult, SpinWait, UnparkResult, park,
    unpark_filter,
};
#[cfg(feature = "broken_sema")]
pub(crate) use std::hint::spin_loop;
pub(crate) use std::sync::atomic::{AtomicUsize, Ordering, fence};

/// Declares a constructor that is a `const fn` in the real build.
///
/// Model checkers' atomics cannot be built in a `const` context, so a checker backend
/// defines this macro to emit a plain `fn` instead; the constructor's body is the same in
/// every build.
macro_rules! const_fn {
    ($(#[$attr:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty $body:block) => {
        $(#[$attr])* $vis const fn $name($($arg: $ty),*) -> $ret $body
    };
}
pub(crate) use const_fn;
