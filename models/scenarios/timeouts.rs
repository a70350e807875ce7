//! Timed acquires racing releases and handoffs.

use super::*;

/// (p) A timeout racing the release that would satisfy it: a timed waiter parks first, an
/// untimed one behind it; then the timed waiter's deadline passes (another thread advances
/// the clock) while the main thread adds one permit. Either the timed waiter takes the
/// permit (and gives it back) or it times out holding nothing; either way the untimed waiter
/// must get the permit: a timed-out waiter chosen by the release passes the wake-up on, and
/// its leaving the queue keeps `WAITERS` for the waiter behind it.
pub(crate) fn timeout_races_release(build: Build) {
    let sem = Arc::new(build.semaphore(0));
    let timed_done = Arc::new(parksema::__model::AtomicBool::new(false));
    let timed = {
        let (sem, timed_done) = (Arc::clone(&sem), Arc::clone(&timed_done));
        thread::spawn(move || {
            let got = match sem.try_acquire_for(Duration::from_millis(10)) {
                Ok(p) => {
                    drop(p);
                    true
                }
                Err(TryAcquireError::TimedOut) => false,
                Err(e) => panic!("timed out wrongly: a timed acquire on an open semaphore: {e:?}"),
            };
            timed_done.store(true, Ordering::SeqCst);
            got
        })
    };
    // On real threads the deadline runs in real time and may pass before a waiter is seen
    // parked; under the checkers it passes only when the clock thread below advances it, so
    // these waits are `wait_parked`.
    let parked_or_timed_out = |n: usize| {
        while sem.parked_threads() < n && !timed_done.load(Ordering::SeqCst) {
            thread::yield_now();
        }
    };
    parked_or_timed_out(1);
    let untimed = {
        let sem = Arc::clone(&sem);
        thread::spawn(move || sem.acquire().expect("never closed").forget())
    };
    parked_or_timed_out(2);
    let clock = thread::spawn(|| advance_clock(Duration::from_millis(10)));
    sem.add_permits(1);
    join(vec![clock]);
    join(vec![untimed]);
    join(vec![timed]);
    assert_conserved(&sem, 0);
    assert_waiters_clear(&sem);
}

/// (y) A permit handed to a waiter that is timing out at that moment: a timed waiter parks
/// on a semaphore whose one permit the main thread holds; another thread lets its deadline
/// pass while the main thread returns the permit (a handoff under `Fifo`, or with `fair`).
/// Either the waiter got the permit (and gives it back) or it timed out holding nothing and
/// the permit is in the count: never lost, never doubled.
pub(crate) fn handoff_to_timing_out_waiter(build: Build, fair: bool) {
    // A std `Arc`, which owned permits need.
    let sem = std::sync::Arc::new(build.semaphore(1));
    let held = std::sync::Arc::clone(&sem)
        .try_acquire_owned()
        .expect("one free");
    let done = Arc::new(parksema::__model::AtomicBool::new(false));
    let timed = {
        let (sem, done) = (std::sync::Arc::clone(&sem), Arc::clone(&done));
        thread::spawn(move || {
            let got = match sem.try_acquire_for(Duration::from_millis(10)) {
                Ok(p) => {
                    drop(p);
                    true
                }
                Err(TryAcquireError::TimedOut) => false,
                Err(e) => panic!("timed out wrongly: a timed acquire on an open semaphore: {e:?}"),
            };
            done.store(true, Ordering::SeqCst);
            got
        })
    };
    // On real threads the deadline may pass before the waiter is seen parked.
    while sem.parked_threads() < 1 && !done.load(Ordering::SeqCst) {
        thread::yield_now();
    }
    let clock = thread::spawn(|| advance_clock(Duration::from_millis(10)));
    if fair {
        held.release_fair();
    } else {
        drop(held);
    }
    join(vec![clock]);
    join(vec![timed]);
    let left = sem.available_permits();
    assert!(
        left == 1,
        "lost handoff: {left} permits left of 1 after a handoff raced a timeout ({sem:?})"
    );
    assert_waiters_clear(&sem);
}
