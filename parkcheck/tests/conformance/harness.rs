//! The harness: the three backends a case runs on (OS threads against the real crate, loom,
//! shuttle), chosen by cfg, and the two things a case needs that differ between real threads
//! and a checker: a bounded wait for other threads, and a pause inside a callback.

use std::time::Instant;

use parkcheck::sync::atomic::{AtomicUsize, Ordering};
use parkcheck::sync::thread;

/// The build this binary is, as the report names it.
pub(crate) const BUILD: &str = if cfg!(feature = "loom") {
    "loom"
} else if cfg!(feature = "shuttle") {
    "shuttle"
} else {
    "real"
};

/// The unit the report counts a case's size in, in this build.
pub(crate) const UNIT: &str = if cfg!(feature = "loom") {
    "executions"
} else if cfg!(feature = "shuttle") {
    "schedules"
} else {
    "runs"
};

/// How big one case is in each build (the reasons and measured costs are next to each case in
/// `SIZES`, in `conformance.rs`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sizes {
    /// Loom's preemption bound (`None`: unbounded, every interleaving).
    pub(crate) loom_bound: Option<usize>,
    /// Runs on OS threads against the real crate.
    #[cfg_attr(
        any(feature = "loom", feature = "shuttle"),
        allow(dead_code, reason = "read in the real build")
    )]
    pub(crate) runs: usize,
    /// Shuttle schedules per scheduler (random, then PCT with depth 3).
    pub(crate) schedules: usize,
}

/// What a size is, in words, for the report and the printed line.
pub(crate) fn detail(sizes: Sizes) -> String {
    if cfg!(feature = "loom") {
        match sizes.loom_bound {
            Some(b) => format!("bound {b}"),
            None => "unbounded".to_string(),
        }
    } else if cfg!(feature = "shuttle") {
        format!(
            "{} random + {} PCT (depth 3)",
            sizes.schedules, sizes.schedules
        )
    } else {
        "OS threads".to_string()
    }
}

std::thread_local! {
    /// The executions, schedules or runs of `body` the current [`run`] has started. Loom and
    /// shuttle run every model thread on the OS thread that called them, so this counts one
    /// run's executions only, also when it ends in a failure.
    static STARTED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Counts one more execution of the running [`run`].
fn started() {
    STARTED.with(|s| s.set(s.get() + 1));
}

/// How many executions, schedules or runs the last [`run`] on this thread started (with a
/// failure, the failing one included).
pub(crate) fn runs_started() -> u64 {
    STARTED.with(std::cell::Cell::get)
}

/// A number in `0..n` for a case to vary its real-thread timing by: on real threads it
/// changes from run to run (the run's index, modulo `n`); under a checker it is `n / 2` in
/// every execution, as a checker needs every execution to take the same decisions given the
/// same schedule.
pub(crate) fn vary(n: u64) -> u64 {
    if cfg!(any(feature = "loom", feature = "shuttle")) {
        n / 2
    } else {
        runs_started() % n
    }
}

/// Runs `body` in this build's backend at `sizes` and returns how many executions, schedules
/// or runs that was. A failure panics with the case's own message (loom and shuttle resume
/// the failing thread's panic; on real threads it is the panic itself).
pub(crate) fn run(sizes: Sizes, body: fn()) -> u64 {
    STARTED.with(|s| s.set(0));
    #[cfg(feature = "loom")]
    {
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = sizes.loom_bound;
        builder.check(move || {
            started();
            body();
        });
    }
    #[cfg(all(feature = "shuttle", not(feature = "loom")))]
    {
        let counted = move || {
            started();
            body();
        };
        shuttle::check_random(counted, sizes.schedules);
        shuttle::check_pct(counted, sizes.schedules, 3);
    }
    #[cfg(not(any(feature = "loom", feature = "shuttle")))]
    for _ in 0..sizes.runs {
        started();
        body();
    }
    runs_started()
}

/// The text of a panic payload (empty if it is neither a `String` nor a `&str`), for the
/// catches.
#[cfg(any(feature = "loom", feature = "shuttle"))]
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_string()))
        .unwrap_or_default()
}

/// How long a wait for another thread may take on real threads before it is a failure: far
/// more than a thread needs to reach the park table on a loaded machine, so it only fires
/// on a bug (a thread that never parks), and a bug never hangs the suite.
const REAL_WAIT_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

/// How many yields a wait may take under a checker before it is a failure. Both checkers run
/// a yielding thread again only after another has moved, so a wait takes at most as many
/// yields as the other threads take steps: a few dozen here.
const MODEL_WAIT_LIMIT: u64 = 10_000;

/// Waits, yielding to the other threads (the checker's `yield_now` under a checker), until
/// `counter` reaches `n`; `what` says what the wait is for, in the panic that ends a wait that
/// never ends.
pub(crate) fn wait_for(counter: &AtomicUsize, n: usize, what: &str) {
    let start = Instant::now();
    let mut yields = 0u64;
    while counter.load(Ordering::SeqCst) < n {
        if cfg!(any(feature = "loom", feature = "shuttle")) {
            yields += 1;
            assert!(
                yields < MODEL_WAIT_LIMIT,
                "harness: still waiting for {what} after {yields} yields"
            );
        } else {
            assert!(
                start.elapsed() < REAL_WAIT_LIMIT,
                "harness: still waiting for {what} after {REAL_WAIT_LIMIT:?}"
            );
        }
        thread::yield_now();
    }
}

/// A pause inside a callback, long enough for another thread to act during it if it can: on
/// real threads a 1 ms spin (thousands of lock attempts by a thread looping on the table);
/// under a checker two yields (each a point where the checker may run another thread; the
/// atomic stores around the pause are such points too).
pub(crate) fn pause() {
    if cfg!(any(feature = "loom", feature = "shuttle")) {
        thread::yield_now();
        thread::yield_now();
    } else {
        let start = Instant::now();
        while start.elapsed() < std::time::Duration::from_millis(1) {
            std::hint::spin_loop();
        }
    }
}
