//! rsevents 0.3.1's events (generated from their published source, on parkcheck's model of
//! `parking_lot_core` 0.9) under loom or shuttle: `cargo test -p parkcheck-parking-lot-0-12
//! --features loom --test events` (or `shuttle`). Each model runs under each fair timer, at
//! preemption bound 3 under loom and 1 000 random plus 1 000 PCT schedules under shuttle.

#![cfg(any(feature = "loom", feature = "shuttle"))]

#[path = "../../models.rs"]
#[allow(dead_code, reason = "only its plain cell is used here")]
mod models;
#[path = "../../runner.rs"]
mod runner;

use models::Cell;

use parkcheck_parking_lot_0_12 as pl;

use std::time::Duration;

use parkcheck::sync::Arc;

use parkcheck::sync::atomic::{AtomicUsize, Ordering::SeqCst};

use parkcheck::sync::thread;

use parkcheck_parking_lot_0_12::{AutoResetEvent, Awaitable, EventState, ManualResetEvent};

const VERSION: &str = "rsevents 0.3.1 on parking_lot_core 0.9";

/// As the parking_lot 0.12 models: each fair timer (rsevents does not read `be_fair`, so the
/// three runs show that its code does not depend on it).
const SETTINGS: &[(&str, parkcheck::Settings)] = &[
    ("be_fair by the clock", fair(parkcheck::FairTimer::Clock)),
    ("be_fair always", fair(parkcheck::FairTimer::Always)),
    ("be_fair never", fair(parkcheck::FairTimer::Never)),
];

const fn fair(fair_timer: parkcheck::FairTimer) -> parkcheck::Settings {
    let mut settings = parkcheck::Settings::DEFAULT;
    settings.fair_timer = fair_timer;
    settings
}

const SCHEDULES: usize = 1000;

/// An auto-reset event wakes one waiter per `set`, and no `set` is lost: two waiters; the
/// main thread writes the cell and sets it, waits until one waiter has returned, and sets it
/// again; both return, each seeing the write before a set, and the event is unset afterwards
/// (each set was taken once).
fn auto_reset_wakes_one_per_set() {
    let shared = Arc::new((
        AutoResetEvent::new(EventState::Unset),
        AtomicUsize::new(0),
        Cell::new(),
    ));
    // The first use, on the thread that built it (`models.rs`, `touch`).
    assert!(!shared.0.wait0(), "a new unset event is unset");
    let waiters: Vec<_> = (0..2)
        .map(|_| {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                shared.0.wait();
                assert_eq!(
                    shared.2.get(),
                    1,
                    "a woken waiter sees what its setter wrote"
                );
                shared.1.fetch_add(1, SeqCst);
            })
        })
        .collect();
    shared.2.bump();
    shared.0.set();
    while shared.1.load(SeqCst) == 0 {
        thread::yield_now();
    }
    shared.0.set();
    for w in waiters {
        w.join().unwrap();
    }
    assert!(
        !shared.0.wait0(),
        "an auto-reset event wakes one waiter per set: it is still set after two sets woke two"
    );
}

/// A timed wait that times out takes nothing: a waiter waits 10 ms, a thread moves the clock
/// past it, the main thread sets the event; afterwards the event is set exactly if the
/// waiter timed out.
fn auto_reset_timed_wait_takes_nothing() {
    const WAIT: Duration = Duration::from_millis(10);
    let event = Arc::new(AutoResetEvent::new(EventState::Unset));
    assert!(!event.wait0(), "a new unset event is unset");
    let waiter = {
        let event = Arc::clone(&event);
        thread::spawn(move || event.wait_for(WAIT))
    };
    let clock = thread::spawn(|| parkcheck::advance_clock(WAIT));
    event.set();
    clock.join().unwrap();
    let got = waiter.join().unwrap();
    assert_eq!(
        event.wait0(),
        !got,
        "a timed-out wait takes nothing, a successful one takes the set (the waiter got {got})"
    );
}

/// A manual-reset event wakes every waiter and stays set.
fn manual_reset_wakes_all() {
    let event = Arc::new(ManualResetEvent::new(EventState::Unset));
    assert!(!event.wait0(), "a new unset event is unset");
    let waiters: Vec<_> = (0..2)
        .map(|_| {
            let event = Arc::clone(&event);
            thread::spawn(move || event.wait())
        })
        .collect();
    event.set();
    for w in waiters {
        w.join().unwrap();
    }
    assert!(event.wait0(), "a manual-reset event stays set");
}

/// The finding (loom only: shuttle models no memory ordering): a manual-reset event's `wait` is not always ordered after the `set` it
/// returns for. One waiter; the main thread writes the cell, then sets the event; the waiter
/// reads the cell after `wait` returns. rsevents 0.3.1's `RawEvent::suspend_all` returns
/// `true` on seeing `AVAILABLE_BIT` through a `Relaxed` load (its first load of the state,
/// the failure value of its `Relaxed` `compare_exchange_weak`, and its reload after an
/// `Invalid` park), so a waiter whose `try_unlock_all` (`Acquire`) saw the event unset and
/// whose next look sees it set returns without synchronizing with the setter's `Release`
/// swap. Loom reports the waiter's read and the setter's write as unordered; with those three
/// loads `Acquire` (tried as a patch, not kept) the model passes at this bound.
#[cfg_attr(
    not(feature = "loom"),
    allow(dead_code, reason = "the loom finding runs it")
)]
fn manual_reset_wait_sees_the_setters_write() {
    let shared = Arc::new((ManualResetEvent::new(EventState::Unset), Cell::new()));
    assert!(!shared.0.wait0(), "a new unset event is unset");
    let waiter = {
        let shared = Arc::clone(&shared);
        thread::spawn(move || {
            shared.0.wait();
            assert_eq!(
                shared.1.get(),
                1,
                "a woken waiter sees what its setter wrote"
            );
        })
    };
    shared.1.bump();
    shared.0.set();
    waiter.join().unwrap();
}

#[test]
fn auto_reset_event_wakes_one_per_set() {
    runner::check(
        "auto_reset_event_wakes_one_per_set",
        Some(3),
        SCHEDULES,
        auto_reset_wakes_one_per_set,
    );
}

#[test]
fn auto_reset_event_timed_wait_takes_nothing() {
    runner::check(
        "auto_reset_event_timed_wait_takes_nothing",
        Some(3),
        SCHEDULES,
        auto_reset_timed_wait_takes_nothing,
    );
}

#[test]
fn manual_reset_event_wakes_all() {
    runner::check(
        "manual_reset_event_wakes_all",
        Some(3),
        SCHEDULES,
        manual_reset_wakes_all,
    );
}

/// The auto-reset model, whose waiters read what the setter wrote, catches rsevents' atomics
/// made `Relaxed` (loom's race report).
#[cfg(feature = "loom")]
#[test]
fn relaxed_atomics_are_caught() {
    let name = "auto_reset_event_wakes_one_per_set";
    let failure = runner::failure_under(
        name,
        Some(3),
        SCHEDULES,
        auto_reset_wakes_one_per_set,
        |run| pl::with_relaxed_orderings(run),
    );
    assert!(
        failure
            .as_deref()
            .is_some_and(|m| m.contains("Causality violation")),
        "{name}: relaxed atomics were not caught as a race: {failure:?}"
    );
}

/// The finding (`manual_reset_wait_sees_the_setters_write`), asserted as it stands in
/// rsevents 0.3.1: loom reports the race in the published code, with no flaw added. A
/// release that orders the wait after the set makes this test fail; the model then belongs
/// with the passing ones.
#[cfg(feature = "loom")]
#[test]
fn finding_manual_reset_wait_is_not_ordered_after_set() {
    let name = "manual_reset_wait_sees_the_setters_write";
    let failure = runner::failure_under(
        name,
        Some(3),
        SCHEDULES,
        manual_reset_wait_sees_the_setters_write,
        |run| run(),
    );
    assert!(
        failure
            .as_deref()
            .is_some_and(|m| m.contains("Causality violation")),
        "{name}: the race in rsevents 0.3.1's ManualResetEvent::wait was not seen: {failure:?}"
    );
    println!("rsevents 0.3.1 {name}: loom reports the waiter's read unordered after the set");
}
