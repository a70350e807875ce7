//! The README's example, compiled and run in every build: a one-shot event written on
//! `parking_lot_core`, switched to parkcheck by one import, with a loom model, a shuttle test
//! and a real-thread test of the same scenario. Run with `cargo test -p parkcheck --test
//! event` (real), `--features loom`, `--features shuttle`.
//!
//! The scenario's check is shown to catch a real flaw: the same event with a `set` that
//! forgets to wake the parked threads (`Event::forgetful`) fails it under loom (a deadlock:
//! the waiter never returns) and under shuttle.

#![allow(unreachable_pub)]

mod event {
    // The one import: under a checker the park table is parkcheck's model.
    #[cfg(any(feature = "loom", feature = "shuttle"))]
    use parkcheck as parking_lot_core;

    // The primitive's atomics come from the checker too (std's in the real build).
    use parkcheck::sync::atomic::{AtomicUsize, Ordering};
    use parking_lot_core::{DEFAULT_PARK_TOKEN, DEFAULT_UNPARK_TOKEN, ParkResult};
    use std::time::Instant;

    const UNSET: usize = 0;
    const SET: usize = 1;
    /// Unset, and some thread is parked (or about to park) on the event.
    const PARKED: usize = 2;

    /// A one-shot event: `wait` blocks until `set` has been called.
    #[derive(Debug)]
    pub struct Event {
        state: AtomicUsize,
        /// The deliberate flaw of the example's catch test: `set` never wakes anyone.
        forgetful: bool,
    }

    impl Event {
        // `const` in the real build only: the checkers' atomics cannot be built in a `const`.
        parkcheck::const_fn! {
            /// An event not set yet.
            pub fn new() -> Event {
                Event { state: AtomicUsize::new(UNSET), forgetful: false }
            }
        }

        /// An event whose `set` forgets to wake the parked threads.
        #[cfg_attr(not(any(feature = "loom", feature = "shuttle")), allow(dead_code))]
        pub fn forgetful() -> Event {
            Event {
                forgetful: true,
                ..Event::new()
            }
        }

        fn key(&self) -> usize {
            self as *const Event as usize
        }

        /// Sets the event and wakes every thread waiting for it.
        pub fn set(&self) {
            // Release: pairs with the Acquire load in `wait_until`, so a waiter that sees
            // `SET` sees what this thread did before.
            let old = self.state.swap(SET, Ordering::Release);
            if old == PARKED && !self.forgetful {
                // SAFETY: the key is this event's address, which it controls; `unpark_all`
                // takes no callback.
                unsafe { parking_lot_core::unpark_all(self.key(), DEFAULT_UNPARK_TOKEN) };
            }
        }

        /// Waits until the event is set (`true`) or `deadline` passes (`false`). Deadlines
        /// come from `parkcheck::now()`, the checkers' clock.
        pub fn wait_until(&self, deadline: Option<Instant>) -> bool {
            loop {
                // Acquire: pairs with the Release swap in `set`.
                let s = self.state.load(Ordering::Acquire);
                if s == SET {
                    return true;
                }
                if s == UNSET
                    && self
                        .state
                        .compare_exchange(UNSET, PARKED, Ordering::Relaxed, Ordering::Relaxed)
                        .is_err()
                {
                    continue;
                }
                // SAFETY:
                // - the key is this event's address, which it controls;
                // - `validate` only loads an atomic: it neither unwinds nor calls into the
                //   park table (it runs under the bucket lock);
                // - `before_sleep` and `timed_out` do nothing.
                let r = unsafe {
                    parking_lot_core::park(
                        self.key(),
                        || self.state.load(Ordering::Relaxed) == PARKED,
                        || {},
                        |_, _| {},
                        DEFAULT_PARK_TOKEN,
                        deadline,
                    )
                };
                if r == ParkResult::TimedOut {
                    // Acquire: as above.
                    return self.state.load(Ordering::Acquire) == SET;
                }
            }
        }
    }
}

use event::Event;
use parkcheck::sync::{Arc, thread};

/// The scenario, written once: one thread sets the event after writing a value; two wait for
/// it (one with a deadline the clock passes) and read the value when the wait says "set".
fn set_wakes_every_waiter(make: fn() -> Event) {
    let event = Arc::new(make());
    let value = Arc::new(parkcheck::sync::atomic::AtomicUsize::new(0));
    let waiter = {
        let (event, value) = (Arc::clone(&event), Arc::clone(&value));
        thread::spawn(move || {
            assert!(
                event.wait_until(None),
                "an untimed wait returns only once set"
            );
            let seen = value.load(parkcheck::sync::atomic::Ordering::Relaxed);
            assert_eq!(seen, 7, "a waiter sees what the setter did before `set`");
        })
    };
    let timed = {
        let (event, value) = (Arc::clone(&event), Arc::clone(&value));
        thread::spawn(move || {
            let deadline = parkcheck::now() + std::time::Duration::from_millis(5);
            if event.wait_until(Some(deadline)) {
                let seen = value.load(parkcheck::sync::atomic::Ordering::Relaxed);
                assert_eq!(
                    seen, 7,
                    "a timed waiter that saw `set` sees what came before it"
                );
            }
        })
    };
    value.store(7, parkcheck::sync::atomic::Ordering::Relaxed);
    event.set();
    parkcheck::advance_clock(std::time::Duration::from_millis(5));
    waiter.join().unwrap();
    timed.join().unwrap();
}

#[cfg(feature = "loom")]
mod loom_model {
    use super::*;

    /// Every interleaving within preemption bound 3 (the model has three threads).
    fn explore(make: fn() -> Event) {
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = Some(3);
        builder.check(move || set_wakes_every_waiter(make));
    }

    #[test]
    fn event_set_wakes_every_waiter() {
        explore(Event::new);
    }

    #[test]
    fn catches_a_set_that_wakes_nobody() {
        let failed = std::panic::catch_unwind(|| explore(Event::forgetful));
        let payload = failed.expect_err("loom must catch the lost wakeup");
        let msg = payload
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        assert!(
            msg.contains("deadlock"),
            "the lost wakeup is a deadlock: {msg}"
        );
    }
}

#[cfg(feature = "shuttle")]
mod shuttle_test {
    use super::*;

    #[test]
    fn event_set_wakes_every_waiter() {
        shuttle::check_random(|| set_wakes_every_waiter(Event::new), 1000);
        shuttle::check_pct(|| set_wakes_every_waiter(Event::new), 1000, 3);
    }

    #[test]
    fn catches_a_set_that_wakes_nobody() {
        let failed = std::panic::catch_unwind(|| {
            shuttle::check_random(|| set_wakes_every_waiter(Event::forgetful), 1000)
        });
        let payload = failed.expect_err("shuttle must catch the lost wakeup");
        let msg = payload
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        assert!(
            msg.contains("deadlock"),
            "the lost wakeup is a deadlock: {msg}"
        );
    }
}

#[cfg(not(any(feature = "loom", feature = "shuttle")))]
#[test]
fn event_set_wakes_every_waiter() {
    for _ in 0..100 {
        set_wakes_every_waiter(Event::new);
    }
}
