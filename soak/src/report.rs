//! The final report: operations per kind, the longest wait, the longest streak, rounds per
//! scenario and mode, violations; as text (stdout) and as JSON (`--json FILE`).

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use indicatif::HumanCount;
use serde::Serialize;

use crate::check::Violation;
use crate::duration::human;
use crate::plan::{Mode, Plan, Scenario};
use crate::soak::{Ending, Soak};
use crate::stats::{Kind, Outcome};

/// One kind of operation.
#[derive(Debug, Serialize)]
pub(crate) struct KindRow {
    /// The kind's name.
    pub(crate) kind: &'static str,
    /// Calls in all.
    pub(crate) calls: u64,
    /// Calls that succeeded.
    pub(crate) ok: u64,
    /// Calls refused with `NoPermits`.
    pub(crate) no_permits: u64,
    /// Calls that timed out.
    pub(crate) timed_out: u64,
    /// Calls refused because the semaphore was closed.
    pub(crate) closed: u64,
    /// Calls refused as too large (never expected).
    pub(crate) too_large: u64,
}

/// The longest time one acquire call took.
#[derive(Debug, Serialize)]
pub(crate) struct WaitRow {
    /// Microseconds.
    pub(crate) micros: u64,
    /// The call.
    pub(crate) kind: &'static str,
    /// Its round, and that round's plan.
    pub(crate) round: u64,
    /// The plan in words.
    pub(crate) plan: String,
}

/// The longest streak of one thread.
#[derive(Debug, Serialize)]
pub(crate) struct StreakRow {
    /// The mode.
    pub(crate) fairness: &'static str,
    /// Consecutive acquisitions by one thread on the round's semaphore.
    pub(crate) acquisitions: u64,
    /// The round (`None`: no round of this mode ran).
    pub(crate) round: Option<u64>,
    /// The round's plan in words.
    pub(crate) plan: Option<String>,
}

/// Rounds and operations of one scenario in one mode.
#[derive(Debug, Serialize)]
pub(crate) struct RoundRow {
    /// The scenario.
    pub(crate) scenario: &'static str,
    /// The mode.
    pub(crate) fairness: &'static str,
    /// Rounds run to the end.
    pub(crate) rounds: u64,
    /// Their operations.
    pub(crate) operations: u64,
    /// Their time, seconds.
    pub(crate) secs: f64,
}

/// The report.
#[derive(Debug, Serialize)]
pub(crate) struct Report {
    /// `clean`, `violation` or `stall`.
    pub(crate) outcome: &'static str,
    /// The traffic's seed.
    pub(crate) seed: u64,
    /// The flaw soaked, if any.
    pub(crate) flaw: Option<String>,
    /// `--threads`.
    pub(crate) threads: usize,
    /// The in-process stall limit, seconds.
    pub(crate) stall_secs: f64,
    /// The duration asked for, seconds.
    pub(crate) duration_secs: f64,
    /// The time it ran, seconds.
    pub(crate) elapsed_secs: f64,
    /// The first round's number.
    pub(crate) first_round: u64,
    /// Rounds run to the end.
    pub(crate) rounds: u64,
    /// Operations in all (the round that was running when it ended included).
    pub(crate) operations: u64,
    /// Operations per second.
    pub(crate) ops_per_sec: f64,
    /// Operations per kind and outcome.
    pub(crate) operations_by_kind: Vec<KindRow>,
    /// The longest wait in an acquire.
    pub(crate) longest_wait: Option<WaitRow>,
    /// The longest streak per mode.
    pub(crate) longest_streak: Vec<StreakRow>,
    /// Rounds per scenario and mode.
    pub(crate) rounds_by_scenario: Vec<RoundRow>,
    /// How many violations there were.
    pub(crate) violation_count: u64,
    /// The violations recorded.
    pub(crate) violations: Vec<Violation>,
    /// The stall report, if the soak stalled.
    pub(crate) stall: Option<String>,
    /// How to replay the traffic.
    pub(crate) replay: String,
}

impl Report {
    /// The report of `soak` as it stands, ending with `ending`.
    pub(crate) fn build(soak: &Soak, ending: Ending, stall: Option<String>) -> Report {
        let cfg = &soak.cfg;
        let elapsed = soak.start.elapsed();
        let operations = soak.operations();
        let operations_by_kind = Kind::ALL
            .iter()
            .map(|&kind| {
                let sum = |o| soak.slots().iter().map(|s| s.get(kind, o)).sum::<u64>();
                let (ok, no_permits, timed_out, closed, too_large) = (
                    sum(Outcome::Ok),
                    sum(Outcome::NoPermits),
                    sum(Outcome::TimedOut),
                    sum(Outcome::Closed),
                    sum(Outcome::TooLarge),
                );
                KindRow {
                    kind: kind.name(),
                    calls: ok + no_permits + timed_out + closed + too_large,
                    ok,
                    no_permits,
                    timed_out,
                    closed,
                    too_large,
                }
            })
            .filter(|r| r.calls > 0)
            .collect();
        let plan_of = |round| Plan::new(cfg.seed, round, &cfg.limits).describe();
        let longest_wait = soak
            .slots()
            .iter()
            .map(|s| s.longest_wait())
            .max_by_key(|&(d, _, _)| d)
            .filter(|&(d, _, _)| d > Duration::ZERO)
            .map(|(d, round, kind)| WaitRow {
                micros: u64::try_from(d.as_micros()).unwrap_or(u64::MAX),
                kind: kind.name(),
                round,
                plan: plan_of(round),
            });
        let summary = soak.summary();
        let longest_streak = Mode::ALL
            .iter()
            .map(|&m| {
                let (n, round) = summary.streak[m.index()];
                let ran = Scenario::ALL
                    .iter()
                    .any(|s| summary.rounds[s.index()][m.index()] > 0);
                StreakRow {
                    fairness: m.name(),
                    acquisitions: n,
                    round: ran.then_some(round),
                    plan: ran.then(|| plan_of(round)),
                }
            })
            .collect();
        let mut rounds_by_scenario = Vec::new();
        for s in Scenario::ALL {
            for m in Mode::ALL {
                rounds_by_scenario.push(RoundRow {
                    scenario: s.name(),
                    fairness: m.name(),
                    rounds: summary.rounds[s.index()][m.index()],
                    operations: summary.ops[s.index()][m.index()],
                    secs: summary.secs[s.index()][m.index()],
                });
            }
        }
        Report {
            outcome: ending.name(),
            seed: cfg.seed,
            flaw: cfg.flaw_name.clone(),
            threads: cfg.limits.threads,
            stall_secs: cfg.stall.as_secs_f64(),
            duration_secs: cfg.duration.as_secs_f64(),
            elapsed_secs: elapsed.as_secs_f64(),
            first_round: cfg.from_round,
            rounds: summary.rounds_done,
            operations,
            ops_per_sec: operations as f64 / elapsed.as_secs_f64().max(1e-9),
            operations_by_kind,
            longest_wait,
            longest_streak,
            rounds_by_scenario,
            violation_count: soak.violation_count(),
            violations: soak.violations(),
            stall,
            replay: format!(
                "`parksema-soak {}` replays the same traffic (each round's scenario, mode, \
                 sizes, every thread's operations, timeouts and close); the interleaving of the \
                 threads is the OS scheduler's and cannot be replayed",
                cfg.traffic_options()
            ),
        }
    }

    /// The report as text.
    pub(crate) fn text(&self) -> String {
        let mut s = String::new();
        let flaw = self
            .flaw
            .as_deref()
            .map(|f| format!(", flaw {f}"))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "parksema-soak: {} after {}: {} operations ({}/s) in {} rounds, seed {}{flaw}",
            self.outcome.to_uppercase(),
            human(Duration::from_secs_f64(self.elapsed_secs)),
            HumanCount(self.operations),
            HumanCount(self.ops_per_sec as u64),
            HumanCount(self.rounds),
            self.seed,
        );
        let _ = writeln!(
            s,
            "\noperations               calls          ok  no permits   timed out      closed"
        );
        for r in &self.operations_by_kind {
            let _ = writeln!(
                s,
                "  {:<22}{:>11} {:>11} {:>11} {:>11} {:>11}{}",
                r.kind,
                HumanCount(r.calls),
                HumanCount(r.ok),
                HumanCount(r.no_permits),
                HumanCount(r.timed_out),
                HumanCount(r.closed),
                if r.too_large > 0 {
                    format!("  too large: {}", r.too_large)
                } else {
                    String::new()
                }
            );
        }
        match &self.longest_wait {
            Some(w) => {
                let _ = writeln!(
                    s,
                    "\nlongest wait: {} in {} (round {}: {})",
                    human(Duration::from_micros(w.micros)),
                    w.kind,
                    w.round,
                    w.plan
                );
            }
            None => {
                let _ = writeln!(s, "\nlongest wait: none measured");
            }
        }
        let _ = writeln!(
            s,
            "longest streak of one thread (consecutive acquisitions):"
        );
        for r in &self.longest_streak {
            match (&r.round, &r.plan) {
                (Some(round), Some(plan)) => {
                    let _ = writeln!(
                        s,
                        "  {:<9} {:>7} (round {round}: {plan})",
                        r.fairness,
                        HumanCount(r.acquisitions)
                    );
                }
                _ => {
                    let _ = writeln!(s, "  {:<9} no round ran", r.fairness);
                }
            }
        }
        let _ = writeln!(
            s,
            "\nrounds (operations, seconds)  Eventual                  Fifo                      Barging"
        );
        for sc in Scenario::ALL {
            let cells: Vec<String> = self
                .rounds_by_scenario
                .iter()
                .filter(|r| r.scenario == sc.name())
                .map(|r| {
                    format!(
                        "{} ({}, {:.0} s)",
                        HumanCount(r.rounds),
                        HumanCount(r.operations),
                        r.secs
                    )
                })
                .collect();
            let _ = writeln!(
                s,
                "  {:<28}{:<26}{:<26}{}",
                sc.name(),
                cells[0],
                cells[1],
                cells[2]
            );
        }
        if self.violation_count == 0 {
            let _ = writeln!(s, "\nviolations: none");
        } else {
            let _ = writeln!(s, "\nviolations: {}", self.violation_count);
            for v in &self.violations {
                let _ = writeln!(
                    s,
                    "  `{}` in round {} ({}), at {:.2} s: {}",
                    v.property, v.round, v.plan, v.secs, v.message
                );
            }
        }
        if self.stall.is_some() {
            let _ = writeln!(
                s,
                "stall: see the watchdog's report (a thread parked while its request fits)"
            );
        }
        let _ = writeln!(s, "replay: {}", self.replay);
        s
    }

    /// Writes the report as JSON to `path` (its directory created if missing).
    pub(crate) fn write_json(&self, path: &Path) -> Result<(), String> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let json = serde_json::to_string_pretty(self).map_err(|e| format!("JSON: {e}"))?;
        std::fs::write(path, json + "\n")
            .map_err(|e| format!("cannot write the report to {}: {e}", path.display()))
    }
}
