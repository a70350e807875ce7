//! `cargo xtask mutants`: runs `cargo mutants` and records its outcome in `mutants/`, or
//! (`--by-hand`) applies the mutants it cannot make and checks that each is caught.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use serde::Deserialize;

use crate::by_hand::{Check, MUTANTS};
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

/// Applies each hand-made mutant to a copy of the workspace and runs its check, which must
/// fail; each check is first run on the unmutated copy, where it must pass. Writes
/// `mutants/by-hand.md`.
pub(crate) fn by_hand() -> ExitCode {
    let root = crate::workspace_root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let work = root.join("target").join("by-hand");
    let tree = work.join("tree");
    let _ = fs::remove_dir_all(&tree);
    if let Err(e) = copy_tree(&root, &tree) {
        eprintln!(
            "xtask: could not copy the workspace to {}: {e}",
            tree.display()
        );
        return ExitCode::FAILURE;
    }
    let target = work.join("target");
    let check_run = |check: &Check| -> (bool, String, f64) {
        let start = Instant::now();
        eprintln!("xtask: cargo {}", check.args.join(" "));
        let out = Command::new(&cargo)
            .current_dir(&tree)
            .env("CARGO_TARGET_DIR", &target)
            .env("WATCHDOG_STALL_SECS", "10")
            // Panic messages without backtraces, so the evidence is the message.
            .env("RUST_BACKTRACE", "0")
            .args(check.args)
            .stdin(Stdio::null())
            .output();
        let secs = start.elapsed().as_secs_f64();
        match out {
            Ok(out) => {
                let text = format!(
                    "{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                (out.status.success(), evidence(&text), secs)
            }
            Err(e) => (false, format!("could not start cargo: {e}"), secs),
        }
    };

    let mut checks: Vec<Check> = Vec::new();
    for m in MUTANTS {
        for check in m.checks {
            if !checks.contains(check) {
                checks.push(*check);
            }
        }
    }
    for check in &checks {
        let (ok, why, secs) = check_run(check);
        eprintln!(
            "xtask: baseline {}: {} in {secs:.0} s",
            check.name,
            if ok { "passes" } else { "FAILS" }
        );
        if !ok {
            eprintln!("xtask: the unmutated tree must pass {}: {why}", check.name);
            return ExitCode::FAILURE;
        }
    }

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
    let mut missed = 0;
    let mut one_build = Vec::new();
    for m in MUTANTS {
        let path = tree.join(m.file);
        let original = match fs::read_to_string(&path) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("xtask: {}: {e}", m.file);
                return ExitCode::FAILURE;
            }
        };
        if original.matches(m.find).count() != 1 {
            eprintln!(
                "xtask: `{}` must occur exactly once in {} (mutant {})",
                m.find, m.file, m.id
            );
            return ExitCode::FAILURE;
        }
        let write = |text: &str| fs::write(&path, text).expect("the copy is writable");
        write(&original.replacen(m.find, m.replace, 1));
        let mut caught_by = 0;
        for check in m.checks {
            let (passed, why, secs) = check_run(check);
            if !passed {
                caught_by += 1;
            }
            let result = if passed { "**MISSED**" } else { "caught" };
            eprintln!("xtask: {}: {result} by {} in {secs:.0} s", m.id, check.name);
            let _ = writeln!(
                report,
                "| {} | {} | {} | {} | {result} | {secs:.0} | {} |",
                m.id,
                m.promise.map_or("·".to_string(), |p| p.to_string()),
                check.name,
                check.build,
                why.replace('|', "\\|")
            );
        }
        write(&original);
        if caught_by < m.checks.len() {
            missed += 1;
        }
        if let Some(why) = m.why_one_build {
            one_build.push(format!("- {}: {why}.", m.id));
        }
    }
    let _ = writeln!(
        report,
        "\n{} of {} mutants caught by every check listed for them. Seconds include the \
         incremental build of the mutated crate.",
        MUTANTS.len() - missed,
        MUTANTS.len()
    );
    if !one_build.is_empty() {
        let _ = writeln!(
            report,
            "\nWhere a mutant's checks are all in one build:\n\n{}",
            one_build.join("\n")
        );
    }
    let path = root.join("mutants").join("by-hand.md");
    if let Err(e) = fs::write(&path, report) {
        eprintln!("xtask: could not write {}: {e}", path.display());
        return ExitCode::FAILURE;
    }
    eprintln!(
        "xtask: {} of {} hand-made mutants caught by all their checks; report in {}",
        MUTANTS.len() - missed,
        MUTANTS.len(),
        path.display()
    );
    if missed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
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
