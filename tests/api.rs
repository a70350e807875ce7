//! Single-threaded behaviour of the public API: construction limits, overflow, close,
//! forget, unwinding, Debug, and the one-word size.

// A real-thread test: under the model checkers the semaphore only works inside a model.
#![cfg(not(any(feature = "loom", feature = "shuttle")))]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use parksema::{OwnedPermit, Permit, Semaphore, TryAcquireError};

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
    assert!(format!("{held:?}").starts_with("Permit { semaphore: Semaphore { permits: 0"));
}

#[test]
fn owned_permit_debug_shows_its_semaphore() {
    let _guard = hang_guard("owned_permit_debug_shows_its_semaphore");
    let sem = Arc::new(Semaphore::new(2));
    let held = Arc::clone(&sem).acquire_owned().unwrap();
    let text = format!("{held:?}");
    assert!(
        text.starts_with("OwnedPermit { semaphore: Semaphore { permits: 1, waiters: false"),
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
}

#[test]
fn parked_threads_is_zero_when_idle() {
    let sem = Semaphore::new(0);
    assert_eq!(sem.parked_threads(), 0);
}
