//! `parking_lot_core` 0.9's API: the same park table as the crate root, with 0.9's types and
//! its one behaviour 0.10 dropped, `UnparkResult::be_fair`.
//!
//! parking_lot 0.12 and most primitives in the ecosystem are built on `parking_lot_core` 0.9.
//! A crate on 0.9 adopts this module as it would the crate root, by one import:
//!
//! ```
//! use parkcheck::v0_9 as parking_lot_core;
//! # let _ = parking_lot_core::DEFAULT_PARK_TOKEN;
//! ```
//!
//! Without a checker feature it is `parking_lot_core` 0.9 itself, re-exported unchanged
//! (with [`now`] and [`advance_clock`] on real time). Under a checker its functions are the
//! crate root's model, which every table operation goes through whichever API calls it, and
//! its types are 0.9's, so code that names or matches on them compiles unchanged.
//!
//! # `be_fair`
//!
//! In 0.9 each bucket has a timer, set when the table is created: an `unpark_one`,
//! `unpark_filter` or `unpark_requeue` that wakes a thread sets `be_fair` if the timer is
//! due, and then makes it due again at a random point 0 to 1 ms later (on average once
//! every 0.5 ms per bucket). `unpark_all` and the unparks that wake nobody do not consult it.
//! The model keeps one timer per bucket (per key, or one for all keys under
//! `Settings::one_bucket`) on the mocked clock. Its initial state is due: the real table's
//! timers start at the table's creation, which any later time has passed, so a bucket's first
//! waking unpark is fair there too. The mocked clock does not move unless a scenario moves
//! it, so after that the timer is due again only once [`advance_clock`] has moved it (1 ms is
//! always enough). `Settings::fair_timer` can make every such unpark fair or none, for
//! reaching both of a primitive's unlock paths under loom (see `FairTimer`).
//!
//! Where it departs from the real 0.9, each something `FairTimer::Always` or `Never` covers:
//!
//! - every timer is seeded alike (the real one seeds bucket `i` with `i + 1`, and which
//!   bucket a key falls in depends on its hash), so the model explores one sequence of waits:
//!   a clock move of under 1 ms after a fair unpark gives the same answer in every execution;
//! - the real table's growth (when more threads exist than it was sized for) gives every
//!   bucket a new timer, due at once; the model's timers are due again only when the clock
//!   moves;
//! - under `Timeouts::Clock`, a key's first waking unpark is always fair, unless
//!   `Settings::one_bucket` lets another key use the shared timer first; the real crate's
//!   first unpark on a key is not fair when another key of its bucket used the timer within
//!   the last millisecond.
//!
//! And one departure in the table itself: the 0.9 and 0.10 functions share the model's one
//! table, where the real crates have a table each. A key used through both APIs would share
//! one queue (no primitive does this: an object belongs to one crate), and under
//! `Settings::one_bucket` the keys of both APIs share one bucket lock (and so are ordered),
//! which the two real tables never do.

pub use parking_lot_core_0_9::{
    DEFAULT_PARK_TOKEN, DEFAULT_UNPARK_TOKEN, FilterOp, ParkResult, ParkToken, RequeueOp,
    UnparkResult, UnparkToken,
};

#[cfg(not(any(feature = "loom", feature = "shuttle")))]
pub use parking_lot_core_0_9::{
    SpinWait, deadlock, park, unpark_all, unpark_filter, unpark_one, unpark_requeue,
};

pub use crate::{advance_clock, const_fn, now, sync};

#[cfg(feature = "unfaithful")]
#[cfg(any(feature = "loom", feature = "shuttle"))]
pub use crate::Unfaithful;
#[cfg(any(feature = "loom", feature = "shuttle"))]
pub use crate::{
    FairTimer, KeyStats, SPINS, Settings, SpinWait, Timeouts, deadlock, elapsed, parked,
    parked_untracked, settings, stats, with_settings,
};

#[cfg(any(feature = "loom", feature = "shuttle"))]
pub use model::*;

#[cfg(any(feature = "loom", feature = "shuttle"))]
mod model {
    use std::time::Instant;

    use super::{FilterOp, ParkResult, ParkToken, RequeueOp, UnparkResult, UnparkToken};
    use crate::model::{Api, unpark_all_in, unpark_one_in, unpark_requeue_in, unpark_where};

    fn park_token(t: ParkToken) -> parking_lot_core::ParkToken {
        parking_lot_core::ParkToken(t.0)
    }

    fn unpark_token(t: parking_lot_core::UnparkToken) -> UnparkToken {
        UnparkToken(t.0)
    }

    fn unpark_token_back(t: UnparkToken) -> parking_lot_core::UnparkToken {
        parking_lot_core::UnparkToken(t.0)
    }

    fn filter_op(op: FilterOp) -> parking_lot_core::FilterOp {
        match op {
            FilterOp::Unpark => parking_lot_core::FilterOp::Unpark,
            FilterOp::Skip => parking_lot_core::FilterOp::Skip,
            FilterOp::Stop => parking_lot_core::FilterOp::Stop,
        }
    }

    fn requeue_op(op: RequeueOp) -> parking_lot_core::RequeueOp {
        use parking_lot_core::RequeueOp as R;
        match op {
            RequeueOp::Abort => R::Abort,
            RequeueOp::UnparkOneRequeueRest => R::UnparkOneRequeueRest,
            RequeueOp::RequeueAll => R::RequeueAll,
            RequeueOp::UnparkOne => R::UnparkOne,
            RequeueOp::RequeueOne => R::RequeueOne,
        }
    }

    fn requeue_op_back(op: parking_lot_core::RequeueOp) -> RequeueOp {
        use parking_lot_core::RequeueOp as R;
        match op {
            R::Abort => RequeueOp::Abort,
            R::UnparkOneRequeueRest => RequeueOp::UnparkOneRequeueRest,
            R::RequeueAll => RequeueOp::RequeueAll,
            R::UnparkOne => RequeueOp::UnparkOne,
            R::RequeueOne => RequeueOp::RequeueOne,
        }
    }

    /// 0.9's result: 0.10's fields and `be_fair` (the struct has a private field, so it is
    /// built from its default).
    fn result(r: parking_lot_core::UnparkResult, be_fair: bool) -> UnparkResult {
        let mut out = UnparkResult::default();
        out.unparked_threads = r.unparked_threads;
        out.requeued_threads = r.requeued_threads;
        out.have_more_threads = r.have_more_threads;
        out.be_fair = be_fair;
        out
    }

    /// `parking_lot_core` 0.9's `park`, on the modelled table: as the crate root's
    /// [`park`](crate::park).
    ///
    /// # Safety
    ///
    /// As `parking_lot_core::park` (0.9): `key` must be an address the caller controls;
    /// `validate` and `timed_out` run under the bucket lock and must not call into the table
    /// or unwind; `before_sleep` must not park or unwind (checked).
    #[track_caller]
    pub unsafe fn park(
        key: usize,
        validate: impl FnOnce() -> bool,
        before_sleep: impl FnOnce(),
        timed_out: impl FnOnce(usize, bool),
        token: ParkToken,
        timeout: Option<Instant>,
    ) -> ParkResult {
        // SAFETY: the caller's promises are the ones the crate root's `park` asks for.
        let r = unsafe {
            crate::park(
                key,
                validate,
                before_sleep,
                timed_out,
                park_token(token),
                timeout,
            )
        };
        match r {
            parking_lot_core::ParkResult::Unparked(t) => ParkResult::Unparked(unpark_token(t)),
            parking_lot_core::ParkResult::Invalid => ParkResult::Invalid,
            parking_lot_core::ParkResult::TimedOut => ParkResult::TimedOut,
        }
    }

    /// `parking_lot_core` 0.9's `unpark_one`, on the modelled table: as the crate root's
    /// [`unpark_one`](crate::unpark_one), with `be_fair` from the key's fair timer when a
    /// thread is woken.
    ///
    /// # Safety
    ///
    /// As `parking_lot_core::unpark_one` (0.9): `callback` runs under the table lock and must
    /// not call into the table or unwind (checked).
    pub unsafe fn unpark_one(
        key: usize,
        callback: impl FnOnce(UnparkResult) -> UnparkToken,
    ) -> UnparkResult {
        let (r, fair) = unpark_one_in(Api::V0_9, key, |r, fair| {
            unpark_token_back(callback(result(r, fair)))
        });
        result(r, fair)
    }

    /// `parking_lot_core` 0.9's `unpark_all`, on the modelled table: as the crate root's
    /// [`unpark_all`](crate::unpark_all) (it does not consult the fair timer).
    ///
    /// # Safety
    ///
    /// As `parking_lot_core::unpark_all` (0.9): `key` must be an address the caller controls.
    pub unsafe fn unpark_all(key: usize, token: UnparkToken) -> usize {
        unpark_all_in(Api::V0_9, key, unpark_token_back(token))
    }

    /// `parking_lot_core` 0.9's `unpark_filter`, on the modelled table: as the crate root's
    /// [`unpark_filter`](crate::unpark_filter), with `be_fair` from the key's fair timer when
    /// a thread is woken.
    ///
    /// # Safety
    ///
    /// As `parking_lot_core::unpark_filter` (0.9): `filter` and `callback` run under the table
    /// lock and must not call into the table or unwind (checked).
    pub unsafe fn unpark_filter(
        key: usize,
        mut filter: impl FnMut(ParkToken) -> FilterOp,
        callback: impl FnOnce(UnparkResult) -> UnparkToken,
    ) -> UnparkResult {
        let choose = |t: parking_lot_core::ParkToken| filter_op(filter(ParkToken(t.0)));
        let (r, fair) = unpark_where("unpark_filter", key, Api::V0_9, choose, |r, fair| {
            unpark_token_back(callback(result(r, fair)))
        });
        result(r, fair)
    }

    /// `parking_lot_core` 0.9's `unpark_requeue`, on the modelled table: as the crate root's
    /// [`unpark_requeue`](crate::unpark_requeue), with `be_fair` from `key_from`'s fair timer
    /// when a thread is woken.
    ///
    /// # Safety
    ///
    /// As `parking_lot_core::unpark_requeue` (0.9): `validate` and `callback` run under the
    /// bucket locks and must not call into the table or unwind (checked).
    pub unsafe fn unpark_requeue(
        key_from: usize,
        key_to: usize,
        validate: impl FnOnce() -> RequeueOp,
        callback: impl FnOnce(RequeueOp, UnparkResult) -> UnparkToken,
    ) -> UnparkResult {
        let validate = || requeue_op(validate());
        let callback =
            |op, r, fair| unpark_token_back(callback(requeue_op_back(op), result(r, fair)));
        let (r, fair) = unpark_requeue_in(Api::V0_9, key_from, key_to, validate, callback);
        result(r, fair)
    }
}
