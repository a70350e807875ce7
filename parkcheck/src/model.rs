//! The model: `parking_lot_core` 0.10's functions on one park table per execution, built on
//! the checker's lock and threads. What it models and what it does not is in the crate docs.

use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot_core::{FilterOp, ParkResult, ParkToken, RequeueOp, UnparkResult, UnparkToken};

use crate::checker::{Mutex, lazy_static, spin_loop, thread, thread_local};

/// Where an unparker leaves a parked thread's token. A std mutex, which the checkers do not
/// see: the happens-before edge comes from the checker's `unpark`, called right after the
/// token is written (see the crate docs), not from this cell.
type Slot = Arc<std::sync::Mutex<Option<UnparkToken>>>;

/// Takes the token out of `slot`, if an unparker left one.
fn take_token(slot: &Slot) -> Option<UnparkToken> {
    slot.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// A parked thread.
#[derive(Debug)]
struct Waiter {
    /// The key it is parked on now (`unpark_requeue` changes it).
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
    stats: HashMap<usize, KeyStats>,
}

impl Table {
    fn has_key(&self, key: usize) -> bool {
        self.queue.iter().any(|w| w.key == key)
    }

    fn stats(&mut self, key: usize) -> &mut KeyStats {
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
    /// std atomic: bookkeeping of the model, not a synchronizing operation of the execution.
    static ref BROKEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    /// The deadlines of the threads queued on each key, as of the last table operation: a
    /// copy in a std mutex the checker does not see, for [`parked_untracked`].
    static ref PARKED: std::sync::Mutex<HashMap<usize, Vec<Option<Instant>>>> =
        std::sync::Mutex::new(HashMap::new());
    /// Set while a table operation runs (its callbacks can be switched away from, and the
    /// copy above is then out of date): a std atomic, bookkeeping as `BROKEN`.
    static ref BUSY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    /// A std mutex the checker does not see, so reading the clock adds no edge of its own;
    /// only `advance_clock` writes it, while it holds the table lock. (The lazy static
    /// around it is the checker's: under loom every access to it is ordered after the
    /// access that initialized it, loom's model of `std::sync::Once`, which is why the
    /// table's own bookkeeping does not read the clock.)
    static ref CLOCK: std::sync::Mutex<Clock> = std::sync::Mutex::new(Clock {
        base: Instant::now(),
        elapsed: Duration::ZERO,
    });
}

thread_local! {
    /// The callback this thread is running for the table, if any.
    static RUNNING: Cell<Option<&'static str>> = Cell::new(None);
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

/// Runs `f` on the table under its lock, first checking that this call does not break the
/// contract ([`check_not_in_callback`]).
fn with_table<R>(op: &'static str, f: impl FnOnce(&mut Table) -> R) -> R {
    check_not_in_callback(op);
    let mut table = match TABLE.lock() {
        Ok(table) => table,
        // The lock is also poisoned when a guard is dropped while "this thread" is panicking:
        // under the checkers every model thread runs as a coroutine on one OS thread, whose
        // panic count they share, so a thread that took the lock while another was
        // unwinding, or that was switched away from under the lock while one was, can poison
        // it without anything having gone wrong (shuttle's `unwind_and_move` model of the
        // semaphore, a holder unwinding, does this). Only a callback that broke the contract
        // makes the table unusable.
        Err(poisoned) if !BROKEN.load(std::sync::atomic::Ordering::Relaxed) => {
            poisoned.into_inner()
        }
        // This thread is already unwinding after a task was torn down while it held the
        // table: the run has failed already, and its first panic is the one to report, not
        // a second one about the poison, which would abort the process.
        Err(poisoned) if std::thread::panicking() => poisoned.into_inner(),
        Err(_) => panic!("the park table is poisoned: an earlier callback broke the contract"),
    };
    BUSY.store(true, std::sync::atomic::Ordering::Relaxed);
    let result = f(&mut table);
    // Only bookkeeping under the table lock: the clock is not read here (its lazy static's
    // first reader may be a thread outside the lock, and reading it would order this thread
    // after that one, an edge the real crate does not have).
    let mut parked = PARKED.lock().unwrap_or_else(|e| e.into_inner());
    parked.clear();
    for w in &table.queue {
        parked.entry(w.key).or_default().push(w.deadline);
    }
    BUSY.store(false, std::sync::atomic::Ordering::Relaxed);
    result
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

/// Hands `token` to each of `chosen` and wakes it. No checker operation comes between a
/// write and its unpark: a woken thread that finds its token has already been joined with
/// the waker's history (the real crate's futex store, then its wake).
fn deliver(chosen: Vec<Waiter>, token: UnparkToken) {
    for waiter in chosen {
        *waiter.slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(token);
        waiter.thread.unpark();
    }
}

/// `parking_lot_core::park`, on the modelled table.
///
/// Parks the current thread on `key` if `validate` (run under the table lock) returns
/// `true`; runs `before_sleep` after the lock is released; returns when an unpark chooses
/// it ([`ParkResult::Unparked`] with the unparker's token), when its timeout passes on the
/// mocked clock ([`ParkResult::TimedOut`], after `timed_out(key, was_last)` ran under the
/// lock, with the key it was parked on at that moment), or at once with
/// [`ParkResult::Invalid`] if `validate` returned `false` (nothing queued).
///
/// # Safety
///
/// As `parking_lot_core::park`: `key` must be an address the caller controls; `validate` and
/// `timed_out` run under the table lock and must not call into the table or unwind;
/// `before_sleep` must not park or unwind. The model checks the callback rules and fails the
/// run when one is broken.
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

/// [`park`]'s body: a safe function, so that `cargo mutants` mutates it (it skips the bodies
/// of `unsafe fn`s). Nothing in it needs the caller's promises: the model only compares keys.
fn park_safe(
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
        let waiter = Waiter {
            key,
            token: park_token,
            deadline: timeout,
            thread: thread::current(),
            slot: Arc::clone(&slot),
        };
        if unfaithful(Unfaithful::Lifo) {
            table.queue.push_front(waiter);
        } else {
            table.queue.push_back(waiter);
        }
        table.stats(key).parks += 1;
        true
    });
    if !queued {
        return ParkResult::Invalid;
    }
    callback("before_sleep", before_sleep);
    if unfaithful(Unfaithful::SpuriousReturn) {
        // Leaves the queue and returns as if unparked, with nobody having unparked it.
        with_table("park", |table| {
            table.queue.retain(|w| !Arc::ptr_eq(&w.slot, &slot));
        });
        return ParkResult::Unparked(parking_lot_core::DEFAULT_UNPARK_TOKEN);
    }

    let chosen_timeout = settings().timeouts == Timeouts::CheckerChooses;
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
        let expired = match timeout {
            None => false,
            // The checker chooses: this thread may time out now, and the checker decides
            // whether that happens before or after any unpark (the lock below is a
            // scheduling point like any other).
            Some(_) if chosen_timeout => true,
            Some(deadline) => deadline <= now(),
        };
        if expired {
            // As in the real crate, the thread locks the bucket to leave the queue, unless an
            // unpark removed it first (then its token is in the slot, written under the lock
            // this thread now holds).
            let left = with_table("park", |table| {
                let at = table
                    .queue
                    .iter()
                    .position(|w| Arc::ptr_eq(&w.slot, &slot))?;
                let waiter = table.queue.remove(at)?;
                // The key it is parked on now: after a requeue, not the one it parked with.
                let key_now = if unfaithful(Unfaithful::TimedOutOriginalKey) {
                    key
                } else {
                    waiter.key
                };
                let was_last = !table.has_key(waiter.key);
                table.stats(waiter.key).timeouts += 1;
                let timed_out = timed_out.take().expect("a park times out once");
                callback("timed_out", || timed_out(key_now, was_last));
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
/// runs `callback_fn` with the result, and hands its token to the chosen waiters, waking each
/// while the lock is still held (the real crate's futex store also happens under the lock;
/// only its wake system call comes after).
fn unpark_where(
    op: &'static str,
    key: usize,
    mut choose: impl FnMut(ParkToken) -> FilterOp,
    callback_fn: impl FnOnce(UnparkResult) -> UnparkToken,
) -> UnparkResult {
    let outside = unfaithful(Unfaithful::CallbackOutsideLock);
    let mut callback_fn = Some(callback_fn);
    let mut late = None;
    let result = with_table(op, |table| {
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
        if unfaithful(Unfaithful::OtherKeysCount) {
            result.have_more_threads = !table.queue.is_empty();
        }
        result.unparked_threads = chosen.len();
        let stats = table.stats(key);
        stats.unpark_calls += 1;
        stats.woken += chosen.len();
        stats.most_woken_by_one_call = stats.most_woken_by_one_call.max(chosen.len());
        if outside {
            late = Some(chosen);
            return result;
        }
        let f = callback_fn.take().expect("the callback runs once");
        let token = callback("callback", || f(result));
        deliver(chosen, token);
        result
    });
    if let Some(chosen) = late {
        let f = callback_fn.take().expect("the callback runs once");
        let token = callback("callback", || f(result));
        deliver(chosen, token);
    }
    result
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
    unpark_where("unpark_all", key, |_| FilterOp::Unpark, |_| unpark_token).unparked_threads
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
    unpark_where("unpark_filter", key, filter, callback)
}

/// `parking_lot_core::unpark_requeue`, on the modelled table: under the lock, `validate`
/// chooses a [`RequeueOp`]; the threads parked on `key_from` are then unparked or moved to
/// the end of `key_to`'s queue as the operation says (in their order), `callback` runs with
/// the operation and the result, and its token goes to the thread unparked, if any. With
/// [`RequeueOp::Abort`] nothing changes, `callback` is not called, and the result is the
/// default one.
///
/// # Safety
///
/// As `parking_lot_core::unpark_requeue`: `validate` and `callback` run under the table lock
/// and must not call into the table or unwind (checked).
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
    let outside = unfaithful(Unfaithful::CallbackOutsideLock);
    let mut callback_fn = Some(callback);
    let mut late = None;
    let result = with_table("unpark_requeue", |table| {
        let op = self::callback("validate", validate);
        let mut result = UnparkResult::default();
        if op == RequeueOp::Abort {
            return result;
        }
        let unpark_first = matches!(op, RequeueOp::UnparkOneRequeueRest | RequeueOp::UnparkOne);
        let just_one = matches!(op, RequeueOp::UnparkOne | RequeueOp::RequeueOne);
        let mut woken = Vec::new();
        let mut requeued = Vec::new();
        let mut kept = VecDeque::with_capacity(table.queue.len());
        let mut done = false;
        while let Some(mut waiter) = table.queue.pop_front() {
            if waiter.key != key_from {
                kept.push_back(waiter);
            } else if done {
                // `UnparkOne` and `RequeueOne` leave the rest parked, and say so.
                result.have_more_threads = true;
                kept.push_back(waiter);
            } else if unpark_first && woken.is_empty() {
                woken.push(waiter);
                result.unparked_threads = 1;
                done = just_one;
            } else {
                waiter.key = key_to;
                requeued.push(waiter);
                result.requeued_threads += 1;
                done = just_one;
            }
        }
        if unfaithful(Unfaithful::OtherKeysCount) {
            result.have_more_threads = !kept.is_empty();
        }
        // The requeued threads join the end of the queue, so on `key_to` they come after the
        // threads already parked there, in their order.
        kept.extend(requeued);
        table.queue = kept;
        let from = table.stats(key_from);
        from.unpark_calls += 1;
        from.woken += woken.len();
        from.most_woken_by_one_call = from.most_woken_by_one_call.max(woken.len());
        from.requeued += result.requeued_threads;
        if outside {
            late = Some((op, woken));
            return result;
        }
        let f = callback_fn.take().expect("the callback runs once");
        let token = self::callback("callback", || f(op, result));
        deliver(woken, token);
        result
    });
    if let Some((op, woken)) = late {
        let f = callback_fn.take().expect("the callback runs once");
        let token = self::callback("callback", || f(op, result));
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
/// moves only by [`advance_clock`]. It synchronizes with nothing, as `Instant::now` does not.
pub fn now() -> Instant {
    let clock = CLOCK.lock().unwrap_or_else(|e| e.into_inner());
    clock.base + clock.elapsed
}

/// How far [`advance_clock`] has moved the mocked clock in this execution (in the real
/// build there is no such clock; a primitive that keeps its own timer can read this under a
/// checker, as it would read a monotonic clock). It synchronizes with nothing.
pub fn elapsed() -> Duration {
    CLOCK.lock().unwrap_or_else(|e| e.into_inner()).elapsed
}

/// Moves the mocked clock forward by `by` and wakes every parked thread whose deadline has
/// passed, so it can time out (unless an unpark reaches it first). It takes the table lock,
/// so it may not be called from a park-table callback.
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
    /// Threads `unpark_requeue` moved from this key to another.
    pub requeued: usize,
    /// Threads whose park on this key timed out.
    pub timeouts: usize,
}

/// What happened on park-table key `key` in this execution so far. It takes the table lock,
/// so it may not be called from a park-table callback.
pub fn stats(key: usize) -> KeyStats {
    with_table("stats", |table| *table.stats(key))
}

/// How many threads are parked on `key` now: a scenario can wait (yielding to the checker)
/// until a thread it spawned is queued. It takes the table lock, so it may not be called
/// from a park-table callback.
pub fn parked(key: usize) -> usize {
    with_table("parked", |table| {
        table.queue.iter().filter(|w| w.key == key).count()
    })
}

/// How many threads are parked on `key` now and cannot run until another thread acts (timed
/// waiters whose deadline has passed on the mocked clock are not counted), read without the
/// table lock and without any operation the checker sees: no happens-before edge, no
/// scheduling point. `None` while a table operation is under way (a thread is in the middle
/// of parking or unparking, so nothing is settled). For a monitor thread that must observe
/// quiescence (every other thread finished or parked) without ordering itself after the
/// parked threads or taking the table lock.
pub fn parked_untracked(key: usize) -> Option<usize> {
    if BUSY.load(std::sync::atomic::Ordering::Relaxed) {
        return None;
    }
    // A timed waiter whose deadline has passed is runnable (it is about to leave the queue
    // itself), so it is not counted.
    let at = now();
    let parked = PARKED.lock().unwrap_or_else(|e| e.into_inner());
    Some(parked.get(&key).map_or(0, |deadlines| {
        deadlines
            .iter()
            .filter(|d| d.is_none_or(|d| d > at))
            .count()
    }))
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
}

#[cfg(not(feature = "unfaithful"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unfaithful {
    Lifo,
    OtherKeysCount,
    CallbackOutsideLock,
    TimedOutOriginalKey,
    SpuriousReturn,
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
    /// When a timed park times out ([`Timeouts::Clock`] by default).
    pub timeouts: Timeouts,
    /// The unfaithful variant in use, if any (feature `unfaithful`; `None` by default).
    #[cfg(feature = "unfaithful")]
    pub unfaithful: Option<Unfaithful>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            spins: SPINS,
            relock_on_wake: false,
            timeouts: Timeouts::Clock,
            #[cfg(feature = "unfaithful")]
            unfaithful: None,
        }
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
