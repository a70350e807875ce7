//! The backend switch: the only place in the library that names std atomics or
//! `parking_lot_core`.
//!
//! `semaphore.rs` imports everything it needs for synchronization from here, so the same
//! state machine can later be compiled against a model checker's atomics and a mocked park
//! table by adding a sibling of `real.rs` and selecting it in this file, without touching
//! the state machine.

mod real;

pub(crate) use real::*;
