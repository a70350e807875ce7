//! Generated programs against the condition variable's specification (`spec.rs`), run by
//! every build: under loom (`tests/loom.rs`: every interleaving within a preemption bound),
//! under shuttle (`tests/shuttle.rs`: random schedules) and on real threads
//! (`tests/stress.rs`).
//!
//! A program is a few threads, each a short list of operations: a wait (blocking, or timed
//! with a timeout of 0, 1 or 3 ms, or one too large to have a deadline), `notify_one` or
//! `notify_all` made while holding the mutex (then, now and then, holding it 5 ms longer, so
//! that the waits it requeued pass their deadlines on the mutex's queue) or after leaving it,
//! a clock advance, and a plain `lock` or `try_lock`. Two families: any mix of them, and a
//! queue of waiters with one driver thread that notifies and moves the clock.
//!
//! Every event is logged inside the mutex (see `spec.rs`), and the log is checked against
//! the specification when the threads have joined. A program never strands a wait: the
//! threads count, under the mutex, how many of them are neither waiting nor finished, and
//! the last one to stop being so (by finishing, or by being about to wait) sets `closing` and
//! ends the waits in progress: if each has a deadline, by moving the clock past the latest
//! (holding the mutex), so that each must time out by itself; otherwise by `notify_all` (a
//! logged notification like any other). A wait that finds `closing` set is skipped. So a
//! correct condition variable always lets the program finish, and a hang is the condition
//! variable's: loom and shuttle report the deadlock (a timeout that never fires included),
//! the watchdog the stall. The closing `notify_all` would rescue a waiter that a lost
//! notification left queued, but the log shows the loss first: the `notify_one` that found
//! nobody, or a `notify_all` that counted too few, while the spec had the wait queued. A
//! thread whose last operation is a `notify_all` after leaving the mutex takes the mutex no
//! more (its result is logged after the join), so that no locking of the program's own wakes
//! waits that `notify_all` left on a free mutex. Clock advances hold the mutex, so a wait's
//! logged deadline is the one it computes.

#![allow(dead_code)]

use std::time::Duration;

use parkcheck::sync::{Arc, thread};
use proptest::prelude::*;

use crate::scenarios::Build;
use crate::spec::{self, Entry, Logged};

/// How long a notifier that `hold`s keeps the mutex after notifying: past every timed wait's
/// timeout (at most 3 ms).
const HOLD: Duration = Duration::from_millis(5);

/// One operation of a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    /// `wait`, with the mutex taken for it.
    Wait,
    /// `wait_for` this many milliseconds (`u8::MAX`: `Duration::MAX`, which has no deadline).
    WaitFor(u8),
    /// `notify_one`: while holding the mutex (then holding it `HOLD` longer if `hold`), or
    /// after leaving it (`outside`).
    NotifyOne { outside: bool, hold: bool },
    /// `notify_all`, as `NotifyOne`.
    NotifyAll { outside: bool, hold: bool },
    /// `parkcheck::advance_clock` this many milliseconds (real threads: sleeps it).
    Advance(u8),
    /// `lock`, then release.
    Lock,
    /// `try_lock`, then release if it was taken.
    TryLock,
}

/// A program: one list of operations per thread.
#[derive(Clone, Debug)]
pub(crate) struct Program {
    pub(crate) threads: Vec<Vec<Op>>,
}

fn wait_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => Just(Op::Wait),
        3 => prop::sample::select(vec![0u8, 1, 3, u8::MAX]).prop_map(Op::WaitFor),
    ]
}

fn notify_op() -> impl Strategy<Value = Op> {
    (any::<bool>(), any::<bool>(), prop::bool::weighted(0.3)).prop_map(|(all, outside, hold)| {
        let hold = hold && !outside;
        if all {
            Op::NotifyAll { outside, hold }
        } else {
            Op::NotifyOne { outside, hold }
        }
    })
}

fn advance_op() -> impl Strategy<Value = Op> {
    prop::sample::select(vec![1u8, 2, 5]).prop_map(Op::Advance)
}

fn any_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => wait_op(),
        4 => notify_op(),
        2 => advance_op(),
        1 => Just(Op::Lock),
        1 => Just(Op::TryLock),
    ]
}

/// Any mix: 2 to `workers` threads of 1 to 4 operations.
fn mixed(workers: usize) -> impl Strategy<Value = Program> {
    prop::collection::vec(prop::collection::vec(any_op(), 1..=4), 2..=workers)
        .prop_map(|threads| Program { threads })
}

/// A queue: 1 to `workers - 1` waiters of one or two waits each, then a driver of 2 to 5
/// notifications and clock advances.
fn queue(workers: usize) -> impl Strategy<Value = Program> {
    let driver = prop::collection::vec(
        prop_oneof![3 => notify_op(), 2 => advance_op(), 1 => Just(Op::Lock)],
        2..=5,
    );
    (
        prop::collection::vec(prop::collection::vec(wait_op(), 1..=2), 1..workers),
        driver,
    )
        .prop_map(|(mut threads, driver)| {
            threads.push(driver);
            Program { threads }
        })
}

/// Either family, `workers` threads at most.
pub(crate) fn any_program(workers: usize) -> impl Strategy<Value = Program> {
    prop_oneof![mixed(workers), queue(workers)]
}

/// The programs' seed: `PROPTEST_RNG_SEED` (what `cargo xtask verify --proptest-seed` sets;
/// the nightly draws one per run), else a fixed one.
pub(crate) fn program_seed() -> u64 {
    std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5EED_0005)
}

/// What the mutex guards: the log, and the bookkeeping that keeps waits from being
/// stranded.
struct Shared {
    log: Vec<Logged>,
    /// Threads neither waiting nor finished.
    active: usize,
    closing: bool,
    waits: usize,
    touched: u64,
    /// The waits begun and not yet returned, with their deadlines.
    in_progress: Vec<(usize, Option<u64>)>,
}

/// The program's clock: microseconds since `start` (the mocked clock under the checkers).
fn micros(start: std::time::Instant) -> u64 {
    u64::try_from(
        parkcheck::now()
            .saturating_duration_since(start)
            .as_micros(),
    )
    .unwrap_or(u64::MAX)
}

impl Shared {
    fn log(&mut self, thread: usize, entry: Entry, start: std::time::Instant) -> usize {
        self.log.push(Logged {
            thread,
            entry,
            now: micros(start),
        });
        self.log.len() - 1
    }
}

/// Sets `closing` and ends every wait in progress: if each has a deadline, by moving the
/// clock (holding the mutex) past the latest, so that each must time out by itself (a wait
/// that does not would hang the program: the checkers' deadlock); otherwise by a logged
/// `notify_all`.
fn close(
    shared: &mut Shared,
    cv: &parksema_condvar::Condvar,
    thread: usize,
    start: std::time::Instant,
) {
    shared.closing = true;
    if !shared.in_progress.is_empty() && shared.in_progress.iter().all(|(_, d)| d.is_some()) {
        let latest = shared.in_progress.iter().filter_map(|(_, d)| *d).max();
        let now = micros(start);
        parkcheck::advance_clock(Duration::from_micros(
            latest.unwrap_or(now).saturating_sub(now),
        ));
        return;
    }
    let count = cv.notify_all();
    shared.log(thread, Entry::NotifyAll { count, after: None }, start);
}

/// Runs `program` against `build`'s mutex and condition variable; returns the log.
pub(crate) fn run(program: &Program, build: Build) -> Vec<Logged> {
    let start = parkcheck::now();
    let shared = Arc::new(build.mutex(Shared {
        log: Vec::new(),
        active: program.threads.len(),
        closing: false,
        waits: 0,
        touched: 0,
        in_progress: Vec::new(),
    }));
    let cv = Arc::new(build.condvar());
    // The results of the threads' last outside `notify_all`s: thread, mark, count.
    let last: std::sync::Arc<std::sync::Mutex<Vec<(usize, usize, usize)>>> = Default::default();
    let handles: Vec<_> = program
        .threads
        .iter()
        .cloned()
        .enumerate()
        .map(|(i, ops)| {
            let (m, cv) = (Arc::clone(&shared), Arc::clone(&cv));
            let last = std::sync::Arc::clone(&last);
            thread::spawn(move || {
                let n = ops.len();
                for (k, op) in ops.into_iter().enumerate() {
                    // A last `notify_all` made outside the mutex: the thread finishes in its
                    // mark's critical section and takes the mutex no more, so that nothing
                    // of the program's own wakes a wait it left on a free mutex; its result
                    // is logged after the join.
                    if k + 1 == n && matches!(op, Op::NotifyAll { outside: true, .. }) {
                        let mark = {
                            let mut g = m.lock();
                            let mark = g.log(i, Entry::Mark, start);
                            g.active -= 1;
                            if g.active == 0 {
                                // This `notify_all` reaches every wait: no closing one.
                                g.closing = true;
                            }
                            mark
                        };
                        let count = cv.notify_all();
                        last.lock().unwrap().push((i, mark, count));
                        return;
                    }
                    match op {
                        Op::Wait | Op::WaitFor(_) => {
                            let mut g = m.lock();
                            if g.closing {
                                continue;
                            }
                            if g.active == 1 {
                                // Everyone else waits or is done: nobody would notify.
                                close(&mut g, &cv, i, start);
                                continue;
                            }
                            g.active -= 1;
                            let wait = g.waits;
                            g.waits += 1;
                            let timeout = match op {
                                Op::WaitFor(u8::MAX) => Some(Duration::MAX),
                                Op::WaitFor(ms) => Some(Duration::from_millis(u64::from(ms))),
                                _ => None,
                            };
                            let deadline = timeout.and_then(|t| {
                                micros(start).checked_add(u64::try_from(t.as_micros()).ok()?)
                            });
                            g.log(i, Entry::Begin { wait, deadline }, start);
                            g.in_progress.push((wait, deadline));
                            let timed_out = match timeout {
                                None => {
                                    cv.wait(&mut g);
                                    false
                                }
                                Some(t) => cv.wait_for(&mut g, t).timed_out(),
                            };
                            g.active += 1;
                            g.in_progress.retain(|&(w, _)| w != wait);
                            g.log(i, Entry::End { wait, timed_out }, start);
                        }
                        Op::NotifyOne { outside, hold } | Op::NotifyAll { outside, hold } => {
                            let all = matches!(op, Op::NotifyAll { .. });
                            let notify = || {
                                if all {
                                    (true, cv.notify_all())
                                } else {
                                    (cv.notify_one(), 0)
                                }
                            };
                            let entry = |(woke, count): (bool, usize), after| {
                                if all {
                                    Entry::NotifyAll { count, after }
                                } else {
                                    Entry::NotifyOne { woke, after }
                                }
                            };
                            if outside {
                                let mark = m.lock().log(i, Entry::Mark, start);
                                let result = notify();
                                m.lock().log(i, entry(result, Some(mark)), start);
                            } else {
                                let mut g = m.lock();
                                let result = notify();
                                g.log(i, entry(result, None), start);
                                if hold {
                                    parkcheck::advance_clock(HOLD);
                                }
                            }
                        }
                        Op::Advance(ms) => {
                            // Holding the mutex: the clock cannot move between a wait's
                            // `Begin` and its `wait_for`, so the logged deadline is the
                            // one the wait computes, which a close by the clock relies on.
                            let _held = m.lock();
                            parkcheck::advance_clock(Duration::from_millis(u64::from(ms)));
                        }
                        Op::Lock => m.lock().touched += 1,
                        Op::TryLock => {
                            if let Some(mut g) = m.try_lock() {
                                g.touched += 1;
                            }
                        }
                    }
                }
                let mut g = m.lock();
                g.active -= 1;
                if g.active == 0 && !g.closing {
                    close(&mut g, &cv, i, start);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("a program's thread panicked");
    }
    let mut g = shared.lock();
    for (i, mark, count) in last.lock().unwrap().drain(..) {
        g.log(
            i,
            Entry::NotifyAll {
                count,
                after: Some(mark),
            },
            start,
        );
    }
    std::mem::take(&mut g.log)
}

/// Runs `program` and checks its log; panics with the violation. Returns the situations the
/// log's explanation passed through.
pub(crate) fn run_and_check(program: &Program, build: Build) -> u32 {
    let log = run(program, build);
    // On a std thread of its own: the search recurses once per entry, deeper than a
    // checker's task stack allows.
    let checked = std::thread::scope(|s| s.spawn(|| spec::check(&log)).join())
        .expect("the specification's search does not panic");
    match checked {
        Ok(reached) => reached,
        Err(v) => panic!(
            "condition variable specification: {}\nprogram: {program:?}",
            v.0
        ),
    }
}

/// How many runs reached each situation.
#[derive(Clone, Debug, Default)]
pub(crate) struct Coverage {
    pub(crate) runs: u64,
    pub(crate) reached: [u64; spec::SITUATIONS.len()],
}

impl Coverage {
    /// Adds one run's situations.
    pub(crate) fn add(&mut self, reached: u32) {
        self.runs += 1;
        for (i, count) in self.reached.iter_mut().enumerate() {
            if reached & spec::bit(i) != 0 {
                *count += 1;
            }
        }
    }

    /// The table, one line a situation.
    pub(crate) fn table(&self) -> String {
        let mut s = format!("situations reached, of {} runs:\n", self.runs);
        for (name, count) in spec::SITUATIONS.iter().zip(self.reached) {
            s.push_str(&format!("  {count:>8}  {name}\n"));
        }
        s
    }

    /// Writes one coverage record per situation (`build`'s check `check`), and fails naming
    /// every situation of `required` (bits) that no run reached.
    pub(crate) fn report_and_require(&self, build: &str, check: &str, required: u32) {
        for (i, (name, count)) in spec::SITUATIONS.iter().zip(self.reached).enumerate() {
            watchdog::report::coverage(
                build,
                check,
                &format!("condvar: {name}"),
                count,
                self.runs,
                required & spec::bit(i) != 0,
            );
        }
        let missing: Vec<&str> = spec::SITUATIONS
            .iter()
            .enumerate()
            .filter(|&(i, _)| required & spec::bit(i) != 0 && self.reached[i] == 0)
            .map(|(_, name)| *name)
            .collect();
        assert!(
            missing.is_empty(),
            "the search left situations it must reach unreached: {missing:?}\n{}",
            self.table()
        );
    }
}
