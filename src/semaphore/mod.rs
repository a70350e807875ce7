//! The semaphore: its type, its fairness modes, and the protocol in layers, each a file
//! that opens with its contract:
//!
//! - `word`: the state word and its pure rules (no atomics);
//! - `timer`: `Eventual`'s fairness timer, the second word;
//! - `take` and `give`: the raw protocol, acquiring and releasing: the fast paths, the spin,
//!   parking, wake-ups and handoffs;
//! - `acquire`: the public acquire family, wrappers over `take`;
//! - `api`: the constructors, adding permits (through `give`), `forget_permits` (a
//!   compare-exchange loop on the word) and `close` (a `fetch_or`, then waking every parked
//!   thread), and the queries;
//! - `tests`: what a call costs in the park table, seen through the real backend's counters.
//!
//! Everything the protocol uses for synchronization comes from [`crate::sync`], so the same
//! code can be compiled against real `parking_lot_core` or against a checker's mocked park
//! table. The deliberate flaws reach it through one seam, `self.flaw` ([`crate::flaw`]): a
//! hook at each decision point, handed the correct decision, and without `broken_sema` a
//! zero-sized field whose hooks return it unchanged.

use core::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{AcquireError, AddPermitsError, TryAcquireError};
use crate::permit::{OwnedPermit, Permit};
use crate::profile;
use crate::sync::{
    AtomicU64, AtomicUsize, DEFAULT_UNPARK_TOKEN, FilterOp, Ordering, ParkResult, ParkToken,
    SpinWait, UnparkResult, UnparkToken, clock_micros, const_fn, fence, note_guarded,
    note_slow_release, now, park, unpark_filter,
};

use crate::flaw;
#[cfg(feature = "broken_sema")]
use crate::flaw::Flaw;

mod acquire;
mod api;
mod give;
mod take;
mod timer;
pub(crate) mod word;

use timer::*;
use word::*;

/// How a semaphore orders the threads that wait for its permits.
///
/// | mode | who gets a released permit while threads wait | cost |
/// |------|-----------------------------------------------|------|
/// | `Eventual` (default) | whoever takes it first (a running thread may barge past the parked ones), except that once a random deadline per semaphore has passed (0–1 ms after the previous handoff) the first release that finds a thread parked hands it its permits | a clock read on each release that finds waiters |
/// | `Fifo` | the parked threads, in arrival order: no thread takes a permit while another is parked, and a small request waits behind a larger one at the head | every contended release is a handoff: one wake-up per hand-over, no barging |
/// | `Barging` | whoever takes it first, without bound | none: the highest throughput, and one thread can keep the permits for as long as it keeps re-acquiring |
///
/// The repository's `docs/fairness.md` has the measurements behind the last column.
///
/// # Examples
///
#[doc = crate::doc_fence!()]
/// use parksema::{Fairness, Semaphore};
///
/// static FAIR: Semaphore = Semaphore::with_fairness(1, Fairness::Fifo);
/// assert_eq!(FAIR.fairness(), Fairness::Fifo);
/// assert_eq!(Semaphore::new(1).fairness(), Fairness::Eventual);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Fairness {
    /// Barging with a fairness timer: once this semaphore's deadline has passed, the first
    /// release that finds a thread parked hands it the permits through the unpark token (they
    /// never appear in the count, so no barger can take them), and only then is the next
    /// deadline drawn, uniformly from 0–1 ms after that release: a release that finds nobody
    /// to hand to (the only waiter not queued yet, or just timed out) spends nothing. The
    /// timer starts at the first release that finds a thread waiting. So a thread that keeps
    /// re-acquiring loses the permits at its first release, after a deadline at most 1 ms
    /// after the previous handoff, that finds another thread parked; it does not bound the
    /// wait of a request larger than the permits that come back at once (the handoff goes to
    /// the first parked request the permits satisfy).
    #[default]
    Eventual,
    /// Strict arrival order: while any thread is parked no thread takes a permit (the
    /// `try_` forms and a timed acquire with a zero or past deadline fail then too, as Go's
    /// `TryAcquire` does), and every release to a waiter hands the permits over, to the head
    /// of the queue first; a request behind a head that does not fit waits for it (Go's
    /// `x/sync/semaphore`). A request arrives when it is queued (under the park table's
    /// bucket lock), so a request that fits the free permits with nobody queued takes them
    /// and never sleeps. A large request is never starved; a head whose request is never
    /// met (more than will ever be free) holds up every request behind it for as long as it
    /// waits.
    Fifo,
    /// No fairness: a woken thread competes with running ones for the permits, without
    /// bound.
    Barging,
}

/// A blocking counting semaphore for threads.
///
/// A semaphore holds a number of permits. [`acquire`](Semaphore::acquire) takes one,
/// parking the thread until one is available, and [`acquire_many`](Semaphore::acquire_many)
/// takes several at once; the returned [`Permit`] gives them back when dropped. The
/// `try_` forms never block, the `_for` and `_until` forms wait until a deadline, and the
/// `_owned` forms take an `Arc<Semaphore>` and return a guard that owns it.
/// [`close`](Semaphore::close) makes every parked and future acquire fail.
///
/// The whole semaphore is two words (16 bytes: the permit count and flags, and the fairness
/// timer), needs no allocation and can live in a `static`. Parked threads wait in
/// `parking_lot_core`'s global park table, keyed by the semaphore's address. How released
/// permits are shared between parked and running threads is the semaphore's [`Fairness`]
/// ([`with_fairness`](Semaphore::with_fairness)).
///
/// # Examples
///
#[doc = crate::doc_fence!()]
/// use parksema::Semaphore;
/// use std::thread;
///
/// // At most two threads are inside the guarded section at once.
/// static SLOTS: Semaphore = Semaphore::new(2);
///
/// let handles: Vec<_> = (0..8)
///     .map(|_| {
///         thread::spawn(|| {
///             let _permit = SLOTS.acquire().expect("the semaphore is never closed");
///             // ... at most two threads run here at a time ...
///         })
///     })
///     .collect();
/// for h in handles {
///     h.join().unwrap();
/// }
/// assert_eq!(SLOTS.available_permits(), 2);
/// ```
pub struct Semaphore {
    /// The permit count and the flags, in one word: `permits * ONE | FIFO | CLOSED | WAITERS`.
    ///
    /// | permits | `CLOSED` | `WAITERS` | meaning |
    /// |---------|----------|-----------|---------|
    /// | p       | 0        | 0         | nobody waits: acquire's fast path takes a request of n ≤ p with a single CAS; a larger request spins a little, then sets `WAITERS` |
    /// | p       | 0        | 1         | threads parked or about to park (under `FIFO`: a thread is queued, the bit being set by `validate` under the lock that queues it): a thread requesting n may park only in this row, and only while n > p or `FIFO` is set (what `validate` checks; under `FIFO` a thread that does not fit may also park from the row above, setting the bit); without `FIFO` a running thread may still take permits that are free (barging), with `FIFO` none may; a release either hands its permits to the parked requests they satisfy (always under `FIFO`, with `release_fair`, and on an `Eventual` semaphore whose fairness deadline has passed) or adds them to the count and wakes, in queue order, the requests that fit what it has not yet promised |
    /// | any     | 1        | 0         | closed: every acquire fails; permits still count, so held ones come back |
    /// | any     | 1        | 1         | closed while threads waited: `close` is waking them all and clears `WAITERS` |
    ///
    /// `FIFO` is set at construction for [`Fairness::Fifo`] and never changes.
    ///
    /// Transitions:
    ///
    /// - acquire takes n permits with a CAS `s -> s - n * ONE` (`Acquire` on success); it
    ///   never takes any from a closed semaphore; n = 0 succeeds without writing;
    /// - an acquirer that finds too few permits sets `WAITERS` with a CAS, then parks with its
    ///   request as the park token and a `validate` that re-checks, under the bucket lock,
    ///   that `WAITERS` is set, `CLOSED` clear and fewer than n permits free; under `FIFO`
    ///   (also when it finds `WAITERS` set) it parks without the CAS, and `validate` queues it
    ///   if `CLOSED` is clear and `WAITERS` is set or n do not fit, setting `WAITERS` itself
    ///   (`fifo_park_word`); a thread woken with the `HANDED` token owns
    ///   its permits; one woken with the default token re-runs the loop (barging), and if it
    ///   finds the permits gone passes the wake-up on;
    /// - a release that finds `WAITERS` clear adds n permits with a checked CAS (`Release`).
    ///   One that finds it set either hands over (under the bucket lock, in queue order, each
    ///   parked request that its own permits and the free ones satisfy is unparked with
    ///   `HANDED`, the free permits it uses taken out with an `Acquire` CAS; under `FIFO` the
    ///   first request that does not fit stops the walk; the rest of its own permits are then
    ///   added with `Release`), or adds its permits and unparks, in queue order, the waiters
    ///   whose requests fit the permits free under the bucket lock (each promised its share;
    ///   one that does not fit is passed over, not a barrier);
    /// - a timed park that expires leaves the queue under the bucket lock, clearing
    ///   `WAITERS` if it was the last waiter;
    /// - `close` sets `CLOSED` with `fetch_or` (`Release`) and, if `WAITERS` was set, unparks
    ///   every waiter;
    /// - `forget_permits` takes permits out with a CAS and never touches a flag.
    ///
    /// Invariants:
    ///
    /// - `WAITERS` — some thread is parked, or is about to park, on this semaphore. Set only by an acquirer
    ///   (CAS) before it parks; under `FIFO` by the parking thread's `validate`, under the bucket lock that
    ///   queues it, so that there it means exactly "a thread is queued". Cleared **only under the bucket
    ///   lock**: in the `unpark_*` callback when no thread with this key remains, or in `timed_out` when the
    ///   last waiter leaves.
    /// - `CLOSED` — set once by `close()`, never cleared.
    ///
    /// Every write to the word is a read-modify-write (the flawed semaphores of the
    /// `broken_sema` feature excepted), so no release sequence is ever broken.
    state: AtomicUsize,

    /// The fairness timer (see `MODE_MASK`): the mode, the next deadline and the generator.
    /// Under `Eventual` the first release that finds `WAITERS` starts it (a CAS from the
    /// unstarted word); a release that finds `WAITERS` once the deadline has passed hands
    /// over, and the handoff spends the turn, under the bucket lock, only if it unparked a
    /// thread. The other modes never write it.
    timer: AtomicU64,

    /// The deliberate flaw this semaphore runs with, if any (zero-sized without
    /// `broken_sema`).
    flaw: flaw::Slot,
}

impl fmt::Debug for Semaphore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.state.load(Ordering::Relaxed);
        let mut d = f.debug_struct("Semaphore");
        d.field("permits", &(s >> FLAG_BITS))
            .field("waiters", &(s & WAITERS != 0))
            .field("closed", &(s & CLOSED != 0))
            .field("fairness", &self.fairness())
            .field("state", &format_args!("{s:#x}"));
        self.flaw.debug_field(&mut d);
        d.finish()
    }
}

// What a user may rely on in every build: a semaphore can be shared and used across threads
// and across `catch_unwind`, and an owned permit can be moved to and kept by any thread.
const _: () = {
    const fn shareable<T: Send + Sync + std::panic::UnwindSafe + std::panic::RefUnwindSafe>() {}
    const fn movable<T: Send + Sync + 'static>() {}
    shareable::<Semaphore>();
    movable::<OwnedPermit>();
};

// The real build keeps the semaphore to 16 bytes: the state word and the fairness timer (two
// words on 64-bit targets; on 32-bit ones the timer's `u64` alignment pads the state word to
// 8 bytes). The flawed build adds a field, and the checkers' atomics carry their own
// bookkeeping.
#[cfg(not(any(feature = "broken_sema", feature = "loom", feature = "shuttle")))]
const _: () = assert!(size_of::<Semaphore>() == 16);

// A plain `#[cfg(test)]` on the module, which `cargo mutants` recognizes and skips (it does
// not mutate tests; it did not recognize `cfg(all(test, ...))`); the backend condition is a
// second attribute.
#[cfg(test)]
#[cfg(not(any(feature = "loom", feature = "shuttle")))]
mod tests;
