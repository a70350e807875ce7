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
//! (`watchdog::report`).

#[path = "conformance/cases.rs"]
mod cases;
#[cfg(feature = "loom")]
#[path = "conformance/edges.rs"]
mod edges;
#[path = "conformance/harness.rs"]
mod harness;
use watchdog::report;

/// The API the cases call: `parking_lot_core` 0.10's (the crate root).
use parkcheck as api;

/// The prefix of this suite's records in `cargo xtask verify`'s report.
const SUITE: &str = "conformance";

/// Whether the cases run one at a time on real threads: no need, 0.10 has no state that
/// one case's unparks could change under another's.
#[cfg_attr(
    any(feature = "loom", feature = "shuttle"),
    allow(dead_code, reason = "read on real threads")
)]
const ONE_CASE_AT_A_TIME: bool = false;

include!("conformance/suite.rs");

/// Loom's report of two unordered accesses to a plain cell.
#[cfg(feature = "loom")]
const RACE: &str = "Causality violation";

/// Runs `clock_moves_are_explored` (loom only) at its size, records it, and returns the
/// orders of a clock move, a timeout and an unpark that no execution reached.
#[cfg(feature = "loom")]
fn clock_orders_missing(record: bool) -> Vec<&'static str> {
    let name = "clock_moves_are_explored";
    edges::reset_reached();
    if record {
        check(name, edges::clock_moves_are_explored);
    } else {
        harness::run(size_of(name), edges::clock_moves_are_explored);
    }
    let reached = edges::reached();
    [
        (edges::UNPARKED, "unparked"),
        (
            edges::TIMED_OUT_FIRST,
            "timed out between queueing and the unparker's look",
        ),
        (edges::QUEUED_AFTER, "queued after the unparker's look"),
    ]
    .into_iter()
    .filter(|&(bit, _)| reached & bit == 0)
    .map(|(_, what)| what)
    .collect()
}

/// Section 13, the edges (loom only, `conformance/edges.rs`): each edge the real crate gives
/// is there (no race in any execution), each it does not give is not (loom reports the race).
#[cfg(feature = "loom")]
mod edge_checks {
    use super::{RACE, check, check_fails_with, edges};

    #[test]
    fn edge_from_waker_to_woken() {
        check("edge_from_waker_to_woken", edges::edge_from_waker_to_woken);
    }

    #[test]
    fn edge_none_between_keys() {
        check_fails_with(
            "edge_none_between_keys",
            edges::edge_none_between_keys,
            RACE,
        );
    }

    #[test]
    fn edge_none_from_the_first_user() {
        check_fails_with(
            "edge_none_from_the_first_user",
            edges::edge_none_from_the_first_user,
            RACE,
        );
    }

    #[test]
    fn clock_moves_are_explored() {
        let missing = super::clock_orders_missing(true);
        assert!(
            missing.is_empty(),
            "clock_moves_are_explored: loom never reached {missing:?}: it does not explore \
             where a clock move falls"
        );
    }

    #[test]
    fn edge_none_into_before_sleep() {
        check_fails_with(
            "edge_none_into_before_sleep",
            edges::edge_none_into_before_sleep,
            RACE,
        );
    }
}

/// The model's deliberately unfaithful variants, each run on the cases expected to catch it:
/// every one must fail there, with the violated property named.
#[cfg(all(feature = "unfaithful", any(feature = "loom", feature = "shuttle")))]
mod catches {
    use super::{cases, harness};
    use crate::variants::{assert_caught, assert_failure_missed, assert_passes};
    use parkcheck::{Settings, Unfaithful};

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

    #[test]
    fn catches_callback_marker_reset() {
        assert_failure_missed(
            Unfaithful::CallbackMarkerReset,
            "contract_park_after_an_unpark_in_before_sleep",
            cases::contract_park_after_an_unpark_in_before_sleep,
            super::CONTRACT_PARK,
        );
    }

    #[test]
    fn catches_before_sleep_under_lock() {
        assert_caught(
            Unfaithful::BeforeSleepUnderLock,
            "before_sleep_unparks_its_own_key",
            cases::before_sleep_unparks_its_own_key,
            "would deadlock here",
        );
    }

    /// The checker-chosen timeouts time out before the deadline by design: the case that
    /// checks the clock-driven ones fails under them.
    #[test]
    fn checker_chosen_timeouts_fail_no_timeout_before_the_deadline() {
        let mut settings = Settings::default();
        settings.timeouts = parkcheck::Timeouts::CheckerChooses;
        let name = "no_timeout_before_the_deadline";
        let (message, count, secs) = parkcheck::with_settings(settings, || {
            super::outcome(name, cases::no_timeout_before_the_deadline)
        });
        let expected = "no timeout before the deadline";
        assert!(
            message.as_deref().is_some_and(|m| m.contains(expected)),
            "{name} under Timeouts::CheckerChooses: expected {expected:?}, got {message:?}"
        );
        println!(
            "{name} fails under Timeouts::CheckerChooses as it must, after {count} {},              {secs:.2} s",
            harness::UNIT
        );
    }

    /// A clock the checker does not see moving leaves an order of a timeout and an unpark
    /// unexplored.
    #[cfg(feature = "loom")]
    #[test]
    fn catches_clock_unseen() {
        let variant = Unfaithful::ClockUnseen;
        let mut settings = Settings::default();
        settings.unfaithful = Some(variant);
        let start = std::time::Instant::now();
        let missing = parkcheck::with_settings(settings, || super::clock_orders_missing(false));
        let secs = start.elapsed().as_secs_f64();
        let caught = format!("never reached {missing:?}");
        super::report::cell(
            harness::BUILD,
            "conformance clock_moves_are_explored",
            &format!("model {variant:?}"),
            (!missing.is_empty()).then_some(caught.as_str()),
            secs,
        );
        assert!(
            !missing.is_empty(),
            "{variant:?} was not caught by loom clock_moves_are_explored: every order was reached"
        );
        println!("caught {variant:?} in loom clock_moves_are_explored: {caught}, {secs:.2} s");
    }

    /// The variants that add a happens-before edge hide the race their `edge_none_*` case
    /// must see; the one that removes the wake's edge makes `edge_from_waker_to_woken` race.
    #[cfg(feature = "loom")]
    #[test]
    fn catches_edges_the_real_crate_lacks() {
        use super::{RACE, edges};
        assert_failure_missed(
            Unfaithful::OneLockForAllKeys,
            "edge_none_between_keys",
            edges::edge_none_between_keys,
            RACE,
        );
        assert_failure_missed(
            Unfaithful::TableInLazyStatic,
            "edge_none_from_the_first_user",
            edges::edge_none_from_the_first_user,
            RACE,
        );
        assert_failure_missed(
            Unfaithful::WakeJoinsAtOnce,
            "edge_none_into_before_sleep",
            edges::edge_none_into_before_sleep,
            RACE,
        );
        assert_caught(
            Unfaithful::NoWakeEdge,
            "edge_from_waker_to_woken",
            edges::edge_from_waker_to_woken,
            RACE,
        );
    }

    /// Each variant leaves the cases that cannot see it passing: `Lifo` those with one
    /// thread per key, `OtherKeysCount` those with one key, `CallbackOutsideLock` those
    /// with no thread calling into the table while a callback runs, `TimedOutOriginalKey`
    /// those with no requeued timed park, `SpuriousReturn` those with no thread queued, the
    /// edge variants those with no plain cell, `CallbackMarkerReset` those that break no
    /// rule, `BeforeSleepUnderLock` those whose `before_sleep` does not call the table.
    #[test]
    fn unrelated_cases_pass() {
        use Unfaithful::*;
        type Row = (Unfaithful, &'static str, fn());
        let rows: &[Row] = &[
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
            (OneLockForAllKeys, "requeue_all", cases::requeue_all),
            (ClockUnseen, "fifo_unpark_one", cases::fifo_unpark_one),
            (WakeJoinsAtOnce, "fifo_unpark_one", cases::fifo_unpark_one),
            (
                CallbackMarkerReset,
                "before_sleep_unparks_its_own_key",
                cases::before_sleep_unparks_its_own_key,
            ),
            (
                NoWakeEdge,
                "validate_false_is_invalid",
                cases::validate_false_is_invalid,
            ),
            (
                BeforeSleepUnderLock,
                "validate_false_is_invalid",
                cases::validate_false_is_invalid,
            ),
            (TableInLazyStatic, "fifo_unpark_one", cases::fifo_unpark_one),
        ];
        for &(variant, name, body) in rows {
            assert_passes(variant, name, body);
        }
    }
}
