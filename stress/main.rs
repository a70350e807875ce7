//! Real-thread stress tests of `parksema`, every one under the in-process watchdog, so a
//! lost wakeup ends as a fast stall report instead of a hung test.
//!
//! Sizes: release builds run the full sizes; debug builds run a tenth of the
//! iterations (the same thread counts), which keeps `cargo test` quick while still parking
//! and waking thousands of times.
//!
//! With the `broken_sema` feature the same binary also holds the catch tests (`catches_*`),
//! which run these scenarios against each deliberate flaw in a child process and pass only
//! when the flaw is reported with the property it violates.

// A real-thread test: under the model checkers the semaphore only works inside a model.
#![cfg(not(any(feature = "loom", feature = "shuttle")))]

mod child;
#[path = "../models/generated.rs"]
mod generated;
use watchdog::report;
mod scenarios;
#[path = "../models/scenarios/mod.rs"]
mod shared;
#[path = "../models/spec.rs"]
mod spec;
mod support;

#[cfg(feature = "broken_sema")]
mod catches;

use parksema::Fairness;
use support::Build;

/// Iterations per thread for the long-running scenarios: 20 000 in release
/// builds, a tenth of that in debug builds (unoptimized atomics and park calls are about ten
/// times slower, and the debug run is the quick one).
pub(crate) const PER_THREAD: usize = if cfg!(debug_assertions) {
    2_000
} else {
    20_000
};

#[test]
fn never_exceeds_permits() {
    let start = std::time::Instant::now();
    // The full sizes: 1 permit among 8 threads, 3 among 16, 8 among 32.
    for (permits, threads) in [(1, 8), (3, 16), (8, 32)] {
        let summary =
            scenarios::never_exceeds_permits(Build::CORRECT, permits, threads, PER_THREAD);
        println!("{summary}");
    }
    record(
        "never_exceeds_permits",
        (8 + 16 + 32) * PER_THREAD,
        "acquisitions",
        "permits 1, 3, 8 among 8, 16, 32 threads",
        start,
    );
}

#[test]
fn wakes_every_parked_thread() {
    let start = std::time::Instant::now();
    println!(
        "{}",
        scenarios::wakes_every_parked_thread(Build::CORRECT, 32)
    );
    record(
        "wakes_every_parked_thread",
        32,
        "wake-ups",
        "32 threads parked, 32 single releases",
        start,
    );
}

#[test]
fn mixed_traffic() {
    let start = std::time::Instant::now();
    println!(
        "{}",
        scenarios::mixed_traffic(Build::CORRECT, 4, 16, PER_THREAD)
    );
    record(
        "mixed_traffic",
        16 * PER_THREAD,
        "operations",
        "4 permits, 16 threads",
        start,
    );
}

#[test]
fn many_semaphores_share_buckets() {
    let start = std::time::Instant::now();
    // 100 rounds move each of the 64 tokens through all 16 threads 100 times: 102 400 takes,
    // nearly all parked, in about a second in release; a tenth of that in debug.
    println!(
        "{}",
        scenarios::many_semaphores(Build::CORRECT, 16, 64, PER_THREAD / 200)
    );
    record(
        "many_semaphores_share_buckets",
        64 * 16 * (PER_THREAD / 200),
        "acquisitions",
        "1 024 semaphores, 64 tokens, 16 threads",
        start,
    );
}

#[test]
fn close_while_parked() {
    let start = std::time::Instant::now();
    println!("{}", scenarios::close_while_parked(Build::CORRECT, 16));
    record(
        "close_while_parked",
        16,
        "parked threads",
        "each refused at close",
        start,
    );
}

#[test]
fn close_during_traffic() {
    let start = std::time::Instant::now();
    println!(
        "{}",
        scenarios::close_during_traffic(Build::CORRECT, 2, 16, PER_THREAD / 2)
    );
    record(
        "close_during_traffic",
        16,
        "threads",
        &format!(
            "2 permits, up to {} acquisitions each before close",
            PER_THREAD / 2
        ),
        start,
    );
}

#[test]
fn weighted_traffic() {
    let start = std::time::Instant::now();
    // 4 permits among 8 threads with requests of 1 to 4: large requests park behind small
    // ones, timed ones give up, parts come back one by one.
    println!(
        "{}",
        scenarios::weighted_traffic(Build::CORRECT, 4, 8, PER_THREAD / 2)
    );
    record(
        "weighted_traffic",
        8 * (PER_THREAD / 2),
        "requests",
        "4 permits, 8 threads, requests of 1 to 4",
        start,
    );
}

#[test]
fn small_behind_large() {
    let start = std::time::Instant::now();
    println!("{}", scenarios::small_behind_large(Build::CORRECT, 50));
    record("small_behind_large", 50, "rounds", "", start);
}

#[test]
fn timeout_at_release() {
    let start = std::time::Instant::now();
    // 100 rounds of about 10 ms each.
    println!("{}", scenarios::timeout_at_release(Build::CORRECT, 100));
    record(
        "timeout_at_release",
        100,
        "rounds",
        "10 ms deadline, the release moved across it",
        start,
    );
}

/// The traffic scenarios again in the other fairness modes (the tests above run the
/// default, `Eventual`): under `Fifo` every contended release is a handoff and no thread
/// barges; under `Barging` there is no timer.
#[test]
fn traffic_in_every_fairness_mode() {
    let start = std::time::Instant::now();
    for fairness in [Fairness::Fifo, Fairness::Barging] {
        let build = Build::CORRECT.fair(fairness);
        println!("{fairness:?}:");
        for (permits, threads) in [(1, 8), (3, 16)] {
            println!(
                "{}",
                scenarios::never_exceeds_permits(build, permits, threads, PER_THREAD / 2)
            );
        }
        println!("{}", scenarios::mixed_traffic(build, 4, 16, PER_THREAD / 2));
        println!(
            "{}",
            scenarios::weighted_traffic(build, 4, 8, PER_THREAD / 2)
        );
        println!("{}", scenarios::wakes_every_parked_thread(build, 32));
    }
    record(
        "traffic_in_every_fairness_mode",
        2 * 24 * PER_THREAD + 64,
        "operations",
        "Fifo and Barging: four traffic scenarios at half size each",
        start,
    );
}

#[test]
fn holder_panics_returns_permit() {
    let start = std::time::Instant::now();
    println!("{}", scenarios::holder_panics(Build::CORRECT));
    record("holder_panics_returns_permit", 1, "rounds", "", start);
}

/// Appends the report record of the real-thread check `check` (`watchdog::report`).
fn record(check: &str, count: usize, unit: &str, detail: &str, start: std::time::Instant) {
    let build = if cfg!(debug_assertions) {
        "debug build"
    } else {
        "release build"
    };
    let detail = if detail.is_empty() {
        build.to_string()
    } else {
        format!("{detail}; {build}")
    };
    report::check(
        "real",
        check,
        count as u64,
        unit,
        &detail,
        start.elapsed().as_secs_f64(),
    );
}

/// Runs a scenario shared with the model checkers `rounds` times on real threads, under the
/// watchdog: each round reports progress, so a round that hangs (a lost wakeup) becomes a
/// stall report naming the scenario.
fn repeat(name: &str, rounds: usize, body: impl Fn()) {
    let start = std::time::Instant::now();
    let wd = watchdog::Watchdog::arm(
        format!("shared scenario {name}"),
        watchdog::stall_limit(support::STALL),
    );
    let w = wd.worker("rounds");
    for _ in 0..rounds {
        w.op("round");
        body();
    }
    drop(wd);
    record(&format!("shared_{name}"), rounds, "rounds", "", start);
}

/// Rounds of the shared scenarios on real threads: each round spawns its threads afresh, so
/// the races at start-up (the ones loom and shuttle explore) happen thousands of times. In
/// release builds 2 000 rounds of the small scenarios take about a second here; debug builds
/// run a tenth.
const ROUNDS: usize = PER_THREAD / 10;

/// Generated programs (`models/generated.rs`) of every family on real threads, each run
/// many times, every history checked against the specification with real-time precedence
/// and its quiescence points. 400 programs × 20 runs in release builds (a tenth of the
/// programs in debug), under the watchdog: a run that hangs is a stall report naming the
/// program. The programs come from the proptest seed (`generated::program_seed`). Real
/// threads race only where the scheduler lets them, so the situations reached are reported,
/// not required (some windows are nanoseconds wide); this is here for the real park table
/// and real atomics.
#[test]
fn generated_programs_match_the_specification() {
    let start = std::time::Instant::now();
    let (coverage, runs, size) = run_generated(Build::CORRECT, 20);
    println!(
        "PROPTEST_RNG_SEED={}\n{}",
        generated::program_seed(),
        coverage.table()
    );
    coverage.report_and_require("real", "generated_programs_match_the_specification", 0);
    record(
        "generated_programs_match_the_specification",
        runs,
        "runs",
        &size,
        start,
    );
}

/// Runs the generated programs against `build` under the watchdog, each `runs` times;
/// returns what they reached, the runs, and the size in words. A failing run panics with its
/// history and program.
fn run_generated(build: Build, runs: usize) -> (generated::Coverage, usize, String) {
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::{Config, RngSeed, TestRunner};
    let programs = if cfg!(debug_assertions) { 40 } else { 400 };
    let wd = watchdog::Watchdog::arm(
        "generated programs against the specification",
        watchdog::stall_limit(support::STALL),
    );
    let w = wd.worker("programs");
    let mut runner = TestRunner::new(Config {
        rng_seed: RngSeed::Fixed(generated::program_seed()),
        ..Config::default()
    });
    let mut coverage = generated::Coverage::default();
    for _ in 0..programs {
        let program = generated::any_program(5)
            .new_tree(&mut runner)
            .expect("a program")
            .current()
            .for_real_threads();
        // Leaked: the watchdog names a worker's last operation with a static string, and a
        // stall report must say which program hung (a few hundred short strings, once).
        w.op(Box::leak(format!("{program:?}").into_boxed_str()));
        // Of every four runs, two start the threads together (races), one pauses the last
        // thread first (a driver acting on a queue), one starts them one after another
        // (queues in a known order).
        let variants = [
            program.clone(),
            program.clone(),
            program.clone().driver_paused(),
            program.clone().staggered(),
        ];
        for run in 0..runs {
            coverage.add(generated::run(
                &variants[run % variants.len()],
                |p, m| build.fair(m).semaphore(p),
                true,
            ));
        }
    }
    drop(wd);
    let size = format!(
        "{programs} programs x {runs} runs, PROPTEST_RNG_SEED={}",
        generated::program_seed()
    );
    (coverage, programs * runs, size)
}

/// The child scenario `generated_programs` (`child.rs`): the generated programs against
/// `build` until one fails.
pub(crate) fn generated_programs_until_a_failure(build: Build) -> String {
    // 8 runs a program, not 20: the catch test runs this once per flaw, and a flaw the
    // programs cannot show runs it whole (beside two busy processes on 2 cores, 20 runs took
    // 56-66 s a pass and the whole catch test 269 s, near the supervisor's 300 s without
    // output).
    let (_, runs, size) = run_generated(build, 8);
    format!("{runs} runs ({size})")
}

/// The generated programs on real threads against each flaw real threads run (not
/// `FifoEarlyAnnounce`, whose window is a few instructions), each in a child process (a lost
/// wake-up is a stall, which ends the process): the `spec` column's real-thread cells,
/// reported, not gated (a catch needs the scheduler's luck; the two ordering flaws cannot
/// show on x86-64). The correct semaphore passes the same child; a flawed run ends passing,
/// with a specification violation, an invariant the runner asserts, or a stall, and nothing
/// else.
#[cfg(feature = "broken_sema")]
#[test]
fn generated_programs_catch_the_flaws() {
    use parksema::Flaw;
    let correct = child::run_child_unrecorded("generated_programs", "none");
    assert_eq!(
        correct.code,
        Some(0),
        "the correct semaphore failed: {}",
        correct.output
    );
    for flaw in Flaw::ALL
        .into_iter()
        .filter(|&f| f != Flaw::FifoEarlyAnnounce)
    {
        let name = flaw.name();
        let run = child::run_child_unrecorded("generated_programs", name);
        let caught = run.caught();
        report::cell(
            "spec",
            "real",
            name,
            caught.as_deref(),
            run.elapsed.as_secs_f64(),
        );
        println!(
            "{name}: {} in {:.2} s",
            caught.as_deref().unwrap_or("not caught"),
            run.elapsed.as_secs_f64()
        );
        if let Some(what) = &caught {
            let expected = [
                "spec:",
                "stall",
                "over-issue",
                "a guard of the wrong size",
                "merge",
                "split",
            ];
            assert!(
                expected.iter().any(|e| what.starts_with(e)),
                "{name} failed some other way: {what}\n{}",
                run.output
            );
        }
    }
}

#[test]
fn shared_mutual_exclusion() {
    repeat("mutual_exclusion", ROUNDS / 10, || {
        shared::mutual_exclusion(Build::CORRECT, 1, 8, 100);
        shared::mutual_exclusion(Build::CORRECT, 3, 8, 100);
    });
}

#[test]
fn shared_waiters_bit_races() {
    repeat("waiters_bit_races", ROUNDS, || {
        shared::waiters_bit_races(Build::CORRECT)
    });
}

#[test]
fn shared_wakes_every_waiter() {
    repeat("wakes_every_waiter", ROUNDS / 4, || {
        shared::wakes_every_waiter(Build::CORRECT, 8, false)
    });
}

#[test]
fn shared_two_semaphores_share_bucket() {
    repeat("two_semaphores_share_bucket", ROUNDS, || {
        shared::two_semaphores_share_bucket(Build::CORRECT)
    });
}

#[test]
fn shared_close_races() {
    repeat("close_races", ROUNDS, || {
        shared::close_races(Build::CORRECT)
    });
}

#[test]
fn shared_try_acquire_races() {
    repeat("try_acquire_races", ROUNDS, || {
        shared::try_acquire_races(Build::CORRECT)
    });
}

#[test]
fn shared_visibility() {
    repeat("visibility", ROUNDS, || {
        shared::visibility(Build::CORRECT, 4)
    });
}

#[test]
fn shared_close_publishes() {
    repeat("close_publishes", ROUNDS, || {
        shared::close_publishes(Build::CORRECT)
    });
}

#[test]
fn shared_close_wakes_waiters() {
    repeat("close_wakes_waiters", ROUNDS / 4, || {
        shared::close_wakes_waiters(Build::CORRECT, 8, true);
        shared::close_wakes_waiters(Build::CORRECT, 8, false);
    });
}

#[test]
fn shared_add_after_close() {
    repeat("add_after_close", ROUNDS, || {
        shared::add_after_close(Build::CORRECT)
    });
}

#[test]
fn shared_releases_race() {
    repeat("releases_race", ROUNDS / 4, || {
        shared::releases_race(Build::CORRECT, 8, &[2, 1, 3, 2])
    });
}

#[test]
fn shared_refused_adds_near_max() {
    repeat("refused_adds_near_max", ROUNDS, || {
        shared::refused_adds_near_max(Build::CORRECT)
    });
}

#[test]
fn shared_unwind_and_move() {
    repeat("unwind_and_move", ROUNDS, || {
        shared::unwind_and_move(Build::CORRECT)
    });
}

#[test]
fn shared_woken_takes_another_releasers_permit() {
    repeat("woken_takes_another_releasers_permit", ROUNDS, || {
        shared::woken_takes_another_releasers_permit(Build::CORRECT)
    });
}

#[test]
fn shared_large_head_small_behind() {
    repeat("large_head_small_behind", ROUNDS, || {
        shared::large_head_small_behind(Build::CORRECT)
    });
}

#[test]
fn shared_timeout_races_release() {
    // Each round lets a 10 ms deadline pass in real time: ROUNDS / 10 rounds (20 in debug
    // builds, 0.2 s; 200 in release, 2 s).
    repeat("timeout_races_release", ROUNDS / 10, || {
        shared::timeout_races_release(Build::CORRECT)
    });
}

#[test]
fn shared_close_races_timed_waits() {
    // Each round lets a 10 ms deadline pass in real time, as above.
    repeat("close_races_timed_waits", ROUNDS / 10, || {
        shared::close_races_timed_waits(Build::CORRECT)
    });
}

#[test]
fn shared_split_merge_forget_race_acquires() {
    repeat("split_merge_forget_race_acquires", ROUNDS, || {
        shared::split_merge_forget_race_acquires(Build::CORRECT)
    });
}

#[test]
fn shared_forget_races_close() {
    repeat("forget_races_close", ROUNDS, || {
        shared::forget_races_close(Build::CORRECT)
    });
}

#[test]
fn shared_batch_wakes_several() {
    repeat("batch_wakes_several", ROUNDS / 4, || {
        shared::batch_wakes_several(Build::CORRECT, 8)
    });
}

#[test]
fn shared_woken_out_barged_passes_on() {
    repeat("woken_out_barged_passes_on", ROUNDS, || {
        shared::woken_out_barged_passes_on(Build::CORRECT)
    });
}

#[test]
fn shared_wakes_every_waiter_barging() {
    repeat("wakes_every_waiter_barging", ROUNDS / 4, || {
        shared::wakes_every_waiter(Build::CORRECT.fair(Fairness::Barging), 8, false)
    });
}

#[test]
fn shared_handoff_from_two_releasers() {
    repeat("handoff_from_two_releasers", ROUNDS, || {
        shared::handoff_from_two_releasers(Build::CORRECT.fair(Fairness::Fifo), false);
        shared::handoff_from_two_releasers(Build::CORRECT, true);
    });
}

#[test]
fn shared_fifo_no_barging() {
    repeat("fifo_no_barging", ROUNDS, || {
        shared::fifo_no_barging(Build::CORRECT.fair(Fairness::Fifo))
    });
}

#[test]
fn shared_fifo_keeps_arrival_order() {
    repeat("fifo_keeps_arrival_order", ROUNDS, || {
        shared::fifo_keeps_arrival_order(Build::CORRECT.fair(Fairness::Fifo))
    });
}

#[test]
fn shared_handoff_to_timing_out_waiter() {
    // Each round lets a 10 ms deadline pass in real time: ROUNDS / 10 rounds.
    repeat("handoff_to_timing_out_waiter", ROUNDS / 10, || {
        shared::handoff_to_timing_out_waiter(Build::CORRECT.fair(Fairness::Fifo), false);
        shared::handoff_to_timing_out_waiter(Build::CORRECT, true);
    });
}

#[test]
fn shared_eventual_timer_hands_over() {
    // Each round sleeps 1 ms (the mocked clock's advance, in real time): ROUNDS / 4 rounds.
    repeat("eventual_timer_hands_over", ROUNDS / 4, || {
        shared::eventual_timer_hands_over(Build::CORRECT)
    });
}

/// The race is between an announcer's CAS and its bucket lock, a few instructions wide on
/// real threads: this runs the scenario for its assertions, not to catch `FifoEarlyAnnounce`
/// (loom and shuttle do).
#[test]
fn shared_fifo_arrivals_race_a_free_permit() {
    repeat("fifo_arrivals_race_a_free_permit", ROUNDS, || {
        shared::fifo_arrivals_race_a_free_permit(Build::CORRECT.fair(Fairness::Fifo))
    });
}

#[test]
fn shared_small_arrives_as_a_large_head_is_passed_over() {
    repeat(
        "small_arrives_as_a_large_head_is_passed_over",
        ROUNDS,
        || shared::small_arrives_as_a_large_head_is_passed_over(Build::CORRECT),
    );
}

#[test]
fn shared_eventual_turn_goes_to_a_parked_waiter() {
    // Each round sleeps 2 ms (the mocked clock's advance, in real time): ROUNDS / 4 rounds.
    repeat("eventual_turn_goes_to_a_parked_waiter", ROUNDS / 4, || {
        shared::eventual_turn_goes_to_a_parked_waiter(Build::CORRECT, 4)
    });
}

#[test]
fn shared_fifo_head_times_out() {
    // Each round lets a 10 ms deadline pass in real time: ROUNDS / 10 rounds.
    repeat("fifo_head_times_out", ROUNDS / 10, || {
        shared::fifo_head_times_out(Build::CORRECT.fair(Fairness::Fifo))
    });
}
