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

/// The recursive-read model, whose recursive read each version's `tests/models.rs` supplies.
#[test]
fn rwlock_recursive_read_passes_a_waiting_writer() {
    runner::check(
        "rwlock_recursive_read_passes_a_waiting_writer",
        Some(3),
        SCHEDULES,
        crate::recursive_read,
    );
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

/// The flaws loom reports by aborting the process (a deadlock: every thread blocked), each
/// caught in a child process of this test binary: a plain read where the recursive-read
/// model needs a recursive one, and `condvar_notify_one` with relaxed atomics (a lost
/// wakeup).
#[cfg(feature = "loom")]
mod deadlock_catches {
    use super::{models, runner};

    /// The variable that tells the child which flawed model to run.
    const FLAWED: &str = "PARKING_LOT_CHECKS_FLAWED";

    /// The child: runs the flawed model `FLAWED` names (only when spawned by the parent).
    #[test]
    #[ignore = "run by `deadlocks_are_caught` in a child process"]
    fn flawed_child() {
        let which = std::env::var(FLAWED).expect("spawned by deadlocks_are_caught");
        match which.as_str() {
            "plain_read" => runner::check(
                "rwlock_recursive_read_made_plain",
                Some(3),
                super::SCHEDULES,
                crate::rwlock_recursive_read_made_plain,
            ),
            "relaxed_notify_one" => crate::pl::with_relaxed_orderings(|| {
                runner::check(
                    "condvar_notify_one",
                    Some(3),
                    super::SCHEDULES,
                    models::condvar_notify_one,
                )
            }),
            other => panic!("no flawed model {other:?}"),
        }
    }

    #[test]
    fn deadlocks_are_caught() {
        let exe = std::env::current_exe().expect("the test binary");
        for which in ["plain_read", "relaxed_notify_one"] {
            let out = std::process::Command::new(&exe)
                .args([
                    "--exact",
                    "deadlock_catches::flawed_child",
                    "--ignored",
                    "--nocapture",
                    "--test-threads",
                    "1",
                ])
                .env(FLAWED, which)
                .env("RUST_BACKTRACE", "0")
                .output()
                .expect("the child runs");
            let text = String::from_utf8_lossy(&out.stderr).into_owned()
                + &String::from_utf8_lossy(&out.stdout);
            assert!(
                !out.status.success() && text.contains("deadlock"),
                "{which}: the flawed model was not caught as a deadlock (exit {:?}):\n{}",
                out.status.code(),
                text.chars().take(2000).collect::<String>()
            );
            println!("{which}: caught as loom's deadlock report (exit {:?})", out.status.code());
        }
    }
}
