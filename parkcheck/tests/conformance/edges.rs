//! The edges: which happens-before edges the model gives, under loom only (each is shown by a
//! plain cell, `loom::cell::UnsafeCell`, whose accesses loom checks for races; a deliberate
//! race on real threads would be undefined behaviour, so these never run there). Each case
//! reads the cell only where the edge in question is the one thing that could order the
//! read after the write:
//!
//! - an edge the real crate gives: loom must find no race in any execution;
//! - an edge the real crate does not give: loom must report the race (a model that gave the
//!   edge would hide, in a primitive's models, a missing `Acquire` or `Release` that the
//!   real crate would expose).
//!
//! A `Relaxed` flag lets the reading thread know that the write and the operation after it
//! have happened without ordering anything itself.
//!
//! # Safety of the calls into the park table
//!
//! As in `cases.rs`: every key is the address of a byte the case owns, every callback touches
//! only the case's atomics, and none calls into the table or parks.

use std::time::Duration;

use loom::cell::UnsafeCell;

use crate::cases::Keys;
use parkcheck::sync::atomic::{AtomicBool, Ordering::Relaxed};
use parkcheck::sync::{Arc, thread};
use parkcheck::{DEFAULT_PARK_TOKEN, DEFAULT_UNPARK_TOKEN};

/// How far in the future a timed park's deadline is (only the mocked clock sees it).
const DEADLINE: Duration = Duration::from_millis(20);

/// Waits, yielding, until `key` has `n` threads parked, without any operation that orders
/// this thread after them (no lock, no atomic).
fn wait_parked(key: usize, n: usize) {
    while parkcheck::parked_untracked(key) != Some(n) {
        thread::yield_now();
    }
}

/// The one shared plain cell of a case: written by one thread, read by another.
fn cell() -> Arc<UnsafeCell<u32>> {
    Arc::new(UnsafeCell::new(0))
}

fn write(cell: &UnsafeCell<u32>) {
    // SAFETY: the case's own cell; loom checks the access against the other thread's.
    cell.with_mut(|v| unsafe { *v = 1 });
}

fn read(cell: &UnsafeCell<u32>) -> u32 {
    // SAFETY: as in `write`.
    cell.with(|v| unsafe { *v })
}

/// Given: a waker's history before its unpark is ordered before the woken thread's return
/// from `park` (the real crate's futex word: `Release` store under the bucket lock,
/// `Acquire` load by the woken thread). The main thread writes the cell and unparks; the
/// woken thread reads it.
pub(crate) fn edge_from_waker_to_woken() {
    let keys = Keys::new();
    let key = keys.get(0);
    let data = cell();
    let waiter = {
        let data = Arc::clone(&data);
        thread::spawn(move || {
            // SAFETY: the case's own key; the callbacks do nothing (module docs).
            let r = unsafe {
                parkcheck::park(key, || true, || {}, |_, _| {}, DEFAULT_PARK_TOKEN, None)
            };
            assert!(r.is_unparked(), "the thread is unparked: {r:?}");
            read(&data);
        })
    };
    wait_parked(key, 1);
    write(&data);
    // SAFETY: the case's own key; the callback touches nothing (module docs).
    unsafe { parkcheck::unpark_one(key, |_| DEFAULT_UNPARK_TOKEN) };
    waiter.join().unwrap();
}

/// Not given: operations on two different keys are not ordered by the table (the real crate
/// orders them only when the keys share a bucket, which a primitive cannot count on). One
/// thread writes the cell and then unparks key 0, setting the flag in its callback; the other
/// unparks key 1 and, if its callback saw the flag (so the first operation had begun before
/// its own), reads the cell. A table with one lock for all keys (or one created by a
/// synchronizing first use) would order the read after the write.
pub(crate) fn edge_none_between_keys() {
    let keys = Keys::new();
    let (k0, k1) = (keys.get(0), keys.get(1));
    let data = cell();
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let (data, done) = (Arc::clone(&data), Arc::clone(&done));
        thread::spawn(move || {
            write(&data);
            // SAFETY: the case's own key; the callback touches only an atomic.
            unsafe {
                parkcheck::unpark_one(k0, |_| {
                    done.store(true, Relaxed);
                    DEFAULT_UNPARK_TOKEN
                })
            };
        })
    };
    let reader = {
        let (data, done) = (Arc::clone(&data), Arc::clone(&done));
        thread::spawn(move || {
            let mut seen = false;
            // SAFETY: the case's own key; the callback touches only an atomic.
            unsafe {
                parkcheck::unpark_one(k1, |_| {
                    seen = done.load(Relaxed);
                    DEFAULT_UNPARK_TOKEN
                })
            };
            if seen {
                read(&data);
            }
        })
    };
    writer.join().unwrap();
    reader.join().unwrap();
}

std::thread_local! {
    /// Which orders of a clock move, a timeout and an unpark [`clock_moves_are_explored`]
    /// has reached on this OS thread since [`reset_reached`] (loom runs every execution, and
    /// every model thread of it, here).
    static REACHED: std::cell::Cell<u8> = const { std::cell::Cell::new(0) };
    /// Whether the timed thread of [`clock_moves_are_explored`] has queued: a flag loom does
    /// not see, so that nothing but the table and the clock decides what loom explores.
    static QUEUED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The thread was unparked.
pub(crate) const UNPARKED: u8 = 1;
/// It timed out after it queued and before the unparker looked (which then found nobody).
pub(crate) const TIMED_OUT_FIRST: u8 = 2;
/// The unparker looked before it queued (and found nobody); it then timed out.
pub(crate) const QUEUED_AFTER: u8 = 4;

pub(crate) fn reset_reached() {
    REACHED.with(|r| r.set(0));
}

pub(crate) fn reached() -> u8 {
    REACHED.with(std::cell::Cell::get)
}

/// Loom explores where a clock move falls among the other threads' steps: a timed thread,
/// an unparker and a thread that moves the clock past the deadline (spawned last) end in
/// each of three orders in some execution: unparked; timed out between queueing and the
/// unparker's look; unparker's look before the queueing. (A clock that loom does not see
/// moving leaves the second order unexplored, and with it every bug that needs it, such
/// as a `timed_out` callback that forgets to clear a flag the unparker reads.)
pub(crate) fn clock_moves_are_explored() {
    let keys = Keys::new();
    let key = keys.get(0);
    QUEUED.with(|q| q.set(false));
    let waiter = {
        thread::spawn(move || {
            let deadline = parkcheck::now() + DEADLINE;
            // SAFETY: the case's own key; the callbacks touch only a cell.
            let r = unsafe {
                parkcheck::park(
                    key,
                    || {
                        QUEUED.with(|q| q.set(true));
                        true
                    },
                    || {},
                    |_, _| {},
                    DEFAULT_PARK_TOKEN,
                    Some(deadline),
                )
            };
            r.is_unparked()
        })
    };
    let unparker = {
        thread::spawn(move || {
            let mut saw_queued = false;
            // SAFETY: the case's own key; the callback touches only a cell.
            let r = unsafe {
                parkcheck::unpark_one(key, |_| {
                    saw_queued = QUEUED.with(std::cell::Cell::get);
                    DEFAULT_UNPARK_TOKEN
                })
            };
            (r.unparked_threads, saw_queued)
        })
    };
    let clock = thread::spawn(|| parkcheck::advance_clock(DEADLINE));
    let unparked = waiter.join().unwrap();
    let (woken, saw_queued) = unparker.join().unwrap();
    clock.join().unwrap();
    let order = match (unparked, woken, saw_queued) {
        (true, 1, _) => UNPARKED,
        (false, 0, true) => TIMED_OUT_FIRST,
        (false, 0, false) => QUEUED_AFTER,
        other => panic!("a timeout racing an unpark ends one way only: {other:?}"),
    };
    REACHED.with(|r| r.set(r.get() | order));
}

/// Not given: a waker is not ordered before the woken thread's `before_sleep` (in the real
/// crate the woken thread synchronizes with its waker only when it finds its futex word
/// changed, after `before_sleep`). The main thread writes the cell, unparks the thread
/// (which may still be in `before_sleep`) and then sets the flag; `before_sleep` reads the
/// cell if it sees the flag.
pub(crate) fn edge_none_into_before_sleep() {
    let keys = Keys::new();
    let key = keys.get(0);
    let data = cell();
    let unparked = Arc::new(AtomicBool::new(false));
    let waiter = {
        let (data, unparked) = (Arc::clone(&data), Arc::clone(&unparked));
        thread::spawn(move || {
            // SAFETY: the case's own key; `before_sleep` touches only an atomic and the cell.
            let r = unsafe {
                parkcheck::park(
                    key,
                    || true,
                    || {
                        if unparked.load(Relaxed) {
                            read(&data);
                        }
                    },
                    |_, _| {},
                    DEFAULT_PARK_TOKEN,
                    None,
                )
            };
            assert!(r.is_unparked(), "the thread is unparked: {r:?}");
        })
    };
    wait_parked(key, 1);
    write(&data);
    // SAFETY: the case's own key; the callback touches nothing (module docs).
    unsafe { parkcheck::unpark_one(key, |_| DEFAULT_UNPARK_TOKEN) };
    unparked.store(true, Relaxed);
    waiter.join().unwrap();
}

/// Not given: the table's first user in an execution is not ordered before later users (the
/// real table is created once per process, long before a primitive's threads use it). One
/// thread writes the cell and unparks key 0, then sets the flag; the other, only if it saw
/// the flag before it first touches the table, unparks key 1 and reads the cell. A table
/// kept in a lazy static of the checker's would order every use after the first one.
pub(crate) fn edge_none_from_the_first_user() {
    let keys = Keys::new();
    let (k0, k1) = (keys.get(0), keys.get(1));
    let data = cell();
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let (data, done) = (Arc::clone(&data), Arc::clone(&done));
        thread::spawn(move || {
            write(&data);
            // SAFETY: the case's own key; the callback touches nothing.
            unsafe { parkcheck::unpark_one(k0, |_| DEFAULT_UNPARK_TOKEN) };
            done.store(true, Relaxed);
        })
    };
    let reader = {
        let (data, done) = (Arc::clone(&data), Arc::clone(&done));
        thread::spawn(move || {
            if done.load(Relaxed) {
                // SAFETY: the case's own key; the callback touches nothing.
                unsafe { parkcheck::unpark_one(k1, |_| DEFAULT_UNPARK_TOKEN) };
                read(&data);
            }
        })
    };
    writer.join().unwrap();
    reader.join().unwrap();
}
