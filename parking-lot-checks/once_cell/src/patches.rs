// The whole-line patches of the generated files beyond their `use` lines (`parkcheck-gen`),
// shared by `build.rs` and the `generated` test. None for the published versions; the
// deliberate flaw the models are shown to catch is one.

/// The patches, each with its reason.
#[allow(dead_code, reason = "read by the build script and the generated test")]
const PATCHES: &[Patch] = &[Patch {
    file: "once_cell/flawed-no-wake-up/imp_pl.rs",
    from: "            parking_lot_core::unpark_all(key, parking_lot_core::DEFAULT_UNPARK_TOKEN);",
    to: "            let _ = key;",
    times: 1,
    why: "the deliberate flaw: the latest version's guard publishes the new state but wakes \
          nobody, so a thread parked in `initialize` or `wait` is never woken",
}];
