//! The event's scenario, written once with `parkcheck::sync`'s threads and run by loom, by
//! shuttle and on real threads; and the check shown to catch the deliberate flaw.

use event_a::Event;
use parkcheck::sync::atomic::{AtomicUsize, Ordering};
use parkcheck::sync::{Arc, thread};
use std::time::Duration;

/// One thread writes a value and sets the event; two wait for it (one with a deadline that a
/// fourth thread's clock move passes) and read the value when their wait says "set".
fn set_wakes_every_waiter(make: fn() -> Event) {
    let event = Arc::new(make());
    let value = Arc::new(AtomicUsize::new(0));
    let (e, v) = (Arc::clone(&event), Arc::clone(&value));
    let waiter = thread::spawn(move || {
        assert!(e.wait_until(None), "an untimed wait returns only once set");
        assert_eq!(
            v.load(Ordering::Relaxed),
            7,
            "a waiter sees what came before `set`"
        );
    });
    let (e, v) = (Arc::clone(&event), Arc::clone(&value));
    let timed = thread::spawn(move || {
        let deadline = parkcheck::now() + Duration::from_millis(5);
        if e.wait_until(Some(deadline)) {
            assert_eq!(
                v.load(Ordering::Relaxed),
                7,
                "so does a timed one that saw it"
            );
        }
    });
    // The clock moves from a thread of its own, so the checker explores where the move
    // falls among the others' steps (the timed wait may time out before or after `set`).
    let clock = thread::spawn(|| parkcheck::advance_clock(Duration::from_millis(5)));
    value.store(7, Ordering::Relaxed);
    event.set();
    for t in [waiter, timed, clock] {
        t.join().unwrap();
    }
}

#[cfg(feature = "loom")]
fn check(make: fn() -> Event) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3); // every interleaving within 3 preemptions
    builder.check(move || set_wakes_every_waiter(make));
}

#[cfg(feature = "shuttle")]
fn check(make: fn() -> Event) {
    shuttle::check_random(move || set_wakes_every_waiter(make), 1000);
    shuttle::check_pct(move || set_wakes_every_waiter(make), 1000, 3);
}

#[cfg(not(any(feature = "loom", feature = "shuttle")))]
fn check(make: fn() -> Event) {
    for _ in 0..100 {
        set_wakes_every_waiter(make);
    }
}

#[test]
fn set_wakes_every_waiter_in_every_schedule() {
    check(Event::new);
}

/// The deliberate flaw, a `set` that wakes nobody, is caught: the checker reports a deadlock
/// (and parkcheck names the thread left parked, its key and its `park` call).
#[cfg(any(feature = "loom", feature = "shuttle"))]
#[test]
fn a_set_that_wakes_nobody_is_caught() {
    let failed = std::panic::catch_unwind(|| check(Event::forgetful));
    let payload = failed.expect_err("the lost wake-up must be caught");
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        message.contains("deadlock"),
        "a lost wake-up is a deadlock: {message}"
    );
}
