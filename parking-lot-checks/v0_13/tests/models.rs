//! parking_lot 0.13's locks (generated from their published source, on parkcheck's model of
//! `parking_lot_core` 0.10) under loom or shuttle: `cargo test -p parkcheck-parking-lot-0-13
//! --features loom` (or `shuttle`). The models are `../models.rs`; their sizes are below.

#![cfg(any(feature = "loom", feature = "shuttle"))]

#[path = "../../models.rs"]
mod models;
#[path = "../../runner.rs"]
mod runner;

use parkcheck_parking_lot_0_13 as pl;

const VERSION: &str = "parking_lot 0.13.0";

/// The park-table settings each model runs under: the default (0.10 has no fair timer).
const SETTINGS: &[(&str, parkcheck::Settings)] = &[("default settings", DEFAULT)];

const DEFAULT: parkcheck::Settings = parkcheck::Settings::DEFAULT;

/// The lock a recursive read is taken on: 0.13's `RawRwLockRecursive` (0.13 makes recursion
/// a type of lock, where 0.12 had a method).
type RecursiveLock = lock_api::RwLock<pl::RawRwLockRecursive, ()>;

/// A recursive read of `lock`.
fn read_recursive(
    lock: &RecursiveLock,
) -> lock_api::RwLockReadGuard<'_, pl::RawRwLockRecursive, ()> {
    lock.read()
}

include!("../../tests.rs");
