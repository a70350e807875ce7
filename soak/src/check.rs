//! The continuous checks' bookkeeping: the ledger of permits held against the permits that
//! exist, and the record of a violation.

use std::sync::atomic::{AtomicU64, Ordering::SeqCst};

use serde::Serialize;

/// The low half of the ledger's word: permits held.
const HELD: u64 = (1 << 32) - 1;
/// One permit in the high half: the most permits the semaphore can have.
const BOUND_ONE: u64 = 1 << 32;

/// The permits the soak's threads hold, against the most the semaphore can have, in one word
/// so that every check compares two numbers of one instant.
///
/// - A thread registers `n` permits right after an acquire returned them (`enter`, which is
///   the check: more held than the bound is an over-issue) and unregisters them right
///   before it returns them (`leave`). So at every instant the registered permits are at
///   most the permits really taken.
/// - The bound rises before permits are added (`grow`) and falls after permits are forgotten
///   (`shrink`, with what `forget_permits` returned), so it is never below what the semaphore
///   really has. A holder that forgets its guard unregisters and lowers the bound in one step
///   (`leave_and_shrink`): those permits leave the semaphore with it.
///
/// A correct semaphore therefore never fails `enter`; a semaphore that hands out a permit
/// twice, or mints one, does as soon as the extra permit is held. `SeqCst`, as the stress
/// tests' holder counter: one total order of its own, independent of the semaphore's
/// orderings, so that it cannot hide an over-issue (on x86-64 every read-modify-write is the
/// same locked instruction whatever the ordering).
#[derive(Debug)]
pub(crate) struct Ledger {
    /// `bound << 32 | held`.
    word: AtomicU64,
}

impl Ledger {
    /// A ledger for a semaphore that starts with `permits` permits.
    pub(crate) fn new(permits: usize) -> Ledger {
        Ledger {
            word: AtomicU64::new(permits as u64 * BOUND_ONE),
        }
    }

    /// Registers `n` permits just taken. `Err((held, bound))`: more permits are held than
    /// the semaphore can have.
    pub(crate) fn enter(&self, n: usize) -> Result<(), (u64, u64)> {
        let now = self.word.fetch_add(n as u64, SeqCst) + n as u64;
        let (held, bound) = (now & HELD, now >> 32);
        if held > bound {
            Err((held, bound))
        } else {
            Ok(())
        }
    }

    /// Unregisters `n` permits about to be returned.
    pub(crate) fn leave(&self, n: usize) {
        self.word.fetch_sub(n as u64, SeqCst);
    }

    /// Unregisters `n` held permits about to be forgotten, and lowers the bound by them.
    pub(crate) fn leave_and_shrink(&self, n: usize) {
        self.word.fetch_sub(n as u64 * (BOUND_ONE + 1), SeqCst);
    }

    /// Raises the bound by `n` permits about to be added.
    pub(crate) fn grow(&self, n: usize) {
        self.word.fetch_add(n as u64 * BOUND_ONE, SeqCst);
    }

    /// Lowers the bound by `n` permits just forgotten.
    pub(crate) fn shrink(&self, n: usize) {
        self.word.fetch_sub(n as u64 * BOUND_ONE, SeqCst);
    }

    /// The permits held and the bound, now.
    pub(crate) fn snapshot(&self) -> (u64, u64) {
        let w = self.word.load(SeqCst);
        (w & HELD, w >> 32)
    }
}

/// A violated property, as reported.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Violation {
    /// The property's name (`over-issue`, `permits not conserved`, `close lost`, ...).
    pub(crate) property: &'static str,
    /// What was seen.
    pub(crate) message: String,
    /// The round it happened in.
    pub(crate) round: u64,
    /// That round's plan, in words.
    pub(crate) plan: String,
    /// Seconds since the soak started.
    pub(crate) secs: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ledger_catches_a_permit_held_twice() {
        let l = Ledger::new(2);
        l.enter(1).unwrap();
        l.enter(1).unwrap();
        assert_eq!(l.enter(1), Err((3, 2)));
    }

    #[test]
    fn the_bound_follows_adds_and_forgets() {
        let l = Ledger::new(1);
        l.grow(2);
        l.enter(3).unwrap();
        l.leave_and_shrink(1);
        assert_eq!(l.snapshot(), (2, 2));
        assert_eq!(l.enter(1), Err((3, 2)));
        l.leave(3);
        l.shrink(2);
        assert_eq!(l.snapshot(), (0, 0));
    }
}
