//! The cases: each one function body that uses only `api::*` (the API under test: the crate
//! root for `parking_lot_core` 0.10, `parkcheck::v0_9` for 0.9) and `parkcheck::sync::*`, so
//! it is the same code against the real crate on OS threads and against the model under
//! loom and shuttle. Each asserts, where the property is first observable (in the parked
//! thread, or in a callback under the table lock), with a message that names the property.
//!
//! # Safety of the calls into the park table
//!
//! Every key is the address of a byte in an array the case itself owns on the main thread's
//! stack for the whole case (`Keys`), so no other code parks on it, in this case or in
//! another test running at the same time; the park table never dereferences a key. Every
//! callback touches only the case's atomics and cells: none calls into the park table, none
//! parks. A callback unwinds only when one of its assertions fails, which fails the case (the
//! model reports it as a broken callback with the assertion's message; the real crate aborts
//! the process, after the panic message is printed).

use std::cell::Cell;
use std::time::Duration;

use parkcheck::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use parkcheck::sync::{Arc, thread};

use crate::api;
use crate::api::{
    DEFAULT_PARK_TOKEN, DEFAULT_UNPARK_TOKEN, FilterOp, ParkResult, ParkToken, RequeueOp,
    UnparkResult, UnparkToken,
};

use crate::harness::{pause, wait_for};

/// How far in the future a timed park's deadline is, from `api::now()`. On real threads
/// it is real time that each timed case waits out once per run; under a checker the clock
/// moves only when a case calls `advance_clock`, so its size does not matter there.
const DEADLINE: Duration = Duration::from_millis(20);

/// The keys of one case: addresses of bytes the case owns (see the module docs).
pub(crate) struct Keys([u8; 3]);

impl Keys {
    pub(crate) fn new() -> Keys {
        Keys([0; 3])
    }

    /// The `i`-th key.
    pub(crate) fn get(&self, i: usize) -> usize {
        std::ptr::from_ref(&self.0[i]).addr()
    }
}

/// An `UnparkResult` as a tuple: (`unparked_threads`, `requeued_threads`,
/// `have_more_threads`). The struct is `#[non_exhaustive]`, so it cannot be written out.
fn counts(r: UnparkResult) -> (usize, usize, bool) {
    (r.unparked_threads, r.requeued_threads, r.have_more_threads)
}

/// What a waiter must get from `park`: unparked with `UnparkToken(token)`.
pub(crate) fn unparked(token: usize) -> ParkResult {
    ParkResult::Unparked(UnparkToken(token))
}

/// A thread to park: its key, its park token, the result it must get and the property a
/// wrong result violates.
pub(crate) type Waiter = (usize, usize, ParkResult, &'static str);

/// Parks one thread per entry of `waiters` (no deadline), in order: each is in the queue and
/// has released the table lock (its `before_sleep` ran) before the next one starts. Each
/// asserts, when its `park` returns, that it got what its entry says.
pub(crate) fn park_in_order(waiters: &[Waiter]) -> Vec<thread::JoinHandle<()>> {
    let asleep = Arc::new(AtomicUsize::new(0));
    let mut handles = Vec::new();
    for (i, &(key, park_token, expect, property)) in waiters.iter().enumerate() {
        let counter = Arc::clone(&asleep);
        handles.push(thread::spawn(move || {
            // SAFETY: the case's own key; the callbacks touch only an atomic (module docs).
            let got = unsafe {
                api::park(
                    key,
                    || true,
                    || {
                        counter.fetch_add(1, SeqCst);
                    },
                    |_, _| {},
                    ParkToken(park_token),
                    None,
                )
            };
            assert_eq!(
                got, expect,
                "{property}: the thread parked with ParkToken({park_token}) got {got:?}, \
                 expected {expect:?}"
            );
        }));
        wait_for(
            &asleep,
            i + 1,
            &format!("the thread with ParkToken({park_token}) to park"),
        );
    }
    handles
}

/// Joins `handles`, resuming the first thread's panic (so a real-threads run fails with the
/// thread's own message; under a checker the failing thread has already ended the run).
pub(crate) fn join_all(handles: Vec<thread::JoinHandle<()>>) {
    for handle in handles {
        if let Err(payload) = handle.join() {
            std::panic::resume_unwind(payload);
        }
    }
}

/// Unparks every thread parked on `key` with one `unpark_filter` and `UnparkToken(token)`,
/// asserting (under the table lock) that the filter sees exactly the park tokens `expected`,
/// in this order, and that the callback counts them.
fn drain(key: usize, expected: &[usize], token: usize, property: &str) {
    let seen = Cell::new(0);
    // SAFETY: the case's own key; the callbacks touch only cells (module docs).
    let r = unsafe {
        api::unpark_filter(
            key,
            |t| {
                let at = seen.get();
                assert!(
                    expected.get(at).is_some_and(|&e| ParkToken(e) == t),
                    "{property}: the filter saw {t:?} at place {at}, expected the park tokens \
                     {expected:?} in this order"
                );
                seen.set(at + 1);
                FilterOp::Unpark
            },
            |r| {
                assert_eq!(
                    (seen.get(), counts(r)),
                    (expected.len(), (expected.len(), 0, false)),
                    "{property}: unpark_filter saw {} threads and reported {r:?}, expected \
                     {} threads and all of them unparked",
                    seen.get(),
                    expected.len()
                );
                UnparkToken(token)
            },
        )
    };
    assert_eq!(r.unparked_threads, expected.len(), "{property}: {r:?}");
}

// ---------------------------------------------------------------------------------------
// 1. validate

/// `validate` returning `false` gives `Invalid` at once and queues nothing: `before_sleep`
/// and `timed_out` never run (the park has a deadline, so a queued one would time out), and
/// an `unpark_one` on the key afterwards finds no thread.
pub(crate) fn validate_false_is_invalid() {
    let keys = Keys::new();
    let key = keys.get(0);
    let validated = Cell::new(0);
    let slept = Cell::new(false);
    let timed_out = Cell::new(false);
    // SAFETY: the case's own key; the callbacks touch only cells (module docs).
    let r = unsafe {
        api::park(
            key,
            || {
                validated.set(validated.get() + 1);
                false
            },
            || slept.set(true),
            |_, _| timed_out.set(true),
            ParkToken(1),
            Some(api::now() + DEADLINE),
        )
    };
    assert_eq!(
        (r, validated.get()),
        (ParkResult::Invalid, 1),
        "validate false gives Invalid: park returned {r:?} after {} validate calls",
        validated.get()
    );
    assert!(
        !slept.get() && !timed_out.get(),
        "validate false enqueues nothing: before_sleep ran: {}, timed_out ran: {}",
        slept.get(),
        timed_out.get()
    );
    // SAFETY: the case's own key; the callback touches nothing (module docs).
    let r = unsafe {
        api::unpark_one(key, |r| {
            assert_eq!(
                counts(r),
                (0, 0, false),
                "validate false enqueues nothing: unpark_one found a thread: {r:?}"
            );
            DEFAULT_UNPARK_TOKEN
        })
    };
    assert_eq!(counts(r), (0, 0, false), "validate false enqueues nothing");
}

// ---------------------------------------------------------------------------------------
// 2. callbacks run under the lock

/// Which unpark function `under_lock` calls.
#[derive(Clone, Copy, Debug)]
enum Unparker {
    One,
    Filter,
    Requeue,
}

impl Unparker {
    /// The function's name, for messages.
    fn name(self) -> &'static str {
        match self {
            Unparker::One => "unpark_one",
            Unparker::Filter => "unpark_filter",
            Unparker::Requeue => "unpark_requeue",
        }
    }
}

/// Marks `inside` for the length of a pause: a callback that another thread's `validate`
/// on the same key must never see running.
fn hold(inside: &AtomicBool) {
    inside.store(true, SeqCst);
    pause();
    inside.store(false, SeqCst);
}

/// The callbacks of `unparker` run under the lock of their key's bucket, as `park`'s
/// `validate` does: a prober thread keeps trying to park on the same key, with a `validate`
/// that asserts no callback is inside and returns `false`, while the main thread's callbacks
/// (and filter, and requeue `validate`) mark themselves inside for a pause. Same key means
/// same bucket in the real crate (the modelled table has one bucket for all keys), so the
/// prober's `validate` can run only before or after them, never during. A waiter is parked
/// first so that the filter and the requeue have a thread to look at.
fn under_lock(unparker: Unparker) {
    let keys = Keys::new();
    let (key, key_to) = (keys.get(0), keys.get(1));
    let waiter = park_in_order(&[(
        key,
        1,
        unparked(7),
        "callbacks run under the lock: the unparked waiter",
    )]);
    let inside = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicBool::new(false));
    let tries = Arc::new(AtomicUsize::new(0));
    let prober = {
        let (inside, done, tries) = (Arc::clone(&inside), Arc::clone(&done), Arc::clone(&tries));
        thread::spawn(move || {
            while !done.load(SeqCst) {
                // SAFETY: the case's own key; the callbacks touch only atomics (module docs).
                let r = unsafe {
                    api::park(
                        key,
                        || {
                            assert!(
                                !inside.load(SeqCst),
                                "callbacks run under the lock: park's validate on the same \
                                 key ran while a callback passed to {} was running",
                                unparker.name()
                            );
                            false
                        },
                        || {},
                        |_, _| {},
                        DEFAULT_PARK_TOKEN,
                        None,
                    )
                };
                assert_eq!(r, ParkResult::Invalid, "validate false gives Invalid");
                tries.fetch_add(1, SeqCst);
                thread::yield_now();
            }
        })
    };
    // On real threads the prober must be looping before the callbacks run, or the case
    // checks nothing; under a checker it keeps trying after its first attempt too.
    wait_for(&tries, 1, "the prober's first park attempt");
    let r = match unparker {
        // SAFETY: the case's own key; the callback touches only atomics (module docs).
        Unparker::One => unsafe {
            api::unpark_one(key, |_| {
                hold(&inside);
                UnparkToken(7)
            })
        },
        // SAFETY: the case's own key; the callbacks touch only atomics (module docs).
        Unparker::Filter => unsafe {
            api::unpark_filter(
                key,
                |_| {
                    hold(&inside);
                    FilterOp::Unpark
                },
                |_| {
                    hold(&inside);
                    UnparkToken(7)
                },
            )
        },
        // SAFETY: the case's own keys; the callbacks touch only atomics (module docs).
        Unparker::Requeue => unsafe {
            api::unpark_requeue(
                key,
                key_to,
                || {
                    hold(&inside);
                    RequeueOp::UnparkOne
                },
                |_, _| {
                    hold(&inside);
                    UnparkToken(7)
                },
            )
        },
    };
    assert_eq!(r.unparked_threads, 1, "the waiter was unparked: {r:?}");
    done.store(true, SeqCst);
    join_all(waiter);
    join_all(vec![prober]);
}

/// `unpark_one`'s callback runs under the lock.
pub(crate) fn under_lock_unpark_one() {
    under_lock(Unparker::One);
}

/// `unpark_filter`'s filter and callback run under the lock.
pub(crate) fn under_lock_unpark_filter() {
    under_lock(Unparker::Filter);
}

/// `unpark_requeue`'s `validate` and callback run under the lock.
pub(crate) fn under_lock_unpark_requeue() {
    under_lock(Unparker::Requeue);
}

// ---------------------------------------------------------------------------------------
// 3. have_more_threads counts the same key only

/// One thread parked on each of two keys; `unpark` on the first must report no more threads
/// (the one left is on the other key), in its callback and in its result; then the second
/// is woken as well.
fn have_more_same_key(unparker: Unparker) {
    let keys = Keys::new();
    let (k1, k2, k3) = (keys.get(0), keys.get(1), keys.get(2));
    let property = "have_more_threads counts the same key only";
    let waiters = park_in_order(&[
        (k1, 1, unparked(11), property),
        (k2, 2, unparked(12), property),
    ]);
    let check = |r: UnparkResult| {
        assert_eq!(
            counts(r),
            (1, 0, false),
            "{property}: {} on a key with one thread, another key's thread still \
             parked, reported {r:?}",
            unparker.name()
        );
    };
    let r = match unparker {
        // SAFETY: the case's own key; the callback only asserts (module docs).
        Unparker::One => unsafe {
            api::unpark_one(k1, |r| {
                check(r);
                UnparkToken(11)
            })
        },
        // SAFETY: the case's own key; the callbacks only assert (module docs).
        Unparker::Filter => unsafe {
            api::unpark_filter(
                k1,
                |_| FilterOp::Unpark,
                |r| {
                    check(r);
                    UnparkToken(11)
                },
            )
        },
        // SAFETY: the case's own keys; the callbacks only assert (module docs).
        Unparker::Requeue => unsafe {
            api::unpark_requeue(
                k1,
                k3,
                || RequeueOp::UnparkOne,
                |_, r| {
                    check(r);
                    UnparkToken(11)
                },
            )
        },
    };
    check(r);
    // SAFETY: the case's own key; the callback only asserts (module docs).
    let r = unsafe {
        api::unpark_one(k2, |r| {
            assert_eq!(
                counts(r),
                (1, 0, false),
                "{property}: the last thread: {r:?}"
            );
            UnparkToken(12)
        })
    };
    assert_eq!(counts(r), (1, 0, false), "{property}: the last thread");
    join_all(waiters);
}

/// `unpark_one`'s `have_more_threads` ignores other keys.
pub(crate) fn have_more_unpark_one() {
    have_more_same_key(Unparker::One);
}

/// `unpark_filter`'s `have_more_threads` ignores other keys.
pub(crate) fn have_more_unpark_filter() {
    have_more_same_key(Unparker::Filter);
}

/// `unpark_requeue`'s (`UnparkOne`) `have_more_threads` ignores other keys.
pub(crate) fn have_more_unpark_requeue() {
    have_more_same_key(Unparker::Requeue);
}

// ---------------------------------------------------------------------------------------
// 4. FIFO per key, 5. Skip and Stop, 7. tokens

/// Two threads parked on one key, in order: the first `unpark_one` wakes the first (and says
/// another remains), the second wakes the second; each thread checks the unpark token it got.
pub(crate) fn fifo_unpark_one() {
    let keys = Keys::new();
    let key = keys.get(0);
    let waiters = park_in_order(&[
        (
            key,
            1,
            unparked(21),
            "FIFO per key: the thread parked first",
        ),
        (
            key,
            2,
            unparked(22),
            "FIFO per key: the thread parked second",
        ),
    ]);
    for (token, expect) in [(21, (1, 0, true)), (22, (1, 0, false))] {
        // SAFETY: the case's own key; the callback only asserts (module docs).
        let r = unsafe {
            api::unpark_one(key, |r| {
                assert_eq!(
                    counts(r),
                    expect,
                    "unpark_one's result (have_more_threads: another thread with the key \
                     remains): {r:?}"
                );
                UnparkToken(token)
            })
        };
        assert_eq!(counts(r), expect, "unpark_one's result");
    }
    join_all(waiters);
}

/// `unpark_filter` sees the park tokens of the threads on its key in park order, and every
/// thread it unparks gets the callback's token.
pub(crate) fn fifo_unpark_filter() {
    let keys = Keys::new();
    let key = keys.get(0);
    let property = "FIFO per key: unpark_filter's order";
    let waiters = park_in_order(&[
        (key, 1, unparked(5), property),
        (key, 2, unparked(5), property),
    ]);
    drain(key, &[1, 2], 5, property);
    join_all(waiters);
}

/// One `unpark_filter` scan for [`scan`]: what the filter answers for each park token it may
/// see (`Stop` for any other), the tokens it must see in this order, the result, and the
/// unpark token.
type Scan = (
    &'static [(usize, FilterOp)],
    &'static [usize],
    (usize, usize, bool),
    usize,
);

/// Runs each of `scans` as one `unpark_filter` on `key`, asserting (under the lock) that the
/// filter sees the park tokens it must, in park order, and that the callback and the caller
/// get the result; `property` names the case in the messages.
fn scan(key: usize, scans: &[Scan], property: &str) {
    for &(answers, must_see, expect, token) in scans {
        let seen = std::cell::RefCell::new(Vec::new());
        // SAFETY: the case's own key; the callbacks touch only a cell (module docs).
        let r = unsafe {
            api::unpark_filter(
                key,
                |t| {
                    seen.borrow_mut().push(t.0);
                    let seen = seen.borrow();
                    assert!(
                        must_see.starts_with(&seen),
                        "{property} (Stop ends the scan; the scan goes in park order): the \
                         filter saw {seen:?}, expected {must_see:?}"
                    );
                    answers
                        .iter()
                        .find(|a| ParkToken(a.0) == t)
                        .map_or(FilterOp::Stop, |a| a.1)
                },
                |r| {
                    assert_eq!(
                        (seen.borrow().as_slice(), counts(r)),
                        (must_see, expect),
                        "{property}: the filter saw these park tokens and the callback got \
                         this result"
                    );
                    UnparkToken(token)
                },
            )
        };
        assert_eq!(counts(r), expect, "{property}: the result");
    }
}

/// `FilterOp::Stop` ends the scan (the filter sees only the first thread, nobody is
/// unparked, `have_more_threads` is set); `Skip` leaves a thread parked and sets
/// `have_more_threads` while the scan goes on to unpark the next; the skipped thread is still
/// parked for a last scan, which unparks it and reports no more.
pub(crate) fn filter_skip_and_stop() {
    let keys = Keys::new();
    let key = keys.get(0);
    let waiters = park_in_order(&[
        (
            key,
            1,
            unparked(33),
            "FilterOp::Skip leaves the thread parked",
        ),
        (key, 2, unparked(32), "FilterOp::Unpark after a Skip"),
    ]);
    let scans: [Scan; 3] = [
        (&[(1, FilterOp::Stop)], &[1], (0, 0, true), 31),
        (
            &[(1, FilterOp::Skip), (2, FilterOp::Unpark)],
            &[1, 2],
            (1, 0, true),
            32,
        ),
        (&[(1, FilterOp::Unpark)], &[1], (1, 0, false), 33),
    ];
    scan(key, &scans, "FilterOp::Skip and Stop");
    join_all(waiters);
}

/// `unpark_all` gives its token to every thread on the key and returns how many it woke;
/// a second call finds none.
pub(crate) fn unpark_all_token_to_all() {
    let keys = Keys::new();
    let key = keys.get(0);
    let property = "unpark_all's token goes to every thread";
    let waiters = park_in_order(&[
        (key, 1, unparked(9), property),
        (key, 2, unparked(9), property),
    ]);
    // SAFETY: the case's own key (module docs).
    let woken = unsafe { api::unpark_all(key, UnparkToken(9)) };
    assert_eq!(woken, 2, "unpark_all returns the number woken");
    // SAFETY: as above.
    let woken = unsafe { api::unpark_all(key, UnparkToken(10)) };
    assert_eq!(woken, 0, "unpark_all returns the number woken (none left)");
    join_all(waiters);
}

// ---------------------------------------------------------------------------------------
// 6. unpark_requeue

/// `unpark_requeue` with `op`: threads 1 and 2 parked on `from`, thread 3 already on `to`.
/// The result is checked in the callback (which must get `op`) and as returned; then each
/// key is drained and must hold what `op` left there, in order (requeued threads behind the
/// ones already on `to`); each thread checks the token it got (10 from the requeue itself,
/// 20 from draining `from`, 30 from draining `to`).
fn requeue(op: RequeueOp, expect: (usize, usize, bool), left_on_from: &[usize], on_to: &[usize]) {
    let keys = Keys::new();
    let (from, to) = (keys.get(0), keys.get(1));
    // The token each thread must get: from the requeue's callback if it unparks it, else
    // from draining the key it ends on.
    let token_of = |t: usize| {
        if on_to.contains(&t) {
            30
        } else if left_on_from.contains(&t) {
            20
        } else {
            10
        }
    };
    let property = "unpark_requeue: the thread's key and place after the requeue";
    let waiters = park_in_order(&[
        (from, 1, unparked(token_of(1)), property),
        (from, 2, unparked(token_of(2)), property),
        (to, 3, unparked(token_of(3)), property),
    ]);
    let validated = Cell::new(0);
    // SAFETY: the case's own keys; the callbacks touch only cells (module docs).
    let r = unsafe {
        api::unpark_requeue(
            from,
            to,
            || {
                validated.set(validated.get() + 1);
                op
            },
            |got, r| {
                assert!(
                    op != RequeueOp::Abort,
                    "RequeueOp::Abort: the callback must not run (it got {got:?}, {r:?})"
                );
                assert_eq!(
                    (got, counts(r)),
                    (op, expect),
                    "unpark_requeue's callback gets validate's op and the result \
                     (unparked, requeued, have_more_threads)"
                );
                UnparkToken(10)
            },
        )
    };
    assert_eq!(
        (validated.get(), counts(r)),
        (1, expect),
        "unpark_requeue with {op:?}: validate runs once; the result (unparked, requeued, \
         have_more_threads)"
    );
    drain(
        from,
        left_on_from,
        20,
        &format!("unpark_requeue with {op:?}: the threads left on key_from, in order"),
    );
    drain(
        to,
        on_to,
        30,
        &format!(
            "unpark_requeue with {op:?}: key_to's queue, the threads already on it first, then \
             the requeued ones in their order"
        ),
    );
    join_all(waiters);
}

/// `Abort`: nothing moves, nobody is woken, the callback does not run, the result is zero.
pub(crate) fn requeue_abort() {
    requeue(RequeueOp::Abort, (0, 0, false), &[1, 2], &[3]);
}

/// `UnparkOneRequeueRest`: the first is woken with the callback's token, the second joins
/// `to` behind thread 3; `have_more_threads` stays false.
pub(crate) fn requeue_unpark_one_requeue_rest() {
    requeue(RequeueOp::UnparkOneRequeueRest, (1, 1, false), &[], &[3, 2]);
}

/// `RequeueAll`: both move to `to`, in order, behind thread 3.
pub(crate) fn requeue_all() {
    requeue(RequeueOp::RequeueAll, (0, 2, false), &[], &[3, 1, 2]);
}

/// `UnparkOne`: the first is woken, the second stays on `from` (`have_more_threads`).
pub(crate) fn requeue_unpark_one() {
    requeue(RequeueOp::UnparkOne, (1, 0, true), &[2], &[3]);
}

/// `RequeueOne`: the first moves to `to` behind thread 3, the second stays on `from`
/// (`have_more_threads`).
pub(crate) fn requeue_one() {
    requeue(RequeueOp::RequeueOne, (0, 1, true), &[2], &[3, 1]);
}

// ---------------------------------------------------------------------------------------
// 8. timeouts

/// A thread alone on its key parks with a deadline; once the clock passes it, `timed_out`
/// runs with the key and "was last" set, and `park` returns `TimedOut`; the thread has left
/// the queue (an `unpark_one` afterwards finds nobody).
pub(crate) fn timed_park_times_out() {
    let keys = Keys::new();
    let key = keys.get(0);
    let asleep = Arc::new(AtomicUsize::new(0));
    let waiter = {
        let asleep = Arc::clone(&asleep);
        thread::spawn(move || {
            let timed_out = Cell::new(false);
            // SAFETY: the case's own key; the callbacks touch only a cell and an atomic
            // (module docs).
            let r = unsafe {
                api::park(
                    key,
                    || true,
                    || {
                        asleep.fetch_add(1, SeqCst);
                    },
                    |k, was_last| {
                        assert_eq!(
                            (k, was_last),
                            (key, true),
                            "timed_out gets the key and was_last (alone on the key)"
                        );
                        timed_out.set(true);
                    },
                    DEFAULT_PARK_TOKEN,
                    Some(api::now() + DEADLINE),
                )
            };
            assert_eq!(
                (r, timed_out.get()),
                (ParkResult::TimedOut, true),
                "a timed park times out, after timed_out ran"
            );
        })
    };
    wait_for(&asleep, 1, "the timed thread to park");
    api::advance_clock(DEADLINE);
    join_all(vec![waiter]);
    // SAFETY: the case's own key; the callback only asserts (module docs).
    let r = unsafe {
        api::unpark_one(key, |r| {
            assert_eq!(
                counts(r),
                (0, 0, false),
                "a timed-out thread leaves the queue: {r:?}"
            );
            DEFAULT_UNPARK_TOKEN
        })
    };
    assert_eq!(
        counts(r),
        (0, 0, false),
        "a timed-out thread leaves the queue"
    );
}

/// An untimed thread is parked on the key, then a timed one: when the second times out,
/// `timed_out` says it was not the last thread on the key; the first is still parked (an
/// `unpark_one` wakes it, and reports no more).
pub(crate) fn timed_out_not_last() {
    let keys = Keys::new();
    let key = keys.get(0);
    let first = park_in_order(&[(
        key,
        1,
        unparked(4),
        "a timeout leaves the other threads on the key parked",
    )]);
    let asleep = Arc::new(AtomicUsize::new(0));
    let timed = {
        let asleep = Arc::clone(&asleep);
        thread::spawn(move || {
            // SAFETY: the case's own key; the callbacks touch only an atomic (module docs).
            let r = unsafe {
                api::park(
                    key,
                    || true,
                    || {
                        asleep.fetch_add(1, SeqCst);
                    },
                    |k, was_last| {
                        assert_eq!(
                            (k, was_last),
                            (key, false),
                            "timed_out's was_last is false while another thread with the key \
                             remains"
                        );
                    },
                    ParkToken(2),
                    Some(api::now() + DEADLINE),
                )
            };
            assert_eq!(r, ParkResult::TimedOut, "a timed park times out");
        })
    };
    wait_for(&asleep, 1, "the timed thread to park");
    api::advance_clock(DEADLINE);
    join_all(vec![timed]);
    // SAFETY: the case's own key; the callback only asserts (module docs).
    let r = unsafe {
        api::unpark_one(key, |r| {
            assert_eq!(
                counts(r),
                (1, 0, false),
                "a timeout leaves the other threads on the key parked: {r:?}"
            );
            UnparkToken(4)
        })
    };
    assert_eq!(
        counts(r),
        (1, 0, false),
        "the untimed thread was still parked"
    );
    join_all(first);
}

/// A timed thread parked on `from` is requeued to `to` before its deadline passes; when it
/// times out, `timed_out` gets `to`, the key it is parked on then. (On real threads the
/// deadline may pass before the requeue finds the thread; then it gets `from`, and the
/// requeue's callback, under the lock, knows which happened.)
pub(crate) fn timed_out_gets_current_key() {
    let keys = Keys::new();
    let (from, to) = (keys.get(0), keys.get(1));
    let asleep = Arc::new(AtomicUsize::new(0));
    let moved = Arc::new(AtomicBool::new(false));
    let waiter = {
        let (asleep, moved) = (Arc::clone(&asleep), Arc::clone(&moved));
        thread::spawn(move || {
            // SAFETY: the case's own keys; the callbacks touch only atomics (module docs).
            let r = unsafe {
                api::park(
                    from,
                    || true,
                    || {
                        asleep.fetch_add(1, SeqCst);
                    },
                    |k, was_last| {
                        let now_on = if moved.load(SeqCst) { to } else { from };
                        assert!(
                            k == now_on && was_last,
                            "timed_out gets the key it is parked on now: got {k:#x} \
                             (was_last {was_last}), parked on {now_on:#x} (requeued from \
                             {from:#x} to {to:#x}: {})",
                            moved.load(SeqCst)
                        );
                    },
                    DEFAULT_PARK_TOKEN,
                    Some(api::now() + DEADLINE),
                )
            };
            assert_eq!(r, ParkResult::TimedOut, "a requeued timed park times out");
        })
    };
    wait_for(&asleep, 1, "the timed thread to park");
    // SAFETY: the case's own keys; the callback touches only an atomic (module docs).
    unsafe {
        api::unpark_requeue(
            from,
            to,
            || RequeueOp::RequeueAll,
            |_, r| {
                moved.store(r.requeued_threads == 1, SeqCst);
                DEFAULT_UNPARK_TOKEN
            },
        )
    };
    api::advance_clock(DEADLINE);
    join_all(vec![waiter]);
    for key in [from, to] {
        // SAFETY: the case's own key; the callback only asserts (module docs).
        let r = unsafe {
            api::unpark_one(key, |r| {
                assert_eq!(
                    counts(r),
                    (0, 0, false),
                    "a timed-out thread leaves the queue"
                );
                DEFAULT_UNPARK_TOKEN
            })
        };
        assert_eq!(
            counts(r),
            (0, 0, false),
            "a timed-out thread leaves the queue"
        );
    }
}

/// A timed park whose deadline passes while an `unpark_one` reaches for it ends one way only:
/// `Unparked` with the unparker's token, counted by the unparker, `timed_out` not run; or
/// `TimedOut` after `timed_out`, not counted. The unparker lets the deadline pass itself and
/// then unparks, so on real threads the two race; under a checker every order is explored.
pub(crate) fn timeout_races_unpark() {
    let keys = Keys::new();
    let key = keys.get(0);
    let asleep = Arc::new(AtomicUsize::new(0));
    let counted = Arc::new(AtomicBool::new(false));
    let timed_out = Arc::new(AtomicBool::new(false));
    let property = "a timeout racing an unpark ends one way only";
    let waiter = {
        let (asleep, counted, timed_out) = (
            Arc::clone(&asleep),
            Arc::clone(&counted),
            Arc::clone(&timed_out),
        );
        thread::spawn(move || {
            // SAFETY: the case's own key; the callbacks touch only atomics (module docs).
            let r = unsafe {
                api::park(
                    key,
                    || true,
                    || {
                        asleep.fetch_add(1, SeqCst);
                    },
                    |_, was_last| {
                        assert!(
                            !counted.load(SeqCst) && was_last,
                            "{property}: timed_out ran for a thread unpark_one had counted \
                             (or was_last was false: {was_last})"
                        );
                        timed_out.store(true, SeqCst);
                    },
                    DEFAULT_PARK_TOKEN,
                    Some(api::now() + DEADLINE),
                )
            };
            let (counted, timed_out) = (counted.load(SeqCst), timed_out.load(SeqCst));
            match r {
                ParkResult::Unparked(t) => assert!(
                    t == UnparkToken(8) && counted && !timed_out,
                    "{property}: Unparked({t:?}) (counted by the unparker: {counted}, \
                     timed_out ran: {timed_out})"
                ),
                ParkResult::TimedOut => assert!(
                    timed_out && !counted,
                    "{property}: TimedOut (counted by the unparker: {counted}, timed_out ran: \
                     {timed_out})"
                ),
                ParkResult::Invalid => panic!("{property}: park returned Invalid"),
            }
        })
    };
    wait_for(&asleep, 1, "the timed thread to park");
    // On real threads the unparker wakes up slightly before the deadline, by an amount that
    // varies from run to run (0 to 90 µs), so that across the runs both outcomes occur
    // (measured on the 2-core machine, 20 runs each: with under 20 µs nearly all time out,
    // with over 50 µs nearly all are unparked). Under a checker it is 50 µs in every
    // execution: the main thread moves the clock the rest of the way, and every order of its
    // move, the unparker's and the unpark is explored.
    let slack = Duration::from_micros(10 * crate::harness::vary(10));
    let unparker = {
        let (counted, timed_out) = (Arc::clone(&counted), Arc::clone(&timed_out));
        thread::spawn(move || {
            api::advance_clock(DEADLINE - slack);
            // SAFETY: the case's own key; the callback touches only atomics (module docs).
            unsafe {
                api::unpark_one(key, |r| {
                    if r.unparked_threads == 1 {
                        assert!(
                            !timed_out.load(SeqCst),
                            "{property}: unpark_one counted a thread whose timed_out had run"
                        );
                        counted.store(true, SeqCst);
                    }
                    UnparkToken(8)
                })
            };
        })
    };
    api::advance_clock(slack);
    join_all(vec![unparker, waiter]);
}

// ---------------------------------------------------------------------------------------
// 9. no spurious returns, 10. unparks with no waiters

/// A park without a deadline returns only after an unpark chose it: the unpark callback
/// sets a flag under the lock, before the thread can be woken, and the thread asserts the
/// flag when `park` returns. On real threads the unpark comes 20 ms after the thread went to
/// sleep, time for a spurious wake-up to show (under a checker `advance_clock` only moves the
/// mocked clock).
pub(crate) fn no_spurious_returns() {
    let keys = Keys::new();
    let key = keys.get(0);
    let asleep = Arc::new(AtomicUsize::new(0));
    let chosen = Arc::new(AtomicBool::new(false));
    let waiter = {
        let (asleep, chosen) = (Arc::clone(&asleep), Arc::clone(&chosen));
        thread::spawn(move || {
            // SAFETY: the case's own key; the callbacks touch only an atomic (module docs).
            let r = unsafe {
                api::park(
                    key,
                    || true,
                    || {
                        asleep.fetch_add(1, SeqCst);
                    },
                    |_, _| {},
                    DEFAULT_PARK_TOKEN,
                    None,
                )
            };
            assert!(
                chosen.load(SeqCst) && r == unparked(3),
                "no spurious returns: park returned {r:?} before an unpark chose it"
            );
        })
    };
    wait_for(&asleep, 1, "the thread to park");
    api::advance_clock(DEADLINE);
    // SAFETY: the case's own key; the callback touches only an atomic (module docs).
    let r = unsafe {
        api::unpark_one(key, |r| {
            chosen.store(r.unparked_threads == 1, SeqCst);
            UnparkToken(3)
        })
    };
    assert_eq!(
        counts(r),
        (1, 0, false),
        "no spurious returns: the thread that parked was still parked at the unpark"
    );
    join_all(vec![waiter]);
}

/// Every unpark function on a key with no thread still runs its callback, with a zero
/// result (`unpark_requeue` for each op but `Abort`, and the callback gets the op); the
/// filter is never called; `unpark_all` returns 0.
pub(crate) fn unpark_without_waiters() {
    let keys = Keys::new();
    let (key, key_to) = (keys.get(0), keys.get(1));
    let ran = Cell::new(false);
    let zero = |r: UnparkResult, what: &str| {
        assert_eq!(
            counts(r),
            (0, 0, false),
            "an unpark with no waiters gives a zero result: {what}: {r:?}"
        );
        ran.set(true);
    };
    // SAFETY: the case's own key; the callback touches only a cell (module docs).
    let r = unsafe {
        api::unpark_one(key, |r| {
            zero(r, "unpark_one's callback");
            DEFAULT_UNPARK_TOKEN
        })
    };
    assert!(
        ran.replace(false),
        "an unpark with no waiters still runs the callback: unpark_one"
    );
    zero(r, "unpark_one");
    // SAFETY: the case's own key; the callbacks touch only a cell (module docs).
    let r = unsafe {
        api::unpark_filter(
            key,
            |t| panic!("unpark_filter with no waiters called the filter with {t:?}"),
            |r| {
                zero(r, "unpark_filter's callback");
                DEFAULT_UNPARK_TOKEN
            },
        )
    };
    assert!(
        ran.replace(false),
        "an unpark with no waiters still runs the callback: unpark_filter"
    );
    zero(r, "unpark_filter");
    for op in [
        RequeueOp::UnparkOneRequeueRest,
        RequeueOp::RequeueAll,
        RequeueOp::UnparkOne,
        RequeueOp::RequeueOne,
    ] {
        // SAFETY: the case's own keys; the callbacks touch only a cell (module docs).
        let r = unsafe {
            api::unpark_requeue(
                key,
                key_to,
                || op,
                |got, r| {
                    assert_eq!(got, op, "unpark_requeue's callback gets validate's op");
                    zero(r, "unpark_requeue's callback");
                    DEFAULT_UNPARK_TOKEN
                },
            )
        };
        assert!(
            ran.replace(false),
            "an unpark with no waiters still runs the callback: unpark_requeue with {op:?}"
        );
        zero(r, "unpark_requeue");
    }
    // SAFETY: the case's own key (module docs).
    let woken = unsafe { api::unpark_all(key, DEFAULT_UNPARK_TOKEN) };
    assert_eq!(woken, 0, "unpark_all returns the number woken (no waiters)");
}

// ---------------------------------------------------------------------------------------
// 11. deadlines, validate, before_sleep, three threads on a key

/// A park whose deadline has already passed still queues (its `validate` runs once and says
/// yes, its `before_sleep` runs once) and then times out at once, with `timed_out` given the
/// key and "was last"; it leaves nothing queued.
pub(crate) fn past_deadline_times_out() {
    let keys = Keys::new();
    let key = keys.get(0);
    let (validated, slept, timed_out) = (Cell::new(0), Cell::new(0), Cell::new(0));
    // Computed before the park, so it has passed (or is passing) by the time the thread sleeps.
    let deadline = api::now();
    // SAFETY: the case's own key; the callbacks touch only cells (module docs).
    let r = unsafe {
        api::park(
            key,
            || {
                validated.set(validated.get() + 1);
                true
            },
            || slept.set(slept.get() + 1),
            |k, was_last| {
                assert_eq!(
                    (k, was_last),
                    (key, true),
                    "a past deadline times out with the key and was_last"
                );
                timed_out.set(timed_out.get() + 1);
            },
            DEFAULT_PARK_TOKEN,
            Some(deadline),
        )
    };
    assert_eq!(
        (r, validated.get(), slept.get(), timed_out.get()),
        (ParkResult::TimedOut, 1, 1, 1),
        "a past deadline times out at once: (result, validate, before_sleep, timed_out) calls"
    );
    // SAFETY: the case's own key; the callback touches nothing (module docs).
    let r = unsafe { api::unpark_one(key, |_| DEFAULT_UNPARK_TOKEN) };
    assert_eq!(
        counts(r),
        (0, 0, false),
        "a past deadline times out at once: it leaves the queue"
    );
}

/// `validate` runs exactly once per `park`, whatever the park's end: here an untimed park
/// that an unpark ends (a past deadline is `past_deadline_times_out`).
pub(crate) fn validate_runs_once() {
    let keys = Keys::new();
    let key = keys.get(0);
    let asleep = Arc::new(AtomicUsize::new(0));
    let validated = Arc::new(AtomicUsize::new(0));
    let waiter = {
        let (asleep, validated) = (Arc::clone(&asleep), Arc::clone(&validated));
        thread::spawn(move || {
            // SAFETY: the case's own key; the callbacks touch only atomics (module docs).
            let r = unsafe {
                api::park(
                    key,
                    || {
                        validated.fetch_add(1, SeqCst);
                        true
                    },
                    || {
                        asleep.fetch_add(1, SeqCst);
                    },
                    |_, _| {},
                    DEFAULT_PARK_TOKEN,
                    None,
                )
            };
            assert_eq!(r, unparked(5), "validate runs once: the park ends unparked");
        })
    };
    wait_for(&asleep, 1, "the thread to park");
    // SAFETY: the case's own key; the callback touches nothing (module docs).
    unsafe { api::unpark_one(key, |_| UnparkToken(5)) };
    join_all(vec![waiter]);
    assert_eq!(
        validated.load(SeqCst),
        1,
        "validate runs once per park (an unparked park)"
    );
}

/// Under the clock-driven timeouts a timed park never times out before its deadline: the
/// clock is moved to just short of it first (nothing may happen), then past it, and the
/// thread checks, when `park` returns `TimedOut`, that the clock has reached the deadline.
/// (`Timeouts::CheckerChooses` times out early on purpose and fails this case.)
pub(crate) fn no_timeout_before_the_deadline() {
    let keys = Keys::new();
    let key = keys.get(0);
    let asleep = Arc::new(AtomicUsize::new(0));
    let waiter = {
        let asleep = Arc::clone(&asleep);
        thread::spawn(move || {
            let deadline = api::now() + DEADLINE;
            // SAFETY: the case's own key; the callbacks touch only an atomic (module docs).
            let r = unsafe {
                api::park(
                    key,
                    || true,
                    || {
                        asleep.fetch_add(1, SeqCst);
                    },
                    |_, _| {},
                    DEFAULT_PARK_TOKEN,
                    Some(deadline),
                )
            };
            let at = api::now();
            assert!(
                r == ParkResult::TimedOut && at >= deadline,
                "no timeout before the deadline: park returned {r:?} {:?} before its deadline",
                deadline.saturating_duration_since(at)
            );
        })
    };
    wait_for(&asleep, 1, "the timed thread to park");
    api::advance_clock(DEADLINE / 2);
    api::advance_clock(DEADLINE);
    join_all(vec![waiter]);
}

/// `before_sleep` runs after the bucket lock is released and after the thread is queued: a
/// `before_sleep` that unparks its own key finds its own thread and wakes it, so `park`
/// returns at once with that unpark's token (a `before_sleep` run under the lock would
/// deadlock on it).
pub(crate) fn before_sleep_unparks_its_own_key() {
    let keys = Keys::new();
    let key = keys.get(0);
    let found = Cell::new(None);
    // SAFETY: the case's own key; `before_sleep` unparks (allowed: the lock is released
    // then), its callback touches only a cell (module docs).
    let r = unsafe {
        api::park(
            key,
            || true,
            || {
                let r = api::unpark_one(key, |r| {
                    found.set(Some(counts(r)));
                    UnparkToken(7)
                });
                found.set(Some(counts(r)));
            },
            |_, _| {},
            DEFAULT_PARK_TOKEN,
            None,
        )
    };
    assert_eq!(
        (r, found.get()),
        (unparked(7), Some((1, 0, false))),
        "before_sleep runs outside the lock, once the thread is queued: its unpark of its own \
         key wakes it"
    );
}

/// Three threads on one key: a filter that skips the first, unparks the second and stops at
/// the third sees them in park order and reports more threads; a second scan unparks the
/// first and skips the third; a third scan unparks the last.
pub(crate) fn filter_three_on_a_key() {
    let keys = Keys::new();
    let key = keys.get(0);
    let waiters = park_in_order(&[
        (key, 1, unparked(42), "a skipped thread stays parked"),
        (
            key,
            2,
            unparked(41),
            "FilterOp::Unpark between a Skip and a Stop",
        ),
        (key, 3, unparked(43), "a thread after a Stop stays parked"),
    ]);
    let scans: [Scan; 3] = [
        (
            &[
                (1, FilterOp::Skip),
                (2, FilterOp::Unpark),
                (3, FilterOp::Stop),
            ],
            &[1, 2, 3],
            (1, 0, true),
            41,
        ),
        (
            &[(1, FilterOp::Unpark), (3, FilterOp::Skip)],
            &[1, 3],
            (1, 0, true),
            42,
        ),
        (&[(3, FilterOp::Unpark)], &[3], (1, 0, false), 43),
    ];
    scan(key, &scans, "three threads on a key");
    join_all(waiters);
}

/// A timed thread requeued behind an untimed one: when it times out on the key it was moved
/// to, `timed_out` says it was not the last there; the untimed thread is still parked on
/// that key, and once it is unparked the key is empty.
pub(crate) fn requeued_timeout_not_last() {
    let keys = Keys::new();
    let (from, to) = (keys.get(0), keys.get(1));
    let mut handles = park_in_order(&[(to, 1, unparked(9), "the untimed thread stays parked")]);
    let asleep = Arc::new(AtomicUsize::new(0));
    handles.push({
        let asleep = Arc::clone(&asleep);
        thread::spawn(move || {
            // SAFETY: the case's own keys; the callbacks touch only an atomic (module docs).
            let r = unsafe {
                api::park(
                    from,
                    || true,
                    || {
                        asleep.fetch_add(1, SeqCst);
                    },
                    |k, was_last| {
                        assert!(
                            k == to && !was_last,
                            "was_last after unpark_requeue: timed out on {k:#x} with was_last \
                             {was_last}, expected {to:#x} (requeued there) and false (the \
                             untimed thread is there)"
                        );
                    },
                    ParkToken(2),
                    Some(api::now() + DEADLINE),
                )
            };
            assert_eq!(
                r,
                ParkResult::TimedOut,
                "the requeued timed thread times out"
            );
        })
    });
    wait_for(&asleep, 1, "the timed thread to park");
    // SAFETY: the case's own keys; the callback touches nothing (module docs).
    let r = unsafe {
        api::unpark_requeue(
            from,
            to,
            || RequeueOp::RequeueAll,
            |_, _| DEFAULT_UNPARK_TOKEN,
        )
    };
    assert_eq!(counts(r), (0, 1, false), "the timed thread is requeued");
    api::advance_clock(DEADLINE);
    // The timed thread is the second handle: join it before unparking the first.
    let timed = handles.pop().expect("two threads");
    join_all(vec![timed]);
    drain(
        to,
        &[1],
        9,
        "the untimed thread is still parked where it was",
    );
    join_all(handles);
}

// ---------------------------------------------------------------------------------------
// 12. the contract (the model only: the real crate would deadlock or corrupt its queue)

/// A `before_sleep` may call an `unpark_*` (the lock is released then) but not `park`, also
/// after such a call: the model fails the run, naming the rule. (A model that let the `park`
/// through would see it return `Invalid`, and the thread then wakes itself, so the run
/// passes.)
#[cfg(any(feature = "loom", feature = "shuttle"))]
pub(crate) fn contract_park_after_an_unpark_in_before_sleep() {
    let keys = Keys::new();
    let (key, other) = (keys.get(0), keys.get(1));
    // SAFETY: deliberately broken: `before_sleep` parks after an allowed unpark; the model
    // fails the run there, before anything is queued on `other`.
    unsafe {
        api::park(
            key,
            || true,
            || {
                api::unpark_one(other, |_| DEFAULT_UNPARK_TOKEN);
                api::park(other, || false, || {}, |_, _| {}, DEFAULT_PARK_TOKEN, None);
                api::unpark_one(key, |_| DEFAULT_UNPARK_TOKEN);
            },
            |_, _| {},
            DEFAULT_PARK_TOKEN,
            None,
        )
    };
}

/// Two `unpark_requeue` calls between the same two keys in opposite directions, at once,
/// each with a thread to move: both finish (the real crate locks two buckets in one order,
/// whatever the direction), and both threads are still parked on one key or the other.
pub(crate) fn requeue_both_ways_at_once() {
    let keys = Keys::new();
    let (a, b) = (keys.get(0), keys.get(1));
    let property = "two requeues between the same keys at once";
    let waiters = park_in_order(&[
        (a, 1, unparked(50), property),
        (b, 2, unparked(50), property),
    ]);
    let requeue = |from: usize, to: usize| {
        // SAFETY: the case's own keys; the callbacks return constants (module docs).
        unsafe {
            api::unpark_requeue(
                from,
                to,
                || RequeueOp::RequeueOne,
                |_, _| DEFAULT_UNPARK_TOKEN,
            )
        }
        .requeued_threads
    };
    let other = thread::spawn(move || requeue(b, a));
    let moved = requeue(a, b);
    let other_moved = other
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p));
    let mut found = 0;
    for key in [a, b] {
        // SAFETY: the case's own key (module docs).
        found += unsafe { api::unpark_all(key, UnparkToken(50)) };
    }
    assert!(
        found == 2 && moved + other_moved >= 1,
        "{property}: {moved} and {other_moved} moved, {found} of 2 threads found on the two \
         keys afterwards"
    );
    join_all(waiters);
}
