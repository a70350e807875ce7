//! The records the checks write while they run, and the report `cargo xtask verify` makes of
//! them.
//!
//! Every check that runs under `cargo xtask verify` appends one JSON object per line to the
//! file named by `PARKSEMA_REPORT` (the test side is `watchdog::report`; the Miri and TSan
//! columns are written by this crate itself). Three kinds of record:
//!
//! - `check`: a check ran against the correct semaphore, with its size (`count` of `unit`:
//!   loom executions, shuttle schedules, stress operations, proptest cases) and its time;
//! - `cell`: a check ran against a deliberate flaw; `caught` is the failure it reported in a
//!   few words, or `null` if it passed;
//! - `coverage`: how many runs of a search (the generated programs of a build) reached a
//!   named protocol situation, and whether the check requires one to.

use serde::{Deserialize, Serialize};

/// One line of the records file.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Record {
    /// A check run against the correct semaphore.
    Check {
        /// `real`, `loom`, `shuttle`, `proptest`, `miri` or `tsan`.
        build: String,
        /// The check's name (the test's name, or the scenario's).
        check: String,
        /// Its size, in `unit`s.
        count: u64,
        /// `executions`, `schedules`, `operations`, `cases`, `rounds`, ...
        unit: String,
        /// Anything else that defines its size (a loom bound, a seed).
        #[serde(default)]
        detail: String,
        /// Seconds it took.
        secs: f64,
    },
    /// A check run against a deliberate flaw.
    Cell {
        /// As in `Check`.
        build: String,
        /// As in `Check`.
        check: String,
        /// The flaw's name (`parksema::Flaw`'s variant).
        flaw: String,
        /// The failure reported, in a few words; `None`: the check passed (did not catch).
        caught: Option<String>,
        /// Seconds to the failure (or to the end of the passing run).
        secs: f64,
    },
    /// How many runs of a search (generated programs) reached one protocol situation.
    Coverage {
        /// As in `Check`.
        build: String,
        /// As in `Check`.
        check: String,
        /// The situation's name (`models/spec.rs`, `SITUATIONS`).
        situation: String,
        /// Runs that reached it.
        count: u64,
        /// Runs in all.
        runs: u64,
        /// Whether the check fails when no run reaches it.
        required: bool,
    },
}
