//! The shared scenarios of `models/scenarios/` (a file per group) in process, on real std threads, for the
//! checkers of the real build that watch the program from inside: Miri and ThreadSanitizer.
//! `cargo xtask verify --miri` and `--tsan` run them (`xtask/src/sanitizers.rs` has the
//! commands and the sizes, with their reasons and costs).
//!
//! - Miri: `cargo +nightly miri test --test inproc`. Each seed of `-Zmiri-many-seeds` is
//!   one schedule of the scenario's threads (and one draw of Miri's weak-memory choices).
//!   Miri checks every access to a `SharedCell` (a std `UnsafeCell` in the real build)
//!   against the happens-before its vector clocks track, so a missing edge between two
//!   holders is a `Data race detected` error; when every thread is blocked it stops the
//!   program with its own `deadlock` report, which is how a lost wakeup shows here. Under
//!   Miri no watchdog is armed: its detector thread waits with a timeout, so while it runs
//!   Miri never finds every thread blocked, and a lost wakeup would end as the watchdog's
//!   stall after its limit in virtual time instead of Miri's report with every thread's
//!   stack.
//! - ThreadSanitizer (nightly `-Zsanitizer=thread -Zbuild-std`): a missing happens-before
//!   edge is a `WARNING: ThreadSanitizer: data race` report; with `halt_on_error=1` the
//!   first one ends the process (exit 66). A lost wakeup is a hang that TSan does not see,
//!   so each test arms the in-process watchdog: a test whose rounds stop making progress
//!   for the stall limit (10 s; `WATCHDOG_STALL_SECS` overrides) ends the process with
//!   `watchdog::STALL_EXIT_CODE` and a report naming the scenario and the flaw. TSan does
//!   not model fences, so it cannot check `close_publishes` and
//!   `close_races_announced_acquirers`, whose readers see `CLOSED` through a relaxed load
//!   and `fence(Acquire)`: it reports their reads as races on the correct semaphore, and
//!   its runs skip them (`xtask/src/sanitizers.rs` has the measurement).
//! - Plain `cargo test` runs them too (correct semaphore, a few rounds each), under the
//!   watchdog; the large real-thread runs of the same scenarios are `stress/`'s `shared_*`.
//!
//! Two environment variables choose what runs (under Miri they reach the program only when
//! forwarded, `-Zmiri-env-forward=NAME`):
//!
//! - `PARKSEMA_FLAW=<name>` (a `parksema::Flaw` variant, e.g. `OverIssue`; needs the
//!   `broken_sema` feature): every scenario's semaphore runs with that flaw. Unset, empty or
//!   `none`: the correct semaphore.
//! - `PARKSEMA_INPROC_ROUNDS=N`: rounds of each scenario in one test, each on fresh threads
//!   and a fresh semaphore (default: 1 under Miri, whose seeds give the schedules; 10
//!   otherwise, which keeps the plain `cargo test` run of this target under a second).
//!
//! Each test prints `inproc NAME: R rounds, flaw F` when it finishes, so a runner can tell a
//! test that ran from a filter that matched nothing.
//!
//! What the real build changes in the scenarios: `park_stats` is `None` (the real park table
//! keeps no per-key counters), so the park-table cost checks of (c), (i), (l), (o) and (t)
//! are not made here (the library's unit tests count the real table); `advance_clock`
//! sleeps (under Miri on its virtual clock), so the timed scenarios (p), (q), (y) and (z')
//! let their deadlines pass for real, and (z) its fairness timer; each of them accepts
//! either order of the deadline and the parking it races. Every scenario runs in this
//! build; none is skipped (ThreadSanitizer's runs skip two, above).

// A real-thread test: under the model checkers the semaphore only works inside a model.
#![cfg(not(any(feature = "loom", feature = "shuttle")))]

#[path = "scenarios/mod.rs"]
mod scenarios;

use parksema::Fairness;
use scenarios::Build;

/// The variable that names the flaw every scenario's semaphore runs with.
const FLAW_VAR: &str = "PARKSEMA_FLAW";

/// The variable that sets the rounds of each scenario.
const ROUNDS_VAR: &str = "PARKSEMA_INPROC_ROUNDS";

/// The stall limit of each test outside Miri: no round finishing for this long means a lost
/// wakeup. A round takes milliseconds even under ThreadSanitizer on a loaded 2-core machine
/// (0.2-2 ms; the timed scenarios about 11 ms, their 10 ms deadline included), so 10 s is far
/// above any legitimate pause.
#[cfg(not(miri))]
const STALL: std::time::Duration = std::time::Duration::from_secs(10);

/// The flaw's name from [`FLAW_VAR`], `none` for the correct semaphore.
fn flaw_name() -> String {
    match std::env::var(FLAW_VAR) {
        Ok(name) if !name.is_empty() => name,
        _ => "none".to_string(),
    }
}

/// The semaphore build every scenario of this run uses, from [`FLAW_VAR`].
fn build() -> Build {
    let name = flaw_name();
    if name == "none" {
        return Build::CORRECT;
    }
    flawed(&name)
}

/// The build with the flaw named `name`.
#[cfg(feature = "broken_sema")]
fn flawed(name: &str) -> Build {
    let flaw = name.parse().unwrap_or_else(|e| panic!("{FLAW_VAR}: {e}"));
    Build::flawed(flaw)
}

/// Without `broken_sema` there are no flaws to choose from.
#[cfg(not(feature = "broken_sema"))]
fn flawed(name: &str) -> Build {
    panic!("{FLAW_VAR}={name} needs the `broken_sema` feature (--features broken_sema)")
}

/// The rounds of each scenario, from [`ROUNDS_VAR`].
fn rounds() -> usize {
    let default = if cfg!(miri) { 1 } else { 10 };
    match std::env::var(ROUNDS_VAR) {
        Err(_) => default,
        Ok(v) => v
            .trim()
            .parse()
            .ok()
            .filter(|&n| n > 0)
            .unwrap_or_else(|| panic!("{ROUNDS_VAR}={v:?} is not a positive number of rounds")),
    }
}

/// `miri` under Miri, `threads` otherwise: the sizes of the scenarios that take one. Miri
/// interprets every instruction (a round of a scenario costs it 0.1-0.6 s, against well
/// under a millisecond natively), so it runs sizes like loom's and leaves the
/// variety to its seeds; native threads, under ThreadSanitizer too, run sizes closer to
/// `stress/`'s, where more threads contend for the same permit.
const fn size(miri: usize, threads: usize) -> usize {
    if cfg!(miri) { miri } else { threads }
}

/// Runs `body` on this run's build, [`rounds`] times, then prints the line that says the
/// test ran. Outside Miri the rounds run under the watchdog, which ends the process with its
/// stall report when a round hangs (a lost wakeup).
fn repeat(name: &str, body: impl Fn(Build)) {
    let (build, rounds) = (build(), rounds());
    #[cfg(not(miri))]
    let wd = watchdog::Watchdog::arm(
        format!("inproc {name} (flaw {})", flaw_name()),
        watchdog::stall_limit(STALL),
    );
    #[cfg(not(miri))]
    let w = wd.worker("rounds");
    for _round in 0..rounds {
        #[cfg(not(miri))]
        w.op("round");
        body(build);
    }
    println!("inproc {name}: {rounds} rounds, flaw {}", flaw_name());
}

#[test]
fn mutual_exclusion() {
    // One permit among three threads (Miri) or four, each taking it three (Miri) or fifty
    // times: the holders overlap with parked and spinning acquirers.
    repeat("mutual_exclusion", |b| {
        scenarios::mutual_exclusion(b, 1, size(3, 4), size(3, 50))
    });
}

#[test]
fn two_permits_mutual_exclusion() {
    repeat("two_permits_mutual_exclusion", |b| {
        scenarios::mutual_exclusion(b, 2, size(3, 6), size(2, 50))
    });
}

#[test]
fn waiters_bit_races() {
    repeat("waiters_bit_races", scenarios::waiters_bit_races);
}

#[test]
fn wakes_every_waiter() {
    repeat("wakes_every_waiter", |b| {
        scenarios::wakes_every_waiter(b, size(2, 8), false)
    });
}

#[test]
fn wakes_every_waiter_serial() {
    repeat("wakes_every_waiter_serial", |b| {
        scenarios::wakes_every_waiter(b, size(2, 8), true)
    });
}

#[test]
fn two_semaphores_share_bucket() {
    repeat(
        "two_semaphores_share_bucket",
        scenarios::two_semaphores_share_bucket,
    );
}

#[test]
fn close_races() {
    repeat("close_races", scenarios::close_races);
}

#[test]
fn try_acquire_races() {
    repeat("try_acquire_races", scenarios::try_acquire_races);
}

#[test]
fn visibility() {
    repeat("visibility", |b| scenarios::visibility(b, size(2, 4)));
}

#[test]
fn visibility_three_threads() {
    repeat("visibility_three_threads", |b| scenarios::visibility(b, 3));
}

#[test]
fn close_publishes() {
    repeat("close_publishes", scenarios::close_publishes);
}

#[test]
fn close_wakes_parked() {
    repeat("close_wakes_parked", |b| {
        scenarios::close_wakes_waiters(b, size(2, 4), true)
    });
}

#[test]
fn close_races_announced_acquirers() {
    repeat("close_races_announced_acquirers", |b| {
        scenarios::close_wakes_waiters(b, size(2, 4), false)
    });
}

#[test]
fn add_after_close() {
    repeat("add_after_close", scenarios::add_after_close);
}

#[test]
fn two_releasers_two_waiters() {
    repeat("two_releasers_two_waiters", |b| {
        scenarios::releases_race(b, 2, &[1, 1])
    });
}

#[test]
fn releases_race() {
    repeat("releases_race", |b| {
        if cfg!(miri) {
            scenarios::releases_race(b, 3, &[1, 2, 1]);
        } else {
            scenarios::releases_race(b, 8, &[2, 1, 3, 2]);
        }
    });
}

#[test]
fn refused_adds_near_max() {
    repeat("refused_adds_near_max", scenarios::refused_adds_near_max);
}

#[test]
fn unwind_and_move() {
    repeat("unwind_and_move", scenarios::unwind_and_move);
}

#[test]
fn woken_takes_another_releasers_permit() {
    repeat(
        "woken_takes_another_releasers_permit",
        scenarios::woken_takes_another_releasers_permit,
    );
}

#[test]
fn large_head_small_behind() {
    repeat(
        "large_head_small_behind",
        scenarios::large_head_small_behind,
    );
}

#[test]
fn timeout_races_release() {
    repeat("timeout_races_release", scenarios::timeout_races_release);
}

#[test]
fn close_races_timed_waits() {
    repeat(
        "close_races_timed_waits",
        scenarios::close_races_timed_waits,
    );
}

#[test]
fn split_merge_forget_race_acquires() {
    repeat(
        "split_merge_forget_race_acquires",
        scenarios::split_merge_forget_race_acquires,
    );
}

#[test]
fn forget_races_close() {
    repeat("forget_races_close", scenarios::forget_races_close);
}

#[test]
fn batch_wakes_several() {
    repeat("batch_wakes_several", |b| {
        scenarios::batch_wakes_several(b, size(2, 8))
    });
}

#[test]
fn woken_out_barged_passes_on() {
    repeat(
        "woken_out_barged_passes_on",
        scenarios::woken_out_barged_passes_on,
    );
}

#[test]
fn wakes_every_waiter_barging() {
    repeat("wakes_every_waiter_barging", |b| {
        scenarios::wakes_every_waiter(b.fair(Fairness::Barging), size(2, 8), false)
    });
}

#[test]
fn handoff_from_two_releasers() {
    repeat("handoff_from_two_releasers", |b| {
        scenarios::handoff_from_two_releasers(b.fair(Fairness::Fifo), false)
    });
}

#[test]
fn handoff_from_two_fair_releases() {
    repeat("handoff_from_two_fair_releases", |b| {
        scenarios::handoff_from_two_releasers(b, true)
    });
}

#[test]
fn fifo_no_barging() {
    repeat("fifo_no_barging", |b| {
        scenarios::fifo_no_barging(b.fair(Fairness::Fifo))
    });
}

#[test]
fn fifo_keeps_arrival_order() {
    repeat("fifo_keeps_arrival_order", |b| {
        scenarios::fifo_keeps_arrival_order(b.fair(Fairness::Fifo))
    });
}

#[test]
fn handoff_to_timing_out_waiter() {
    repeat("handoff_to_timing_out_waiter", |b| {
        scenarios::handoff_to_timing_out_waiter(b.fair(Fairness::Fifo), false)
    });
}

#[test]
fn fair_handoff_to_timing_out_waiter() {
    repeat("fair_handoff_to_timing_out_waiter", |b| {
        scenarios::handoff_to_timing_out_waiter(b, true)
    });
}

#[test]
fn fifo_head_times_out() {
    repeat("fifo_head_times_out", |b| {
        scenarios::fifo_head_times_out(b.fair(Fairness::Fifo))
    });
}

#[test]
fn eventual_timer_hands_over() {
    repeat(
        "eventual_timer_hands_over",
        scenarios::eventual_timer_hands_over,
    );
}
