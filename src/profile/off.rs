//! The contention profile's hooks without the feature (or under the checkers): empty, so
//! every call compiles to nothing. Not mutated (`.cargo/mutants.toml`): the mutants runs
//! build with the feature on, where this file is not compiled.

use super::Outcome;

/// The hooks of one contended acquire: nothing.
#[derive(Debug)]
pub(crate) struct Acquire;

impl Acquire {
    #[inline(always)]
    pub(crate) fn start() -> Self {
        Acquire
    }
    #[inline(always)]
    pub(crate) fn spun(&mut self) {}
    #[inline(always)]
    pub(crate) fn parked(&mut self) {}
    #[inline(always)]
    pub(crate) fn woken(&mut self) {}
    #[inline(always)]
    pub(crate) fn handed(&mut self) {}
    #[inline(always)]
    pub(crate) fn finish(self, key: usize, outcome: Outcome) {
        let _ = (key, outcome);
    }
}
