//! The conformance suite against `parking_lot_core` 0.9 (`parkcheck::v0_9`): the cases of
//! `conformance.rs`, written once (`conformance/cases.rs`), run against the real 0.9 on OS
//! threads and against the model through its 0.9 API under loom and under shuttle, and the
//! cases of the one behaviour 0.9 has and 0.10 dropped, `UnparkResult::be_fair`
//! (`conformance/fair.rs`):
//!
//! - `cargo test -p parkcheck --test conformance_0_9`: the real 0.9, each case repeated;
//! - `cargo test -p parkcheck --test conformance_0_9 --features loom` (or `shuttle`): the
//!   model.
//!
//! The happens-before cases (`edge_*`) are `conformance.rs`'s only: both APIs are one model,
//! and the 0.9 functions add no checker operation to it. With `unfaithful`, the `catches`
//! tests run the fair timer's unfaithful variants against the cases that must see them.

#[path = "conformance/cases.rs"]
mod cases;
#[path = "conformance/fair.rs"]
mod fair;
#[path = "conformance/harness.rs"]
mod harness;
use watchdog::report;

/// The API the cases call: `parking_lot_core` 0.9's.
use parkcheck::v0_9 as api;

/// The prefix of this suite's records in `cargo xtask verify`'s report.
const SUITE: &str = "conformance-0.9";

/// Whether the cases run one at a time on real threads: yes, since a case's fair unparks
/// use up the timer of their bucket, which another case's keys may share.
#[cfg_attr(
    any(feature = "loom", feature = "shuttle"),
    allow(dead_code, reason = "read on real threads")
)]
const ONE_CASE_AT_A_TIME: bool = true;

include!("conformance/suite.rs");

conformance! {
    fair:
    /// 0.9. Only an unpark that wakes a thread consults the fair timer.
    fair_only_when_waking,
    /// 0.9. A waking `unpark_one`, `unpark_filter`, `unpark_requeue` is fair once due.
    fair_once_due,
    /// 0.9. `unpark_all` does not use up the fair timer.
    fair_unpark_all_leaves_the_timer,
}

/// The model's own fair-timer cases: its initial state and its re-arming, which a real run
/// cannot isolate (see `conformance/fair.rs`).
#[cfg(any(feature = "loom", feature = "shuttle"))]
mod model_only {
    use super::{check, fair};

    #[test]
    fn fair_timer_starts_due() {
        check("fair_timer_starts_due", fair::fair_timer_starts_due);
    }

    #[test]
    fn fair_timer_rearms() {
        check("fair_timer_rearms", fair::fair_timer_rearms);
    }

    #[test]
    fn fair_requeue_uses_the_from_key() {
        check(
            "fair_requeue_uses_the_from_key",
            fair::fair_requeue_uses_the_from_key,
        );
    }
}

/// The fair timer's unfaithful variants, each caught by the cases that must see it, and left
/// alone by one that cannot.
#[cfg(all(feature = "unfaithful", any(feature = "loom", feature = "shuttle")))]
mod catches {
    use super::{cases, fair};
    use crate::variants::{assert_caught, assert_passes};
    use parkcheck::Unfaithful;

    #[test]
    fn catches_never_fair() {
        let v = Unfaithful::NeverFair;
        assert_caught(
            v,
            "fair_once_due",
            fair::fair_once_due,
            "a waking unpark is fair once its bucket's timer is due",
        );
        assert_caught(
            v,
            "fair_only_when_waking",
            fair::fair_only_when_waking,
            "only an unpark that wakes a thread consults the fair timer",
        );
    }

    #[test]
    fn catches_fair_without_waking() {
        assert_caught(
            Unfaithful::FairWithoutWaking,
            "fair_only_when_waking",
            fair::fair_only_when_waking,
            "only an unpark that wakes a thread consults the fair timer",
        );
    }

    #[test]
    fn catches_unpark_all_consults_timer() {
        assert_caught(
            Unfaithful::UnparkAllConsultsTimer,
            "fair_unpark_all_leaves_the_timer",
            fair::fair_unpark_all_leaves_the_timer,
            "unpark_all does not use up the fair timer",
        );
    }

    #[test]
    fn catches_fair_timer_starts_idle() {
        assert_caught(
            Unfaithful::FairTimerStartsIdle,
            "fair_timer_starts_due",
            fair::fair_timer_starts_due,
            "a bucket's fair timer starts due",
        );
    }

    #[test]
    fn catches_fair_timer_never_rearms() {
        assert_caught(
            Unfaithful::FairTimerNeverRearms,
            "fair_timer_rearms",
            fair::fair_timer_rearms,
            "a fair unpark makes the timer due again only later",
        );
    }

    /// The fair-timer variants leave the cases that do not read `be_fair` passing (each the
    /// FIFO case), and the starting state is all that `FairTimerStartsIdle` changes, so the
    /// cases that move the clock first pass under it.
    #[test]
    fn unrelated_cases_pass() {
        use Unfaithful::*;
        for v in [
            NeverFair,
            FairTimerStartsIdle,
            FairTimerNeverRearms,
            FairWithoutWaking,
            UnparkAllConsultsTimer,
        ] {
            assert_passes(v, "fifo_unpark_one", cases::fifo_unpark_one);
        }
        assert_passes(FairTimerStartsIdle, "fair_once_due", fair::fair_once_due);
    }
}
