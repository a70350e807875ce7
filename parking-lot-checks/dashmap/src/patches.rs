// The whole-line patches of the generated files beyond their `use` lines (`parkcheck-gen`),
// shared by `build.rs` and the `generated` test. None for the published versions; the
// deliberate flaw the models are shown to catch is one.

/// The patches, each with its reason.
#[allow(dead_code, reason = "read by the build script and the generated test")]
const PATCHES: &[Patch] = &[Patch {
    file: "dashmap/flawed-reader-wakes-nobody/lock.rs",
    from: "        if state == (ONE_READER | WRITERS_PARKED) {",
    to: "        if false {",
    times: 1,
    why: "the deliberate flaw: the last reader to leave does not wake the parked writer",
}];
