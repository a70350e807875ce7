//! Deliberate flaws, compiled in by the `broken_sema` feature.
//!
//! Each flaw is selected per semaphore by the hidden constructor
//! `Semaphore::with_flaw(permits, Some(flaw))`, so one test binary runs every check against
//! the correct semaphore (which must pass) and against each flaw (which must be caught, with
//! the violated property named). A flaw that no check catches is a defect of the suite.
//! The checks-by-flaws matrix of `docs/verification.md` says which check catches which flaw,
//! and how fast.

use std::fmt;
use std::time::Instant;

use crate::semaphore::word::{FIFO, ONE, WAITERS, fifo_park_word, may_park};
use crate::sync::{AtomicUsize, FilterOp, Ordering, UnparkResult, flaw_window};

/// A deliberate flaw in the semaphore's protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Flaw {
    /// Acquire loads the state, sees a permit, yields (a spin hint under the checkers), then
    /// stores the decremented value instead of compare-exchanging it: a lost update. Two
    /// threads that load the same state both take "the" permit (over-issue), and a release
    /// or a `WAITERS` bit that lands between the load and the store is overwritten.
    ///
    /// Caught by: the stress scenario `never_exceeds_permits`, whose holder count passes
    /// the permit count (reported as `over-issue: max in use N > permits P`).
    OverIssue,

    /// The unpark callback clears `WAITERS` even when `have_more_threads` is true, so the
    /// next releases take the fast path and wake nobody while threads stay parked: a lost
    /// wakeup.
    ///
    /// Caught by: the stress scenario `wakes_every_parked_thread`, as an in-process
    /// watchdog stall report (the process exits with `watchdog::STALL_EXIT_CODE`); loom's
    /// deadlock report in the model `wakes_every_waiter`; shuttle's deadlock report.
    LostWaiters,

    /// Acquire's successful CAS and release's add use `Relaxed` instead of `Acquire` and
    /// `Release`: the count stays exact, but a holder's writes no longer happen-before the
    /// next holder's reads.
    ///
    /// Caught by: loom's models `visibility` and `unwind_and_move` (a causality violation on
    /// the data the permit protects). Shuttle cannot see it (it runs every atomic as
    /// `SeqCst`), nor can stress tests on x86-64 (every locked read-modify-write is a full
    /// barrier there).
    RelaxedOrdering,

    /// `park`'s `validate` decides on a state word read *before* the bucket lock is taken
    /// (a time-of-check/time-of-use gap), instead of reading it under the lock. A release that
    /// lands in the gap finds nobody queued and clears `WAITERS`; the thread then parks on the
    /// stale "exactly `WAITERS`", with a permit free and nobody left to wake it: a lost
    /// wakeup that needs a thread to stop in the gap while another releases. Under `Fifo` the
    /// thread decides on the stale word with `Fifo`'s rule and sets `WAITERS` without
    /// checking that the word is still the one it read.
    ///
    /// Caught by: loom's deadlock report (models `waiters_bit_races` and
    /// `wakes_every_waiter`; the smallest preemption bound that finds it is in the depth
    /// table of `docs/verification.md`), shuttle's (`catches_stale_validate`), and on real threads a watchdog
    /// stall of `never_exceeds_permits` (`catches_stale_validate_in_never_exceeds_permits`;
    /// the gap yields the CPU on real threads, so a release lands in it within the run).
    StaleValidate,

    /// A release whose compare-exchange finds `WAITERS` set uses `Relaxed` instead of
    /// `Release`, on the reasoning that the unpark that follows will publish the releaser's
    /// writes. It does, to the thread that unpark wakes; but a thread that takes this permit
    /// without being woken by this release (a barger, or a thread woken earlier by another
    /// release) is not ordered after the releaser's writes.
    ///
    /// Caught by: loom's models `woken_takes_another_releasers_permit` (a woken thread takes
    /// the permit of a releaser that woke someone else) and `unwind_and_move` (the waiter
    /// takes the permit without parking, while `WAITERS` is set): a causality violation. Shuttle and x86-64 threads cannot see it, as
    /// `RelaxedOrdering`. It was built to fall into the model's optional re-lock edge
    /// (`relock_on_wake`, a happens-before edge the real crate lacks) and did not
    /// (`docs/verification.md`, "The model's happens-before", has the measurement).
    RelaxedWhenWaited,

    /// A waiter whose deadline has passed by the time an unpark chose it gives up at once
    /// with `TimedOut`, without looking at the permits it was woken for and without passing
    /// the wake-up on. The permits stay in the count, but the release promised them to this
    /// thread and so did not wake the next waiter: that one sleeps on while permits are free
    /// (Go's issue 37852 is this shape). The correct waiter takes the permits if they are
    /// free, and otherwise passes the wake-up on before it times out.
    ///
    /// Caught by: the scenario `timeout_races_release` under loom and shuttle (a deadlock:
    /// the untimed waiter is never woken), and on real threads by the stress scenario
    /// `timeout_at_release` (a watchdog stall), whose release lands just after the deadline,
    /// usually before the kernel's timer wakes the timed waiter (timing-dependent; the
    /// real-thread matrix of `docs/verification.md` says how often). On real threads the woken waiter yields
    /// the CPU before it looks at the clock (`timeout_leak_window`), so that a release just
    /// before the deadline is met as one just after it on a busy machine.
    TimeoutLeak,

    /// A release's filter stops at the first parked request that does not fit the free
    /// permits, instead of passing over it: a large request at the head of the queue leaves
    /// a smaller one behind it asleep although its permits are free.
    ///
    /// Caught by: the scenario `large_head_small_behind` under loom and shuttle (a
    /// deadlock) and on real threads by the stress scenario `small_behind_large` (a
    /// watchdog stall; the parking order is set up before the release, so the first round
    /// catches it).
    WeightedLostWakeup,

    /// A handing-over release gives its permits to the woken thread *and* adds them to the
    /// count: every handoff mints permits (a duplicated permit, so more holders than permits
    /// once the extra one is taken).
    ///
    /// Caught by: the scenarios `fifo_handoff_keeps_order` and `handoff_from_two_releasers`
    /// under loom and shuttle (`permits not conserved`, or `over-issue` when a barger takes
    /// the extra permit), and on real threads by the unit and API tests of handoff
    /// (`tests/api.rs`: the count after a handoff) and the stress scenario
    /// `fifo_traffic` (`permits not conserved`).
    HandoffDoubleCount,

    /// Under `Fifo` an acquirer that is about to park sets `WAITERS` with its own CAS before it
    /// takes the bucket lock (as the other modes do), instead of in `validate` under the lock
    /// that queues it. A request that fits, arriving while the announcer is between its CAS
    /// and its `validate`, sees `WAITERS`, cannot take the free permit, and is queued first:
    /// the head then sleeps while its request fits, and is served before the request that
    /// announced first. (The protocol once worked this way.)
    ///
    /// Caught by: the scenario `fifo_arrivals_race_a_free_permit` under loom and shuttle
    /// (`fifo: with both requests parked the one queued second was served first`), and by
    /// the generated programs checked against the specification. On real threads the window
    /// is the few instructions between the CAS and the bucket lock: reported, not gated.
    FifoEarlyAnnounce,
}

impl Flaw {
    /// Every flaw, in the order of the verification guide's matrix.
    pub const ALL: [Flaw; 9] = [
        Flaw::OverIssue,
        Flaw::LostWaiters,
        Flaw::RelaxedOrdering,
        Flaw::StaleValidate,
        Flaw::RelaxedWhenWaited,
        Flaw::TimeoutLeak,
        Flaw::WeightedLostWakeup,
        Flaw::HandoffDoubleCount,
        Flaw::FifoEarlyAnnounce,
    ];

    /// The variant's name, as the verification report, the soak's `--flaw` and the test
    /// targets' child processes spell it.
    pub const fn name(self) -> &'static str {
        match self {
            Flaw::OverIssue => "OverIssue",
            Flaw::LostWaiters => "LostWaiters",
            Flaw::RelaxedOrdering => "RelaxedOrdering",
            Flaw::StaleValidate => "StaleValidate",
            Flaw::RelaxedWhenWaited => "RelaxedWhenWaited",
            Flaw::TimeoutLeak => "TimeoutLeak",
            Flaw::WeightedLostWakeup => "WeightedLostWakeup",
            Flaw::HandoffDoubleCount => "HandoffDoubleCount",
            Flaw::FifoEarlyAnnounce => "FifoEarlyAnnounce",
        }
    }
}

impl std::str::FromStr for Flaw {
    type Err = String;

    /// The flaw named `name` ([`Flaw::name`]); the error names every flaw.
    fn from_str(name: &str) -> Result<Flaw, String> {
        Flaw::ALL
            .into_iter()
            .find(|f| f.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Flaw::ALL.iter().map(|f| f.name()).collect();
                format!(
                    "no flaw is named {name:?}; the flaws are {}",
                    names.join(", ")
                )
            })
    }
}

/// The flaw a semaphore runs with, if any, and the seam through which it changes the
/// protocol: one hook per decision point, each returning the correct decision unless its own
/// flaw is in force. Without `broken_sema` the same hooks are in `flaw/off.rs`, each the
/// correct decision and nothing else, on a zero-sized type. Every flaw's switch is here, not
/// in the protocol: `cargo mutants` does not mutate this file, so a mutant is always a
/// change to the correct protocol, never one flaw traded for another.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot(Option<Flaw>);

impl Slot {
    /// The correct protocol.
    pub(crate) const NONE: Slot = Slot(None);

    pub(crate) const fn new(flaw: Option<Flaw>) -> Slot {
        Slot(flaw)
    }

    /// Adds the flaw to a semaphore's `Debug` output.
    pub(crate) fn debug_field(self, d: &mut fmt::DebugStruct<'_, '_>) {
        d.field("flaw", &self.0);
    }

    /// `take`'s compare-exchange of `n` permits from the word `seen`, replaced: `Some` with
    /// the [`Flaw::OverIssue`] lost update, `None` to take them correctly.
    #[inline(always)]
    pub(crate) fn take(
        self,
        state: &AtomicUsize,
        seen: usize,
        n: usize,
    ) -> Option<Result<usize, usize>> {
        (self.0 == Some(Flaw::OverIssue)).then(|| over_issue_take(state, seen, n, ONE))
    }

    /// The ordering of a permit-transferring CAS whose correct ordering is `correct`
    /// ([`Flaw::RelaxedOrdering`] weakens it).
    #[inline(always)]
    pub(crate) fn permit_ordering(self, correct: Ordering) -> Ordering {
        if self.0 == Some(Flaw::RelaxedOrdering) {
            return relaxed_ordering();
        }
        correct
    }

    /// The ordering of a release's CAS that replaces the word `seen`, where the correct one
    /// is `correct` ([`Flaw::RelaxedWhenWaited`] and [`Flaw::RelaxedOrdering`] weaken it).
    #[inline(always)]
    pub(crate) fn release_ordering(self, seen: usize, correct: Ordering) -> Ordering {
        if self.0 == Some(Flaw::RelaxedWhenWaited) {
            return relaxed_when_waited(seen, WAITERS, correct);
        }
        self.permit_ordering(correct)
    }

    /// Whether a thread an unpark just chose gives up at once, swallowing the wake-up
    /// ([`Flaw::TimeoutLeak`]); the correct answer is no.
    #[inline(always)]
    pub(crate) fn gives_up_when_woken(self, deadline: Option<Instant>) -> bool {
        self.0 == Some(Flaw::TimeoutLeak) && timeout_leak(deadline, crate::sync::now())
    }

    /// Whether a thread sets `WAITERS` before it takes the bucket lock, where the correct
    /// answer is `correct` ([`Flaw::FifoEarlyAnnounce`] always does).
    #[inline(always)]
    pub(crate) fn announces_before_park(self, correct: bool) -> bool {
        self.0 == Some(Flaw::FifoEarlyAnnounce) || correct
    }

    /// The [`Flaw::StaleValidate`] read of the word before the bucket lock, and its gap;
    /// `None` (the correct protocol reads the word under the lock) for every other flaw.
    #[inline(always)]
    pub(crate) fn stale_read(self, state: &AtomicUsize) -> Option<Stale> {
        (self.0 == Some(Flaw::StaleValidate)).then(|| {
            let seen = state.load(Ordering::Relaxed);
            stale_validate_gap();
            Stale(seen)
        })
    }

    /// How many of a handing-over release's permits go into the count when `own` of them
    /// were not handed over and `handed` were ([`Flaw::HandoffDoubleCount`] adds both).
    #[inline(always)]
    pub(crate) fn returned_to_count(self, own: usize, handed: usize) -> usize {
        if self.0 == Some(Flaw::HandoffDoubleCount) {
            return handoff_double_count(own, handed);
        }
        own
    }

    /// The unpark filter's decision for a request that does not fit, where the correct one is
    /// `correct` ([`Flaw::WeightedLostWakeup`] stops).
    #[inline(always)]
    pub(crate) fn not_fitting(self, correct: FilterOp) -> FilterOp {
        if self.0 == Some(Flaw::WeightedLostWakeup) {
            return weighted_lost_wakeup();
        }
        correct
    }

    /// Whether an unpark whose result is `result` clears `WAITERS`, where the correct answer
    /// is `correct` ([`Flaw::LostWaiters`] always does).
    #[inline(always)]
    pub(crate) fn clears_waiters(self, result: &UnparkResult, correct: bool) -> bool {
        if self.0 == Some(Flaw::LostWaiters) {
            return lost_waiters_clears(result);
        }
        correct
    }
}

/// The word a [`Flaw::StaleValidate`] thread read before it took the bucket lock.
pub(crate) struct Stale(usize);

impl Stale {
    /// `park`'s `validate` for a request of `n` permits, decided on the stale word (the word
    /// `state` holds now ignored, but for `Fifo`'s unconditional `WAITERS`).
    pub(crate) fn may_queue(&self, state: &AtomicUsize, n: usize) -> bool {
        let seen = self.0;
        if seen & FIFO == 0 {
            return may_park(seen, n);
        }
        stale_fifo_queue(state, fifo_park_word(seen, n), WAITERS)
    }
}

/// The [`Flaw::OverIssue`] take of `n` permits: `seen` was loaded and holds them; leave a gap
/// (`sync::flaw_window`), then write `seen - n * one` (`n` permits fewer) whatever the word
/// holds now. The arithmetic is here, not in the state machine, so that mutating it is
/// mutating a flaw (this file is not mutated).
///
/// It is a swap with `Acquire` rather than a plain store so that the only thing wrong is the
/// lost update: the happens-before edge from the previous holder is kept.
fn over_issue_take(state: &AtomicUsize, seen: usize, n: usize, one: usize) -> Result<usize, usize> {
    flaw_window();
    // Acquire: pairs with the Release of the add that put the permits into the word.
    state.swap(seen - n * one, Ordering::Acquire);
    Ok(seen)
}

/// The [`Flaw::RelaxedOrdering`] ordering for the permit-transferring CASes.
fn relaxed_ordering() -> Ordering {
    Ordering::Relaxed
}

/// The [`Flaw::LostWaiters`] decision: `WAITERS` is cleared after every unpark, whether or
/// not threads remain parked (the correct decision is `!result.have_more_threads`).
fn lost_waiters_clears(result: &UnparkResult) -> bool {
    let _ = result.have_more_threads;
    true
}

/// The gap of [`Flaw::StaleValidate`], between its early read and the bucket lock (the
/// parking decision is then made on that read, the word now ignored). It yields
/// (`sync::flaw_window`) so that real threads fall into it now and then.
fn stale_validate_gap() {
    flaw_window();
}

/// The [`Flaw::StaleValidate`] decision under `Fifo`: `queue` is the rule's answer for the
/// word read before the lock (`Some` if it says park); the thread then sets `waiters`
/// whatever the word holds now, instead of compare-exchanging it from what it read.
fn stale_fifo_queue(state: &AtomicUsize, queue: Option<usize>, waiters: usize) -> bool {
    if queue.is_some() {
        state.fetch_or(waiters, Ordering::Relaxed);
    }
    queue.is_some()
}

/// The [`Flaw::RelaxedWhenWaited`] ordering of a release whose expected word is `seen`:
/// `Relaxed` when `seen` has `waiters` set, `correct` otherwise.
fn relaxed_when_waited(seen: usize, waiters: usize, correct: Ordering) -> Ordering {
    if seen & waiters != 0 {
        Ordering::Relaxed
    } else {
        correct
    }
}

/// The [`Flaw::TimeoutLeak`] decision for a thread an unpark just chose: give up (and swallow
/// the wake-up) if it has a deadline and that has passed by `now`, or by the end of the flaw's
/// window ([`timeout_leak_window`]) when it had not.
fn timeout_leak(deadline: Option<Instant>, now: Instant) -> bool {
    deadline.is_some_and(|d| d <= now || timeout_leak_window(d))
}

/// The window of [`Flaw::TimeoutLeak`], between the unpark that chose a timed waiter whose
/// deadline had not yet passed and the waiter's look at the clock. On real threads it yields
/// the CPU (`sync::flaw_window`) and looks again, so that a wake-up that lands just before
/// the deadline is decided as one that lands just after it, as it is whenever the woken
/// thread is descheduled there for that long: the same flaw, met in more of the races the
/// real-thread checks set up. Beside two busy processes, most of their releases that still
/// met the timed waiter parked came before its deadline and found it running in time: at 50
/// rounds `timeout_at_release` caught the flaw in 13 of 20 runs without the window and 17 of
/// 20 with it, alternating in one series; the soak, 39 of 40 without and 60 of 60 with
/// (`stress/catches.rs` and `xtask/src/soak.rs` have the counts).
///
/// A thread without a deadline never gets here (the checks that time nothing stay blind).
#[cfg(not(any(feature = "loom", feature = "shuttle")))]
fn timeout_leak_window(deadline: Instant) -> bool {
    flaw_window();
    deadline <= crate::sync::now()
}

/// The window of [`Flaw::TimeoutLeak`] under the model checkers: none. Their mocked clock
/// already lets the checker put the deadline anywhere around the unpark, and a second look
/// at it would only add interleavings to the models whose counts `docs/verification.md`
/// records.
#[cfg(any(feature = "loom", feature = "shuttle"))]
fn timeout_leak_window(_deadline: Instant) -> bool {
    false
}

/// The [`Flaw::WeightedLostWakeup`] filter decision for a request that does not fit: stop
/// (the correct one is `Skip`).
fn weighted_lost_wakeup() -> FilterOp {
    FilterOp::Stop
}

/// The [`Flaw::HandoffDoubleCount`] number of permits a handing-over release adds to the count
/// when `own` of its permits were not handed over and `handed` were: both (the correct number
/// is `own`).
fn handoff_double_count(own: usize, handed: usize) -> usize {
    own + handed
}

#[cfg(test)]
mod tests {
    use super::Flaw;

    #[test]
    fn every_flaw_is_listed_once_and_named_as_its_variant() {
        for (i, flaw) in Flaw::ALL.iter().enumerate() {
            assert_eq!(flaw.name(), format!("{flaw:?}"));
            assert_eq!(flaw.name().parse::<Flaw>(), Ok(*flaw));
            assert!(!Flaw::ALL[..i].contains(flaw), "{flaw:?} is listed twice");
        }
        let refused = "Overissue".parse::<Flaw>().unwrap_err();
        assert!(refused.contains("\"Overissue\"") && refused.contains("FifoEarlyAnnounce"));
    }
}
