// The `#[test]`s of both versions' `tests/models.rs`: one per model, at its size.
//
// Sizes: loom at preemption bound 3, where every interleaving within it finishes in
// seconds in the test profile (the bounds and counts are printed by each run and listed in
// parkcheck's README); shuttle at 1 000 random and 1 000 PCT schedules.

/// Shuttle's schedules per scheduler.
const SCHEDULES: usize = 1000;

macro_rules! models {
    ($($name:ident: $bound:expr,)*) => {
        $(
            #[test]
            fn $name() {
                runner::check(stringify!($name), $bound, SCHEDULES, models::$name);
            }
        )*
    };
}

models! {
    mutex_exclusion: Some(3),
    unlock_fair_hands_over: Some(3),
    fair_mutex_hands_over: Some(3),
    try_lock_for_takes_nothing: Some(3),
    rwlock_writer_exclusion: Some(3),
    rwlock_upgradable_exclusive: Some(3),
    condvar_notify_all_requeue: Some(3),
    condvar_notify_one: Some(3),
    once_runs_once: Some(3),
    rwlock_timed_read_takes_nothing: Some(3),
    rwlock_recursive_read_passes_a_waiting_writer: Some(3),
    condvar_wait_for_returns_with_the_lock: Some(3),
}

/// Each model is shown to catch a flaw (loom only: shuttle models no memory ordering, and
/// each catch is loom's race report on the model's plain cell): with every atomic of the
/// checked code `Relaxed` (`with_relaxed_orderings`), the models whose cell the lock's own
/// orderings protect; with a park table whose wake-up orders nothing (parkcheck's
/// `NoWakeEdge`), the handoff models, where only the table orders the holder before the
/// thread it hands the lock to.
#[cfg(feature = "loom")]
mod catches {
    use super::{models, runner};

    /// Loom's report of two unordered accesses to a plain cell.
    const RACE: &str = "Causality violation";

    fn assert_race(name: &str, body: fn(), flaw: impl FnOnce(&mut dyn FnMut())) {
        let failure = runner::failure_under(name, Some(3), super::SCHEDULES, body, flaw);
        assert!(
            failure.as_deref().is_some_and(|m| m.contains(RACE)),
            "{name}: the flaw was not caught as a race: {failure:?}"
        );
    }

    #[test]
    fn relaxed_atomics_are_caught() {
        for (name, body) in [
            ("mutex_exclusion", models::mutex_exclusion as fn()),
            ("try_lock_for_takes_nothing", models::try_lock_for_takes_nothing),
            ("rwlock_writer_exclusion", models::rwlock_writer_exclusion),
            ("rwlock_upgradable_exclusive", models::rwlock_upgradable_exclusive),
            ("condvar_notify_all_requeue", models::condvar_notify_all_requeue),
            // Not `condvar_notify_one`: relaxed, its first failing execution is a lost wakeup,
            // which loom reports by aborting the process, not as a race.
            ("once_runs_once", models::once_runs_once),
            (
                "rwlock_timed_read_takes_nothing",
                models::rwlock_timed_read_takes_nothing,
            ),
            (
                "condvar_wait_for_returns_with_the_lock",
                models::condvar_wait_for_returns_with_the_lock,
            ),
        ] {
            assert_race(name, body, |run| crate::pl::with_relaxed_orderings(run));
        }
    }

    #[cfg(feature = "unfaithful")]
    #[test]
    fn a_wake_that_orders_nothing_is_caught() {
        let mut settings = parkcheck::Settings::DEFAULT;
        settings.unfaithful = Some(parkcheck::Unfaithful::NoWakeEdge);
        for (name, body) in [
            ("unlock_fair_hands_over", models::unlock_fair_hands_over as fn()),
            ("fair_mutex_hands_over", models::fair_mutex_hands_over),
        ] {
            assert_race(name, body, |run| parkcheck::with_settings(settings, run));
        }
    }
}
