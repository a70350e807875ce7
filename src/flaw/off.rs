//! The flaw seam without `broken_sema`: every hook is the correct decision, on a zero-sized
//! type, so each call compiles to what the protocol would do with no hook at all. Not mutated
//! (`.cargo/mutants.toml`): the mutants runs build with `broken_sema` on, where this file is
//! not compiled.

use std::fmt;
use std::time::Instant;

use crate::sync::{AtomicUsize, FilterOp, Ordering, UnparkResult};

/// No flaw.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot;

impl Slot {
    pub(crate) const NONE: Slot = Slot;

    #[inline(always)]
    pub(crate) fn debug_field(self, d: &mut fmt::DebugStruct<'_, '_>) {
        let _ = d;
    }
    #[inline(always)]
    pub(crate) fn take(
        self,
        state: &AtomicUsize,
        seen: usize,
        n: usize,
    ) -> Option<Result<usize, usize>> {
        let _ = (state, seen, n);
        None
    }
    #[inline(always)]
    pub(crate) fn permit_ordering(self, correct: Ordering) -> Ordering {
        correct
    }
    #[inline(always)]
    pub(crate) fn release_ordering(self, seen: usize, correct: Ordering) -> Ordering {
        let _ = seen;
        correct
    }
    #[inline(always)]
    pub(crate) fn gives_up_when_woken(self, deadline: Option<Instant>) -> bool {
        let _ = deadline;
        false
    }
    #[inline(always)]
    pub(crate) fn announces_before_park(self, correct: bool) -> bool {
        correct
    }
    #[inline(always)]
    pub(crate) fn stale_read(self, state: &AtomicUsize) -> Option<Stale> {
        let _ = state;
        None
    }
    #[inline(always)]
    pub(crate) fn returned_to_count(self, own: usize, handed: usize) -> usize {
        let _ = handed;
        own
    }
    #[inline(always)]
    pub(crate) fn not_fitting(self, correct: FilterOp) -> FilterOp {
        correct
    }
    #[inline(always)]
    pub(crate) fn clears_waiters(self, result: &UnparkResult, correct: bool) -> bool {
        let _ = result;
        correct
    }
}

/// A stale read that never happens: the branch that would use one is dead, and the compiler
/// knows it.
pub(crate) enum Stale {}

impl Stale {
    #[inline(always)]
    pub(crate) fn may_queue(&self, state: &AtomicUsize, n: usize) -> bool {
        let _ = (state, n);
        match *self {}
    }
}
