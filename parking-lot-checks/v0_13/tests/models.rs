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

/// The recursive-read model with 0.13's recursive read (`read` on `RawRwLockRecursive`:
/// 0.13 makes recursion a type of lock, where 0.12 had a method), and, for its catch, with a
/// plain read (`RawRwLock`).
fn recursive_read() {
    models::recursive_read_passes_a_waiting_writer::<pl::RawRwLockRecursive>(|lock| lock.read());
}

#[cfg_attr(
    not(feature = "loom"),
    allow(dead_code, reason = "the loom catch runs it")
)]
fn rwlock_recursive_read_made_plain() {
    models::recursive_read_passes_a_waiting_writer::<pl::RawRwLock>(|lock| lock.read());
}

include!("../../tests.rs");
