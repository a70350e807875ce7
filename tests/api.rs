//! Behaviour of the public API: construction limits, overflow, close, forget, unwinding,
//! Debug, the size, weighted requests and their limits, timeouts that need no other thread,
//! `forget_permits`, `split` and `merge`, the error messages, and the fairness modes (with a
//! thread parked where the mode decides who gets a permit).

// A real-thread test: under the model checkers the semaphore only works inside a model.
#![cfg(not(any(feature = "loom", feature = "shuttle")))]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parksema::{AcquireError, Fairness, OwnedPermit, Permit, Semaphore, TryAcquireError};

/// Arms the watchdog for a test that takes permits with a blocking `acquire`: if the
/// semaphore wrongly parks it (a bug, or a mutant under `cargo mutants`), the process ends
/// with the watchdog's stall report after 10 s instead of hanging. The tests take
/// milliseconds, so 10 s without finishing is a hang.
fn hang_guard(test: &str) -> watchdog::Watchdog {
    watchdog::Watchdog::arm(
        format!("api::{test}"),
        watchdog::stall_limit(std::time::Duration::from_secs(10)),
    )
}

/// The panic message of `f`, which must panic.
fn panic_message(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("expected a panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .expect("a string panic message")
}

#[test]
#[cfg(not(any(feature = "broken_sema", feature = "loom", feature = "shuttle")))]
fn semaphore_is_two_words() {
    // The state word and the fairness timer (a `u64`, so 16 bytes on 32-bit targets too).
    assert_eq!(size_of::<Semaphore>(), 16);
}

#[test]
fn semaphore_and_permits_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Semaphore>();
    send_sync::<Permit<'static>>();
    send_sync::<OwnedPermit>();
}

#[test]
fn new_accepts_max_and_refuses_more() {
    static FULL: Semaphore = Semaphore::new(Semaphore::MAX_PERMITS);
    assert_eq!(FULL.available_permits(), Semaphore::MAX_PERMITS);
    let msg = panic_message(|| {
        let _ = Semaphore::new(Semaphore::MAX_PERMITS + 1);
    });
    assert!(msg.contains("MAX_PERMITS"), "{msg}");
}

#[test]
fn acquire_and_try_acquire_count_permits() {
    let _guard = hang_guard("acquire_and_try_acquire_count_permits");
    let sem = Semaphore::new(2);
    let a = sem.acquire().unwrap();
    let b = sem.try_acquire().unwrap();
    assert_eq!(sem.available_permits(), 0);
    assert_eq!(sem.try_acquire().unwrap_err(), TryAcquireError::NoPermits);
    drop(a);
    assert_eq!(sem.available_permits(), 1);
    drop(b);
    assert_eq!(sem.available_permits(), 2);
}

#[test]
fn add_permits_overflow_panics_naming_numbers_and_leaves_count() {
    let sem = Semaphore::new(Semaphore::MAX_PERMITS - 2);
    let msg = panic_message(|| sem.add_permits(3));
    assert!(
        msg.contains(&format!(
            "cannot add 3 permits to the {} available",
            Semaphore::MAX_PERMITS - 2
        )),
        "{msg}"
    );
    assert!(msg.contains(&Semaphore::MAX_PERMITS.to_string()), "{msg}");
    assert_eq!(sem.available_permits(), Semaphore::MAX_PERMITS - 2);
    sem.add_permits(2);
    assert_eq!(sem.available_permits(), Semaphore::MAX_PERMITS);
    // Even the largest addition is refused without wrapping around.
    let err = sem.try_add_permits(usize::MAX).unwrap_err();
    assert_eq!(
        (err.available(), err.added()),
        (Semaphore::MAX_PERMITS, usize::MAX)
    );
    assert_eq!(sem.available_permits(), Semaphore::MAX_PERMITS);
}

#[test]
fn overflow_keeps_the_flags() {
    let sem = Semaphore::new(Semaphore::MAX_PERMITS);
    sem.close();
    assert!(sem.try_add_permits(1).is_err());
    assert!(
        sem.is_closed(),
        "a refused addition must not disturb CLOSED"
    );
    assert_eq!(sem.available_permits(), Semaphore::MAX_PERMITS);
}

#[test]
fn add_zero_permits_changes_nothing() {
    let sem = Semaphore::new(0);
    sem.add_permits(0);
    assert_eq!(sem.try_add_permits(0), Ok(()));
    assert_eq!(sem.available_permits(), 0);
}

#[test]
fn returning_a_permit_to_a_full_semaphore_panics() {
    let _guard = hang_guard("returning_a_permit_to_a_full_semaphore_panics");
    let sem = Semaphore::new(1);
    let permit = sem.acquire().unwrap();
    sem.add_permits(Semaphore::MAX_PERMITS);
    let msg = panic_message(move || drop(permit));
    assert!(
        msg.contains(
            "a dropped permit guard could not return its 1 permit: cannot add 1 permit to"
        ),
        "{msg}"
    );
    assert!(msg.contains("they are forgotten"), "{msg}");
    assert_eq!(sem.available_permits(), Semaphore::MAX_PERMITS);
    // More than one permit: the message counts them.
    let sem = Semaphore::new(2);
    let two = sem.acquire_many(2).unwrap();
    sem.add_permits(Semaphore::MAX_PERMITS);
    let msg = panic_message(move || drop(two));
    assert!(
        msg.contains("could not return its 2 permits: cannot add 2 permits to"),
        "{msg}"
    );
}

#[test]
fn a_full_semaphore_does_not_turn_unwinding_into_an_abort() {
    let _guard = hang_guard("a_full_semaphore_does_not_turn_unwinding_into_an_abort");
    // Two permits out, the semaphore filled up behind them, then a panic: both guards drop
    // while unwinding into a full semaphore. A second panic there would abort the process.
    let sem = Semaphore::new(2);
    let msg = panic_message(|| {
        let _a = sem.acquire().unwrap();
        let _b = sem.acquire().unwrap();
        sem.add_permits(Semaphore::MAX_PERMITS);
        panic!("first panic");
    });
    assert_eq!(msg, "first panic");
    assert_eq!(sem.available_permits(), Semaphore::MAX_PERMITS);
}

#[test]
fn release_fair_into_a_full_semaphore_does_not_turn_unwinding_into_an_abort() {
    let _guard =
        hang_guard("release_fair_into_a_full_semaphore_does_not_turn_unwinding_into_an_abort");
    // As above, but the guards are returned with `release_fair` from a drop that runs while
    // unwinding: a panic there would abort the process (and this test binary with it).
    struct FairOnDrop<'a>(Option<parksema::Permit<'a>>);
    impl Drop for FairOnDrop<'_> {
        fn drop(&mut self) {
            if let Some(p) = self.0.take() {
                p.release_fair();
            }
        }
    }
    let sem = Semaphore::new(1);
    let msg = panic_message(|| {
        let _fair = FairOnDrop(Some(sem.acquire().unwrap()));
        sem.add_permits(Semaphore::MAX_PERMITS);
        panic!("first panic");
    });
    assert_eq!(msg, "first panic");
    assert_eq!(sem.available_permits(), Semaphore::MAX_PERMITS);
    // Outside unwinding the refusal still panics, naming the numbers.
    let other = Semaphore::new(1);
    let held = other.acquire().unwrap();
    other.add_permits(Semaphore::MAX_PERMITS);
    let msg = panic_message(move || held.release_fair());
    assert!(
        msg.contains("release_fair could not return the guard's 1 permit: cannot add 1 permit to"),
        "{msg}"
    );
    assert!(msg.contains("the 1 refused are forgotten"), "{msg}");
    assert_eq!(other.available_permits(), Semaphore::MAX_PERMITS);
    let third = Semaphore::new(2);
    let held = third.acquire_many(2).unwrap();
    third.add_permits(Semaphore::MAX_PERMITS);
    let msg = panic_message(move || held.release_fair());
    assert!(
        msg.contains("the guard's 2 permits: cannot add 2 permits to")
            && msg.contains("the 2 refused"),
        "{msg}"
    );
}

#[test]
fn forget_keeps_the_permit_out() {
    let _guard = hang_guard("forget_keeps_the_permit_out");
    let sem = Semaphore::new(3);
    sem.acquire().unwrap().forget();
    sem.try_acquire().unwrap().forget();
    assert_eq!(sem.available_permits(), 1);

    let sem = Arc::new(Semaphore::new(2));
    Arc::clone(&sem).acquire_owned().unwrap().forget();
    Arc::clone(&sem).try_acquire_owned().unwrap().forget();
    assert_eq!(sem.available_permits(), 0);
    assert_eq!(Arc::strong_count(&sem), 1, "forget releases the Arc");
}

#[test]
fn owned_permits_return_on_drop() {
    let _guard = hang_guard("owned_permits_return_on_drop");
    let sem = Arc::new(Semaphore::new(1));
    let p = Arc::clone(&sem).acquire_owned().unwrap();
    assert_eq!(
        Arc::clone(&sem).try_acquire_owned().unwrap_err(),
        TryAcquireError::NoPermits
    );
    assert!(Arc::ptr_eq(p.semaphore(), &sem));
    drop(p);
    assert_eq!(sem.available_permits(), 1);
    assert_eq!(Arc::strong_count(&sem), 1);
}

#[test]
fn permit_returns_during_unwinding() {
    let _guard = hang_guard("permit_returns_during_unwinding");
    let sem = Semaphore::new(1);
    let msg = panic_message(|| {
        let _held = sem.acquire().unwrap();
        panic!("boom while holding");
    });
    assert_eq!(msg, "boom while holding");
    assert_eq!(sem.available_permits(), 1);
}

#[test]
fn close_refuses_even_with_permits_and_still_counts_returns() {
    let _guard = hang_guard("close_refuses_even_with_permits_and_still_counts_returns");
    let sem = Semaphore::new(2);
    let held = sem.acquire().unwrap();
    assert!(!sem.is_closed());
    sem.close();
    sem.close();
    assert!(sem.is_closed());
    let err = sem.acquire().unwrap_err();
    assert_eq!(err.to_string(), "semaphore closed");
    assert_eq!(sem.try_acquire().unwrap_err(), TryAcquireError::Closed);
    let arc = Arc::new(Semaphore::new(1));
    arc.close();
    assert!(Arc::clone(&arc).acquire_owned().is_err());
    assert_eq!(
        Arc::clone(&arc).try_acquire_owned().unwrap_err(),
        TryAcquireError::Closed
    );
    drop(held);
    assert_eq!(
        sem.available_permits(),
        2,
        "held permits come back after close"
    );
    sem.add_permits(1);
    assert_eq!(sem.available_permits(), 3);
}

#[test]
fn debug_shows_permits_and_flags() {
    let _guard = hang_guard("debug_shows_permits_and_flags");
    let sem = Semaphore::new(5);
    let text = format!("{sem:?}");
    assert!(
        text.starts_with(
            "Semaphore { permits: 5, waiters: false, closed: false, fairness: Eventual, \
             state: 0x28"
        ),
        "{text}"
    );
    sem.close();
    let text = format!("{sem:?}");
    assert!(
        text.contains("closed: true, fairness: Eventual, state: 0x2a"),
        "{text}"
    );
    let fifo = format!("{:?}", Semaphore::with_fairness(1, Fairness::Fifo));
    assert!(fifo.contains("fairness: Fifo, state: 0xc"), "{fifo}");
    let barging = format!("{:?}", Semaphore::with_fairness(1, Fairness::Barging));
    assert!(
        barging.contains("fairness: Barging, state: 0x8"),
        "{barging}"
    );
    let p = Semaphore::new(1);
    let held = p.acquire().unwrap();
    assert!(
        format!("{held:?}").starts_with("Permit { permits: 1, semaphore: Semaphore { permits: 0"),
        "{held:?}"
    );
}

#[test]
fn owned_permit_debug_shows_its_semaphore() {
    let _guard = hang_guard("owned_permit_debug_shows_its_semaphore");
    let sem = Arc::new(Semaphore::new(2));
    let held = Arc::clone(&sem).acquire_owned().unwrap();
    let text = format!("{held:?}");
    assert!(
        text.starts_with(
            "OwnedPermit { permits: 1, semaphore: Semaphore { permits: 1, waiters: false"
        ),
        "{text}"
    );
}

#[test]
fn error_messages() {
    assert_eq!(TryAcquireError::Closed.to_string(), "semaphore closed");
    assert_eq!(
        TryAcquireError::NoPermits.to_string(),
        "no permits available"
    );
    assert_eq!(
        TryAcquireError::TimedOut.to_string(),
        "timed out waiting for permits"
    );
    assert_eq!(AcquireError::Closed.to_string(), "semaphore closed");
    let too_large = format!(
        "requested {} permits, more than any semaphore can hold (Semaphore::MAX_PERMITS = {}): \
         the request can never succeed",
        usize::MAX,
        Semaphore::MAX_PERMITS
    );
    let requested = usize::MAX;
    assert_eq!(AcquireError::TooLarge { requested }.to_string(), too_large);
    assert_eq!(
        TryAcquireError::TooLarge { requested }.to_string(),
        too_large
    );
    fn error<E: std::error::Error + Send + Sync + 'static>(_: E) {}
    error(AcquireError::Closed);
    error(TryAcquireError::TimedOut);
}

/// Every acquire of `n` permits on `sem`, as the error (if any) each gave, in a fixed order:
/// the four waiting-capable ones use a zero timeout so that none of them parks.
fn every_acquire_of(sem: &Arc<Semaphore>, n: usize) -> Vec<Result<usize, String>> {
    let past = Instant::now();
    let z = Duration::ZERO;
    let all: Vec<Result<usize, String>> = vec![
        sem.try_acquire_many(n)
            .map(|p| p.num_permits())
            .map_err(|e| format!("{e:?}")),
        sem.try_acquire_many_for(n, z)
            .map(|p| p.num_permits())
            .map_err(|e| format!("{e:?}")),
        sem.try_acquire_many_until(n, past)
            .map(|p| p.num_permits())
            .map_err(|e| format!("{e:?}")),
        Arc::clone(sem)
            .try_acquire_many_owned(n)
            .map(|p| p.num_permits())
            .map_err(|e| format!("{e:?}")),
        Arc::clone(sem)
            .try_acquire_many_for_owned(n, z)
            .map(|p| p.num_permits())
            .map_err(|e| format!("{e:?}")),
        Arc::clone(sem)
            .try_acquire_many_until_owned(n, past)
            .map(|p| p.num_permits())
            .map_err(|e| format!("{e:?}")),
    ];
    all
}

#[test]
fn closed_is_checked_first_for_every_acquire_and_every_size() {
    let _guard = hang_guard("closed_is_checked_first_for_every_acquire_and_every_size");
    let sem = Arc::new(Semaphore::new(3));
    sem.close();
    for n in [0, 1, 3, Semaphore::MAX_PERMITS + 1, usize::MAX] {
        assert!(
            every_acquire_of(&sem, n)
                .iter()
                .all(|r| *r == Err("Closed".to_string())),
            "n = {n}: {:?}",
            every_acquire_of(&sem, n)
        );
        assert_eq!(
            sem.acquire_many(n).unwrap_err(),
            AcquireError::Closed,
            "n = {n}"
        );
        assert_eq!(
            Arc::clone(&sem).acquire_many_owned(n).unwrap_err(),
            AcquireError::Closed,
            "n = {n}"
        );
    }
    assert_eq!(
        sem.try_acquire_for(Duration::MAX).unwrap_err(),
        TryAcquireError::Closed
    );
    assert_eq!(
        sem.available_permits(),
        3,
        "a refused acquire takes nothing"
    );
}

#[test]
fn a_request_that_can_never_succeed_fails_at_once() {
    let _guard = hang_guard("a_request_that_can_never_succeed_fails_at_once");
    let sem = Arc::new(Semaphore::new(Semaphore::MAX_PERMITS));
    for n in [Semaphore::MAX_PERMITS + 1, usize::MAX] {
        let too_large = format!("{:?}", TryAcquireError::TooLarge { requested: n });
        assert!(
            every_acquire_of(&sem, n)
                .iter()
                .all(|r| *r == Err(too_large.clone())),
            "{:?}",
            every_acquire_of(&sem, n)
        );
        // The blocking forms too: they must not park forever.
        assert_eq!(
            sem.acquire_many(n).unwrap_err(),
            AcquireError::TooLarge { requested: n }
        );
        assert_eq!(
            Arc::clone(&sem).acquire_many_owned(n).unwrap_err(),
            AcquireError::TooLarge { requested: n }
        );
        assert_eq!(
            sem.try_acquire_many_for(n, Duration::MAX).unwrap_err(),
            TryAcquireError::TooLarge { requested: n }
        );
    }
    // The largest possible request is not too large.
    let all = sem.acquire_many(Semaphore::MAX_PERMITS).unwrap();
    assert_eq!(all.num_permits(), Semaphore::MAX_PERMITS);
    assert_eq!(sem.available_permits(), 0);
}

#[test]
fn a_request_of_zero_succeeds_at_once_without_permits() {
    let _guard = hang_guard("a_request_of_zero_succeeds_at_once_without_permits");
    let sem = Arc::new(Semaphore::new(0));
    assert!(
        every_acquire_of(&sem, 0).iter().all(|r| *r == Ok(0)),
        "{:?}",
        every_acquire_of(&sem, 0)
    );
    let zero = sem.acquire_many(0).unwrap();
    assert_eq!(zero.num_permits(), 0);
    drop(zero);
    assert_eq!(
        Arc::clone(&sem)
            .acquire_many_owned(0)
            .unwrap()
            .num_permits(),
        0
    );
    assert_eq!(
        sem.available_permits(),
        0,
        "a zero request returns nothing on drop"
    );
}

#[test]
fn weighted_acquires_take_and_return_exactly_n() {
    let _guard = hang_guard("weighted_acquires_take_and_return_exactly_n");
    let sem = Arc::new(Semaphore::new(5));
    let three = sem.acquire_many(3).unwrap();
    assert_eq!((three.num_permits(), sem.available_permits()), (3, 2));
    assert_eq!(
        sem.try_acquire_many(3).unwrap_err(),
        TryAcquireError::NoPermits
    );
    assert_eq!(
        sem.try_acquire_many_for(3, Duration::from_millis(2))
            .unwrap_err(),
        TryAcquireError::TimedOut
    );
    assert_eq!(sem.available_permits(), 2, "refused requests take nothing");
    let two = Arc::clone(&sem).try_acquire_many_owned(2).unwrap();
    assert_eq!(sem.available_permits(), 0);
    drop(three);
    assert_eq!(sem.available_permits(), 3);
    drop(two);
    assert_eq!(sem.available_permits(), 5);
}

#[test]
fn zero_timeouts_and_past_deadlines_take_what_is_free_without_parking() {
    let _guard = hang_guard("zero_timeouts_and_past_deadlines_take_what_is_free_without_parking");
    let sem = Arc::new(Semaphore::new(2));
    let long_ago = Instant::now();
    std::thread::yield_now();
    let a = sem.try_acquire_for(Duration::ZERO).unwrap();
    let b = sem.try_acquire_until(long_ago).unwrap();
    assert_eq!(sem.available_permits(), 0);
    assert_eq!(
        sem.try_acquire_for(Duration::ZERO).unwrap_err(),
        TryAcquireError::TimedOut
    );
    assert_eq!(
        sem.try_acquire_until(long_ago).unwrap_err(),
        TryAcquireError::TimedOut
    );
    assert_eq!(
        Arc::clone(&sem)
            .try_acquire_for_owned(Duration::ZERO)
            .unwrap_err(),
        TryAcquireError::TimedOut
    );
    assert_eq!(
        Arc::clone(&sem)
            .try_acquire_until_owned(long_ago)
            .unwrap_err(),
        TryAcquireError::TimedOut
    );
    assert_eq!(sem.parked_threads(), 0);
    assert!(
        format!("{sem:?}").contains("waiters: false"),
        "nobody parked: {sem:?}"
    );
    drop((a, b));
    assert_eq!(sem.available_permits(), 2);
}

#[test]
fn a_timeout_that_cannot_be_added_to_now_waits_without_a_deadline() {
    let _guard = hang_guard("a_timeout_that_cannot_be_added_to_now_waits_without_a_deadline");
    let sem = Arc::new(Semaphore::new(0));
    let waiter = {
        let sem = Arc::clone(&sem);
        std::thread::spawn(move || {
            sem.try_acquire_many_for(2, Duration::MAX)
                .map(|p| p.num_permits())
        })
    };
    while sem.parked_threads() == 0 {
        std::thread::yield_now();
    }
    sem.add_permits(2);
    assert_eq!(waiter.join().expect("Duration::MAX must not panic"), Ok(2));
    assert_eq!(sem.available_permits(), 2);
}

#[test]
fn a_timed_out_wait_takes_nothing_and_leaves_no_waiters_bit() {
    let _guard = hang_guard("a_timed_out_wait_takes_nothing_and_leaves_no_waiters_bit");
    let sem = Semaphore::new(1);
    assert_eq!(
        sem.try_acquire_many_for(2, Duration::from_millis(5))
            .unwrap_err(),
        TryAcquireError::TimedOut
    );
    assert_eq!(sem.available_permits(), 1);
    assert!(format!("{sem:?}").contains("waiters: false"), "{sem:?}");
}

#[test]
fn forget_permits_takes_what_is_there_and_never_touches_the_flags() {
    let sem = Semaphore::new(4);
    assert_eq!(sem.forget_permits(0), 0);
    assert_eq!(sem.forget_permits(3), 3);
    assert_eq!(sem.forget_permits(usize::MAX), 1);
    assert_eq!(sem.forget_permits(1), 0);
    assert_eq!(sem.available_permits(), 0);
    sem.add_permits(2);
    sem.close();
    assert_eq!(sem.forget_permits(1), 1);
    assert!(
        sem.is_closed(),
        "forget_permits reopened a closed semaphore"
    );
    assert_eq!(sem.try_acquire().unwrap_err(), TryAcquireError::Closed);
    assert!(
        format!("{sem:?}").contains("permits: 1, waiters: false, closed: true"),
        "{sem:?}"
    );
    let full = Semaphore::new(Semaphore::MAX_PERMITS);
    assert_eq!(full.forget_permits(usize::MAX), Semaphore::MAX_PERMITS);
    assert!(format!("{full:?}").contains("state: 0x0"), "{full:?}");
}

#[test]
fn split_and_merge_move_permits_between_guards() {
    let _guard = hang_guard("split_and_merge_move_permits_between_guards");
    let sem = Semaphore::new(4);
    let mut p = sem.acquire_many(4).unwrap();
    assert!(p.split(5).is_none());
    assert_eq!(p.num_permits(), 4, "a refused split changes nothing");
    let q = p.split(3).unwrap();
    assert_eq!((p.num_permits(), q.num_permits()), (1, 3));
    let empty = p.split(0).unwrap();
    assert_eq!(empty.num_permits(), 0);
    p.merge(empty);
    p.merge(q);
    assert_eq!(p.num_permits(), 4);
    let r = p.split(4).unwrap();
    assert_eq!(p.num_permits(), 0);
    drop(p);
    assert_eq!(sem.available_permits(), 0);
    drop(r);
    assert_eq!(sem.available_permits(), 4);

    let owned = Arc::new(Semaphore::new(3));
    let mut p = Arc::clone(&owned).acquire_many_owned(3).unwrap();
    assert!(p.split(4).is_none());
    let q = p.split(2).unwrap();
    assert!(Arc::ptr_eq(q.semaphore(), &owned));
    assert_eq!((p.num_permits(), q.num_permits()), (1, 2));
    drop(q);
    assert_eq!(owned.available_permits(), 2);
    p.merge(Arc::clone(&owned).acquire_many_owned(2).unwrap());
    assert_eq!(p.num_permits(), 3);
    drop(p);
    assert_eq!(owned.available_permits(), 3);
}

#[test]
fn merging_permits_of_two_semaphores_panics_naming_both_and_loses_nothing() {
    let _guard =
        hang_guard("merging_permits_of_two_semaphores_panics_naming_both_and_loses_nothing");
    let a = Semaphore::new(2);
    let b = Semaphore::new(3);
    let mut pa = a.acquire().unwrap();
    let msg = panic_message(|| pa.merge(b.acquire_many(2).unwrap()));
    assert!(
        msg.starts_with("Permit::merge: the permits come from different semaphores"),
        "{msg}"
    );
    assert!(
        msg.contains("permits: 1") && msg.contains("permits: 1,"),
        "{msg}"
    );
    assert!(
        msg.contains(&format!("{:p}", &a)) && msg.contains(&format!("{:p}", &b)),
        "{msg}"
    );
    assert_eq!(pa.num_permits(), 1, "the guard merged into is unchanged");
    assert_eq!(
        b.available_permits(),
        3,
        "the other guard returned its permits"
    );
    drop(pa);
    assert_eq!(a.available_permits(), 2);

    let a = Arc::new(Semaphore::new(1));
    let b = Arc::new(Semaphore::new(1));
    let mut pa = Arc::clone(&a).acquire_owned().unwrap();
    let msg = panic_message(|| pa.merge(Arc::clone(&b).acquire_owned().unwrap()));
    assert!(
        msg.starts_with("OwnedPermit::merge: the permits come from different semaphores"),
        "{msg}"
    );
    assert_eq!((pa.num_permits(), b.available_permits()), (1, 1));
}

#[test]
fn a_merge_past_max_permits_panics_and_wraps_nothing() {
    let _guard = hang_guard("a_merge_past_max_permits_panics_and_wraps_nothing");
    let sem = Semaphore::new(Semaphore::MAX_PERMITS);
    let mut all = sem.acquire_many(Semaphore::MAX_PERMITS).unwrap();
    sem.add_permits(1);
    let one = sem.acquire().unwrap();
    let msg = panic_message(|| all.merge(one));
    assert!(msg.contains("exceed Semaphore::MAX_PERMITS"), "{msg}");
    assert_eq!(
        all.num_permits(),
        Semaphore::MAX_PERMITS,
        "unchanged, not wrapped"
    );
    assert_eq!(sem.available_permits(), 1, "the merged-in permit went back");
    // The exact bound merges.
    sem.forget_permits(1);
    let mut most = all.split(Semaphore::MAX_PERMITS - 1).unwrap();
    most.merge(all);
    assert_eq!(most.num_permits(), Semaphore::MAX_PERMITS);
    drop(most);
    assert_eq!(sem.available_permits(), Semaphore::MAX_PERMITS);

    let owned = Arc::new(Semaphore::new(Semaphore::MAX_PERMITS));
    let mut all = Arc::clone(&owned)
        .acquire_many_owned(Semaphore::MAX_PERMITS)
        .unwrap();
    owned.add_permits(1);
    let one = Arc::clone(&owned).acquire_owned().unwrap();
    let msg = panic_message(|| all.merge(one));
    assert!(msg.starts_with("OwnedPermit::merge: "), "{msg}");
    assert!(msg.contains("exceed Semaphore::MAX_PERMITS"), "{msg}");
    assert_eq!(all.num_permits(), Semaphore::MAX_PERMITS);
    assert_eq!(owned.forget_permits(1), 1, "the merged-in permit went back");
    drop(all);
    assert_eq!(owned.available_permits(), Semaphore::MAX_PERMITS);
}

#[test]
fn parked_threads_is_zero_when_idle() {
    let sem = Semaphore::new(0);
    assert_eq!(sem.parked_threads(), 0);
}

/// Waits until `n` threads are parked on `sem` (the calling test's watchdog fails it if they
/// never are).
fn wait_parked(sem: &Semaphore, n: usize) {
    while sem.parked_threads() != n {
        std::thread::yield_now();
    }
}

#[test]
fn with_fairness_is_const_and_new_is_eventual() {
    static FIFO: Semaphore = Semaphore::with_fairness(2, Fairness::Fifo);
    static BARGING: Semaphore = Semaphore::with_fairness(3, Fairness::Barging);
    assert_eq!(
        (FIFO.fairness(), FIFO.available_permits()),
        (Fairness::Fifo, 2)
    );
    assert_eq!(BARGING.fairness(), Fairness::Barging);
    assert_eq!(Semaphore::new(0).fairness(), Fairness::Eventual);
    assert_eq!(Fairness::default(), Fairness::Eventual);
    let max = Semaphore::with_fairness(Semaphore::MAX_PERMITS, Fairness::Fifo);
    assert_eq!(max.available_permits(), Semaphore::MAX_PERMITS);
    let msg = panic_message(|| {
        let _ = Semaphore::with_fairness(Semaphore::MAX_PERMITS + 1, Fairness::Fifo);
    });
    assert!(msg.contains("exceeds Semaphore::MAX_PERMITS"), "{msg}");
}

/// With nobody parked a FIFO semaphore behaves as any other: every form takes what is free.
#[test]
fn fifo_without_waiters_takes_what_is_free() {
    let _guard = hang_guard("fifo_without_waiters_takes_what_is_free");
    let sem = Semaphore::with_fairness(3, Fairness::Fifo);
    let a = sem.try_acquire().unwrap();
    let b = sem.try_acquire_for(Duration::ZERO).unwrap();
    let c = sem.acquire().unwrap();
    assert_eq!(sem.try_acquire().unwrap_err(), TryAcquireError::NoPermits);
    drop((a, b, c));
    assert_eq!(sem.acquire_many(3).unwrap().num_permits(), 3);
    assert_eq!(sem.available_permits(), 3);
}

/// Under `Fifo`, while a thread is parked nobody takes a permit, even one that is free: not
/// `try_acquire`, not a zero timeout or a past deadline, not a blocking acquire (it queues).
/// A request of zero still succeeds, a request too large still fails as such, and closed
/// is still reported first. The release that satisfies the head hands it the free permits
/// too: none is left in the count.
#[test]
fn fifo_lets_no_thread_take_a_permit_while_one_is_parked() {
    let _guard = hang_guard("fifo_lets_no_thread_take_a_permit_while_one_is_parked");
    let sem = Semaphore::with_fairness(2, Fairness::Fifo);
    std::thread::scope(|s| {
        // The permit is returned from the thread, held until the join, so the count is
        // read while the head still holds it.
        let head = s.spawn(|| sem.acquire_many(3).unwrap());
        wait_parked(&sem, 1);
        assert_eq!(sem.available_permits(), 2);
        assert_eq!(sem.try_acquire().unwrap_err(), TryAcquireError::NoPermits);
        assert_eq!(
            sem.try_acquire_many(2).unwrap_err(),
            TryAcquireError::NoPermits
        );
        let past = Instant::now();
        assert_eq!(
            sem.try_acquire_for(Duration::ZERO).unwrap_err(),
            TryAcquireError::TimedOut
        );
        assert_eq!(
            sem.try_acquire_until(past).unwrap_err(),
            TryAcquireError::TimedOut
        );
        assert_eq!(sem.try_acquire_many(0).unwrap().num_permits(), 0);
        let too_large = Semaphore::MAX_PERMITS + 1;
        assert_eq!(
            sem.try_acquire_many(too_large).unwrap_err(),
            TryAcquireError::TooLarge {
                requested: too_large
            }
        );
        sem.add_permits(1);
        // Handed over at once: the free two and the added one went to the head.
        assert_eq!(sem.available_permits(), 0, "{sem:?}");
        assert_eq!(head.join().unwrap().num_permits(), 3);
    });
    assert_eq!(sem.available_permits(), 3);
    assert_eq!(sem.parked_threads(), 0);
}

/// Go's semantics: a small request behind a large head waits for the head; the head is
/// served first even when the small one would fit.
#[test]
fn fifo_serves_weighted_requests_in_arrival_order() {
    let _guard = hang_guard("fifo_serves_weighted_requests_in_arrival_order");
    let sem = Semaphore::with_fairness(0, Fairness::Fifo);
    let order = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for (i, n) in [(0, 2), (1, 1)] {
            let (sem, order) = (&sem, &order);
            s.spawn(move || {
                let permit = sem.acquire_many(n).unwrap();
                order.lock().unwrap().push(i);
                drop(permit);
            });
            wait_parked(sem, i + 1);
        }
        sem.add_permits(1);
        // The head wants 2: the permit waits in the count, and the 1 behind does not take it.
        assert_eq!((sem.available_permits(), sem.parked_threads()), (1, 2));
        sem.add_permits(1);
    });
    assert_eq!(*order.lock().unwrap(), [0, 1]);
    assert_eq!(sem.available_permits(), 2);
}

/// A FIFO head that times out no longer holds up the requests behind it: it hands the free
/// permits to them as it leaves.
#[test]
fn a_fifo_head_that_times_out_lets_the_next_through() {
    let _guard = hang_guard("a_fifo_head_that_times_out_lets_the_next_through");
    let sem = Semaphore::with_fairness(1, Fairness::Fifo);
    std::thread::scope(|s| {
        let head = s.spawn(|| {
            sem.try_acquire_many_for(2, Duration::from_millis(300))
                .map(|p| p.num_permits())
        });
        wait_parked(&sem, 1);
        let next = s.spawn(|| sem.acquire().unwrap().num_permits());
        assert_eq!(head.join().unwrap(), Err(TryAcquireError::TimedOut));
        assert_eq!(next.join().unwrap(), 1);
    });
    assert_eq!(sem.available_permits(), 1);
}

/// `release_fair` hands the permits to the parked thread in every mode: a running thread
/// cannot take them, and they never show in the count.
#[test]
fn release_fair_hands_the_permits_over_in_every_mode() {
    let _guard = hang_guard("release_fair_hands_the_permits_over_in_every_mode");
    for fairness in [Fairness::Eventual, Fairness::Fifo, Fairness::Barging] {
        let sem = Arc::new(Semaphore::with_fairness(2, fairness));
        let held = sem.acquire_many(2).unwrap();
        std::thread::scope(|s| {
            // Held until the join: the count is read while the waiter holds the permits.
            let waiter = s.spawn(|| sem.acquire_many(2).unwrap());
            wait_parked(&sem, 1);
            held.release_fair();
            assert_eq!(
                sem.try_acquire().unwrap_err(),
                TryAcquireError::NoPermits,
                "{fairness:?}"
            );
            assert_eq!(waiter.join().unwrap().num_permits(), 2, "{fairness:?}");
        });
        assert_eq!(sem.available_permits(), 2, "{fairness:?}");
        // The same with an owned permit.
        let owned = Arc::clone(&sem).acquire_many_owned(2).unwrap();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| sem.acquire().unwrap());
            wait_parked(&sem, 1);
            owned.release_fair();
            // One handed over, the other counted: the waiter's one is not in the count.
            assert_eq!(sem.available_permits(), 1, "{fairness:?}");
            assert_eq!(waiter.join().unwrap().num_permits(), 1, "{fairness:?}");
        });
        // With nobody parked it is a plain release.
        Arc::clone(&sem).acquire_owned().unwrap().release_fair();
        sem.acquire_many(2).unwrap().release_fair();
        assert_eq!(sem.available_permits(), 2, "{fairness:?}");
    }
}

#[test]
fn release_fair_refuses_a_count_past_max_permits() {
    let sem = Semaphore::new(1);
    let held = sem.acquire().unwrap();
    sem.add_permits(Semaphore::MAX_PERMITS);
    let msg = panic_message(|| held.release_fair());
    assert!(msg.contains("exceed"), "{msg}");
    assert_eq!(sem.available_permits(), Semaphore::MAX_PERMITS);
}

/// Under `Eventual`, once the fairness deadline has passed (at most 1 ms after the previous
/// turn), a release that wakes a parked thread hands it the permit: a running thread cannot
/// take it. The first release that finds a waiter only starts the timer.
#[test]
fn eventual_hands_over_once_the_fairness_deadline_has_passed() {
    let _guard = hang_guard("eventual_hands_over_once_the_fairness_deadline_has_passed");
    let sem = Semaphore::new(1);
    for round in 0..3 {
        let held = sem.acquire().unwrap();
        std::thread::scope(|s| {
            // Held until the join: the count is read while the waiter holds the permit.
            let waiter = s.spawn(|| sem.acquire().unwrap());
            wait_parked(&sem, 1);
            // Past any deadline the timer can have drawn (0-1 ms).
            std::thread::sleep(Duration::from_millis(2));
            drop(held);
            if round > 0 {
                assert_eq!(
                    sem.try_acquire().unwrap_err(),
                    TryAcquireError::NoPermits,
                    "round {round}"
                );
            }
            assert_eq!(waiter.join().unwrap().num_permits(), 1);
        });
    }
    assert_eq!(sem.available_permits(), 1);
}

/// A refused add hands nothing over, in the modes whose releases hand over (`Fifo` always;
/// `Eventual` once its fairness turn is due): the parked thread stays parked, the count and
/// flags are untouched, and the error names all of `n`. Then a fitting add wakes it.
#[test]
fn a_refused_add_hands_nothing_to_a_parked_thread() {
    let _guard = hang_guard("a_refused_add_hands_nothing_to_a_parked_thread");
    for fairness in [Fairness::Fifo, Fairness::Eventual, Fairness::Barging] {
        let sem = Semaphore::with_fairness(0, fairness);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| sem.acquire().unwrap().forget());
            wait_parked(&sem, 1);
            // Under `Eventual`: the first release that finds a waiter starts the timer, and
            // one after the deadline (0-1 ms) takes the turn, so both paths are tried.
            for _ in 0..2 {
                let before = format!("{sem:?}");
                let e = sem.try_add_permits(usize::MAX).unwrap_err();
                assert_eq!((e.available(), e.added()), (0, usize::MAX), "{fairness:?}");
                assert_eq!(
                    format!("{sem:?}"),
                    before,
                    "{fairness:?}: the state changed"
                );
                assert_eq!(
                    sem.parked_threads(),
                    1,
                    "{fairness:?}: a refused add woke it"
                );
                std::thread::sleep(Duration::from_millis(2));
            }
            sem.add_permits(1);
            waiter.join().unwrap();
        });
        assert_eq!(sem.available_permits(), 0, "{fairness:?}");
    }
}
