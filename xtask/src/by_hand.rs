//! Mutants that `cargo mutants` cannot make: memory orderings, literals and constants,
//! arguments and method calls. Each is applied by hand to a copy of the workspace and run
//! against the check that should catch it; `cargo xtask mutants --by-hand` reports which
//! were caught and writes `mutants/by-hand.md`.

/// One hand-made mutant.
pub(crate) struct HandMutant {
    /// A short name.
    pub(crate) id: &'static str,
    /// The file it changes, relative to the workspace root.
    pub(crate) file: &'static str,
    /// The original text, which must occur exactly once in `file`.
    pub(crate) find: &'static str,
    /// What replaces it.
    pub(crate) replace: &'static str,
    /// The check that must fail: which build and which tests.
    pub(crate) check: Check,
}

/// A check: the `cargo test` arguments that run it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Check {
    /// Shown in the report.
    pub(crate) name: &'static str,
    /// Arguments after `cargo`.
    pub(crate) args: &'static [&'static str],
}

const LOOM_VISIBILITY: Check = Check {
    name: "loom `visibility` (g)",
    args: &[
        "test",
        "--features",
        "loom",
        "--test",
        "loom",
        "--",
        "--exact",
        "visibility",
    ],
};
const LOOM_CLOSE_PUBLISHES: Check = Check {
    name: "loom `close_publishes` (h)",
    args: &[
        "test",
        "--features",
        "loom",
        "--test",
        "loom",
        "--",
        "--exact",
        "close_publishes",
    ],
};
const REAL: Check = Check {
    name: "real build: `cargo test -p parksema` (the mutants suite)",
    args: &["test", "-p", "parksema", "--features", "broken_sema"],
};

/// The hand-made mutants, in the order of `mutants/README.md`'s list.
pub(crate) const MUTANTS: &[HandMutant] = &[
    // Orderings: each Acquire/Release that pairs with another, weakened to Relaxed (a fence
    // is deleted, since `fence(Relaxed)` panics).
    HandMutant {
        id: "take_one: Acquire CAS -> Relaxed",
        file: "src/semaphore.rs",
        find: "self.permit_ordering(Ordering::Acquire)",
        replace: "self.permit_ordering(Ordering::Relaxed)",
        check: LOOM_VISIBILITY,
    },
    HandMutant {
        id: "try_add_permits: Release CAS -> Relaxed",
        file: "src/semaphore.rs",
        find: "self.permit_ordering(Ordering::Release)",
        replace: "self.permit_ordering(Ordering::Relaxed)",
        check: LOOM_VISIBILITY,
    },
    HandMutant {
        id: "close: Release fetch_or -> Relaxed",
        file: "src/semaphore.rs",
        find: "fetch_or(CLOSED, Ordering::Release)",
        replace: "fetch_or(CLOSED, Ordering::Relaxed)",
        check: LOOM_CLOSE_PUBLISHES,
    },
    HandMutant {
        id: "is_closed: Acquire load -> Relaxed",
        file: "src/semaphore.rs",
        find: "self.state.load(Ordering::Acquire) & CLOSED != 0",
        replace: "self.state.load(Ordering::Relaxed) & CLOSED != 0",
        check: LOOM_CLOSE_PUBLISHES,
    },
    HandMutant {
        id: "try_acquire_one: Acquire fence on CLOSED deleted",
        file: "src/semaphore.rs",
        find: "                fence(Ordering::Acquire);\n                return Err(TryAcquireError::Closed);",
        replace: "                return Err(TryAcquireError::Closed);",
        check: LOOM_CLOSE_PUBLISHES,
    },
    HandMutant {
        id: "acquire_slow: Acquire fence on CLOSED deleted",
        file: "src/semaphore.rs",
        find: "                fence(Ordering::Acquire);\n                return Err(AcquireError::new());",
        replace: "                return Err(AcquireError::new());",
        check: LOOM_CLOSE_PUBLISHES,
    },
    // Literals and constants.
    HandMutant {
        id: "CLOSED = WAITERS's bit (0b010 -> 0b001)",
        file: "src/semaphore.rs",
        find: "const CLOSED: usize = 0b010;",
        replace: "const CLOSED: usize = 0b001;",
        check: REAL,
    },
    HandMutant {
        id: "FLAG_BITS 3 -> 2 (ONE and MAX_PERMITS change)",
        file: "src/semaphore.rs",
        find: "const FLAG_BITS: u32 = 3;",
        replace: "const FLAG_BITS: u32 = 2;",
        check: REAL,
    },
    HandMutant {
        id: "FLAG_BITS 3 -> 4",
        file: "src/semaphore.rs",
        find: "const FLAG_BITS: u32 = 3;",
        replace: "const FLAG_BITS: u32 = 4;",
        check: REAL,
    },
    HandMutant {
        id: "parked_threads counts from 1",
        file: "src/semaphore.rs",
        find: "let mut parked = 0;",
        replace: "let mut parked = 1;",
        check: REAL,
    },
    // Arguments and method calls.
    HandMutant {
        id: "a release wakes one thread, not n",
        file: "src/semaphore.rs",
        find: "self.unpark_waiters(n);",
        replace: "self.unpark_waiters(1);",
        check: REAL,
    },
    HandMutant {
        id: "close wakes one thread, not all",
        file: "src/semaphore.rs",
        find: "self.unpark_waiters(usize::MAX);",
        replace: "self.unpark_waiters(1);",
        check: REAL,
    },
    HandMutant {
        id: "close toggles CLOSED (fetch_or -> fetch_xor)",
        file: "src/semaphore.rs",
        find: "fetch_or(CLOSED, Ordering::Release)",
        replace: "fetch_xor(CLOSED, Ordering::Release)",
        check: REAL,
    },
    HandMutant {
        id: "the unpark callback sets instead of clearing WAITERS (fetch_and -> fetch_or)",
        file: "src/semaphore.rs",
        find: "fetch_and(!WAITERS, Ordering::Relaxed)",
        replace: "fetch_or(WAITERS, Ordering::Relaxed)",
        check: REAL,
    },
];
