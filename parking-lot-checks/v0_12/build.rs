//! Generates parking_lot 0.12's lock modules and rsevents' events from the published source (`parkcheck-gen`).

use parkcheck_gen as generate;

use generate::{File, Patch, Source};

include!("src/patches.rs");

fn main() {
    generate::build(SOURCES, PATCHES);
}

/// The files compiled here: parking_lot's raw locks, condition variable and `Once` (the rest
/// of parking_lot is `lock_api` type aliases, which `src/lib.rs` writes out, hardware lock
/// elision, off without its feature, and deadlock detection, which parkcheck does not
/// model), and rsevents (one file, its crate root, compiled as the module `rsevents`).
const SOURCES: &[Source] = &[
    Source {
        package: "parking_lot",
        version: "0.12.5",
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
    },
    Source {
        package: "rsevents",
        version: "0.3.1",
        files: &[File {
            path: "lib.rs",
            module: "rsevents",
            root: true,
        }],
    },
];
