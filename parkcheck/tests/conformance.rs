//! The conformance suite: the same cases, written once (`conformance/cases.rs`), run against
//! the real `parking_lot_core` 0.10 on OS threads and against parkcheck's model of its park
//! table under loom and under shuttle, so that the model is shown to behave as the crate it
//! stands for, function by function:
//!
//! - `cargo test -p parkcheck --test conformance`: the real crate, each case repeated;
//! - `cargo test -p parkcheck --test conformance --features loom`: the model, every
//!   interleaving within each case's preemption bound;
//! - `cargo test -p parkcheck --test conformance --features shuttle`: the model, random and
//!   PCT (depth 3) schedules.
//!
//! With `unfaithful` added to a checker feature, the `catches` tests run the model's
//! deliberately wrong variants ([`parkcheck::Unfaithful`]) and assert that the cases expected
//! to see each one fail, with the violated property's message: the suite can tell a faithful
//! model from an unfaithful one.
//!
//! Every case prints a line with its size and time (`-- --nocapture`), and with
//! `PARKSEMA_REPORT=FILE` appends a record to `FILE` for `cargo xtask verify`'s report
//! (`models/report.rs`).

#[path = "conformance/cases.rs"]
mod cases;
#[path = "conformance/harness.rs"]
mod harness;
#[path = "conformance/report.rs"]
mod report;

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

/// Runs the case `name` (whose body is `body`) against the real crate or the faithful model,
/// whichever this build is, at its size; prints the size and time and records them.
fn check(name: &str, body: fn()) {
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
        &format!("conformance {name}"),
        count,
        harness::UNIT,
        &detail,
        secs,
    );
}

/// One `#[test]` per case, each running [`check`] on the case of the same name.
macro_rules! conformance {
    ($($(#[$doc:meta])* $name:ident,)*) => {
        $(
            $(#[$doc])*
            #[test]
            fn $name() {
                check(stringify!($name), cases::$name);
            }
        )*
    };
}

conformance! {
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
}

/// The model's deliberately unfaithful variants, each run on the cases expected to catch it:
/// every one must fail there, with the violated property named.
#[cfg(all(feature = "unfaithful", any(feature = "loom", feature = "shuttle")))]
mod catches {
    use super::{cases, harness, report, size_of};
    use parkcheck::{Settings, Unfaithful};

    /// Runs the case `name` (body `body`) against the model variant `variant` at the case's
    /// size (loom stops at the first failing execution, shuttle at the first failing
    /// schedule), records the cell, and asserts that the run failed with a message containing
    /// `expected`.
    fn assert_caught(variant: Unfaithful, name: &str, body: fn(), expected: &str) {
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
            &format!("conformance {name}"),
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
    fn assert_passes(variant: Unfaithful, name: &str, body: fn()) {
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
            &format!("conformance {name}"),
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

    #[test]
    fn catches_lifo() {
        let v = Unfaithful::Lifo;
        assert_caught(v, "fifo_unpark_one", cases::fifo_unpark_one, "FIFO per key");
        assert_caught(
            v,
            "fifo_unpark_filter",
            cases::fifo_unpark_filter,
            "FIFO per key",
        );
        assert_caught(
            v,
            "filter_skip_and_stop",
            cases::filter_skip_and_stop,
            "the scan goes in park order",
        );
        assert_caught(
            v,
            "requeue_all",
            cases::requeue_all,
            "the threads already on it first, then the requeued ones in their order",
        );
    }

    #[test]
    fn catches_other_keys_count() {
        let v = Unfaithful::OtherKeysCount;
        let expected = "have_more_threads counts the same key only";
        assert_caught(
            v,
            "have_more_unpark_one",
            cases::have_more_unpark_one,
            expected,
        );
        assert_caught(
            v,
            "have_more_unpark_filter",
            cases::have_more_unpark_filter,
            expected,
        );
        assert_caught(
            v,
            "have_more_unpark_requeue",
            cases::have_more_unpark_requeue,
            expected,
        );
    }

    #[test]
    fn catches_callback_outside_lock() {
        let v = Unfaithful::CallbackOutsideLock;
        let expected = "callbacks run under the lock";
        assert_caught(
            v,
            "under_lock_unpark_one",
            cases::under_lock_unpark_one,
            expected,
        );
        assert_caught(
            v,
            "under_lock_unpark_filter",
            cases::under_lock_unpark_filter,
            expected,
        );
        assert_caught(
            v,
            "under_lock_unpark_requeue",
            cases::under_lock_unpark_requeue,
            expected,
        );
    }

    #[test]
    fn catches_timed_out_original_key() {
        assert_caught(
            Unfaithful::TimedOutOriginalKey,
            "timed_out_gets_current_key",
            cases::timed_out_gets_current_key,
            "timed_out gets the key it is parked on now",
        );
    }

    #[test]
    fn catches_spurious_return() {
        assert_caught(
            Unfaithful::SpuriousReturn,
            "no_spurious_returns",
            cases::no_spurious_returns,
            "no spurious returns",
        );
    }

    /// Each variant leaves the cases that cannot see it passing: `Lifo` those with one
    /// thread per key, `OtherKeysCount` those with one key, `CallbackOutsideLock` those
    /// with no thread calling into the table while a callback runs, `TimedOutOriginalKey`
    /// those with no requeued timed park, `SpuriousReturn` those with no thread queued.
    #[test]
    fn unrelated_cases_pass() {
        use Unfaithful::*;
        type Row = (Unfaithful, &'static str, fn());
        let rows: [Row; 10] = [
            (Lifo, "have_more_unpark_one", cases::have_more_unpark_one),
            (
                Lifo,
                "timed_out_gets_current_key",
                cases::timed_out_gets_current_key,
            ),
            (OtherKeysCount, "fifo_unpark_one", cases::fifo_unpark_one),
            (
                OtherKeysCount,
                "timed_out_not_last",
                cases::timed_out_not_last,
            ),
            (
                CallbackOutsideLock,
                "fifo_unpark_one",
                cases::fifo_unpark_one,
            ),
            (
                CallbackOutsideLock,
                "have_more_unpark_one",
                cases::have_more_unpark_one,
            ),
            (
                TimedOutOriginalKey,
                "timed_out_not_last",
                cases::timed_out_not_last,
            ),
            (
                TimedOutOriginalKey,
                "fifo_unpark_one",
                cases::fifo_unpark_one,
            ),
            (
                SpuriousReturn,
                "validate_false_is_invalid",
                cases::validate_false_is_invalid,
            ),
            (
                SpuriousReturn,
                "unpark_without_waiters",
                cases::unpark_without_waiters,
            ),
        ];
        for (variant, name, body) in rows {
            assert_passes(variant, name, body);
        }
    }
}
