//! The model: `parking_lot_core` 0.10's functions on one park table per execution, built on
//! the checker's locks, atomics and threads. What it models and what it does not is in the
//! crate docs.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::{Rc, Weak};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use parking_lot_core::{
    DEFAULT_UNPARK_TOKEN, FilterOp, ParkResult, ParkToken, RequeueOp, UnparkResult, UnparkToken,
};

use crate::checker::{AtomicBool, Mutex, lazy_static, spin_loop, thread, thread_local};

/// A parked thread's side of the table: the real crate's per-thread `ThreadData` and its
/// parker. Shared (`Rc`) between the queue entry and the parked thread: every model thread
/// of an execution runs as a coroutine on the OS thread that called the checker, so the
/// plain cells below are never touched by two OS threads; the checker sees only `woken`.
#[derive(Debug)]
struct Slot {
    /// The parker's word: stored `true` (`Release`) by the unparker under the bucket lock, and
    /// loaded (`Acquire`) by the parked thread once its `before_sleep` has run: the real
    /// crate's futex word, and the one edge from a waker to the thread it wakes.
    woken: AtomicBool,
    /// The unpark token, written just before `woken` (which orders it).
    token: Cell<Option<UnparkToken>>,
    /// The key the thread is parked on now (`unpark_requeue` changes it under both buckets'
    /// locks); its timeout path locks that key's bucket and checks it again, as the real
    /// crate's `lock_bucket_checked` does.
    key: Cell<usize>,
    deadline: Option<Instant>,
    /// Set while the thread is blocked in the checker's `park` (after its `before_sleep`):
    /// only then does an unparker call the checker's `unpark`, whose history join is then the
    /// futex wake's, not an edge into code the thread still runs before it sleeps.
    asleep: Cell<bool>,
    /// Set right after the unparker's store to `woken` (no checker operation between): the
    /// waiting thread looks at `woken` only once it is set, so a wait costs the checker no
    /// operation on the word until there is something to find (a thread polling the word
    /// would otherwise make loom explore ever longer runs of looks before the unparker's
    /// store, until it gives up on the model's number of branches).
    stored: Cell<bool>,
    thread: thread::Thread,
    /// The token the thread parked with, and where its `park` was called: for the report of
    /// the threads left parked when a checker stops ([`report_parked`]).
    park_token: ParkToken,
    site: &'static std::panic::Location<'static>,
}

/// A parked thread in its key's queue.
#[derive(Debug)]
struct Waiter {
    token: ParkToken,
    slot: Rc<Slot>,
}

/// One key's bucket: its queue and its counters, under a checker lock of its own. Every key
/// has its own bucket (no two keys collide), so table operations on different keys share no
/// lock and are not ordered by the table, as in the real crate for keys that hash apart.
#[derive(Debug, Default)]
struct Bucket {
    /// The threads parked on this key, oldest first.
    queue: VecDeque<Waiter>,
    stats: KeyStats,
}

type BucketLock = Rc<Mutex<Bucket>>;

/// The mocked clock: a base instant and the time a scenario has advanced it by.
#[derive(Debug)]
struct Clock {
    base: Instant,
    elapsed: Duration,
}

/// The table of one execution, outside anything the checker tracks: reaching a key's bucket,
/// reading the clock or the untracked counts is no operation of the execution (no edge, no
/// scheduling point). Only the buckets' locks and the parkers' words are the checker's.
#[derive(Debug, Default)]
struct State {
    /// Each key's bucket, with the order in which the execution first used the key.
    buckets: HashMap<usize, (usize, BucketLock)>,
    clock: Option<Clock>,
    /// The deadlines of the threads queued on each key, as of the last operation on it: for
    /// [`parked_untracked`].
    parked: HashMap<usize, Vec<Option<Instant>>>,
    /// Table operations under way (holding a bucket lock): their callbacks can be switched
    /// away from, and the counts above are then out of date.
    busy: usize,
    /// Set when a callback broke the contract (its bucket's lock is then poisoned for good).
    broken: bool,
    /// The timed parks of this execution, for the clock's wake-ups where the checker's
    /// `park` is how a timed thread waits (shuttle).
    timed: Vec<Weak<Slot>>,
    /// Every park of this execution, for [`report_parked`].
    parks: Vec<Weak<Slot>>,
    /// The lock all keys share under `Settings::one_bucket` (and the unfaithful
    /// `OneLockForAllKeys`, which is the same lock where the suite expects none).
    one_lock: Option<Rc<Mutex<()>>>,
    /// Whether this execution's [`RESET`] has been set up.
    reset_armed: bool,
    /// `parking_lot_core` 0.9's per-bucket fair timers, by bucket (the key, or [`ONE_BUCKET`]
    /// under `Settings::one_bucket`), created due on first use.
    fair: HashMap<usize, FairTimeout>,
}

/// The bucket id of every key under `Settings::one_bucket`, for its shared fair timer.
const ONE_BUCKET: usize = usize::MAX;

/// `parking_lot_core` 0.9's `FairTimeout`: when a bucket's next `be_fair` is due, on the
/// mocked clock, and the generator of the 0 to 1 ms it waits after each.
#[derive(Debug)]
struct FairTimeout {
    /// `None`: due at once. The real table sets every bucket's timer to the time the table
    /// was created, which any later `Instant::now` has passed: a bucket's first unpark that
    /// wakes a thread is fair. The mocked clock may not have moved since the bucket was
    /// created, so "due" is a state of its own here.
    due: Option<Instant>,
    /// The xorshift state (the real one seeds bucket `i` with `i + 1`; the model has no bucket
    /// index and seeds every bucket with 1). Its first wait is 270 369 ns, and no wait
    /// reaches 1 ms: a scenario that moves the clock by 1 ms makes every timer due again.
    seed: u32,
}

impl FairTimeout {
    fn new() -> FairTimeout {
        FairTimeout { due: None, seed: 1 }
    }

    /// `FairTimeout::should_timeout`: fair if the clock has passed the due time (strictly, as
    /// the real one compares), then due again 0 to 1 ms later.
    fn should_timeout(&mut self, now: Instant) -> bool {
        if self.due.is_some_and(|due| now <= due) {
            return false;
        }
        // Marsaglia's xorshift, as the real timer's `gen_u32`.
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 17;
        self.seed ^= self.seed << 5;
        self.due = Some(now + Duration::from_nanos(u64::from(self.seed % 1_000_000)));
        true
    }
}

/// `be_fair` for an unpark on `key` that wakes a thread, where the API consults the fair
/// timer (`parking_lot_core` 0.9's `unpark_one`, `unpark_filter` and `unpark_requeue`; not
/// `unpark_all`, not 0.10), called under the key's bucket lock.
fn be_fair(key: usize) -> bool {
    match settings().fair_timer {
        FairTimer::Always => true,
        FairTimer::Never => false,
        FairTimer::Clock if unfaithful(Unfaithful::NeverFair) => false,
        FairTimer::Clock => {
            let at = now();
            // The clock's start, when the execution's table was first used.
            let created = at - elapsed();
            let bucket = if settings().one_bucket {
                ONE_BUCKET
            } else {
                key
            };
            state(|s| {
                let idle = unfaithful(Unfaithful::FairTimerStartsIdle);
                let timer = s.fair.entry(bucket).or_insert_with(|| FairTimeout {
                    due: idle.then_some(created),
                    ..FairTimeout::new()
                });
                let fair = timer.should_timeout(at);
                if unfaithful(Unfaithful::FairTimerNeverRearms) {
                    timer.due = None;
                }
                fair
            })
        }
    }
}

/// Which park-table API a call is made through: `parking_lot_core` 0.10's, whose results
/// have no `be_fair`, or 0.9's ([`crate::v0_9`]), whose waking unparks consult the bucket's
/// fair timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Api {
    V0_10,
    V0_9,
}

/// Whether an unpark through `api` that woke `woken` threads on `key` is to be fair,
/// consulting the fair timer where that API does (under the key's bucket lock).
fn fairness(api: Api, key: usize, woken: usize) -> bool {
    let consults = api == Api::V0_9 && (woken != 0 || unfaithful(Unfaithful::FairWithoutWaking));
    consults && be_fair(key)
}

std::thread_local! {
    /// The current execution's table, on the OS thread that runs the checker (each test
    /// thread has its own, so models on different test threads never share one).
    static STATE: RefCell<State> = RefCell::new(State::default());
}

/// Clears [`STATE`] when the checker drops the execution's statics, at the end of each
/// execution (also one that failed).
struct ResetOnDrop;

impl Drop for ResetOnDrop {
    fn drop(&mut self) {
        // Shuttle drops the statics of a deadlocked execution before it reports the deadlock:
        // the threads still parked are kept for that report.
        let _ = LEFT_PARKED.try_with(|left| *left.borrow_mut() = report_parked());
        // Taken out first, dropped after: its buckets' drops must not find the cell borrowed.
        let old = STATE.try_with(|s| s.replace(State::default()));
        drop(old);
    }
}

std::thread_local! {
    /// [`report_parked`] as the last execution on this OS thread ended (`None` once the next
    /// one parks a thread).
    static LEFT_PARKED: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Clears the "armed" mark of [`STATE`] if setting up [`RESET`] unwinds.
struct DisarmOnUnwind;

impl Drop for DisarmOnUnwind {
    fn drop(&mut self) {
        let _ = STATE.try_with(|s| s.borrow_mut().reset_armed = false);
    }
}

lazy_static! {
    /// Only the first user of the table in an execution touches this (to set up the reset);
    /// nobody reads it afterwards. The checker orders every later access to a lazy static
    /// after the access that initialized it (loom models `std::sync::Once`), an edge the real
    /// table does not have, which is why the table itself is not a lazy static.
    static ref RESET: ResetOnDrop = ResetOnDrop;
}

/// Runs `f` on this execution's table state: a short borrow, with no checker operation in
/// it (one could switch to another model thread, which would find the state borrowed).
fn state<R>(f: impl FnOnce(&mut State) -> R) -> R {
    if !STATE.with(|s| s.borrow().reset_armed) {
        // Start from an empty table (one left by an execution whose statics were never
        // dropped belongs to no execution now), marked armed first, since setting up the
        // reset can be a scheduling point (shuttle's `Once`) and another thread may use the
        // table meanwhile. If setting it up panics (outside an execution, or after its
        // statics were dropped), nothing is armed.
        let stale = STATE.with(|s| {
            s.replace(State {
                reset_armed: true,
                ..State::default()
            })
        });
        drop(stale);
        let disarm = DisarmOnUnwind;
        let _: &ResetOnDrop = &RESET;
        std::mem::forget(disarm);
    }
    STATE.with(|s| f(&mut s.borrow_mut()))
}

/// The lock of `key`'s bucket, created on first use, and its rank: how many keys the
/// execution used before this one. Two buckets are locked in rank order. The real crate locks
/// them in bucket-index order, an order as arbitrary (a hash of the addresses); ordering by
/// the addresses themselves would not do here: they change from one execution of a model to
/// the next (the allocator reuses what earlier executions freed), loom replays each
/// execution's schedule up to its last branch, and an order that flips between two
/// executions breaks that replay ("Reached unexpected exploration state"). First use is the
/// same in every execution that follows the same schedule.
fn bucket(key: usize) -> (usize, BucketLock) {
    state(|s| {
        let rank = s.buckets.len();
        let (rank, lock) = s
            .buckets
            .entry(key)
            .or_insert_with(|| (rank, Rc::default()));
        (*rank, Rc::clone(lock))
    })
}

thread_local! {
    /// What this thread's own table calls did, per key, in this execution ([`thread_stats`]).
    static MINE: RefCell<Vec<(usize, KeyStats)>> = RefCell::new(Vec::new());
    /// The callback this thread is running for the table, if any.
    static RUNNING: Cell<Option<&'static str>> = Cell::new(None);
    /// Whether this thread holds a bucket lock now.
    static HOLDING: Cell<bool> = Cell::new(false);
}

/// Fails the run if this thread is inside a callback that may not call `op`: no table
/// function may be called from a callback, and `park` not even from `before_sleep`.
fn check_not_in_callback(op: &'static str) {
    if let Some(callback) = RUNNING.with(Cell::get) {
        let allowed = callback == "before_sleep" && op != "park";
        assert!(
            allowed,
            "park-table contract violated: `{op}` was called from the `{callback}` callback; \
             parking_lot_core forbids calling into the park table there"
        );
    }
}

/// Locks `lock`, taking over a poisoned one unless a callback broke the contract.
fn lock<T>(lock: &Mutex<T>) -> crate::checker::MutexGuard<'_, T> {
    match lock.lock() {
        Ok(guard) => guard,
        // The lock is also poisoned when a guard is dropped while "this thread" is panicking:
        // under the checkers every model thread runs as a coroutine on one OS thread, whose
        // panic count they share, so a thread that took the lock while another was
        // unwinding, or that was switched away from under the lock while one was, can poison
        // it without anything having gone wrong (shuttle's `unwind_and_move` model of the
        // semaphore, a holder unwinding, does this). Only a callback that broke the contract
        // makes the table unusable.
        Err(poisoned) if !state(|s| s.broken) => poisoned.into_inner(),
        // This thread is already unwinding after a task was torn down while it held the
        // table: the run has failed already, and its first panic is the one to report, not
        // a second one about the poison, which would abort the process.
        Err(poisoned) if std::thread::panicking() => poisoned.into_inner(),
        Err(_) => panic!("the park table is poisoned: an earlier callback broke the contract"),
    }
}

/// Marks this thread as holding a bucket lock until dropped (also when a callback unwinds).
struct Holding;

impl Holding {
    fn enter() -> Holding {
        HOLDING.with(|h| h.set(true));
        Holding
    }
}

impl Drop for Holding {
    fn drop(&mut self) {
        HOLDING.with(|h| h.set(false));
    }
}

/// Runs `f` on the buckets of `keys` (one key, or `unpark_requeue`'s two, locked in rank
/// order, see [`bucket`], as the real crate locks two buckets in index order), first checking that this
/// call does not break the contract ([`check_not_in_callback`]). `f` gets the first key's
/// bucket and, for two different keys, the second's.
fn with_buckets<R>(
    op: &'static str,
    first: usize,
    second: Option<usize>,
    f: impl FnOnce(&mut Bucket, Option<&mut Bucket>) -> R,
) -> R {
    check_not_in_callback(op);
    // Only reachable from a `before_sleep` run under the lock (an unfaithful variant): the
    // checker's lock would block this thread on itself.
    assert!(
        !HOLDING.with(Cell::get),
        "park table: `{op}` was called while this thread holds a bucket lock; the real crate \
         would deadlock here"
    );
    if unfaithful(Unfaithful::TableInLazyStatic) {
        // Every use reads the lazy static the first user initialized: the edge of a table
        // kept in one.
        let _: &ResetOnDrop = &RESET;
    }
    let one_lock = (settings().one_bucket || unfaithful(Unfaithful::OneLockForAllKeys))
        .then(|| state(|s| Rc::clone(s.one_lock.get_or_insert_with(Rc::default))));
    let _one = one_lock.as_deref().map(lock);
    let second = second.filter(|&k| k != first);
    let ((first_rank, a), b) = (bucket(first), second.map(bucket));
    let mut guards = match &b {
        Some((rank, b)) if *rank < first_rank => {
            let gb = lock(b);
            (lock(&a), Some(gb))
        }
        Some((_, b)) => {
            let ga = lock(&a);
            (ga, Some(lock(b)))
        }
        None => (lock(&a), None),
    };
    state(|s| s.busy += 1);
    let holding = Holding::enter();
    let result = f(&mut guards.0, guards.1.as_deref_mut());
    drop(holding);
    // Only bookkeeping under the locks: the clock is not read (nor anything the checker
    // sees).
    state(|s| {
        for (key, bucket) in [
            (first, Some(&*guards.0)),
            (second.unwrap_or(first), guards.1.as_deref()),
        ] {
            if let Some(bucket) = bucket {
                let deadlines = bucket.queue.iter().map(|w| w.slot.deadline).collect();
                s.parked.insert(key, deadlines);
            }
        }
        s.busy -= 1;
    });
    result
}

/// Runs `f` on `key`'s bucket under its lock ([`with_buckets`] with one key).
fn with_bucket<R>(op: &'static str, key: usize, f: impl FnOnce(&mut Bucket) -> R) -> R {
    with_buckets(op, key, None, |bucket, _| f(bucket))
}

/// Runs the callback `name`, failing the run if it panics: `parking_lot_core` aborts the
/// process when a callback unwinds (it holds the bucket lock). The marker it sets is the
/// previous one again afterwards, so a table call from a callback inside `before_sleep`
/// (an unpark's filter, say) leaves `before_sleep`'s rule in force.
fn callback<R>(name: &'static str, f: impl FnOnce() -> R) -> R {
    let previous = RUNNING.with(|r| r.replace(Some(name)));
    let result = catch_unwind(AssertUnwindSafe(f));
    let restored = if unfaithful(Unfaithful::CallbackMarkerReset) {
        None
    } else {
        previous
    };
    RUNNING.with(|r| r.set(restored));
    match result {
        Ok(value) => value,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("a non-string panic");
            state(|s| s.broken = true);
            panic!(
                "park-table contract violated: the `{name}` callback panicked ({msg}); \
                 parking_lot_core aborts the process when a callback unwinds"
            )
        }
    }
}

/// Hands `token` to each of `chosen` and wakes it, under the bucket lock (the real crate's
/// futex store also happens under the lock; only its wake system call comes after): the
/// token, then the parker's word (a `Release` store, paired with the `Acquire` look in
/// [`park_safe`]'s wait), then the checker's `unpark` if the thread is asleep in the
/// checker's `park` already. A thread not yet asleep (still in `before_sleep`, or a timed
/// thread that waits by polling) finds the word itself.
fn deliver(chosen: Vec<Waiter>, token: UnparkToken) {
    let at_once = unfaithful(Unfaithful::WakeJoinsAtOnce);
    for waiter in chosen {
        let slot = &waiter.slot;
        slot.token.set(Some(token));
        // `SeqCst`: a `Release` store the parked thread's `SeqCst` look cannot miss (see
        // `park_safe`).
        slot.woken.store(true, Ordering::SeqCst);
        slot.stored.set(true);
        if slot.asleep.get() || at_once {
            slot.thread.unpark();
        }
    }
}

/// `parking_lot_core::park`, on the modelled table.
///
/// Parks the current thread on `key` if `validate` (run under the key's bucket lock) returns
/// `true`; runs `before_sleep` after the lock is released; returns when an unpark chooses
/// it ([`ParkResult::Unparked`] with the unparker's token), when its timeout passes on the
/// mocked clock ([`ParkResult::TimedOut`], after `timed_out(key, was_last)` ran under the
/// lock, with the key it was parked on at that moment), or at once with
/// [`ParkResult::Invalid`] if `validate` returned `false` (nothing queued).
///
/// # Safety
///
/// As `parking_lot_core::park`: `key` must be an address the caller controls; `validate` and
/// `timed_out` run under the bucket lock and must not call into the table or unwind;
/// `before_sleep` must not park or unwind. The model checks the callback rules and fails the
/// run when one is broken.
#[track_caller]
pub unsafe fn park(
    key: usize,
    validate: impl FnOnce() -> bool,
    before_sleep: impl FnOnce(),
    timed_out: impl FnOnce(usize, bool),
    park_token: ParkToken,
    timeout: Option<Instant>,
) -> ParkResult {
    park_safe(key, validate, before_sleep, timed_out, park_token, timeout)
}

/// How the thread in [`park_safe`] waits for its unpark or its timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    /// Blocked in the checker's `park` until an unparker (or [`advance_clock`]) wakes it: a
    /// thread nobody wakes is the checker's deadlock.
    Sleep,
    /// Polling its word and the clock, yielding between looks (the unfaithful variants
    /// `NoWakeEdge` and `ClockUnseen` only).
    Poll,
    /// Timing out as soon as the checker schedules it (`Timeouts::CheckerChooses`).
    TimeOutNow,
}

/// [`park`]'s body: a safe function, so that `cargo mutants` mutates it (it skips the bodies
/// of `unsafe fn`s). Nothing in it needs the caller's promises: the model only compares keys.
#[track_caller]
fn park_safe(
    key: usize,
    validate: impl FnOnce() -> bool,
    before_sleep: impl FnOnce(),
    timed_out: impl FnOnce(usize, bool),
    park_token: ParkToken,
    timeout: Option<Instant>,
) -> ParkResult {
    install_report();
    let slot = Rc::new(Slot {
        woken: AtomicBool::new(false),
        token: Cell::new(None),
        key: Cell::new(key),
        deadline: timeout,
        asleep: Cell::new(false),
        stored: Cell::new(false),
        thread: thread::current(),
        park_token,
        site: std::panic::Location::caller(),
    });
    state(|s| s.parks.push(Rc::downgrade(&slot)));
    let _ = LEFT_PARKED.try_with(|left| left.borrow_mut().take());
    let under_lock = unfaithful(Unfaithful::BeforeSleepUnderLock);
    let mut before_sleep = Some(before_sleep);
    // Made a `SeqCst` store, so that the look below can tell it from the unparker's.
    slot.woken.store(false, Ordering::SeqCst);
    let queued = with_bucket("park", key, |bucket| {
        if !callback("validate", validate) {
            return false;
        }
        let waiter = Waiter {
            token: park_token,
            slot: Rc::clone(&slot),
        };
        if unfaithful(Unfaithful::Lifo) {
            bucket.queue.push_front(waiter);
        } else {
            bucket.queue.push_back(waiter);
        }
        bucket.stats.parks += 1;
        note_mine(key, |mine| mine.parks += 1);
        if timeout.is_some() {
            state(|s| s.timed.push(Rc::downgrade(&slot)));
        }
        if under_lock {
            callback(
                "before_sleep",
                before_sleep.take().expect("before_sleep runs once"),
            );
        }
        true
    });
    if !queued {
        return ParkResult::Invalid;
    }
    if let Some(before_sleep) = before_sleep.take() {
        callback("before_sleep", before_sleep);
    }
    if unfaithful(Unfaithful::SpuriousReturn) {
        // Leaves the queue and returns as if unparked, with nobody having unparked it.
        with_bucket("park", slot.key.get(), |bucket| {
            bucket.queue.retain(|w| !Rc::ptr_eq(&w.slot, &slot));
        });
        return ParkResult::Unparked(parking_lot_core::DEFAULT_UNPARK_TOKEN);
    }

    let wait = match timeout {
        _ if unfaithful(Unfaithful::NoWakeEdge) => Wait::Poll,
        None => Wait::Sleep,
        Some(_) if settings().timeouts == Timeouts::CheckerChooses => Wait::TimeOutNow,
        Some(_) if unfaithful(Unfaithful::ClockUnseen) => Wait::Poll,
        Some(_) => Wait::Sleep,
    };
    // The look must find an unparker's store once it is made, as the kernel's futex check
    // does: loom lets a plain load return an older store it is not ordered after, so a
    // thread still in `before_sleep` when its unparker stored (and so was not woken by it)
    // could read `false` and sleep forever. A `SeqCst` load skips a `SeqCst` store that a
    // newer `SeqCst` store follows, and the unparker's store follows the first one below (it
    // locked the bucket after this thread queued), so the look reads `true` once the
    // unparker has stored it. Loom's `SeqCst` is otherwise `AcqRel` (loom 0.7 gives `SeqCst`
    // accesses no total order), so the edge is the `Release`/`Acquire` pair, no more.
    let word = if unfaithful(Unfaithful::NoWakeEdge) {
        Ordering::Relaxed
    } else {
        Ordering::SeqCst
    };
    let mut timed_out = Some(timed_out);
    // Set when the checker's `park` returned for a wake this table did not give: the
    // thread's own `Thread::unpark` from elsewhere, which the real crate's futex leaves to
    // the thread's next `std::thread::park`, or a spurious wake-up (shuttle's `park` has
    // them, as std's may). Given back to the thread as a token on return: for a spurious
    // wake-up that is one spurious return later, which std's `park` allows.
    let mut foreign_token = false;
    let result = loop {
        // Marked asleep before the look, so an unparker that stores the word after it wakes
        // this thread; one that stored it before is seen by the look.
        slot.asleep.set(wait == Wait::Sleep);
        if word_is_set(&slot, word) {
            slot.asleep.set(false);
            let token = slot
                .token
                .take()
                .expect("the unparker writes the token first");
            if settings().relock_on_wake {
                with_bucket("park", slot.key.get(), |_| ());
            }
            break ParkResult::Unparked(token);
        }
        let expired = match timeout {
            None => false,
            // The checker chooses: this thread may time out now, and the checker decides
            // whether that happens before or after any unpark (the lock below is a
            // scheduling point like any other).
            Some(_) if wait == Wait::TimeOutNow => true,
            Some(deadline) => deadline <= now(),
        };
        if expired {
            slot.asleep.set(false);
            if let Some(result) = leave_on_timeout(&slot, key, &mut timed_out) {
                break result;
            }
            // An unpark removed it first: its word is set, under the lock just taken.
            continue;
        }
        match wait {
            Wait::Sleep => {
                thread::park();
                foreign_token |= woken_by_another(&slot);
            }
            Wait::Poll | Wait::TimeOutNow => thread::yield_now(),
        }
    };
    if foreign_token {
        thread::current().unpark();
    }
    result
}

/// Installs, once per process, a panic hook that prints [`report_parked`] when a checker
/// stops an execution for a deadlock (loom's "deadlock; threads = …", shuttle's "deadlock!
/// blocked tasks: …": every thread blocked), then runs the hook that was there before.
fn install_report() {
    // Not while this OS thread is unwinding (a checker runs every model thread on it, so
    // another model thread's panic counts): std refuses to change the hook then, and a
    // later park installs it.
    static INSTALLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if std::thread::panicking() {
        return;
    }
    if INSTALLED.swap(true, Ordering::Relaxed) {
        return;
    }
    {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info
                .payload()
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| info.payload().downcast_ref::<&str>().copied())
                .unwrap_or("");
            let deadlock =
                payload.starts_with("deadlock;") || payload.contains("deadlock! blocked tasks");
            let report = report_parked().or_else(|| {
                LEFT_PARKED
                    .try_with(|left| left.borrow_mut().take())
                    .ok()
                    .flatten()
            });
            if deadlock && let Some(report) = report {
                eprintln!("{report}");
                let _ = LAST_REPORT.try_with(|last| *last.borrow_mut() = Some(report));
            }
            previous(info);
        }));
    }
}

std::thread_local! {
    /// The last deadlock report the hook printed on this OS thread ([`install_report`]), for
    /// its test.
    static LAST_REPORT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Takes the last deadlock report the hook printed on this OS thread.
#[cfg(test)]
pub(crate) fn take_last_report() -> Option<String> {
    LAST_REPORT.with(|last| last.borrow_mut().take())
}

/// The threads parked in this execution's table and never woken (blocked in the checker's
/// `park`, no unparker having stored their word): each with its key, its park token and
/// where its `park` was called. `None` outside an execution, or with nobody parked. It reads
/// plain cells only (no checker operation, no lock), so a panic hook may call it while the
/// checker reports a deadlock.
pub(crate) fn report_parked() -> Option<String> {
    let lines: Vec<String> = STATE
        .try_with(|s| {
            let Ok(s) = s.try_borrow() else {
                return Vec::new();
            };
            s.parks
                .iter()
                .filter_map(Weak::upgrade)
                .filter(|slot| slot.asleep.get() && !slot.stored.get())
                .map(|slot| {
                    let name = slot.thread.name().map_or_else(
                        || format!("{:?}", slot.thread.id()),
                        |n| format!("{n:?} ({:?})", slot.thread.id()),
                    );
                    format!(
                        "  thread {name} on key {:#x} with ParkToken({}), parked at {}",
                        slot.key.get(),
                        slot.park_token.0,
                        slot.site
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    (!lines.is_empty()).then(|| {
        format!(
            "parkcheck: threads parked in the model's park table, never woken:\n{}",
            lines.join("\n")
        )
    })
}

/// Whether the unparker has set `slot`'s word, looked at with `order` (a checker operation)
/// only once `stored` says there is something to find.
fn word_is_set(slot: &Slot, order: Ordering) -> bool {
    slot.stored.get() && slot.woken.load(order)
}

/// Whether the checker's `park` just returned for a wake this table did not give: it wakes a
/// sleeping thread only after storing its word, and the clock only once the thread's
/// deadline has passed.
fn woken_by_another(slot: &Slot) -> bool {
    let due = slot.deadline.is_some_and(|deadline| deadline <= now());
    !slot.stored.get() && !due
}

/// A timed-out thread leaves its queue, as in the real crate: it locks the bucket of the key
/// it is parked on now (checked again under the lock, since a requeue may move it while it
/// waits for the lock) and runs `timed_out` there, unless an unpark removed it first
/// (`None`: its word is set, under the lock it took).
fn leave_on_timeout(
    slot: &Rc<Slot>,
    parked_with: usize,
    timed_out: &mut Option<impl FnOnce(usize, bool)>,
) -> Option<ParkResult> {
    loop {
        let key = slot.key.get();
        let left = with_bucket("park", key, |bucket| {
            if slot.key.get() != key {
                return Err(());
            }
            let Some(at) = bucket.queue.iter().position(|w| Rc::ptr_eq(&w.slot, slot)) else {
                return Ok(None);
            };
            bucket.queue.remove(at);
            // The key it is parked on now: after a requeue, not the one it parked with.
            let key_now = if unfaithful(Unfaithful::TimedOutOriginalKey) {
                parked_with
            } else {
                key
            };
            let was_last = bucket.queue.is_empty();
            bucket.stats.timeouts += 1;
            let timed_out = timed_out.take().expect("a park times out once");
            callback("timed_out", || timed_out(key_now, was_last));
            Ok(Some(ParkResult::TimedOut))
        });
        if let Ok(result) = left {
            return result;
        }
    }
}

/// Removes the waiters chosen by `choose` (called in FIFO order for each waiter with `key`),
/// runs `callback_fn` with the result and `be_fair` (as `api` computes it), and hands its
/// token to the chosen waiters ([`deliver`], under the lock).
pub(crate) fn unpark_where(
    op: &'static str,
    key: usize,
    api: Api,
    mut choose: impl FnMut(ParkToken) -> FilterOp,
    callback_fn: impl FnOnce(UnparkResult, bool) -> UnparkToken,
) -> (UnparkResult, bool) {
    let outside = unfaithful(Unfaithful::CallbackOutsideLock);
    let mut callback_fn = Some(callback_fn);
    let mut late = None;
    let result = with_bucket(op, key, |bucket| {
        let mut result = UnparkResult::default();
        let mut chosen = Vec::new();
        let mut kept = VecDeque::with_capacity(bucket.queue.len());
        let mut stopped = false;
        while let Some(waiter) = bucket.queue.pop_front() {
            if stopped {
                kept.push_back(waiter);
                continue;
            }
            match callback("filter", || choose(waiter.token)) {
                FilterOp::Unpark => chosen.push(waiter),
                FilterOp::Skip => {
                    result.have_more_threads = true;
                    kept.push_back(waiter);
                }
                FilterOp::Stop => {
                    result.have_more_threads = true;
                    stopped = true;
                    kept.push_back(waiter);
                }
            }
        }
        bucket.queue = kept;
        if unfaithful(Unfaithful::OtherKeysCount) {
            result.have_more_threads = !bucket.queue.is_empty() || others_parked(key);
        }
        result.unparked_threads = chosen.len();
        let fair = fairness(api, key, chosen.len());
        count_unpark(&mut bucket.stats, chosen.len());
        note_mine(key, |mine| count_unpark(mine, chosen.len()));
        if outside {
            late = Some(chosen);
            return (result, fair);
        }
        let f = callback_fn.take().expect("the callback runs once");
        let token = callback("callback", || f(result, fair));
        count_handed(Some(&mut bucket.stats), key, token, chosen.len());
        deliver(chosen, token);
        (result, fair)
    });
    if let Some(chosen) = late {
        let f = callback_fn.take().expect("the callback runs once");
        let token = callback("callback", || f(result.0, result.1));
        // The bucket lock is gone: only the caller's own counts see these.
        count_handed(None, key, token, chosen.len());
        deliver(chosen, token);
    }
    result
}

/// Whether a thread is parked on a key other than `key`, as of the last operation on each
/// (for `Unfaithful::OtherKeysCount`, which counts every key's threads).
fn others_parked(key: usize) -> bool {
    state(|s| {
        s.parked
            .iter()
            .any(|(&k, deadlines)| k != key && !deadlines.is_empty())
    })
}

/// `parking_lot_core::unpark_one`, on the modelled table: unparks the oldest thread parked on
/// `key`, if any, after running `callback` under the lock with the result
/// (`have_more_threads`: another thread with this key remains).
///
/// # Safety
///
/// As `parking_lot_core::unpark_one`: `callback` runs under the table lock and must not call
/// into the table or unwind (checked).
pub unsafe fn unpark_one(
    key: usize,
    callback: impl FnOnce(UnparkResult) -> UnparkToken,
) -> UnparkResult {
    unpark_one_safe(key, callback)
}

/// [`unpark_one`]'s body, safe so that `cargo mutants` mutates it.
fn unpark_one_safe(key: usize, callback: impl FnOnce(UnparkResult) -> UnparkToken) -> UnparkResult {
    unpark_one_in(Api::V0_10, key, |r, _| callback(r)).0
}

/// `unpark_one` through `api`: the result and `be_fair`.
pub(crate) fn unpark_one_in(
    api: Api,
    key: usize,
    callback: impl FnOnce(UnparkResult, bool) -> UnparkToken,
) -> (UnparkResult, bool) {
    let mut first = true;
    // Unpark the first waiter with this key; stopping at the next one sets
    // `have_more_threads` exactly when another waiter with this key remains.
    unpark_where(
        "unpark_one",
        key,
        api,
        |_| {
            if std::mem::take(&mut first) {
                FilterOp::Unpark
            } else {
                FilterOp::Stop
            }
        },
        callback,
    )
}

/// `parking_lot_core::unpark_all`, on the modelled table: unparks every thread parked on
/// `key` with `unpark_token` and returns how many.
///
/// # Safety
///
/// As `parking_lot_core::unpark_all`: `key` must be an address the caller controls.
pub unsafe fn unpark_all(key: usize, unpark_token: UnparkToken) -> usize {
    unpark_all_safe(key, unpark_token)
}

/// [`unpark_all`]'s body, safe so that `cargo mutants` mutates it.
fn unpark_all_safe(key: usize, unpark_token: UnparkToken) -> usize {
    unpark_all_in(Api::V0_10, key, unpark_token)
}

/// `unpark_all` through `api`. Neither version's `unpark_all` consults the fair timer.
pub(crate) fn unpark_all_in(api: Api, key: usize, unpark_token: UnparkToken) -> usize {
    let api = if unfaithful(Unfaithful::UnparkAllConsultsTimer) {
        api
    } else {
        Api::V0_10
    };
    let unpark = |_| FilterOp::Unpark;
    let (result, _) = unpark_where("unpark_all", key, api, unpark, |_, _| unpark_token);
    result.unparked_threads
}

/// `parking_lot_core::unpark_filter`, on the modelled table: calls `filter` with the token of
/// each thread parked on `key`, oldest first, until it returns [`FilterOp::Stop`]; unparks
/// those it returned [`FilterOp::Unpark`] for, with the token `callback` returns.
///
/// # Safety
///
/// As `parking_lot_core::unpark_filter`: `filter` and `callback` run under the table lock and
/// must not call into the table or unwind (checked).
pub unsafe fn unpark_filter(
    key: usize,
    filter: impl FnMut(ParkToken) -> FilterOp,
    callback: impl FnOnce(UnparkResult) -> UnparkToken,
) -> UnparkResult {
    unpark_where("unpark_filter", key, Api::V0_10, filter, |r, _| callback(r)).0
}

/// `parking_lot_core::unpark_requeue`, on the modelled table: under both keys' bucket locks,
/// `validate` chooses a [`RequeueOp`]; the threads parked on `key_from` are then unparked or
/// moved to the end of `key_to`'s queue as the operation says (in their order), `callback`
/// runs with the operation and the result, and its token goes to the thread unparked, if
/// any. With [`RequeueOp::Abort`] nothing changes, `callback` is not called, and the result
/// is the default one.
///
/// # Safety
///
/// As `parking_lot_core::unpark_requeue`: `validate` and `callback` run under the bucket
/// locks and must not call into the table or unwind (checked).
pub unsafe fn unpark_requeue(
    key_from: usize,
    key_to: usize,
    validate: impl FnOnce() -> RequeueOp,
    callback: impl FnOnce(RequeueOp, UnparkResult) -> UnparkToken,
) -> UnparkResult {
    unpark_requeue_safe(key_from, key_to, validate, callback)
}

/// [`unpark_requeue`]'s body, safe so that `cargo mutants` mutates it.
fn unpark_requeue_safe(
    key_from: usize,
    key_to: usize,
    validate: impl FnOnce() -> RequeueOp,
    callback: impl FnOnce(RequeueOp, UnparkResult) -> UnparkToken,
) -> UnparkResult {
    let callback = |op, r, _| callback(op, r);
    unpark_requeue_in(Api::V0_10, key_from, key_to, validate, callback).0
}

/// `unpark_requeue` through `api`: the result and `be_fair` (consulted on `key_from`'s
/// bucket, as the real 0.9 does, when a thread is unparked).
pub(crate) fn unpark_requeue_in(
    api: Api,
    key_from: usize,
    key_to: usize,
    validate: impl FnOnce() -> RequeueOp,
    callback: impl FnOnce(RequeueOp, UnparkResult, bool) -> UnparkToken,
) -> (UnparkResult, bool) {
    let outside = unfaithful(Unfaithful::CallbackOutsideLock);
    let mut callback_fn = Some(callback);
    let mut late = None;
    let result = with_buckets("unpark_requeue", key_from, Some(key_to), |from, to| {
        let op = self::callback("validate", validate);
        let mut result = UnparkResult::default();
        if op == RequeueOp::Abort {
            return (result, false);
        }
        let unpark_first = matches!(op, RequeueOp::UnparkOneRequeueRest | RequeueOp::UnparkOne);
        let just_one = matches!(op, RequeueOp::UnparkOne | RequeueOp::RequeueOne);
        let mut woken = Vec::new();
        let mut requeued = Vec::new();
        let mut kept = VecDeque::with_capacity(from.queue.len());
        let mut done = false;
        while let Some(waiter) = from.queue.pop_front() {
            if done {
                // `UnparkOne` and `RequeueOne` leave the rest parked, and say so.
                result.have_more_threads = true;
                kept.push_back(waiter);
            } else if unpark_first && woken.is_empty() {
                woken.push(waiter);
                result.unparked_threads = 1;
                done = just_one;
            } else {
                waiter.slot.key.set(key_to);
                requeued.push(waiter);
                result.requeued_threads += 1;
                done = just_one;
            }
        }
        if unfaithful(Unfaithful::OtherKeysCount) {
            let to_parked = to.as_ref().is_some_and(|to| !to.queue.is_empty());
            result.have_more_threads = !kept.is_empty() || to_parked || others_parked(key_from);
        }
        // The requeued threads join the end of `key_to`'s queue, after the threads already
        // parked there, in their order (`key_to` may be `key_from` itself).
        from.queue = kept;
        match to {
            Some(to) => to.queue.extend(requeued),
            None => from.queue.extend(requeued),
        }
        count_unpark(&mut from.stats, woken.len());
        from.stats.requeued += result.requeued_threads;
        note_mine(key_from, |mine| {
            count_unpark(mine, woken.len());
            mine.requeued += result.requeued_threads;
        });
        let fair = fairness(api, key_from, woken.len());
        if outside {
            late = Some((op, woken));
            return (result, fair);
        }
        let f = callback_fn.take().expect("the callback runs once");
        let token = self::callback("callback", || f(op, result, fair));
        count_handed(Some(&mut from.stats), key_from, token, woken.len());
        deliver(woken, token);
        (result, fair)
    });
    if let Some((op, woken)) = late {
        let f = callback_fn.take().expect("the callback runs once");
        let token = self::callback("callback", || f(op, result.0, result.1));
        // The bucket lock is gone: only the caller's own counts see these.
        count_handed(None, key_from, token, woken.len());
        deliver(woken, token);
    }
    result
}

/// `parking_lot_core::deadlock`: inert, as in the real crate without its
/// `deadlock_detection` feature, except that the model checks where they are called from.
pub mod deadlock {
    /// Records that the current thread owns the resource `key`: a no-op, as in the real crate
    /// without `deadlock_detection`; called from a park-table callback it fails the run.
    ///
    /// # Safety
    ///
    /// As `parking_lot_core::deadlock::acquire_resource`: it must not be called from a
    /// callback passed to a park-table function.
    pub unsafe fn acquire_resource(key: usize) {
        let _ = key;
        acquire_resource_safe();
    }

    /// [`acquire_resource`]'s body, safe so that `cargo mutants` mutates it.
    fn acquire_resource_safe() {
        super::check_not_in_callback("deadlock::acquire_resource");
    }

    /// Stops recording one acquisition of the resource `key`: a no-op, as in the real crate
    /// without `deadlock_detection`; called from a park-table callback it fails the run.
    ///
    /// # Safety
    ///
    /// As `parking_lot_core::deadlock::release_resource`: it must not be called from a
    /// callback passed to a park-table function.
    pub unsafe fn release_resource(key: usize) {
        let _ = key;
        release_resource_safe();
    }

    /// [`release_resource`]'s body, safe so that `cargo mutants` mutates it.
    fn release_resource_safe() {
        super::check_not_in_callback("deadlock::release_resource");
    }
}

/// The mocked clock's current time: the base every deadline given to [`park`] must be
/// computed from under a checker (a deadline from `Instant::now` would be compared with a
/// clock that does not move). It starts at the real time of the execution's first use and
/// moves only by [`advance_clock`]. It synchronizes with nothing and is no operation of the
/// execution, as `Instant::now` is not.
pub fn now() -> Instant {
    state(|s| {
        let clock = s.clock.get_or_insert_with(|| Clock {
            base: Instant::now(),
            elapsed: Duration::ZERO,
        });
        clock.base + clock.elapsed
    })
}

/// How far [`advance_clock`] has moved the mocked clock in this execution (in the real
/// build there is no such clock; a primitive that keeps its own timer can read this under a
/// checker, as it would read a monotonic clock). It synchronizes with nothing.
pub fn elapsed() -> Duration {
    state(|s| s.clock.as_ref().map_or(Duration::ZERO, |c| c.elapsed))
}

/// Moves the mocked clock forward by `by`, and wakes each parked thread whose deadline has
/// now passed, so that it times out (unless an unpark reaches it first). It locks, in the
/// order the execution first used the keys, the bucket of each key with such a thread, and wakes it there through the
/// checker's `unpark`: the one place where the model orders more than the real crate does
/// (time passing orders nothing there; see the crate docs). It may not be called from a
/// park-table callback.
pub fn advance_clock(by: Duration) {
    check_not_in_callback("advance_clock");
    let now = now() + by;
    let mut due: Vec<usize> = state(|s| {
        if let Some(clock) = s.clock.as_mut() {
            clock.elapsed += by;
        }
        s.timed.retain(|slot| slot.strong_count() > 0);
        s.timed
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|slot| slot.deadline.is_some_and(|d| d <= now))
            .map(|slot| slot.key.get())
            .collect()
    });
    if unfaithful(Unfaithful::ClockUnseen) {
        // The timed threads poll the clock themselves; nothing the checker sees happens here.
        return;
    }
    // In rank order, the same in every execution (see `bucket`), not in address order.
    due.sort_unstable_by_key(|&key| bucket(key).0);
    due.dedup();
    for key in due {
        with_bucket("advance_clock", key, |bucket| {
            for waiter in &bucket.queue {
                let slot = &waiter.slot;
                // A thread not asleep yet looks at the clock itself before it sleeps.
                if slot.deadline.is_some_and(|d| d <= now) && slot.asleep.get() {
                    slot.thread.unpark();
                }
            }
        });
    }
}

/// What happened on one park-table key in this execution so far, as [`stats`] reports it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct KeyStats {
    /// `park` calls whose `validate` let the thread queue.
    pub parks: usize,
    /// `unpark_*` calls on this key (`unpark_requeue` counts on `key_from`).
    pub unpark_calls: usize,
    /// Threads those calls unparked, in all.
    pub woken: usize,
    /// The most threads one of those calls unparked.
    pub most_woken_by_one_call: usize,
    /// Threads those calls unparked with a token other than `DEFAULT_UNPARK_TOKEN`: the
    /// wake-ups that told their thread something (a primitive that hands over what it
    /// releases says so with its token), which a test can hold to how many it expected.
    pub handed: usize,
    /// Threads `unpark_requeue` moved from this key to another.
    pub requeued: usize,
    /// Threads whose park on this key timed out.
    pub timeouts: usize,
}

/// What happened on park-table key `key` in this execution so far. It takes the key's bucket
/// lock, so it may not be called from a park-table callback.
pub fn stats(key: usize) -> KeyStats {
    with_bucket("stats", key, |bucket| bucket.stats)
}

/// What the calling thread's own calls on park-table key `key` did in this execution so far:
/// its parks that queued it, its `unpark_*` calls and the threads they unparked or requeued
/// (its timeouts are not counted). A test reads it before and after one operation of the
/// primitive to see what that operation cost in the table, which the per-key [`stats`]
/// cannot tell while other threads use the key too. It reads a checker thread-local: no
/// happens-before edge, no scheduling point, no lock (so a callback may call it).
pub fn thread_stats(key: usize) -> KeyStats {
    MINE.with(|mine| {
        mine.borrow()
            .iter()
            .find(|(k, _)| *k == key)
            .map_or_else(KeyStats::default, |(_, stats)| *stats)
    })
}

/// Counts one unpark call that unparked `woken` threads in `stats`.
fn count_unpark(stats: &mut KeyStats, woken: usize) {
    stats.unpark_calls += 1;
    stats.woken += woken;
    stats.most_woken_by_one_call = stats.most_woken_by_one_call.max(woken);
}

/// Counts `woken` threads unparked with `token` as handed something if it is not the default
/// one, in the key's counts (`bucket`, under its lock) and the caller's own.
fn count_handed(bucket: Option<&mut KeyStats>, key: usize, token: UnparkToken, woken: usize) {
    if token == DEFAULT_UNPARK_TOKEN || woken == 0 {
        return;
    }
    if let Some(stats) = bucket {
        stats.handed += woken;
    }
    note_mine(key, |mine| mine.handed += woken);
}

/// Updates the calling thread's own counts for `key` ([`thread_stats`]).
fn note_mine(key: usize, f: impl FnOnce(&mut KeyStats)) {
    MINE.with(|mine| {
        let mut mine = mine.borrow_mut();
        match mine.iter_mut().find(|(k, _)| *k == key) {
            Some((_, stats)) => f(stats),
            None => {
                let mut stats = KeyStats::default();
                f(&mut stats);
                mine.push((key, stats));
            }
        }
    });
}

/// How many threads are parked on `key` now: a scenario can wait (yielding to the checker)
/// until a thread it spawned is queued. It takes the key's bucket lock, so it may not be
/// called from a park-table callback.
pub fn parked(key: usize) -> usize {
    with_bucket("parked", key, |bucket| bucket.queue.len())
}

/// How many threads are parked on `key` now and cannot run until another thread acts (timed
/// waiters whose deadline has passed on the mocked clock are not counted), read without the
/// bucket lock and without any operation the checker sees: no happens-before edge, no
/// scheduling point. `None` while a table operation is under way on any key (a thread is in
/// the middle of parking or unparking, so nothing is settled). For a monitor thread that
/// must observe quiescence (every other thread finished or parked) without ordering itself
/// after the parked threads or taking a lock.
pub fn parked_untracked(key: usize) -> Option<usize> {
    let at = now();
    state(|s| {
        if s.busy > 0 {
            return None;
        }
        // A timed waiter whose deadline has passed is runnable (it is about to leave the
        // queue itself), so it is not counted.
        Some(s.parked.get(&key).map_or(0, |deadlines| {
            deadlines
                .iter()
                .filter(|d| d.is_none_or(|d| d > at))
                .count()
        }))
    })
}

/// How many times [`SpinWait::spin`] spins before it says "park" under a checker, unless
/// [`Settings::spins`] says otherwise. One yield is enough to explore the branch (whatever
/// the spin waits for may happen during it); each spin adds a yield per spinning thread and
/// so multiplies the executions loom explores.
pub const SPINS: u32 = 1;

/// When a timed park times out under the checker.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Timeouts {
    /// When the mocked clock, moved by [`advance_clock`], passes its deadline (the default).
    #[default]
    Clock,
    /// Whenever the checker schedules it: every timed park, deadline or not, may time out as
    /// soon as it is queued, and the checker chooses at each one whether it times out before
    /// any unpark reaches it (loom explores both within its preemption bound; shuttle's
    /// schedulers draw them). A scenario then needs no clock thread to reach its timeouts.
    CheckerChooses,
}

/// What `UnparkResult::be_fair` is in the results of `parking_lot_core` 0.9's unparks
/// ([`crate::v0_9`]). A primitive on 0.9 switches to a fair handoff when it is set (parking_lot
/// 0.12's mutexes and rwlock do), so a model should reach both values: under loom, whose
/// models cannot make a choice of their own, by running once with each of `Always` and
/// `Never` (each a setting for the whole run), besides `Clock`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum FairTimer {
    /// As the real 0.9 computes it, on the mocked clock (the default): each bucket (each key,
    /// or all keys under `Settings::one_bucket`) has a timer that starts due, so the first
    /// unpark on it that wakes a thread is fair; each fair unpark makes it due again 0 to
    /// 1 ms later, which only [`advance_clock`] can bring (1 ms always does). Only an
    /// `unpark_one`, `unpark_filter` or `unpark_requeue` that wakes a thread consults it;
    /// `unpark_all` and the unparks that wake nobody do not, as in the real crate.
    #[default]
    Clock,
    /// Every unpark that would consult the timer is fair.
    Always,
    /// No unpark is fair (the timer is never due).
    Never,
}

/// A deliberately unfaithful variant of the model (feature `unfaithful`), for showing that the
/// conformance suite fails when the model departs from the real crate. Never use one to
/// check a primitive.
#[cfg(feature = "unfaithful")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unfaithful {
    /// Queues are LIFO: a thread parks at the front.
    Lifo,
    /// `have_more_threads` counts threads parked on any key, not only the unparked one.
    OtherKeysCount,
    /// The unpark callbacks run after the table lock is released.
    CallbackOutsideLock,
    /// `timed_out` is given the key the thread parked with, even after a requeue moved it.
    TimedOutOriginalKey,
    /// `park` returns `Unparked` right after `before_sleep`, with nobody having unparked it.
    SpuriousReturn,
    /// Every table operation also takes one lock shared by all keys, so operations on
    /// different keys are ordered (the real crate orders only keys that share a bucket;
    /// `Settings::one_bucket` is this on purpose, for checking exactly that case).
    OneLockForAllKeys,
    /// [`advance_clock`] takes no lock and wakes nobody; timed threads poll the clock (which
    /// the checker does not see) and their word, yielding between looks: the checker then
    /// does not explore where a clock move falls among the other threads' steps.
    ClockUnseen,
    /// An unparker calls the checker's `unpark` at once, also while the woken thread still
    /// runs its `before_sleep`, which is then ordered after the waker.
    WakeJoinsAtOnce,
    /// A callback's end clears the marker of the callback running instead of restoring it,
    /// so a `before_sleep` that calls an `unpark_*` and then `park` is not flagged.
    CallbackMarkerReset,
    /// The woken thread loads its parker's word `Relaxed` (and polls it instead of sleeping):
    /// the waker's history before the unpark is not ordered before the woken thread.
    NoWakeEdge,
    /// `before_sleep` runs before the bucket lock is released.
    BeforeSleepUnderLock,
    /// Every table operation reads a lazy static of the checker's that the table's first user
    /// initialized, and so is ordered after that user's history up to its first use.
    TableInLazyStatic,
    /// `parking_lot_core` 0.9's `be_fair` is never set (the 0.10 table, which has no fair
    /// timer).
    NeverFair,
    /// A bucket's fair timer starts at the mocked clock's start, as the real one starts at the
    /// table's creation, but compared with a clock that may not have moved since: nothing is
    /// fair until a scenario moves the clock (the model's timer starts due).
    FairTimerStartsIdle,
    /// A fair unpark does not set the next due time: every unpark that wakes a thread is
    /// fair.
    FairTimerNeverRearms,
    /// The fair timer is consulted (and `be_fair` set) also by an unpark that wakes nobody.
    FairWithoutWaking,
    /// `unpark_all` consults the fair timer too (the real one does not), using up its turn.
    UnparkAllConsultsTimer,
}

#[cfg(not(feature = "unfaithful"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unfaithful {
    Lifo,
    OtherKeysCount,
    CallbackOutsideLock,
    TimedOutOriginalKey,
    SpuriousReturn,
    OneLockForAllKeys,
    ClockUnseen,
    WakeJoinsAtOnce,
    CallbackMarkerReset,
    NoWakeEdge,
    BeforeSleepUnderLock,
    TableInLazyStatic,
    NeverFair,
    FairTimerStartsIdle,
    FairTimerNeverRearms,
    FairWithoutWaking,
    UnparkAllConsultsTimer,
}

/// Whether this run's model is the unfaithful variant `v` (always `false` without the
/// `unfaithful` feature).
#[inline]
fn unfaithful(v: Unfaithful) -> bool {
    #[cfg(feature = "unfaithful")]
    return settings().unfaithful == Some(v);
    #[cfg(not(feature = "unfaithful"))]
    {
        let _ = v;
        false
    }
}

/// Settings of the modelled park table for the checker runs on this OS thread (loom and
/// shuttle run every model thread as a coroutine on the thread that called the checker, so a
/// thread-local holds for a whole run and for nothing else). Set them with [`with_settings`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Settings {
    /// Spins [`SpinWait::spin`] allows before it says "park" ([`SPINS`] by default; 0 parks at
    /// once).
    pub spins: u32,
    /// An extra happens-before edge the real crate does not have: a woken thread takes the
    /// table lock again before `park` returns, and so is ordered after every table operation
    /// since its waker. Off by default; switch it on to measure what such an edge would hide
    /// (a model that catches a missing ordering only without it depended on the edge's
    /// absence, as the real crate does).
    pub relock_on_wake: bool,
    /// Every key in one bucket: what the real crate does when the keys hash alike. Table
    /// operations on different keys are then serialized by that bucket's lock, and ordered by
    /// it, as they are there (`have_more_threads` still counts the same key only). Off by
    /// default (every key in a bucket of its own, where nothing orders two keys); a
    /// primitive must be correct either way.
    pub one_bucket: bool,
    /// When a timed park times out ([`Timeouts::Clock`] by default).
    pub timeouts: Timeouts,
    /// What `be_fair` is in the results of [`crate::v0_9`]'s unparks ([`FairTimer::Clock`] by
    /// default; the 0.10 functions have no `be_fair`).
    pub fair_timer: FairTimer,
    /// The unfaithful variant in use, if any (feature `unfaithful`; `None` by default).
    #[cfg(feature = "unfaithful")]
    pub unfaithful: Option<Unfaithful>,
}

impl Settings {
    /// The default settings, as a `const` (for a table of settings a run goes through).
    pub const DEFAULT: Settings = Settings {
        spins: SPINS,
        relock_on_wake: false,
        one_bucket: false,
        timeouts: Timeouts::Clock,
        fair_timer: FairTimer::Clock,
        #[cfg(feature = "unfaithful")]
        unfaithful: None,
    };
}

impl Default for Settings {
    fn default() -> Self {
        Settings::DEFAULT
    }
}

std::thread_local! {
    static SETTINGS: Cell<Settings> = Cell::new(Settings::default());
}

/// Runs `f` (which runs a checker: `loom::model`, `shuttle::check_random`, ...) with the
/// modelled park table's `settings`, then restores the previous ones, also if `f` panics.
///
/// ```
/// # #[cfg(feature = "loom")] {
/// let mut settings = parkcheck::Settings::default();
/// settings.timeouts = parkcheck::Timeouts::CheckerChooses;
/// parkcheck::with_settings(settings, || loom::model(|| { /* the model */ }));
/// # }
/// ```
pub fn with_settings<R>(settings: Settings, f: impl FnOnce() -> R) -> R {
    let previous = SETTINGS.with(|s| s.replace(settings));
    let result = catch_unwind(AssertUnwindSafe(f));
    SETTINGS.with(|s| s.set(previous));
    result.unwrap_or_else(|payload| std::panic::resume_unwind(payload))
}

/// The settings in force on this thread.
pub fn settings() -> Settings {
    SETTINGS.with(Cell::get)
}

/// `parking_lot_core::SpinWait` under a checker: [`Settings::spins`] spins, each a checker
/// `yield_now` (the real one spins with back-off and then yields the CPU, 10 times).
#[derive(Debug, Default)]
pub struct SpinWait {
    counter: u32,
}

impl SpinWait {
    /// Creates a new `SpinWait`.
    pub const fn new() -> Self {
        SpinWait { counter: 0 }
    }

    /// Resets it to its initial state.
    pub const fn reset(&mut self) {
        self.counter = 0;
    }

    /// Spins once more and returns `true`, or returns `false` ("stop spinning and park") once
    /// the allowed spins were made since the last reset.
    pub fn spin(&mut self) -> bool {
        if self.counter >= settings().spins {
            return false;
        }
        self.counter += 1;
        thread::yield_now();
        true
    }

    /// Spins once without yielding the CPU (the real one backs off, capped): here one
    /// checker spin hint, a scheduling point where other threads may run.
    pub fn spin_no_yield(&mut self) {
        self.counter = (self.counter + 1).min(10);
        spin_loop();
    }
}

#[cfg(test)]
mod tests;
