//! One round: its semaphore, its threads, and the checks made while they run and once they
//! have all returned.
//!
//! The round's main thread is its conductor: it starts the workers (scoped threads), does
//! the scenario's own part (adding and forgetting permits, closing, parking waiters in order
//! and releasing to them), and joins them. Every thread reports each operation to the round's
//! watchdog; a thread that waits for something reports only when what it watches changes, so
//! a round in which nothing can move any more is a stall, reported with each thread's
//! current call.

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
use crate::queue::{self, QueueModel};
use crate::rng::Rng;
use crate::soak::{Soak, lock};
use crate::stats::{Kind, Outcome, Slot, Streak};

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
    // Traffic and close.
    // ---------------------------------------------------------------------------------

    /// The traffic and close scenarios: `threads` workers of mixed traffic, and the
    /// conductor's own operations (traffic) or its `close` (close).
    fn traffic(&self, wd: &Watchdog) {
        // The workers start together, so that the first one spawned does not run its share
        // alone before the last one exists.
        let start = Barrier::new(self.plan.threads);
        thread::scope(|s| {
            for t in 0..self.plan.threads {
                let w = wd.worker(format!("t{t}"));
                let start = &start;
                s.spawn(move || {
                    start.wait();
                    self.traffic_worker(t, &w);
                    w.op("finished");
                    self.done.fetch_add(1, SeqCst);
                });
            }
            let w = wd.worker("conductor");
            if self.plan.scenario == Scenario::Close {
                self.conduct_close(&w);
            } else {
                self.conduct_traffic(&w);
            }
            w.op("joining the workers");
        });
    }

    /// One traffic worker: `ops_per_thread` operations (or, in the close scenario, until its
    /// acquire fails with `Closed`), each an acquire of the round's mix; a successful one is
    /// registered (the over-issue check), held a little, sometimes merged with a second take,
    /// and given back in one of four ways. It never waits while holding permits, so traffic
    /// cannot deadlock by itself.
    fn traffic_worker(&self, me: usize, w: &Worker) {
        let p = &self.plan;
        let slot = self.soak.slot(me);
        let mut rng = Rng::new(Rng::derive(p.seed, me as u64 + 1));
        let until_closed = p.scenario == Scenario::Close;
        let mut i = 0;
        while until_closed || i < p.ops_per_thread {
            i += 1;
            if self.soak.stopping() {
                return;
            }
            let op = p.op(&mut rng);
            let (n, form) = (op.n, op.form);
            // Read before the call: true means the call starts after `close` returned.
            let after_close = self.closed.load(SeqCst);
            let (kind, got) = self.take(slot, w, &op);
            match got {
                Ok(held) => {
                    if after_close {
                        if !self.soak.stopping() {
                            self.violation(
                                "close lost",
                                format!(
                                    "{}({n}) started after close had returned, and got its \
                                     permits",
                                    kind.name()
                                ),
                            );
                        }
                        return;
                    }
                    self.acquisitions.fetch_add(1, Relaxed);
                    if !self.enter(n, &format!("t{me}'s {}", kind.name())) {
                        return;
                    }
                    self.streak.record(me);
                    for _ in 0..op.spins {
                        std::hint::spin_loop();
                    }
                    if op.yield_holding {
                        thread::yield_now();
                    }
                    let held = match op.merge {
                        Some(m) => match self.merge(me, slot, w, held, m) {
                            Some(held) => held,
                            None => return,
                        },
                        None => held,
                    };
                    self.give_back(slot, w, held, &op);
                }
                Err(Outcome::Closed) if self.closing.load(SeqCst) => {
                    self.after_close(slot, w);
                    return;
                }
                Err(Outcome::NoPermits) if form == Form::Try => {}
                Err(Outcome::TimedOut) if matches!(form, Form::For(_) | Form::Until(_)) => {
                    self.timed_out.fetch_add(1, Relaxed);
                }
                Err(outcome) => {
                    self.refused(kind, n, outcome);
                    return;
                }
            }
        }
    }

    /// The acquire of `op`, timed, and recorded in `slot`.
    fn take<'s>(&'s self, slot: &Slot, w: &Worker, op: &Op) -> (Kind, Result<Held<'s>, Outcome>) {
        let sem: &'s Arc<Semaphore> = &self.sem;
        let (n, form, owned, single) = (op.n, op.form, op.owned, op.single);
        let kind = match form {
            Form::Blocking if owned => Kind::AcquireManyOwned,
            Form::Blocking if single => Kind::Acquire,
            Form::Blocking => Kind::AcquireMany,
            Form::Try if owned => Kind::TryAcquireManyOwned,
            Form::Try if single => Kind::TryAcquire,
            Form::Try => Kind::TryAcquireMany,
            Form::For(_) => Kind::TryAcquireFor,
            Form::Until(_) => Kind::TryAcquireUntil,
        };
        let timeout = match form {
            Form::For(d) => d,
            _ => Duration::ZERO,
        };
        w.op(kind.name());
        let start = Instant::now();
        let deadline = match form {
            Form::Until(Some(ahead)) => start + ahead,
            _ => past(),
        };
        slot.begin(kind, n, self.soak.nanos(start));
        let got = match kind {
            Kind::Acquire => sem.acquire().map(Held::Borrowed).map_err(blocking),
            Kind::AcquireMany => sem.acquire_many(n).map(Held::Borrowed).map_err(blocking),
            Kind::AcquireManyOwned => Arc::clone(sem)
                .acquire_many_owned(n)
                .map(Held::Owned)
                .map_err(blocking),
            Kind::TryAcquire => sem.try_acquire().map(Held::Borrowed).map_err(trying),
            Kind::TryAcquireMany => sem.try_acquire_many(n).map(Held::Borrowed).map_err(trying),
            Kind::TryAcquireManyOwned => Arc::clone(sem)
                .try_acquire_many_owned(n)
                .map(Held::Owned)
                .map_err(trying),
            Kind::TryAcquireFor if n == 1 => sem
                .try_acquire_for(timeout)
                .map(Held::Borrowed)
                .map_err(trying),
            Kind::TryAcquireFor => sem
                .try_acquire_many_for(n, timeout)
                .map(Held::Borrowed)
                .map_err(trying),
            _ if n == 1 => sem
                .try_acquire_until(deadline)
                .map(Held::Borrowed)
                .map_err(trying),
            _ => sem
                .try_acquire_many_until(n, deadline)
                .map(Held::Borrowed)
                .map_err(trying),
        };
        let outcome = match &got {
            Ok(_) => Outcome::Ok,
            Err(o) => *o,
        };
        slot.end(kind, outcome, start.elapsed(), self.plan.round);
        (kind, got)
    }

    /// Takes `m` more permits without waiting and merges them into `held`. `None`: stop (a
    /// violation was reported).
    fn merge<'s>(
        &'s self,
        me: usize,
        slot: &Slot,
        w: &Worker,
        mut held: Held<'s>,
        m: usize,
    ) -> Option<Held<'s>> {
        w.op("merge (try_acquire_many)");
        let after_close = self.closed.load(SeqCst);
        let more = match &held {
            Held::Borrowed(_) => self.sem.try_acquire_many(m).map(Held::Borrowed),
            Held::Owned(_) => Arc::clone(&self.sem)
                .try_acquire_many_owned(m)
                .map(Held::Owned),
        };
        match more {
            Ok(more) => {
                slot.count(Kind::Merge, Outcome::Ok);
                if after_close {
                    if !self.soak.stopping() {
                        self.violation(
                            "close lost",
                            format!(
                                "try_acquire_many({m}) started after close had returned, and \
                                 got its permits"
                            ),
                        );
                    }
                    return None;
                }
                if !self.enter(m, &format!("t{me}'s merge")) {
                    return None;
                }
                self.streak.record(me);
                held.merge(more);
            }
            Err(TryAcquireError::NoPermits) => slot.count(Kind::Merge, Outcome::NoPermits),
            // The close came while this thread held permits: it gives them back as usual.
            Err(TryAcquireError::Closed) if self.closing.load(SeqCst) => {
                slot.count(Kind::Merge, Outcome::Closed);
            }
            Err(e) => {
                slot.count(Kind::Merge, trying(e));
                self.refused(Kind::Merge, m, trying(e));
                return None;
            }
        }
        Some(held)
    }

    /// Gives `held` back: dropped, split and dropped part by part, `release_fair`, or
    /// forgotten and added back; unregistered from the ledger first, each part before it
    /// goes.
    fn give_back(&self, slot: &Slot, w: &Worker, mut held: Held<'_>, op: &Op) {
        let n = held.n();
        match op.give_back {
            Return::Drop => {
                w.op("release (drop)");
                self.ledger.leave(n);
                drop(held);
                slot.count(Kind::Release, Outcome::Ok);
            }
            Return::Split => {
                w.op("split + drop");
                while held.n() > 1 {
                    let part = held.split_one().expect("two or more permits held");
                    self.ledger.leave(1);
                    drop(part);
                    slot.count(Kind::Split, Outcome::Ok);
                }
                self.ledger.leave(1);
                drop(held);
                slot.count(Kind::Release, Outcome::Ok);
            }
            Return::Fair => {
                w.op("release_fair");
                self.ledger.leave(n);
                held.release_fair();
                slot.count(Kind::ReleaseFair, Outcome::Ok);
            }
            Return::ForgetAndAdd => {
                w.op("forget + add_permits");
                self.ledger.leave_and_shrink(n);
                held.forget();
                if op.yield_forgotten {
                    thread::yield_now();
                }
                self.ledger.grow(n);
                self.sem.add_permits(n);
                slot.count(Kind::ForgetAndAdd, Outcome::Ok);
            }
        }
    }

    /// A close-scenario worker whose acquire failed with `Closed`: a later `try_acquire` must
    /// fail too (`CLOSED` is never cleared), then the worker stops.
    fn after_close(&self, slot: &Slot, w: &Worker) {
        w.op("try_acquire after close");
        match self.sem.try_acquire() {
            Err(TryAcquireError::Closed) => slot.count(Kind::TryAcquire, Outcome::Closed),
            Ok(permit) => {
                slot.count(Kind::TryAcquire, Outcome::Ok);
                if !self.soak.stopping() {
                    self.violation(
                        "close lost",
                        "try_acquire took a permit after this thread's acquire had failed with \
                         `Closed`"
                            .to_string(),
                    );
                }
                permit.forget();
            }
            Err(e) => self.refused(Kind::TryAcquire, 1, trying(e)),
        }
    }

    /// The traffic scenario's conductor: `conductor_ops` operations spread over the workers'
    /// traffic (one each time the workers have done another share of theirs): new permits
    /// added for good, permits forgotten for good (never below the largest request, so every
    /// blocking request can still be met), permits forgotten for a moment and added back,
    /// and over-full adds that must be refused. It waits without reporting progress: if the
    /// workers are stuck, so is it, and the watchdog sees it.
    fn conduct_traffic(&self, w: &Worker) {
        let p = &self.plan;
        let slot = self.soak.conductor_slot();
        let sem = &*self.sem;
        let mut rng = Rng::new(Rng::derive(p.seed, 0));
        let mut supply = p.permits;
        let total = (p.ops_per_thread * p.threads) as u64;
        let stride = total / (p.conductor_ops as u64 + 1) + 1;
        let mut mark = stride;
        for _ in 0..p.conductor_ops {
            loop {
                if self.soak.stopping() || self.done.load(SeqCst) == p.threads {
                    return;
                }
                if self.worker_ops() >= mark {
                    break;
                }
                thread::yield_now();
            }
            mark += stride;
            // Three draws every time, whichever branch runs (the branches' conditions depend
            // on what `forget_permits` found, which is the race's).
            let k = rng.range(1, p.max_weight.max(2));
            let what = rng.weighted(&[3, 2, 3, 1]);
            let yields = rng.range(0, 2);
            match what {
                0 if supply + k <= 2 * p.permits => {
                    w.op("add_permits (new permits)");
                    self.ledger.grow(k);
                    sem.add_permits(k);
                    self.added.fetch_add(k, SeqCst);
                    supply += k;
                    slot.count(Kind::AddPermits, Outcome::Ok);
                }
                1 if supply >= p.max_weight + k => {
                    w.op("forget_permits (for good)");
                    let got = sem.forget_permits(k);
                    self.ledger.shrink(got);
                    self.forgotten.fetch_add(got, SeqCst);
                    supply -= got;
                    slot.count(Kind::ForgetPermits, Outcome::Ok);
                }
                2 => {
                    w.op("forget_permits (for a moment)");
                    let got = sem.forget_permits(k);
                    self.ledger.shrink(got);
                    slot.count(Kind::ForgetPermits, Outcome::Ok);
                    for _ in 0..yields {
                        thread::yield_now();
                    }
                    w.op("add_permits (the forgotten back)");
                    self.ledger.grow(got);
                    sem.add_permits(got);
                    slot.count(Kind::AddPermits, Outcome::Ok);
                }
                // In every mode: a refused add hands nothing over, also where a release with
                // threads parked would hand its permits to them (`try_add_permits`' docs).
                3 => {
                    w.op("try_add_permits past MAX_PERMITS");
                    match sem.try_add_permits(usize::MAX) {
                        Err(e) if e.added() == usize::MAX => {
                            slot.count(Kind::RefusedAdd, Outcome::Ok);
                        }
                        Err(e) => {
                            self.violation(
                                "refused add",
                                format!("a refused add of usize::MAX reported {e}"),
                            );
                            return;
                        }
                        Ok(()) => {
                            self.violation(
                                "refused add",
                                "try_add_permits(usize::MAX) was accepted (a wrap-around)"
                                    .to_string(),
                            );
                            return;
                        }
                    }
                }
                _ => thread::yield_now(),
            }
        }
    }

    /// The close scenario's conductor: once `close_after` acquisitions have happened, closes
    /// the semaphore in the middle of the traffic; then a permit added to the closed
    /// semaphore must count but never be handed out; then it waits for every worker to see
    /// the close.
    fn conduct_close(&self, w: &Worker) {
        let p = &self.plan;
        let slot = self.soak.conductor_slot();
        let sem = &*self.sem;
        self.set_status(format!(
            "close: waiting for {} acquisitions before closing",
            p.close_after
        ));
        if !self.poll(w, "waiting for traffic before the close", || {
            let a = self.acquisitions.load(Relaxed);
            (a >= p.close_after, a)
        }) {
            return;
        }
        self.closing.store(true, SeqCst);
        w.op("close (during traffic)");
        sem.close();
        self.closed.store(true, SeqCst);
        slot.count(Kind::Close, Outcome::Ok);
        self.set_status("close: closed; waiting for every worker to see it".to_string());
        w.op("add_permits (after close)");
        self.ledger.grow(1);
        sem.add_permits(1);
        self.added.fetch_add(1, SeqCst);
        slot.count(Kind::AddPermits, Outcome::Ok);
        match sem.try_acquire() {
            Err(TryAcquireError::Closed) => slot.count(Kind::TryAcquire, Outcome::Closed),
            Ok(permit) => {
                self.violation(
                    "close lost",
                    "try_acquire took a permit from a closed semaphore".to_string(),
                );
                permit.forget();
                return;
            }
            Err(e) => {
                self.refused(Kind::TryAcquire, 1, trying(e));
                return;
            }
        }
        match sem.acquire() {
            Err(AcquireError::Closed) => slot.count(Kind::Acquire, Outcome::Closed),
            Ok(permit) => {
                self.violation(
                    "close lost",
                    "acquire took a permit from a closed semaphore".to_string(),
                );
                permit.forget();
                return;
            }
            Err(e) => {
                self.refused(Kind::Acquire, 1, blocking(e));
                return;
            }
        }
        self.poll(w, "waiting for the workers to see the close", || {
            let d = self.done.load(SeqCst);
            (d == p.threads, d as u64)
        });
    }

    // ---------------------------------------------------------------------------------
    // Queue.
    // ---------------------------------------------------------------------------------

    /// The queue scenario: `threads` waiters, each parking when the conductor tells it to.
    fn queue(&self, wd: &Watchdog) {
        let (served_tx, served) = mpsc::channel::<Served>();
        thread::scope(|s| {
            let mut jobs = Vec::new();
            for i in 0..self.plan.threads {
                let (job_tx, job_rx) = mpsc::channel::<usize>();
                jobs.push(job_tx);
                let w = wd.worker(format!("waiter #{}", i + 1));
                let served_tx = served_tx.clone();
                s.spawn(move || self.queue_waiter(i, &w, &job_rx, &served_tx));
            }
            drop(served_tx);
            let w = wd.worker("conductor");
            self.conduct_queue(&w, &jobs, &served);
            w.op("joining the waiters");
            // Dropping the job senders ends the waiters' loops.
            drop(jobs);
        });
    }

    /// A queue waiter: for each request it is sent, `acquire_many` (it parks: the count is
    /// empty), then it forgets the permits it got (the conductor accounts them) and reports.
    fn queue_waiter(&self, me: usize, w: &Worker, jobs: &Receiver<usize>, served: &Sender<Served>) {
        let slot = self.soak.slot(me);
        for want in jobs {
            let kind = if want == 1 {
                Kind::Acquire
            } else {
                Kind::AcquireMany
            };
            w.op("acquire_many (parks in arrival order)");
            let start = Instant::now();
            slot.begin(kind, want, self.soak.nanos(start));
            let got = self.sem.acquire_many(want);
            let result = match got {
                Ok(permit) => {
                    slot.end(kind, Outcome::Ok, start.elapsed(), self.plan.round);
                    self.acquisitions.fetch_add(1, Relaxed);
                    if self.enter(want, &format!("waiter #{}", me + 1)) {
                        self.streak.record(me);
                        self.ledger.leave_and_shrink(want);
                    }
                    permit.forget();
                    Ok(())
                }
                Err(e) => {
                    slot.end(kind, blocking(e), start.elapsed(), self.plan.round);
                    Err(blocking(e))
                }
            };
            w.op("served; reporting");
            if served.send((me, result)).is_err() {
                return;
            }
        }
    }

    /// Reports a queue waiter for `want` whose acquire failed with `outcome` where it had to
    /// be served (or, after `close`, where it had to fail with `Closed`).
    fn waiter_failed(&self, want: usize, outcome: Outcome) {
        let kind = if want == 1 {
            Kind::Acquire
        } else {
            Kind::AcquireMany
        };
        self.refused(kind, want, outcome);
    }

    /// The queue scenario's conductor. Each repetition starts with no permit in the count;
    /// the waiters park one at a time (each seen parked before the next starts, so arrival
    /// order is queue order); then the conductor releases a few permits at a time (from what
    /// it took out and what the served waiters forgot) and checks each release against
    /// [`QueueModel`]: who is still parked right after it, who was served, what is left in
    /// the count; and, with waiters parked, whether a running thread may take a free
    /// permit. Sometimes the last repetition ends with `close` instead.
    fn conduct_queue(&self, w: &Worker, jobs: &[Sender<usize>], served: &Receiver<Served>) {
        let p = &self.plan;
        let sem = &*self.sem;
        let slot = self.soak.conductor_slot();
        let mut rng = Rng::new(Rng::derive(p.seed, 0));
        // The permits the conductor has taken out of the semaphore and may release.
        let mut pool = 0;
        // The permits the count must hold now.
        let mut free = p.permits;
        for rep in 0..p.reps {
            if self.soak.stopping() {
                return;
            }
            w.op("forget_permits (empty the count)");
            let got = sem.forget_permits(free);
            slot.count(Kind::ForgetPermits, Outcome::Ok);
            self.ledger.shrink(got);
            pool += got;
            let left = sem.available_permits();
            if got != free || left != 0 {
                self.violation(
                    "permits not conserved",
                    format!(
                        "at the start of repetition {rep} of the queue the count held {} \
                         permits where {free} should be",
                        got + left
                    ),
                );
                return;
            }
            let last = rep + 1 == p.reps;
            let mut model = QueueModel::new(p.fifo_checks);
            for (i, job) in jobs.iter().enumerate() {
                let want = rng.range(1, p.permits);
                self.set_status(format!(
                    "queue, repetition {rep}: waiter #{} (for {want}) parking behind {}",
                    i + 1,
                    queue::list(model.queue())
                ));
                if job.send(want).is_err() {
                    return;
                }
                model.park(i, want);
                let mut early = None;
                if !self.poll(w, "waiting for a waiter to park", || {
                    if early.is_none() {
                        early = served.try_recv().ok();
                    }
                    let n = sem.parked_threads();
                    (n > i || early.is_some(), n as u64)
                }) {
                    return;
                }
                if let Some((id, result)) = early {
                    match result {
                        Ok(()) => self.violation(
                            "over-issue",
                            format!(
                                "waiter #{} (for {want}) got its permits while none were free",
                                id + 1
                            ),
                        ),
                        Err(o) => self.waiter_failed(want, o),
                    }
                    return;
                }
            }
            let mut step = 0;
            loop {
                if self.soak.stopping() {
                    return;
                }
                if last
                    && p.close_at_step
                        .is_some_and(|at| at <= step || model.parked() == 0)
                {
                    self.close_queue(w, &model, served, pool);
                    return;
                }
                if model.parked() == 0 {
                    break;
                }
                match self.queue_step(w, &mut model, served, &mut pool, &mut rng) {
                    Ok(()) => {}
                    Err(()) => return,
                }
                step += 1;
            }
            free = model.free();
        }
        w.op("add_permits (every permit back)");
        self.ledger.grow(pool);
        sem.add_permits(pool);
        slot.count(Kind::AddPermits, Outcome::Ok);
    }

    /// One release to the parked queue, and its checks. `Err`: stop (a violation was
    /// reported, or the soak is stopping).
    fn queue_step(
        &self,
        w: &Worker,
        model: &mut QueueModel,
        served: &Receiver<Served>,
        pool: &mut usize,
        rng: &mut Rng,
    ) -> Result<(), ()> {
        let sem = &*self.sem;
        let slot = self.soak.conductor_slot();
        // At a quiescent point with waiters parked, the count holds less than the head's
        // request (under `Fifo`) or than every request (otherwise), and every permit is in
        // the count or with the conductor; every request is at most `permits`: so the
        // conductor has at least one to release.
        assert!(*pool >= 1, "the queue's model keeps a permit to release");
        let c = rng.range(1, *pool);
        let before = model.queue().to_vec();
        let free_before = model.free();
        let expected = model.release(c);
        *pool -= c;
        self.set_status(format!(
            "queue: releasing {c} with {free_before} free to the queue {}; {} must be served",
            queue::list(&before),
            queue::list(&expected)
        ));
        w.op("add_permits (to the queue)");
        self.ledger.grow(c);
        sem.add_permits(c);
        slot.count(Kind::AddPermits, Outcome::Ok);
        let parked = sem.parked_threads();
        if let Err((property, message)) =
            queue::judge_woken(model.fifo(), &before, free_before, c, &expected, parked)
        {
            self.violation(property, message);
            return Err(());
        }
        let mut got = Vec::new();
        for _ in 0..expected.len() {
            w.op("waiting for the served waiters");
            match served.recv() {
                Ok((id, Ok(()))) => got.push(id),
                Ok((id, Err(o))) => {
                    let want = before.iter().find(|x| x.id == id).map_or(0, |x| x.want);
                    self.waiter_failed(want, o);
                    return Err(());
                }
                Err(_) => return Err(()),
            }
        }
        if let Err((property, message)) =
            queue::judge_served(model.fifo(), &before, &expected, &got)
        {
            self.violation(property, message);
            return Err(());
        }
        *pool += expected.iter().map(|x| x.want).sum::<usize>();
        let left = sem.available_permits();
        if left != model.free() {
            self.violation(
                "permits not conserved",
                format!(
                    "after a release of {c} with {free_before} free that served {}, the count \
                     holds {left} where {} should be ({})",
                    queue::list(&expected),
                    model.free(),
                    if left > model.free() {
                        "minted"
                    } else {
                        "lost"
                    }
                ),
            );
            return Err(());
        }
        if model.parked() > 0 && !self.barge_probe(w, model, rng) {
            return Err(());
        }
        Ok(())
    }

    /// With waiters parked and nothing else running, a running thread asks for `m` permits
    /// without waiting (`try_acquire_many`, a zero timeout, or a deadline already past).
    /// Under `Fifo` it must fail whatever is free (nobody takes a permit while another is
    /// parked, promise 23); in the other modes it must succeed exactly when `m` are free (a
    /// free permit is taken without waiting, promise 21), and its permits go back at once.
    fn barge_probe(&self, w: &Worker, model: &QueueModel, rng: &mut Rng) -> bool {
        let sem = &*self.sem;
        let slot = self.soak.conductor_slot();
        let free = model.free();
        let m = rng.range(1, free.max(1));
        let may_take = !model.fifo() && m <= free;
        let which = rng.below(3);
        let name = [
            "try_acquire_many",
            "try_acquire_many_for (zero timeout)",
            "try_acquire_many_until (a deadline already past)",
        ][which as usize];
        w.op("barge probe");
        let got = match which {
            0 => sem.try_acquire_many(m),
            1 => sem.try_acquire_many_for(m, Duration::ZERO),
            _ => sem.try_acquire_many_until(m, past()),
        };
        match got {
            Ok(permit) if may_take => {
                slot.count(Kind::BargeProbe, Outcome::Ok);
                if !self.enter(m, "the barge probe") {
                    return false;
                }
                self.ledger.leave(m);
                drop(permit);
                true
            }
            Ok(permit) => {
                slot.count(Kind::BargeProbe, Outcome::Ok);
                if model.fifo() {
                    self.violation(
                        "FIFO barging",
                        format!(
                            "{name}({m}) took permits with {} parked ({}) and {free} free: \
                             under Fifo no thread takes a permit while another is parked",
                            model.parked(),
                            queue::list(model.queue())
                        ),
                    );
                } else {
                    self.violation(
                        "over-issue",
                        format!("{name}({m}) succeeded with only {free} permits free"),
                    );
                }
                permit.forget();
                false
            }
            Err(TryAcquireError::NoPermits | TryAcquireError::TimedOut) if !may_take => {
                slot.count(Kind::BargeProbe, Outcome::NoPermits);
                true
            }
            Err(e @ (TryAcquireError::NoPermits | TryAcquireError::TimedOut)) => {
                slot.count(Kind::BargeProbe, trying(e));
                self.violation(
                    "refused a free permit",
                    format!(
                        "{name}({m}) failed with `{e}` while {free} permits were free and no \
                         other thread ran"
                    ),
                );
                false
            }
            Err(e) => {
                slot.count(Kind::BargeProbe, trying(e));
                self.refused(Kind::BargeProbe, m, trying(e));
                false
            }
        }
    }

    /// Closes the semaphore with the queue's waiters parked: `close` must wake every one of
    /// them before it returns, and each must fail with `Closed`; then the conductor's
    /// permits go back into the closed semaphore, which counts them and hands none out.
    fn close_queue(&self, w: &Worker, model: &QueueModel, served: &Receiver<Served>, pool: usize) {
        let sem = &*self.sem;
        let slot = self.soak.conductor_slot();
        self.set_status(format!(
            "queue: closing with {} parked and {} free",
            queue::list(model.queue()),
            model.free()
        ));
        self.closing.store(true, SeqCst);
        w.op("close (waiters parked)");
        sem.close();
        self.closed.store(true, SeqCst);
        slot.count(Kind::Close, Outcome::Ok);
        let parked = sem.parked_threads();
        if parked != 0 {
            self.violation(
                "close wakes every waiter",
                format!(
                    "{parked} threads are still parked after close returned (of {})",
                    queue::list(model.queue())
                ),
            );
            return;
        }
        for _ in 0..model.parked() {
            w.op("waiting for the closed-out waiters");
            match served.recv() {
                Ok((_, Err(Outcome::Closed))) => {}
                Ok((id, Ok(()))) => {
                    let want = model
                        .queue()
                        .iter()
                        .find(|x| x.id == id)
                        .map_or(0, |x| x.want);
                    self.violation(
                        "close lost",
                        format!(
                            "waiter #{} (for {want}), parked when close was called, got its \
                             permits",
                            id + 1
                        ),
                    );
                    return;
                }
                Ok((_, Err(o))) => {
                    self.waiter_failed(0, o);
                    return;
                }
                Err(_) => return,
            }
        }
        w.op("add_permits (into the closed semaphore)");
        self.ledger.grow(pool);
        sem.add_permits(pool);
        slot.count(Kind::AddPermits, Outcome::Ok);
        match sem.try_acquire() {
            Err(TryAcquireError::Closed) => slot.count(Kind::TryAcquire, Outcome::Closed),
            Ok(permit) => {
                self.violation(
                    "close lost",
                    "try_acquire took a permit from a closed semaphore".to_string(),
                );
                permit.forget();
            }
            Err(e) => self.refused(Kind::TryAcquire, 1, trying(e)),
        }
    }

    // ---------------------------------------------------------------------------------
    // Deadline.
    // ---------------------------------------------------------------------------------

    /// The deadline scenario: a timed waiter and an untimed one, driven by the conductor.
    fn deadline(&self, wd: &Watchdog) {
        let (timed_jobs, timed_rx) = mpsc::channel::<(usize, Instant)>();
        let (timed_tx, timed_done) = mpsc::channel::<Result<(), Outcome>>();
        let (untimed_jobs, untimed_rx) = mpsc::channel::<usize>();
        let (untimed_tx, untimed_done) = mpsc::channel::<Result<(), Outcome>>();
        thread::scope(|s| {
            let tw = wd.worker("timed waiter");
            s.spawn(move || self.timed_waiter(&tw, &timed_rx, &timed_tx));
            let uw = wd.worker("untimed waiter");
            s.spawn(move || self.untimed_waiter(&uw, &untimed_rx, &untimed_tx));
            let w = wd.worker("conductor");
            self.conduct_deadline(&w, timed_jobs, &timed_done, untimed_jobs, &untimed_done);
            w.op("joining the waiters");
        });
    }

    /// The timed waiter (slot 0): `try_acquire_many_until` each deadline it is sent; a
    /// permit it gets goes straight back (dropped).
    fn timed_waiter(
        &self,
        w: &Worker,
        jobs: &Receiver<(usize, Instant)>,
        done: &Sender<Result<(), Outcome>>,
    ) {
        let slot = self.soak.slot(0);
        for (want, deadline) in jobs {
            w.op("try_acquire_many_until (parks until its deadline)");
            let start = Instant::now();
            slot.begin(Kind::TryAcquireUntil, want, self.soak.nanos(start));
            let got = self.sem.try_acquire_many_until(want, deadline);
            let result = match got {
                Ok(permit) => {
                    slot.end(
                        Kind::TryAcquireUntil,
                        Outcome::Ok,
                        start.elapsed(),
                        self.plan.round,
                    );
                    self.acquisitions.fetch_add(1, Relaxed);
                    if self.enter(want, "the timed waiter") {
                        self.streak.record(0);
                        self.ledger.leave(want);
                    }
                    drop(permit);
                    slot.count(Kind::Release, Outcome::Ok);
                    Ok(())
                }
                Err(e) => {
                    slot.end(
                        Kind::TryAcquireUntil,
                        trying(e),
                        start.elapsed(),
                        self.plan.round,
                    );
                    Err(trying(e))
                }
            };
            w.op("reporting");
            if done.send(result).is_err() {
                return;
            }
        }
    }

    /// The untimed waiter (slot 1): `acquire_many` each request it is sent; it forgets what
    /// it gets (the conductor accounts it).
    fn untimed_waiter(
        &self,
        w: &Worker,
        jobs: &Receiver<usize>,
        done: &Sender<Result<(), Outcome>>,
    ) {
        let slot = self.soak.slot(1);
        for want in jobs {
            w.op("acquire_many (parks behind the timed waiter)");
            let start = Instant::now();
            slot.begin(Kind::AcquireMany, want, self.soak.nanos(start));
            let got = self.sem.acquire_many(want);
            let result = match got {
                Ok(permit) => {
                    slot.end(
                        Kind::AcquireMany,
                        Outcome::Ok,
                        start.elapsed(),
                        self.plan.round,
                    );
                    self.acquisitions.fetch_add(1, Relaxed);
                    if self.enter(want, "the untimed waiter") {
                        self.streak.record(1);
                        self.ledger.leave_and_shrink(want);
                    }
                    permit.forget();
                    Ok(())
                }
                Err(e) => {
                    slot.end(
                        Kind::AcquireMany,
                        blocking(e),
                        start.elapsed(),
                        self.plan.round,
                    );
                    Err(blocking(e))
                }
            };
            w.op("reporting");
            if done.send(result).is_err() {
                return;
            }
        }
    }

    /// The deadline scenario's conductor, `reps` times: with the count empty, a timed waiter
    /// parks for `w1` with a deadline 2–8 ms ahead and an untimed one for `w2` behind it;
    /// the conductor spins to a moment from 150 µs before the deadline to 50 µs after it and
    /// releases `c >= w2` permits (as the stress test `timeout_at_release` does, with random
    /// sizes, in every mode). The release often chooses a waiter whose deadline passes as it
    /// runs: it must take its permits or pass the wake-up on, and the untimed waiter must
    /// always be served (a lost wake-up is a stall: the conductor waits for it). Then the
    /// count must hold exactly `c - w2`: a timed-out call took nothing, and one that
    /// succeeded gave its permits back.
    fn conduct_deadline(
        &self,
        w: &Worker,
        timed_jobs: Sender<(usize, Instant)>,
        timed_done: &Receiver<Result<(), Outcome>>,
        untimed_jobs: Sender<usize>,
        untimed_done: &Receiver<Result<(), Outcome>>,
    ) {
        let p = &self.plan;
        let sem = &*self.sem;
        let slot = self.soak.conductor_slot();
        let mut rng = Rng::new(Rng::derive(p.seed, 0));
        let mut pool = 0;
        let mut free = p.permits;
        for rep in 0..p.reps {
            if self.soak.stopping() {
                return;
            }
            w.op("forget_permits (empty the count)");
            let got = sem.forget_permits(free);
            slot.count(Kind::ForgetPermits, Outcome::Ok);
            self.ledger.shrink(got);
            pool += got;
            let left = sem.available_permits();
            if got != free || left != 0 {
                self.violation(
                    "permits not conserved",
                    format!(
                        "at the start of repetition {rep} the count held {} permits where \
                         {free} should be",
                        got + left
                    ),
                );
                return;
            }
            let w1 = rng.range(1, p.permits);
            let w2 = rng.range(1, p.permits);
            let c = rng.range(w2, p.permits);
            let ahead = Duration::from_millis(rng.pick(&[2, 3, 5, 8]));
            let offset = rng.range(0, 200) as u64;
            let deadline = Instant::now() + ahead;
            self.set_status(format!(
                "deadline, repetition {rep}: a timed waiter for {w1} (deadline {} ahead), an \
                 untimed one for {w2} behind it; {c} released at the deadline {:+} µs",
                human(ahead),
                offset as i64 - 150
            ));
            if timed_jobs.send((w1, deadline)).is_err() {
                return;
            }
            let mut timed = None;
            if !self.poll(w, "waiting for the timed waiter to park", || {
                if timed.is_none() {
                    timed = timed_done.try_recv().ok();
                }
                let n = sem.parked_threads();
                (n >= 1 || timed.is_some(), n as u64)
            }) {
                return;
            }
            if untimed_jobs.send(w2).is_err() {
                return;
            }
            // The timed waiter may time out before the untimed one parks (on a busy
            // machine); then the release goes to the untimed one alone.
            if !self.poll(w, "waiting for the untimed waiter to park", || {
                if timed.is_none() {
                    timed = timed_done.try_recv().ok();
                }
                let n = sem.parked_threads();
                (n >= 2 || (timed.is_some() && n >= 1), n as u64)
            }) {
                return;
            }
            if timed == Some(Ok(())) {
                self.violation(
                    "over-issue",
                    format!("the timed waiter (for {w1}) got its permits while none were free"),
                );
                return;
            }
            let release_at = (deadline + Duration::from_micros(offset))
                .checked_sub(Duration::from_micros(150))
                .unwrap_or(deadline);
            w.op("spinning to the deadline");
            while Instant::now() < release_at {
                std::hint::spin_loop();
            }
            pool -= c;
            w.op("add_permits (at the deadline)");
            self.ledger.grow(c);
            sem.add_permits(c);
            slot.count(Kind::AddPermits, Outcome::Ok);
            w.op("waiting for the untimed waiter to be served");
            let Ok(untimed) = untimed_done.recv() else {
                return;
            };
            let timed = match timed {
                Some(r) => r,
                None => {
                    w.op("waiting for the timed waiter");
                    let Ok(r) = timed_done.recv() else {
                        return;
                    };
                    r
                }
            };
            if let Err(o) = untimed {
                self.refused(Kind::AcquireMany, w2, o);
                return;
            }
            match timed {
                Ok(()) => {}
                Err(Outcome::TimedOut) => {
                    self.timed_out.fetch_add(1, Relaxed);
                }
                Err(o) => {
                    self.refused(Kind::TryAcquireUntil, w1, o);
                    return;
                }
            }
            pool += w2;
            free = c - w2;
            let left = sem.available_permits();
            if left != free {
                // Permits missing after a timeout are the timed-out call's (the untimed
                // waiter was served and forgot exactly its own); permits in excess were
                // minted, whoever timed out.
                let (property, who) = if timed.is_err() && left < free {
                    (
                        "timed-out call consumed permits",
                        format!("the timed waiter (for {w1}) timed out; "),
                    )
                } else {
                    ("permits not conserved", String::new())
                };
                self.violation(
                    property,
                    format!(
                        "{who}after a release of {c} at its deadline, with the untimed \
                         waiter's {w2} forgotten, the count holds {left} where {free} should \
                         be ({})",
                        if left > free {
                            "permits minted"
                        } else {
                            "permits lost"
                        }
                    ),
                );
                return;
            }
        }
        drop((timed_jobs, untimed_jobs));
        w.op("add_permits (every permit back)");
        self.ledger.grow(pool);
        sem.add_permits(pool);
        slot.count(Kind::AddPermits, Outcome::Ok);
    }

    // ---------------------------------------------------------------------------------
    // Streak.
    // ---------------------------------------------------------------------------------

    /// The streak scenario: each worker loops "acquire, hold (busy), release, re-acquire at
    /// once", as the fairness experiment; the longest streak is recorded, not asserted (no mode
    /// promises a bound in acquisitions: `Eventual`'s is one of time, docs/limits.md).
    fn streak(&self, wd: &Watchdog) {
        // Together, or the first thread spawned makes all its acquisitions (tens of
        // microseconds) before the second exists, which is a streak of no interest.
        // A barrier alone is not enough: the threads it releases wake one after another,
        // and the last to arrive runs alone until the others are scheduled. So each also
        // waits (yielding) until every one has run past the barrier.
        let start = Barrier::new(self.plan.threads);
        let running = AtomicUsize::new(0);
        thread::scope(|s| {
            for t in 0..self.plan.threads {
                let w = wd.worker(format!("t{t}"));
                let (start, running) = (&start, &running);
                s.spawn(move || {
                    start.wait();
                    running.fetch_add(1, SeqCst);
                    while running.load(SeqCst) < self.plan.threads {
                        thread::yield_now();
                    }
                    self.streak_worker(t, &w);
                });
            }
        });
    }

    /// One streak worker.
    fn streak_worker(&self, me: usize, w: &Worker) {
        let p = &self.plan;
        let slot = self.soak.slot(me);
        let mut rng = Rng::new(Rng::derive(p.seed, me as u64 + 1));
        for _ in 0..p.ops_per_thread {
            if self.soak.stopping() {
                return;
            }
            w.op("acquire");
            let start = Instant::now();
            slot.begin(Kind::Acquire, 1, self.soak.nanos(start));
            match self.sem.acquire() {
                Ok(permit) => {
                    slot.end(Kind::Acquire, Outcome::Ok, start.elapsed(), p.round);
                    if !self.enter(1, &format!("t{me}")) {
                        return;
                    }
                    self.streak.record(me);
                    for _ in 0..p.spin {
                        std::hint::spin_loop();
                    }
                    self.ledger.leave(1);
                    if rng.chance(p.fair_in_8, 8) {
                        w.op("release_fair");
                        permit.release_fair();
                        slot.count(Kind::ReleaseFair, Outcome::Ok);
                    } else {
                        w.op("release (drop)");
                        drop(permit);
                        slot.count(Kind::Release, Outcome::Ok);
                    }
                }
                Err(e) => {
                    slot.end(Kind::Acquire, blocking(e), start.elapsed(), p.round);
                    self.refused(Kind::Acquire, 1, blocking(e));
                    return;
                }
            }
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
