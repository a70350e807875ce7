//! The contention profile (feature `profile`): each count moves when, and only when, the
//! event it names happens, and a semaphore's profile is its own.

#![cfg(not(any(feature = "loom", feature = "shuttle")))]

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use parksema::{AcquireError, Fairness, Profile, Semaphore, TryAcquireError};

/// Fails the test after 10 s without progress instead of hanging (the tests take
/// milliseconds).
fn hang_guard(test: &str) -> watchdog::Watchdog {
    watchdog::Watchdog::arm(
        format!("profile::{test}"),
        watchdog::stall_limit(Duration::from_secs(10)),
    )
}

/// Waits until `n` threads are parked on `sem`.
fn wait_parked(sem: &Semaphore, n: usize) {
    while sem.parked_threads() < n {
        thread::sleep(Duration::from_micros(200));
    }
}

#[test]
fn uncontended_operations_record_nothing() {
    let _guard = hang_guard("uncontended_operations_record_nothing");
    let sem = Semaphore::new(2);
    drop(sem.acquire().unwrap());
    drop(sem.acquire_many(2).unwrap());
    drop(sem.try_acquire_for(Duration::from_secs(1)).unwrap());
    let held = sem.acquire_many(2).unwrap();
    assert_eq!(sem.try_acquire().unwrap_err(), TryAcquireError::NoPermits);
    drop(held);
    assert_eq!(sem.profile(), Profile::default());
}

#[test]
fn a_parked_acquire_counts_its_park_and_its_wait() {
    let _guard = hang_guard("a_parked_acquire_counts_its_park_and_its_wait");
    let sem = Arc::new(Semaphore::new(0));
    let other = Semaphore::new(0);
    let waiter = {
        let sem = Arc::clone(&sem);
        thread::spawn(move || sem.acquire().unwrap().forget())
    };
    wait_parked(&sem, 1);
    let parked_at = Instant::now();
    thread::sleep(Duration::from_millis(20));
    sem.add_permits(1);
    waiter.join().unwrap();
    let least = parked_at.elapsed().min(Duration::from_millis(20));
    let p = sem.profile();
    assert_eq!(p.contended_acquires, 1, "{p:?}");
    assert!(p.parks >= 1, "{p:?}");
    // Nobody was parked when it came, so it spun before parking.
    assert!(p.spins >= 1, "{p:?}");
    assert_eq!((p.handoffs, p.timeouts, p.closed), (0, 0, 0), "{p:?}");
    // Within the histogram's 1 %.
    assert!(
        p.wait_max.as_nanos() * 100 >= least.as_nanos() * 99,
        "{p:?}"
    );
    // One wait recorded: every percentile is that wait.
    assert_eq!(
        (p.wait_p50, p.wait_p90, p.wait_p99),
        (p.wait_max, p.wait_max, p.wait_max),
        "{p:?}"
    );
    // Another semaphore's profile is its own.
    assert_eq!(other.profile(), Profile::default());
}

#[test]
fn a_fifo_handoff_is_counted() {
    let _guard = hang_guard("a_fifo_handoff_is_counted");
    let sem = Arc::new(Semaphore::with_fairness(0, Fairness::Fifo));
    let waiter = {
        let sem = Arc::clone(&sem);
        thread::spawn(move || sem.acquire().unwrap().forget())
    };
    wait_parked(&sem, 1);
    sem.add_permits(1);
    waiter.join().unwrap();
    let p = sem.profile();
    assert_eq!(
        (p.contended_acquires, p.handoffs, p.parks),
        (1, 1, 1),
        "{p:?}"
    );
    assert_eq!(p.wakeups_without_permits, 0, "{p:?}");
}

#[test]
fn a_barged_wakeup_is_counted() {
    let _guard = hang_guard("a_barged_wakeup_is_counted");
    let sem = Arc::new(Semaphore::with_fairness(0, Fairness::Barging));
    // The release wakes the parked thread and this thread takes the permit back before the
    // woken one runs: then the woken one must find nothing. Whether this thread wins is up to
    // the scheduler; it is tried until it does.
    for attempt in 0.. {
        assert!(attempt < 1000, "this thread never took the permit first");
        sem.reset_profile();
        let waiter = {
            let sem = Arc::clone(&sem);
            thread::spawn(move || sem.acquire().unwrap().forget())
        };
        wait_parked(&sem, 1);
        sem.add_permits(1);
        let barged = sem.try_acquire().map(|p| p.forget()).is_ok();
        if barged {
            // The woken thread finds nothing and parks again.
            wait_parked(&sem, 1);
            sem.add_permits(1);
        }
        waiter.join().unwrap();
        if barged {
            let p = sem.profile();
            assert_eq!(p.contended_acquires, 1, "{p:?}");
            assert!(p.wakeups_without_permits >= 1, "{p:?}");
            assert_eq!(p.handoffs, 0, "{p:?}");
            return;
        }
    }
}

#[test]
fn timeouts_and_close_are_counted() {
    let _guard = hang_guard("timeouts_and_close_are_counted");
    let sem = Arc::new(Semaphore::new(0));
    assert_eq!(
        sem.try_acquire_for(Duration::from_millis(5)).unwrap_err(),
        TryAcquireError::TimedOut
    );
    let waiter = {
        let sem = Arc::clone(&sem);
        thread::spawn(move || sem.acquire().map(|p| p.forget()))
    };
    wait_parked(&sem, 1);
    sem.close();
    assert_eq!(waiter.join().unwrap(), Err(AcquireError::Closed));
    let p = sem.profile();
    assert_eq!(
        (p.contended_acquires, p.timeouts, p.closed),
        (2, 1, 1),
        "{p:?}"
    );
}

#[test]
fn reset_and_drop_start_over() {
    let _guard = hang_guard("reset_and_drop_start_over");
    let mut slot = Box::new(Semaphore::new(0));
    let _ = slot.try_acquire_for(Duration::from_millis(1));
    assert_eq!(slot.profile().contended_acquires, 1);
    slot.reset_profile();
    assert_eq!(slot.profile(), Profile::default());
    let _ = slot.try_acquire_for(Duration::from_millis(1));
    // Assigning drops the old semaphore in place: the new one, at the same address, starts
    // from zero.
    *slot = Semaphore::new(0);
    assert_eq!(slot.profile(), Profile::default());
}

#[test]
fn the_numbers_stay_at_the_address_when_a_semaphore_moves() {
    let _guard = hang_guard("the_numbers_stay_at_the_address_when_a_semaphore_moves");
    let mut slot = std::mem::MaybeUninit::<Semaphore>::uninit();
    let first = slot.write(Semaphore::new(0));
    let _ = first.try_acquire_for(Duration::from_millis(1));
    assert_eq!(first.profile().contended_acquires, 1);
    // SAFETY: `slot` was initialized just above and is not read again before it is
    // written anew below.
    let moved = unsafe { slot.assume_init_read() };
    // The moved semaphore starts from zero.
    assert_eq!(moved.profile(), Profile::default());
    // A semaphore made later at the old address reads what was left there, until it resets.
    let second = slot.write(Semaphore::new(0));
    assert_eq!(second.profile().contended_acquires, 1);
    second.reset_profile();
    assert_eq!(second.profile(), Profile::default());
    // SAFETY: `slot` holds `second`, initialized above; it is dropped once, here.
    unsafe { slot.assume_init_drop() };
}
