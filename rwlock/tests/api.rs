//! The lock's API on real threads, one promise per test: the construction panics and their
//! messages, the `try_` forms (under `Fifo`, no reader passes a waiting writer), a timed-out
//! writer that takes nothing, guards released while unwinding, `Debug`, and the `Send`/`Sync`
//! bounds. Every test that can block (a join, a blocking or timed lock call, a wait for a
//! thread to park) runs under the in-process watchdog (`hang_guard`), so a broken promise
//! that leaves a thread asleep (a lost wake-up, a permit never returned) ends the run with
//! the watchdog's stall report instead of hanging `cargo test`.

// A real-thread test: under the model checkers the semaphore only works inside a model.
#![cfg(not(any(feature = "loom", feature = "shuttle")))]

use std::fmt;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use parksema::Semaphore;
use parksema_rwlock::{Fairness, ReadGuard, RwLock, WriteGuard};
use watchdog::Watchdog;

/// Arms the watchdog for a test that can block: if it does not finish within the stall
/// limit, the process ends with the watchdog's stall report (naming the test, and the lock's
/// state where `describe` gave it one) and `watchdog::STALL_EXIT_CODE`, instead of hanging.
/// No test here reports progress: the longest takes a few milliseconds (one waits out a
/// 20 ms timeout), so 10 s without finishing is a hang even on a loaded machine
/// (`WATCHDOG_STALL_SECS` widens it on a slower one).
fn hang_guard(test: &str) -> Watchdog {
    Watchdog::arm(
        format!("rwlock api::{test}"),
        watchdog::stall_limit(Duration::from_secs(10)),
    )
}

/// Makes `guard`'s stall report describe `lock`: its `Debug` (free permits, and the value if a
/// reader fits) and the threads parked on it.
fn describe<T: fmt::Debug + Send + Sync + 'static>(guard: &Watchdog, lock: &Arc<RwLock<T>>) {
    let seen = Arc::clone(lock);
    guard.describe(move || format!("{seen:?}, {} thread(s) parked", seen.parked_threads()));
}

/// Waits until `n` threads are parked on `lock`. Only under a `hang_guard`, which ends the
/// wait if they never park.
fn wait_parked<T>(lock: &RwLock<T>, n: usize) {
    while lock.parked_threads() < n {
        thread::yield_now();
    }
}

#[test]
#[should_panic(expected = "RwLock: max_readers must be at least 1")]
fn zero_max_readers_panics_at_construction() {
    let _ = RwLock::new((), 0);
}

#[test]
#[should_panic(expected = "exceeds parksema's Semaphore::MAX_PERMITS")]
fn too_many_max_readers_panics_at_construction() {
    let _ = RwLock::with_fairness((), Semaphore::MAX_PERMITS + 1, Fairness::Barging);
}

#[test]
fn max_permits_readers_is_accepted() {
    let _guard = hang_guard("max_permits_readers_is_accepted");
    let lock = RwLock::new(1, Semaphore::MAX_PERMITS);
    assert_eq!(lock.max_readers(), Semaphore::MAX_PERMITS);
    let r = lock.read();
    assert!(lock.try_write().is_none());
    drop(r);
    *lock.write() += 1;
    assert_eq!(lock.into_inner(), 2);
}

#[test]
fn new_is_fifo_and_with_fairness_keeps_its_mode() {
    assert_eq!(RwLock::new((), 2).fairness(), Fairness::Fifo);
    for fairness in [Fairness::Eventual, Fairness::Fifo, Fairness::Barging] {
        assert_eq!(RwLock::with_fairness((), 2, fairness).fairness(), fairness);
    }
}

#[test]
fn readers_share_up_to_max_readers_and_exclude_writers() {
    let _guard = hang_guard("readers_share_up_to_max_readers_and_exclude_writers");
    let lock = RwLock::new(0, 3);
    let readers: Vec<_> = (0..3).map(|_| lock.try_read().unwrap()).collect();
    assert!(lock.try_read().is_none(), "a fourth reader must not fit");
    assert!(
        lock.try_write().is_none(),
        "no writer while readers hold the lock"
    );
    assert!(lock.try_write_for(Duration::ZERO).is_none());
    drop(readers);
    let w = lock.try_write().unwrap();
    assert!(
        lock.try_read().is_none(),
        "no reader while a writer holds the lock"
    );
    assert!(lock.try_read_for(Duration::from_millis(1)).is_none());
    assert!(lock.try_write().is_none(), "no second writer");
    drop(w);
    assert_eq!(lock.available_permits(), 3);
}

#[test]
fn under_fifo_no_reader_passes_a_waiting_writer() {
    let guard = hang_guard("under_fifo_no_reader_passes_a_waiting_writer");
    let lock = Arc::new(RwLock::new(0, 4));
    describe(&guard, &lock);
    let reader = lock.read();
    let writer = {
        let lock = Arc::clone(&lock);
        thread::spawn(move || *lock.write() = 1)
    };
    wait_parked(&lock, 1);
    // Three permits are free, but a writer waits: under `Fifo` no reader may take one.
    assert_eq!(lock.available_permits(), 3);
    assert!(
        lock.try_read().is_none(),
        "try_read passed a waiting writer"
    );
    assert!(
        lock.try_read_for(Duration::ZERO).is_none(),
        "a zero-timeout read passed a waiting writer"
    );
    drop(reader);
    writer.join().unwrap();
    assert_eq!(*lock.read(), 1);
}

#[test]
fn under_barging_a_reader_passes_a_waiting_writer() {
    let guard = hang_guard("under_barging_a_reader_passes_a_waiting_writer");
    let lock = Arc::new(RwLock::with_fairness(0, 4, Fairness::Barging));
    describe(&guard, &lock);
    let reader = lock.read();
    let writer = {
        let lock = Arc::clone(&lock);
        thread::spawn(move || *lock.write() = 1)
    };
    wait_parked(&lock, 1);
    let second = lock
        .try_read()
        .expect("Barging lets a reader take a free permit");
    drop((reader, second));
    writer.join().unwrap();
    assert_eq!(*lock.read(), 1);
}

#[test]
fn a_timed_out_writer_takes_nothing() {
    let _guard = hang_guard("a_timed_out_writer_takes_nothing");
    let lock = RwLock::new(0, 2);
    let r = lock.read();
    let start = Instant::now();
    assert!(lock.try_write_for(Duration::from_millis(20)).is_none());
    assert!(start.elapsed() >= Duration::from_millis(20));
    assert_eq!(
        lock.available_permits(),
        1,
        "the timed-out writer took a permit"
    );
    assert!(
        lock.try_read().is_some(),
        "a reader fits after the writer gave up"
    );
    drop(r);
    assert!(lock.try_write_for(Duration::MAX).is_some());
}

#[test]
fn a_timed_writer_gets_the_lock_when_the_readers_leave() {
    let guard = hang_guard("a_timed_writer_gets_the_lock_when_the_readers_leave");
    let lock = Arc::new(RwLock::new(0, 2));
    describe(&guard, &lock);
    let r = lock.read();
    let writer = {
        let lock = Arc::clone(&lock);
        thread::spawn(move || {
            let mut w = lock
                .try_write_for(Duration::from_secs(60))
                .expect("the reader leaves long before the deadline");
            *w = 5;
        })
    };
    wait_parked(&lock, 1);
    drop(r);
    writer.join().unwrap();
    assert_eq!(*lock.read(), 5);
}

#[test]
fn guards_are_released_while_unwinding() {
    let guard = hang_guard("guards_are_released_while_unwinding");
    let lock = Arc::new(RwLock::new(0, 2));
    describe(&guard, &lock);
    for write in [true, false] {
        let panicking = {
            let lock = Arc::clone(&lock);
            thread::spawn(move || {
                if write {
                    let mut w = lock.write();
                    *w = 1;
                    panic!("a writer panics while holding the lock");
                }
                let _r = lock.read();
                panic!("a reader panics while holding the lock");
            })
        };
        assert!(panicking.join().is_err());
        assert_eq!(lock.available_permits(), 2, "the guard's permits came back");
    }
    // No poisoning: the value is as the writer left it.
    assert_eq!(*lock.write(), 1);
}

#[test]
fn get_mut_and_into_inner() {
    let _guard = hang_guard("get_mut_and_into_inner");
    let mut lock = RwLock::new(vec![1], 2);
    lock.get_mut().push(2);
    lock.write().push(3);
    assert_eq!(lock.into_inner(), [1, 2, 3]);
}

#[test]
fn debug_shows_the_value_or_locked() {
    let _guard = hang_guard("debug_shows_the_value_or_locked");
    let lock = RwLock::new(7, 2);
    assert_eq!(
        format!("{lock:?}"),
        "RwLock { max_readers: 2, fairness: Fifo, available_permits: 2, data: 7 }"
    );
    let r = lock.read();
    assert_eq!(format!("{r:?}"), "7");
    assert!(format!("{lock:?}").contains("available_permits: 1, data: 7"));
    drop(r);
    let w = lock.write();
    assert_eq!(format!("{w:?}"), "7");
    assert!(format!("{lock:?}").contains("available_permits: 0, data: <locked>"));
}

#[test]
fn send_and_sync_bounds() {
    let _guard = hang_guard("send_and_sync_bounds");
    fn send<T: Send>() {}
    fn sync<T: Sync>() {}
    send::<RwLock<Vec<u8>>>();
    sync::<RwLock<Vec<u8>>>();
    // A `Cell` is `Send` but not `Sync`: the lock is still `Send`.
    send::<RwLock<std::cell::Cell<u8>>>();
    send::<ReadGuard<'static, Vec<u8>>>();
    sync::<ReadGuard<'static, Vec<u8>>>();
    send::<WriteGuard<'static, Vec<u8>>>();
    sync::<WriteGuard<'static, Vec<u8>>>();
    // A guard moves to another thread and is released there.
    let lock = RwLock::new(0, 1);
    let w = lock.write();
    thread::scope(|s| {
        s.spawn(move || drop(w));
    });
    assert!(lock.try_read().is_some());
}
