//! `parksema-soak`: hours of mixed traffic on real threads against the semaphore, under the
//! in-process watchdog, with every invariant checked while it runs. `cargo xtask soak
//! --duration 2h` builds it in release and runs it under the `watchdog` supervisor.
//!
//! # Rounds
//!
//! The soak is a sequence of rounds. Each round draws from its seed (derived from the soak's
//! seed and the round's number) a scenario, a fairness mode (`Eventual`, `Fifo`, `Barging`),
//! the permits, the threads (2 to `--threads`), the request sizes, the mix of acquire forms
//! and timeouts, and whether and when to close. It builds a fresh semaphore, runs the
//! scenario on real threads, joins them, and checks the quiescent point. The scenarios:
//!
//! - **traffic**: weighted traffic of every operation (`acquire`, `acquire_many`,
//!   `acquire_many_owned`, `try_acquire*`, `try_acquire_*_for` and `_until` with timeouts from
//!   zero to 2 ms and deadlines already past, holds, `split`, `merge`, `release_fair`, guards
//!   forgotten and their permits added back), plus a conductor that adds permits for good,
//!   forgets some for good or for a moment, and makes over-full adds that must be refused;
//! - **close**: the same traffic, closed by the conductor in the middle of it;
//! - **queue**: waiters parked one at a time in a known order, then a few permits released at
//!   a time; who is served must be what the mode promises (see `queue.rs`); with waiters
//!   parked, a running thread's `try_` take must fail under `Fifo` and succeed otherwise
//!   when the permits are free; sometimes `close` ends it with waiters parked;
//! - **deadline**: a timed waiter and an untimed one behind it, a release landing from 150 µs
//!   before the deadline to 50 µs after it;
//! - **streak**: a few threads re-acquiring one or two permits at once (the fairness
//!   experiment's shape), for the longest streak of one thread per mode.
//!
//! # What is checked, and when
//!
//! | property | checked | reported as |
//! |---|---|---|
//! | never more permits held than the semaphore has | at every acquisition: a ledger of permits held (weighted) against the most the semaphore can have, in one atomic word | `over-issue` |
//! | permits conserved | at every quiescent point: the end of each round (every thread joined), each queue step and each deadline race | `permits not conserved`, `timed-out call consumed permits` |
//! | no thread parked while its request fits, for longer than the stall limit | continuously: the in-process watchdog; at each queue step also directly (who is still parked right after a release) | a watchdog stall (exit 86), `lost wakeup` |
//! | a closed semaphore never hands out a permit | every acquire that started after `close` returned must fail; parked waiters must fail once closed; `try_acquire` on a closed semaphore | `close lost`, `close wakes every waiter` |
//! | a timed-out call consumes nothing | each deadline race (the count right after), and every round's conservation check | `timed-out call consumed permits`, `permits not conserved` |
//! | FIFO order under `Fifo` | each queue step: exactly the waiters arrival order serves, and no barging while anyone is parked | `FIFO order`, `FIFO barging` |
//! | the other modes' wake-up promise | each queue step: in queue order, every request that fits, passing over the ones that do not; a free permit taken without waiting | `wake-up order`, `over-wake`, `refused a free permit` |
//! | `WAITERS` cleared by the last waiter | the end of each round | `WAITERS left set` |
//! | errors only where the API allows them | every call | `spurious close`, `unexpected error`, `refused add` |
//!
//! A stranded waiter during traffic can be rescued by the next release that wakes the queue;
//! when the round's traffic drains nothing rescues it, the join cannot end, no thread reports
//! progress, and the watchdog reports the stall with each thread's call in progress (and for
//! how long), what the conductor was doing, and the semaphore's state and parked threads.
//!
//! # Replaying
//!
//! `--seed S` replays the same traffic: every round's plan and every thread's operations are
//! functions of the seed, the round's number and the options that restrict the plans
//! (`--threads`, `--scenario`, `--fairness`). `--from-round R --rounds 1` replays one round.
//! The interleaving of the threads cannot be replayed: the OS schedules them; a replay runs
//! the same operations in a new race. The seed comes from a hand-written SplitMix64
//! (`rng.rs` says why not `rand`).
//!
//! # Exit codes
//!
//! | code | meaning |
//! |---|---|
//! | 0 | clean: every round passed every check |
//! | 85 | a violation (the first is printed as it happens, every one in the report) |
//! | 86 | a stall: the in-process watchdog's report (`watchdog::STALL_EXIT_CODE`) |
//! | 1 | the JSON report could not be written |
//! | 2 | bad command line |
//! | 101 | a thread of the soak panicked |

mod check;
mod duration;
mod plan;
mod progress;
mod queue;
mod report;
mod rng;
mod round;
mod soak;
mod stats;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Parser;
use watchdog::Watchdog;

use crate::plan::{Limits, Mode, Plan, Scenario};
use crate::progress::{Progress, Show};
use crate::round::Round;
use crate::soak::{Config, EXIT_PANIC, Ending, Soak};

/// What `--help` says after the options.
const AFTER_HELP: &str = "\
Replaying: --seed S replays the same traffic (each round's scenario, mode, sizes, every thread's
operations, timeouts and close), given the same --threads, --scenario and --fairness;
--from-round R --rounds 1 replays one round. The interleaving of the threads is the OS
scheduler's and cannot be replayed: a replay runs the same operations in a new race.

Exit codes:
  0    clean
  85   a violation of a checked property (named in the report)
  86   a stall: no thread made progress for --stall seconds (the watchdog's report)
  1    the JSON report could not be written
  2    bad command line
  101  a thread of the soak panicked";

/// The command line.
#[derive(Parser, Debug)]
#[command(
    name = "parksema-soak",
    version,
    about = "Soak parksema's semaphore: rotating mixed traffic on real threads under the watchdog, every invariant checked as it runs.",
    after_help = AFTER_HELP
)]
struct Cli {
    /// How long to soak (90s, 10m, 2h, 1h30m); default 1m, or no limit with --rounds.
    #[arg(long, value_parser = duration::parse_duration)]
    duration: Option<Duration>,
    /// The traffic's seed (decimal or 0x-hex); default: drawn, and printed.
    #[arg(long, value_parser = parse_seed)]
    seed: Option<u64>,
    /// The most worker threads a round starts (each round draws from 2 to this).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(2..=64))]
    threads: u16,
    /// The in-process watchdog's stall limit, seconds (default 10, or WATCHDOG_STALL_SECS).
    #[arg(long, value_name = "SECS", value_parser = parse_stall)]
    stall: Option<Duration>,
    /// Also write the final report as JSON to FILE (also on a stall).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// No progress display: only violations, a stall's report and the final report.
    #[arg(long)]
    quiet: bool,
    /// The progress display: a bar on a terminal and lines elsewhere (auto), or as given.
    #[arg(long, value_enum, default_value_t = Show::Auto)]
    progress: Show,
    /// Stop after this many rounds (or at --duration, if that comes first).
    #[arg(long)]
    rounds: Option<u64>,
    /// Start at this round's number (with --seed, replays from there).
    #[arg(long, default_value_t = 0)]
    from_round: u64,
    /// Rotate through these scenarios only (repeatable; default all).
    #[arg(long = "scenario", value_enum)]
    scenarios: Vec<Scenario>,
    /// Rotate through these fairness modes only (repeatable; default all).
    #[arg(long = "fairness", value_enum)]
    modes: Vec<Mode>,
    /// Soak a semaphore with this deliberate flaw (a parksema::Flaw variant such as
    /// OverIssue; a name that is none lists them all); needs the broken_sema feature.
    #[arg(long, value_name = "NAME")]
    flaw: Option<String>,
    /// Hold the queue scenario's semaphores of this mode to the Fifo promises too, to show
    /// that those checks fail where the promise is not made.
    #[arg(long, value_enum, hide = true)]
    check_fifo_on: Option<Mode>,
}

/// Parses `--seed`: decimal, or hexadecimal after `0x`.
fn parse_seed(s: &str) -> Result<u64, String> {
    let parsed = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => s.parse(),
    };
    parsed.map_err(|e| format!("`{s}` is not a 64-bit seed (decimal or 0x-hex): {e}"))
}

/// Parses `--stall`: positive seconds, fractions allowed.
fn parse_stall(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    // `is_nan` too: NaN compares false with everything.
    if secs.is_nan() || secs <= 0.0 {
        return Err(format!("`{s}`: the stall limit must be positive"));
    }
    Duration::try_from_secs_f64(secs).map_err(|e| format!("`{s}`: {e}"))
}

/// `v` sorted, each element once.
fn dedup<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v.dedup();
    v
}

/// A seed drawn from the clock and the process id, when none is given.
fn drawn_seed() -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    rng::Rng::derive(nanos, u64::from(std::process::id()))
}

impl Cli {
    /// The configuration, or why the command line cannot be run.
    fn config(self) -> Result<(Config, Show), String> {
        #[cfg(feature = "broken_sema")]
        let flaw = self
            .flaw
            .as_deref()
            .map(|name| name.parse::<parksema::Flaw>())
            .transpose()
            .map_err(|e| format!("--flaw: {e}"))?;
        #[cfg(not(feature = "broken_sema"))]
        if let Some(name) = &self.flaw {
            return Err(format!(
                "--flaw {name}: this binary was built without the `broken_sema` feature, so it \
                 has none of parksema's deliberate flaws; `cargo xtask soak --flaw {name}` \
                 builds it with them"
            ));
        }
        let show = if self.quiet {
            Show::None
        } else {
            self.progress
        };
        let duration = self.duration.unwrap_or(if self.rounds.is_some() {
            // No limit but the rounds: a hundred days stands for none.
            Duration::from_secs(100 * 86_400)
        } else {
            Duration::from_secs(60)
        });
        let scenarios = if self.scenarios.is_empty() {
            Scenario::ALL.to_vec()
        } else {
            dedup(self.scenarios)
        };
        let modes = if self.modes.is_empty() {
            Mode::ALL.to_vec()
        } else {
            dedup(self.modes)
        };
        let (seed, seed_drawn) = match self.seed {
            Some(s) => (s, false),
            None => (drawn_seed(), true),
        };
        Ok((
            Config {
                seed,
                seed_drawn,
                duration,
                duration_given: self.duration.is_some(),
                max_rounds: self.rounds,
                from_round: self.from_round,
                limits: Limits {
                    threads: usize::from(self.threads),
                    scenarios,
                    modes,
                    fifo_checks_on: self.check_fifo_on,
                },
                stall: self
                    .stall
                    .unwrap_or_else(|| watchdog::stall_limit(Duration::from_secs(10))),
                json: self.json,
                flaw_name: self.flaw,
                #[cfg(feature = "broken_sema")]
                flaw,
            },
            show,
        ))
    }
}

fn main() {
    let cli = Cli::parse();
    let (cfg, show) = match cli.config() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("parksema-soak: {e}");
            std::process::exit(2);
        }
    };
    let bar_length = (cfg.max_rounds.is_none() || cfg.duration_given).then_some(cfg.duration);
    let soak = Arc::new(Soak::new(cfg, Progress::new(show, bar_length)));

    // A panic anywhere is a defect of the soak (or a panic of the semaphore that no
    // documented behaviour allows): report where, then end at once rather than leave a
    // round to stall on the thread that died.
    let default_hook = std::panic::take_hook();
    let hook_soak = Arc::clone(&soak);
    std::panic::set_hook(Box::new(move |info| {
        hook_soak.progress.hide();
        default_hook(info);
        eprintln!(
            "parksema-soak: a thread of the soak panicked in round {} (seed {}); exiting with {EXIT_PANIC}",
            hook_soak.current_round(),
            hook_soak.cfg.seed
        );
        std::process::exit(EXIT_PANIC);
    }));

    let cfg = &soak.cfg;
    soak.progress.say(&format!(
        "parksema-soak: seed {}{}, {} threads at most, stall limit {}, {}{}",
        cfg.seed,
        if cfg.seed_drawn {
            " (drawn; --seed replays the traffic, not the interleaving)"
        } else {
            ""
        },
        cfg.limits.threads,
        duration::human(cfg.stall),
        match cfg.max_rounds {
            Some(n) if cfg.duration_given => {
                format!("{n} rounds or {}", duration::human(cfg.duration))
            }
            Some(n) => format!("{n} rounds"),
            None => duration::human(cfg.duration),
        },
        cfg.flaw_name
            .as_deref()
            .map(|f| format!(", flaw {f}"))
            .unwrap_or_default()
    ));
    let display = Progress::start(&soak);

    let mut round = cfg.from_round;
    let mut ran = 0;
    while soak.start.elapsed() < cfg.duration && cfg.max_rounds.is_none_or(|max| ran < max) {
        soak.set_round(round);
        let plan = Plan::new(cfg.seed, round, &cfg.limits);
        let r = Arc::new(Round::new(Arc::clone(&soak), plan));
        let wd = Watchdog::arm(
            format!("parksema-soak round {round} ({})", r.plan.describe()),
            cfg.stall,
        );
        {
            let r = Arc::clone(&r);
            wd.describe(move || r.describe_stall());
        }
        let before = soak.operations();
        let started = std::time::Instant::now();
        r.run(&wd);
        r.check_end();
        drop(wd);
        if soak.stopping() {
            soak.finish(Ending::Violation);
        }
        soak.add_round(
            &r.plan,
            soak.operations() - before,
            started.elapsed(),
            r.streak.longest(),
        );
        round += 1;
        ran += 1;
    }
    drop(display);
    soak.finish(Ending::Clean)
}
