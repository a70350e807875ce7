//! Deliberate flaws, compiled in by the `broken_condvar` feature.
//!
//! Each flaw is selected per object by a hidden constructor (`Mutex::with_flaw(value,
//! Some(flaw))` for [`Flaw::RelaxedUnlock`], `Condvar::with_flaw(Some(flaw))` for the others;
//! a flaw given to the other kind of object does nothing), so one test binary runs every check
//! against the correct primitives (which must pass) and against each flaw (which must be
//! caught, with the violated property named). A flaw that no check catches is a defect of the
//! suite. The README's matrix says which check catches which flaw, and how fast.

/// A deliberate flaw in the mutex's or the condition variable's protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Flaw {
    /// `notify_all` requeues the waiters onto the mutex without setting the mutex's `PARKED`
    /// bit (neither in `validate` when the mutex is locked nor in the callback when it is
    /// not). The holder's unlock then takes the fast path and unparks nobody: the requeued
    /// waiters sleep on the mutex's key forever, with the mutex free (a lost wakeup).
    ///
    /// Caught by: loom's deadlock report in the models `notify_all_requeue` and
    /// `notify_all_after_unlock` (where the one woken waiter unlocks by the fast path past
    /// the other, requeued one); shuttle's deadlock report in `notify_all_rounds`; on real
    /// threads a watchdog stall of `notify_all_rounds` (in a child process), in its first
    /// round.
    RequeueWithoutParkedBit,

    /// `wait` unlocks the mutex before it calls `park`, instead of in `park`'s `before_sleep`
    /// (after the thread is queued and the condition variable is bound to the mutex). A
    /// notifier that takes the mutex in the gap, changes the condition and notifies finds no
    /// waiter (`notify_one` returns `false`); the waiter then parks on a condition that is
    /// already true, and nobody is left to wake it (a lost wakeup).
    ///
    /// On real threads the waiter yields the CPU in the gap (`unlock_before_park_gap`), so
    /// that the notifier lands in it early in a run even when other processes compete for
    /// the cores.
    ///
    /// Caught by: loom's deadlock report in the models `notify_one_predicate` and
    /// `ping_pong_two_turns`; shuttle's deadlock report in `ping_pong`; on real threads a
    /// watchdog stall of `ping_pong` (in a child process, up to five tries), in the first
    /// try of every run measured (`condvar/tests/stress.rs` has the counts).
    UnlockBeforePark,

    /// The wait's `timed_out` callback ignores the key it is given: a wait that `notify_all`
    /// had requeued onto the mutex and whose deadline then passed while it was parked there
    /// is reported as timed out (though `notify_all` counted it as woken), and, being the last
    /// thread on the mutex's key, clears the condition variable's state (which may belong to
    /// waiters that came since).
    ///
    /// Caught by: the timed-wait scenario's count check ("timeout after requeue: the
    /// notifications counted N waits, but only M reported one") in loom
    /// (`timed_wait_races_notify_all` under `Timeouts::CheckerChooses`,
    /// `timed_wait_requeued_times_out` with the notifier moving the mocked clock), shuttle
    /// (both kinds), and real threads (`timed_wait_requeued_past_deadline`, where the
    /// notifier holds the mutex past the requeued waits' deadline).
    TimeoutIgnoresRequeue,

    /// The mutex's unlock fast path (`LOCKED` to unlocked) uses `Relaxed` instead of
    /// `Release`: the lock stays exclusive, but the next holder is no longer ordered after the
    /// previous holder's writes to the protected value.
    ///
    /// Caught by: loom's model `mutual_exclusion` (a causality violation on the mutex's data
    /// cell). Shuttle cannot see it (it runs every atomic as `SeqCst`), nor can real threads
    /// on x86-64 (every locked read-modify-write is a full barrier there).
    RelaxedUnlock,
}

/// The gap of [`Flaw::UnlockBeforePark`], between the waiter's early unlock and its `park`
/// (whose `validate` queues it). On real threads it yields the CPU, so that the notifier,
/// which the unlock freed or woke, takes the mutex and notifies inside the gap often enough
/// for the real-thread check to see the lost wake-up in its first try even on a busy
/// two-core machine. Without the yield the gap is a few instructions wide: beside two busy
/// processes the check missed (in all five tries) in 3 of 20 debug-build runs and in 20 of
/// 20 release-build runs; with it, it caught in the first try in every run
/// (`condvar/tests/stress.rs` has the counts).
///
/// Under the model checkers it does nothing: they already schedule the notifier into the gap
/// (the unlock's atomics and the park's bucket lock are scheduling points), and an extra
/// yield there would only change the interleavings they explore and the counts the README
/// records.
#[cfg(not(any(feature = "loom", feature = "shuttle")))]
pub(crate) fn unlock_before_park_gap() {
    std::thread::yield_now();
}

/// The gap of [`Flaw::UnlockBeforePark`] under the model checkers: nothing (see the real
/// build's).
#[cfg(any(feature = "loom", feature = "shuttle"))]
pub(crate) fn unlock_before_park_gap() {}
