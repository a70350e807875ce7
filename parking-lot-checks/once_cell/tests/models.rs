//! once_cell's `parking_lot` `OnceCell`, every published version on `parking_lot_core`
//! (generated from the registry's source, on parkcheck's park table), under loom or shuttle:
//! `cargo test -p parkcheck-once-cell --features loom --test models` (or `shuttle`). Each
//! model runs once per distinct text of `imp_pl.rs` (the versions sharing one are named in
//! its output), unbounded under loom (every interleaving: the models have at most three
//! threads and a handful of steps; their executions are printed) and with 1 000 random plus
//! 1 000 PCT (depth 3) schedules under shuttle.
//!
//! What once_cell's docs promise, as `imp_pl.rs` provides it:
//! - `initialize` runs the initializer exactly once, and every caller returns with the value
//!   there and readable (the others park until it is set);
//! - `wait` (1.12.0 on) returns only once a value is set, and then the value is readable,
//!   also after an initializer that failed (once_cell 1.21.4's fix, its #295: from 1.12.0 to
//!   1.21.3 a waiter woken by the failed initializer's guard returned with the cell empty,
//!   and `sync::OnceCell::wait` then read the missing value).
//!
//! Each model is shown to catch a flaw: a copy of the latest version that wakes nobody
//! (deadlock, in both checkers), and under loom every atomic made `Relaxed` (loom's race
//! report on the value); the third model catches the historical bug in the versions that
//! have it.

#![cfg(any(feature = "loom", feature = "shuttle"))]

use parkcheck_once_cell::{parkcheck, Cell, InitError, Source, Value, FLAWED_NO_WAKE_UP, VERSIONS};

use parkcheck::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use parkcheck::sync::thread;
use std::sync::Arc;

/// A model: what it is called, and its body for one version.
type Model = (&'static str, fn(&'static Source));

/// Random and PCT schedules per model under shuttle (each finishes in well under a second
/// per version).
const SCHEDULES: usize = 1000;

/// A new cell of `source`, used once on this thread before it is shared (the shimmed atomic
/// is created at its first use, which loom requires to be ordered before the others').
fn new_cell(source: &Source) -> Arc<dyn Cell> {
    let cell: Arc<dyn Cell> = Arc::from((source.new)());
    assert!(!cell.is_initialized(), "a new cell is empty");
    cell
}

/// Two threads initialize the cell at once: the initializer runs once, and each returns with
/// the value there and readable (the loser, finding the winner running, parks until the
/// winner's guard wakes it).
fn initialize_runs_once(source: &'static Source) {
    let cell = new_cell(source);
    let calls = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (cell, calls) = (Arc::clone(&cell), Arc::clone(&calls));
            thread::spawn(move || {
                let result = cell.initialize(Box::new(|| {
                    calls.fetch_add(1, SeqCst);
                    Ok(Value::new(7))
                }));
                assert_eq!(result, Ok(()), "the initializer does not fail");
                assert_eq!(
                    cell.get().map(Value::read),
                    Some(7),
                    "initialize returned without the value"
                );
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(calls.load(SeqCst), 1, "the initializer ran more than once");
}

/// A thread waits while the main thread initializes: `wait` returns with the value there.
fn wait_returns_once_a_value_is_set(source: &'static Source) {
    let cell = new_cell(source);
    let waiter = {
        let cell = Arc::clone(&cell);
        thread::spawn(move || {
            cell.wait();
            assert_eq!(
                cell.get().map(Value::read),
                Some(7),
                "wait returned without the value"
            );
        })
    };
    assert_eq!(cell.initialize(Box::new(|| Ok(Value::new(7)))), Ok(()));
    waiter.join().unwrap();
}

/// One thread's initializer returns `Err` (once_cell's `get_or_try_init`) while another
/// waits; the main thread then initializes the cell. The waiter must return only with the
/// value there: the failed initializer's guard resets the cell and wakes the waiter, which
/// must park again.
///
/// A panicking initializer, as once_cell's changelog describes #295, takes the same path
/// (the guard's drop) but cannot be run here: loom's mutex, which the park table's model
/// takes in that drop, poisons itself when taken during unwinding, and shuttle cannot tell
/// apart two tasks unwinding at once (the waiter's failed assertion beside the panic).
fn wait_outlasts_an_erring_initializer(source: &'static Source) {
    let cell = new_cell(source);
    let failing = {
        let cell = Arc::clone(&cell);
        thread::spawn(move || {
            assert_eq!(
                cell.initialize(Box::new(|| Err(InitError))),
                Err(InitError),
                "the initializer's error is returned"
            );
        })
    };
    let waiter = {
        let cell = Arc::clone(&cell);
        thread::spawn(move || {
            cell.wait();
            assert!(
                cell.is_initialized(),
                "wait returned with the cell empty, after an initializer failed"
            );
            assert_eq!(cell.get().map(Value::read), Some(7));
        })
    };
    failing.join().unwrap();
    assert_eq!(cell.initialize(Box::new(|| Ok(Value::new(7)))), Ok(()));
    waiter.join().unwrap();
}

/// Runs `model` on `source` under this build's checker, unbounded under loom, printing its
/// size and time.
fn check(name: &str, source: &'static Source, model: fn(&'static Source)) {
    let start = std::time::Instant::now();
    let runs = parkcheck_shim::check(None, SCHEDULES, move || model(source));
    let unit = if cfg!(feature = "loom") {
        "executions (unbounded)"
    } else {
        "schedules (random + PCT)"
    };
    println!(
        "once_cell {:?} {name}: {runs} {unit}, {:.2} s",
        source.versions,
        start.elapsed().as_secs_f64()
    );
}

/// The failure's message when `model` runs on `source` inside `flaw`, `None` if it passed.
fn failure(
    name: &str,
    source: &'static Source,
    model: fn(&'static Source),
    flaw: impl FnOnce(&mut dyn FnMut()),
) -> Option<String> {
    let mut outcome = None;
    flaw(&mut || outcome = Some(parkcheck_shim::failure(|| check(name, source, model))));
    outcome.expect("the flaw runs the model")
}

#[test]
fn initialize_runs_the_initializer_once() {
    for source in VERSIONS {
        check("initialize_runs_once", source, initialize_runs_once);
    }
}

#[test]
fn wait_returns_once_a_value_is_set_in_every_version_with_wait() {
    for source in VERSIONS.iter().filter(|s| s.has_wait) {
        check(
            "wait_returns_once_a_value_is_set",
            source,
            wait_returns_once_a_value_is_set,
        );
    }
}

/// Runs the model of a failed initializer on every version with `wait` and asserts where it
/// fails: on every version from 1.12.0 to 1.21.3 (each with the message of a waiter that
/// returned to an empty cell), and nowhere else.
fn assert_found_before_1_21_4(name: &str, model: fn(&'static Source)) {
    let mut found: Vec<&str> = Vec::new();
    for source in VERSIONS.iter().filter(|s| s.has_wait) {
        match failure(name, source, model, |run| run()) {
            None => println!("once_cell {:?} {name}: passes", source.versions),
            Some(m) => {
                assert!(
                    m.contains("wait returned with the cell empty"),
                    "{:?}: another failure: {m}",
                    source.versions
                );
                println!("once_cell {:?} {name}: FINDS #295: {m}", source.versions);
                found.extend(source.versions);
            }
        }
    }
    let expected: Vec<&str> = VERSIONS
        .iter()
        .filter(|s| s.has_wait)
        .flat_map(|s| s.versions.iter().copied())
        .filter(|&v| v != "1.21.4")
        .collect();
    assert_eq!(
        found, expected,
        "{name}: the versions where wait returns early"
    );
}

/// once_cell's #295, found again: a waiter woken by an initializer that failed returns to an
/// empty cell, on 1.12.0 to 1.21.3; 1.21.4 fixed it. Its changelog names a panicking
/// initializer; one that returns `Err` takes the same path (the guard resets the cell and
/// wakes everyone).
#[test]
fn finding_wait_returns_early_after_an_erring_initializer_before_1_21_4() {
    assert_found_before_1_21_4(
        "wait_outlasts_an_erring_initializer",
        wait_outlasts_an_erring_initializer,
    );
}

/// The relaxed-atomics flaw is caught by the two models that read the value (loom's race
/// report: nothing orders the read after the initializer's write).
#[cfg(feature = "loom")]
#[test]
fn relaxed_atomics_are_caught() {
    let latest = VERSIONS.last().expect("versions are listed");
    let models: [Model; 2] = [
        ("initialize_runs_once", initialize_runs_once),
        (
            "wait_returns_once_a_value_is_set",
            wait_returns_once_a_value_is_set,
        ),
    ];
    for (name, model) in models {
        let caught = failure(name, latest, model, |run| {
            parkcheck_once_cell::with_relaxed_orderings(run)
        });
        assert!(
            caught
                .as_deref()
                .is_some_and(|m| m.contains("Causality violation")),
            "{name}: relaxed atomics were not caught: {caught:?}"
        );
    }
}

/// The copy of the latest version that wakes nobody deadlocks every model (the checker's
/// deadlock report).
#[test]
fn a_lost_wake_up_is_caught() {
    let models: [Model; 3] = [
        ("initialize_runs_once", initialize_runs_once),
        (
            "wait_returns_once_a_value_is_set",
            wait_returns_once_a_value_is_set,
        ),
        (
            "wait_outlasts_an_erring_initializer",
            wait_outlasts_an_erring_initializer,
        ),
    ];
    for (name, model) in models {
        let caught = failure(name, &FLAWED_NO_WAKE_UP, model, |run| run());
        assert!(
            caught.as_deref().is_some_and(|m| m.contains("deadlock")),
            "{name}: the lost wake-up was not caught: {caught:?}"
        );
    }
}
