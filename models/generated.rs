//! Generated concurrent programs over the whole API, run under a checker (shuttle here; the
//! same runner serves every build that includes this file), each run's history checked
//! against the executable specification (`spec.rs`): linearizability, and quiescent
//! liveness at the point where every worker has finished or is parked.
//!
//! A program is an initial count, a fairness mode, and 2–3 threads of 1–4 operations drawn
//! from every acquire form (blocking, `try_`, a zero timeout, a deadline on the mocked clock;
//! weighted from 0 to one more than the permits the program ever puts in; owned and
//! borrowed), `add_permits`, `try_add_permits` of `usize::MAX` (always refused),
//! `forget_permits`, `close`, and on held guards drop, `release_fair`, `forget`, `split` and
//! `merge`, with the observations `available_permits`, `is_closed` and `parked_threads`, and
//! clock advances. The main thread is the monitor: once every worker has finished or is
//! parked (parkcheck's untracked count, so it adds no happens-before and takes no lock), it
//! records the quiescence point, closes the semaphore so the parked calls return, and joins.

#![allow(dead_code)]

use std::sync::atomic::{AtomicU64, Ordering as StdOrdering};
use std::sync::{Arc as StdArc, Mutex};
use std::time::Duration;

use parksema::__model::{
    AtomicUsize, Ordering, SharedCell, advance_clock, now, parked_untracked, thread,
};
use parksema::{Fairness, OwnedPermit, Permit, Semaphore, TryAcquireError};
use proptest::prelude::*;

use super::spec::{Call, History, Record, Wait};

/// How an acquire waits.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Form {
    Blocking,
    /// `try_acquire_many`.
    Try,
    /// `try_acquire_many_for(Duration::ZERO)`.
    ZeroTimeout,
    /// `try_acquire_many_until(start + micros)` on the mocked clock.
    Until(u64),
}

/// One operation of one thread.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Op {
    Acquire {
        n: usize,
        form: Form,
        owned: bool,
    },
    /// Drop the newest guard.
    Drop,
    /// `release_fair` the newest guard.
    ReleaseFair,
    /// `forget` the newest guard.
    ForgetGuard,
    /// Split `k` off the newest guard.
    Split(usize),
    /// Merge the newest guard into the one before it.
    Merge,
    Add(usize),
    Overfill,
    ForgetPermits(usize),
    Close,
    Available,
    IsClosed,
    Parked,
    Advance(u64),
    /// A read and a write of the shared cell while holding permits: only in a program whose
    /// one permit is all there is (no adds), so a holder is alone with the cell, and only
    /// until the monitor adds permits. Under loom a holder not ordered after the last one is
    /// a causality violation: the only way a history check can see an ordering flaw.
    Touch,
}

/// A generated program.
#[derive(Clone, Debug)]
pub(crate) struct Program {
    pub(crate) permits: usize,
    pub(crate) mode: Fairness,
    pub(crate) threads: Vec<Vec<Op>>,
}

impl Program {
    /// The program as real threads can run it against the specification: no deadline on
    /// the clock and no clock advance (real time passes by itself, and the specification's
    /// clock moves only by advances), so a deadline is a zero timeout.
    pub(crate) fn for_real_threads(mut self) -> Program {
        for ops in &mut self.threads {
            ops.retain(|op| !matches!(op, Op::Advance(_)));
            for op in ops.iter_mut() {
                if let Op::Acquire { form, .. } = op
                    && matches!(form, Form::Until(_))
                {
                    *form = Form::ZeroTimeout;
                }
            }
        }
        self.threads.retain(|ops| !ops.is_empty());
        self
    }

    /// Whether a holder of a permit is alone with the shared cell: one permit, never added
    /// to.
    fn exclusive(&self) -> bool {
        self.permits == 1
            && !self
                .threads
                .iter()
                .flatten()
                .any(|op| matches!(op, Op::Add(_) | Op::Overfill))
    }

    /// The permits all its acquires ask for.
    fn requested(&self) -> usize {
        self.threads
            .iter()
            .flatten()
            .map(|op| match op {
                Op::Acquire { n, .. } => *n,
                _ => 0,
            })
            .sum()
    }
}

fn form() -> impl Strategy<Value = Form> {
    prop_oneof![
        4 => Just(Form::Blocking),
        2 => Just(Form::Try),
        1 => Just(Form::ZeroTimeout),
        2 => (1..=3u64).prop_map(|ms| Form::Until(ms * 1000)),
    ]
}

/// An operation; `max_n` is one more than the permits the program can ever put in.
fn op(max_n: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..=max_n, form(), any::<bool>()).prop_map(|(n, form, owned)| Op::Acquire { n, form, owned }),
        2 => Just(Op::Drop),
        1 => Just(Op::ReleaseFair),
        1 => Just(Op::ForgetGuard),
        1 => (1..=2usize).prop_map(Op::Split),
        1 => Just(Op::Merge),
        2 => (1..=2usize).prop_map(Op::Add),
        1 => Just(Op::Overfill),
        1 => (1..=2usize).prop_map(Op::ForgetPermits),
        1 => Just(Op::Close),
        1 => Just(Op::Available),
        1 => Just(Op::IsClosed),
        1 => Just(Op::Parked),
        1 => (1..=2u64).prop_map(|ms| Op::Advance(ms * 1000)),
        2 => Just(Op::Touch),
    ]
}

/// One permit and no adds, so that a holder is alone with the shared cell: each thread runs
/// one or two hold sections (an acquire of one permit in a drawn form, a touch of the cell,
/// a drawn release), and may close the semaphore at the end. The shape that lets loom's race
/// detection see an ordering flaw through a program.
pub(crate) fn exclusive_program(threads: usize) -> impl Strategy<Value = Program> {
    let section = (
        prop_oneof![
            Just(Form::Blocking),
            Just(Form::Try),
            Just(Form::ZeroTimeout)
        ],
        any::<bool>(),
        prop_oneof![Just(Op::Drop), Just(Op::ReleaseFair)],
    )
        .prop_map(|(form, owned, release)| {
            vec![Op::Acquire { n: 1, form, owned }, Op::Touch, release]
        });
    let thread = (
        prop::collection::vec(section, 1..=2),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(sections, close)| {
            let mut ops: Vec<Op> = sections.into_iter().flatten().collect();
            if close {
                ops.push(Op::Close);
            }
            ops
        });
    (
        prop_oneof![
            Just(Fairness::Eventual),
            Just(Fairness::Fifo),
            Just(Fairness::Barging)
        ],
        prop::collection::vec(thread, threads),
    )
        .prop_map(|(mode, threads)| Program {
            permits: 1,
            mode,
            threads,
        })
}

/// 0–2 permits, every mode, `threads` threads (a range) of 1–`ops` operations.
pub(crate) fn program(
    threads: std::ops::RangeInclusive<usize>,
    ops: usize,
) -> impl Strategy<Value = Program> {
    (
        0..=2usize,
        prop_oneof![
            Just(Fairness::Eventual),
            Just(Fairness::Fifo),
            Just(Fairness::Barging)
        ],
    )
        .prop_flat_map(move |(permits, mode)| {
            // Adds are at most 2 each, at most `ops` per thread, three threads.
            let max_n = permits + 1;
            (
                Just(permits),
                Just(mode),
                prop::collection::vec(prop::collection::vec(op(max_n), 1..=ops), threads.clone()),
            )
        })
        .prop_map(|(permits, mode, threads)| Program {
            permits,
            mode,
            threads,
        })
}

/// A held guard.
enum Guard<'a> {
    Borrowed(Permit<'a>),
    Owned(OwnedPermit),
}

impl Guard<'_> {
    fn n(&self) -> usize {
        match self {
            Guard::Borrowed(p) => p.num_permits(),
            Guard::Owned(p) => p.num_permits(),
        }
    }
}

/// The run's history as it is recorded: calls in the order they end, ticks from one
/// counter; and the shared cell.
struct Recorder {
    ticks: AtomicU64,
    records: Mutex<Vec<Record>>,
    cell: SharedCell<u64>,
    /// Whether the cell may be touched: the program is [`exclusive`](Program::exclusive)
    /// and the monitor has not added permits yet.
    exclusive: std::sync::atomic::AtomicBool,
}

impl Recorder {
    fn tick(&self) -> u64 {
        self.ticks.fetch_add(1, StdOrdering::SeqCst)
    }

    fn record(&self, thread: usize, start: u64, call: Call) {
        let end = self.tick();
        self.records.lock().unwrap().push(Record {
            thread,
            call,
            start,
            end,
        });
    }
}

fn wait_of(e: TryAcquireError) -> Wait {
    match e {
        TryAcquireError::Closed => Wait::Closed,
        TryAcquireError::NoPermits => Wait::NoPermits,
        TryAcquireError::TimedOut => Wait::TimedOut,
        TryAcquireError::TooLarge { .. } => Wait::TooLarge,
        _ => unreachable!("no other error"),
    }
}

/// Runs one thread's operations.
fn run_thread(
    sem: &StdArc<Semaphore>,
    rec: &Recorder,
    me: usize,
    ops: &[Op],
    waiting_calls: usize,
    base: std::time::Instant,
) {
    let mut guards: Vec<Guard<'_>> = Vec::new();
    let release = |rec: &Recorder, g: Guard<'_>, fair: bool| {
        let n = g.n();
        let start = rec.tick();
        match (g, fair) {
            (Guard::Borrowed(p), false) => drop(p),
            (Guard::Owned(p), false) => drop(p),
            (Guard::Borrowed(p), true) => p.release_fair(),
            (Guard::Owned(p), true) => p.release_fair(),
        }
        if n > 0 {
            let call = if fair {
                Call::ReleaseFair { n }
            } else {
                Call::Release { n, ok: true }
            };
            rec.record(me, start, call);
        }
    };
    for &op in ops {
        match op {
            Op::Acquire { n, form, owned } => {
                let start = rec.tick();
                let deadline = match form {
                    Form::Until(d) => Some(d),
                    Form::ZeroTimeout => Some(0),
                    _ => None,
                };
                let result: Result<Guard<'_>, TryAcquireError> = match (form, owned) {
                    (Form::Blocking, false) => {
                        sem.acquire_many(n)
                            .map(Guard::Borrowed)
                            .map_err(|e| match e {
                                parksema::AcquireError::TooLarge { requested } => {
                                    TryAcquireError::TooLarge { requested }
                                }
                                _ => TryAcquireError::Closed,
                            })
                    }
                    (Form::Blocking, true) => StdArc::clone(sem)
                        .acquire_many_owned(n)
                        .map(Guard::Owned)
                        .map_err(|_| TryAcquireError::Closed),
                    (Form::Try, false) => sem.try_acquire_many(n).map(Guard::Borrowed),
                    (Form::Try, true) => StdArc::clone(sem)
                        .try_acquire_many_owned(n)
                        .map(Guard::Owned),
                    (Form::ZeroTimeout, false) => sem
                        .try_acquire_many_for(n, Duration::ZERO)
                        .map(Guard::Borrowed),
                    (Form::ZeroTimeout, true) => StdArc::clone(sem)
                        .try_acquire_many_for_owned(n, Duration::ZERO)
                        .map(Guard::Owned),
                    (Form::Until(d), false) => sem
                        .try_acquire_many_until(n, base + Duration::from_micros(d))
                        .map(Guard::Borrowed),
                    (Form::Until(d), true) => StdArc::clone(sem)
                        .try_acquire_many_until_owned(n, base + Duration::from_micros(d))
                        .map(Guard::Owned),
                };
                let outcome = result.as_ref().map_or_else(|e| wait_of(*e), |_| Wait::Ok);
                if let Ok(g) = &result {
                    assert_eq!(g.n(), n, "a guard of the wrong size");
                }
                let call = match form {
                    Form::Try => Call::TryAcquire { n, result: outcome },
                    _ => Call::Acquire {
                        n,
                        deadline,
                        result: outcome,
                    },
                };
                rec.record(me, start, call);
                if let Ok(g) = result {
                    guards.push(g);
                }
            }
            Op::Drop => {
                if let Some(g) = guards.pop() {
                    release(rec, g, false);
                }
            }
            Op::ReleaseFair => {
                if let Some(g) = guards.pop() {
                    release(rec, g, true);
                }
            }
            Op::ForgetGuard => {
                if let Some(g) = guards.pop() {
                    match g {
                        Guard::Borrowed(p) => p.forget(),
                        Guard::Owned(p) => p.forget(),
                    }
                }
            }
            Op::Split(k) => {
                if let Some(g) = guards.last_mut() {
                    let before = g.n();
                    let part = match g {
                        Guard::Borrowed(p) => p.split(k).map(Guard::Borrowed),
                        Guard::Owned(p) => p.split(k).map(Guard::Owned),
                    };
                    assert_eq!(part.is_some(), k <= before, "split {k} of {before}");
                    if let Some(part) = part {
                        assert_eq!((g.n(), part.n()), (before - k, k), "split moved permits");
                        guards.push(part);
                    }
                }
            }
            Op::Merge => {
                if guards.len() >= 2 {
                    let last = guards.pop().expect("two guards");
                    let into = guards.last_mut().expect("two guards");
                    let total = into.n() + last.n();
                    let merged = match (into, last) {
                        (Guard::Borrowed(a), Guard::Borrowed(b)) => {
                            a.merge(b);
                            a.num_permits()
                        }
                        (Guard::Owned(a), Guard::Owned(b)) => {
                            a.merge(b);
                            a.num_permits()
                        }
                        // Guards of two kinds do not merge: put it back.
                        (_, b) => {
                            guards.push(b);
                            total
                        }
                    };
                    assert_eq!(merged, total, "merge lost or made permits");
                }
            }
            Op::Add(n) => {
                let start = rec.tick();
                let ok = sem.try_add_permits(n).is_ok();
                rec.record(me, start, Call::Release { n, ok });
            }
            Op::Overfill => {
                let start = rec.tick();
                let ok = sem.try_add_permits(usize::MAX).is_ok();
                rec.record(me, start, Call::Release { n: usize::MAX, ok });
            }
            Op::ForgetPermits(asked) => {
                let start = rec.tick();
                let taken = sem.forget_permits(asked);
                rec.record(me, start, Call::Forget { asked, taken });
            }
            Op::Close => {
                let start = rec.tick();
                sem.close();
                rec.record(me, start, Call::Close);
            }
            Op::Available => {
                let start = rec.tick();
                let seen = sem.available_permits();
                rec.record(me, start, Call::Available { seen });
            }
            Op::IsClosed => {
                let start = rec.tick();
                let seen = sem.is_closed();
                rec.record(me, start, Call::IsClosed { seen });
            }
            Op::Parked => {
                let parked = sem.parked_threads();
                assert!(
                    parked <= waiting_calls,
                    "parked_threads: {parked} parked, but the other threads make only \
                     {waiting_calls} calls that can wait"
                );
            }
            Op::Advance(micros) => {
                let start = rec.tick();
                advance_clock(Duration::from_micros(micros));
                rec.record(me, start, Call::Advance { micros });
            }
            Op::Touch => {
                let held: usize = guards.iter().map(Guard::n).sum();
                if held > 0 && rec.exclusive.load(StdOrdering::SeqCst) {
                    // SAFETY: this thread holds the program's one permit, so no other
                    // thread touches the cell until it is returned (the monitor's adds end
                    // the exclusivity first); a missing happens-before edge between holders
                    // is what loom reports.
                    let seen = rec.cell.with(|p| unsafe { *p });
                    // SAFETY: as above.
                    rec.cell.with_mut(|p| unsafe { *p = seen + 1 });
                }
            }
        }
    }
    while let Some(g) = guards.pop() {
        release(rec, g, false);
    }
}

/// Runs `program` on a semaphore made by `make(permits, mode)` and checks its history:
/// panics with the violation and the history if it is not linearizable or quiescence finds a
/// blocked call the model would let through. `real_time`: whether ticks order the calls of
/// different threads.
pub(crate) fn run(program: &Program, make: impl Fn(usize, Fairness) -> Semaphore, real_time: bool) {
    let sem = StdArc::new(make(program.permits, program.mode));
    let rec = StdArc::new(Recorder {
        ticks: AtomicU64::new(0),
        records: Mutex::new(Vec::new()),
        cell: SharedCell::new(0),
        exclusive: std::sync::atomic::AtomicBool::new(program.exclusive()),
    });
    let base = now();
    let finished = parksema::__model::Arc::new(AtomicUsize::new(0));
    let workers = program.threads.len();
    let handles: Vec<_> = program
        .threads
        .iter()
        .cloned()
        .enumerate()
        .map(|(me, ops)| {
            let (sem, rec, finished) = (
                StdArc::clone(&sem),
                StdArc::clone(&rec),
                parksema::__model::Arc::clone(&finished),
            );
            let waiting_calls = program
                .threads
                .iter()
                .enumerate()
                .filter(|&(t, _)| t != me)
                .flat_map(|(_, ops)| ops.iter())
                .filter(|op| matches!(op, Op::Acquire { form, .. } if !matches!(form, Form::Try)))
                .count();
            thread::spawn(move || {
                run_thread(&sem, &rec, me, &ops, waiting_calls, base);
                finished.fetch_add(1, Ordering::SeqCst);
            })
        })
        .collect();
    // The monitor: wait until every worker has finished or is parked.
    let quiesce = || loop {
        let look = || {
            (
                finished.load(Ordering::SeqCst),
                parked_untracked(&sem),
                rec.ticks.load(StdOrdering::SeqCst),
            )
        };
        let (done, parked, ticks) = look();
        if let Some(parked) = parked
            && done + parked >= workers
        {
            // Seen again after the others have had a chance to run: a thread just unparked
            // but not yet running is no longer counted, one that is running moves a tick.
            for _ in 0..workers {
                thread::yield_now();
            }
            if look() == (done, Some(parked), ticks) {
                break (rec.tick(), done, parked);
            }
        }
        thread::yield_now();
    };
    let first = quiesce();
    // Then let every waiting call through: the clock past every deadline, and one permit at
    // a time as many as all the program's requests ask for, so that the order in which the
    // parked calls are served, and each wake-up, is in the history.
    if first.1 < workers {
        rec.exclusive.store(false, StdOrdering::SeqCst);
        if cfg!(any(feature = "loom", feature = "shuttle")) {
            let start = rec.tick();
            advance_clock(Duration::from_millis(4));
            rec.record(workers, start, Call::Advance { micros: 4000 });
        }
        for _ in 0..program.requested() {
            let start = rec.tick();
            let ok = sem.try_add_permits(1).is_ok();
            rec.record(workers, start, Call::Release { n: 1, ok });
        }
    }
    let second = quiesce();
    let start = rec.tick();
    sem.close();
    rec.record(workers, start, Call::Close);
    for h in handles {
        if let Err(payload) = h.join() {
            std::panic::resume_unwind(payload);
        }
    }
    let mut records = rec.records.lock().unwrap().clone();
    records.sort_by_key(|r| r.start);
    let history = History {
        permits: program.permits,
        mode: program.mode,
        records,
        real_time,
    };
    if let Err(v) = history.quiescent(&[first.0, second.0]) {
        panic!(
            "spec: {} (at the quiescence points {} and {} finished, {} and {} parked)",
            v.0, first.1, second.1, first.2, second.2
        );
    }
}
