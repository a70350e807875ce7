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
}
