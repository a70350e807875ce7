//! Generates parking_lot 0.12's lock modules from its published source (`../gen.rs`).

#[path = "../gen.rs"]
mod generate;

fn main() {
    generate::build("parking_lot", "0.12.5", FILES);
}

/// The files compiled here: the raw locks, the condition variable and `Once` (the rest of
/// parking_lot is `lock_api` type aliases, which `src/lib.rs` writes out, hardware lock
/// elision, which is off without its feature, and deadlock detection, which parkcheck does
/// not model).
const FILES: &[&str] = &[
    "raw_mutex.rs",
    "raw_fair_mutex.rs",
    "raw_rwlock.rs",
    "condvar.rs",
    "once.rs",
];
