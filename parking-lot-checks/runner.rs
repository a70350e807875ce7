// The runner of the models, shared by both versions' `tests/models.rs`: each model at its
// size, with its executions (loom) or schedules (shuttle) and time printed.

use std::cell::Cell as StdCell;

std::thread_local! {
    static STARTED: StdCell<u64> = const { StdCell::new(0) };
}

/// Runs `body` under this build's checker, once with each of the version's park-table
/// settings (`crate::SETTINGS`: for 0.12, each fair timer, so both of its unlock paths are
/// reached).
pub(crate) fn check(name: &str, bound: Option<usize>, schedules: usize, body: fn()) {
    for &(what, settings) in crate::SETTINGS {
        parkcheck::with_settings(settings, || check_one(name, what, bound, schedules, body));
    }
}

/// Runs `body` under a deliberate flaw (`flaw` wraps the run: the relaxed atomics, or an
/// unfaithful park table) and returns the failure's message, `None` if every execution or
/// schedule passed.
#[allow(dead_code, reason = "the lock models' catches use it, under loom only")]
pub(crate) fn failure_under(
    name: &str,
    bound: Option<usize>,
    schedules: usize,
    body: fn(),
    flaw: impl FnOnce(&mut dyn FnMut()),
) -> Option<String> {
    let mut outcome = None;
    flaw(&mut || {
        let run = std::panic::catch_unwind(|| check_one(name, "flawed", bound, schedules, body));
        outcome = Some(run.err().map(|p| {
            p.downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_string()))
                .unwrap_or_default()
        }));
    });
    outcome.expect("the flaw runs the model")
}

/// Runs `body` under this build's checker: loom with `bound` preemptions (`None`:
/// unbounded), or shuttle's random and PCT (depth 3) schedulers, `schedules` each. Prints
/// the model's size and time.
fn check_one(name: &str, what: &str, bound: Option<usize>, schedules: usize, body: fn()) {
    STARTED.with(|s| s.set(0));
    let start = std::time::Instant::now();
    let counted = move || {
        STARTED.with(|s| s.set(s.get() + 1));
        body();
    };
    #[cfg(feature = "loom")]
    {
        let _ = schedules;
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = bound;
        builder.check(counted);
    }
    #[cfg(all(feature = "shuttle", not(feature = "loom")))]
    {
        let _ = bound;
        shuttle::check_random(counted, schedules);
        shuttle::check_pct(counted, schedules, 3);
    }
    let (unit, detail) = if cfg!(feature = "loom") {
        (
            "executions",
            bound.map_or("unbounded".to_string(), |b| format!("bound {b}")),
        )
    } else {
        ("schedules", format!("{schedules} random + {schedules} PCT"))
    };
    println!(
        "{} {name} ({what}): {detail}, {} {unit}, {:.2} s",
        crate::VERSION,
        STARTED.with(StdCell::get),
        start.elapsed().as_secs_f64()
    );
}
