//! Loom models of the lock: every interleaving within a stated preemption bound of a writer
//! and two readers, with the lock's semaphore compiled against loom's atomics and the mocked
//! park table, and the lock's value in loom's tracked `UnsafeCell`. Run with
//! `cargo test -p parksema-rwlock --features loom` (add `broken_rwlock` for the catch tests).
//!
//! The bound and its cost are measured in the test profile (the workspace builds every
//! dependency at `opt-level` 3 even there) on the 2-core development machine, one test thread.
//! A failing execution panics out of `Builder::check`; the catch tests catch that panic
//! (`catch_unwind`) and check its message.
//!
//! Writer progress is not checked here: loom reports a deadlock, not a thread that waits while
//! others keep going (shuttle and the real-thread tests check it).

#![cfg(feature = "loom")]

use watchdog::report;
mod generated;
#[path = "scenarios.rs"]
mod scenarios;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use scenarios::Build;

/// The exclusion model's size: a writer, a reader and the main thread reading, on a lock of 2
/// readers, so both readers can be inside at once and each can meet the writer.
const MAX_READERS: usize = 2;

/// The exclusion model's preemption bound: the largest that keeps the model under about 15 s
/// here. Measured in the test profile, one test thread: bound 1, 5 864 executions, 0.9 s;
/// bound 2, 65 569 executions, 10.4–10.6 s on a quiet machine (up to 16 s while other builds
/// ran); bound 3, 517 811 executions, 85.5 s.
/// `PARKSEMA_LOOM_BOUND=N` raises it to `N` for a deeper run (as in the root suite).
const BOUND: usize = 2;

/// [`BOUND`], or `PARKSEMA_LOOM_BOUND` where that is larger.
fn bound() -> usize {
    std::env::var("PARKSEMA_LOOM_BOUND")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .map_or(BOUND, |deeper| deeper.max(BOUND))
}

/// Runs the exclusion model against `build` under loom at [`bound`] (`yields`: whether the
/// holders yield while inside, see `scenarios::exclusion_main_reads`), counting the
/// executions started in `executions`; returns the seconds taken.
fn explore(build: Build, yields: bool, executions: &Arc<AtomicUsize>) -> f64 {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(bound());
    let counter = Arc::clone(executions);
    let start = Instant::now();
    builder.check(move || {
        counter.fetch_add(1, Ordering::Relaxed);
        scenarios::exclusion_main_reads(build.data_lock(MAX_READERS), yields);
    });
    start.elapsed().as_secs_f64()
}

/// A writer, a reader and the main thread reading, one round each, `max_readers` 2: every
/// entry is checked against who is inside (no reader with the writer, never more than 2
/// readers), every read sees both halves of one write, and loom's cell checks that the
/// writer's accesses are ordered by happens-before with each reader's, either way round.
#[test]
fn exclusion() {
    let executions = Arc::new(AtomicUsize::new(0));
    let secs = explore(Build::CORRECT, true, &executions);
    let executions = executions.load(Ordering::Relaxed);
    let bound = bound();
    println!("loom rwlock exclusion: bound {bound}, {executions} executions, {secs:.2} s");
    report::check(
        "loom",
        "rwlock exclusion",
        executions as u64,
        "executions",
        &format!(
            "1 writer + 2 readers (main one), max_readers {MAX_READERS}, preemption bound {bound}"
        ),
        secs,
    );
}

/// Runs the exclusion model against `Flaw::WriterShort` and asserts that loom's first
/// failure contains `expected`; records the cell as the check `check` and prints the catch.
#[cfg(feature = "broken_rwlock")]
fn assert_caught(check: &str, yields: bool, expected: &str) {
    let executions = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let outcome = std::panic::catch_unwind(|| {
        explore(
            Build::flawed(parksema_rwlock::Flaw::WriterShort),
            yields,
            &executions,
        )
    });
    let secs = start.elapsed().as_secs_f64();
    let executions = executions.load(Ordering::Relaxed);
    let message = outcome.err().map(|p| scenarios::panic_text(&*p));
    let short = message.as_deref().map(|m| {
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
    report::cell("loom", check, "rwlock WriterShort", short.as_deref(), secs);
    let message =
        message.unwrap_or_else(|| panic!("WriterShort was not caught by the loom model {check}"));
    assert!(
        message.contains(expected),
        "WriterShort in the loom model {check} ended in the wrong failure: {message}"
    );
    println!(
        "caught WriterShort in loom {check}: {}, in execution {executions}, {secs:.2} s",
        short.unwrap_or_default()
    );
}

/// The exclusion model must catch `Flaw::WriterShort` (the writer takes one permit too few,
/// so a reader fits beside it) with the exclusion message: in the model's first execution,
/// where the main thread yields while reading and the writer gets in beside it.
#[cfg(feature = "broken_rwlock")]
#[test]
fn catches_writer_short() {
    assert_caught("rwlock exclusion", true, "exclusion: a ");
}

/// Loom's data cell sees the same flaw on its own: without the yields, the first failing
/// execution loom reaches has the writer preempted after it has left (by the entry check's
/// count) but before it has released its permit, and a reader that got the free permit reads
/// the value with no happens-before edge from the write.
#[cfg(feature = "broken_rwlock")]
#[test]
fn catches_writer_short_by_the_data_cell() {
    assert_caught("rwlock exclusion (no yields)", false, "Causality violation");
}

/// Generated programs against the lock's specification (`generated.rs`): every
/// interleaving of each within a preemption bound.
mod against_the_spec {
    use std::sync::Mutex as StdMutex;
    use std::time::Instant;

    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::{Config as ProptestConfig, RngSeed, TestRunner};

    use super::generated::{Coverage, Program, any_program, program_seed, run};
    use super::{Build, report};

    /// Programs per run: 24 of two or three threads (the main thread only joins them).
    const PROGRAMS: usize = 24;

    /// The executions one program may explore: most programs finish within their bound in
    /// a few thousand, but three blocking threads on a `Fifo` lock of one reader took
    /// 137 791 (11 s) at bound 1. A program that reaches the cap has explored only its first
    /// `CAP` interleavings within the bound; the report counts those programs.
    /// The nightly's deeper bound (`PARKSEMA_LOOM_BOUND`) keeps the cap, which keeps its
    /// run finite: it explores the first `CAP` interleavings within the deeper bound.
    const CAP: usize = 20_000;

    /// A program's preemption bound: 2 for two threads, 1 for three (each thread more
    /// multiplies the executions), or `PARKSEMA_LOOM_BOUND` where larger.
    fn bound(program: &Program) -> usize {
        let own = if program.threads.len() <= 2 { 2 } else { 1 };
        std::env::var("PARKSEMA_LOOM_BOUND")
            .ok()
            .and_then(|b| b.parse::<usize>().ok())
            .map_or(own, |d| d.max(own))
    }

    /// The first `PROGRAMS` programs the seed draws.
    fn programs() -> Vec<Program> {
        let mut runner = TestRunner::new(ProptestConfig {
            rng_seed: RngSeed::Fixed(program_seed()),
            ..ProptestConfig::default()
        });
        let strategy = any_program(3, 3);
        (0..PROGRAMS)
            .map(|_| {
                strategy
                    .new_tree(&mut runner)
                    .expect("the strategy always draws")
                    .current()
            })
            .collect()
    }

    /// Explores every program against `build`; returns the executions, the seconds and
    /// what they reached. A failure panics out of loom, naming the program.
    fn explore(build: Build) -> (u64, f64, Coverage, usize) {
        let coverage = std::sync::Arc::new(StdMutex::new(Coverage::default()));
        let start = Instant::now();
        let cap = Some(CAP);
        let mut capped = 0;
        for (i, program) in programs().into_iter().enumerate() {
            println!(
                "loom rwlock generated program {i} (PROPTEST_RNG_SEED={}): {program:?}",
                program_seed()
            );
            let mut builder = loom::model::Builder::new();
            builder.preemption_bound = Some(bound(&program));
            builder.max_permutations = cap;
            let sink = std::sync::Arc::clone(&coverage);
            let before = (coverage.lock().unwrap().runs, Instant::now());
            builder.check(move || {
                let reached = run(&program, build, false);
                sink.lock().unwrap().add(reached);
            });
            let executions = coverage.lock().unwrap().runs - before.0;
            if cap.is_some_and(|c| executions + 1 >= c as u64) {
                capped += 1;
            }
            println!(
                "  {executions} executions, {:.2} s",
                before.1.elapsed().as_secs_f64()
            );
        }
        let coverage = coverage.lock().unwrap().clone();
        (
            coverage.runs,
            start.elapsed().as_secs_f64(),
            coverage,
            capped,
        )
    }

    #[test]
    fn generated_programs_match_the_specification() {
        let (executions, secs, coverage, capped) = explore(Build::CORRECT);
        println!(
            "loom: {PROGRAMS} rwlock programs ({capped} stopped at {CAP} executions), \
             {executions} executions in {secs:.1} s\n{}",
            coverage.table()
        );
        report::check(
            "loom",
            "rwlock generated programs",
            executions,
            "executions",
            &format!(
                "{PROGRAMS} programs of 2 or 3 threads, preemption bound 2 or 1 (at least \
                 PARKSEMA_LOOM_BOUND where set), {capped} stopped at {CAP} executions, \
                 PROPTEST_RNG_SEED={}",
                program_seed()
            ),
            secs,
        );
        // Queues of two under `Eventual` and `Fifo` at the CI bounds (without real-time
        // order, a witness rarely needs a queue; `Barging`'s was reached at one of the two
        // seeds tried). A deeper bound explores other interleavings first within the cap:
        // reported only.
        let required = if std::env::var("PARKSEMA_LOOM_BOUND").is_ok() {
            0
        } else {
            2
        };
        coverage.report_and_require("loom", "rwlock generated programs", required);
    }

    /// The writer that takes one permit too few is caught by the generated programs.
    #[cfg(feature = "broken_rwlock")]
    #[test]
    fn generated_programs_catch_writer_short() {
        let start = Instant::now();
        let outcome =
            std::panic::catch_unwind(|| explore(Build::flawed(parksema_rwlock::Flaw::WriterShort)));
        let secs = start.elapsed().as_secs_f64();
        let message = outcome.err().map(|p| super::scenarios::panic_text(&*p));
        let short = message.as_deref().map(|m| {
            m.lines()
                .next()
                .unwrap_or(m)
                .chars()
                .take(80)
                .collect::<String>()
        });
        report::cell(
            "loom",
            "rwlock generated programs",
            "rwlock WriterShort",
            short.as_deref(),
            secs,
        );
        let message = message.expect("WriterShort was not caught by loom's generated programs");
        println!("caught WriterShort by loom's generated programs in {secs:.2} s: {message}");
    }
}
