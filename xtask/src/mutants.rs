//! `cargo xtask mutants`: runs `cargo mutants` and records its outcome in `mutants/`, or
//! (`--by-hand`) applies the mutants it cannot make and checks that each is caught.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use serde::Deserialize;

use crate::by_hand::{Check, HandMutant, MUTANTS};
use crate::run;

#[derive(Deserialize)]
struct Outcomes {
    outcomes: Vec<Outcome>,
    total_mutants: usize,
    missed: usize,
    caught: usize,
    timeout: usize,
    unviable: usize,
    start_time: String,
    end_time: String,
    cargo_mutants_version: String,
}

#[derive(Deserialize)]
struct Outcome {
    scenario: serde_json::Value,
    summary: String,
    phase_results: Vec<Phase>,
}

#[derive(Deserialize)]
struct Phase {
    duration: f64,
}

/// Runs `cargo mutants` with `extra` arguments; with none, records the outcome in
/// `mutants/outcome.md`.
pub(crate) fn cargo_mutants(extra: &[String]) -> ExitCode {
    let root = crate::workspace_root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let start = Instant::now();
    let ok = run(Command::new(&cargo)
        .current_dir(&root)
        .arg("mutants")
        .args(extra));
    let wall = start.elapsed().as_secs_f64();
    let json = root.join("mutants.out").join("outcomes.json");
    match fs::read_to_string(&json)
        .map_err(|e| e.to_string())
        .and_then(|s| serde_json::from_str::<Outcomes>(&s).map_err(|e| e.to_string()))
    {
        Ok(o) => {
            let summary = summarize(&o, wall);
            eprintln!("{summary}");
            if extra.is_empty() {
                let path = root.join("mutants").join("outcome.md");
                if let Err(e) = fs::write(&path, summary) {
                    eprintln!("xtask: could not write {}: {e}", path.display());
                    return ExitCode::FAILURE;
                }
                eprintln!("xtask: recorded in {}", path.display());
            }
        }
        Err(e) => eprintln!("xtask: no outcome to summarize in {}: {e}", json.display()),
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The `cargo mutants` configurations whose `exclude_re` `--check-excludes` checks, each with
/// the arguments that select its package.
const EXCLUDE_CONFIGS: [(&str, &[&str]); 2] = [
    (".cargo/mutants.toml", &[]),
    ("parkcheck/mutants.toml", &["-p", "parkcheck"]),
];

/// How many of `names` (mutant names as `cargo mutants --list` prints them) each of
/// `patterns` matches, in order; `Err` for a pattern that is not a regex.
fn exclude_matches(patterns: &[String], names: &[&str]) -> Result<Vec<usize>, String> {
    patterns
        .iter()
        .map(|p| {
            let re = regex::Regex::new(p).map_err(|e| format!("{p}: {e}"))?;
            Ok(names.iter().filter(|n| re.is_match(n)).count())
        })
        .collect()
}

/// `cargo xtask mutants --check-excludes`: every `exclude_re` of the mutation settings still
/// matches at least one mutant of the unfiltered list (`--no-config`), so an exclusion whose
/// code was changed or moved away does not stay behind excluding nothing, or something
/// else. Prints each pattern's count.
pub(crate) fn check_excludes() -> ExitCode {
    let root = crate::workspace_root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut ok = true;
    for (config, select) in EXCLUDE_CONFIGS {
        let patterns = match fs::read_to_string(root.join(config))
            .map_err(|e| e.to_string())
            .and_then(|s| s.parse::<toml::Table>().map_err(|e| e.to_string()))
        {
            Ok(table) => match table.get("exclude_re") {
                None => Vec::new(),
                Some(v) => match v.clone().try_into::<Vec<String>>() {
                    Ok(v) => v,
                    Err(e) => {
                        eprintln!("xtask: {config}: exclude_re: {e}");
                        ok = false;
                        continue;
                    }
                },
            },
            Err(e) => {
                eprintln!("xtask: {config}: {e}");
                ok = false;
                continue;
            }
        };
        if patterns.is_empty() {
            println!("{config}: no exclude_re");
            continue;
        }
        let mut cmd = Command::new(&cargo);
        cmd.current_dir(&root)
            .args(["mutants", "--list", "--no-config"])
            .args(select)
            .stderr(Stdio::inherit());
        eprintln!("xtask: running {cmd:?}");
        let listed = match cmd.output() {
            Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).into_owned(),
            Ok(out) => {
                eprintln!("xtask: {cmd:?} failed ({})", out.status);
                ok = false;
                continue;
            }
            Err(e) => {
                eprintln!("xtask: could not start {cmd:?}: {e}");
                ok = false;
                continue;
            }
        };
        let names: Vec<&str> = listed.lines().collect();
        match exclude_matches(&patterns, &names) {
            Ok(counts) => {
                for (p, n) in patterns.iter().zip(counts) {
                    println!("{config}: {n} mutants match {p}");
                    if n == 0 {
                        eprintln!("xtask: {config}: `{p}` excludes nothing: remove it or fix it");
                        ok = false;
                    }
                }
            }
            Err(e) => {
                eprintln!("xtask: {config}: exclude_re {e}");
                ok = false;
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// What `cargo xtask verify`'s mutants step mutates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Of {
    /// The semaphore (`src/`, settings in `.cargo/mutants.toml`; `--mutants`).
    Semaphore,
    /// The park-table model (`parkcheck/src/model.rs`, settings in `parkcheck/mutants.toml`;
    /// `--model-mutants`).
    Model,
}

impl Of {
    /// The arguments that select it.
    fn args(self) -> Vec<String> {
        match self {
            Of::Semaphore => Vec::new(),
            Of::Model => ["--config", "parkcheck/mutants.toml", "-p", "parkcheck"]
                .map(str::to_string)
                .to_vec(),
        }
    }

    /// Where cargo-mutants writes its outcome (`mutants.out` under this directory).
    fn output_dir(self, root: &Path) -> PathBuf {
        match self {
            Of::Semaphore => root.to_path_buf(),
            Of::Model => root.join("target").join("mutants-parkcheck"),
        }
    }

    /// The `mutants.out` directory.
    pub(crate) fn output(self, root: &Path) -> PathBuf {
        self.output_dir(root).join("mutants.out")
    }

    /// The command, as the report shows it.
    pub(crate) fn command(self) -> String {
        let mut parts = vec!["cargo".to_string(), "mutants".to_string()];
        parts.extend(self.args());
        parts.join(" ")
    }

    /// The check's name in the report.
    fn check(self) -> &'static str {
        match self {
            Of::Semaphore => "cargo mutants",
            Of::Model => "cargo mutants parkcheck",
        }
    }
}

/// `cargo xtask verify --mutants` (or `--model-mutants`): runs `cargo mutants` on `of` with
/// the arguments in `PARKSEMA_MUTANTS_ARGS` (split on whitespace; e.g. `--shard 2/8` or
/// `--in-diff FILE`; none: every mutant) and returns its outcome as a check record, and
/// whether no mutant was missed or timed out. An error if cargo-mutants is missing (with the
/// command that installs it) or left no outcome.
pub(crate) fn mutants_records(
    root: &Path,
    of: Of,
) -> Result<(Vec<crate::report::Record>, bool), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let installed = Command::new(&cargo)
        .args(["mutants", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !installed {
        return Err(
            "cargo-mutants is not installed: `cargo install cargo-mutants --locked --version 27.1.0`"
                .to_string(),
        );
    }
    let args: Vec<String> = std::env::var("PARKSEMA_MUTANTS_ARGS")
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let start = Instant::now();
    // cargo-mutants exits non-zero when a mutant is missed; the outcome says which.
    let mut cmd = Command::new(&cargo);
    cmd.current_dir(root)
        .arg("mutants")
        .args(of.args())
        .args(&args);
    if of == Of::Model {
        cmd.arg("--output").arg(of.output_dir(root));
    }
    run(&mut cmd);
    let secs = start.elapsed().as_secs_f64();
    let json = of.output(root).join("outcomes.json");
    let o: Outcomes = fs::read_to_string(&json)
        .map_err(|e| e.to_string())
        .and_then(|s| serde_json::from_str(&s).map_err(|e| e.to_string()))
        .map_err(|e| format!("no outcome in {}: {e}", json.display()))?;
    let record = crate::report::Record::Check {
        build: "mutants".to_string(),
        check: of.check().to_string(),
        count: o.caught as u64,
        unit: format!("of {} mutants caught", o.total_mutants),
        detail: format!(
            "{} missed, {} timed out, {} unviable; arguments: {}",
            o.missed,
            o.timeout,
            o.unviable,
            if args.is_empty() {
                "none (every mutant)".to_string()
            } else {
                args.join(" ")
            }
        ),
        secs,
    };
    Ok((vec![record], o.missed == 0 && o.timeout == 0))
}

fn summarize(o: &Outcomes, wall: f64) -> String {
    let mut per_mutant: Vec<f64> = o
        .outcomes
        .iter()
        .filter(|x| x.scenario != serde_json::Value::String("Baseline".into()))
        .map(|x| x.phase_results.iter().map(|p| p.duration).sum())
        .collect();
    per_mutant.sort_by(f64::total_cmp);
    let median = per_mutant.get(per_mutant.len() / 2).copied().unwrap_or(0.0);
    let baseline: f64 = o
        .outcomes
        .iter()
        .filter(|x| x.scenario == serde_json::Value::String("Baseline".into()))
        .flat_map(|x| x.phase_results.iter().map(|p| p.duration))
        .sum();
    let mut s = String::new();
    let _ = writeln!(s, "# Latest `cargo mutants` outcome\n");
    let _ = writeln!(
        s,
        "Written by `cargo xtask mutants` (a plain `cargo mutants` run with the settings of \
         `.cargo/mutants.toml`); cargo-mutants {}, {} to {}.\n",
        o.cargo_mutants_version, o.start_time, o.end_time
    );
    let _ = writeln!(s, "| total | caught | missed | timeout | unviable |");
    let _ = writeln!(s, "|---:|---:|---:|---:|---:|");
    let _ = writeln!(
        s,
        "| {} | {} | {} | {} | {} |\n",
        o.total_mutants, o.caught, o.missed, o.timeout, o.unviable
    );
    let _ = writeln!(
        s,
        "Wall time {:.0} s ({:.1} min), of which the unmutated baseline (a clean build and \
         one test run) {:.0} s; median per mutant {:.1} s (build + test), slowest {:.1} s.",
        wall,
        wall / 60.0,
        baseline,
        median,
        per_mutant.last().copied().unwrap_or(0.0)
    );
    let missed: Vec<&Outcome> = o
        .outcomes
        .iter()
        .filter(|x| x.summary == "MissedMutant" || x.summary == "Timeout")
        .collect();
    if !missed.is_empty() {
        let _ = writeln!(s, "\nNot caught:\n");
        for m in missed {
            let name = m
                .scenario
                .pointer("/Mutant/name")
                .and_then(|v| v.as_str())
                .unwrap_or("?");
            let _ = writeln!(s, "- {} ({})", name, m.summary);
        }
    }
    s
}

/// The generated programs checked against the executable specification (`models/spec.rs`,
/// `models/generated.rs`), one check per build: what `--by-hand --generated` runs against
/// every hand-made mutant instead of its own checks, at the tests' own sizes (`spec_sizes`).
const GENERATED: [Check; 3] = [
    Check {
        name: "shuttle `against_the_spec::generated_programs_match_the_specification`",
        build: "shuttle",
        args: &[
            "test",
            "-p",
            "parksema",
            "--features",
            "shuttle",
            "--test",
            "shuttle",
            "--",
            "--exact",
            "against_the_spec::generated_programs_match_the_specification",
        ],
    },
    Check {
        name: "loom `generated_programs_match_the_specification`",
        build: "loom",
        args: &[
            "test",
            "-p",
            "parksema",
            "--features",
            "loom",
            "--test",
            "loom",
            "--",
            "--exact",
            "generated_programs_match_the_specification",
        ],
    },
    Check {
        name: "real `stress::generated_programs_match_the_specification` (release)",
        build: "real",
        args: &[
            "test",
            "-p",
            "parksema",
            "--release",
            "--test",
            "stress",
            "--",
            "--exact",
            "generated_programs_match_the_specification",
        ],
    },
];

/// The result cell of a mutant that does not apply to the source as it is.
const NOT_APPLIED: &str = "not applied";

/// The shuttle check's program count when `PARKSEMA_SPEC_PROGRAMS` is unset (the test's own
/// default, `models/shuttle.rs`).
const SPEC_PROGRAMS: u32 = 2000;

/// A copy of the workspace (`target/by-hand/tree`, with its own target directory) in which
/// the hand-made mutants are applied and the checks run.
struct WorkCopy {
    cargo: String,
    tree: PathBuf,
    target: PathBuf,
}

impl WorkCopy {
    /// Copies the workspace at `root` afresh.
    fn new(root: &Path) -> Result<Self, String> {
        let work = root.join("target").join("by-hand");
        let tree = work.join("tree");
        let _ = fs::remove_dir_all(&tree);
        copy_tree(root, &tree)
            .map_err(|e| format!("could not copy the workspace to {}: {e}", tree.display()))?;
        Ok(WorkCopy {
            cargo: std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string()),
            tree,
            target: work.join("target"),
        })
    }

    /// Runs `check` in the copy: whether it passed, its output (stdout, then stderr) and its
    /// seconds.
    fn run(&self, check: &Check) -> (bool, String, f64) {
        let start = Instant::now();
        eprintln!("xtask: cargo {}", check.args.join(" "));
        let out = Command::new(&self.cargo)
            .current_dir(&self.tree)
            .env("CARGO_TARGET_DIR", &self.target)
            .env("WATCHDOG_STALL_SECS", "10")
            // Panic messages without backtraces, so the evidence is the message.
            .env("RUST_BACKTRACE", "0")
            .args(check.args)
            .stdin(Stdio::null())
            .output();
        let secs = start.elapsed().as_secs_f64();
        match out {
            Ok(out) => {
                // cargo reports a test binary's abort with an exit code; cargo itself ended
                // by a signal was stopped from outside, and that is no catch. The report
                // holds the mutants before this one (`--generated` writes it as it goes).
                if out.status.code().is_none() {
                    eprintln!(
                        "xtask: cargo was stopped from outside ({}); ending the run",
                        out.status
                    );
                    std::process::exit(1);
                }
                let text = format!(
                    "{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                // Nor is a test binary killed by SIGKILL or SIGTERM, which no check sends
                // itself (a loom deadlock report aborts: SIGABRT).
                if let Some(line) = text.lines().find(|l| {
                    l.contains("(signal: 9, SIGKILL") || l.contains("(signal: 15, SIGTERM")
                }) {
                    eprintln!("xtask: a test was stopped from outside ({line}); ending the run");
                    std::process::exit(1);
                }
                (out.status.success(), text, secs)
            }
            Err(e) => (false, format!("could not start cargo: {e}"), secs),
        }
    }

    /// Runs each check on the unmutated copy, where it must pass; an error names the first
    /// that fails.
    fn baseline(&self, checks: &[Check]) -> Result<(), String> {
        for check in checks {
            let (ok, text, secs) = self.run(check);
            eprintln!(
                "xtask: baseline {}: {} in {secs:.0} s",
                check.name,
                if ok { "passes" } else { "FAILS" }
            );
            if !ok {
                return Err(format!(
                    "the unmutated tree must pass {}: {}",
                    check.name,
                    evidence(&text)
                ));
            }
        }
        Ok(())
    }

    /// How often `m`'s original text occurs in its file in the copy (it applies if once).
    fn occurrences(&self, m: &HandMutant) -> Result<usize, String> {
        let text =
            fs::read_to_string(self.tree.join(m.file)).map_err(|e| format!("{}: {e}", m.file))?;
        Ok(text.matches(m.find).count())
    }

    /// Applies `m` to the copy, runs `f`, and restores the file.
    fn with_mutant<T>(&self, m: &HandMutant, f: impl FnOnce() -> T) -> Result<T, String> {
        let path = self.tree.join(m.file);
        let original = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", m.file))?;
        if original.matches(m.find).count() != 1 {
            return Err(format!(
                "`{}` must occur exactly once in {} (mutant {})",
                m.find, m.file, m.id
            ));
        }
        let write = |text: &str| fs::write(&path, text).map_err(|e| format!("{}: {e}", m.file));
        write(&original.replacen(m.find, m.replace, 1))?;
        let result = f();
        write(&original)?;
        Ok(result)
    }
}

/// Whether `m` is selected by `--only` (a substring of its id; none given: every mutant).
fn selected(m: &HandMutant, only: &[String]) -> bool {
    only.is_empty() || only.iter().any(|s| m.id.contains(s.as_str()))
}

/// A table row's cells (a report's rows escape every `|` inside a cell).
fn cells(row: &str) -> Vec<&str> {
    let row = row.trim();
    let row = row.strip_prefix("| ").unwrap_or(row);
    row.strip_suffix(" |").unwrap_or(row).split(" | ").collect()
}

/// The table rows of a report: this run's for the mutants it ran (`fresh`), an earlier
/// report's (`earlier`) for the others, in the order of `mutants`. A row belongs to the
/// mutant its first cell names.
fn merge_rows(mutants: &[HandMutant], fresh: &[(&str, Vec<String>)], earlier: &str) -> Vec<String> {
    let mut rows = Vec::new();
    for m in mutants {
        match fresh.iter().find(|(id, _)| *id == m.id) {
            Some((_, new)) => rows.extend(new.iter().cloned()),
            None => rows.extend(
                earlier
                    .lines()
                    .filter(|l| l.starts_with("| ") && cells(l)[0] == m.id)
                    .map(str::to_string),
            ),
        }
    }
    rows
}

/// Applies each hand-made mutant whose id contains one of `only` (none: every mutant) to a
/// copy of the workspace and runs its checks, which must each fail; each check is first run
/// on the unmutated copy, where it must pass. With `generated`, the checks are instead the
/// generated programs against the specification in each build (`GENERATED`), and the report
/// records what each build catches (a miss is an outcome, not a failure). Writes
/// `mutants/by-hand.md` (or `mutants/by-hand-generated.md`); with `only`, the rows of the
/// mutants not run are kept from the file as it was.
pub(crate) fn by_hand(only: &[String], generated: bool) -> ExitCode {
    let start = Instant::now();
    let root = crate::workspace_root();
    let mutants: Vec<&HandMutant> = MUTANTS.iter().filter(|m| selected(m, only)).collect();
    if mutants.is_empty() {
        eprintln!("xtask: no hand-made mutant's id contains any of {only:?}");
        return ExitCode::FAILURE;
    }
    let copy = match WorkCopy::new(&root) {
        Ok(copy) => copy,
        Err(e) => {
            eprintln!("xtask: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut checks: Vec<Check> = Vec::new();
    if generated {
        checks.extend(GENERATED);
    } else {
        for m in &mutants {
            for check in m.checks {
                if !checks.contains(check) {
                    checks.push(*check);
                }
            }
        }
    }
    if let Err(e) = copy.baseline(&checks) {
        eprintln!("xtask: {e}");
        return ExitCode::FAILURE;
    }

    let path = root.join("mutants").join(if generated {
        "by-hand-generated.md"
    } else {
        "by-hand.md"
    });
    let earlier = if only.is_empty() {
        String::new()
    } else {
        fs::read_to_string(&path).unwrap_or_default()
    };
    let partial = (!only.is_empty()).then_some(only);
    // Writes the report with this run's rows so far; returns its rows.
    let write_report = |fresh: &[(&str, Vec<String>)]| -> Result<Vec<String>, String> {
        let rows = merge_rows(MUTANTS, fresh, &earlier);
        let report = if generated {
            render_generated(
                MUTANTS,
                &rows,
                partial,
                &spec_sizes(),
                start.elapsed().as_secs_f64(),
            )
        } else {
            render_own(MUTANTS, &rows, partial)
        };
        fs::write(&path, report).map_err(|e| format!("could not write {}: {e}", path.display()))?;
        Ok(rows)
    };

    let mut fresh: Vec<(&str, Vec<String>)> = Vec::new();
    let mut missed = 0;
    for m in &mutants {
        // A mutant whose text the source no longer holds ends `--by-hand` (below, as it always
        // has); against the generated programs it is a row per build, and the run goes on.
        if generated {
            match copy.occurrences(m) {
                Ok(1) => {}
                Ok(times) => {
                    eprintln!("xtask: {}: not applied ({times} occurrences)", m.id);
                    let promise = m.promise.map_or("·".to_string(), |p| p.to_string());
                    let rows = GENERATED
                        .iter()
                        .map(|check| {
                            format!(
                                "| {} | {promise} | {} | {NOT_APPLIED} | 0 | its original text \
                                 occurs {times} times in {}, not once |",
                                m.id, check.build, m.file
                            )
                        })
                        .collect();
                    fresh.push((m.id, rows));
                    continue;
                }
                Err(e) => {
                    eprintln!("xtask: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
        let run = copy.with_mutant(m, || {
            let mut rows = Vec::new();
            let mut caught_by = 0;
            let checks = if generated { &GENERATED[..] } else { m.checks };
            for check in checks {
                let (passed, text, secs) = copy.run(check);
                if !passed {
                    caught_by += 1;
                }
                let result = if passed { "**MISSED**" } else { "caught" };
                eprintln!("xtask: {}: {result} by {} in {secs:.0} s", m.id, check.name);
                // A miss has no failure line; `--by-hand` has always shown the last line
                // of the passing run's output there.
                let why = if passed && generated {
                    "·".to_string()
                } else if generated {
                    spec_evidence(&text)
                } else {
                    evidence(&text)
                }
                .replace('|', "\\|");
                let promise = m.promise.map_or("·".to_string(), |p| p.to_string());
                rows.push(if generated {
                    format!(
                        "| {} | {promise} | {} | {result} | {secs:.0} | {why} |",
                        m.id, check.build
                    )
                } else {
                    format!(
                        "| {} | {promise} | {} | {} | {result} | {secs:.0} | {why} |",
                        m.id, check.name, check.build
                    )
                });
            }
            (rows, caught_by == checks.len())
        });
        match run {
            Ok((rows, all)) => {
                if !all {
                    missed += 1;
                }
                fresh.push((m.id, rows));
            }
            Err(e) => {
                eprintln!("xtask: {e}");
                return ExitCode::FAILURE;
            }
        }
        // A long run leaves its rows so far if it is stopped (the summaries count the
        // mutants not yet run).
        if generated && let Err(e) = write_report(&fresh) {
            eprintln!("xtask: {e}");
            return ExitCode::FAILURE;
        }
    }

    let rows = match write_report(&fresh) {
        Ok(rows) => rows,
        Err(e) => {
            eprintln!("xtask: {e}");
            return ExitCode::FAILURE;
        }
    };
    if generated {
        for line in build_summaries(MUTANTS, &rows) {
            eprintln!("xtask: {line}");
        }
        eprintln!(
            "xtask: {} hand-made mutants against the generated programs in {:.0} s; report in {}",
            mutants.len(),
            start.elapsed().as_secs_f64(),
            path.display()
        );
        return ExitCode::SUCCESS;
    }
    eprintln!(
        "xtask: {} of {} hand-made mutants caught by all their checks; report in {}",
        mutants.len() - missed,
        mutants.len(),
        path.display()
    );
    if missed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The sentence that says which `--only` run wrote a report, if one did.
fn partial_note(only: Option<&[String]>) -> String {
    only.map_or(String::new(), |only| {
        format!(
            "\nLast written by a run with `--only` {}: the rows of the mutants it did not \
             select are kept from an earlier run.\n",
            only.iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// `mutants/by-hand.md`: each mutant's rows against its own checks, and how many mutants were
/// caught by every check listed for them (a mutant without a caught row for each is not).
fn render_own(mutants: &[HandMutant], rows: &[String], only: Option<&[String]>) -> String {
    let mut report = String::from(
        "# Hand-made mutants\n\nWritten by `cargo xtask mutants --by-hand`: each mutant below \
         is one that `cargo mutants` cannot generate (an ordering, a literal, an argument, a \
         method call) or the breakage that demonstrates a row of \
         [`docs/promises.md`](../docs/promises.md). It is applied to a copy of the workspace \
         and run against each of its checks, which pass on the unmutated copy and must each \
         fail: in two builds wherever two can see the breakage (the last column says why \
         not, where not).\n\n\
         | mutant | promise | check | build | result | seconds | first failure line |\n\
         |---|---:|---|---|---|---:|---|\n",
    );
    for row in rows {
        let _ = writeln!(report, "{row}");
    }
    let caught = mutants
        .iter()
        .filter(|m| {
            m.checks.iter().all(|check| {
                rows.iter().any(|r| {
                    let c = cells(r);
                    c.len() > 4 && c[0] == m.id && c[2] == check.name && c[4] == "caught"
                })
            })
        })
        .count();
    let _ = writeln!(
        report,
        "\n{caught} of {} mutants caught by every check listed for them. Seconds include the \
         incremental build of the mutated crate.",
        mutants.len()
    );
    report.push_str(&partial_note(only));
    let one_build: Vec<String> = mutants
        .iter()
        .filter_map(|m| m.why_one_build.map(|why| format!("- {}: {why}.", m.id)))
        .collect();
    if !one_build.is_empty() {
        let _ = writeln!(
            report,
            "\nWhere a mutant's checks are all in one build:\n\n{}",
            one_build.join("\n")
        );
    }
    report
}

/// The generated checks' sizes, as the report states them: the shuttle program count
/// follows `PARKSEMA_SPEC_PROGRAMS` and its schedules `SHUTTLE_ITERATIONS`, as in the tests.
fn spec_sizes() -> String {
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u32>().ok());
    let programs = env("PARKSEMA_SPEC_PROGRAMS").unwrap_or(SPEC_PROGRAMS);
    let schedules = 50 * env("SHUTTLE_ITERATIONS").unwrap_or(1);
    let mut s = format!(
        "shuttle {programs} programs × {schedules} random schedules, stopping at the first \
         failing program; loom 24 programs at preemption bound 2; real threads 300 programs \
         × 20 runs (release build)"
    );
    if programs != SPEC_PROGRAMS {
        let _ = write!(
            s,
            " (the shuttle count set by `PARKSEMA_SPEC_PROGRAMS`; the test's own is \
             {SPEC_PROGRAMS}: a mutant the programs before that count do not catch is \
             reported missed)"
        );
    }
    s
}

/// Each build's line: how many mutants its generated check caught, and which it missed.
fn build_summaries(mutants: &[HandMutant], rows: &[String]) -> Vec<String> {
    GENERATED
        .iter()
        .map(|check| {
            let result = |m: &HandMutant| {
                rows.iter().find_map(|r| {
                    let c = cells(r);
                    (c.len() > 3 && c[0] == m.id && c[2] == check.build).then(|| c[3].to_string())
                })
            };
            let caught = mutants
                .iter()
                .filter(|m| result(m).as_deref() == Some("caught"))
                .count();
            let missed: Vec<&str> = mutants
                .iter()
                .filter(|m| result(m).as_deref() == Some("**MISSED**"))
                .map(|m| m.id)
                .collect();
            let not_run = mutants.iter().filter(|m| result(m).is_none()).count();
            let not_applied: Vec<&str> = mutants
                .iter()
                .filter(|m| result(m).as_deref() == Some(NOT_APPLIED))
                .map(|m| m.id)
                .collect();
            let mut line = format!("{}: {caught} of {} caught", check.build, mutants.len());
            if not_run > 0 {
                let _ = write!(line, " ({not_run} not run)");
            }
            if !not_applied.is_empty() {
                let _ = write!(
                    line,
                    " ({} not applied: {})",
                    not_applied.len(),
                    not_applied.join("; ")
                );
            }
            if !missed.is_empty() {
                let _ = write!(line, "; missed: {}", missed.join("; "));
            }
            line
        })
        .collect()
}

/// `mutants/by-hand-generated.md`: each mutant's row per build against the generated
/// programs, each build's summary line, and this run's time.
fn render_generated(
    mutants: &[HandMutant],
    rows: &[String],
    only: Option<&[String]>,
    sizes: &str,
    secs: f64,
) -> String {
    let mut report = format!(
        "# Hand-made mutants against the generated programs\n\nWritten by `cargo xtask \
         mutants --by-hand --generated`: each mutant of [`by-hand.md`](by-hand.md) is applied \
         to a copy of the workspace and run, instead of its own checks, against the generated \
         programs checked against the executable specification (`models/spec.rs`, \
         `models/generated.rs`) in each build; each passes on the unmutated copy. A check that \
         fails is *caught*, whatever the failure (a loom deadlock report aborts its process); a \
         mutant whose original text the source no longer holds once is *not applied*. \
         Sizes: {sizes}. Seconds include the incremental build of the mutated crate in that \
         build.\n\n\
         | mutant | promise | build | result | seconds | first failure line |\n\
         |---|---:|---|---|---:|---|\n"
    );
    for row in rows {
        let _ = writeln!(report, "{row}");
    }
    report.push('\n');
    for line in build_summaries(mutants, rows) {
        let _ = writeln!(report, "- {line}");
    }
    let _ = writeln!(
        report,
        "\nThe last run took {secs:.0} s ({:.1} min), baselines included.",
        secs / 60.0
    );
    report.push_str(&partial_note(only));
    report
}

/// The first failure line of a generated check: the shuttle test's reason for the failing
/// program (the `left` of its assertion) where there is one, else what `evidence` finds.
fn spec_evidence(output: &str) -> String {
    output
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("left: Some("))
        .map(|l| l.chars().take(160).collect())
        .unwrap_or_else(|| evidence(output))
}

/// The line of a failing run's output that best says why it failed: libtest's failure
/// section when there is one (earlier "panicked at" lines may come from tests that expect a
/// panic), else the whole output; marks are tried in order of how specific they are.
fn evidence(output: &str) -> String {
    const MARKS: [&str; 16] = [
        "Causality violation",
        "deadlock",
        "park table:",
        "close lost",
        "refused add",
        "impossible results",
        "WAITERS left set",
        "MAX_PERMITS must",
        "did not see",
        "STALL",
        "stall",
        "over-issue",
        "permits lost",
        "panicked at",
        "error[",
        "FAILED",
    ];
    let region = output
        .find("\nfailures:\n")
        .map_or(output, |i| &output[i..]);
    let lines: Vec<&str> = region.lines().collect();
    for mark in MARKS {
        if let Some(i) = lines.iter().position(|l| l.contains(mark)) {
            // A panic location is followed by its message on the next line.
            let next = if mark == "panicked at" {
                lines.get(i + 1).copied().unwrap_or("")
            } else {
                ""
            };
            let text = format!("{} {}", lines[i].trim(), next.trim());
            return text.trim().chars().take(160).collect();
        }
    }
    lines
        .iter()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.trim().chars().take(160).collect())
        .unwrap_or_default()
}

/// Copies the workspace's sources (not `target/`, `.git/` or mutants output) to `to`.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name == "target" || name == ".git" || name.starts_with("mutants.out") {
            continue;
        }
        let dest: PathBuf = to.join(&*name);
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &dest)?;
        } else {
            fs::copy(entry.path(), dest)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_exclusion_counts_the_mutants_it_matches() {
        let names = [
            "src/w.rs:1:5: replace | with ^ in next_timer",
            "src/w.rs:1:9: replace | with ^ in next_timer",
            "src/w.rs:1:5: replace | with & in next_timer",
            "src/g.rs:7:18: replace & with | in Semaphore::release_slow",
        ];
        let patterns = [
            r"replace \| with \^ in next_timer$".to_string(),
            r"replace & with \| in Semaphore::release_slow$".to_string(),
            r"in may_park$".to_string(),
        ];
        assert_eq!(exclude_matches(&patterns, &names).unwrap(), [2, 1, 0]);
        assert!(exclude_matches(&["(".to_string()], &names).is_err());
    }

    use super::*;

    const ONE: Check = Check {
        name: "loom `one`",
        build: "loom",
        args: &[],
    };
    const TWO: Check = Check {
        name: "shuttle `two`",
        build: "shuttle",
        args: &[],
    };

    fn mutant(id: &'static str, checks: &'static [Check]) -> HandMutant {
        HandMutant {
            id,
            promise: Some(3),
            file: "src/semaphore.rs",
            find: "a",
            replace: "b",
            checks,
            why_one_build: None,
        }
    }

    fn own_row(id: &str, check: &Check, result: &str) -> String {
        format!(
            "| {id} | 3 | {} | {} | {result} | 1 | why \\| not |",
            check.name, check.build
        )
    }

    #[test]
    fn only_selects_by_substring_of_the_id() {
        let m = mutant("under FIFO an acquirer sets WAITERS", &[ONE]);
        assert!(selected(&m, &[]));
        assert!(selected(&m, &["nope".to_string(), "FIFO".to_string()]));
        assert!(!selected(&m, &["fifo".to_string()]));
    }

    #[test]
    fn cells_split_on_unescaped_bars_only() {
        assert_eq!(cells("| a | 3 | c | x \\| y |"), ["a", "3", "c", "x \\| y"]);
        assert_eq!(cells("| a | b | · |"), ["a", "b", "·"]);
    }

    #[test]
    fn merge_keeps_the_rows_of_mutants_not_run_in_the_mutants_order() {
        let mutants = [
            mutant("first", &[ONE]),
            mutant("second", &[ONE, TWO]),
            mutant("third", &[TWO]),
            mutant("fourth", &[TWO]),
        ];
        let earlier = format!(
            "# Title\n\n| mutant | promise |\n|---|---:|\n{}\n{}\n{}\n{}\n\n1 of 3 mutants\n",
            own_row("first", &ONE, "caught"),
            own_row("second", &ONE, "**MISSED**"),
            own_row("third", &TWO, "caught"),
            // A row of a mutant no longer listed is dropped.
            own_row("gone", &TWO, "caught"),
        );
        let fresh_second = vec![
            own_row("second", &ONE, "caught"),
            own_row("second", &TWO, "caught"),
        ];
        let rows = merge_rows(&mutants, &[("second", fresh_second.clone())], &earlier);
        assert_eq!(
            rows,
            [
                own_row("first", &ONE, "caught"),
                fresh_second[0].clone(),
                fresh_second[1].clone(),
                own_row("third", &TWO, "caught"),
            ]
        );
        // A whole run reads no earlier rows.
        assert_eq!(merge_rows(&mutants[..1], &[], ""), Vec::<String>::new());
    }

    #[test]
    fn own_report_counts_a_mutant_caught_only_with_a_caught_row_per_check() {
        let mutants = [
            mutant("all caught", &[ONE, TWO]),
            mutant("one missed", &[ONE, TWO]),
            mutant("a row short", &[ONE, TWO]),
        ];
        let rows = [
            own_row("all caught", &ONE, "caught"),
            own_row("all caught", &TWO, "caught"),
            own_row("one missed", &ONE, "caught"),
            own_row("one missed", &TWO, "**MISSED**"),
            own_row("a row short", &ONE, "caught"),
        ]
        .map(String::from);
        let whole = render_own(&mutants, &rows, None);
        assert!(whole.contains(&format!("\n{}\n", rows[3])));
        assert!(whole.contains("\n1 of 3 mutants caught by every check listed for them."));
        assert!(!whole.contains("--only"));
        let only = ["short".to_string()];
        let partial = render_own(&mutants, &rows, Some(&only));
        assert!(partial.contains("Last written by a run with `--only` `short`"));
    }

    #[test]
    fn generated_report_has_a_summary_line_per_build() {
        let mutants = [
            mutant("m1", &[ONE]),
            mutant("m2", &[ONE]),
            mutant("m3", &[ONE]),
        ];
        let row = |id: &str, build: &str, result: &str| {
            format!("| {id} | 3 | {build} | {result} | 7 | · |")
        };
        let rows = [
            row("m1", "shuttle", "caught"),
            row("m1", "loom", "caught"),
            row("m1", "real", "**MISSED**"),
            row("m2", "shuttle", "**MISSED**"),
            row("m2", "loom", "caught"),
            row("m2", "real", "**MISSED**"),
            row("m3", "shuttle", "caught"),
            row("m3", "loom", NOT_APPLIED),
        ]
        .map(String::from);
        assert_eq!(
            build_summaries(&mutants, &rows),
            [
                "shuttle: 2 of 3 caught; missed: m2",
                "loom: 2 of 3 caught (1 not applied: m3)",
                "real: 0 of 3 caught (1 not run); missed: m1; m2",
            ]
        );
        let report = render_generated(&mutants, &rows, None, "tiny sizes", 90.0);
        assert!(report.contains("Sizes: tiny sizes."));
        assert!(report.contains("\n- shuttle: 2 of 3 caught; missed: m2\n"));
        assert!(report.contains("took 90 s (1.5 min)"));
    }

    #[test]
    fn spec_evidence_prefers_the_failing_programs_reason() {
        let shuttle = "failures:\n\n---- x stdout ----\nspec: 2000 programs\n\nthread 'x' \
                       panicked at models/shuttle.rs:1099:9:\nassertion `left == right` \
                       failed: the correct semaphore failed a generated program\n  left: \
                       Some(\"spec: a call waits forever in Program\")\n right: None\n";
        assert_eq!(
            spec_evidence(shuttle),
            "left: Some(\"spec: a call waits forever in Program\")"
        );
        let loom = "thread 'g' panicked at models/generated.rs:582:9:\nspec: x\n";
        assert_eq!(spec_evidence(loom), evidence(loom));
    }
}
