//! The cases of `parking_lot_core` 0.9's one behaviour 0.10 dropped, `UnparkResult::be_fair`
//! (run by `conformance_0_9.rs` only): which unparks consult a bucket's fair timer, and when
//! it is due. The first three hold on the real crate as well as in the model: each moves the
//! clock by 2 ms before the unpark it expects to be fair (on real threads a 2 ms sleep, after
//! which any bucket's timer is due, whatever used it before: it is never set more than 1 ms
//! ahead). The last two are the model's own: the real table's timers start when the process's
//! table is created and then wait a random 0 to 1 ms, neither of which a case can control.
//!
//! Safety of the calls into the park table: as in `cases.rs` (the case's own keys; callbacks
//! that touch only cells).

use std::cell::Cell;
use std::time::Duration;

use crate::api;
use crate::api::{
    DEFAULT_UNPARK_TOKEN, FilterOp, ParkResult, ParkToken, RequeueOp, UnparkResult, UnparkToken,
};
use crate::cases::{Keys, join_all, park_in_order, unparked};

/// More than the fair timer ever waits after a fair unpark (under 1 ms).
const DUE: Duration = Duration::from_millis(2);

/// Which unpark a case calls.
#[derive(Clone, Copy, Debug)]
enum Unpark {
    One,
    Filter,
    Requeue,
}

const ALL: [Unpark; 3] = [Unpark::One, Unpark::Filter, Unpark::Requeue];

/// Calls `how` on `key` (`unpark_requeue` with `UnparkOne`, to `other`), handing the woken
/// thread, if any, `UnparkToken(token)`; asserts that the callback and the returned result
/// agree on `be_fair`, and returns it with the number of threads woken.
fn unpark(how: Unpark, key: usize, other: usize, token: usize) -> (bool, usize) {
    let seen = Cell::new(None);
    let callback = |r: UnparkResult| {
        seen.set(Some(r.be_fair));
        UnparkToken(token)
    };
    // SAFETY: the case's own keys; the callbacks touch only a cell (module docs).
    let r = unsafe {
        match how {
            Unpark::One => api::unpark_one(key, callback),
            Unpark::Filter => api::unpark_filter(key, |_| FilterOp::Unpark, callback),
            Unpark::Requeue => {
                api::unpark_requeue(key, other, || RequeueOp::UnparkOne, |_, r| callback(r))
            }
        }
    };
    assert_eq!(
        seen.get(),
        Some(r.be_fair),
        "be_fair: {how:?}'s callback and its result agree"
    );
    (r.be_fair, r.unparked_threads)
}

/// Parks one thread on `key`, unparks it with `how` and returns `be_fair`.
fn park_then_unpark(
    how: Unpark,
    key: usize,
    other: usize,
    token: usize,
    what: &'static str,
) -> bool {
    let handles = park_in_order(&[(key, token, unparked(token), what)]);
    let (fair, woken) = unpark(how, key, other, token);
    assert_eq!(woken, 1, "{what}: {how:?} woke the parked thread");
    join_all(handles);
    fair
}

/// An unpark that wakes nobody does not consult the timer, and says `be_fair` false even
/// when the timer is due; the next one that wakes a thread finds it still due.
pub(crate) fn fair_only_when_waking() {
    let keys = Keys::new();
    let (key, other) = (keys.get(0), keys.get(1));
    api::advance_clock(DUE);
    let property = "be_fair: only an unpark that wakes a thread consults the fair timer";
    for how in ALL {
        let (fair, woken) = unpark(how, key, other, 1);
        assert_eq!(
            (fair, woken),
            (false, 0),
            "{property}: {how:?} with nobody parked"
        );
    }
    // A park that times out (its deadline already passed) touches no timer either.
    // SAFETY: the case's own key; the callbacks touch nothing (module docs).
    let r = unsafe {
        api::park(
            key,
            || true,
            || {},
            |_, _| {},
            ParkToken(2),
            Some(api::now()),
        )
    };
    assert_eq!(
        r,
        ParkResult::TimedOut,
        "{property}: a past deadline times out"
    );
    // A thread parked but skipped by the filter, then moved by a requeue that wakes nobody.
    let handles = park_in_order(&[(key, 3, unparked(3), property)]);
    let seen = Cell::new(None);
    let callback = |r: UnparkResult| {
        seen.set(Some(r.be_fair));
        DEFAULT_UNPARK_TOKEN
    };
    // SAFETY: the case's own keys; the callbacks touch only a cell (module docs).
    let skipped = unsafe { api::unpark_filter(key, |_| FilterOp::Skip, callback) };
    assert_eq!(
        (skipped.be_fair, skipped.unparked_threads, seen.get()),
        (false, 0, Some(false)),
        "{property}: a filter that skips every parked thread"
    );
    // SAFETY: as above.
    let moved =
        unsafe { api::unpark_requeue(key, other, || RequeueOp::RequeueAll, |_, r| callback(r)) };
    assert_eq!(
        (moved.be_fair, moved.requeued_threads, seen.get()),
        (false, 1, Some(false)),
        "{property}: a requeue that wakes nobody"
    );
    let (fair, woken) = unpark(Unpark::One, other, key, 3);
    assert_eq!(
        (fair, woken),
        (true, 1),
        "{property}: the requeued thread's first waking unpark on its new key, its timer due"
    );
    join_all(handles);
    assert!(
        park_then_unpark(Unpark::One, key, other, 4, property),
        "{property}: the first unpark that woke a thread, with the timer due, was not fair"
    );
}

/// Each of `unpark_one`, `unpark_filter` and `unpark_requeue` that wakes a thread is fair once
/// the timer is due.
pub(crate) fn fair_once_due() {
    let keys = Keys::new();
    let (key, other) = (keys.get(0), keys.get(1));
    let property = "be_fair: a waking unpark is fair once its bucket's timer is due";
    for (i, how) in ALL.into_iter().enumerate() {
        api::advance_clock(DUE);
        assert!(
            park_then_unpark(how, key, other, 10 + i, property),
            "{property}: {how:?} was not fair {DUE:?} after the last fair unpark"
        );
    }
}

/// `unpark_all` does not consult the timer: after it, the timer is as due as before.
pub(crate) fn fair_unpark_all_leaves_the_timer() {
    let keys = Keys::new();
    let (key, other) = (keys.get(0), keys.get(1));
    let property = "be_fair: unpark_all does not use up the fair timer";
    let handles = park_in_order(&[(key, 7, unparked(7), property)]);
    api::advance_clock(DUE);
    // SAFETY: the case's own key.
    let woken = unsafe { api::unpark_all(key, UnparkToken(7)) };
    assert_eq!(woken, 1, "{property}: unpark_all woke the parked thread");
    join_all(handles);
    assert!(
        park_then_unpark(Unpark::One, key, other, 8, property),
        "{property}: the unpark_one right after unpark_all was not fair"
    );
}

/// The model's initial state: a bucket's timer starts due, so its first waking unpark is
/// fair without the clock having moved (the real timer starts at the table's creation).
#[cfg(any(feature = "loom", feature = "shuttle"))]
pub(crate) fn fair_timer_starts_due() {
    let keys = Keys::new();
    let (key, other) = (keys.get(0), keys.get(1));
    let property = "be_fair: a bucket's fair timer starts due";
    assert!(
        park_then_unpark(Unpark::One, key, other, 1, property),
        "{property}: the first waking unpark on a new key was not fair"
    );
}

/// A fair unpark sets the timer 0 to 1 ms ahead: the next waking unpark, with the clock
/// unmoved, is not fair; after the clock moves 1 ms, one is again.
#[cfg(any(feature = "loom", feature = "shuttle"))]
pub(crate) fn fair_timer_rearms() {
    let keys = Keys::new();
    let (key, other) = (keys.get(0), keys.get(1));
    let property = "be_fair: a fair unpark makes the timer due again only later";
    let fair = [1, 2].map(|t| park_then_unpark(Unpark::One, key, other, t, property));
    assert_eq!(
        fair,
        [true, false],
        "{property}: two waking unparks, the clock unmoved"
    );
    api::advance_clock(Duration::from_millis(1));
    assert!(
        park_then_unpark(Unpark::Filter, key, other, 3, property),
        "{property}: a waking unpark 1 ms after the last fair one was not fair"
    );
}

/// `unpark_requeue` consults `key_from`'s timer, not `key_to`'s: with `key_from`'s timer used
/// up (and the clock unmoved), an `UnparkOneRequeueRest` that wakes one thread and moves the
/// other is not fair, though `key_to`'s fresh timer is due; the moved thread's first waking
/// unpark on `key_to` then is.
#[cfg(any(feature = "loom", feature = "shuttle"))]
pub(crate) fn fair_requeue_uses_the_from_key() {
    let keys = Keys::new();
    let (key, other) = (keys.get(0), keys.get(1));
    let property = "be_fair: unpark_requeue consults key_from's timer";
    assert!(
        park_then_unpark(Unpark::One, key, other, 1, property),
        "{property}: the first waking unpark on a new key was not fair"
    );
    let handles = park_in_order(&[
        (key, 2, unparked(2), property),
        (key, 3, unparked(3), property),
    ]);
    let seen = Cell::new(None);
    // SAFETY: the case's own keys; the callback touches only a cell (module docs).
    let r = unsafe {
        api::unpark_requeue(
            key,
            other,
            || RequeueOp::UnparkOneRequeueRest,
            |_, r| {
                seen.set(Some(r.be_fair));
                UnparkToken(2)
            },
        )
    };
    assert_eq!(
        (
            r.be_fair,
            r.unparked_threads,
            r.requeued_threads,
            seen.get()
        ),
        (false, 1, 1, Some(false)),
        "{property}: key_from's timer is used up"
    );
    let (fair, woken) = unpark(Unpark::One, other, key, 3);
    assert_eq!(
        (fair, woken),
        (true, 1),
        "{property}: key_to's timer is its own, and due"
    );
    join_all(handles);
}
