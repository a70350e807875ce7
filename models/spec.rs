//! The executable specification: the semaphore as a sequential model, one per fairness mode,
//! and the linearizability check of recorded histories against it.
//!
//! # The model
//!
//! A [`Spec`] is the semaphore's whole observable state: the free permits, whether it is
//! closed, the mocked clock, and the blocked requests in arrival order, each with its size,
//! its deadline and whether permits have been handed to it. Every operation is a step of
//! that state; what the docs leave open is a free choice of the model, so a step may have
//! several successors:
//!
//! - **A waiting call has two events.** Its *arrival* either completes it at once (closed,
//!   a request of zero, permits it may take, or a deadline already past) or queues it; its
//!   *completion* returns a queued request's result: `Ok` once it may take its permits (or
//!   they were handed to it), `Closed` once the semaphore is closed (unless handed), `TimedOut`
//!   once the clock has reached its deadline (unless handed). The implementation's arrival is
//!   the park table's insertion, under the bucket lock (`validate` returning true): under
//!   `Fifo` that is what orders a request against the others and makes the `try_` forms fail.
//! - **`Fifo`**: a request takes permits at arrival only if nobody is queued; every change
//!   that can let the head through (a release, a timed-out head leaving) hands permits to the
//!   head while it fits, in order, and stops at the first that does not fit. A head whose
//!   request can never be met blocks the requests behind it for as long as it waits (this
//!   differs from Go's semaphore, which never queues a request larger than its size; here a
//!   semaphore has no fixed size: permits can be added at any time).
//! - **`Eventual`**: a queued request that fits may complete at any time (barging is free);
//!   a release may add its permits to the count or hand them over (queue order, passing over
//!   requests that do not fit): a free choice here. How often it must hand over is the
//!   timer's promise, which a history cannot show; the scenario
//!   `eventual_turn_goes_to_a_parked_waiter` checks it.
//! - **`Barging`**: as `Eventual` without the handoff; who gets released permits is any
//!   request that fits.
//! - `release_fair` always hands over (`Fifo`'s walk under `Fifo`, the passing walk
//!   otherwise); `forget_permits(k)` takes `min(k, free)`; an add past
//!   `Semaphore::MAX_PERMITS` is refused with the count untouched; `parked_threads` is only
//!   bounded (the caller checks it against the number of waiting calls).
//!
//! # The check
//!
//! A [`History`] is the list of calls of one run, each with its thread, its position in the
//! thread's program, what it returned, and (where precedence is real time) the ticks at which
//! it started and ended. [`History::linearizable`] searches for an order of the events that
//! respects precedence and that the model accepts step by step (the Wing–Gong search with
//! Lowe's memoization of visited (linearized set, state) pairs). [`History::quiescent`]
//! additionally places a quiescence point: every call that had returned before it is
//! linearized before it, the calls still waiting then have arrived and not completed, and the
//! model must have exactly them blocked, none of them able to complete: a lost wakeup or a
//! stranded head fails there.

#![allow(dead_code)]

use std::collections::HashSet;

use parksema::Fairness;

/// The largest number of permits, as `Semaphore::MAX_PERMITS`.
pub(crate) const MAX: usize = usize::MAX >> 3;

/// What a waiting call returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Wait {
    Ok,
    Closed,
    TimedOut,
    /// A `try_` form found too few permits (or, under `Fifo`, someone queued).
    NoPermits,
    TooLarge,
}

/// One call and what it returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Call {
    /// A blocking or timed acquire of `n` (deadline on the mocked clock, in microseconds;
    /// `Some(0)` for a zero duration; `None`: no deadline).
    Acquire {
        n: usize,
        deadline: Option<u64>,
        result: Wait,
    },
    /// A `try_` acquire of `n`.
    TryAcquire {
        n: usize,
        result: Wait,
    },
    /// A plain release of `n` (a guard dropped, `add_permits`, `try_add_permits`); `ok`:
    /// whether it was accepted.
    Release {
        n: usize,
        ok: bool,
    },
    /// `release_fair` of `n`.
    ReleaseFair {
        n: usize,
    },
    /// `forget_permits(asked)`, which returned `taken`.
    Forget {
        asked: usize,
        taken: usize,
    },
    Close,
    /// `available_permits()` returned `seen`.
    Available {
        seen: usize,
    },
    /// `is_closed()` returned `seen`.
    IsClosed {
        seen: bool,
    },
    /// `advance_clock` by `micros`.
    Advance {
        micros: u64,
    },
}

impl Call {
    /// Whether the call has two events (arrival and completion).
    fn waits(&self) -> bool {
        matches!(self, Call::Acquire { .. })
    }
}

/// A blocked request.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Blocked {
    /// The call's index in the history.
    id: usize,
    n: usize,
    deadline: Option<u64>,
}

/// The model's state.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Spec {
    mode: Fairness,
    permits: usize,
    closed: bool,
    clock: u64,
    /// Queued requests not yet handed their permits, in arrival order.
    queue: Vec<Blocked>,
    /// Calls (by index) that were handed their permits and have not completed yet.
    handed: Vec<usize>,
    /// Calls (by index) whose arrival completed them: their completion event only returns.
    done_at_arrival: Vec<usize>,
}

impl Spec {
    /// A semaphore of `permits` in mode `mode`, the clock at 0.
    pub(crate) fn new(permits: usize, mode: Fairness) -> Spec {
        Spec {
            mode,
            permits,
            closed: false,
            clock: 0,
            queue: Vec::new(),
            handed: Vec::new(),
            done_at_arrival: Vec::new(),
        }
    }

    /// Whether a running thread may take `n` now.
    fn may_take(&self, n: usize) -> bool {
        self.permits >= n && (self.mode != Fairness::Fifo || self.queue.is_empty())
    }

    /// Hands permits to the queued requests, in order: under `Fifo` (or `fifo`) stopping at
    /// the first that does not fit, otherwise passing over it.
    fn hand_over(&mut self, fifo: bool) {
        if self.closed {
            return;
        }
        let mut i = 0;
        while i < self.queue.len() {
            if self.queue[i].n <= self.permits {
                let b = self.queue.remove(i);
                self.permits -= b.n;
                self.handed.push(b.id);
            } else if fifo {
                return;
            } else {
                i += 1;
            }
        }
    }

    /// Every state the arrival of call `id` can lead to.
    fn arrive(&self, id: usize, call: &Call) -> Vec<Spec> {
        let Call::Acquire {
            n,
            deadline,
            result,
        } = *call
        else {
            unreachable!("only acquires arrive")
        };
        let immediate = if self.closed {
            Some(Wait::Closed)
        } else if n > MAX {
            Some(Wait::TooLarge)
        } else if n == 0 || self.may_take(n) {
            Some(Wait::Ok)
        } else if deadline.is_some_and(|d| d <= self.clock) {
            Some(Wait::TimedOut)
        } else {
            None
        };
        let mut next = self.clone();
        match immediate {
            Some(r) if r != result => return Vec::new(),
            Some(r) => {
                if r == Wait::Ok {
                    next.permits -= n;
                }
                next.done_at_arrival.push(id);
            }
            None => next.queue.push(Blocked { id, n, deadline }),
        }
        vec![next]
    }

    /// Every state the completion of call `id` can lead to.
    fn complete(&self, id: usize, call: &Call) -> Vec<Spec> {
        let Call::Acquire { n, result, .. } = *call else {
            unreachable!("only acquires complete")
        };
        let mut next = self.clone();
        if let Some(i) = next.done_at_arrival.iter().position(|&d| d == id) {
            next.done_at_arrival.remove(i);
            return vec![next];
        }
        if let Some(i) = next.handed.iter().position(|&h| h == id) {
            if result != Wait::Ok {
                return Vec::new();
            }
            next.handed.remove(i);
            return vec![next];
        }
        let Some(i) = next.queue.iter().position(|b| b.id == id) else {
            return Vec::new();
        };
        let ok = match result {
            // Under `Fifo` a queued request gets permits only by a handoff.
            Wait::Ok => !self.closed && self.mode != Fifo && self.permits >= n,
            Wait::Closed => self.closed,
            Wait::TimedOut => next.queue[i].deadline.is_some_and(|d| d <= self.clock),
            Wait::NoPermits | Wait::TooLarge => false,
        };
        if !ok {
            return Vec::new();
        }
        let b = next.queue.remove(i);
        if result == Wait::Ok {
            next.permits -= b.n;
        }
        if self.mode == Fifo && i == 0 {
            next.hand_over(true);
        }
        vec![next]
    }

    /// Every state the one-event call `call` can lead to.
    fn step(&self, call: &Call) -> Vec<Spec> {
        let mut next = self.clone();
        match *call {
            Call::Acquire { .. } => unreachable!("acquires have two events"),
            Call::TryAcquire { n, result } => {
                let r = if self.closed {
                    Wait::Closed
                } else if n > MAX {
                    Wait::TooLarge
                } else if n == 0 {
                    Wait::Ok
                } else if self.may_take(n) {
                    next.permits -= n;
                    Wait::Ok
                } else {
                    Wait::NoPermits
                };
                if r != result {
                    return Vec::new();
                }
                vec![next]
            }
            Call::Release { n, ok } => {
                let fits = n <= MAX - self.permits;
                if fits != ok {
                    return Vec::new();
                }
                if !ok {
                    return vec![next];
                }
                next.permits += n;
                match self.mode {
                    Fifo => {
                        next.hand_over(true);
                        vec![next]
                    }
                    Fairness::Eventual => {
                        let mut handed = next.clone();
                        handed.hand_over(false);
                        if handed == next {
                            vec![next]
                        } else {
                            vec![next, handed]
                        }
                    }
                    _ => vec![next],
                }
            }
            Call::ReleaseFair { n } => {
                if n > MAX - self.permits {
                    return Vec::new();
                }
                next.permits += n;
                next.hand_over(self.mode == Fifo);
                vec![next]
            }
            Call::Forget { asked, taken } => {
                if taken != asked.min(self.permits) {
                    return Vec::new();
                }
                next.permits -= taken;
                vec![next]
            }
            Call::Close => {
                next.closed = true;
                vec![next]
            }
            Call::Available { seen } => {
                if seen == self.permits {
                    vec![next]
                } else {
                    Vec::new()
                }
            }
            Call::IsClosed { seen } => {
                if seen == self.closed {
                    vec![next]
                } else {
                    Vec::new()
                }
            }
            Call::Advance { micros } => {
                next.clock += micros;
                vec![next]
            }
        }
    }

    /// Whether no blocked request could complete now, and the blocked ones are exactly
    /// `waiting` (call indices): the state a quiescent run must be in.
    fn stuck_with(&self, waiting: &[usize]) -> bool {
        if !self.handed.is_empty() || (self.closed && !self.queue.is_empty()) {
            return false;
        }
        let mut queued: Vec<usize> = self.queue.iter().map(|b| b.id).collect();
        queued.sort_unstable();
        let mut expected = waiting.to_vec();
        expected.sort_unstable();
        if queued != expected {
            return false;
        }
        self.queue.iter().all(|b| {
            let may_complete = match self.mode {
                Fifo => false,
                _ => self.permits >= b.n,
            };
            !may_complete && b.deadline.is_none_or(|d| d > self.clock)
        })
    }
}

use Fairness::Fifo;

/// One recorded call.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Record {
    pub(crate) thread: usize,
    pub(crate) call: Call,
    /// Ticks of a clock that orders every record of the run (shuttle's one-task-at-a-time
    /// execution, or a `SeqCst` counter on real threads), when the call started and returned.
    pub(crate) start: u64,
    pub(crate) end: u64,
}

/// One event of the search: a call's single event, or a waiting call's arrival or
/// completion.
#[derive(Clone, Copy, Debug)]
struct Event {
    record: usize,
    kind: Kind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Single,
    Arrive,
    Complete,
}

/// A run's calls, and how precedence between them is decided.
#[derive(Clone, Debug)]
pub(crate) struct History {
    pub(crate) permits: usize,
    pub(crate) mode: Fairness,
    pub(crate) records: Vec<Record>,
    /// Real time (`start`/`end` ticks) orders calls of different threads; without it only
    /// each thread's program order does (loom: its execution order is not happens-before).
    pub(crate) real_time: bool,
}

/// Why a history is not linearizable, with the history.
#[derive(Debug)]
pub(crate) struct Violation(pub(crate) String);

impl History {
    fn events(&self) -> Vec<Event> {
        let mut events = Vec::new();
        for (record, r) in self.records.iter().enumerate() {
            if r.call.waits() {
                events.push(Event {
                    record,
                    kind: Kind::Arrive,
                });
                events.push(Event {
                    record,
                    kind: Kind::Complete,
                });
            } else {
                events.push(Event {
                    record,
                    kind: Kind::Single,
                });
            }
        }
        events
    }

    /// Whether record `a` must be linearized before record `b` starts.
    fn precedes(&self, a: usize, b: usize) -> bool {
        let (ra, rb) = (&self.records[a], &self.records[b]);
        if ra.thread == rb.thread {
            return ra.start < rb.start;
        }
        self.real_time && ra.end < rb.start
    }

    /// Searches for a linearization; `Ok` if there is one.
    pub(crate) fn linearizable(&self) -> Result<(), Violation> {
        self.search(&[])
    }

    /// As [`linearizable`](History::linearizable), with quiescence points at the ticks
    /// `points` (increasing): at each, the calls that had started and not returned
    /// (`start <= at < end`) were all waiting, and the model must have exactly them blocked,
    /// none able to complete.
    pub(crate) fn quiescent(&self, points: &[u64]) -> Result<(), Violation> {
        self.search(points)
    }

    fn search(&self, points: &[u64]) -> Result<(), Violation> {
        let events = self.events();
        assert!(events.len() < 64, "a history of fewer than 64 events");
        let all = (1u64 << events.len()) - 1;
        let mut phases = Vec::new();
        for (k, &at) in points.iter().enumerate() {
            // The calls waiting at the point: started before it, not returned.
            let waiting: Vec<usize> = (0..self.records.len())
                .filter(|&i| self.records[i].start <= at && self.records[i].end > at)
                .collect();
            if let Some(&w) = waiting.iter().find(|&&i| !self.records[i].call.waits()) {
                return Err(Violation(format!(
                    "quiescent liveness: {:?} had not returned at quiescence point {k} (tick \
                     {at})\n{self}",
                    self.records[w].call
                )));
            }
            // The events linearized before the point: every event of a call that had
            // returned, and the arrivals of the waiting calls.
            let before = events.iter().enumerate().fold(0u64, |mask, (e, ev)| {
                let r = ev.record;
                let in_before =
                    self.records[r].end <= at || (ev.kind == Kind::Arrive && waiting.contains(&r));
                if in_before { mask | (1 << e) } else { mask }
            });
            phases.push(Phase { before, waiting });
        }
        let mut seen = HashSet::new();
        let start = Spec::new(self.permits, self.mode);
        let search = Search {
            history: self,
            events: &events,
            all,
            phases: &phases,
        };
        if search.dfs(0, start, 0, &mut seen) {
            Ok(())
        } else {
            let what = if points.is_empty() {
                "not linearizable"
            } else {
                "not linearizable with the waiting calls blocked at each quiescence point (a \
                 lost wakeup, a stranded head, or a wrong result)"
            };
            Err(Violation(format!(
                "{what}: {:?} semaphore of {} permits, quiescence at ticks {points:?}\n{self}",
                self.mode, self.permits
            )))
        }
    }
}

/// What must hold at one quiescence point.
struct Phase {
    /// The events linearized before it.
    before: u64,
    /// The calls blocked at it.
    waiting: Vec<usize>,
}

/// One search over a history's events.
struct Search<'a> {
    history: &'a History,
    events: &'a [Event],
    all: u64,
    phases: &'a [Phase],
}

impl Search<'_> {
    /// Whether event `e` may be linearized next, the events in `done` being linearized.
    fn ready(&self, done: u64, e: usize) -> bool {
        let ev = self.events[e];
        if ev.kind == Kind::Complete && done & (1 << (e - 1)) == 0 {
            return false;
        }
        // Every event of a call that must precede this one is linearized.
        self.events.iter().enumerate().all(|(f, other)| {
            done & (1 << f) != 0
                || other.record == ev.record
                || !self.history.precedes(other.record, ev.record)
        })
    }

    /// Depth-first search from `state` with the events of `done` linearized, the quiescence
    /// points before `phase` passed.
    fn dfs(
        &self,
        done: u64,
        state: Spec,
        phase: usize,
        seen: &mut HashSet<(u64, Spec, usize)>,
    ) -> bool {
        let mut phase = phase;
        while let Some(p) = self.phases.get(phase) {
            if done != p.before {
                break;
            }
            if !state.stuck_with(&p.waiting) {
                return false;
            }
            phase += 1;
        }
        if done == self.all {
            return true;
        }
        if !seen.insert((done, state.clone(), phase)) {
            return false;
        }
        let limit = self.phases.get(phase).map(|p| p.before);
        for e in 0..self.events.len() {
            if done & (1 << e) != 0 || limit.is_some_and(|mask| mask & (1 << e) == 0) {
                continue;
            }
            if !self.ready(done, e) {
                continue;
            }
            let ev = self.events[e];
            let call = &self.history.records[ev.record].call;
            let next = match ev.kind {
                Kind::Single => state.step(call),
                Kind::Arrive => state.arrive(ev.record, call),
                Kind::Complete => state.complete(ev.record, call),
            };
            for s in next {
                if self.dfs(done | (1 << e), s, phase, seen) {
                    return true;
                }
            }
        }
        false
    }
}

impl std::fmt::Display for History {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for r in &self.records {
            writeln!(
                f,
                "  thread {} [{:>3}, {:>3}] {:?}",
                r.thread, r.start, r.end, r.call
            )?;
        }
        Ok(())
    }
}

/// The checker on histories whose answers are known.
#[cfg(test)]
mod known_answers {
    use super::{Call, History, Record, Wait};
    use parksema::Fairness;

    fn rec(thread: usize, start: u64, end: u64, call: Call) -> Record {
        Record {
            thread,
            call,
            start,
            end,
        }
    }

    fn history(permits: usize, mode: Fairness, records: Vec<Record>) -> History {
        History {
            permits,
            mode,
            records,
            real_time: true,
        }
    }

    fn acquire(n: usize, result: Wait) -> Call {
        Call::Acquire {
            n,
            deadline: None,
            result,
        }
    }

    #[test]
    fn two_overlapping_takes_of_one_permit_are_not_linearizable() {
        let h = history(
            1,
            Fairness::Eventual,
            vec![
                rec(
                    0,
                    0,
                    3,
                    Call::TryAcquire {
                        n: 1,
                        result: Wait::Ok,
                    },
                ),
                rec(
                    1,
                    1,
                    2,
                    Call::TryAcquire {
                        n: 1,
                        result: Wait::Ok,
                    },
                ),
            ],
        );
        assert!(h.linearizable().is_err());
    }

    #[test]
    fn a_blocked_take_completed_by_a_later_release_is_linearizable() {
        let h = history(
            0,
            Fairness::Eventual,
            vec![
                rec(0, 0, 5, acquire(1, Wait::Ok)),
                rec(1, 1, 2, Call::Release { n: 1, ok: true }),
                rec(1, 3, 4, Call::Available { seen: 1 }),
            ],
        );
        assert!(h.linearizable().is_ok());
    }

    #[test]
    fn under_fifo_a_handed_permit_never_shows_in_the_count() {
        let with = |seen: usize| {
            history(
                0,
                Fairness::Fifo,
                vec![
                    rec(0, 0, 10, acquire(1, Wait::Ok)),
                    rec(1, 1, 2, Call::Release { n: 1, ok: true }),
                    // Fails with the permit free only if the acquire took it or was handed it.
                    rec(
                        1,
                        3,
                        4,
                        Call::TryAcquire {
                            n: 1,
                            result: Wait::NoPermits,
                        },
                    ),
                    rec(1, 5, 6, Call::Available { seen }),
                ],
            )
        };
        assert!(with(0).linearizable().is_ok());
        assert!(
            with(1).linearizable().is_err(),
            "a handed permit showed in the count"
        );
    }

    #[test]
    fn a_lost_wakeup_fails_quiescence() {
        // A permit was added and nobody took it, yet the acquire was still waiting.
        let h = history(
            0,
            Fairness::Barging,
            vec![
                rec(0, 0, 9, acquire(1, Wait::Closed)),
                rec(1, 1, 2, Call::Release { n: 1, ok: true }),
                rec(2, 6, 7, Call::Close),
            ],
        );
        assert!(h.linearizable().is_ok(), "linearizable: close came first");
        assert!(
            h.quiescent(&[5]).is_err(),
            "but the waiter was stranded at tick 5"
        );
        // Without the release it is stuck legitimately.
        let h = history(
            0,
            Fairness::Barging,
            vec![
                rec(0, 0, 9, acquire(1, Wait::Closed)),
                rec(2, 6, 7, Call::Close),
            ],
        );
        assert!(h.quiescent(&[5]).is_ok());
    }

    #[test]
    fn under_fifo_a_later_arrival_is_not_served_first() {
        // The large request is queued (a `try_` of one fails with a permit free) before the
        // small one starts; the small one returns while only one permit was ever free.
        let h = |small: Wait| {
            history(
                0,
                Fairness::Fifo,
                vec![
                    rec(1, 0, 20, acquire(2, Wait::Closed)),
                    rec(0, 1, 2, Call::Release { n: 1, ok: true }),
                    rec(
                        0,
                        3,
                        4,
                        Call::TryAcquire {
                            n: 1,
                            result: Wait::NoPermits,
                        },
                    ),
                    rec(2, 5, 8, acquire(1, small)),
                    rec(3, 6, 7, Call::Close),
                    rec(0, 10, 11, Call::Release { n: 1, ok: true }),
                ],
            )
        };
        assert!(h(Wait::Closed).linearizable().is_ok());
        assert!(
            h(Wait::Ok).linearizable().is_err(),
            "served ahead of the head"
        );
    }
}
