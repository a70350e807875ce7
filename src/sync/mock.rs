//! The mocked park table: `parking_lot_core` 0.10's `park`, `unpark_one`, `unpark_all` and
//! `unpark_filter`, with the same signatures and contract, built on the model checker's
//! primitives (loom or shuttle), so `semaphore.rs` compiles unchanged and every step of the
//! protocol, park table included, is under the checker's control.
//!
//! What it models:
//!
//! - one table per execution (the checkers reset their `lazy_static`s between executions);
//! - FIFO queues keyed by address, all keys in **one bucket** under one lock: the worst case
//!   of hash collision, where every semaphore's operations serialize on the same lock;
//! - `validate`, `timed_out`, the unpark callbacks and the filter run under that lock;
//! - `UnparkResult::have_more_threads` computed as the real crate does: it counts threads with
//!   the same key only (in `unpark_filter`, it is set exactly when the filter skipped or
//!   stopped at a thread of that key);
//! - no spurious returns from `park`: it returns `Unparked` only after an unpark chose this
//!   thread, `TimedOut` only after its deadline passed on the mocked clock, `Invalid` only
//!   when `validate` said no;
//! - **happens-before only where the real crate has it.** In `parking_lot_core` an unparker,
//!   holding the bucket lock, writes the woken thread's token and then its futex word
//!   (`Release`); the woken thread returns from the futex (`Acquire`) without taking the
//!   bucket lock again. So a woken thread synchronizes with its waker's history up to that
//!   point, and with nothing that touches the table after it. Here the unparker, holding the
//!   table lock, writes the token into the woken thread's own slot (a std cell the checker
//!   does not track) and calls the checker's `Thread::unpark` at once, with no checker
//!   operation in between: loom's `unpark` joins the waker's history into the woken thread
//!   at that moment, the futex store's edge. The woken thread reads its slot without the
//!   lock; it takes the table lock again only when its deadline has passed, as the real crate
//!   does on a timeout. (An earlier version re-locked the table to collect the token, which
//!   ordered the woken thread after every table operation since its waker: other releases,
//!   other semaphores. [`MockSettings::relock_on_wake`] brings that edge back for
//!   measurement; what it hid is under "The earlier extra edge" below.)
//! - timeouts without wall time: a deadline is an `Instant` compared with a mocked clock that
//!   starts at [`now`] and moves only when a scenario calls [`advance_clock`] (from its own
//!   thread), so the checker explores every point at which a timeout can fire relative to the
//!   other threads. Reading the clock synchronizes with nothing (as `Instant::now` does not);
//! - `SpinWait` spins a bounded number of times ([`SPINS`], or [`MockSettings::spins`]), each
//!   spin a checker `yield_now`
//!   (loom accepts a loop that yields), so the checkers explore the spin branch of a
//!   protocol, not only the park branch;
//! - the contract is enforced: a callback that calls into the table, a `before_sleep` that
//!   parks, or a callback that panics fails the run with a message saying which rule was
//!   broken (the real crate would deadlock, corrupt its queue, or abort);
//! - per-key counters ([`stats`]): park calls queued, unpark calls, threads woken, and the
//!   most woken by one call, so a scenario can assert what a call cost in the table.
//!
//! What it does not model:
//!
//! - several buckets: operations on different keys never run in parallel here;
//! - `unpark_requeue`, `SpinWait`'s exponential back-off (its spins are yields here), and
//!   the `deadlock_detection` feature;
//! - the eventual-fairness timer (`be_fair`), which `parking_lot_core` 0.10 no longer has;
//! - real time: a timed park never expires unless a scenario advances the clock.
//!
//! The earlier extra edge:
//!
//! An earlier version collected a woken thread's token under the table lock, which ordered
//! the woken thread after every table operation between its waker's and that re-lock.
//! `models/loom.rs`'s `mock_edge` measures what that hid: in scenario (n), where a woken
//! thread takes the permit of a second releaser that woke someone else, `RelaxedOrdering` is
//! caught at preemption bound 0 without the edge and only at bound 1 with it; in every other
//! model, and for `RelaxedWhenWaited` everywhere, the bound is the same. The edge could not
//! hide a flaw completely in this protocol: a woken thread is never handed a permit, it
//! takes one with its own compare-exchange after it returns, so for every execution the
//! re-lock ordered, loom also explores the one in which the re-lock runs before the other
//! releaser's table operation and the take after it, one preemption away. A handoff (the
//! fairness modes) has no such take: the woken thread owns its permits when `park` returns,
//! so for it the waker's edge is the only one, and the mock gives no other. The model
//! `handoff_from_two_releasers` catches a handoff whose take of the free permits is
//! weakened to `Relaxed`, with the earlier edge switched on too: the first releaser's permit
//! reaches the word by its fast path, which touches no table.

use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::checker::{Mutex, lazy_static, thread, thread_local};
use super::model::ParkStats;

#[cfg(feature = "broken_sema")]
pub(crate) use super::checker::flaw_window;
pub(crate) use super::checker::{AtomicU64, AtomicUsize, Ordering, const_fn, fence};
pub(crate) use parking_lot_core::{
    DEFAULT_UNPARK_TOKEN, FilterOp, ParkResult, ParkToken, UnparkResult, UnparkToken,
};

/// Where an unparker leaves a parked thread's token. A std mutex, which the checkers do not
/// see: the happens-before edge comes from the checker's `unpark`, called right after the
/// token is written (see the module docs), not from this cell.
type Slot = Arc<std::sync::Mutex<Option<UnparkToken>>>;

/// Takes the token out of `slot`, if an unparker left one.
fn take_token(slot: &Slot) -> Option<UnparkToken> {
    slot.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// A parked thread.
#[derive(Debug)]
struct Waiter {
    key: usize,
    token: ParkToken,
    deadline: Option<Instant>,
    thread: thread::Thread,
    /// Where its unpark token goes.
    slot: Slot,
}

/// The whole park table: one bucket.
#[derive(Debug)]
struct Table {
    /// Parked threads, oldest first, all keys together.
    queue: VecDeque<Waiter>,
    /// What happened on each key so far.
    stats: HashMap<usize, ParkStats>,
}

impl Table {
    fn has_key(&self, key: usize) -> bool {
        self.queue.iter().any(|w| w.key == key)
    }

    fn stats(&mut self, key: usize) -> &mut ParkStats {
        self.stats.entry(key).or_default()
    }
}

/// The mocked clock: a base instant and the time a scenario has advanced it by.
#[derive(Debug)]
struct Clock {
    base: Instant,
    elapsed: Duration,
}

lazy_static! {
    static ref TABLE: Mutex<Table> = Mutex::new(Table {
        queue: VecDeque::new(),
        stats: HashMap::new(),
    });
    /// Set when a callback broke the contract (the table lock is then poisoned for good). A
    /// std atomic: bookkeeping of the mock, not a synchronizing operation of the model.
    static ref BROKEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    /// A std mutex the checker does not see: reading the clock is not a synchronizing
    /// operation. Only `advance_clock` writes it, while it holds the table lock.
    static ref CLOCK: std::sync::Mutex<Clock> = std::sync::Mutex::new(Clock {
        base: Instant::now(),
        elapsed: Duration::ZERO,
    });
}

thread_local! {
    /// The callback this thread is running for the table, if any.
    static RUNNING: Cell<Option<&'static str>> = Cell::new(None);
}

/// Runs `f` on the table under its lock, first checking that this call does not break the
/// contract: no table function may be called from a callback, and `park` not even from
/// `before_sleep`.
fn with_table<R>(op: &'static str, f: impl FnOnce(&mut Table) -> R) -> R {
    if let Some(callback) = RUNNING.with(Cell::get) {
        let allowed = callback == "before_sleep" && op != "park";
        assert!(
            allowed,
            "park-table contract violated: `{op}` was called from the `{callback}` callback; \
             parking_lot_core forbids calling into the park table there"
        );
    }
    let mut table = match TABLE.lock() {
        Ok(table) => table,
        // A guard dropped while its thread unwinds poisons the lock (std semantics, which
        // shuttle's mutex follows): a permit returned by a panicking holder takes the table
        // lock during unwinding, and that is allowed. Only a callback that broke the contract
        // makes the table unusable.
        Err(poisoned) if !BROKEN.load(std::sync::atomic::Ordering::Relaxed) => {
            poisoned.into_inner()
        }
        // This thread is already unwinding after a task was torn down while it held the
        // table: the run has failed already, and its first panic is the one to report, not
        // a second one about the poison.
        Err(poisoned) if std::thread::panicking() => poisoned.into_inner(),
        Err(_) => panic!("the park table is poisoned: an earlier callback broke the contract"),
    };
    f(&mut table)
}

/// Runs the callback `name`, failing the run if it panics: `parking_lot_core` aborts the
/// process when a callback unwinds (it holds the bucket lock).
fn callback<R>(name: &'static str, f: impl FnOnce() -> R) -> R {
    RUNNING.with(|r| r.set(Some(name)));
    let result = catch_unwind(AssertUnwindSafe(f));
    RUNNING.with(|r| r.set(None));
    match result {
        Ok(value) => value,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("a non-string panic");
            BROKEN.store(true, std::sync::atomic::Ordering::Relaxed);
            panic!(
                "park-table contract violated: the `{name}` callback panicked ({msg}); \
                 parking_lot_core aborts the process when a callback unwinds"
            )
        }
    }
}

/// `parking_lot_core::park`, on the mocked table.
///
/// # Safety
///
/// As `parking_lot_core::park`: `key` must be an address the caller controls; `validate` and
/// `timed_out` run under the table lock and must not call into the table or unwind;
/// `before_sleep` must not park or unwind. This mock checks the callback rules and fails the
/// run when one is broken.
pub(crate) unsafe fn park(
    key: usize,
    validate: impl FnOnce() -> bool,
    before_sleep: impl FnOnce(),
    timed_out: impl FnOnce(usize, bool),
    park_token: ParkToken,
    timeout: Option<Instant>,
) -> ParkResult {
    let slot: Slot = Arc::default();
    let queued = with_table("park", |table| {
        if !callback("validate", validate) {
            return false;
        }
        table.queue.push_back(Waiter {
            key,
            token: park_token,
            deadline: timeout,
            thread: thread::current(),
            slot: Arc::clone(&slot),
        });
        table.stats(key).parks += 1;
        true
    });
    if !queued {
        return ParkResult::Invalid;
    }
    callback("before_sleep", before_sleep);

    let mut timed_out = Some(timed_out);
    loop {
        // No lock: the unparker wrote the token and, in the same step, unparked this thread,
        // which is the one happens-before edge the real crate's futex gives.
        if let Some(token) = take_token(&slot) {
            if settings().relock_on_wake {
                with_table("park", |_| ());
            }
            return ParkResult::Unparked(token);
        }
        if let Some(deadline) = timeout
            && deadline <= now()
        {
            // The deadline passed: as in the real crate, the thread locks the bucket to
            // leave the queue, unless an unpark removed it first (then its token is in the
            // slot, written under the lock this thread now holds).
            let left = with_table("park", |table| {
                let at = table
                    .queue
                    .iter()
                    .position(|w| Arc::ptr_eq(&w.slot, &slot))?;
                table.queue.remove(at);
                let was_last = !table.has_key(key);
                let timed_out = timed_out.take().expect("a park times out once");
                callback("timed_out", || timed_out(key, was_last));
                Some(ParkResult::TimedOut)
            });
            match left {
                Some(result) => return result,
                None => continue,
            }
        }
        // The checker's park may return spuriously, or for an earlier `unpark` (the clock's);
        // the loop looks again, so this one never does.
        thread::park();
    }
}

/// Removes the waiters chosen by `choose` (called in FIFO order for each waiter with `key`),
/// runs `callback` with the result, and hands its token to the chosen waiters, waking each
/// while the lock is still held (the real crate's futex store also happens under the lock;
/// only its wake system call comes after).
fn unpark_where(
    op: &'static str,
    key: usize,
    mut choose: impl FnMut(ParkToken) -> FilterOp,
    callback_fn: impl FnOnce(UnparkResult) -> UnparkToken,
) -> UnparkResult {
    with_table(op, |table| {
        let mut result = UnparkResult::default();
        let mut chosen = Vec::new();
        let mut kept = VecDeque::with_capacity(table.queue.len());
        let mut stopped = false;
        while let Some(waiter) = table.queue.pop_front() {
            if stopped || waiter.key != key {
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
        table.queue = kept;
        result.unparked_threads = chosen.len();
        let stats = table.stats(key);
        stats.unpark_calls += 1;
        stats.woken += chosen.len();
        stats.most_woken_by_one_call = stats.most_woken_by_one_call.max(chosen.len());
        let token = callback("callback", || callback_fn(result));
        for waiter in chosen {
            *waiter.slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(token);
            // No checker operation between the write above and this unpark: a woken thread
            // that finds its token has already been joined with this thread's history.
            waiter.thread.unpark();
        }
        result
    })
}

/// `parking_lot_core::unpark_one`, on the mocked table.
///
/// # Safety
///
/// As `parking_lot_core::unpark_one`: `callback` runs under the table lock and must not call
/// into the table or unwind (checked).
#[allow(dead_code)]
pub(crate) unsafe fn unpark_one(
    key: usize,
    callback: impl FnOnce(UnparkResult) -> UnparkToken,
) -> UnparkResult {
    let mut first = true;
    // Unpark the first waiter with this key; stopping at the next one sets
    // `have_more_threads` exactly when another waiter with this key remains.
    unpark_where(
        "unpark_one",
        key,
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

/// `parking_lot_core::unpark_all`, on the mocked table. Returns the number of threads
/// unparked.
///
/// # Safety
///
/// As `parking_lot_core::unpark_all`.
#[allow(dead_code)]
pub(crate) unsafe fn unpark_all(key: usize, unpark_token: UnparkToken) -> usize {
    unpark_where("unpark_all", key, |_| FilterOp::Unpark, |_| unpark_token).unparked_threads
}

/// `parking_lot_core::unpark_filter`, on the mocked table.
///
/// # Safety
///
/// As `parking_lot_core::unpark_filter`: `filter` and `callback` run under the table lock and
/// must not call into the table or unwind (checked).
pub(crate) unsafe fn unpark_filter(
    key: usize,
    filter: impl FnMut(ParkToken) -> FilterOp,
    callback: impl FnOnce(UnparkResult) -> UnparkToken,
) -> UnparkResult {
    unpark_where("unpark_filter", key, filter, callback)
}

/// The mocked clock's current time: the deadline base for timed parks. It synchronizes with
/// nothing, as `Instant::now` does not.
pub fn now() -> Instant {
    let clock = CLOCK.lock().unwrap_or_else(|e| e.into_inner());
    clock.base + clock.elapsed
}

/// Marks a run of the semaphore's guarded try loop: the real build's unit tests count them;
/// the checkers do not.
#[inline(always)]
pub(crate) fn note_guarded(key: usize) {
    let _ = key;
}

/// Microseconds the mocked clock has advanced in this execution: the eventual-fairness
/// timer's clock under the checkers (it synchronizes with nothing).
pub(crate) fn clock_micros() -> u64 {
    let clock = CLOCK.lock().unwrap_or_else(|e| e.into_inner());
    // Truncating, as the real clock: the timer keeps 30 bits.
    clock.elapsed.as_micros() as u64
}

/// Moves the mocked clock forward by `by` and wakes every parked thread whose deadline has
/// passed, so it can time out (unless an unpark reaches it first).
pub fn advance_clock(by: Duration) {
    with_table("advance_clock", |table| {
        let now = {
            let mut clock = CLOCK.lock().unwrap_or_else(|e| e.into_inner());
            clock.elapsed += by;
            clock.base + clock.elapsed
        };
        for w in table.queue.iter() {
            if w.deadline.is_some_and(|d| d <= now) {
                w.thread.unpark();
            }
        }
    });
}

/// What happened on park-table key `key` in this execution so far.
pub(crate) fn stats(key: usize) -> ParkStats {
    with_table("stats", |table| *table.stats(key))
}

/// How many times an acquirer spins before it parks under a checker, unless
/// [`MockSettings::spins`] says otherwise. One yield is enough to explore the branch (a
/// permit returned during the spin is taken without parking); each spin adds a load and a
/// yield per acquirer and so multiplies the executions loom explores (the cost per model is
/// measured in `models/loom.rs`).
pub const SPINS: u32 = 1;

/// Settings of the mocked park table for the models run on this OS thread (loom and shuttle
/// run every model thread as a coroutine on the thread that called the checker, so a std
/// thread-local holds for a whole model and for nothing else).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MockSettings {
    /// Spins before parking ([`SPINS`] by default; 0 parks at once, as the mock did before).
    pub spins: u32,
    /// The earlier mock's extra happens-before edge: a woken thread takes the table lock
    /// again before `park` returns, and so is ordered after every table operation that ran
    /// since its waker. Off by default (the real crate has no such edge); kept so the evidence
    /// that it hid a missing ordering (`models/loom.rs`, `mock_edge`) can be re-run.
    pub relock_on_wake: bool,
}

impl Default for MockSettings {
    fn default() -> Self {
        MockSettings {
            spins: SPINS,
            relock_on_wake: false,
        }
    }
}

std::thread_local! {
    static SETTINGS: Cell<MockSettings> = Cell::new(MockSettings::default());
}

/// Runs `f` (which runs a checker) with the mocked park table's `settings`, then restores
/// the previous ones.
pub fn with_settings<R>(settings: MockSettings, f: impl FnOnce() -> R) -> R {
    let previous = SETTINGS.with(|s| s.replace(settings));
    let result = catch_unwind(AssertUnwindSafe(f));
    SETTINGS.with(|s| s.set(previous));
    result.unwrap_or_else(|payload| std::panic::resume_unwind(payload))
}

fn settings() -> MockSettings {
    SETTINGS.with(Cell::get)
}

/// `parking_lot_core::SpinWait` under a checker: [`MockSettings::spins`] spins, each a
/// checker `yield_now` (the real one spins with back-off and then yields the CPU, 10 times).
#[derive(Debug, Default)]
pub(crate) struct SpinWait {
    counter: u32,
}

impl SpinWait {
    pub(crate) fn new() -> Self {
        SpinWait { counter: 0 }
    }

    /// Spins once more and returns `true`, or returns `false` ("stop spinning and park") once
    /// the allowed spins were made since the last reset.
    pub(crate) fn spin(&mut self) -> bool {
        if self.counter >= settings().spins {
            return false;
        }
        self.counter += 1;
        thread::yield_now();
        true
    }

    pub(crate) fn reset(&mut self) {
        self.counter = 0;
    }
}

/// The mock's own tests, run under whichever checker is enabled: `cargo test --lib --features
/// loom` explores every interleaving; `--features shuttle` samples 200 random schedules.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::model::Arc;
    use parking_lot_core::DEFAULT_PARK_TOKEN;

    /// Runs `f` under the checker. Loom's preemption bound is 2: the largest of these tests
    /// (three parked threads plus the main thread polling the table) explores every schedule
    /// with up to 2 preemptions in about a second in the test profile; unbounded it did not
    /// finish in 60 s.
    fn check(f: impl Fn() + Send + Sync + 'static) {
        #[cfg(feature = "loom")]
        {
            let mut builder = loom::model::Builder::new();
            builder.preemption_bound.get_or_insert(2);
            builder.check(f);
        }
        #[cfg(all(feature = "shuttle", not(feature = "loom")))]
        shuttle::check_random(f, 200);
    }

    /// How many threads are parked on `key` now.
    fn queued(key: usize) -> usize {
        with_table("queued", |t| {
            t.queue.iter().filter(|w| w.key == key).count()
        })
    }

    /// Waits (yielding to the checker) until `n` threads are parked on `key`.
    fn wait_queued(key: usize, n: usize) {
        while queued(key) < n {
            thread::yield_now();
        }
    }

    #[test]
    fn validate_false_gives_invalid_without_queueing() {
        check(|| {
            // SAFETY: key 1 is used by this test only; the callbacks do not call into the
            // table or unwind.
            let r = unsafe { park(1, || false, || {}, |_, _| {}, DEFAULT_PARK_TOKEN, None) };
            assert_eq!(r, ParkResult::Invalid);
            assert_eq!(queued(1), 0);
        });
    }

    #[test]
    fn unpark_without_waiter_still_runs_the_callback() {
        check(|| {
            let ran = std::cell::Cell::new(false);
            // SAFETY: as above.
            let r = unsafe {
                unpark_one(7, |r| {
                    assert!(!r.have_more_threads && r.unparked_threads == 0);
                    ran.set(true);
                    DEFAULT_UNPARK_TOKEN
                })
            };
            assert!(ran.get(), "the callback must run even with no waiter");
            assert_eq!((r.unparked_threads, r.have_more_threads), (0, false));
            // SAFETY: as above.
            let r = unsafe { unpark_filter(7, |_| FilterOp::Unpark, |_| DEFAULT_UNPARK_TOKEN) };
            assert_eq!((r.unparked_threads, r.have_more_threads), (0, false));
            // SAFETY: as above.
            assert_eq!(unsafe { unpark_all(7, DEFAULT_UNPARK_TOKEN) }, 0);
        });
    }

    /// Parks one thread per key in `keys`; each returns its place in the queue (taken under
    /// the table lock, in `validate`) and its park result.
    fn park_all(keys: &[usize]) -> Vec<thread::JoinHandle<(usize, ParkResult)>> {
        let order = Arc::new(AtomicUsize::new(0));
        keys.iter()
            .map(|&key| {
                let order = Arc::clone(&order);
                thread::spawn(move || {
                    let place = std::cell::Cell::new(0);
                    let validate = || {
                        place.set(order.fetch_add(1, Ordering::Relaxed));
                        true
                    };
                    // SAFETY: the tests' keys are their own; the callbacks only touch an
                    // atomic and a local.
                    let r =
                        unsafe { park(key, validate, || {}, |_, _| {}, DEFAULT_PARK_TOKEN, None) };
                    (place.get(), r)
                })
            })
            .collect()
    }

    #[test]
    fn fifo_per_key() {
        check(|| {
            let waiters = park_all(&[1, 1]);
            wait_queued(1, 2);
            // SAFETY: the callbacks return constants.
            let first = unsafe { unpark_one(1, |_| UnparkToken(100)) };
            assert_eq!((first.unparked_threads, first.have_more_threads), (1, true));
            // SAFETY: as above.
            let second = unsafe { unpark_one(1, |_| UnparkToken(200)) };
            assert_eq!(
                (second.unparked_threads, second.have_more_threads),
                (1, false)
            );
            let mut results: Vec<_> = waiters.into_iter().map(|h| h.join().unwrap()).collect();
            results.sort_by_key(|&(place, _)| place);
            let in_park_order: Vec<_> = results.into_iter().map(|(_, r)| r).collect();
            assert_eq!(
                in_park_order,
                [
                    ParkResult::Unparked(UnparkToken(100)),
                    ParkResult::Unparked(UnparkToken(200))
                ],
                "waiters on one key are unparked in the order they parked"
            );
        });
    }

    #[test]
    fn have_more_threads_counts_the_same_key_only() {
        check(|| {
            // Keys 1 and 2 share the one bucket; a waiter on key 2 must not count for key 1.
            let waiters = park_all(&[2, 1]);
            wait_queued(1, 1);
            wait_queued(2, 1);
            // SAFETY: the callback returns a constant.
            let r = unsafe { unpark_one(1, |_| DEFAULT_UNPARK_TOKEN) };
            assert_eq!((r.unparked_threads, r.have_more_threads), (1, false));
            // SAFETY: as above.
            let r = unsafe { unpark_filter(2, |_| FilterOp::Unpark, |_| DEFAULT_UNPARK_TOKEN) };
            assert_eq!((r.unparked_threads, r.have_more_threads), (1, false));
            for h in waiters {
                assert!(h.join().unwrap().1.is_unparked());
            }
        });
    }

    #[test]
    fn filter_sees_waiters_in_order_and_stop_keeps_the_rest() {
        check(|| {
            let waiters: Vec<_> = (0..2)
                .map(|i| {
                    thread::spawn(move || {
                        // SAFETY: key 3 is this test's; the callbacks return constants.
                        unsafe { park(3, || true, || {}, |_, _| {}, ParkToken(i), None) }
                    })
                })
                .collect();
            wait_queued(3, 2);
            let mut seen = Vec::new();
            // SAFETY: the filter only records tokens; the callback returns a constant.
            let r = unsafe {
                unpark_filter(
                    3,
                    |t| {
                        seen.push(t.0);
                        if seen.len() == 1 {
                            FilterOp::Unpark
                        } else {
                            FilterOp::Stop
                        }
                    },
                    |_| DEFAULT_UNPARK_TOKEN,
                )
            };
            assert_eq!((r.unparked_threads, r.have_more_threads), (1, true));
            assert_eq!(seen.len(), 2);
            assert_eq!(queued(3), 1);
            // SAFETY: as above.
            assert_eq!(unsafe { unpark_all(3, DEFAULT_UNPARK_TOKEN) }, 1);
            for h in waiters {
                assert!(h.join().unwrap().is_unparked());
            }
        });
    }

    #[test]
    fn timeout_removes_the_thread_and_reports_whether_it_was_last() {
        check(|| {
            // A timed waiter and an untimed one on key 4; the clock passes the deadline.
            let deadline = now() + Duration::from_secs(1);
            let timed = thread::spawn(move || {
                let last = Arc::new(std::sync::Mutex::new(None));
                let seen = Arc::clone(&last);
                // SAFETY: key 4 is this test's; `timed_out` only records its arguments.
                let r = unsafe {
                    park(
                        4,
                        || true,
                        || {},
                        move |key, was_last| *seen.lock().unwrap() = Some((key, was_last)),
                        DEFAULT_PARK_TOKEN,
                        Some(deadline),
                    )
                };
                let recorded = *last.lock().unwrap();
                (r, recorded)
            });
            let untimed = thread::spawn(|| {
                // SAFETY: as above.
                unsafe { park(4, || true, || {}, |_, _| {}, DEFAULT_PARK_TOKEN, None) }
            });
            wait_queued(4, 2);
            advance_clock(Duration::from_secs(2));
            let (r, recorded) = timed.join().unwrap();
            assert_eq!(r, ParkResult::TimedOut);
            assert_eq!(
                recorded,
                Some((4, false)),
                "another thread with key 4 remains"
            );
            assert_eq!(queued(4), 1);
            // SAFETY: the callback returns a constant.
            unsafe { unpark_one(4, |_| DEFAULT_UNPARK_TOKEN) };
            assert!(untimed.join().unwrap().is_unparked());
        });
    }

    #[test]
    fn last_waiter_to_time_out_reports_was_last() {
        check(|| {
            let deadline = now() + Duration::from_millis(10);
            let was_last = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let seen = Arc::clone(&was_last);
            let timed = thread::spawn(move || {
                // SAFETY: key 5 is this test's; `timed_out` stores one flag.
                unsafe {
                    park(
                        5,
                        || true,
                        || {},
                        move |_, last| seen.store(last, std::sync::atomic::Ordering::Relaxed),
                        DEFAULT_PARK_TOKEN,
                        Some(deadline),
                    )
                }
            });
            // The clock may move before or after the thread parks: either way it times out,
            // because nothing unparks it.
            advance_clock(Duration::from_millis(10));
            assert_eq!(timed.join().unwrap(), ParkResult::TimedOut);
            assert!(was_last.load(std::sync::atomic::Ordering::Relaxed));
            assert_eq!(queued(5), 0);
        });
    }

    #[test]
    fn a_timeout_racing_an_unpark_ends_one_way_only() {
        check(|| {
            let deadline = now() + Duration::from_secs(1);
            let timed = thread::spawn(move || {
                // SAFETY: key 6 is this test's; the callbacks do nothing.
                unsafe {
                    park(
                        6,
                        || true,
                        || {},
                        |_, _| {},
                        DEFAULT_PARK_TOKEN,
                        Some(deadline),
                    )
                }
            });
            wait_queued(6, 1);
            let clock = thread::spawn(|| advance_clock(Duration::from_secs(1)));
            // SAFETY: the callback returns a constant.
            let unparked = unsafe { unpark_one(6, |_| UnparkToken(9)) };
            clock.join().unwrap();
            let r = timed.join().unwrap();
            match r {
                ParkResult::Unparked(UnparkToken(9)) => assert_eq!(unparked.unparked_threads, 1),
                ParkResult::TimedOut => assert_eq!(unparked.unparked_threads, 0),
                other => panic!("unexpected park result {other:?}"),
            }
        });
    }

    #[test]
    fn a_woken_thread_sees_what_its_waker_did_before_unparking() {
        check(|| {
            let data = Arc::new(crate::sync::model::SharedCell::new(0u32));
            let seen = Arc::clone(&data);
            let waiter = thread::spawn(move || {
                // SAFETY: key 11 is this test's; the callbacks return constants.
                let r = unsafe { park(11, || true, || {}, |_, _| {}, DEFAULT_PARK_TOKEN, None) };
                assert!(r.is_unparked());
                // SAFETY: the waker wrote before unparking this thread: the one edge the real
                // crate's futex gives, which loom checks here.
                seen.with(|v| unsafe { *v })
            });
            wait_queued(11, 1);
            // SAFETY: the waiter reads only once it is unparked below.
            data.with_mut(|v| unsafe { *v = 3 });
            // SAFETY: the callback returns a constant.
            unsafe { unpark_one(11, |_| DEFAULT_UNPARK_TOKEN) };
            assert_eq!(waiter.join().unwrap(), 3);
        });
    }

    #[test]
    fn stats_count_per_key() {
        check(|| {
            let waiters = park_all(&[12, 12, 13]);
            wait_queued(12, 2);
            wait_queued(13, 1);
            // SAFETY: the callbacks return constants.
            unsafe { unpark_filter(12, |_| FilterOp::Unpark, |_| DEFAULT_UNPARK_TOKEN) };
            // SAFETY: as above.
            unsafe { unpark_one(13, |_| DEFAULT_UNPARK_TOKEN) };
            // SAFETY: as above.
            unsafe { unpark_one(13, |_| DEFAULT_UNPARK_TOKEN) };
            for h in waiters {
                assert!(h.join().unwrap().1.is_unparked());
            }
            let twelve = ParkStats {
                parks: 2,
                unpark_calls: 1,
                woken: 2,
                most_woken_by_one_call: 2,
            };
            let thirteen = ParkStats {
                parks: 1,
                unpark_calls: 2,
                woken: 1,
                most_woken_by_one_call: 1,
            };
            assert_eq!((stats(12), stats(13)), (twelve, thirteen));
            assert_eq!(stats(14), ParkStats::default());
        });
    }

    #[test]
    fn spin_wait_spins_a_bounded_number_of_times() {
        check(|| {
            for spins in [0, 1, 3] {
                let settings = MockSettings {
                    spins,
                    relock_on_wake: false,
                };
                SETTINGS.with(|s| s.set(settings));
                let mut spin = SpinWait::new();
                for _ in 0..spins {
                    assert!(spin.spin());
                }
                assert!(!spin.spin(), "more than {spins} spins");
                spin.reset();
                assert_eq!(spin.spin(), spins > 0, "reset starts the count again");
            }
            SETTINGS.with(|s| s.set(MockSettings::default()));
        });
    }

    #[test]
    #[should_panic(
        expected = "park-table contract violated: `unpark_one` was called from the `validate` callback"
    )]
    fn reentering_from_a_callback_fails_the_run() {
        check(|| {
            // SAFETY: deliberately broken: `validate` calls into the table, which the mock
            // must catch before anything is locked twice.
            unsafe {
                park(
                    8,
                    || {
                        unpark_one(9, |_| DEFAULT_UNPARK_TOKEN);
                        false
                    },
                    || {},
                    |_, _| {},
                    DEFAULT_PARK_TOKEN,
                    None,
                )
            };
        });
    }

    #[test]
    #[should_panic(
        expected = "park-table contract violated: the `callback` callback panicked (boom)"
    )]
    fn a_panicking_callback_fails_the_run() {
        check(|| {
            // SAFETY: deliberately broken: the callback unwinds.
            unsafe { unpark_one(10, |_| panic!("boom")) };
        });
    }
}
