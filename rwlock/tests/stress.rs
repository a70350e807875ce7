//! Real-thread stress tests of the lock, every one under the in-process watchdog, so a hang
//! (a lost wake-up, a starved writer) ends as a stall report within seconds instead of a hung
//! test: the watchdog prints every worker's last operation and the lock's state, and exits the
//! process with `watchdog::STALL_EXIT_CODE`. Run with `cargo test -p parksema-rwlock` (add
//! `--features broken_rwlock` for the catch test).
//!
//! Sizes: debug builds (what `cargo test` runs) a tenth of the release builds' rounds, as in
//! the root suite's stress tests; the times measured on the 2-core development machine are
//! next to each test. The exclusion and writer-progress tests stop early when a loaded machine
//! makes them slow ([`BUDGET`]; each prints the rounds it ran). `WATCHDOG_STALL_SECS` widens
//! every stall limit on a slow machine.

// A real-thread test: under the model checkers the semaphore only works inside a model.
#![cfg(not(any(feature = "loom", feature = "shuttle")))]

use watchdog::report;
mod generated;
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

/// How long one exclusion run ([`exclusion_within`]) or `writer_progress` may keep starting
/// chunks of rounds.
///
/// Every holder yields while inside (the scenarios' `hold`), which is what makes holders
/// overlap on real threads. On an idle machine the yield comes back at once: the release
/// build's 50 000 rounds take about 3.5 s here. Beside two busy processes (`yes > /dev/null`,
/// twice, on the 2-core machine) the yield hands the core to a busy process for a scheduler
/// slice while the lock is held and the other threads wait for it, and every handoff waits for
/// its woken thread to be scheduled: each round costs milliseconds, not microseconds (2 000
/// rounds took 5.5 s on `Fifo` and 12.6 s on `Barging` there, 0.01 s each without the yield),
/// so the full rounds took 163–165 s for `exclusion`, 13–110 s for the `Barging` half of
/// `exclusion_in_other_modes` and 38 s for `writer_progress`, near the 300 s of silence after
/// which `cargo xtask verify`'s supervisor fails the whole real step. With this budget the
/// same load ran 1 500 to 4 000 rounds (or writes) per thread in each, every entry checked as
/// in the full run: `exclusion` in 10 s, `exclusion_in_other_modes` in 27 s, `writer_progress`
/// in 14 s. An idle run does every round (3.8 s, 1.3 s and 0.8 s).
const BUDGET: Duration = Duration::from_secs(10);

/// Rounds per chunk of an exclusion run: a hundredth of [`ROUNDS`], so that a run stops within
/// about a chunk of its [`BUDGET`] (500 rounds took 3–5 s beside two busy processes, 0.04 s
/// idle), and the six threads started afresh for each chunk cost nothing next to it.
const CHUNK: usize = ROUNDS / 100;

/// Runs the exclusion scenario (four readers and two writers on a lock of 4 readers) on fresh
/// `build` locks, [`CHUNK`] rounds at a time, until `rounds` rounds are done or [`BUDGET`] has
/// passed with at least one chunk done. Returns the acquisitions and the rounds run.
fn exclusion_within(scenario: &str, build: Build, rounds: usize) -> (usize, usize) {
    let start = Instant::now();
    let (mut taken, mut done) = (0, 0);
    while done < rounds && (done == 0 || start.elapsed() < BUDGET) {
        let chunk = CHUNK.min(rounds - done);
        let lock = build.data_lock(4);
        let dog = arm(scenario, &lock);
        taken += scenarios::exclusion(lock, 4, 2, chunk, |name| dog.worker(name));
        drop(dog);
        done += chunk;
    }
    (taken, done)
}

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

/// Four readers and two writers hammer a `Fifo` lock of 4 readers, [`ROUNDS`] rounds each
/// (fewer on a loaded machine: [`BUDGET`]); every entry is checked against who is inside, every
/// read is whole, every write and permit is there at the end of each chunk.
#[test]
fn exclusion() {
    let start = Instant::now();
    let (taken, rounds) = exclusion_within("rwlock exclusion", Build::CORRECT, ROUNDS);
    println!(
        "real rwlock exclusion: {taken} acquisitions, {rounds} of {ROUNDS} rounds (chunks of \
         {CHUNK}, budget {} s), {:.2} s",
        BUDGET.as_secs(),
        start.elapsed().as_secs_f64()
    );
    record(
        "rwlock exclusion",
        taken,
        "acquisitions",
        &format!(
            "4 readers + 2 writers x {rounds} rounds (of {ROUNDS}, chunks of {CHUNK} within {} \
             s), max_readers 4, Fifo",
            BUDGET.as_secs()
        ),
        start,
    );
}

/// Exclusion does not depend on the fairness mode: the same traffic, at half the rounds (and
/// each mode within its own [`BUDGET`]), on `Barging` and `Eventual` locks.
#[test]
fn exclusion_in_other_modes() {
    for fairness in [Fairness::Barging, Fairness::Eventual] {
        let start = Instant::now();
        let (taken, rounds) = exclusion_within(
            &format!("rwlock exclusion, {fairness:?}"),
            Build::CORRECT.fair(fairness),
            ROUNDS / 2,
        );
        println!(
            "real rwlock exclusion, {fairness:?}: {taken} acquisitions, {rounds} of {} rounds \
             (chunks of {CHUNK}, budget {} s), {:.2} s",
            ROUNDS / 2,
            BUDGET.as_secs(),
            start.elapsed().as_secs_f64()
        );
        record(
            "rwlock exclusion",
            taken,
            "acquisitions",
            &format!(
                "4 readers + 2 writers x {rounds} rounds (of {}, chunks of {CHUNK} within {} \
                 s), max_readers 4, {fairness:?}",
                ROUNDS / 2,
                BUDGET.as_secs()
            ),
            start,
        );
    }
}

/// Writer progress under `Fifo`: four readers on a lock of 4 readers read in a loop, each
/// yielding while inside so that they overlap, until both writers have written [`ROUNDS`] / 4
/// times (in twenty runs on fresh locks, fewer on a loaded machine: [`BUDGET`]). Only the
/// writers report to the watchdog, so if no write completes within the stall limit (a writer
/// starved by the readers, or a lost wake-up) the watchdog fails the test, however busy the
/// readers are. Each read is also checked against the exact property of
/// `scenarios::writer_progress` (no reader that arrived after a parked writer gets in before
/// it).
#[test]
fn writer_progress() {
    let start = Instant::now();
    let writes = ROUNDS / 4;
    // Each run's writes: a twentieth, so that the test stops within about a run of its budget
    // (the whole 12 500 writes per writer took 38 s beside two busy processes, as the
    // exclusion runs slowed by the readers' yields inside).
    let chunk = writes / 20;
    let (mut total, mut done) = (scenarios::ProgressRun::default(), 0);
    while done < writes && (done == 0 || start.elapsed() < BUDGET) {
        let n = chunk.min(writes - done);
        let lock = Build::CORRECT.data_lock(4);
        let dog = arm("rwlock writer progress", &lock);
        let run = scenarios::writer_progress(lock, 4, None, 2, n, |name| dog.worker(name));
        drop(dog);
        assert_eq!(run.writes, 2 * n, "every write completes");
        total.writes += run.writes;
        total.reads += run.reads;
        total.armed += run.armed;
        done += n;
    }
    println!(
        "real rwlock writer progress: {} writes ({done} of {writes} per writer, runs of \
         {chunk}, budget {} s) and {} reads ({} of them after a writer was seen parked), \
         {:.2} s",
        total.writes,
        BUDGET.as_secs(),
        total.reads,
        total.armed,
        start.elapsed().as_secs_f64()
    );
    record(
        "rwlock writer progress",
        total.writes + total.reads,
        "acquisitions",
        &format!(
            "4 readers looping until 2 writers x {done} writes (of {writes}, runs of {chunk} \
             within {} s) are done, max_readers 4, Fifo; {} reads, {} after a writer was seen \
             parked",
            BUDGET.as_secs(),
            total.reads,
            total.armed
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

/// Generated programs against the lock's specification (`generated.rs`) on real threads.
mod against_the_spec {
    use std::time::Instant;

    use proptest::test_runner::{Config, RngSeed, TestRunner};

    use super::generated::{Coverage, any_program, program_seed, run};
    use super::{Build, report, stall};

    /// Programs per run (each spawns up to four threads that start together: about 2 ms a
    /// program here).
    const PROGRAMS: u32 = 1000;

    /// Runs the programs against `build` under a watchdog until one fails; returns the
    /// failure, the seconds and what the runs reached. Real threads do not replay a
    /// schedule, so a failure is reported as it came, not shrunk.
    fn first_catch(build: Build) -> (Option<String>, f64, Coverage) {
        let dog = watchdog::Watchdog::arm("parksema-rwlock generated programs", stall());
        let worker = dog.worker("generated programs");
        let start = Instant::now();
        let coverage = std::cell::RefCell::new(Coverage::default());
        let mut runner = TestRunner::new(Config {
            cases: PROGRAMS,
            failure_persistence: None,
            max_shrink_iters: 0,
            rng_seed: RngSeed::Fixed(program_seed()),
            ..Config::default()
        });
        let result = runner.run(&any_program(4, 5), |program| {
            coverage.borrow_mut().add(run(&program, build, true));
            worker.op("program");
            Ok(())
        });
        drop(dog);
        let found = result
            .err()
            .map(|e| format!("{e} (PROPTEST_RNG_SEED={})", program_seed()));
        (found, start.elapsed().as_secs_f64(), coverage.into_inner())
    }

    #[test]
    fn generated_programs_match_the_specification() {
        let (found, secs, coverage) = first_catch(Build::CORRECT);
        println!(
            "real: {PROGRAMS} rwlock programs in {secs:.1} s, PROPTEST_RNG_SEED={}\n{}",
            program_seed(),
            coverage.table()
        );
        report::check(
            "real",
            "rwlock generated programs",
            u64::from(PROGRAMS),
            "programs",
            &format!("up to 4 threads, PROPTEST_RNG_SEED={}", program_seed()),
            secs,
        );
        assert_eq!(found, None, "the correct lock failed a generated program");
        // Reported, not required: some windows are microseconds wide here.
        coverage.report_and_require("real", "rwlock generated programs", 0);
    }

    /// The writer that takes one permit too few is caught by the generated programs.
    #[cfg(feature = "broken_rwlock")]
    #[test]
    fn generated_programs_catch_writer_short() {
        let (found, secs, _) = first_catch(Build::flawed(parksema_rwlock::Flaw::WriterShort));
        let short = found
            .as_deref()
            .map(|m| m.chars().take(80).collect::<String>());
        report::cell(
            "real",
            "rwlock generated programs",
            "rwlock WriterShort",
            short.as_deref(),
            secs,
        );
        let found = found.expect("WriterShort was not caught by the generated programs");
        println!("caught WriterShort by real generated programs in {secs:.2} s: {found}");
    }
}
