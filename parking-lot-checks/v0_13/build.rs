//! Generates parking_lot 0.13's lock modules from the published source (`parkcheck-gen`).

use parkcheck_gen as generate;

use generate::{File, Patch, Source};

include!("src/patches.rs");

fn main() {
    generate::build(SOURCES, PATCHES);
}

/// The files compiled here: the raw locks, the condition variable and `Once` (the rest of
/// parking_lot is `lock_api` type aliases, which `src/lib.rs` writes out, and deadlock
/// detection, which parkcheck does not model).
const SOURCES: &[Source] = &[Source {
    package: "parking_lot",
    version: "0.13.0",
    files: &[
        File {
            path: "raw_mutex.rs",
            module: "raw_mutex",
            root: false,
        },
        File {
            path: "raw_fair_mutex.rs",
            module: "raw_fair_mutex",
            root: false,
        },
        File {
            path: "raw_rwlock.rs",
            module: "raw_rwlock",
            root: false,
        },
        File {
            path: "raw_condvar.rs",
            module: "raw_condvar",
            root: false,
        },
        File {
            path: "condvar.rs",
            module: "condvar",
            root: false,
        },
        File {
            path: "once.rs",
            module: "once",
            root: false,
        },
    ],
}];
