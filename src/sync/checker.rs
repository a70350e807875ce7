//! The model checker in use (loom or shuttle): its atomics, locks, threads and per-execution
//! statics, under one set of names for `mock.rs` and `model.rs`.

#[cfg(all(feature = "loom", feature = "broken_sema"))]
pub(crate) use loom::hint::spin_loop as flaw_window;
#[cfg(feature = "loom")]
pub(crate) use loom::{
    lazy_static,
    sync::Mutex,
    sync::atomic::{AtomicU64, AtomicUsize, Ordering, fence},
    thread, thread_local,
};

#[cfg(all(feature = "shuttle", not(feature = "loom"), feature = "broken_sema"))]
pub(crate) use shuttle::hint::spin_loop as flaw_window;
#[cfg(all(feature = "shuttle", not(feature = "loom")))]
pub(crate) use shuttle::{
    lazy_static,
    sync::Mutex,
    sync::atomic::{AtomicU64, AtomicUsize, Ordering, fence},
    thread, thread_local,
};

/// Declares a constructor: a plain `fn` under the checkers, whose atomics cannot be built in a
/// `const` context (the real build makes it a `const fn`).
macro_rules! const_fn {
    ($(#[$attr:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty $body:block) => {
        $(#[$attr])* $vis fn $name($($arg: $ty),*) -> $ret $body
    };
}
pub(crate) use const_fn;
