//! Single-threaded behaviour of the public API: construction limits, overflow, close,
//! forget, unwinding, Debug, the one-word size, weighted requests and their limits, timeouts
//! that need no other thread, `forget_permits`, `split` and `merge`, and the error messages.

// A real-thread test: under the model checkers the semaphore only works inside a model.
#![cfg(not(any(feature = "loom", feature = "shuttle")))]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parksema::{AcquireError, OwnedPermit, Permit, Semaphore, TryAcquireError};

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
fn semaphore_is_one_word() {
    assert_eq!(size_of::<Semaphore>(), size_of::<usize>());
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
    assert!(msg.contains("cannot add 1 permits"), "{msg}");
    assert_eq!(sem.available_permits(), Semaphore::MAX_PERMITS);
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
        text.starts_with("Semaphore { permits: 5, waiters: false, closed: false, state: 0x28"),
        "{text}"
    );
    sem.close();
    let text = format!("{sem:?}");
    assert!(text.contains("closed: true, state: 0x2a"), "{text}");
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
    assert!(msg.contains("different semaphores"), "{msg}");
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
    assert!(msg.contains("different semaphores"), "{msg}");
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
