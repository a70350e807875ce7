//! One round: its semaphore, its threads, and the checks made while they run and once they
//! have all returned.
//!
//! The round's main thread is its conductor: it starts the workers (scoped threads), does
//! the scenario's own part (adding and forgetting permits, closing, parking waiters in order
//! and releasing to them), and joins them. Every thread reports each operation to the round's
//! watchdog; a thread that waits for something reports only when what it watches changes, so
//! a round in which nothing can move any more is a stall, reported with each thread's
//! current call.
//!
//! Each scenario's threads and conductor are in a file named for it (`traffic`, which also
//! runs `close`, `queue`, `deadline`, `streak`); this file has the round, the checks every
//! scenario shares, the end-of-round checks and the stall report.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use parksema::{AcquireError, OwnedPermit, Permit, Semaphore, TryAcquireError};
use watchdog::{Watchdog, Worker};

use crate::check::Ledger;
use crate::duration::human;
use crate::plan::{Form, Op, Plan, Return, Scenario};
use crate::rng::Rng;
use crate::soak::{Soak, lock};
use crate::stats::{Kind, Outcome, Slot, Streak};

mod deadline;
mod queue;
mod streak;
mod traffic;

/// What a queue waiter reports: its index, and how its acquire ended.
type Served = (usize, Result<(), Outcome>);

/// The outcome of a failed blocking acquire.
fn blocking(e: AcquireError) -> Outcome {
    match e {
        AcquireError::Closed => Outcome::Closed,
        _ => Outcome::TooLarge,
    }
}

/// The outcome of a failed non-blocking or timed acquire.
fn trying(e: TryAcquireError) -> Outcome {
    match e {
        TryAcquireError::Closed => Outcome::Closed,
        TryAcquireError::NoPermits => Outcome::NoPermits,
        TryAcquireError::TimedOut => Outcome::TimedOut,
        _ => Outcome::TooLarge,
    }
}

/// A deadline that has already passed.
fn past() -> Instant {
    let now = Instant::now();
    now.checked_sub(Duration::from_millis(1)).unwrap_or(now)
}

/// Permits a traffic thread holds: a borrowed or an owned guard.
enum Held<'a> {
    /// From `acquire`, `acquire_many`, `try_acquire*`.
    Borrowed(Permit<'a>),
    /// From the `_owned` forms.
    Owned(OwnedPermit),
}

impl<'a> Held<'a> {
    /// The permits held.
    fn n(&self) -> usize {
        match self {
            Held::Borrowed(p) => p.num_permits(),
            Held::Owned(p) => p.num_permits(),
        }
    }

    /// Splits one permit off.
    fn split_one(&mut self) -> Option<Held<'a>> {
        match self {
            Held::Borrowed(p) => p.split(1).map(Held::Borrowed),
            Held::Owned(p) => p.split(1).map(Held::Owned),
        }
    }

    /// Merges `other`, a guard of the same kind on the same semaphore, into this one.
    fn merge(&mut self, other: Held<'a>) {
        match (self, other) {
            (Held::Borrowed(a), Held::Borrowed(b)) => a.merge(b),
            (Held::Owned(a), Held::Owned(b)) => a.merge(b),
            _ => unreachable!("a second take is always of its guard's own kind"),
        }
    }

    /// `release_fair`.
    fn release_fair(self) {
        match self {
            Held::Borrowed(p) => p.release_fair(),
            Held::Owned(p) => p.release_fair(),
        }
    }

    /// `forget`.
    fn forget(self) {
        match self {
            Held::Borrowed(p) => p.forget(),
            Held::Owned(p) => p.forget(),
        }
    }
}

/// One round.
#[derive(Debug)]
pub(crate) struct Round {
    /// The soak it belongs to.
    pub(crate) soak: Arc<Soak>,
    /// What it does.
    pub(crate) plan: Plan,
    /// Its semaphore.
    sem: Arc<Semaphore>,
    /// Permits held against permits that exist.
    ledger: Ledger,
    /// The longest streak of one thread.
    pub(crate) streak: Streak,
    /// Set right before the conductor calls `close`.
    closing: AtomicBool,
    /// Set right after `close` returned: an acquire that starts after this must fail.
    closed: AtomicBool,
    /// Successful acquisitions (the close scenario waits for a number of them).
    acquisitions: AtomicU64,
    /// Workers that have finished.
    done: AtomicUsize,
    /// Permits the conductor added for good.
    added: AtomicUsize,
    /// Permits the conductor forgot for good.
    forgotten: AtomicUsize,
    /// Timed calls that timed out.
    timed_out: AtomicU64,
    /// The workers' operations before this round (their slots carry earlier rounds').
    ops_base: u64,
    /// What the conductor is doing, for the stall report.
    status: Mutex<String>,
}

impl Round {
    /// The round of `plan` in `soak`, with a fresh semaphore.
    pub(crate) fn new(soak: Arc<Soak>, plan: Plan) -> Round {
        let fairness = plan.mode.fairness();
        #[cfg(feature = "broken_sema")]
        let sem = Semaphore::with_fairness_and_flaw(plan.permits, fairness, soak.cfg.flaw);
        #[cfg(not(feature = "broken_sema"))]
        let sem = Semaphore::with_fairness(plan.permits, fairness);
        let ops_base = soak.slots()[..plan.threads].iter().map(Slot::ops).sum();
        Round {
            ledger: Ledger::new(plan.permits),
            sem: Arc::new(sem),
            streak: Streak::default(),
            closing: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            acquisitions: AtomicU64::new(0),
            done: AtomicUsize::new(0),
            added: AtomicUsize::new(0),
            forgotten: AtomicUsize::new(0),
            timed_out: AtomicU64::new(0),
            ops_base,
            status: Mutex::new(String::new()),
            soak,
            plan,
        }
    }

    /// Runs the round's scenario; returns once every thread has returned (or, after a
    /// violation, once they have stopped).
    pub(crate) fn run(&self, wd: &Watchdog) {
        match self.plan.scenario {
            Scenario::Traffic | Scenario::Close => self.traffic(wd),
            Scenario::Queue => self.queue(wd),
            Scenario::Deadline => self.deadline(wd),
            Scenario::Streak => self.streak(wd),
        }
    }

    /// Records a violation of `property`, then closes the semaphore: threads parked on it
    /// would keep the round from ending, and `close` wakes them (their failed acquires are no
    /// longer checked: the soak is stopping).
    fn violation(&self, property: &'static str, message: String) {
        self.soak.record_violation(&self.plan, property, message);
        self.sem.close();
    }

    /// A conducted repetition's start: takes every permit out of the count, which must hold
    /// exactly `free`, and returns how many it took (`None` after reporting a count that
    /// held another number).
    fn empty_the_count(&self, w: &Worker, slot: &Slot, free: usize, at: &str) -> Option<usize> {
        w.op("forget_permits (empty the count)");
        let got = self.sem.forget_permits(free);
        slot.count(Kind::ForgetPermits, Outcome::Ok);
        self.ledger.shrink(got);
        let left = self.sem.available_permits();
        if got != free || left != 0 {
            self.violation(
                "permits not conserved",
                format!(
                    "at the start of {at} the count held {} permits where {free} should be",
                    got + left
                ),
            );
            return None;
        }
        Some(got)
    }

    /// Registers `n` permits just taken by `who`; false (after reporting it) if that is more
    /// than the semaphore can have.
    fn enter(&self, n: usize, who: &str) -> bool {
        match self.ledger.enter(n) {
            Ok(()) => true,
            Err((held, bound)) => {
                self.violation(
                    "over-issue",
                    format!(
                        "{held} permits held at once (the last {n} taken by {who}), but the \
                         semaphore has at most {bound}"
                    ),
                );
                false
            }
        }
    }

    /// Reports a call of `kind` for `n` permits that ended with `outcome`, which it cannot
    /// end with here (unless the soak is stopping, when anything goes).
    fn refused(&self, kind: Kind, n: usize, outcome: Outcome) {
        if self.soak.stopping() {
            return;
        }
        if outcome == Outcome::Closed && !self.closing.load(SeqCst) {
            self.violation(
                "spurious close",
                format!(
                    "{}({n}) failed with `Closed` on a semaphore nobody closed",
                    kind.name()
                ),
            );
        } else {
            self.violation(
                "unexpected error",
                format!(
                    "{}({n}) failed with {outcome:?}, which it cannot return here",
                    kind.name()
                ),
            );
        }
    }

    /// Sets what the conductor is doing, for the stall report.
    fn set_status(&self, status: String) {
        *lock(&self.status) = status;
    }

    /// The workers' operations in this round.
    fn worker_ops(&self) -> u64 {
        let now: u64 = self.soak.slots()[..self.plan.threads]
            .iter()
            .map(Slot::ops)
            .sum();
        now - self.ops_base
    }

    /// Waits until `check` says done, yielding between looks. It reports progress to the
    /// watchdog only when the value `check` watches changes, so a wait that can never end
    /// is a stall, reported as one. False if a violation stopped the soak meanwhile.
    fn poll(&self, w: &Worker, op: &'static str, mut check: impl FnMut() -> (bool, u64)) -> bool {
        let mut last = None;
        loop {
            if self.soak.stopping() {
                return false;
            }
            let (done, seen) = check();
            if done {
                return true;
            }
            if last != Some(seen) {
                w.op(op);
                last = Some(seen);
            }
            thread::yield_now();
        }
    }

    // ---------------------------------------------------------------------------------
    // The end of a round, and the stall report.
    // ---------------------------------------------------------------------------------

    /// The checks at the round's quiescent point, every thread joined: the count is what was
    /// put in, plus what was added, minus what was forgotten (so no permit was lost, minted,
    /// or kept by a timed-out call); `WAITERS` is clear (the last waiter to leave cleared it);
    /// the semaphore is closed exactly if it was closed. (That no thread is parked needs no
    /// check here: every thread has returned. A thread parked while its request fits is what
    /// the watchdog reports, as a stall of the join.)
    pub(crate) fn check_end(&self) {
        if self.soak.stopping() {
            return;
        }
        let p = &self.plan;
        let added = self.added.load(SeqCst);
        let forgotten = self.forgotten.load(SeqCst);
        let expected = p.permits + added - forgotten;
        let left = self.sem.available_permits();
        if left != expected {
            self.violation(
                "permits not conserved",
                format!(
                    "{left} permits free once every thread had returned, {expected} expected \
                     ({} put in, {added} added, {forgotten} forgotten; {} timed-out calls in \
                     the round): {}",
                    p.permits,
                    self.timed_out.load(Relaxed),
                    if left > expected {
                        "permits minted"
                    } else {
                        "permits lost"
                    }
                ),
            );
            return;
        }
        let state = format!("{:?}", self.sem);
        if !state.contains("waiters: false") {
            self.violation(
                "WAITERS left set",
                format!("every thread has returned, yet the semaphore says threads wait: {state}"),
            );
            return;
        }
        let closing = self.closing.load(SeqCst);
        if self.sem.is_closed() != closing {
            if closing {
                self.violation(
                    "close lost",
                    format!("the semaphore was closed, and is open again: {state}"),
                );
            } else {
                self.violation(
                    "spurious close",
                    format!("the semaphore is closed, and nobody closed it: {state}"),
                );
            }
        }
    }

    /// Worker `i`'s name, as the watchdog knows it.
    fn thread_name(&self, i: usize) -> String {
        match (self.plan.scenario, i) {
            (Scenario::Queue, _) => format!("waiter #{}", i + 1),
            (Scenario::Deadline, 0) => "timed waiter".to_string(),
            (Scenario::Deadline, _) => "untimed waiter".to_string(),
            _ => format!("t{i}"),
        }
    }

    /// The watchdog's description of a stalled round: the round and how to replay its
    /// traffic, each thread's acquire in progress and for how long, what the conductor was
    /// doing, the ledger, and the semaphore's state and parked threads (last: it takes the
    /// park table's bucket lock, which a wedged table could hold; the JSON report is written
    /// before it).
    pub(crate) fn describe_stall(&self) -> String {
        self.soak.progress.hide();
        let mut s = String::new();
        let _ = writeln!(
            s,
            "parksema-soak: round {} ({}), {:.1} s into the soak, seed {}",
            self.plan.round,
            self.plan.describe(),
            self.soak.start.elapsed().as_secs_f64(),
            self.soak.cfg.seed
        );
        let _ = writeln!(
            s,
            "the violated property: no thread stays parked while its request fits (no thread \
             made progress for the stall limit)"
        );
        let _ = writeln!(s, "{}", self.soak.cfg.replay(self.plan.round));
        let now = self.soak.nanos(Instant::now());
        let mut threads: Vec<(String, &Slot)> = (0..self.plan.threads)
            .map(|i| (self.thread_name(i), self.soak.slot(i)))
            .collect();
        threads.push(("conductor".to_string(), self.soak.conductor_slot()));
        for (name, slot) in threads {
            match slot.pending() {
                Some((kind, n, since)) => {
                    let _ = writeln!(
                        s,
                        "  {name}: in {}({n}) for {}",
                        kind.name(),
                        human(Duration::from_nanos(now.saturating_sub(since)))
                    );
                }
                None => {
                    let _ = writeln!(s, "  {name}: not in an acquire");
                }
            }
        }
        let status = lock(&self.status).clone();
        if !status.is_empty() {
            let _ = writeln!(s, "conductor: {status}");
        }
        let (held, bound) = self.ledger.snapshot();
        let _ = writeln!(
            s,
            "permits held by the soak's threads: {held}, in the semaphore at most {bound}"
        );
        self.soak.note_stall(&s);
        let _ = write!(
            s,
            "semaphore: {:?}, parked threads: {}",
            self.sem,
            self.sem.parked_threads()
        );
        s
    }
}
