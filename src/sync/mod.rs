//! The backend switch: the only place in the library that names std atomics,
//! `parking_lot_core`, loom or shuttle.
//!
//! `semaphore/` imports everything it needs for synchronization from here, so the same
//! state machine compiles unchanged against:
//!
//! - `real.rs` (default): std atomics and `parking_lot_core` 0.10;
//! - under the features `loom` or `shuttle`: the checker's atomics (`checker.rs`) and the
//!   workspace crate `parkcheck`, `parking_lot_core` 0.10's park table modelled on that
//!   checker, adopted by the one import below.
//!
//! `model` (feature `test-support` only) gives the verification suite's scenario bodies the
//! matching threads, `Arc` and atomics, so one body runs under every build.

#[cfg(all(feature = "loom", feature = "shuttle"))]
compile_error!(
    "the `loom` and `shuttle` features are mutually exclusive: each replaces the semaphore's \
     atomics and park table with its own checker's; enable one at a time"
);

#[cfg(not(any(feature = "loom", feature = "shuttle")))]
mod real;
#[cfg(not(any(feature = "loom", feature = "shuttle")))]
pub(crate) use real::*;

#[cfg(any(feature = "loom", feature = "shuttle"))]
mod checker;
#[cfg(any(feature = "loom", feature = "shuttle"))]
pub(crate) use checker::*;

// The park table under the checkers: parkcheck has parking_lot_core's API and contract, so
// this import is the whole switch.
#[cfg(any(feature = "loom", feature = "shuttle"))]
use parkcheck as parking_lot_core;
#[cfg(any(feature = "loom", feature = "shuttle"))]
pub(crate) use parking_lot_core::{
    DEFAULT_UNPARK_TOKEN, FilterOp, ParkResult, ParkToken, SpinWait, UnparkResult, UnparkToken,
    const_fn, now, park, unpark_filter,
};

#[cfg(feature = "test-support")]
pub mod model;
