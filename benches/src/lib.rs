//! Benchmarks of parksema against the semaphores a user would pick instead.
//!
//! `cargo xtask bench` runs the criterion micro-benchmarks (`benches/micro.rs`) and then the
//! `parksema-bench` binary (contention matrix, wake latency, sizes, the wait of a large
//! request behind small ones), which writes the
//! markdown report, the CSV files and the charts. The `fairness` binary runs the
//! experiment (who re-acquires a lock it just released) for each fairness mode and peer.

pub mod contention;
pub mod counters;
pub mod fairness;
pub mod floors;
pub mod latency;
pub mod peers;
pub mod report;
pub mod starvation;
