//! Catch tests (feature `broken_sema`): each runs an ordinary stress scenario against a
//! deliberately flawed semaphore in a child process and passes only when the child reports
//! the violated property. Replacing a flaw with the correct code makes its catch test fail.

use parksema::Flaw;

use crate::child::{ChildRun, SCENARIOS, run_child};

/// The first `over-issue: max in use N > permits P` report, as `(N, P)`.
fn over_issue(run: &ChildRun) -> Option<(usize, usize)> {
    let msg = run.panic_message()?;
    let rest = msg.strip_prefix("over-issue: max in use ")?;
    let (max, permits) = rest.split_once(" > permits ")?;
    Some((max.parse().ok()?, permits.trim().parse().ok()?))
}

/// The `N` of `NAME: N` in a Debug-like state line.
fn field(state: &str, name: &str) -> Option<usize> {
    let at = state.find(&format!("{name}: "))? + name.len() + 2;
    let digits: String = state[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// Measured beside two busy processes (`yes > /dev/null`, twice, on the 2-core machine), in the
/// release build (`cargo xtask verify`'s): caught in 20 of 20 runs of this check (the over-issue
/// report), all but one within 0.03 s (that one in 2.3 s).
#[test]
fn catches_over_issue_in_never_exceeds_permits() {
    let run = run_child("never_exceeds_permits", "OverIssue");
    let Some((max, permits)) = over_issue(&run) else {
        panic!(
            "OverIssue was not reported as an over-issue (exit {:?}):\n{}",
            run.code, run.output
        );
    };
    assert!(
        max > permits,
        "the report must name more holders than permits"
    );
    assert_ne!(
        run.code,
        Some(0),
        "the child reported an over-issue but passed"
    );
    println!(
        "caught OverIssue in {:.3} s: over-issue: max in use {max} > permits {permits}",
        run.elapsed.as_secs_f64()
    );
}

/// Measured beside two busy processes (`yes > /dev/null`, twice, on the 2-core machine), in the
/// release build (`cargo xtask verify`'s): caught in 20 of 20 runs of this check, each a stall at
/// the 2 s limit (2.3 s with the child's start-up).
#[test]
fn catches_lost_waiters_in_wakes_every_parked_thread() {
    let run = run_child("wakes_every_parked_thread", "LostWaiters");
    let (parked, permits) = assert_lost_wakeup(&run, "wakes_every_parked_thread", "LostWaiters");
    println!(
        "caught LostWaiters in {:.3} s: stall with {parked} threads parked, {permits} permits \
         free, WAITERS clear",
        run.elapsed.as_secs_f64()
    );
}

/// The lost-wakeup signature in a stall report: threads parked, a permit free, and
/// `WAITERS` clear, so no release will ever wake them.
fn assert_lost_wakeup(run: &ChildRun, scenario: &str, flaw: &str) -> (usize, usize) {
    assert_stranded(run, scenario, flaw, "waiters: false", "a lost wakeup")
}

/// A stall in `scenario` with threads parked and a permit free, and the `WAITERS` bit as
/// `waiters` says (`waiters: false`: nobody will ever look at the queue again; `waiters:
/// true`: a release looked and passed the waiter over).
fn assert_stranded(
    run: &ChildRun,
    scenario: &str,
    flaw: &str,
    waiters: &str,
    what: &str,
) -> (usize, usize) {
    assert_eq!(
        run.code,
        Some(watchdog::STALL_EXIT_CODE),
        "{flaw} did not end in a watchdog stall:\n{}",
        run.output
    );
    assert!(
        // The scenario's name, perhaps followed by its sizes.
        run.output
            .contains(&format!("STALL in scenario `{scenario}")),
        "the stall report does not name the scenario:\n{}",
        run.output
    );
    let state = run.stall_state().expect("the report has a state line");
    let parked = field(state, "parked threads").expect("the state names the parked threads");
    let permits = field(state, "permits").expect("the state names the permits");
    assert!(
        parked > 0 && permits > 0 && state.contains(waiters),
        "the state is not {what}: {state}"
    );
    (parked, permits)
}

/// `StaleValidate` on real threads: the gap before the bucket lock yields, and with one
/// permit among eight threads a release lands in it within the run (10 of 10 release runs,
/// the verification guide's matrix).
///
/// Measured beside two busy processes (`yes > /dev/null`, twice, on the 2-core machine), in the
/// release build (`cargo xtask verify`'s): caught in 20 of 20 runs of this check, in 2.3–7.8 s.
#[test]
fn catches_stale_validate_in_never_exceeds_permits() {
    let run = run_child("never_exceeds_permits", "StaleValidate");
    let (parked, permits) = assert_lost_wakeup(&run, "never_exceeds_permits", "StaleValidate");
    println!(
        "caught StaleValidate in {:.3} s: stall with {parked} threads parked, {permits} \
         permits free, WAITERS clear",
        run.elapsed.as_secs_f64()
    );
}

/// A stall in `scenario` with threads parked and a permit free while `WAITERS` is still set:
/// the waiter that should have been woken was passed over (the flaws of the weighted and
/// timed paths leave the bit set, unlike `LostWaiters`).
fn assert_passed_over(run: &ChildRun, scenario: &str, flaw: &str) -> (usize, usize) {
    assert_stranded(run, scenario, flaw, "waiters: true", "a passed-over waiter")
}

/// `WeightedLostWakeup` on real threads: the parking order is set up before the release, so
/// the first round strands the small request.
///
/// Measured beside two busy processes (`yes > /dev/null`, twice, on the 2-core machine), in the
/// release build (`cargo xtask verify`'s): caught in 20 of 20 runs of this check, each in the first
/// round (2.0–2.5 s).
#[test]
fn catches_weighted_lost_wakeup_in_small_behind_large() {
    let run = run_child("small_behind_large", "WeightedLostWakeup");
    let (parked, permits) = assert_passed_over(&run, "small_behind_large", "WeightedLostWakeup");
    println!(
        "caught WeightedLostWakeup in {:.3} s: stall with {parked} threads parked, {permits} \
         permits free",
        run.elapsed.as_secs_f64()
    );
}

/// `TimeoutLeak` on real threads: the release lands just after the timed waiter's deadline,
/// usually before the kernel's timer wakes it, so the release chooses a waiter whose
/// deadline has passed; timing-dependent (the verification guide's real-thread matrix says how often it
/// was caught).
///
/// Measured beside two busy processes (`yes > /dev/null`, twice, on the 2-core machine), in the
/// release build (`cargo xtask verify`'s): with 50 rounds and the flaw deciding on the clock as it
/// returned from the park, caught in 16 of 20 runs (13 of 20 in a series with compilers busy too):
/// the set-up outlasted the 10 ms deadline in about nine rounds of ten, and most releases that
/// still met the timed waiter parked came before its deadline. With the flaw's window
/// (`Flaw::TimeoutLeak`: on real threads the woken waiter yields, then looks at the clock) and 200
/// rounds (`child.rs`), caught in 20 of 20 runs in two series, in 2.3–4.9 s.
///
/// Up to three children: a fresh clone's `.ci/run` beside two busy processes once missed in
/// its one child (the waiter took the permit in every round, 3.2 s), while the verify's other
/// builds loaded the machine too; a miss costs that child's few seconds.
#[test]
fn catches_timeout_leak_in_timeout_at_release() {
    let mut run = run_child("timeout_at_release", "TimeoutLeak");
    for _ in 1..3 {
        if run.code == Some(watchdog::STALL_EXIT_CODE) {
            break;
        }
        run = run_child("timeout_at_release", "TimeoutLeak");
    }
    let (parked, permits) = assert_passed_over(&run, "timeout_at_release", "TimeoutLeak");
    println!(
        "caught TimeoutLeak in {:.3} s: stall with {parked} threads parked, {permits} \
         permits free",
        run.elapsed.as_secs_f64()
    );
}

/// `HandoffDoubleCount` on real threads: on a `Fifo` semaphore every contended release hands
/// over, and each handoff also adds its permits to the count, so the holders soon outnumber
/// the one permit.
///
/// Measured beside two busy processes (`yes > /dev/null`, twice, on the 2-core machine), in the
/// release build (`cargo xtask verify`'s): caught in 20 of 20 runs of this check, each within
/// 0.1 s.
#[test]
fn catches_handoff_double_count_in_fifo_traffic() {
    let run = run_child("fifo_traffic", "HandoffDoubleCount");
    let Some((max, permits)) = over_issue(&run) else {
        panic!(
            "HandoffDoubleCount was not reported as an over-issue (exit {:?}):\n{}",
            run.code, run.output
        );
    };
    println!(
        "caught HandoffDoubleCount in {:.3} s: over-issue: max in use {max} > permits {permits}",
        run.elapsed.as_secs_f64()
    );
}

/// How one child run ended, in a few words for the matrix.
fn outcome(run: &ChildRun) -> String {
    match run.code {
        Some(0) => "not caught".to_string(),
        Some(watchdog::STALL_EXIT_CODE) => {
            format!("stall ({})", run.stall_state().unwrap_or("no state line"))
        }
        code => match run.panic_message() {
            Some(msg) => format!("failed: {msg}"),
            None => format!("failed with exit {code:?}"),
        },
    }
}

/// How many times the matrix runs each cell: once, or three times with `PARKSEMA_FULL=1`
/// (`cargo xtask verify --full`, the nightly job; about 4 minutes a run here, most of it the
/// 2 s stalls of caught lost wakeups).
fn matrix_runs() -> usize {
    if std::env::var_os("PARKSEMA_FULL").is_some_and(|v| v == "1") {
        3
    } else {
        1
    }
}

/// Every scenario against every flaw: prints the checks-by-flaws matrix of this machine and
/// this build (the verification guide's comes from it) and fails if a flaw that real threads can show
/// goes uncaught by all. Two flaws are run and reported but not required: `RelaxedOrdering`
/// and `RelaxedWhenWaited`, because on x86-64 every locked read-modify-write is a full
/// barrier, so weakening the orderings changes nothing the hardware does (two loom models
/// catch each).
///
/// The matrix's gated cells (`xtask/src/matrix.rs`, `real_row`), each run 20 times on its own
/// as this test runs it (a child process, 2 s stall limit) beside two busy processes
/// (`yes > /dev/null`, twice, on the 2-core machine), release build: caught in 20 of 20 runs
/// in every cell. `OverIssue` in `never_exceeds_permits`, `wakes_every_parked_thread`,
/// `mixed_traffic`, `close_during_traffic` and `weighted_traffic`; `LostWaiters` in
/// `never_exceeds_permits`, `wakes_every_parked_thread` and `small_behind_large`
/// (`timeout_at_release`, 20 of 20 in two series at 200 rounds, missed once in a later
/// fresh-clone run under the same load, and is reported since);
/// `StaleValidate` in `never_exceeds_permits`; `TimeoutLeak` in `timeout_at_release` (16 of
/// 20 before its window and the 200 rounds); `WeightedLostWakeup` in `small_behind_large`;
/// `HandoffDoubleCount` in `fifo_traffic`. The whole test took 131–139 s there, 114 s
/// at 50 rounds (a run that catches nothing costs the scenario's whole run, 200 rounds of
/// `timeout_at_release` 2–4 s).
#[test]
fn catches_every_flaw_somewhere() {
    // `FifoEarlyAnnounce` is left out: its window on real threads is the few instructions
    // between a CAS and the bucket lock (`stress/main.rs`, `fifo_arrivals_race_a_free_permit`).
    for flaw in Flaw::ALL
        .into_iter()
        .filter(|&f| f != Flaw::FifoEarlyAnnounce)
    {
        let flaw = flaw.name();
        let mut caught = 0;
        for scenario in SCENARIOS {
            for _ in 0..matrix_runs() {
                let run = run_child(scenario, flaw);
                if run.code != Some(0) {
                    caught += 1;
                }
                println!(
                    "| {flaw} | {scenario} | {:.3} s | {} |",
                    run.elapsed.as_secs_f64(),
                    outcome(&run)
                );
            }
        }
        // The two ordering flaws cannot be seen on x86-64 (above): reported, not required.
        if flaw != "RelaxedOrdering" && flaw != "RelaxedWhenWaited" {
            assert!(caught > 0, "no scenario caught {flaw}");
        }
    }
}
