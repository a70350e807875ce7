//! The state word and its pure rules.
//!
//! `Semaphore::state` is `permits * ONE | FIFO | CLOSED | WAITERS`: the count above
//! [`FLAG_BITS`] flag bits. The rules that decide on a word value alone (may a thread take,
//! may it park, how far a handoff goes, does an add fit) are functions here, with no atomics
//! and no side effects; the protocol files load and compare-exchange the word and ask them.

use super::*;

/// Some thread is parked, or is about to park, on this semaphore.
pub(crate) const WAITERS: usize = 0b001;
/// The semaphore is closed.
pub(super) const CLOSED: usize = 0b010;
/// The semaphore is strictly FIFO ([`Fairness::Fifo`]): set at construction, never changed.
/// It is the bit that was reserved so that `MAX_PERMITS` would not change when a flag came.
/// Keeping it in the word lets the fast path's one test, `s & (CLOSED | FIFO)`, send a FIFO
/// semaphore's requests to the checked path at no cost to the other modes.
pub(crate) const FIFO: usize = 0b100;
/// The number of flag bits below the permit count.
pub(super) const FLAG_BITS: u32 = 3;
/// The unpark token of a thread that was handed its permits: they never went through the
/// word, and the woken thread owns them when `park` returns.
pub(super) const HANDED: UnparkToken = UnparkToken(1);

/// One permit, as it is counted in the state word.
pub(crate) const ONE: usize = 1 << FLAG_BITS;

/// Whether a thread requesting `n` permits of a semaphore without `FIFO` may park when the
/// state word is `s`: only while `WAITERS` is set (so every release takes the slow path and
/// looks at the queue), the semaphore is open, and fewer than `n` permits are free. The
/// parking thread's `validate` asks this under the bucket lock. For one permit it is the
/// state exactly `WAITERS`.
pub(crate) fn may_park(s: usize, n: usize) -> bool {
    s & (WAITERS | CLOSED) == WAITERS && !fits(s, n)
}

/// The word a thread requesting `n` permits of a `FIFO` semaphore parks on, from the word
/// `s` read under the bucket lock, or `None` if it may not park. Under `FIFO` `WAITERS`
/// means exactly "a thread is queued": it is set here, by the thread about to be queued,
/// under the lock that queues it. So a request parks behind the queued ones whether or not
/// it fits (no running thread takes a permit past them), and with nobody queued it parks
/// only if it does not fit, setting `WAITERS`; it never parks on a closed semaphore.
pub(crate) fn fifo_park_word(s: usize, n: usize) -> Option<usize> {
    if s & CLOSED != 0 || (s & WAITERS == 0 && fits(s, n)) {
        return None;
    }
    Some(s | WAITERS)
}

/// Whether a running thread may take `n` permits from the word `s` (open): they are free,
/// and no `FIFO` waiter is ahead of it.
pub(super) fn may_take(s: usize, n: usize) -> bool {
    fits(s, n) && (s & FIFO == 0 || s & WAITERS == 0)
}

/// Builds the initial state word, refusing counts that do not fit.
pub(super) const fn initial_state(permits: usize, fairness: Fairness) -> usize {
    assert!(
        permits <= Semaphore::MAX_PERMITS,
        "Semaphore::new: the permit count exceeds Semaphore::MAX_PERMITS (usize::MAX >> 3)"
    );
    match fairness {
        Fairness::Fifo => (permits << FLAG_BITS) | FIFO,
        _ => permits << FLAG_BITS,
    }
}

/// Whether `n` more permits fit the word `s` without passing `MAX_PERMITS`: `Err` naming
/// the count and the amount if not.
#[inline]
pub(super) fn room(s: usize, n: usize) -> Result<(), AddPermitsError> {
    let available = s >> FLAG_BITS;
    if n > Semaphore::MAX_PERMITS - available {
        return Err(AddPermitsError::new(available, n));
    }
    Ok(())
}

/// What a handing-over release does with a parked request of `want` permits when `own` of
/// its permits are not yet handed over and the word is `s`: unpark it if `own` and the free
/// permits satisfy it; otherwise stop under `FIFO` (the head holds up the rest) or when
/// nothing is left, and pass over it (to a smaller request behind) in the other modes. A
/// closed semaphore hands nothing over (`close` is waking every waiter).
pub(super) fn handoff_op(s: usize, own: usize, want: usize) -> FilterOp {
    if s & CLOSED != 0 {
        return FilterOp::Stop;
    }
    let free = own + (s >> FLAG_BITS);
    if want <= free {
        FilterOp::Unpark
    } else if s & FIFO != 0 || free == 0 {
        FilterOp::Stop
    } else {
        FilterOp::Skip
    }
}

/// Whether the word `s` holds at least `n` free permits.
#[inline(always)]
pub(super) fn fits(s: usize, n: usize) -> bool {
    s >> FLAG_BITS >= n
}
