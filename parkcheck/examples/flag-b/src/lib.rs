//! A flag threads wait for, on `parking_lot_core`, checked with parkcheck (setup (b)): the
//! dependency named `parking_lot_core` is parkcheck, so its `sync`, `const_fn!` and `now()`
//! are reached through that name.

use parking_lot_core::sync::atomic::{AtomicBool, Ordering};
use parking_lot_core::{DEFAULT_PARK_TOKEN, DEFAULT_UNPARK_TOKEN};

/// A flag: `wait` blocks until `raise` has been called.
#[derive(Debug)]
pub struct Flag {
    raised: AtomicBool,
}

impl Flag {
    parking_lot_core::const_fn! {
        /// A flag not raised yet.
        pub fn new() -> Flag {
            Flag { raised: AtomicBool::new(false) }
        }
    }

    fn key(&self) -> usize {
        self as *const Flag as usize
    }

    /// Raises the flag and wakes every thread waiting for it.
    pub fn raise(&self) {
        // Release: pairs with the Acquire load in `wait`.
        self.raised.store(true, Ordering::Release);
        // SAFETY: the key is this flag's address; `unpark_all` takes no callback.
        unsafe { parking_lot_core::unpark_all(self.key(), DEFAULT_UNPARK_TOKEN) };
    }

    /// Raises the flag and wakes nobody: the deliberate flaw the catch test shows caught.
    pub fn raise_without_waking(&self) {
        self.raised.store(true, Ordering::Release);
    }

    /// Waits until the flag is raised.
    pub fn wait(&self) {
        // Acquire: pairs with the Release store in `raise`.
        while !self.raised.load(Ordering::Acquire) {
            // SAFETY: our own key; `validate` only loads an atomic (under the bucket lock it
            // must neither unwind nor call into the park table); the others do nothing. A
            // `raise` after `validate` finds this thread queued and wakes it.
            unsafe {
                parking_lot_core::park(
                    self.key(),
                    || !self.raised.load(Ordering::Relaxed),
                    || {},
                    |_, _| {},
                    DEFAULT_PARK_TOKEN,
                    None,
                )
            };
        }
    }
}
