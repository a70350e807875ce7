//! The queue scenario: waiters parked in a known order, each release checked against the
//! queue model (who is woken, who is served).

use super::*;
use crate::queue::{self, QueueModel};

impl Round {
    /// The queue scenario: `threads` waiters, each parking when the conductor tells it to.
    pub(super) fn queue(&self, wd: &Watchdog) {
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
            let Some(got) =
                self.empty_the_count(w, slot, free, &format!("repetition {rep} of the queue"))
            else {
                return;
            };
            pool += got;
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
}
