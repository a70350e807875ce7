//! Shuttle tests: the shared scenarios (`scenarios.rs`) at larger sizes than loom affords,
//! under shuttle's random scheduler and its PCT scheduler (depth 3: bugs that need up to two
//! ordering constraints between threads), with the mutex and the condition variable
//! compiled against shuttle's atomics and parkcheck's park table. Run with
//! `cargo test -p parksema-condvar --features shuttle` (catch tests: add `broken_condvar`).
//!
//! Iteration counts: each test's count is chosen so the whole file runs in about 10 s on the
//! 2-core development machine (9.8 s measured; the time of each is next to it); the flaws
//! were found in the first schedules of the random scheduler (see the catch tests), so the
//! counts leave a margin of a hundred times or more. `SHUTTLE_ITERATIONS` multiplies every count, for deeper runs.
//!
//! A failure prints the schedule that produced it (`failing schedule: "..."`);
//! `shuttle::replay(body, "...")` reruns exactly that schedule.
//!
//! With `PARKSEMA_REPORT=FILE` each check and each catch appends a record to `FILE` for
//! `cargo xtask verify`'s report (`watchdog::report`).

#![cfg(feature = "shuttle")]

use watchdog::report;
mod generated;
mod scenarios;
mod spec;

use std::time::{Duration, Instant};

use parkcheck::{Settings, Timeouts, with_settings};
use scenarios::{Build, Clock, Notify, quiet};

/// `n`, times `SHUTTLE_ITERATIONS` if set.
fn iterations(n: usize) -> usize {
    n * std::env::var("SHUTTLE_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
}

/// The park table's settings: timed parks time out whenever the scheduler says
/// (`Timeouts::CheckerChooses`) or only when the mocked clock passes their deadline.
fn settings(checker_timeouts: bool) -> Settings {
    let mut settings = Settings::default();
    if checker_timeouts {
        settings.timeouts = Timeouts::CheckerChooses;
    }
    settings
}

/// Which seed the schedulers started from, for the report.
fn seed_note() -> String {
    std::env::var("SHUTTLE_RANDOM_SEED").map_or("seed drawn per run".to_string(), |s| {
        format!("SHUTTLE_RANDOM_SEED={s}")
    })
}

/// Runs `f` under the random scheduler and the PCT scheduler (depth 3), `n` iterations each,
/// with the park table's `checker_timeouts` setting, and records the check.
fn check(
    name: &str,
    detail: &str,
    n: usize,
    checker_timeouts: bool,
    f: impl Fn() + Send + Sync + Clone + 'static,
) {
    let start = Instant::now();
    with_settings(settings(checker_timeouts), || {
        shuttle::check_random(f.clone(), iterations(n));
        shuttle::check_pct(f, iterations(n), 3);
    });
    let secs = start.elapsed().as_secs_f64();
    println!(
        "shuttle {name}: {} random + {} PCT iterations, {secs:.2} s",
        iterations(n),
        iterations(n),
    );
    report::check(
        "shuttle",
        name,
        2 * iterations(n) as u64,
        "schedules",
        &format!("{detail}; random + PCT (depth 3), {}", seed_note()),
        secs,
    );
}

/// The timeout of the timed waits (any value works on the mocked clock).
const TIMEOUT: Duration = Duration::from_millis(10);

// The scenarios. Each body is a plain function, so the catch tests run the very same one.

/// (a) Four threads, ten lockings each.
fn mutual_exclusion(build: Build) {
    scenarios::mutual_exclusion(build, 4, 10, quiet());
}

/// (b) Two threads taking 20 turns each, woken by `notify_one`.
fn ping_pong(build: Build) {
    scenarios::ping_pong(build, 20, quiet());
}

/// (c) Four waiters, three rounds, `notify_all` under the mutex on even rounds and after it
/// on odd ones.
fn notify_all_rounds(build: Build) {
    scenarios::notify_all_rounds(build, 4, 3, |r| r.is_multiple_of(2), quiet());
}

/// (d) Three waiters, four rounds of timed waits, `notify_one` and `notify_all` alternating,
/// every timeout chosen by the scheduler.
fn timed_waits_checker_chooses(build: Build) {
    scenarios::timed_wait_races_notify(build, 3, 4, Notify::Mixed, Clock::Still, TIMEOUT, quiet());
}

/// (d) The same on the mocked clock, moved by the notifier after each notification while it
/// holds the mutex: waits requeued by `notify_all` pass their deadline on the mutex.
fn timed_waits_requeued_past_deadline(build: Build) {
    scenarios::timed_wait_races_notify(
        build,
        3,
        4,
        Notify::Mixed,
        Clock::AfterNotify,
        TIMEOUT,
        quiet(),
    );
}

/// (d) The same, the clock moved before each notification (waits time out on the condition
/// variable while the notifier holds the mutex).
fn timed_waits_clock_before_notify(build: Build) {
    scenarios::timed_wait_races_notify(
        build,
        3,
        4,
        Notify::Mixed,
        Clock::BeforeNotify,
        TIMEOUT,
        quiet(),
    );
}

/// (e) Two producers of six items each, two consumers, capacity two: two condition
/// variables on one mutex. On the mocked clock, which nobody moves here, so the timed waits
/// end only by notification (a timed wait that the scheduler could end at will would let a
/// PCT schedule spin a consumer forever on its timeouts).
fn bounded_buffer(build: Build) {
    scenarios::bounded_buffer(build, 2, 2, 6, 2, TIMEOUT, quiet());
}

#[test]
fn mutual_exclusion_random_and_pct() {
    check(
        "condvar mutex mutual exclusion",
        "4 threads x 10 lockings",
        // 1 000 schedules per scheduler: 0.7 s.
        1_000,
        false,
        || mutual_exclusion(Build::CORRECT),
    );
}

#[test]
fn ping_pong_random_and_pct() {
    check(
        "condvar wait/notify_one",
        "2 threads x 20 turns",
        // 600 schedules per scheduler: 1.3 s.
        600,
        false,
        || ping_pong(Build::CORRECT),
    );
}

#[test]
fn notify_all_rounds_random_and_pct() {
    check(
        "condvar notify_all requeue",
        "4 waiters x 3 rounds, under the mutex and after it",
        // 600 schedules per scheduler: 1.5 s.
        600,
        false,
        || notify_all_rounds(Build::CORRECT),
    );
}

#[test]
fn timed_waits_checker_chooses_random_and_pct() {
    check(
        "condvar timed wait races notify_all",
        "3 waiters x 4 rounds, notify_one/notify_all, Timeouts::CheckerChooses",
        // 600 schedules per scheduler: 1.4 s.
        600,
        true,
        || timed_waits_checker_chooses(Build::CORRECT),
    );
}

#[test]
fn timed_waits_requeued_past_deadline_random_and_pct() {
    check(
        "condvar timed wait requeued past its deadline",
        "3 waiters x 4 rounds, clock moved after each notify",
        // 600 schedules per scheduler: 1.9 s.
        600,
        false,
        || timed_waits_requeued_past_deadline(Build::CORRECT),
    );
}

#[test]
fn timed_waits_clock_before_notify_random_and_pct() {
    check(
        "condvar timed wait times out before notify",
        "3 waiters x 4 rounds, clock moved before each notify",
        // 600 schedules per scheduler: 1.8 s.
        600,
        false,
        || timed_waits_clock_before_notify(Build::CORRECT),
    );
}

#[test]
fn bounded_buffer_random_and_pct() {
    check(
        "condvar bounded buffer",
        "2 producers x 6 items, 2 consumers, capacity 2",
        // 600 schedules per scheduler: 1.2 s.
        600,
        false,
        || bounded_buffer(Build::CORRECT),
    );
}

/// The catch tests: each flaw shuttle can see is reported with the property it violates.
#[cfg(feature = "broken_condvar")]
mod catches {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Instant;

    use parksema_condvar::Flaw;

    use super::{Build, iterations, report, settings};

    /// Schedules each catch may take: the flaws are found within the first few.
    const SCHEDULES: usize = 1_000;

    /// The panic's message.
    fn text(payload: &(dyn std::any::Any + Send)) -> String {
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a non-string panic".to_string())
    }

    /// Runs `scenario` against `flaw` under the random scheduler and asserts that it fails
    /// with a message containing `expected` (`None`: asserts that shuttle cannot see the
    /// flaw, and records that).
    fn assert_caught(
        check: &str,
        scenario: fn(Build),
        flaw: Flaw,
        checker_timeouts: bool,
        expected: Option<&str>,
    ) {
        let start = Instant::now();
        // Schedules run, up to the failing one.
        let runs = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&runs);
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            super::with_settings(settings(checker_timeouts), || {
                shuttle::check_random(
                    move || {
                        counter.fetch_add(1, Ordering::Relaxed);
                        scenario(Build::flawed(flaw));
                    },
                    iterations(SCHEDULES),
                )
            })
        }));
        let runs = runs.load(Ordering::Relaxed);
        let secs = start.elapsed().as_secs_f64();
        let message = outcome.err().map(|p| text(&*p));
        let short = message.as_deref().map(|m| match expected {
            Some(e) if m.contains(e) => e.to_string(),
            _ => m.chars().take(80).collect(),
        });
        report::cell(
            "shuttle",
            check,
            &format!("condvar {flaw:?}"),
            short.as_deref(),
            secs,
        );
        let Some(expected) = expected else {
            assert_eq!(
                message, None,
                "{flaw:?} was expected to be invisible to shuttle in {check}"
            );
            println!(
                "{flaw:?} not caught by shuttle {check} (as expected): {runs} schedules, \
                 {secs:.2} s"
            );
            return;
        };
        let message = message.unwrap_or_else(|| {
            panic!("{flaw:?} was not caught by shuttle in {check} within {SCHEDULES} schedules")
        });
        assert!(
            message.contains(expected),
            "{flaw:?} in {check} ended in the wrong failure: {message}"
        );
        let first = message.lines().next().unwrap_or(expected);
        println!("caught {flaw:?} in shuttle {check}: {first}, schedule {runs}, {secs:.2} s");
    }

    #[test]
    fn catches_requeue_without_parked_bit() {
        assert_caught(
            "condvar notify_all requeue",
            super::notify_all_rounds,
            Flaw::RequeueWithoutParkedBit,
            false,
            Some("deadlock"),
        );
    }

    #[test]
    fn catches_unlock_before_park() {
        assert_caught(
            "condvar wait/notify_one",
            super::ping_pong,
            Flaw::UnlockBeforePark,
            false,
            Some("deadlock"),
        );
    }

    #[test]
    fn catches_timeout_ignores_requeue() {
        assert_caught(
            "condvar timed wait races notify_all",
            super::timed_waits_checker_chooses,
            Flaw::TimeoutIgnoresRequeue,
            true,
            Some("timeout after requeue"),
        );
        assert_caught(
            "condvar timed wait requeued past its deadline",
            super::timed_waits_requeued_past_deadline,
            Flaw::TimeoutIgnoresRequeue,
            false,
            Some("timeout after requeue"),
        );
    }

    /// Shuttle runs every atomic operation as `SeqCst`, so a weakened ordering changes
    /// nothing it can observe: the blind cell of the matrix, recorded as such.
    #[test]
    fn relaxed_unlock_is_invisible_to_shuttle() {
        assert_caught(
            "condvar mutex mutual exclusion",
            super::mutual_exclusion,
            Flaw::RelaxedUnlock,
            false,
            None,
        );
    }
}

/// Generated programs against the condition variable's specification (`generated.rs`,
/// `spec.rs`).
mod against_the_spec {
    use std::cell::RefCell;
    use std::rc::Rc;

    use proptest::test_runner::{Config as ProptestConfig, RngSeed, TestCaseError, TestRunner};

    use super::generated::{Coverage, any_program, program_seed, run_and_check};
    use super::spec::SITUATIONS;
    use super::{Build, report};

    /// Programs per run: 1 000 (× 50 random schedules each), or
    /// `PARKSEMA_SPEC_PROGRAMS`. About 10 s on the 2-core development machine.
    fn programs() -> u32 {
        std::env::var("PARKSEMA_SPEC_PROGRAMS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1000)
    }

    /// Schedules per program; `SHUTTLE_ITERATIONS` scales it.
    const SCHEDULES: usize = 50;

    /// Up to four threads: three waiters and a driver.
    const WORKERS: usize = 4;

    /// The schedules' seed: `SHUTTLE_RANDOM_SEED`, else a fixed one.
    fn schedule_seed() -> u64 {
        std::env::var("SHUTTLE_RANDOM_SEED")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0x5EED_0006)
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

    /// Runs the first `cases` generated programs against `build` until one fails; returns
    /// the failure, the time to it and what the runs reached. `shrink`: whether proptest
    /// shrinks a failing program (the correct primitives' run does; a catch needs only the
    /// first failure).
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
        let result = runner.run(&any_program(WORKERS), |p| {
            let q = p.clone();
            let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let sink = std::sync::Arc::clone(&seen);
            let outcome = std::panic::catch_unwind(move || {
                shuttle::check_random_with_seed(
                    move || {
                        let reached = run_and_check(&q, build);
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

    /// The situations the CI budget must reach under shuttle: all of them.
    const REQUIRED: u32 = (1 << SITUATIONS.len()) - 1;

    #[test]
    fn generated_programs_match_the_specification() {
        let (found, secs, coverage) = first_catch(Build::CORRECT, true, programs());
        let runs = f64::from(programs()) * super::iterations(SCHEDULES) as f64;
        println!(
            "condvar spec: {} programs x {} schedules in {secs:.1} s ({:.0} runs/s), {}\n{}",
            programs(),
            super::iterations(SCHEDULES),
            runs / secs,
            seeds(),
            coverage.table()
        );
        report::check(
            "shuttle",
            "condvar generated programs",
            u64::from(programs()),
            "programs",
            &format!(
                "{} random schedules each, {}",
                super::iterations(SCHEDULES),
                seeds()
            ),
            secs,
        );
        assert_eq!(
            found, None,
            "the correct primitives failed a generated program"
        );
        coverage.report_and_require("shuttle", "condvar generated programs", REQUIRED);
    }

    /// Each flaw shuttle can see is caught by the generated programs (`RelaxedUnlock` cannot
    /// be: shuttle runs every atomic as SeqCst; the first 100 programs must pass against it).
    #[cfg(feature = "broken_condvar")]
    #[test]
    fn generated_programs_catch_the_flaws() {
        use parksema_condvar::Flaw;
        for (name, flaw) in [
            ("RequeueWithoutParkedBit", Flaw::RequeueWithoutParkedBit),
            ("UnlockBeforePark", Flaw::UnlockBeforePark),
            ("TimeoutIgnoresRequeue", Flaw::TimeoutIgnoresRequeue),
        ] {
            let (found, secs, _) = first_catch(Build::flawed(flaw), false, programs());
            let short = found
                .as_deref()
                .map(|m| m.chars().take(80).collect::<String>());
            report::cell(
                "shuttle",
                "condvar generated programs",
                &format!("condvar {name}"),
                short.as_deref(),
                secs,
            );
            let found = found.unwrap_or_else(|| {
                panic!("{name} was not caught by {} generated programs", programs())
            });
            println!("caught {name} in {secs:.2} s: {found}");
        }
        let (found, secs, _) = first_catch(Build::flawed(Flaw::RelaxedUnlock), false, 100);
        report::cell(
            "shuttle",
            "condvar generated programs",
            "condvar RelaxedUnlock",
            found.as_deref(),
            secs,
        );
        assert_eq!(
            found, None,
            "shuttle's generated programs caught RelaxedUnlock"
        );
    }
}
