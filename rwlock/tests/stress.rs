//! Real-thread stress tests of the lock, every one under the in-process watchdog, so a hang
//! (a lost wake-up, a starved writer) ends as a stall report within seconds instead of a hung
//! test: the watchdog prints every worker's last operation and the lock's state, and exits the
//! process with `watchdog::STALL_EXIT_CODE`. Run with `cargo test -p parksema-rwlock` (add
//! `--features broken_rwlock` for the catch test).
//!
//! Sizes: debug builds (what `cargo test` runs) a tenth of the release builds' rounds, as in
//! the root suite's stress tests; the times measured on the 2-core development machine are
//! next to each test. `WATCHDOG_STALL_SECS` widens every stall limit on a slow machine.

// A real-thread test: under the model checkers the semaphore only works inside a model.
#![cfg(not(any(feature = "loom", feature = "shuttle")))]

#[path = "../../models/report.rs"]
mod report;
#[path = "scenarios.rs"]
mod scenarios;

use std::sync::Arc;
use std::time::{Duration, Instant};

use parksema_rwlock::{Fairness, RwLock};
use scenarios::{Build, Data};
use watchdog::Watchdog;

/// Rounds per thread: 50 000 in release builds, 5 000 in debug builds (unoptimized, about ten
/// times slower per round, and the debug run is the quick one).
const ROUNDS: usize = if cfg!(debug_assertions) {
    5_000
} else {
    50_000
};

/// The stall limit: no worker may go this long without an operation. Every round here takes
/// microseconds, so 10 s is far beyond any honest pause on a loaded machine.
fn stall() -> Duration {
    watchdog::stall_limit(Duration::from_secs(10))
}

/// Arms a watchdog for `scenario` that describes `lock` (its `Debug`: free permits, and the
/// value if a reader fits) and the threads parked on it.
fn arm(scenario: &str, lock: &Arc<RwLock<Data>>) -> Watchdog {
    let dog = Watchdog::arm(scenario, stall());
    let seen = Arc::clone(lock);
    dog.describe(move || format!("{seen:?}, {} thread(s) parked", seen.parked_threads()));
    dog
}

/// Records a check against the correct lock for the report.
fn record(check: &str, count: usize, unit: &str, detail: &str, start: Instant) {
    report::check(
        "real",
        check,
        count as u64,
        unit,
        detail,
        start.elapsed().as_secs_f64(),
    );
}

/// Four readers and two writers hammer a `Fifo` lock of 4 readers, [`ROUNDS`] rounds each;
/// every entry is checked against who is inside, every read is whole, every write and permit is
/// there at the end.
#[test]
fn exclusion() {
    let start = Instant::now();
    let lock = Build::CORRECT.data_lock(4);
    let dog = arm("rwlock exclusion", &lock);
    let taken = scenarios::exclusion(lock, 4, 2, ROUNDS, |name| dog.worker(name));
    drop(dog);
    println!(
        "real rwlock exclusion: {taken} acquisitions, {:.2} s",
        start.elapsed().as_secs_f64()
    );
    record(
        "rwlock exclusion",
        taken,
        "acquisitions",
        &format!("4 readers + 2 writers x {ROUNDS} rounds, max_readers 4, Fifo"),
        start,
    );
}

/// Exclusion does not depend on the fairness mode: the same traffic, at half the rounds, on
/// `Barging` and `Eventual` locks.
#[test]
fn exclusion_in_other_modes() {
    for fairness in [Fairness::Barging, Fairness::Eventual] {
        let start = Instant::now();
        let lock = Build::CORRECT.fair(fairness).data_lock(4);
        let dog = arm(&format!("rwlock exclusion, {fairness:?}"), &lock);
        let taken = scenarios::exclusion(lock, 4, 2, ROUNDS / 2, |name| dog.worker(name));
        drop(dog);
        println!(
            "real rwlock exclusion, {fairness:?}: {taken} acquisitions, {:.2} s",
            start.elapsed().as_secs_f64()
        );
        record(
            "rwlock exclusion",
            taken,
            "acquisitions",
            &format!(
                "4 readers + 2 writers x {} rounds, max_readers 4, {fairness:?}",
                ROUNDS / 2
            ),
            start,
        );
    }
}

/// Writer progress under `Fifo`: four readers on a lock of 4 readers read in a loop, each
/// yielding while inside so that they overlap, until both writers have written [`ROUNDS`] / 4
/// times. Only the writers report to the watchdog, so if no write completes within the stall
/// limit (a writer starved by the readers, or a lost wake-up) the watchdog fails the test,
/// however busy the readers are. Each read is also checked against the exact property of
/// `scenarios::writer_progress` (no reader that arrived after a parked writer gets in before
/// it).
#[test]
fn writer_progress() {
    let start = Instant::now();
    let writes = ROUNDS / 4;
    let lock = Build::CORRECT.data_lock(4);
    let dog = arm("rwlock writer progress", &lock);
    let run = scenarios::writer_progress(lock, 4, None, 2, writes, |name| dog.worker(name));
    drop(dog);
    assert_eq!(run.writes, 2 * writes, "every write completes");
    println!(
        "real rwlock writer progress: {} writes and {} reads ({} of them after a writer was \
         seen parked), {:.2} s",
        run.writes,
        run.reads,
        run.armed,
        start.elapsed().as_secs_f64()
    );
    record(
        "rwlock writer progress",
        run.writes + run.reads,
        "acquisitions",
        &format!(
            "4 readers looping until 2 writers x {writes} writes are done, max_readers 4, Fifo; \
             {} reads, {} after a writer was seen parked",
            run.reads, run.armed
        ),
        start,
    );
}

/// The writer-progress check must fail on a `Barging` lock on real threads too: a reader that
/// finds a permit free takes it while a writer is parked. Up to `TRIES` tries of the
/// scenario at a tenth of `writer_progress`'s writes; prints how many it needed.
#[test]
fn writer_progress_fails_on_barging() {
    /// The check failed in the first try in each of 10 runs here, and in the first try in 20
    /// of 20 runs of this test in the debug build and 20 of 20 in the release build
    /// (`cargo xtask verify`'s) beside two busy processes (`yes > /dev/null`, twice, on the
    /// 2-core machine); 20 tries leave a margin.
    const TRIES: usize = 20;
    let expected = "writer progress: a reader that arrived after a writer parked";
    let writes = ROUNDS / 40;
    let start = Instant::now();
    let mut caught = None;
    for tried in 1..=TRIES {
        let lock = Build::CORRECT.fair(Fairness::Barging).data_lock(4);
        let dog = arm("rwlock writer progress, Barging", &lock);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            scenarios::writer_progress(lock, 4, None, 2, writes, |name| dog.worker(name))
        }));
        drop(dog);
        if let Err(payload) = outcome {
            caught = Some((tried, scenarios::panic_text(&*payload)));
            break;
        }
    }
    assert_catch(
        "rwlock writer progress",
        "rwlock mode Barging",
        expected,
        caught,
        TRIES,
        start,
    );
}

/// Records and checks a real-thread catch: `caught` is the try that failed and its message.
fn assert_catch(
    check: &str,
    flaw: &str,
    expected: &str,
    caught: Option<(usize, String)>,
    tries: usize,
    start: Instant,
) {
    let secs = start.elapsed().as_secs_f64();
    let short = caught.as_ref().map(|(_, m)| {
        m.lines()
            .next()
            .unwrap_or(m)
            .split(" (")
            .next()
            .unwrap_or(m)
            .chars()
            .take(100)
            .collect::<String>()
    });
    report::cell("real", check, flaw, short.as_deref(), secs);
    let (tried, message) = caught.unwrap_or_else(|| {
        panic!("{flaw} was not caught on real threads by {check} in {tries} tries")
    });
    assert!(
        message.contains(expected),
        "{flaw} on real threads ended in the wrong failure in {check}: {message}"
    );
    println!(
        "caught {flaw} on real threads in {check}: {}, in try {tried} of at most {tries}, \
         {secs:.2} s",
        short.unwrap_or_default()
    );
}

/// `Flaw::WriterShort` caught on real threads: the exclusion scenario on a lock of 2 readers
/// whose writer takes 1 permit, 2 readers and 1 writer of 200 rounds a try, at most
/// `TRIES` tries; prints how many it needed.
///
/// The flawed lock lets a reader read the value while the writer writes it: that is a data
/// race on plain integers, the flaw's own fault, which the entry check (made before the
/// value is touched) reports as soon as the two are inside together.
#[cfg(feature = "broken_rwlock")]
#[test]
fn catches_writer_short() {
    /// Each try runs in a few milliseconds; the flaw was caught in the first try in every run
    /// here (beside two busy processes, `yes > /dev/null` twice on the 2-core machine: 20 of
    /// 20 runs of this test in the debug build and 20 of 20 in the release build, each in try
    /// 1), so 50 leaves a wide margin and still fails in well under a second if the check
    /// stops seeing the flaw.
    const TRIES: usize = 50;
    let expected = "exclusion: a ";
    let start = Instant::now();
    let mut caught = None;
    for tried in 1..=TRIES {
        let lock = Build::flawed(parksema_rwlock::Flaw::WriterShort).data_lock(2);
        let dog = arm("rwlock exclusion, WriterShort", &lock);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            scenarios::exclusion(lock, 2, 1, 200, |name| dog.worker(name))
        }));
        drop(dog);
        if let Err(payload) = outcome {
            caught = Some((tried, scenarios::panic_text(&*payload)));
            break;
        }
    }
    assert_catch(
        "rwlock exclusion",
        "rwlock WriterShort",
        expected,
        caught,
        TRIES,
        start,
    );
}
