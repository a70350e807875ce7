//! parking_lot 0.12's locks (generated from their published source, on parkcheck's model of
//! `parking_lot_core` 0.9) under loom or shuttle: `cargo test -p parkcheck-parking-lot-0-12
//! --features loom` (or `shuttle`). The models are `../models.rs`; their sizes are below.

#![cfg(any(feature = "loom", feature = "shuttle"))]

#[path = "../../models.rs"]
mod models;
#[path = "../../runner.rs"]
mod runner;

use parkcheck_parking_lot_0_12 as pl;

const VERSION: &str = "parking_lot 0.12.5";

/// The park-table settings each model runs under: each fair timer, so that parking_lot
/// 0.12's unlocks take both their paths (a fair handoff when `be_fair` is set, a plain
/// unlock otherwise).
const SETTINGS: &[(&str, parkcheck::Settings)] = &[
    ("be_fair by the clock", fair(parkcheck::FairTimer::Clock)),
    ("be_fair always", fair(parkcheck::FairTimer::Always)),
    ("be_fair never", fair(parkcheck::FairTimer::Never)),
];

const fn fair(fair_timer: parkcheck::FairTimer) -> parkcheck::Settings {
    let mut settings = parkcheck::Settings::DEFAULT;
    settings.fair_timer = fair_timer;
    settings
}

/// The recursive-read model with 0.12's recursive read (`read_recursive`), and, for its
/// catch, with a plain read.
fn recursive_read() {
    models::recursive_read_passes_a_waiting_writer::<pl::RawRwLock>(|lock| lock.read_recursive());
}

#[cfg_attr(
    not(feature = "loom"),
    allow(dead_code, reason = "the loom catch runs it")
)]
fn rwlock_recursive_read_made_plain() {
    models::recursive_read_passes_a_waiting_writer::<pl::RawRwLock>(|lock| lock.read());
}

include!("../../tests.rs");
