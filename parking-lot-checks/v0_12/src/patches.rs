// The whole-line patches of the generated files beyond their `use` lines (`parkcheck-gen`),
// shared by `build.rs` and the `generated` test. None for parking_lot 0.12; rsevents' two.

/// The patches, each with its reason.
#[allow(dead_code, reason = "read by the build script and the generated test")]
const PATCHES: &[Patch] = &[
    Patch {
        file: "rsevents/lib.rs",
        from: "        let timeout = timeout.map(|duration| Instant::now() + duration);",
        to: "        let timeout = timeout.map(|duration| parkcheck::now() + duration);",
        times: 2,
        why: "rsevents computes its deadlines from `Instant::now`; under a checker they must \
              come from parkcheck's mocked clock, which `advance_clock` moves",
    },
    Patch {
        file: "rsevents/lib.rs",
        from: "mod tests;",
        to: "mod tests {}",
        times: 1,
        why: "its `#[cfg(test)]` module is a file of its own (`src/tests.rs`), not generated; \
              an empty one keeps a test build of the library compiling",
    },
];
