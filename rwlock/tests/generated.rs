//! Generated programs against the reader-writer lock's specification, run by every build
//! (loom, shuttle, real threads).
//!
//! The lock's specification is the semaphore's (`models/spec.rs`, included below) at
//! `max_readers` permits in the lock's fairness mode: a read is an acquire of one permit, a
//! write an acquire of all `max_readers`, dropping a guard a release of what it holds, and
//! `available_permits` and `parked_threads` the semaphore's. That is the construction the
//! crate documents, so every promise of the semaphore's modes (a `Fifo` writer waiting holds
//! up the readers behind it, a reader may out-barge a parked writer under `Barging`, ...) is
//! the lock's; and exclusion follows from the count: a reader that gets in beside a writer
//! took a permit the model does not have.
//!
//! A program is a lock (1 to 3 readers at most, one of the three modes) and a few threads,
//! each a list of operations (up to 5; 3 under loom, where each one multiplies the
//! executions): `read`, `write`, their `try_` forms and their `try_*_for` forms
//! with a zero timeout or one too large to have a deadline, dropping the last guard held,
//! and the two observations. A thread that holds a guard only makes `try_` requests, so no
//! program deadlocks by itself. A writer increments the value and a reader reads it: under
//! loom the value is in a tracked cell, so a holder not ordered after the previous writer is
//! reported too. Each call is recorded with the ticks of a `SeqCst` counter at its start and
//! end (real-time precedence, except under loom: program order only), and the history is
//! checked for linearizability when the threads have joined.

#![allow(dead_code)]

#[path = "../../models/spec.rs"]
mod spec;

use std::sync::Mutex as StdMutex;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Duration;

use parksema::__model::{Arc, thread};
use parksema_rwlock::{Fairness, RwLock};
use proptest::prelude::*;

use crate::scenarios::Build;
pub(crate) use spec::SITUATIONS;
use spec::{Call, History, Record, Wait};

/// How a request waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Form {
    Blocking,
    Try,
    /// `try_*_for(Duration::ZERO)`.
    Zero,
    /// `try_*_for(Duration::MAX)`: no deadline.
    Forever,
}

/// One operation of a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Read(Form),
    Write(Form),
    /// Drops the guard taken last, if any.
    Drop,
    Available,
    Parked,
}

/// A program: the lock and one list of operations per thread.
#[derive(Clone, Debug)]
pub(crate) struct Program {
    pub(crate) max_readers: usize,
    pub(crate) mode: Fairness,
    pub(crate) threads: Vec<Vec<Op>>,
}

fn form() -> impl Strategy<Value = Form> {
    prop_oneof![
        4 => Just(Form::Blocking),
        2 => Just(Form::Try),
        1 => Just(Form::Zero),
        2 => Just(Form::Forever),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => form().prop_map(Op::Read),
        3 => form().prop_map(Op::Write),
        3 => Just(Op::Drop),
        1 => Just(Op::Available),
        1 => Just(Op::Parked),
    ]
}

fn lock_strategy() -> impl Strategy<Value = (usize, Fairness)> {
    (
        1..=3usize,
        prop_oneof![
            Just(Fairness::Eventual),
            Just(Fairness::Fifo),
            Just(Fairness::Barging)
        ],
    )
}

/// Any mix: 2 to `workers` threads of 1 to `ops` operations.
fn mixed(workers: usize, ops: usize) -> impl Strategy<Value = Program> {
    (
        lock_strategy(),
        prop::collection::vec(prop::collection::vec(op(), 1..=ops), 2..=workers),
    )
        .prop_map(|((max_readers, mode), threads)| Program {
            max_readers,
            mode,
            threads,
        })
}

/// A queue: a holder takes the lock (to read or to write), looks at the queue and lets go,
/// while 1 to `workers - 1` others each make one or two waiting requests.
fn queue(workers: usize) -> impl Strategy<Value = Program> {
    let waiting = prop_oneof![Just(Form::Blocking), Just(Form::Forever)];
    let request = (any::<bool>(), waiting).prop_map(|(write, form)| {
        if write {
            Op::Write(form)
        } else {
            Op::Read(form)
        }
    });
    (
        lock_strategy(),
        any::<bool>(),
        prop::collection::vec(
            prop::collection::vec(prop_oneof![3 => request, 1 => Just(Op::Drop)], 1..=3),
            1..workers,
        ),
    )
        .prop_map(|((max_readers, mode), write, mut others)| {
            let hold = if write {
                Op::Write(Form::Blocking)
            } else {
                Op::Read(Form::Blocking)
            };
            let mut threads = vec![vec![hold, Op::Parked, Op::Available, Op::Drop]];
            threads.append(&mut others);
            Program {
                max_readers,
                mode,
                threads,
            }
        })
}

/// Either family, `workers` threads of at most `ops` operations (a queue's holder has 4).
pub(crate) fn any_program(workers: usize, ops: usize) -> impl Strategy<Value = Program> {
    prop_oneof![mixed(workers, ops), queue(workers)]
}

/// The programs' seed: `PROPTEST_RNG_SEED` (what `cargo xtask verify --proptest-seed` sets;
/// the nightly draws one per run), else a fixed one.
pub(crate) fn program_seed() -> u64 {
    std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5EED_0007)
}

/// A guard held by a thread.
enum Guard<'a> {
    Read(parksema_rwlock::ReadGuard<'a, u64>),
    Write(parksema_rwlock::WriteGuard<'a, u64>),
}

struct Recorder {
    ticks: AtomicU64,
    records: StdMutex<Vec<Record>>,
    /// Threads not yet at the start (real threads only: a spawned thread would otherwise
    /// finish before the next one starts, and nothing would ever wait).
    starting: std::sync::atomic::AtomicUsize,
}

impl Recorder {
    fn tick(&self) -> u64 {
        self.ticks.fetch_add(1, SeqCst)
    }

    fn record(&self, thread: usize, start: u64, call: Call) {
        let end = self.tick();
        self.records.lock().unwrap().push(Record {
            thread,
            call,
            start,
            end,
            cost: None,
        });
    }
}

/// On real threads: waits until every thread of the program is at the start (under the
/// checkers nothing: they schedule the threads themselves, and a spin would only add
/// executions).
fn start_together(rec: &Recorder) {
    if cfg!(not(any(feature = "loom", feature = "shuttle"))) {
        rec.starting.fetch_sub(1, SeqCst);
        while rec.starting.load(SeqCst) > 0 {
            std::thread::yield_now();
        }
    }
}

/// On real threads: lets the others run while this thread holds a guard, so that they
/// meet it and queue behind it.
fn linger() {
    if cfg!(not(any(feature = "loom", feature = "shuttle"))) {
        std::thread::yield_now();
    }
}

fn run_thread(lock: &RwLock<u64>, rec: &Recorder, me: usize, ops: &[Op], max: usize) {
    start_together(rec);
    let mut guards: Vec<(Guard<'_>, usize)> = Vec::new();
    let release = |(g, n): (Guard<'_>, usize)| {
        let start = rec.tick();
        drop(g);
        rec.record(me, start, Call::Release { n, ok: true });
    };
    for &op in ops {
        match op {
            Op::Read(form) | Op::Write(form) => {
                let write = matches!(op, Op::Write(_));
                let n = if write { max } else { 1 };
                // Holding a guard, only `try_` requests: no program deadlocks by itself.
                let form = if guards.is_empty() { form } else { Form::Try };
                let start = rec.tick();
                let guard = match (write, form) {
                    (false, Form::Blocking) => Some(Guard::Read(lock.read())),
                    (false, Form::Try) => lock.try_read().map(Guard::Read),
                    (false, Form::Zero) => lock.try_read_for(Duration::ZERO).map(Guard::Read),
                    (false, Form::Forever) => lock.try_read_for(Duration::MAX).map(Guard::Read),
                    (true, Form::Blocking) => Some(Guard::Write(lock.write())),
                    (true, Form::Try) => lock.try_write().map(Guard::Write),
                    (true, Form::Zero) => lock.try_write_for(Duration::ZERO).map(Guard::Write),
                    (true, Form::Forever) => lock.try_write_for(Duration::MAX).map(Guard::Write),
                };
                let result = match (&guard, form) {
                    (Some(_), _) => Wait::Ok,
                    (None, Form::Try) => Wait::NoPermits,
                    (None, _) => Wait::TimedOut,
                };
                let call = match form {
                    Form::Try => Call::TryAcquire { n, result },
                    Form::Zero => Call::Acquire {
                        n,
                        deadline: Some(0),
                        result,
                    },
                    _ => Call::Acquire {
                        n,
                        deadline: None,
                        result,
                    },
                };
                rec.record(me, start, call);
                match guard {
                    Some(Guard::Write(mut g)) => {
                        *g += 1;
                        linger();
                        guards.push((Guard::Write(g), n));
                    }
                    Some(Guard::Read(g)) => {
                        std::hint::black_box(*g);
                        linger();
                        guards.push((Guard::Read(g), n));
                    }
                    None => {}
                }
            }
            Op::Drop => {
                if let Some(held) = guards.pop() {
                    release(held);
                }
            }
            Op::Available => {
                let start = rec.tick();
                let seen = lock.available_permits();
                rec.record(me, start, Call::Available { seen });
            }
            Op::Parked => {
                let start = rec.tick();
                let seen = lock.parked_threads();
                rec.record(me, start, Call::Parked { seen });
            }
        }
    }
    while let Some(held) = guards.pop() {
        release(held);
    }
}

/// Runs `program` against `build`'s lock and checks its history; panics with the violation.
/// `real_time`: whether ticks order the calls of different threads. Returns the situations
/// (of the semaphore's [`SITUATIONS`]) the linearization passed through.
pub(crate) fn run(program: &Program, build: Build, real_time: bool) -> u32 {
    let lock = Arc::new(build.fair(program.mode).lock(0u64, program.max_readers));
    let rec = std::sync::Arc::new(Recorder {
        ticks: AtomicU64::new(0),
        records: StdMutex::new(Vec::new()),
        starting: std::sync::atomic::AtomicUsize::new(program.threads.len()),
    });
    let max = program.max_readers;
    let handles: Vec<_> = program
        .threads
        .iter()
        .cloned()
        .enumerate()
        .map(|(me, ops)| {
            let (lock, rec) = (Arc::clone(&lock), std::sync::Arc::clone(&rec));
            thread::spawn(move || run_thread(&lock, &rec, me, &ops, max))
        })
        .collect();
    for h in handles {
        if let Err(payload) = h.join() {
            std::panic::resume_unwind(payload);
        }
    }
    // A last look, after every call has returned: every permit is back.
    let start = rec.tick();
    let seen = lock.available_permits();
    rec.record(program.threads.len(), start, Call::Available { seen });
    let mut records = rec.records.lock().unwrap().clone();
    records.sort_by_key(|r| r.start);
    let history = History {
        permits: program.max_readers,
        mode: program.mode,
        records,
        real_time,
        // Nobody moves the clock here, so under shuttle the timer is the model's; elsewhere
        // the model treats it as unknown.
        exact_timer: cfg!(feature = "shuttle") && real_time,
    };
    // On a thread of its own: the search recurses once per event, deeper than a checker's
    // task stack allows.
    let verdict = std::thread::scope(|s| {
        s.spawn(|| history.linearizable())
            .join()
            .expect("the search does not panic")
    });
    match verdict {
        Ok(reached) => reached,
        Err(v) => panic!(
            "reader-writer lock specification: {}\nprogram: {program:?}",
            v.0
        ),
    }
}

/// The situations the lock's programs can reach and report: queues of two and three and a
/// head that does not fit with a smaller request behind (a writer waiting for the readers
/// inside, a reader behind it), per mode, and a queued request out-barged.
pub(crate) const REPORTED: [usize; 10] = [
    spec::at::QUEUE_2,
    spec::at::QUEUE_2 + 1,
    spec::at::QUEUE_2 + 2,
    spec::at::QUEUE_3,
    spec::at::QUEUE_3 + 1,
    spec::at::QUEUE_3 + 2,
    spec::at::HEAD_DOES_NOT_FIT,
    spec::at::HEAD_DOES_NOT_FIT + 1,
    spec::at::HEAD_DOES_NOT_FIT + 2,
    spec::at::OUT_BARGED,
];

/// How many runs reached each of the [`REPORTED`] situations.
#[derive(Clone, Debug, Default)]
pub(crate) struct Coverage {
    pub(crate) runs: u64,
    pub(crate) reached: [u64; REPORTED.len()],
}

impl Coverage {
    /// Adds one run's situations.
    pub(crate) fn add(&mut self, reached: u32) {
        self.runs += 1;
        for (i, &s) in REPORTED.iter().enumerate() {
            if reached & spec::bit(s) != 0 {
                self.reached[i] += 1;
            }
        }
    }

    /// The table, one line a situation.
    pub(crate) fn table(&self) -> String {
        let mut s = format!("situations reached, of {} runs:\n", self.runs);
        for (i, &at) in REPORTED.iter().enumerate() {
            s.push_str(&format!("  {:>8}  {}\n", self.reached[i], SITUATIONS[at]));
        }
        s
    }

    /// Writes one coverage record per situation, and fails naming each situation the first
    /// `required` of [`REPORTED`] that no run reached.
    pub(crate) fn report_and_require(&self, build: &str, check: &str, required: usize) {
        for (i, &at) in REPORTED.iter().enumerate() {
            watchdog::report::coverage(
                build,
                check,
                &format!("rwlock: {}", SITUATIONS[at]),
                self.reached[i],
                self.runs,
                i < required,
            );
        }
        let missing: Vec<&str> = (0..required)
            .filter(|&i| self.reached[i] == 0)
            .map(|i| SITUATIONS[REPORTED[i]])
            .collect();
        assert!(
            missing.is_empty(),
            "the search left situations it must reach unreached: {missing:?}\n{}",
            self.table()
        );
    }
}
