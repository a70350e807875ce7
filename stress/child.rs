//! Running a scenario in a child process: the test binary re-executes itself to run
//! [`child_entry`], so a scenario that stalls (and is ended by the in-process watchdog's
//! `process::exit`) or panics cannot take the parent test down with it, and the parent can
//! assert on the child's exit code and report.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::PER_THREAD;
use crate::scenarios;
use crate::support::Build;

const SCENARIO_VAR: &str = "PARKSEMA_CHILD_SCENARIO";
const FLAW_VAR: &str = "PARKSEMA_CHILD_FLAW";

/// Every scenario a child can run, with the sizes it runs at there.
pub(crate) const SCENARIOS: [&str; 11] = [
    "never_exceeds_permits",
    "wakes_every_parked_thread",
    "mixed_traffic",
    "many_semaphores",
    "close_while_parked",
    "close_during_traffic",
    "holder_panics",
    "weighted_traffic",
    "small_behind_large",
    "timeout_at_release",
    "fifo_traffic",
];

/// Runs scenario `name` against `build`.
pub(crate) fn run_scenario(name: &str, build: Build) -> String {
    match name {
        // The smallest of the full sizes, where the most threads compete for one permit.
        "never_exceeds_permits" => scenarios::never_exceeds_permits(build, 1, 8, PER_THREAD),
        "wakes_every_parked_thread" => scenarios::wakes_every_parked_thread(build, 32),
        "mixed_traffic" => scenarios::mixed_traffic(build, 4, 16, PER_THREAD),
        "many_semaphores" => scenarios::many_semaphores(build, 16, 64, PER_THREAD / 200),
        "close_while_parked" => scenarios::close_while_parked(build, 16),
        "close_during_traffic" => scenarios::close_during_traffic(build, 2, 16, PER_THREAD / 2),
        "holder_panics" => scenarios::holder_panics(build),
        "weighted_traffic" => scenarios::weighted_traffic(build, 4, 8, PER_THREAD / 2),
        "small_behind_large" => scenarios::small_behind_large(build, 20),
        // 200 rounds of about 10 ms each (15–50 ms on a loaded machine). A round can catch
        // `TimeoutLeak` or `LostWaiters` only if both waiters are parked when the release
        // comes; beside two busy processes the set-up outlasted the 10 ms deadline in about
        // nine rounds of ten (the timed waiter timed out first), and 50 rounds left
        // `TimeoutLeak` uncaught in 4 of 20 runs and `LostWaiters` in 1 of 20. At the
        // 4 % a round caught there with `TimeoutLeak`'s window (`src/flaw.rs`), 200 rounds
        // miss about once in 3 500 runs; a run that catches stops at once, so the rounds cost
        // only the runs that catch nothing here (2 s each idle, 3–4 s loaded).
        "timeout_at_release" => scenarios::timeout_at_release(build, 200),
        // One permit among 8 threads on a `Fifo` semaphore: every contended release is a
        // handoff. A quarter of the iterations, since each handoff is a wake-up.
        "fifo_traffic" => scenarios::never_exceeds_permits(
            build.fair(parksema::Fairness::Fifo),
            1,
            8,
            PER_THREAD / 4,
        ),
        // The generated programs against the specification (the `spec` column, not one of
        // the real-thread scenarios of `SCENARIOS`).
        "generated_programs" => crate::generated_programs_until_a_failure(build),
        other => panic!("unknown scenario `{other}`; known: {SCENARIOS:?}"),
    }
}

/// The build named by a flaw's name (`none` for the correct semaphore).
fn build_named(flaw: &str) -> Build {
    match flaw {
        "none" => Build::CORRECT,
        #[cfg(feature = "broken_sema")]
        name => Build::flawed(name.parse().unwrap_or_else(|e| panic!("{e}"))),
        #[cfg(not(feature = "broken_sema"))]
        other => panic!("unknown flaw `{other}` in this build"),
    }
}

#[test]
#[ignore = "child entry point: run in a child process by `run_child`"]
fn child_entry() {
    let scenario = std::env::var(SCENARIO_VAR)
        .expect("child_entry only runs in a child process started by `run_child`");
    let flaw = std::env::var(FLAW_VAR).expect("`run_child` always sets the flaw");
    let summary = run_scenario(&scenario, build_named(&flaw));
    println!("child passed: {summary}");
}

/// What a child run did.
#[derive(Debug)]
pub(crate) struct ChildRun {
    /// The exit code; `None` if a signal ended it.
    pub(crate) code: Option<i32>,
    /// Its stderr, then its stdout.
    pub(crate) output: String,
    /// Wall time from spawn to exit.
    pub(crate) elapsed: Duration,
}

impl ChildRun {
    /// The message of the first panic in the output, if any.
    /// What the run reported, in a few words for the report: `None` if it passed, `stall`
    /// (the watchdog's exit), or the panic's message.
    pub(crate) fn caught(&self) -> Option<String> {
        match self.code {
            Some(0) => None,
            Some(watchdog::STALL_EXIT_CODE) => Some("stall".to_string()),
            code => Some(match self.panic_message() {
                Some(msg) => msg.chars().take(80).collect(),
                None => format!("failed with exit {code:?}"),
            }),
        }
    }

    pub(crate) fn panic_message(&self) -> Option<&str> {
        let mut lines = self.output.lines();
        lines.find(|l| l.contains("panicked at"))?;
        lines.next()
    }

    /// The watchdog's state line, if it fired.
    pub(crate) fn stall_state(&self) -> Option<&str> {
        self.output
            .lines()
            .find_map(|l| l.strip_prefix("watchdog: state: "))
    }
}

/// Runs scenario `scenario` against the flaw named `flaw` in a child process.
///
/// The child's own watchdog bounds it; its stall limit is 2 s, long enough that a correct
/// run never stalls on a loaded machine and short enough that a caught stall costs 2 s.
pub(crate) fn run_child(scenario: &str, flaw: &str) -> ChildRun {
    let run = run_child_unrecorded(scenario, flaw);
    if flaw != "none" {
        crate::report::cell(
            "real",
            scenario,
            flaw,
            run.caught().as_deref(),
            run.elapsed.as_secs_f64(),
        );
    }
    run
}

/// As [`run_child`], without a record (the caller writes its own).
pub(crate) fn run_child_unrecorded(scenario: &str, flaw: &str) -> ChildRun {
    let exe = std::env::current_exe().expect("the test binary knows its own path");
    let start = Instant::now();
    let out = Command::new(exe)
        .args(["--exact", "child::child_entry", "--ignored", "--nocapture"])
        .args(["--test-threads", "1"])
        .env(SCENARIO_VAR, scenario)
        .env(FLAW_VAR, flaw)
        .env("WATCHDOG_STALL_SECS", "2")
        .env("RUST_BACKTRACE", "0")
        .env_remove(crate::report::VAR)
        .output()
        .expect("the test binary can re-execute itself");
    ChildRun {
        code: out.status.code(),
        output: format!(
            "{}{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        ),
        elapsed: start.elapsed(),
    }
}

/// The child mechanism itself must not produce failures: the correct semaphore passes in a
/// child, for the two scenarios the catch tests rely on.
#[test]
fn child_run_of_the_correct_semaphore_passes() {
    for scenario in ["never_exceeds_permits", "wakes_every_parked_thread"] {
        let run = run_child(scenario, "none");
        assert_eq!(
            run.code,
            Some(0),
            "the correct semaphore failed `{scenario}` in a child:\n{}",
            run.output
        );
        assert!(
            run.output.contains("child passed: "),
            "the child did not run the scenario:\n{}",
            run.output
        );
        assert_eq!(run.panic_message(), None, "{}", run.output);
        assert_eq!(run.stall_state(), None, "{}", run.output);
        println!(
            "{scenario} passed in a child in {:.3} s",
            run.elapsed.as_secs_f64()
        );
    }
}
