//! A one-shot event on `parking_lot_core`, checked with parkcheck (setup (a)).

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

/// A one-shot event: `wait_until` blocks until `set` has been called.
#[derive(Debug)]
pub struct Event {
    state: AtomicUsize,
    /// A deliberate flaw, for showing that the checks catch it: `set` wakes nobody.
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

    /// An event whose `set` forgets to wake the parked threads (the deliberate flaw).
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
        // Release: pairs with the Acquire loads in `wait_until`, so a waiter that sees `SET`
        // sees what this thread did before.
        let old = self.state.swap(SET, Ordering::Release);
        if old == PARKED && !self.forgetful {
            // SAFETY: the key is this event's address, which it controls; `unpark_all`
            // takes no callback.
            unsafe { parking_lot_core::unpark_all(self.key(), DEFAULT_UNPARK_TOKEN) };
        }
    }

    /// Waits until the event is set (`true`) or `deadline` passes (`false`). Deadlines come
    /// from `parkcheck::now()`, the checkers' clock (`Instant::now()` in the real build).
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
            // - `validate` only loads an atomic: it neither unwinds nor calls into the park
            //   table (it runs under the bucket lock);
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
