//! The model checker in use (loom or shuttle): its lock, atomics, threads and per-execution
//! statics, under one set of names for `model.rs`.

#[cfg(feature = "loom")]
pub(crate) use loom::{
    hint::spin_loop,
    lazy_static,
    sync::{Mutex, MutexGuard, atomic::AtomicBool},
    thread, thread_local,
};

#[cfg(all(feature = "shuttle", not(feature = "loom")))]
pub(crate) use shuttle::{
    hint::spin_loop,
    lazy_static,
    sync::{Mutex, MutexGuard, atomic::AtomicBool},
    thread, thread_local,
};
