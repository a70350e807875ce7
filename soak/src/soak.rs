//! The soak as a whole: its configuration, the counters every round adds to, the violations,
//! and how the process ends.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use crate::check::Violation;
use crate::plan::{Limits, Mode, Plan, Scenario};
use crate::progress::Progress;
use crate::report::Report;
use crate::stats::Slot;

/// Exit code of a soak that found a violation.
pub(crate) const EXIT_VIOLATION: i32 = 85;
/// Exit code of a soak that could not do its job (its JSON report could not be written).
pub(crate) const EXIT_ERROR: i32 = 1;
/// Exit code of a soak whose own thread panicked (a defect of the soak, or a panic of the
/// semaphore that no documented behaviour allows).
pub(crate) const EXIT_PANIC: i32 = 101;

/// The violations printed as they happen; the rest are only counted (one broken invariant
/// can trip the same check in every thread at once).
const PRINTED_VIOLATIONS: usize = 10;

/// Everything the options decide.
#[derive(Debug)]
pub(crate) struct Config {
    /// The traffic's seed.
    pub(crate) seed: u64,
    /// Whether the seed was drawn (not given).
    pub(crate) seed_drawn: bool,
    /// How long to soak.
    pub(crate) duration: Duration,
    /// Whether `duration` was given (else `--rounds` alone bounds the soak, or the default
    /// minute does).
    pub(crate) duration_given: bool,
    /// Stop after this many rounds, if given.
    pub(crate) max_rounds: Option<u64>,
    /// The first round's number.
    pub(crate) from_round: u64,
    /// What the plans may draw.
    pub(crate) limits: Limits,
    /// The in-process watchdog's stall limit.
    pub(crate) stall: Duration,
    /// Where the JSON report goes.
    pub(crate) json: Option<PathBuf>,
    /// The flaw's name, if a flawed semaphore is soaked.
    pub(crate) flaw_name: Option<String>,
    /// The flaw itself.
    #[cfg(feature = "broken_sema")]
    pub(crate) flaw: Option<parksema::Flaw>,
}

impl Config {
    /// The options that make a round's traffic what it was: `--seed` and those that
    /// restrict the plans.
    pub(crate) fn traffic_options(&self) -> String {
        let mut s = format!("--seed {} --threads {}", self.seed, self.limits.threads);
        if self.limits.scenarios.len() < Scenario::ALL.len() {
            for sc in &self.limits.scenarios {
                s += &format!(" --scenario {}", sc.name());
            }
        }
        if self.limits.modes.len() < Mode::ALL.len() {
            for m in &self.limits.modes {
                s += &format!(" --fairness {}", m.name().to_lowercase());
            }
        }
        if let Some(m) = self.limits.fifo_checks_on {
            s += &format!(" --check-fifo-on {}", m.name().to_lowercase());
        }
        if let Some(f) = &self.flaw_name {
            s += &format!(" --flaw {f}");
        }
        s
    }

    /// How to replay round `round`'s traffic, and why that is not a replay of the run.
    pub(crate) fn replay(&self, round: u64) -> String {
        format!(
            "replay this round's traffic with `parksema-soak {} --from-round {round} --rounds 1` \
             (the same operations, sizes, timeouts and close; not the same interleaving: the OS \
             schedules the threads, and no seed replays that)",
            self.traffic_options()
        )
    }
}

/// What every round adds to once it is over.
#[derive(Debug, Default, Clone)]
pub(crate) struct Summary {
    /// Rounds per scenario and mode.
    pub(crate) rounds: [[u64; 3]; 5],
    /// Operations per scenario and mode.
    pub(crate) ops: [[u64; 3]; 5],
    /// Seconds per scenario and mode.
    pub(crate) secs: [[f64; 3]; 5],
    /// The longest streak per mode, and its round.
    pub(crate) streak: [(u64, u64); 3],
    /// Rounds completed.
    pub(crate) rounds_done: u64,
}

/// How the soak ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    /// Every round ran clean.
    Clean,
    /// A check failed.
    Violation,
    /// The watchdog saw no progress for the stall limit.
    Stall,
}

impl Ending {
    /// The name in reports.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Ending::Clean => "clean",
            Ending::Violation => "violation",
            Ending::Stall => "stall",
        }
    }
}

/// The soak's shared state.
#[derive(Debug)]
pub(crate) struct Soak {
    /// The options.
    pub(crate) cfg: Config,
    /// When it started.
    pub(crate) start: Instant,
    /// One slot per thread a round can start (workers, then the conductor).
    slots: Vec<Slot>,
    /// Set by the first violation: every thread stops at its next operation.
    stop: AtomicBool,
    /// The violations recorded.
    violations: Mutex<Vec<Violation>>,
    /// How many violations there were.
    violation_count: AtomicU64,
    /// Per-round results.
    summary: Mutex<Summary>,
    /// The round running now.
    round_now: AtomicU64,
    /// Set once the process has started to end.
    ending: AtomicBool,
    /// The progress display.
    pub(crate) progress: Progress,
}

/// Locks `m`, ignoring poisoning (every value guarded here stays valid after a panic, and a
/// panic ends the process anyway).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Soak {
    /// The soak of `cfg`, its display `progress`.
    pub(crate) fn new(cfg: Config, progress: Progress) -> Soak {
        let slots = (0..=cfg.limits.threads).map(|_| Slot::default()).collect();
        Soak {
            round_now: AtomicU64::new(cfg.from_round),
            cfg,
            start: Instant::now(),
            slots,
            stop: AtomicBool::new(false),
            violations: Mutex::new(Vec::new()),
            violation_count: AtomicU64::new(0),
            summary: Mutex::new(Summary::default()),
            ending: AtomicBool::new(false),
            progress,
        }
    }

    /// Thread `i`'s slot (the conductor's is `threads`, whatever the round's size).
    pub(crate) fn slot(&self, i: usize) -> &Slot {
        &self.slots[i]
    }

    /// The conductor's slot.
    pub(crate) fn conductor_slot(&self) -> &Slot {
        &self.slots[self.cfg.limits.threads]
    }

    /// Every slot.
    pub(crate) fn slots(&self) -> &[Slot] {
        &self.slots
    }

    /// Nanoseconds from the start to `t`.
    pub(crate) fn nanos(&self, t: Instant) -> u64 {
        u64::try_from(t.duration_since(self.start).as_nanos()).unwrap_or(u64::MAX)
    }

    /// Operations so far, every thread's.
    pub(crate) fn operations(&self) -> u64 {
        self.slots.iter().map(Slot::ops).sum()
    }

    /// Whether a violation asked every thread to stop.
    pub(crate) fn stopping(&self) -> bool {
        self.stop.load(SeqCst)
    }

    /// How many violations were recorded.
    pub(crate) fn violation_count(&self) -> u64 {
        self.violation_count.load(SeqCst)
    }

    /// A copy of the violations recorded.
    pub(crate) fn violations(&self) -> Vec<Violation> {
        lock(&self.violations).clone()
    }

    /// The round running now.
    pub(crate) fn current_round(&self) -> u64 {
        self.round_now.load(SeqCst)
    }

    /// Notes that `round` starts.
    pub(crate) fn set_round(&self, round: u64) {
        self.round_now.store(round, SeqCst);
    }

    /// A copy of the per-round results.
    pub(crate) fn summary(&self) -> Summary {
        lock(&self.summary).clone()
    }

    /// Adds a finished round: its plan, its operations, its time and its longest streak.
    pub(crate) fn add_round(&self, plan: &Plan, ops: u64, took: Duration, streak: u64) {
        let mut s = lock(&self.summary);
        let (sc, m) = (plan.scenario.index(), plan.mode.index());
        s.rounds[sc][m] += 1;
        s.ops[sc][m] += ops;
        s.secs[sc][m] += took.as_secs_f64();
        if streak > s.streak[m].0 {
            s.streak[m] = (streak, plan.round);
        }
        s.rounds_done += 1;
    }

    /// Records a violation of `property` in the round of `plan`, prints it, and makes every
    /// thread stop. The first one also starts the drain guard: if the round has not ended
    /// (every thread joined) within half the stall limit, at most 2 s, the soak ends without
    /// it, so that a violation is reported as one even when the flaw that caused it also
    /// strands threads.
    pub(crate) fn record_violation(
        self: &Arc<Self>,
        plan: &Plan,
        property: &'static str,
        message: String,
    ) {
        let v = Violation {
            property,
            message,
            round: plan.round,
            plan: plan.describe(),
            secs: self.start.elapsed().as_secs_f64(),
        };
        let n = self.violation_count.fetch_add(1, SeqCst) + 1;
        if n as usize <= PRINTED_VIOLATIONS {
            self.progress.say(&format!(
                "parksema-soak: VIOLATION of `{}`: {}\n  in round {} ({}), {:.2} s into the soak, seed {}\n  {}",
                v.property,
                v.message,
                v.round,
                v.plan,
                v.secs,
                self.cfg.seed,
                self.cfg.replay(v.round)
            ));
        }
        lock(&self.violations).push(v);
        if !self.stop.swap(true, SeqCst) {
            let soak = Arc::clone(self);
            let drain = (self.cfg.stall / 2).min(Duration::from_secs(2));
            let _ = thread::Builder::new()
                .name("soak drain guard".into())
                .spawn(move || {
                    thread::sleep(drain);
                    soak.progress.say(&format!(
                        "parksema-soak: the round did not end within {} of the violation \
                         (threads stranded by the same flaw); ending without it",
                        crate::duration::human(drain)
                    ));
                    soak.finish(Ending::Violation)
                });
        }
    }

    /// Ends the process: prints the final report, writes the JSON report if asked, and exits
    /// with the code of `ending`. Only the first caller does it; any other waits for the exit.
    pub(crate) fn finish(&self, ending: Ending) -> ! {
        if self.ending.swap(true, SeqCst) {
            loop {
                thread::park();
            }
        }
        self.progress.stop();
        let report = Report::build(self, ending, None);
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(report.text().as_bytes());
        let _ = out.flush();
        drop(out);
        let mut code = match ending {
            Ending::Clean => 0,
            Ending::Violation => EXIT_VIOLATION,
            Ending::Stall => watchdog::STALL_EXIT_CODE,
        };
        if let Some(path) = &self.cfg.json
            && let Err(e) = report.write_json(path)
        {
            eprintln!("parksema-soak: {e}");
            if code == 0 {
                code = EXIT_ERROR;
            }
        }
        std::process::exit(code)
    }

    /// For the stall report: writes the JSON report (outcome `stall`, with `description`)
    /// if one was asked for. The watchdog ends the process after the stall report.
    pub(crate) fn note_stall(&self, description: &str) {
        if self.ending.swap(true, SeqCst) {
            return;
        }
        if let Some(path) = &self.cfg.json {
            let report = Report::build(self, Ending::Stall, Some(description.to_string()));
            if let Err(e) = report.write_json(path) {
                eprintln!("parksema-soak: {e}");
            }
        }
    }
}
