//! The traffic and close scenarios: workers of mixed traffic, and the conductor adding,
//! forgetting and (close) closing.

use super::*;

impl Round {
    /// The traffic and close scenarios: `threads` workers of mixed traffic, and the
    /// conductor's own operations (traffic) or its `close` (close).
    pub(super) fn traffic(&self, wd: &Watchdog) {
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
}
