//! Shuttle tests of the lock: the exclusion scenario at a larger size than loom can afford, and
//! the exact writer-progress property, under shuttle's random scheduler and its PCT scheduler
//! (probabilistic concurrency testing, depth 3), with the lock's semaphore compiled against
//! shuttle's atomics and the mocked park table. Run with
//! `cargo test -p parksema-rwlock --features shuttle` (add `broken_rwlock` for the catch
//! test).
//!
//! The counts are chosen so the file runs in a few seconds on the 2-core development machine
//! (the time measured there, test profile, is next to each); the flaw and the `Barging` mode
//! are caught within the first few schedules (see the catch tests), far inside
//! [`CATCH_SCHEDULES`]. `SHUTTLE_ITERATIONS` multiplies every count, and
//! `SHUTTLE_RANDOM_SEED` fixes the schedulers' seed (shuttle reads it itself).

#![cfg(feature = "shuttle")]

use watchdog::report;
mod generated;
#[path = "scenarios.rs"]
mod scenarios;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use parksema_rwlock::Fairness;
use scenarios::Build;

/// The schedules within which a catch test must see its failure, per scheduler. Each was
/// caught in the first few (the measured figures are printed by the catch tests and in the
/// crate's README); this leaves a wide margin.
const CATCH_SCHEDULES: usize = 1000;

/// `n`, times `SHUTTLE_ITERATIONS` if set.
fn iterations(n: usize) -> usize {
    n * std::env::var("SHUTTLE_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
}

/// Which seed the schedulers started from, for the report.
fn seed_note() -> String {
    std::env::var("SHUTTLE_RANDOM_SEED").map_or("seed drawn per run".to_string(), |s| {
        format!("SHUTTLE_RANDOM_SEED={s}")
    })
}

/// Runs `f` under the random scheduler and the PCT scheduler (depth 3), `n` schedules each;
/// prints and records the size and time as the check `check` with `detail`.
fn check(check: &str, detail: &str, n: usize, f: impl Fn() + Send + Sync + Clone + 'static) {
    let start = Instant::now();
    shuttle::check_random(f.clone(), iterations(n));
    shuttle::check_pct(f, iterations(n), 3);
    let secs = start.elapsed().as_secs_f64();
    println!(
        "shuttle {check} ({detail}): {} random + {} PCT schedules, {secs:.2} s",
        iterations(n),
        iterations(n)
    );
    report::check(
        "shuttle",
        check,
        2 * iterations(n) as u64,
        "schedules",
        &format!("{detail}; random + PCT (depth 3), {}", seed_note()),
        secs,
    );
}

/// A scheduler to run a catch test under.
#[derive(Clone, Copy, Debug)]
enum Scheduler {
    Random,
    Pct,
}

/// Runs `body` under `scheduler` for up to [`CATCH_SCHEDULES`] schedules and asserts that it
/// fails with a message containing `expected`; records the cell (`check` against `flaw`) and
/// prints the catch.
fn assert_caught(
    check: &str,
    flaw: &str,
    expected: &str,
    scheduler: Scheduler,
    body: impl Fn() + Send + Sync + 'static,
) {
    let schedules = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = {
        let schedules = std::sync::Arc::clone(&schedules);
        move || {
            schedules.fetch_add(1, Ordering::Relaxed);
            body();
        }
    };
    let start = Instant::now();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match scheduler {
        Scheduler::Random => shuttle::check_random(counted, CATCH_SCHEDULES),
        Scheduler::Pct => shuttle::check_pct(counted, CATCH_SCHEDULES, 3),
    }));
    let secs = start.elapsed().as_secs_f64();
    let schedules = schedules.load(Ordering::Relaxed);
    let message = outcome.err().map(|p| scenarios::panic_text(&*p));
    let short = message.as_deref().map(|m| match m.find(expected) {
        Some(at) => m[at..]
            .lines()
            .next()
            .unwrap_or(expected)
            .split(" (")
            .next()
            .unwrap_or(expected)
            .chars()
            .take(100)
            .collect::<String>(),
        None => m.chars().take(100).collect(),
    });
    let check = match scheduler {
        Scheduler::Random => check.to_string(),
        Scheduler::Pct => format!("{check} (PCT)"),
    };
    report::cell("shuttle", &check, flaw, short.as_deref(), secs);
    let message = message.unwrap_or_else(|| {
        panic!("{flaw} was not caught by shuttle {check} within {CATCH_SCHEDULES} schedules")
    });
    assert!(
        message.contains(expected),
        "{flaw} in shuttle {check} ended in the wrong failure: {message}"
    );
    println!(
        "caught {flaw} in shuttle {check}: {}, in schedule {schedules} of at most \
         {CATCH_SCHEDULES}, {secs:.2} s",
        short.unwrap_or_default()
    );
}

/// Three readers and two writers, three rounds each, on a lock of 3 readers (`Fifo`): every
/// entry checked against who is inside, every read whole, every write and permit there at
/// the end.
#[test]
fn exclusion() {
    check(
        "rwlock exclusion",
        "3 readers + 2 writers, 3 rounds each, max_readers 3, Fifo",
        2000,
        || {
            scenarios::exclusion(Build::CORRECT.data_lock(3), 3, 2, 3, |_| ());
        },
    );
}

/// Exclusion does not depend on the fairness mode: the same scenario on `Barging` and
/// `Eventual` locks.
#[test]
fn exclusion_in_other_modes() {
    for fairness in [Fairness::Barging, Fairness::Eventual] {
        check(
            "rwlock exclusion",
            &format!("3 readers + 2 writers, 3 rounds each, max_readers 3, {fairness:?}"),
            1000,
            move || {
                scenarios::exclusion(Build::CORRECT.fair(fairness).data_lock(3), 3, 2, 3, |_| ());
            },
        );
    }
}

/// The writer-progress scenario's size: three readers of four rounds each on a lock of 3
/// readers, keeping it shared among themselves, and one writer writing twice.
fn progress_body(build: Build) -> scenarios::ProgressRun {
    scenarios::writer_progress(build.data_lock(3), 3, Some(4), 1, 2, |_| ())
}

/// Under `Fifo`, once a writer is parked no reader that arrives after it gets the lock before
/// it (see `scenarios::writer_progress`), at two sizes: [`progress_body`]'s, and two writers
/// among three readers on a lock of 2 readers (so that readers park too, behind a writer or
/// for want of a permit, and the parked-thread count mixes readers and writers). The test also
/// asserts that the property was armed, that is that some reads did start after a writer was
/// seen parked, so that it cannot pass by checking nothing.
#[test]
fn writer_progress() {
    static ARMED: AtomicUsize = AtomicUsize::new(0);
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    check(
        "rwlock writer progress",
        "3 readers x 4 reads + 1 writer x 2 writes, max_readers 3, Fifo",
        2000,
        || {
            let run = progress_body(Build::CORRECT);
            assert_eq!(run.writes, 2, "every write completes");
            ARMED.fetch_add(run.armed, Ordering::Relaxed);
            RUNS.fetch_add(1, Ordering::Relaxed);
        },
    );
    check(
        "rwlock writer progress",
        "3 readers x 3 reads + 2 writers x 2 writes, max_readers 2, Fifo",
        1000,
        || {
            let run =
                scenarios::writer_progress(Build::CORRECT.data_lock(2), 3, Some(3), 2, 2, |_| ());
            assert_eq!(run.writes, 4, "every write completes");
            ARMED.fetch_add(run.armed, Ordering::Relaxed);
            RUNS.fetch_add(1, Ordering::Relaxed);
        },
    );
    let (armed, runs) = (ARMED.load(Ordering::Relaxed), RUNS.load(Ordering::Relaxed));
    println!("shuttle rwlock writer progress: {armed} reads armed the check in {runs} schedules");
    assert!(
        armed > 0,
        "writer progress: no read started after a writer was seen parked in {runs} schedules: \
         the check never ran"
    );
}

/// The writer-progress check must fail on a `Barging` lock: a reader that finds a permit
/// free takes it even though the writer is parked (the "mode" row of the matrix: the check is
/// shown to fail where its property is not promised).
#[test]
fn writer_progress_fails_on_barging() {
    for scheduler in [Scheduler::Random, Scheduler::Pct] {
        assert_caught(
            "rwlock writer progress",
            "rwlock mode Barging",
            "writer progress: a reader that arrived after a writer parked",
            scheduler,
            || {
                progress_body(Build::CORRECT.fair(Fairness::Barging));
            },
        );
    }
}

/// The exclusion scenario must catch `Flaw::WriterShort` under both schedulers.
#[cfg(feature = "broken_rwlock")]
#[test]
fn catches_writer_short() {
    for scheduler in [Scheduler::Random, Scheduler::Pct] {
        assert_caught(
            "rwlock exclusion",
            "rwlock WriterShort",
            "exclusion: a ",
            scheduler,
            || {
                let lock = Build::flawed(parksema_rwlock::Flaw::WriterShort).data_lock(3);
                scenarios::exclusion(lock, 3, 2, 3, |_| ());
            },
        );
    }
}

/// Generated programs against the lock's specification (`generated.rs`).
mod against_the_spec {
    use std::cell::RefCell;
    use std::rc::Rc;

    use proptest::test_runner::{Config as ProptestConfig, RngSeed, TestCaseError, TestRunner};

    use super::generated::{Coverage, any_program, program_seed, run};
    use super::{Build, report};

    /// Programs per run: 1 000 (× 50 random schedules each), or `PARKSEMA_SPEC_PROGRAMS`.
    fn programs() -> u32 {
        std::env::var("PARKSEMA_SPEC_PROGRAMS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1000)
    }

    /// Schedules per program; `SHUTTLE_ITERATIONS` scales it.
    const SCHEDULES: usize = 50;

    /// The schedules' seed: `SHUTTLE_RANDOM_SEED`, else a fixed one.
    fn schedule_seed() -> u64 {
        std::env::var("SHUTTLE_RANDOM_SEED")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0x5EED_0008)
    }

    /// The seeds, as a failure or the report states them: enough to replay the run.
    fn seeds() -> String {
        format!(
            "PROPTEST_RNG_SEED={} SHUTTLE_RANDOM_SEED={}",
            program_seed(),
            schedule_seed()
        )
    }

    /// The text of a panic's payload.
    fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    }

    /// Runs the first `cases` generated programs (up to 4 threads) against `build` until one
    /// fails; returns the failure, the time to it and what the runs reached. `shrink`:
    /// whether proptest shrinks a failing program (the correct lock's run does).
    fn first_catch(build: Build, shrink: bool, cases: u32) -> (Option<String>, f64, Coverage) {
        let start = std::time::Instant::now();
        let coverage = Rc::new(RefCell::new(Coverage::default()));
        let mut runner = TestRunner::new(ProptestConfig {
            cases,
            failure_persistence: None,
            max_shrink_iters: if shrink { 1024 } else { 0 },
            rng_seed: RngSeed::Fixed(program_seed()),
            ..ProptestConfig::default()
        });
        let seed = schedule_seed();
        let result = runner.run(&any_program(4, 5), |p| {
            let q = p.clone();
            let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let sink = std::sync::Arc::clone(&seen);
            let outcome = std::panic::catch_unwind(move || {
                shuttle::check_random_with_seed(
                    move || {
                        let reached = run(&q, build, true);
                        sink.lock().unwrap().push(reached);
                    },
                    seed,
                    super::iterations(SCHEDULES),
                );
            });
            for reached in seen.lock().unwrap().drain(..) {
                coverage.borrow_mut().add(reached);
            }
            outcome.map_err(|payload| TestCaseError::fail(panic_text(&*payload)))
        });
        let found = result.err().map(|e| match e {
            proptest::test_runner::TestError::Fail(reason, program) => {
                format!("{} in {program:?} ({})", reason.message(), seeds())
            }
            other => other.to_string(),
        });
        let coverage = coverage.borrow().clone();
        (found, start.elapsed().as_secs_f64(), coverage)
    }

    #[test]
    fn generated_programs_match_the_specification() {
        let (found, secs, coverage) = first_catch(Build::CORRECT, true, programs());
        println!(
            "rwlock spec: {} programs x {} schedules in {secs:.1} s, {}\n{}",
            programs(),
            super::iterations(SCHEDULES),
            seeds(),
            coverage.table()
        );
        report::check(
            "shuttle",
            "rwlock generated programs",
            u64::from(programs()),
            "programs",
            &format!(
                "{} random schedules each, {}",
                super::iterations(SCHEDULES),
                seeds()
            ),
            secs,
        );
        assert_eq!(found, None, "the correct lock failed a generated program");
        // Every one of the reported situations.
        coverage.report_and_require("shuttle", "rwlock generated programs", 10);
    }

    /// The writer that takes one permit too few is caught by the generated programs.
    #[cfg(feature = "broken_rwlock")]
    #[test]
    fn generated_programs_catch_writer_short() {
        let (found, secs, _) = first_catch(
            Build::flawed(parksema_rwlock::Flaw::WriterShort),
            false,
            programs(),
        );
        let short = found
            .as_deref()
            .map(|m| m.chars().take(80).collect::<String>());
        report::cell(
            "shuttle",
            "rwlock generated programs",
            "rwlock WriterShort",
            short.as_deref(),
            secs,
        );
        let found = found.unwrap_or_else(|| {
            panic!(
                "WriterShort was not caught by {} generated programs",
                programs()
            )
        });
        println!("caught WriterShort in {secs:.2} s: {found}");
    }
}
