//! The deadline scenario: a timed waiter and an untimed one, driven by the conductor.

use super::*;

impl Round {
    /// The deadline scenario: a timed waiter and an untimed one, driven by the conductor.
    pub(super) fn deadline(&self, wd: &Watchdog) {
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
            let Some(got) = self.empty_the_count(w, slot, free, &format!("repetition {rep}"))
            else {
                return;
            };
            pool += got;
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
}
