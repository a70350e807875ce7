// The suite's shared part, `include!`d at the root of each conformance binary
// (`conformance.rs` for `parking_lot_core` 0.10, `conformance_0_9.rs` for 0.9), each of which
// names the API under test `api` and its report's prefix `SUITE`.

use harness::Sizes;

/// The size of every case in each build: `sizes(loom bound, real runs, shuttle schedules)`.
/// The costs next to each row are the test profile (this crate unoptimized, loom and shuttle
/// at `opt-level = 3`), one test thread (`-- --test-threads 1`), on the 2-core development
/// machine with another engineer's loom run on the other core; on an idle machine the
/// real-thread rows that only park and unpark take a tenth of that.
///
/// - Real threads: 50 runs of a case that parks and unparks (0.2 to 8 ms a run, mostly
///   thread start-up and the waits for a thread to be asleep: 50 chances for the OS to
///   interleave the threads differently for well under a second); 20 runs of a case that
///   waits out a 20 ms deadline or pause (0.4 to 0.6 s).
/// - Loom: unbounded (every interleaving) wherever that finishes in a few seconds; the
///   requeue cases, three parked threads woken while the main thread goes on, are bounded.
/// - Shuttle: 1 000 random and 1 000 PCT schedules a case, 0.2 to 0.5 s; each catch below
///   came within its first 5 schedules in every run measured. A case with no thread but the
///   main one has one schedule (PCT refuses a body with nothing to schedule, and there is
///   nothing to vary).
///
/// The whole file takes, with the default two test threads and the other core busy: real
/// threads about 2 s; loom about 35 s (25 s with `unfaithful`, whose catch tests run
/// alongside); shuttle about 5 s (7 s with `unfaithful`).
const SIZES: &[(&str, Sizes)] = &[
    // The main thread alone: one loom execution, one schedule each. Real: 50 runs, 0.00 s.
    ("validate_false_is_invalid", sizes(None, 50, 1)),
    // A waiter, a prober looping on the table, and the main thread's callbacks, each pausing
    // 1 ms on real threads (50 runs: 0.1 to 0.7 s). Loom unbounded: 14 851 executions, 3 to
    // 4 s (unpark_one); 10 468 executions, 2 to 3 s (unpark_filter, unpark_requeue).
    // Shuttle: 0.3 to 0.5 s.
    ("under_lock_unpark_one", sizes(None, 50, 1000)),
    ("under_lock_unpark_filter", sizes(None, 50, 1000)),
    ("under_lock_unpark_requeue", sizes(None, 50, 1000)),
    // Two parked threads and the main thread. Loom unbounded: 373 executions, 0.1 s each.
    // Real: 50 runs, up to 0.4 s. Shuttle: 0.2 to 0.4 s.
    ("have_more_unpark_one", sizes(None, 50, 1000)),
    ("have_more_unpark_filter", sizes(None, 50, 1000)),
    ("have_more_unpark_requeue", sizes(None, 50, 1000)),
    ("fifo_unpark_one", sizes(None, 50, 1000)),
    ("fifo_unpark_filter", sizes(None, 50, 1000)),
    ("filter_skip_and_stop", sizes(None, 50, 1000)),
    ("unpark_all_token_to_all", sizes(None, 50, 1000)),
    // Three parked threads and the main thread. Loom bound 4: 13 551 executions, 3 to 5 s
    // each (bound 5: 39 902, 14 s; unbounded: 103 326, 23 to 32 s). Real: 50 runs, up to
    // 0.4 s. Shuttle: 0.4 to 0.5 s.
    ("requeue_abort", sizes(Some(4), 50, 1000)),
    ("requeue_unpark_one_requeue_rest", sizes(Some(4), 50, 1000)),
    ("requeue_all", sizes(Some(4), 50, 1000)),
    ("requeue_unpark_one", sizes(Some(4), 50, 1000)),
    ("requeue_one", sizes(Some(4), 50, 1000)),
    // One timed thread (and, in timed_out_not_last, an untimed one); each real run waits out
    // the 20 ms deadline. Loom unbounded: 6 executions (33 for timed_out_not_last), 0.01 s.
    // Real: 20 runs, 0.4 to 0.6 s. Shuttle: 0.3 to 0.5 s.
    ("timed_park_times_out", sizes(None, 20, 1000)),
    ("timed_out_not_last", sizes(None, 20, 1000)),
    ("timed_out_gets_current_key", sizes(None, 20, 1000)),
    // A timed thread, an unparker that moves the clock, and the main thread moving it too.
    // Loom unbounded: 1 882 executions (about a quarter of them time out), 0.3 s. Real: 20
    // runs, 0.5 s (both outcomes occur, about half each). Shuttle: 0.3 s.
    ("timeout_races_unpark", sizes(None, 20, 1000)),
    // One parked thread, unparked after a 20 ms pause on real threads. Loom unbounded: 6
    // executions, 0.00 s. Real: 20 runs, 0.45 s. Shuttle: 0.2 s.
    ("no_spurious_returns", sizes(None, 20, 1000)),
    // The main thread alone, as validate_false_is_invalid.
    ("unpark_without_waiters", sizes(None, 50, 1)),
    ("past_deadline_times_out", sizes(None, 50, 1)),
    ("before_sleep_unparks_its_own_key", sizes(None, 50, 1)),
    // One parked thread and the main thread, as have_more_unpark_one.
    ("validate_runs_once", sizes(None, 50, 1000)),
    // One timed thread, the clock moved twice; each real run waits out the 20 ms deadline.
    ("no_timeout_before_the_deadline", sizes(None, 20, 1000)),
    // Three parked threads and the main thread, as requeue_all.
    ("filter_three_on_a_key", sizes(Some(4), 50, 1000)),
    // An untimed and a timed thread, a requeue and the clock; each real run waits out the
    // deadline.
    ("requeued_timeout_not_last", sizes(None, 20, 1000)),
    // Two parked threads, two requeuers (one the main thread). Loom bound 4.
    ("requeue_both_ways_at_once", sizes(Some(4), 50, 1000)),
    // The model only: the main thread alone, failing at once.
    (
        "contract_park_after_an_unpark_in_before_sleep",
        sizes(None, 0, 1),
    ),
    // Loom only: two threads and the main thread each.
    ("edge_from_waker_to_woken", sizes(None, 0, 0)),
    ("edge_none_between_keys", sizes(None, 0, 0)),
    ("edge_none_from_the_first_user", sizes(None, 0, 0)),
    ("clock_moves_are_explored", sizes(None, 0, 0)),
    ("edge_none_into_before_sleep", sizes(None, 0, 0)),
    // parking_lot_core 0.9's be_fair (`conformance_0_9.rs` only): one parked thread at a time
    // and the main thread; each real run sleeps 2 ms before each unpark that must be fair.
    ("fair_only_when_waking", sizes(None, 20, 1000)),
    ("fair_once_due", sizes(None, 20, 1000)),
    ("fair_unpark_all_leaves_the_timer", sizes(None, 20, 1000)),
    // The model only.
    ("fair_timer_starts_due", sizes(None, 0, 1000)),
    ("fair_timer_rearms", sizes(None, 0, 1000)),
    ("fair_requeue_uses_the_from_key", sizes(None, 0, 1000)),
];

/// A row of [`SIZES`].
const fn sizes(loom_bound: Option<usize>, runs: usize, schedules: usize) -> Sizes {
    Sizes {
        loom_bound,
        runs,
        schedules,
    }
}

/// The size of the case `name`, deepened for the nightly runs: `PARKSEMA_LOOM_BOUND=N`
/// raises a bounded loom case to `N` (`cargo xtask verify --loom-bound N`; an unbounded case
/// stays unbounded), `SHUTTLE_ITERATIONS=K` multiplies the shuttle schedules
/// (`--shuttle-factor K`).
fn size_of(name: &str) -> Sizes {
    let mut sizes = SIZES
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no size for the conformance case `{name}`"))
        .1;
    let env = |var: &str| {
        std::env::var(var)
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
    };
    if let (Some(bound), Some(deeper)) = (sizes.loom_bound, env("PARKSEMA_LOOM_BOUND")) {
        sizes.loom_bound = Some(bound.max(deeper));
    }
    // A case with one schedule has nothing to schedule (the main thread alone).
    if let Some(factor) = env("SHUTTLE_ITERATIONS")
        && sizes.schedules > 1
    {
        sizes.schedules *= factor.max(1);
    }
    sizes
}

/// Held by each case on real threads (see [`check`]).
#[cfg(not(any(feature = "loom", feature = "shuttle")))]
static REAL_SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs the case `name` (whose body is `body`) against the real crate or the faithful model,
/// whichever this build is, at its size; prints the size and time and records them.
fn check(name: &str, body: fn()) {
    // Where the binary asks for it (`ONE_CASE_AT_A_TIME`), the cases run one at a time on
    // real threads: the real table is the process's, and keys of two cases can share a
    // bucket, whose fair timer (0.9) one case's unparks would then use up under another's
    // assertion. A failed case poisons nothing here: the next one takes the lock over.
    #[cfg(not(any(feature = "loom", feature = "shuttle")))]
    let _serial = ONE_CASE_AT_A_TIME.then(|| {
        REAL_SERIAL
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    });
    let sizes = size_of(name);
    let start = std::time::Instant::now();
    let count = harness::run(sizes, body);
    let secs = start.elapsed().as_secs_f64();
    let detail = harness::detail(sizes);
    println!(
        "conformance {name}: {} {detail}, {count} {}, {secs:.2} s",
        harness::BUILD,
        harness::UNIT
    );
    report::check(
        harness::BUILD,
        &format!("{SUITE} {name}"),
        count,
        harness::UNIT,
        &detail,
        secs,
    );
}

/// One `#[test]` per case, each running [`check`] on the case of the same name.
macro_rules! conformance {
    ($module:ident: $($(#[$doc:meta])* $name:ident,)*) => {
        $(
            $(#[$doc])*
            #[test]
            fn $name() {
                check(stringify!($name), $module::$name);
            }
        )*
    };
}

conformance! {
    cases:
    /// 1. `validate` false: `Invalid`, nothing queued.
    validate_false_is_invalid,
    /// 2. `unpark_one`'s callback runs under the bucket lock.
    under_lock_unpark_one,
    /// 2. `unpark_filter`'s filter and callback run under the bucket lock.
    under_lock_unpark_filter,
    /// 2. `unpark_requeue`'s `validate` and callback run under the bucket lock.
    under_lock_unpark_requeue,
    /// 3. `unpark_one`'s `have_more_threads` counts the same key only.
    have_more_unpark_one,
    /// 3. `unpark_filter`'s `have_more_threads` counts the same key only.
    have_more_unpark_filter,
    /// 3. `unpark_requeue`'s `have_more_threads` counts the same key only.
    have_more_unpark_requeue,
    /// 4. FIFO per key through `unpark_one`.
    fifo_unpark_one,
    /// 4, 7. FIFO per key through `unpark_filter`; park tokens reach the filter.
    fifo_unpark_filter,
    /// 5. `FilterOp::Skip` and `FilterOp::Stop`.
    filter_skip_and_stop,
    /// 7, 10. `unpark_all`'s token reaches every thread; it returns the number woken.
    unpark_all_token_to_all,
    /// 6. `RequeueOp::Abort`.
    requeue_abort,
    /// 6. `RequeueOp::UnparkOneRequeueRest`.
    requeue_unpark_one_requeue_rest,
    /// 6. `RequeueOp::RequeueAll`.
    requeue_all,
    /// 6. `RequeueOp::UnparkOne`.
    requeue_unpark_one,
    /// 6. `RequeueOp::RequeueOne`.
    requeue_one,
    /// 8. A timed park times out; `timed_out` gets the key and "was last".
    timed_park_times_out,
    /// 8. `timed_out`'s "was last" is false while another thread has the key.
    timed_out_not_last,
    /// 8. `timed_out` gets the key the thread is parked on after a requeue.
    timed_out_gets_current_key,
    /// 8. A timeout racing an unpark ends one way only.
    timeout_races_unpark,
    /// 9. No spurious returns from `park`.
    no_spurious_returns,
    /// 10. Unparks with no waiters run their callbacks with a zero result.
    unpark_without_waiters,
    /// 11. A park whose deadline has passed queues, then times out at once.
    past_deadline_times_out,
    /// 11. `validate` runs exactly once per park.
    validate_runs_once,
    /// 11. No timeout before the deadline under the clock-driven timeouts.
    no_timeout_before_the_deadline,
    /// 11. `before_sleep` runs outside the lock, once the thread is queued.
    before_sleep_unparks_its_own_key,
    /// 11. Skip, Unpark and Stop with three threads on one key.
    filter_three_on_a_key,
    /// 11. `was_last` after `unpark_requeue`.
    requeued_timeout_not_last,
    /// 11. Two requeues between the same two keys, in opposite directions, at once.
    requeue_both_ways_at_once,
}

/// Runs the case `name` (body `body`) at its size in this checker build and returns its
/// failure's message (`None` if it passed), the executions or schedules started, and the
/// seconds.
#[cfg(any(feature = "loom", feature = "shuttle"))]
fn outcome(name: &str, body: fn()) -> (Option<String>, u64, f64) {
    let sizes = size_of(name);
    let start = std::time::Instant::now();
    let result = std::panic::catch_unwind(|| harness::run(sizes, body));
    let secs = start.elapsed().as_secs_f64();
    let message = result.err().map(|p| harness::panic_text(&*p));
    (message, harness::runs_started(), secs)
}

/// Runs the case `name`, which must fail with a message containing `needle` (a model-only
/// check: a contract violation, or loom's race report), and records it as a passed check.
#[cfg(any(feature = "loom", feature = "shuttle"))]
fn check_fails_with(name: &str, body: fn(), needle: &str) {
    let (message, count, secs) = outcome(name, body);
    let detail = harness::detail(size_of(name));
    match message {
        Some(m) if m.contains(needle) => {}
        Some(m) => panic!("{name}: expected a failure with {needle:?}, got: {m}"),
        None => panic!(
            "{name}: expected a failure with {needle:?}, but every one of {count} {} passed",
            harness::UNIT
        ),
    }
    println!(
        "conformance {name}: {} {detail}, failed as it must ({needle}) after {count} {},          {secs:.2} s",
        harness::BUILD,
        harness::UNIT
    );
    report::check(
        harness::BUILD,
        &format!("{SUITE} {name}"),
        count,
        harness::UNIT,
        &detail,
        secs,
    );
}

/// 12. The contract: a `before_sleep` that unparks and then parks is flagged.
#[cfg(any(feature = "loom", feature = "shuttle"))]
#[test]
fn contract_park_after_an_unpark_in_before_sleep() {
    check_fails_with(
        "contract_park_after_an_unpark_in_before_sleep",
        cases::contract_park_after_an_unpark_in_before_sleep,
        CONTRACT_PARK,
    );
}

/// The model's message for a `park` from `before_sleep`.
#[cfg(any(feature = "loom", feature = "shuttle"))]
const CONTRACT_PARK: &str = "`park` was called from the `before_sleep` callback";


/// Running a case against the model's deliberately unfaithful variants.
#[cfg(all(feature = "unfaithful", any(feature = "loom", feature = "shuttle")))]
mod variants {
    use super::{harness, report, size_of};
    use parkcheck::{Settings, Unfaithful};

    /// Runs the case `name` (body `body`) against the model variant `variant` at the case's
    /// size (loom stops at the first failing execution, shuttle at the first failing
    /// schedule), records the cell, and asserts that the run failed with a message containing
    /// `expected`.
    pub(crate) fn assert_caught(variant: Unfaithful, name: &str, body: fn(), expected: &str) {
        let sizes = size_of(name);
        let mut settings = Settings::default();
        settings.unfaithful = Some(variant);
        let start = std::time::Instant::now();
        let outcome = std::panic::catch_unwind(|| {
            parkcheck::with_settings(settings, || harness::run(sizes, body))
        });
        let secs = start.elapsed().as_secs_f64();
        let message = outcome.err().map(|p| harness::panic_text(&*p));
        let short = message.as_deref().map(|m| {
            if m.contains(expected) {
                expected.to_string()
            } else {
                m.chars().take(80).collect()
            }
        });
        report::cell(
            harness::BUILD,
            &format!("{} {name}", crate::SUITE),
            &format!("model {variant:?}"),
            short.as_deref(),
            secs,
        );
        let message = message.unwrap_or_else(|| {
            panic!(
                "{variant:?} was not caught by {} {name} ({})",
                harness::BUILD,
                harness::detail(sizes)
            )
        });
        assert!(
            message.contains(expected),
            "{variant:?} in {} {name} ended in the wrong failure: {message}",
            harness::BUILD
        );
        println!(
            "caught {variant:?} in {} {name}: {expected}, {secs:.2} s ({} {})",
            harness::BUILD,
            harness::runs_started(),
            harness::UNIT
        );
    }

    /// Runs the case `name` (body `body`) against the model variant `variant`, which it does
    /// not depend on, records the cell, and asserts that it passes: the catches above are
    /// the variants' effects, not a case that fails on any change to the model.
    pub(crate) fn assert_passes(variant: Unfaithful, name: &str, body: fn()) {
        let sizes = size_of(name);
        let mut settings = Settings::default();
        settings.unfaithful = Some(variant);
        let start = std::time::Instant::now();
        let outcome = std::panic::catch_unwind(|| {
            parkcheck::with_settings(settings, || harness::run(sizes, body))
        });
        let secs = start.elapsed().as_secs_f64();
        let message = outcome.err().map(|p| harness::panic_text(&*p));
        report::cell(
            harness::BUILD,
            &format!("{} {name}", crate::SUITE),
            &format!("model {variant:?}"),
            message.as_deref(),
            secs,
        );
        if let Some(message) = message {
            panic!(
                "{variant:?} failed {} {name}, which does not depend on it: {message}",
                harness::BUILD
            );
        }
        println!(
            "{variant:?} passes {} {name} as expected, {} {}, {secs:.2} s",
            harness::BUILD,
            harness::runs_started(),
            harness::UNIT
        );
    }

    /// Runs the case `name` (body `body`), which must fail with `needle` on the faithful
    /// model (a contract check, a race report), against the variant `variant`, records the
    /// cell, and asserts that it did not: the variant lets through what the case must see.
    #[allow(dead_code, reason = "conformance.rs's catches use it; conformance_0_9.rs's do not")]
    pub(crate) fn assert_failure_missed(variant: Unfaithful, name: &str, body: fn(), needle: &str) {
        let mut settings = Settings::default();
        settings.unfaithful = Some(variant);
        let (message, count, secs) =
            parkcheck::with_settings(settings, || crate::outcome(name, body));
        let caught = format!("no {needle:?} failure");
        report::cell(
            harness::BUILD,
            &format!("{} {name}", crate::SUITE),
            &format!("model {variant:?}"),
            message.is_none().then_some(caught.as_str()),
            secs,
        );
        if let Some(message) = message {
            panic!(
                "{variant:?} was not caught by {} {name}: it still fails as the faithful model                  does ({message})",
                harness::BUILD
            );
        }
        println!(
            "caught {variant:?} in {} {name}: {caught} in {count} {}, {secs:.2} s",
            harness::BUILD,
            harness::UNIT
        );
    }

}
