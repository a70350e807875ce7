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
//! - timeouts without wall time: a deadline is an `Instant` compared with a mocked clock that
//!   starts at [`now`] and moves only when a scenario calls [`advance_clock`] (from its own
//!   thread), so the checker explores every point at which a timeout can fire relative to the
//!   other threads;
//! - the contract is enforced: a callback that calls into the table, a `before_sleep` that
//!   parks, or a callback that panics fails the run with a message saying which rule was
//!   broken (the real crate would deadlock, corrupt its queue, or abort).
//!
//! What it does not model:
//!
//! - several buckets: operations on different keys never run in parallel here;
//! - `unpark_requeue`, `SpinWait`'s spinning (under a checker `spin` always returns `false`,
//!   since loom rejects spin loops; the protocol is otherwise identical), and the
//!   `deadlock_detection` feature;
//! - the eventual-fairness timer (`be_fair`), which `parking_lot_core` 0.10 no longer has;
//! - real time: a timed park never expires unless a scenario advances the clock.

use std::cell::Cell;
use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use super::checker::{Mutex, lazy_static, thread, thread_local};

#[cfg(feature = "broken_sema")]
pub(crate) use super::checker::flaw_window;
pub(crate) use super::checker::{AtomicUsize, Ordering, const_fn, fence};
pub(crate) use parking_lot_core::{
    DEFAULT_PARK_TOKEN, DEFAULT_UNPARK_TOKEN, FilterOp, ParkResult, ParkToken, UnparkResult,
    UnparkToken,
};

/// A parked thread.
#[derive(Debug)]
struct Waiter {
    /// Identifies this park call, so its unpark token can be found.
    id: u64,
    key: usize,
    token: ParkToken,
    deadline: Option<Instant>,
    thread: thread::Thread,
}

/// The whole park table: one bucket.
#[derive(Debug)]
struct Table {
    /// Parked threads, oldest first, all keys together.
    queue: VecDeque<Waiter>,
    /// Tokens handed to unparked threads that have not yet returned from `park`.
    unparked: Vec<(u64, UnparkToken)>,
    next_id: u64,
    /// The mocked clock: `base + elapsed`.
    base: Instant,
    elapsed: Duration,
}

impl Table {
    fn now(&self) -> Instant {
        self.base + self.elapsed
    }

    fn has_key(&self, key: usize) -> bool {
        self.queue.iter().any(|w| w.key == key)
    }
}

lazy_static! {
    static ref TABLE: Mutex<Table> = Mutex::new(Table {
        queue: VecDeque::new(),
        unparked: Vec::new(),
        next_id: 0,
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
        // This thread is already unwinding (a permit returned by a guard during a panic),
        // after a task was torn down while it held the table: the run has failed already,
        // and its first panic is the one to report, not a second one about the poison.
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
            panic!(
                "park-table contract violated: the `{name}` callback panicked ({msg}); \
                 parking_lot_core aborts the process when a callback unwinds"
            )
        }
    }
}

/// What a parked thread finds when it looks at the table.
enum Wake {
    Unparked(UnparkToken),
    TimedOut,
    Sleep,
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
    let queued = with_table("park", |table| {
        if !callback("validate", validate) {
            return None;
        }
        let id = table.next_id;
        table.next_id += 1;
        table.queue.push_back(Waiter {
            id,
            key,
            token: park_token,
            deadline: timeout,
            thread: thread::current(),
        });
        Some(id)
    });
    let Some(id) = queued else {
        return ParkResult::Invalid;
    };
    callback("before_sleep", before_sleep);

    let mut timed_out = Some(timed_out);
    loop {
        let wake = with_table("park", |table| {
            if let Some(at) = table.unparked.iter().position(|&(w, _)| w == id) {
                return Wake::Unparked(table.unparked.swap_remove(at).1);
            }
            match timeout {
                Some(deadline) if deadline <= table.now() => {
                    let at = table
                        .queue
                        .iter()
                        .position(|w| w.id == id)
                        .expect("a thread that was not unparked is still queued");
                    table.queue.remove(at);
                    let was_last = !table.has_key(key);
                    let timed_out = timed_out.take().expect("a park times out once");
                    callback("timed_out", || timed_out(key, was_last));
                    Wake::TimedOut
                }
                _ => Wake::Sleep,
            }
        });
        match wake {
            Wake::Unparked(token) => return ParkResult::Unparked(token),
            Wake::TimedOut => return ParkResult::TimedOut,
            // The checker's park may return spuriously; the loop looks again, so this one
            // never does.
            Wake::Sleep => thread::park(),
        }
    }
}

/// Removes the waiters chosen by `choose` (called in FIFO order for each waiter with `key`),
/// runs `callback` with the result, hands its token to the chosen waiters, and wakes them
/// after the lock is released.
fn unpark_where(
    op: &'static str,
    key: usize,
    mut choose: impl FnMut(ParkToken) -> FilterOp,
    callback_fn: impl FnOnce(UnparkResult) -> UnparkToken,
) -> UnparkResult {
    let (result, woken) = with_table(op, |table| {
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
        let token = callback("callback", || callback_fn(result));
        for waiter in &chosen {
            table.unparked.push((waiter.id, token));
        }
        (result, chosen)
    });
    for waiter in woken {
        waiter.thread.unpark();
    }
    result
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

/// The mocked clock's current time: the deadline base for timed parks.
pub fn now() -> Instant {
    with_table("now", |table| table.now())
}

/// Moves the mocked clock forward by `by` and wakes every parked thread whose deadline has
/// passed, so it can time out (unless an unpark reaches it first).
pub fn advance_clock(by: Duration) {
    let due: Vec<thread::Thread> = with_table("advance_clock", |table| {
        table.elapsed += by;
        let now = table.now();
        table
            .queue
            .iter()
            .filter(|w| w.deadline.is_some_and(|d| d <= now))
            .map(|w| w.thread.clone())
            .collect()
    });
    for t in due {
        t.unpark();
    }
}

/// `parking_lot_core::SpinWait` under a checker: it never spins (loom rejects spin loops),
/// so an acquirer goes straight to setting `WAITERS` and parking.
#[derive(Debug, Default)]
pub(crate) struct SpinWait(());

impl SpinWait {
    pub(crate) fn new() -> Self {
        SpinWait(())
    }

    /// Always `false`: "stop spinning and park".
    pub(crate) fn spin(&mut self) -> bool {
        false
    }

    pub(crate) fn reset(&mut self) {}
}

/// The mock's own tests, run under whichever checker is enabled: `cargo test --lib --features
/// loom` explores every interleaving; `--features shuttle` samples 200 random schedules.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::model::Arc;

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
