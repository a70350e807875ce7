//! Tests of the in-process stall detector.
//!
//! A firing watchdog ends its whole process, so the tests that need one to fire re-execute this
//! test binary to run an ignored child entry point, and check the child's exit code and stderr.
//! The children run without `--nocapture`, as stress tests do: the report must get past
//! libtest's output capture.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use watchdog::{STALL_EXIT_CODE, Watchdog, Worker, stall_limit};

/// Set in the environment of a re-executed test binary to run a child entry point.
const CHILD_ENV: &str = "WATCHDOG_IN_PROCESS_TEST_CHILD";

/// The stall limit the child scenarios arm with.
const CHILD_STALL: Duration = Duration::from_millis(300);

/// Panics unless this process was started by a parent test to run the child entry point `name`.
fn require_child(name: &str) {
    assert!(
        std::env::var_os(CHILD_ENV).is_some(),
        "{name} is only a child entry point, run in a child process by another test of \
         tests/in_process.rs; it is not a test by itself"
    );
}

/// Blocks the calling thread forever.
fn block_forever() -> ! {
    loop {
        std::thread::park();
    }
}

/// Runs the ignored test `name` of this binary in a child process with the extra environment
/// `envs`, and returns its output, its stderr as text and how long it ran.
fn run_child(name: &str, envs: &[(&str, Option<&str>)]) -> (Output, String, Duration) {
    let exe = std::env::current_exe().expect("the test binary's own path is unknown");
    let mut command = Command::new(exe);
    command
        .args(["--exact", name, "--ignored", "--test-threads=1"])
        .env(CHILD_ENV, "1");
    for &(key, value) in envs {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    let start = Instant::now();
    let output = command
        .output()
        .expect("the test binary could not be re-executed");
    let elapsed = start.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (output, stderr, elapsed)
}

#[test]
fn stall_is_reported_and_exits_86() {
    let (output, stderr, elapsed) = run_child("child_stalled_scenario", &[]);
    let context = format!(
        "elapsed {elapsed:?}, status {:?}\n--- stderr:\n{stderr}",
        output.status
    );

    assert_eq!(output.status.code(), Some(STALL_EXIT_CODE), "{context}");
    assert!(elapsed < Duration::from_secs(30), "{context}");
    assert!(
        stderr.contains("watchdog: STALL in scenario `hung-scenario`: no progress for"),
        "{context}"
    );
    assert!(stderr.contains("(limit 0.3s)"), "{context}");
    assert!(
        stderr.contains("watchdog:   worker w0: last op `waiting forever` (1 ops)"),
        "{context}"
    );
    assert!(
        stderr.contains("watchdog:   worker idle: last op `(none yet)` (0 ops)"),
        "{context}"
    );
    assert!(
        stderr.contains("watchdog: state: STATE-MARKER"),
        "{context}"
    );
    assert!(stderr.contains("watchdog:   second line"), "{context}");
    assert!(
        stderr.contains("watchdog: exiting with code 86"),
        "{context}"
    );
    let worker_at = stderr.find("worker w0").unwrap_or(usize::MAX);
    let state_at = stderr.find("STATE-MARKER").unwrap_or(0);
    assert!(
        worker_at < state_at,
        "the state must follow the worker lines: {context}"
    );
}

#[test]
#[ignore = "child entry point, run by stall_is_reported_and_exits_86"]
fn child_stalled_scenario() {
    require_child("child_stalled_scenario");
    let dog = Watchdog::arm("hung-scenario", CHILD_STALL);
    dog.describe(|| "STATE-MARKER\nsecond line".to_string());
    let worker = dog.worker("w0");
    let _idle = dog.worker("idle");
    worker.op("waiting forever");
    block_forever();
}

#[test]
fn blocking_describe_still_exits_86() {
    let (output, stderr, elapsed) = run_child("child_describe_blocks", &[]);
    let context = format!(
        "elapsed {elapsed:?}, status {:?}\n--- stderr:\n{stderr}",
        output.status
    );

    assert_eq!(output.status.code(), Some(STALL_EXIT_CODE), "{context}");
    // The grace period is 2 s after the stall limit of 0.3 s.
    assert!(
        elapsed >= Duration::from_secs(2),
        "exited before the grace period: {context}"
    );
    assert!(elapsed < Duration::from_secs(30), "{context}");
    assert!(
        stderr.contains("watchdog:   worker w0: last op `stuck` (1 ops)"),
        "{context}"
    );
    assert!(
        stderr.contains("describe callback did not return within 2s"),
        "{context}"
    );
    assert!(
        stderr.contains("watchdog: exiting with code 86"),
        "{context}"
    );
    assert!(!stderr.contains("watchdog: state: never"), "{context}");
}

#[test]
#[ignore = "child entry point, run by blocking_describe_still_exits_86"]
fn child_describe_blocks() {
    require_child("child_describe_blocks");
    let dog = Watchdog::arm("wedged-describe", CHILD_STALL);
    dog.describe(|| block_forever());
    // A replaced callback must not be the one called.
    dog.describe(|| "never".to_string());
    dog.describe(|| block_forever());
    dog.worker("w0").op("stuck");
    block_forever();
}

#[test]
fn steady_progress_does_not_fire() {
    let limit = Duration::from_secs(1);
    let dog = Watchdog::arm("steady", limit);
    dog.describe(|| "steady progress must never be described".to_string());
    let worker = dog.worker("spinner");
    let start = Instant::now();
    let mut ops = 0_u64;
    while start.elapsed() < 3 * limit {
        worker.op(if ops.is_multiple_of(2) {
            "acquire"
        } else {
            "release"
        });
        ops += 1;
        std::thread::yield_now();
    }
    let debug = format!("{dog:?} {worker:?}");
    let drop_start = Instant::now();
    drop(dog);

    // Reaching this point at all proves that the watchdog did not end the process.
    assert!(start.elapsed() >= 3 * limit);
    assert!(ops > 0);
    assert!(
        debug.contains("steady") && debug.contains("spinner"),
        "{debug}"
    );
    assert!(debug.contains(&format!("ops: {ops}")), "{debug}");
    assert!(
        drop_start.elapsed() < Duration::from_secs(5),
        "drop took {:?}",
        drop_start.elapsed()
    );
}

#[test]
fn drop_disarms_without_waiting_for_a_tick() {
    // With a one-minute limit the detector checks every 7.5 s; dropping must not wait for that.
    let dog = Watchdog::arm("dropped", Duration::from_secs(60));
    dog.worker("w0").op("once");
    let start = Instant::now();
    drop(dog);
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "drop took {:?}",
        start.elapsed()
    );
}

#[test]
fn workers_report_from_many_threads() {
    let dog = Watchdog::arm("many", Duration::from_secs(600));
    let workers: Vec<Worker> = (0..4).map(|i| dog.worker(format!("w{i}"))).collect();
    std::thread::scope(|s| {
        for worker in &workers {
            s.spawn(move || {
                for _ in 0..10_000 {
                    worker.op("hot loop");
                }
            });
        }
    });
    for worker in &workers {
        let debug = format!("{worker:?}");
        assert!(
            debug.contains("last_op: \"hot loop\", ops: 10000"),
            "{debug}"
        );
    }
    let debug = format!("{dog:?}");
    assert!(
        debug.contains("workers: 4") && debug.contains("progress: 40004"),
        "{debug}"
    );
}

#[test]
fn stall_limit_reads_the_environment() {
    let cases = [
        (Some("2.5"), "2500"),
        (Some("7"), "7000"),
        (Some(" 0.5 "), "500"),
        (None, "1000"),
        (Some("0"), "1000"),
        (Some("-3"), "1000"),
        (Some("soon"), "1000"),
        (Some(""), "1000"),
    ];
    for (value, expected_ms) in cases {
        let envs = [
            ("WATCHDOG_STALL_SECS", value),
            ("WATCHDOG_TEST_EXPECT_MS", Some(expected_ms)),
        ];
        let (output, stderr, _) = run_child("child_stall_limit", &envs);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "WATCHDOG_STALL_SECS={value:?}: {stdout}{stderr}"
        );
        assert!(
            stdout.contains("1 passed"),
            "the child did not run its check: {stdout}"
        );
    }
}

#[test]
#[ignore = "child entry point, run by stall_limit_reads_the_environment"]
fn child_stall_limit() {
    require_child("child_stall_limit");
    let expected: u64 = std::env::var("WATCHDOG_TEST_EXPECT_MS")
        .expect("WATCHDOG_TEST_EXPECT_MS is not set")
        .parse()
        .expect("WATCHDOG_TEST_EXPECT_MS is not a number");
    assert_eq!(
        stall_limit(Duration::from_secs(1)),
        Duration::from_millis(expected)
    );
}

#[test]
fn handles_are_send_sync_and_debug() {
    fn assert_send_sync<T: Send + Sync + std::fmt::Debug>() {}
    assert_send_sync::<Watchdog>();
    assert_send_sync::<Worker>();

    let dog = Watchdog::arm("debug", Duration::from_secs(600));
    let worker = dog.worker("w0");
    worker.op("op-name");
    assert_eq!(
        format!("{worker:?}"),
        r#"Worker { name: "w0", last_op: "op-name", ops: 1 }"#
    );
    let debug = format!("{dog:?}");
    assert!(
        debug.starts_with(r#"Watchdog { scenario: "debug", stall: 600s"#),
        "{debug}"
    );
}
