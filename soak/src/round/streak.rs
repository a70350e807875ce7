//! The streak scenario: each worker loops acquire, hold, release, re-acquire at once; the
//! longest run of one thread is measured.

use super::*;

impl Round {
    /// The streak scenario: each worker loops "acquire, hold (busy), release, re-acquire at
    /// once", as the fairness experiment; the longest streak is recorded, not asserted (no mode
    /// promises a bound in acquisitions: `Eventual`'s is one of time, docs/limits.md).
    pub(super) fn streak(&self, wd: &Watchdog) {
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
}
