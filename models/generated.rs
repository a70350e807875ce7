//! Generated concurrent programs over the whole API, run under a checker or on real threads
//! (the same runner serves every build that includes this file), each run's history checked
//! against the executable specification (`spec.rs`): linearizability, the park-table cost of
//! each call where the build counts it, and quiescent liveness at every point where every
//! worker has finished or is parked.
//!
//! # The programs
//!
//! A program is an initial count, a fairness mode, and up to five worker threads. They come
//! in families, each weighted toward the situations a bug needs (`spec::SITUATIONS`):
//!
//! - **general**: 2–3 threads of 1–4 operations drawn from every acquire form (blocking,
//!   `try_`, a zero timeout, a deadline on the mocked clock, a timeout too large to add to
//!   now; owned and borrowed; sized from 0 to one more than everything the program ever
//!   puts in, and now and then past `MAX_PERMITS`), `add_permits`, an add near
//!   `MAX_PERMITS`, an add past it, `forget_permits`, `close`, and on held guards drop,
//!   drop while unwinding, `release_fair`, `forget`, `split` and `merge`, with the
//!   observations `available_permits`, `is_closed` and `parked_threads`, and clock advances;
//! - **queue**: 2–4 waiters, each a blocking, timed or unbounded acquire of 1–3 permits that
//!   then holds, drops or fairly releases what it got, and one driver that barges, adds,
//!   fairly releases, forgets, advances the clock, looks at the queue and closes: queues of
//!   weighted and timed requests with releases, handoffs and timeouts among them;
//! - **close**: one thread writes a note and closes; the others observe the semaphore
//!   closed in every way there is (a parked acquire woken by `close`, a `try_` form,
//!   `is_closed`) and read the note (promise 6: under loom a read not ordered after the
//!   write is a data race);
//! - **exclusive**: one permit, never added to, held in turn while a shared cell is read and
//!   written (under loom a holder not ordered after the last is a data race: promise 5).
//!
//! The main thread is the monitor: each time every worker has finished or is parked
//! (parkcheck's untracked count, so it adds no happens-before and takes no lock) it records
//! a quiescence point and acts once: the clock moved past every deadline (under the
//! checkers), then one permit added at a time, so that each wake-up is in the history; once
//! no worker is left parked (or its actions run out) it closes the semaphore, joins, and
//! records a last look at the count and the closed flag.

#![allow(dead_code)]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering as StdOrdering};
use std::sync::{Arc as StdArc, Mutex};
use std::time::Duration;

use parksema::__model::{
    AtomicUsize, Ordering, SharedCell, advance_clock, now, parked_untracked, thread,
    thread_park_stats,
};
use parksema::{Fairness, OwnedPermit, Permit, Semaphore, TryAcquireError};
use proptest::prelude::*;

use super::spec::{self, Call, Cost, History, Record, Wait};

/// How an acquire waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Form {
    Blocking,
    /// `try_acquire_many`.
    Try,
    /// `try_acquire_many_for(Duration::ZERO)`.
    ZeroTimeout,
    /// `try_acquire_many_until(start + micros)` on the mocked clock.
    Until(u64),
    /// `try_acquire_many_for(Duration::MAX)`: too large to add to now, so no deadline.
    Forever,
}

impl Form {
    /// Whether an acquire of this form may park.
    fn waits(self) -> bool {
        !matches!(self, Form::Try | Form::ZeroTimeout)
    }
}

/// One operation of one thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Acquire {
        n: usize,
        form: Form,
        owned: bool,
    },
    /// Drop the newest guard.
    Drop,
    /// Drop the newest guard while this thread unwinds.
    Unwind,
    /// `release_fair` the newest guard.
    ReleaseFair,
    /// `forget` the newest guard.
    ForgetGuard,
    /// Split `k` off the newest guard.
    Split(usize),
    /// Merge the newest guard into the one before it.
    Merge,
    Add(usize),
    /// `try_add_permits(usize::MAX)`: always refused.
    Overfill,
    /// `try_add_permits` of all but one of the permits `MAX_PERMITS` leaves room for beside
    /// every other permit the program can have (`Program::near_max`): accepted once, refused
    /// after, and no guard's return can then pass `MAX_PERMITS`.
    AddNearMax,
    ForgetPermits(usize),
    Close,
    /// Write the note, then close: the program's only closing worker, with no waiting call
    /// before it.
    CloseNote,
    Available,
    IsClosed,
    Parked,
    Advance(u64),
    /// Real threads only, in place of a clock advance: sleeps 200 µs, so that the other
    /// threads get as far as they can meanwhile (the queue family's driver then acts on
    /// waiters that are parked, as it does under the checkers). Nothing is recorded.
    Pause,
    /// While holding permits, a write of this thread's cell; while holding every permit the
    /// program has, a read of every thread's cell too (only in a program without adds near
    /// `MAX_PERMITS`, and only until the monitor adds permits). A holder of them all is
    /// ordered after every write a holder made before returning its permits; under loom a
    /// read that is not is a causality violation (promise 5, the handoff's `Acquire`
    /// included: a permit taken from the count for a parked thread was put there by another).
    Touch,
}

/// The most permits the monitor adds: enough for every request the families make, and the
/// history stays within the search's 128 events.
const MONITOR_ADDS: usize = 16;

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
    /// clock moves only by advances), so a deadline is a zero timeout and an advance a pause.
    pub(crate) fn for_real_threads(mut self) -> Program {
        for ops in &mut self.threads {
            for op in ops.iter_mut() {
                if matches!(op, Op::Advance(_)) {
                    *op = Op::Pause;
                }
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

    /// The real-thread program with its last thread (the queue family's driver) started
    /// after a pause, so that it acts on waiters that have queued, while the others race.
    pub(crate) fn driver_paused(mut self) -> Program {
        if let Some(last) = self.threads.last_mut() {
            last.insert(0, Op::Pause);
        }
        self
    }

    /// The real-thread program with its threads started one after another: thread `i`
    /// first pauses `i` times, then looks at the queue (which pins the arrivals of the
    /// threads already parked before its own calls), so that the requests queue in the
    /// threads' order, the order the specification then knows, and the last thread (the
    /// queue family's driver) acts on waiters that are parked. Started together, real threads
    /// rarely form such a queue: the driver often acts before the others have queued.
    pub(crate) fn staggered(mut self) -> Program {
        for (i, ops) in self.threads.iter_mut().enumerate().skip(1) {
            let mut start = vec![Op::Pause; i];
            start.push(Op::Parked);
            ops.splice(0..0, start);
        }
        self
    }

    /// Every permit the program can ever have: the initial ones and every add (`None` if it
    /// adds near `MAX_PERMITS`).
    fn total(&self) -> Option<usize> {
        let mut total = self.permits;
        for op in self.threads.iter().flatten() {
            match op {
                Op::Add(n) => total += n,
                Op::AddNearMax => return None,
                _ => {}
            }
        }
        Some(total)
    }

    /// The amount of an [`Op::AddNearMax`]: `MAX_PERMITS` less every other permit the program
    /// and the monitor can put in, less one (the specification's `MAX_PERMITS`, not the crate's: a crate whose
    /// limit differs from the documented one refuses what it should accept).
    fn near_max(&self) -> usize {
        let others: usize = self.permits
            + self
                .threads
                .iter()
                .flatten()
                .map(|op| match op {
                    Op::Add(n) => *n,
                    _ => 0,
                })
                .sum::<usize>();
        spec::MAX - others - MONITOR_ADDS - 1
    }

    /// Whether the program writes the note before closing (and closes no other way).
    fn has_note(&self) -> bool {
        self.threads.iter().flatten().any(|op| *op == Op::CloseNote)
    }

    /// The permits its waiting acquires ask for that can ever be had (what the monitor may
    /// have to add, one at a time, to let every one through).
    fn requested(&self) -> usize {
        self.threads
            .iter()
            .flatten()
            .map(|op| match op {
                Op::Acquire { n, form, .. } if form.waits() && *n <= spec::MAX => *n,
                _ => 0,
            })
            .sum()
    }

    /// The acquires of other threads than `me` that can wait.
    fn waiting_calls_besides(&self, me: usize) -> usize {
        self.threads
            .iter()
            .enumerate()
            .filter(|&(t, _)| t != me)
            .flat_map(|(_, ops)| ops.iter())
            .filter(|op| matches!(op, Op::Acquire { form, .. } if form.waits()))
            .count()
    }
}

fn mode() -> impl Strategy<Value = Fairness> {
    prop_oneof![
        Just(Fairness::Eventual),
        Just(Fairness::Fifo),
        Just(Fairness::Barging)
    ]
}

fn form() -> impl Strategy<Value = Form> {
    prop_oneof![
        4 => Just(Form::Blocking),
        2 => Just(Form::Try),
        1 => Just(Form::ZeroTimeout),
        2 => (1..=3u64).prop_map(|ms| Form::Until(ms * 1000)),
        1 => Just(Form::Forever),
    ]
}

/// A request's size before it is fitted to the program (`fit_sizes`): mostly small, now
/// and then past `MAX_PERMITS`.
fn size() -> impl Strategy<Value = usize> {
    prop_oneof![
        12 => 0..=3usize,
        4 => 0..=8usize,
        1 => Just(spec::MAX + 1),
    ]
}

/// One operation of the general family.
fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (size(), form(), any::<bool>()).prop_map(|(n, form, owned)| Op::Acquire { n, form, owned }),
        2 => Just(Op::Drop),
        1 => Just(Op::Unwind),
        1 => Just(Op::ReleaseFair),
        1 => Just(Op::ForgetGuard),
        1 => (1..=2usize).prop_map(Op::Split),
        1 => Just(Op::Merge),
        2 => (1..=2usize).prop_map(Op::Add),
        1 => Just(Op::Overfill),
        1 => Just(Op::AddNearMax),
        1 => (1..=2usize).prop_map(Op::ForgetPermits),
        1 => Just(Op::Close),
        1 => Just(Op::Available),
        1 => Just(Op::IsClosed),
        1 => Just(Op::Parked),
        1 => (1..=2u64).prop_map(|ms| Op::Advance(ms * 1000)),
        1 => Just(Op::Touch),
    ]
}

/// Fits every request to the program: at most one more than everything it ever puts in
/// (requests past `MAX_PERMITS` stay as they are).
fn fit_sizes(mut p: Program) -> Program {
    let most = p.permits
        + p.threads
            .iter()
            .flatten()
            .map(|op| match op {
                Op::Add(n) => *n,
                _ => 0,
            })
            .sum::<usize>()
        + 1;
    for op in p.threads.iter_mut().flatten() {
        if let Op::Acquire { n, .. } = op
            && *n <= spec::MAX
        {
            *n = (*n).min(most);
        }
    }
    p
}

/// The general family: 0–2 permits, every mode, `threads` threads (a range) of
/// 1–`ops` operations.
pub(crate) fn program(
    threads: std::ops::RangeInclusive<usize>,
    ops: usize,
) -> impl Strategy<Value = Program> {
    (
        0..=2usize,
        mode(),
        prop::collection::vec(prop::collection::vec(op(), 1..=ops), threads),
    )
        .prop_map(|(permits, mode, threads)| {
            fit_sizes(Program {
                permits,
                mode,
                threads,
            })
        })
}

/// A waiter of the queue family: one waiting acquire of 1–3 permits, then what it does with
/// them (hold them to the end, drop, release fairly, or wait again).
fn waiter() -> impl Strategy<Value = Vec<Op>> {
    let wait = prop_oneof![
        4 => Just(Form::Blocking),
        3 => (1..=3u64).prop_map(|ms| Form::Until(ms * 1000)),
        1 => Just(Form::Forever),
    ];
    let then = prop_oneof![
        2 => Just(vec![]),
        2 => Just(vec![Op::Drop]),
        2 => Just(vec![Op::ReleaseFair]),
        // A fair release to whoever is parked behind, and the count it left: nothing of it
        // where a parked request takes it.
        1 => Just(vec![Op::Parked, Op::ReleaseFair, Op::Available]),
        1 => Just(vec![Op::Split(1), Op::Drop]),
        1 => Just(vec![Op::Drop, Op::Acquire { n: 1, form: Form::Blocking, owned: false }]),
    ];
    (1..=3usize, wait, any::<bool>(), then).prop_map(|(n, form, owned, then)| {
        let mut ops = vec![Op::Acquire { n, form, owned }];
        ops.extend(then);
        ops
    })
}

/// One step of the queue family's driver: an operation, a release and a look at what it
/// left (a handoff leaves nothing in the count; a wake-up leaves the permits there until the
/// woken thread runs), or a release and `close`.
fn driver_op() -> impl Strategy<Value = Vec<Op>> {
    prop_oneof![
        5 => driver_one().prop_map(|op| vec![op]),
        2 => (1..=2usize).prop_map(|n| vec![Op::Add(n), Op::Available]),
        1 => (1..=2usize).prop_map(|n| vec![Op::Add(n), Op::Acquire { n: 1, form: Form::Try, owned: false }]),
        // A release and `close` right after it: a handoff still in flight when it closes.
        1 => (1..=2usize).prop_map(|n| vec![Op::Add(n), Op::Close]),
        // A look at the queue first, which pins the parked requests' arrivals before what
        // follows: an add that the head may not fit, then a `try_` (under `Fifo` it must fail
        // while anyone is queued).
        1 => (1..=2usize).prop_map(|n| vec![
            Op::Parked,
            Op::Add(n),
            Op::Acquire { n: 1, form: Form::Try, owned: false },
        ]),
    ]
}

/// One operation of the queue family's driver.
fn driver_one() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (1..=3usize).prop_map(Op::Add),
        2 => (1..=2usize).prop_map(|n| Op::Acquire { n, form: Form::Try, owned: false }),
        1 => Just(Op::Acquire { n: 1, form: Form::ZeroTimeout, owned: true }),
        2 => Just(Op::ReleaseFair),
        1 => Just(Op::Drop),
        1 => (1..=2usize).prop_map(Op::ForgetPermits),
        2 => (1..=3u64).prop_map(|ms| Op::Advance(ms * 1000)),
        1 => Just(Op::Close),
        2 => Just(Op::Parked),
        1 => Just(Op::Available),
        1 => Just(Op::Overfill),
        1 => Just(Op::AddNearMax),
    ]
}

/// The queue family: 0–2 permits, every mode, `waiters` waiters (a range) and a driver of 2–6
/// operations.
pub(crate) fn queue_program(
    waiters: std::ops::RangeInclusive<usize>,
) -> impl Strategy<Value = Program> {
    (
        0..=2usize,
        mode(),
        prop::collection::vec(waiter(), waiters),
        prop::collection::vec(driver_op(), 2..=5),
    )
        .prop_map(|(permits, mode, mut threads, driver)| {
            threads.push(driver.into_iter().flatten().collect());
            fit_sizes(Program {
                permits,
                mode,
                threads,
            })
        })
}

/// The close family: 0–1 permits, every mode; a closer that may add a permit or look first,
/// then writes the note and closes; `observers` observers (a range), each observing the
/// close one way and looking again.
pub(crate) fn close_program(
    observers: std::ops::RangeInclusive<usize>,
) -> impl Strategy<Value = Program> {
    let closer = prop_oneof![
        Just(vec![Op::CloseNote]),
        Just(vec![Op::Available, Op::CloseNote]),
        Just(vec![Op::Add(1), Op::CloseNote]),
    ];
    let observer = prop_oneof![
        3 => Just(vec![Op::Acquire { n: 1, form: Form::Blocking, owned: false }, Op::IsClosed]),
        1 => Just(vec![Op::Acquire { n: 2, form: Form::Blocking, owned: true }]),
        2 => Just(vec![Op::IsClosed, Op::Acquire { n: 1, form: Form::Try, owned: false }]),
        1 => Just(vec![Op::Acquire { n: 1, form: Form::Until(1000), owned: false }, Op::IsClosed]),
        1 => Just(vec![Op::Acquire { n: 0, form: Form::ZeroTimeout, owned: false }, Op::IsClosed]),
    ];
    (
        0..=1usize,
        mode(),
        closer,
        prop::collection::vec(observer, observers),
    )
        .prop_map(|(permits, mode, closer, mut threads)| {
            threads.insert(0, closer);
            Program {
                permits,
                mode,
                threads,
            }
        })
}

/// The exclusive family: one permit and no adds, so that a holder is alone with the shared
/// cell: each thread runs one or two hold sections (an acquire of one permit in a drawn
/// form, a touch of the cell, a drawn release), and may close the semaphore at the end.
pub(crate) fn exclusive_program(threads: usize) -> impl Strategy<Value = Program> {
    let section = (
        prop_oneof![
            Just(Form::Blocking),
            Just(Form::Try),
            Just(Form::ZeroTimeout)
        ],
        any::<bool>(),
        prop_oneof![Just(Op::Drop), Just(Op::ReleaseFair), Just(Op::Unwind)],
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
    (mode(), prop::collection::vec(thread, threads)).prop_map(|(mode, threads)| Program {
        permits: 1,
        mode,
        threads,
    })
}

/// The programs of every family for a checker that runs up to `workers` worker threads: the
/// general family a third of the time, the queue family a third, the close and exclusive
/// families a sixth each.
pub(crate) fn any_program(workers: usize) -> impl Strategy<Value = Program> {
    let workers = workers.max(3);
    prop_oneof![
        2 => program(2..=3, 4),
        2 => queue_program(2..=workers - 1),
        1 => close_program(1..=workers - 1),
        1 => exclusive_program(2),
    ]
}

/// The proptest seed of the generated programs: `PROPTEST_RNG_SEED` (what `cargo xtask
/// verify --proptest-seed` sets; the nightly draws one per run), else a fixed one, so that
/// CI explores the same programs every run and any failure replays from its seed.
pub(crate) fn program_seed() -> u64 {
    std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5EED_0003)
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
/// counter; the shared cell and the note.
struct Recorder {
    ticks: AtomicU64,
    records: Mutex<Vec<Record>>,
    /// One cell per worker, written by it while it holds permits.
    cells: Vec<SharedCell<u64>>,
    /// Whether the cells may be touched: the monitor has not added permits yet.
    exclusive: AtomicBool,
    /// Every permit the program can have, for `Touch` (`None`: never touch).
    total: Option<usize>,
    /// Written once, before the only close of a worker, and read after observing closed.
    note: SharedCell<u64>,
    has_note: bool,
    /// The amount of an [`Op::AddNearMax`].
    near_max: usize,
    /// Whether a thread read the note after observing the semaphore closed.
    read_note: AtomicBool,
}

impl Recorder {
    fn tick(&self) -> u64 {
        self.ticks.fetch_add(1, StdOrdering::SeqCst)
    }

    fn record(&self, thread: usize, start: u64, call: Call, cost: Option<Cost>) {
        let end = self.tick();
        self.records.lock().unwrap().push(Record {
            thread,
            call,
            start,
            end,
            cost,
        });
    }

    /// After observing the semaphore closed: the note written before the close is there.
    fn observed_closed(&self) {
        if self.has_note {
            // SAFETY: the note is written once, before the only worker's `close`, which
            // this thread has observed; `close`'s Release and the observation's Acquire
            // order the write before this read (loom reports it if they do not).
            let seen = self.note.with(|p| unsafe { *p });
            assert_eq!(
                seen, 1,
                "close happens-before: the note written before close read {seen}"
            );
            self.read_note.store(true, StdOrdering::SeqCst);
        }
    }
}

/// What the calling thread's calls on `sem` have cost in the park table so far (`None` on
/// real threads).
fn costs(sem: &Semaphore) -> Option<Cost> {
    thread_park_stats(sem).map(|s| Cost {
        parks: s.parks,
        unpark_calls: s.unpark_calls,
        woken: s.woken,
        handed: s.handed,
    })
}

/// The cost of one call: the counters after it less those before.
fn cost_since(sem: &Semaphore, before: Option<Cost>) -> Option<Cost> {
    let (before, after) = (before?, costs(sem)?);
    Some(Cost {
        parks: after.parks - before.parks,
        unpark_calls: after.unpark_calls - before.unpark_calls,
        woken: after.woken - before.woken,
        handed: after.handed - before.handed,
    })
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

/// The panic payload of a guard dropped while unwinding (`resume_unwind` runs no panic hook,
/// so nothing is printed).
struct Unwinding;

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
    // Runs `f`, a call on the semaphore, and records it with its ticks and its cost.
    let timed = |call: &dyn Fn() -> Call| {
        let start = rec.tick();
        let before = costs(sem);
        let call = call();
        rec.record(me, start, call, cost_since(sem, before));
        call
    };
    let release = |g: Guard<'_>, how: Op| {
        let n = g.n();
        let start = rec.tick();
        let before = costs(sem);
        match (g, how) {
            (Guard::Borrowed(p), Op::ReleaseFair) => p.release_fair(),
            (Guard::Owned(p), Op::ReleaseFair) => p.release_fair(),
            (g, Op::Unwind) => {
                let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
                    let _held = g;
                    std::panic::resume_unwind(Box::new(Unwinding));
                }));
                assert!(unwound.is_err(), "the unwinding ended early");
            }
            (g, _) => drop(g),
        }
        if n > 0 {
            let call = if how == Op::ReleaseFair {
                Call::ReleaseFair { n }
            } else {
                Call::Release { n, ok: true }
            };
            rec.record(me, start, call, cost_since(sem, before));
        }
    };
    for &op in ops {
        match op {
            Op::Acquire { n, form, owned } => {
                let start = rec.tick();
                let before = costs(sem);
                let deadline = match form {
                    Form::Until(d) => Some(d),
                    Form::ZeroTimeout => Some(0),
                    _ => None,
                };
                let blocking = |e: parksema::AcquireError| match e {
                    parksema::AcquireError::TooLarge { requested } => {
                        TryAcquireError::TooLarge { requested }
                    }
                    _ => TryAcquireError::Closed,
                };
                let result: Result<Guard<'_>, TryAcquireError> = match (form, owned) {
                    (Form::Blocking, false) => {
                        sem.acquire_many(n).map(Guard::Borrowed).map_err(blocking)
                    }
                    (Form::Blocking, true) => StdArc::clone(sem)
                        .acquire_many_owned(n)
                        .map(Guard::Owned)
                        .map_err(blocking),
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
                    (Form::Forever, false) => sem
                        .try_acquire_many_for(n, Duration::MAX)
                        .map(Guard::Borrowed),
                    (Form::Forever, true) => StdArc::clone(sem)
                        .try_acquire_many_for_owned(n, Duration::MAX)
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
                rec.record(me, start, call, cost_since(sem, before));
                if outcome == Wait::Closed {
                    rec.observed_closed();
                }
                if let Ok(g) = result {
                    guards.push(g);
                }
            }
            Op::Drop | Op::ReleaseFair | Op::Unwind => {
                if let Some(g) = guards.pop() {
                    release(g, op);
                }
            }
            Op::ForgetGuard => {
                if let Some(g) = guards.pop() {
                    let start = rec.tick();
                    match g {
                        Guard::Borrowed(p) => p.forget(),
                        Guard::Owned(p) => p.forget(),
                    }
                    rec.record(me, start, Call::Guard, None);
                }
            }
            Op::Split(k) => {
                if let Some(g) = guards.last_mut() {
                    let start = rec.tick();
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
                    rec.record(me, start, Call::Guard, None);
                }
            }
            Op::Merge => {
                if guards.len() >= 2 {
                    let start = rec.tick();
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
                    rec.record(me, start, Call::Guard, None);
                }
            }
            Op::Add(n) => {
                timed(&|| Call::Release {
                    n,
                    ok: sem.try_add_permits(n).is_ok(),
                });
            }
            Op::Overfill => {
                timed(&|| Call::Release {
                    n: usize::MAX,
                    ok: sem.try_add_permits(usize::MAX).is_ok(),
                });
            }
            Op::AddNearMax => {
                let n = rec.near_max;
                timed(&|| Call::Release {
                    n,
                    ok: sem.try_add_permits(n).is_ok(),
                });
            }
            Op::ForgetPermits(asked) => {
                timed(&|| Call::Forget {
                    asked,
                    taken: sem.forget_permits(asked),
                });
            }
            Op::Close => {
                timed(&|| {
                    sem.close();
                    Call::Close
                });
            }
            Op::CloseNote => {
                // SAFETY: the only write of the note, before the program's only worker
                // `close`; every read comes after observing the semaphore closed.
                rec.note.with_mut(|p| unsafe { *p = 1 });
                timed(&|| {
                    sem.close();
                    Call::Close
                });
            }
            Op::Available => {
                timed(&|| Call::Available {
                    seen: sem.available_permits(),
                });
            }
            Op::IsClosed => {
                let call = timed(&|| Call::IsClosed {
                    seen: sem.is_closed(),
                });
                if call == (Call::IsClosed { seen: true }) {
                    rec.observed_closed();
                }
            }
            Op::Parked => {
                let call = timed(&|| Call::Parked {
                    seen: sem.parked_threads(),
                });
                let Call::Parked { seen } = call else {
                    unreachable!()
                };
                assert!(
                    seen <= waiting_calls,
                    "parked_threads: {seen} parked, but the other threads make only \
                     {waiting_calls} calls that can wait"
                );
            }
            Op::Pause => std::thread::sleep(Duration::from_micros(200)),
            Op::Advance(micros) => {
                timed(&|| {
                    advance_clock(Duration::from_micros(micros));
                    Call::Advance { micros }
                });
            }
            Op::Touch => {
                let held: usize = guards.iter().map(Guard::n).sum();
                if held > 0 && rec.total.is_some() && rec.exclusive.load(StdOrdering::SeqCst) {
                    if rec.total == Some(held) {
                        for cell in &rec.cells {
                            // SAFETY: this thread holds every permit the program can have, so
                            // no thread writes a cell now (the monitor's adds end the
                            // exclusivity first), and each write was made by a holder before
                            // it returned its permits; a missing happens-before edge is what
                            // loom reports.
                            std::hint::black_box(cell.with(|p| unsafe { *p }));
                        }
                    }
                    // SAFETY: only this thread writes its cell, and only while it holds
                    // permits, so no holder of every permit reads it now.
                    rec.cells[me].with_mut(|p| unsafe { *p += 1 });
                }
            }
        }
    }
    while let Some(g) = guards.pop() {
        release(g, Op::Drop);
    }
}

/// What a run reached and saw: the situations (bits of `spec::SITUATIONS`).
pub(crate) type Reached = u32;

/// Runs `program` on a semaphore made by `make(permits, mode)` and checks its history:
/// panics with the violation and the history if it is not linearizable, a call's park-table
/// cost breaks a promise, or a quiescence point finds a blocked call the model would let
/// through. `real_time`: whether ticks order the calls of different threads. Returns the
/// situations the run reached.
pub(crate) fn run(
    program: &Program,
    make: impl Fn(usize, Fairness) -> Semaphore,
    real_time: bool,
) -> Reached {
    let sem = StdArc::new(make(program.permits, program.mode));
    let rec = StdArc::new(Recorder {
        ticks: AtomicU64::new(0),
        records: Mutex::new(Vec::new()),
        cells: (0..program.threads.len())
            .map(|_| SharedCell::new(0))
            .collect(),
        exclusive: AtomicBool::new(true),
        total: program.total(),
        note: SharedCell::new(0),
        has_note: program.has_note(),
        near_max: program.near_max(),
        read_note: AtomicBool::new(false),
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
            let waiting_calls = program.waiting_calls_besides(me);
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
                break (rec.tick(), done);
            }
        }
        thread::yield_now();
    };
    // At each quiescence point one action: the clock past every deadline (under the
    // checkers, once), then one permit at a time, as many as the program's waiting requests
    // ask for, so that the order in which the parked calls are served, and each wake-up, is
    // in the history; then `close` lets through whatever still waits.
    let mut points = Vec::new();
    let mut advanced = !cfg!(any(feature = "loom", feature = "shuttle"));
    let mut adds = program.requested().min(MONITOR_ADDS);
    loop {
        let (at, done) = quiesce();
        points.push(at);
        if done == workers || (advanced && adds == 0) {
            break;
        }
        rec.exclusive.store(false, StdOrdering::SeqCst);
        let start = rec.tick();
        if advanced {
            adds -= 1;
            let before = costs(&sem);
            let ok = sem.try_add_permits(1).is_ok();
            rec.record(
                workers,
                start,
                Call::Release { n: 1, ok },
                cost_since(&sem, before),
            );
            // What the add left in the count before the thread it woke runs: nothing after
            // a handoff.
            let start = rec.tick();
            let seen = sem.available_permits();
            rec.record(workers, start, Call::Available { seen }, None);
        } else {
            advanced = true;
            advance_clock(Duration::from_millis(4));
            rec.record(workers, start, Call::Advance { micros: 4000 }, None);
        }
    }
    let start = rec.tick();
    let before = costs(&sem);
    sem.close();
    rec.record(workers, start, Call::Close, cost_since(&sem, before));
    for h in handles {
        if let Err(payload) = h.join() {
            std::panic::resume_unwind(payload);
        }
    }
    // A last look, after every call has returned.
    for call in [
        Call::Available {
            seen: sem.available_permits(),
        },
        Call::IsClosed {
            seen: sem.is_closed(),
        },
    ] {
        let start = rec.tick();
        rec.record(workers, start, call, None);
    }
    let mut records = rec.records.lock().unwrap().clone();
    records.sort_by_key(|r| r.start);
    let history = History {
        permits: program.permits,
        mode: program.mode,
        records,
        real_time,
        // Under shuttle the timer draws from a fixed seed and reads the mocked clock, which
        // only the history's advances move; under loom the clock is not ordered with the
        // calls, and on real threads it is real time.
        exact_timer: cfg!(feature = "shuttle") && real_time,
    };
    // The search recurses once per event (up to 128): on a thread of its own, whose stack
    // holds that, not on the checker's small task stack.
    let verdict = std::thread::scope(|s| {
        s.spawn(|| history.quiescent(&points))
            .join()
            .expect("the search does not panic")
    });
    match verdict {
        Ok(reached) => {
            let read = if rec.read_note.load(StdOrdering::SeqCst) {
                spec::bit(spec::at::READ_AFTER_CLOSED)
            } else {
                0
            };
            reached | read
        }
        Err(v) => panic!(
            "spec: {} (quiescence points at ticks {points:?})\nprogram: {program:?}",
            v.0
        ),
    }
}

/// Counts, per situation, the runs that reached it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Coverage {
    pub(crate) runs: u64,
    pub(crate) reached: [u64; spec::SITUATIONS.len()],
}

impl Coverage {
    /// Adds one run's situations.
    pub(crate) fn add(&mut self, reached: Reached) {
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
                name,
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
