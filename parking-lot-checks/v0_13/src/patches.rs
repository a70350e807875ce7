// The whole-line patches of the generated files beyond their `use` lines (`parkcheck-gen`),
// shared by `build.rs` and the `generated` test: none for parking_lot 0.13.

/// The patches, each with its reason.
#[allow(dead_code, reason = "read by the build script and the generated test")]
const PATCHES: &[Patch] = &[];
