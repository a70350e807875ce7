//! Loom models: every interleaving (within the stated preemption bound) of the shared
//! scenarios at tiny sizes, with the semaphore compiled against loom's atomics and the mocked
//! park table. Run with `cargo test --features loom` (add `--release` for speed; the test
//! profile keeps debug assertions on either way, see the workspace `Cargo.toml`).
//!
//! Each model's bound is chosen so it completes, with the time and the number of executions
//! measured in the test profile on the 2-core development machine next to it (the counts
//! are the current code's; the times were measured when acquire still had a fast path of its
//! own, with counts within 0.1-26 % of these). Models that
//! finish unbounded run unbounded. A deeper nightly run raises the bounded ones:
//! `PARKSEMA_LOOM_BOUND=3 cargo test --release --features loom` (see the README for its
//! cost); the unbounded ones are exhaustive already.

#![cfg(feature = "loom")]

#[path = "scenarios.rs"]
mod scenarios;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use scenarios::Build;

/// Runs `f` under loom with preemption bound `bound` (`None`: unbounded) and prints the
/// executions explored and the time taken. `PARKSEMA_LOOM_BOUND` replaces every finite
/// bound, for deeper nightly runs.
fn model(name: &str, bound: Option<usize>, f: impl Fn() + Send + Sync + 'static) {
    let bound = bound.map(|b| {
        std::env::var("PARKSEMA_LOOM_BOUND")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(b)
    });
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = bound;
    let executions = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&executions);
    let start = Instant::now();
    builder.check(move || {
        counter.fetch_add(1, Ordering::Relaxed);
        f();
    });
    println!(
        "loom model {name}: bound {}, {} executions, {:.2} s",
        bound.map_or("none".to_string(), |b| b.to_string()),
        executions.load(Ordering::Relaxed),
        start.elapsed().as_secs_f64()
    );
}

// (a) Mutual exclusion and conservation.

#[test]
fn one_permit_two_threads() {
    // Two threads, two rounds each. Bound 5: 51 474 executions, 5.0 s. Executions grow about
    // fivefold per step of the bound (bound 3: 3 192; bound 4: 13 616); unbounded did not
    // finish in 300 s.
    model("one_permit_two_threads", Some(5), || {
        scenarios::mutual_exclusion(Build::CORRECT, 1, 2, 2)
    });
}

#[test]
fn one_permit_three_threads() {
    // Three contenders for one permit. Bound 3: 245 526 executions, 27 s (bound 2: 19 450,
    // 1.6 s; bound 4 is about five times the cost of 3).
    model("one_permit_three_threads", Some(3), || {
        scenarios::mutual_exclusion(Build::CORRECT, 1, 3, 1)
    });
}

#[test]
fn two_permits_three_threads() {
    // P permits, P + 1 threads, with P = 2. Bound 3: 568 296 executions, 49 s (bound 2:
    // 30 195, 2.4 s).
    model("two_permits_three_threads", Some(3), || {
        scenarios::mutual_exclusion(Build::CORRECT, 2, 3, 1)
    });
}

// (b) The three interleavings of clearing WAITERS.

#[test]
fn waiters_bit_races() {
    // Two acquirers and an adder of two permits, the main thread joining. Bound 3: 122 636
    // executions, 12.7 s (bound 2: 16 299, 1.9 s).
    model("waiters_bit_races", Some(3), || {
        scenarios::waiters_bit_races(Build::CORRECT)
    });
}

// (c) Every parked thread is woken.

#[test]
fn wakes_every_waiter() {
    // Two waiters, two single releases from the main thread. Bound 4: 367 943 executions,
    // 27 s (bound 3: 50 431, 3.5 s; bound 5: 2 190 048, 170 s).
    model("wakes_every_waiter", Some(4), || {
        scenarios::wakes_every_waiter(Build::CORRECT, 2)
    });
}

// (d) Two semaphores in one bucket.

#[test]
fn two_semaphores_share_bucket() {
    // Bound 5: 38 844 executions, 3.0 s (bound 4: 8 848, 0.9 s).
    model("two_semaphores_share_bucket", Some(5), || {
        scenarios::two_semaphores_share_bucket(Build::CORRECT)
    });
}

// (e) close racing acquire and add_permits.

#[test]
fn close_races() {
    // Bound 5: 50 235 executions, 4.9 s (bound 4: 14 318, 1.1 s).
    model("close_races", Some(5), || {
        scenarios::close_races(Build::CORRECT)
    });
}

// (f) try_acquire racing acquire and a release.

#[test]
fn try_acquire_races() {
    // Bound 5: 67 822 executions, 5.0 s (bound 4: 16 050, 1.1 s).
    model("try_acquire_races", Some(5), || {
        scenarios::try_acquire_races(Build::CORRECT)
    });
}

// (g) Memory visibility through the permit.

#[test]
fn visibility() {
    // Unbounded (exhaustive): 8 136 executions, 0.6 s.
    model("visibility", None, || {
        scenarios::visibility(Build::CORRECT, 2)
    });
}

// (h) close publishes the writes made before it.

#[test]
fn close_publishes() {
    // A closer and three observers. Bound 3: 47 536 executions, 4.5 s (bound 4: 390 118,
    // 38 s). Without the blocking acquirer the model finished unbounded in 546 executions.
    model("close_publishes", Some(3), || {
        scenarios::close_publishes(Build::CORRECT)
    });
}

/// The catch tests: each flaw must be reported by loom with the property it violates.
#[cfg(feature = "broken_sema")]
mod catches {
    use super::{Build, model, scenarios};
    use parksema::Flaw;

    /// Loom stops at the first failing execution, which may show the over-issue as two
    /// holders at once (`over-issue: max in use 2 > permits 1`) or as a second copy of the
    /// permit coming back (`over-issue: 2 permits left > 1 put in`).
    #[test]
    #[should_panic(expected = "over-issue: ")]
    fn catches_over_issue() {
        model("catches_over_issue", None, || {
            scenarios::mutual_exclusion(Build::flawed(Flaw::OverIssue), 1, 2, 1)
        });
    }

    /// Loom reports a deadlock by panicking with no thread active; the scenario's loom
    /// values then panic again while unwinding, and the process aborts. So the deadlock is
    /// caught in a child process (this test binary, re-executed to run
    /// `lost_waiters_child`), whose report must name it.
    #[test]
    fn catches_lost_waiters() {
        let exe = std::env::current_exe().expect("the test binary knows its path");
        let out = std::process::Command::new(exe)
            .args([
                "--exact",
                "catches::lost_waiters_child",
                "--ignored",
                "--nocapture",
            ])
            .env("PARKSEMA_LOOM_CHILD", "1")
            .env("RUST_BACKTRACE", "0")
            .output()
            .expect("the test binary can re-execute itself");
        let report = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success(),
            "LostWaiters was not caught:\n{report}"
        );
        assert!(
            report.contains("deadlock; threads = ["),
            "LostWaiters did not end in loom's deadlock report:\n{report}"
        );
        println!("caught LostWaiters: loom reported a deadlock");
    }

    #[test]
    #[ignore = "child entry point: run by `catches_lost_waiters` in a child process"]
    fn lost_waiters_child() {
        assert!(
            std::env::var_os("PARKSEMA_LOOM_CHILD").is_some(),
            "lost_waiters_child only runs in a child process started by catches_lost_waiters"
        );
        // Bound 3, as the correct model uses 4: the flaw shows with one preemption.
        model("catches_lost_waiters", Some(3), || {
            scenarios::wakes_every_waiter(Build::flawed(Flaw::LostWaiters), 2)
        });
    }

    #[test]
    #[should_panic(expected = "Causality violation")]
    fn catches_relaxed_ordering() {
        model("catches_relaxed_ordering", None, || {
            scenarios::visibility(Build::flawed(Flaw::RelaxedOrdering), 2)
        });
    }
}
