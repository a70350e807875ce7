//! Two threads wait for the flag while a third raises it, under loom, shuttle or real
//! threads.

use flag_b::Flag;
use parking_lot_core::sync::{Arc, thread};

fn raise_wakes_every_waiter() {
    waiters_return_after(Flag::raise);
}

/// Two waiters, and `raise` called with `raise`.
fn waiters_return_after(raise: fn(&Flag)) {
    let flag = Arc::new(Flag::new());
    let waiters: Vec<_> = (0..2)
        .map(|_| {
            let flag = Arc::clone(&flag);
            thread::spawn(move || flag.wait())
        })
        .collect();
    raise(&flag);
    for w in waiters {
        w.join().unwrap();
    }
}

#[test]
fn raise_wakes_every_waiter_in_every_schedule() {
    #[cfg(feature = "loom")]
    loom::model(raise_wakes_every_waiter);
    #[cfg(feature = "shuttle")]
    shuttle::check_random(raise_wakes_every_waiter, 1000);
    #[cfg(not(any(feature = "loom", feature = "shuttle")))]
    raise_wakes_every_waiter();
}

/// The deliberate flaw, a raise that wakes nobody, is caught: a waiter that parked before it
/// is never woken, and the checker reports a deadlock. Under shuttle only: loom reports this
/// deadlock too, but then aborts the process while unwinding the stopped execution ("panic
/// in a destructor during cleanup"), so a test cannot catch it there; parkcheck's report of
/// the parked threads is printed before the abort.
#[cfg(feature = "shuttle")]
#[test]
fn a_raise_that_wakes_nobody_is_caught() {
    let failed = std::panic::catch_unwind(|| {
        shuttle::check_random(|| waiters_return_after(Flag::raise_without_waking), 1000)
    });
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
