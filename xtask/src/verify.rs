//! `cargo xtask verify`: every check of every build, one progress display, one report.
//!
//! Each build's `cargo test` runs under the `watchdog` supervisor and its tests' results are
//! read from libtest's JSON events (`steps.rs`), while the checks append their sizes and their
//! catches to `target/verify/records.jsonl` (`PARKSEMA_REPORT`, see `report.rs`). At the end
//! the report joins the two: each check with its result and size, then the flaws × checks
//! matrix against `matrix.rs`'s expectations.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::matrix::{self, Expect};
use crate::report::Record;

mod steps;

use steps::{BOOTSTRAP_RUNNER, StepOutcome, announce, failed_step, run_step, rustdoc_wrapper};

/// The settings of one run.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Settings {
    /// Every cell at full size (the nightly job).
    pub(crate) full: bool,
    /// Raise every bounded loom model to at least this bound.
    pub(crate) loom_bound: Option<usize>,
    /// Multiply every shuttle schedule count by this.
    pub(crate) shuttle_factor: usize,
    /// The seed every shuttle scheduler starts from (`SHUTTLE_RANDOM_SEED`).
    pub(crate) shuttle_seed: u64,
    /// The seed of every proptest runner that takes its seed from the environment
    /// (`PROPTEST_RNG_SEED`).
    pub(crate) proptest_seed: u64,
    /// Where loom keeps a checkpoint file per model, if anywhere.
    pub(crate) loom_checkpoints: Option<PathBuf>,
    /// The supervisor's stall limit, seconds.
    pub(crate) stall: u64,
}

/// A column of the run: a cargo build of the test suite, or a checker that `xtask` drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Step {
    /// Real `parking_lot_core`, real threads (release build): stress, API, proptest, the
    /// real-thread catch tests and their matrix, and the soak's short runs.
    Real,
    /// Loom's atomics and parkcheck's park-table model: the semaphore's models, parkcheck's
    /// conformance suite and unfaithful variants, the condition variable's and the
    /// reader-writer lock's models.
    Loom,
    /// Shuttle's atomics and parkcheck's park-table model (and the shuttle-driven proptest),
    /// with the same suites as `Loom`.
    Shuttle,
    /// Miri on the real build (`--miri`).
    Miri,
    /// ThreadSanitizer on the real build (`--tsan`).
    Tsan,
    /// `cargo mutants` (`--mutants`).
    Mutants,
    /// `cargo mutants` on the park-table model, `parkcheck` (`--model-mutants`; settings in
    /// `parkcheck/mutants.toml`): its conformance suite and own tests against each mutant.
    ModelMutants,
}

impl Step {
    fn name(self) -> &'static str {
        match self {
            Step::Real => "real",
            Step::Loom => "loom",
            Step::Shuttle => "shuttle",
            Step::Miri => "miri",
            Step::Tsan => "tsan",
            Step::Mutants => "mutants",
            Step::ModelMutants => "model-mutants",
        }
    }

    /// The `cargo test` arguments of a cargo-test step: the semaphore's suite, the park-table
    /// model's (`parkcheck`: its conformance suite and, under the checkers, its unfaithful
    /// variants) and the two other primitives' (`parksema-condvar`, `parksema-rwlock`), each
    /// with its deliberate flaws compiled in.
    ///
    /// Each runs with `--no-fail-fast`: without it cargo stops at the first test binary that
    /// fails, so one failure would leave every later binary unrun and their records
    /// unwritten, and the report would show their gated cells as `NOT RUN` instead of the
    /// one failure as itself.
    fn cargo_test_args(self) -> &'static [&'static str] {
        match self {
            // One test thread: the stress scenarios start up to 33 threads each and are meant
            // to contend with themselves, not with each other.
            Step::Real => &[
                "test",
                "--config",
                BOOTSTRAP_RUNNER,
                "--no-fail-fast",
                "--release",
                "-p",
                "parksema",
                "-p",
                "parksema-watchdog",
                "-p",
                "parkcheck",
                "-p",
                "parksema-condvar",
                "-p",
                "parksema-rwlock",
                "-p",
                "parkcheck-parking-lot-0-12",
                "-p",
                "parkcheck-parking-lot-0-13",
                "-p",
                "parkcheck-gen",
                "-p",
                "parkcheck-once-cell",
                "-p",
                "parkcheck-dashmap",
                "-p",
                "event-a",
                "-p",
                "flag-b",
                "--features",
                "parksema/broken_sema,parksema-condvar/broken_condvar,parksema-rwlock/broken_rwlock",
                "--",
                "-Z",
                "unstable-options",
                "--format",
                "json",
                "--test-threads",
                "1",
            ],
            // The test profile: debug assertions on, dependencies (loom) optimized.
            Step::Loom => &[
                "test",
                "--config",
                BOOTSTRAP_RUNNER,
                "--no-fail-fast",
                "-p",
                "parksema",
                "-p",
                "parkcheck",
                "-p",
                "parksema-condvar",
                "-p",
                "parksema-rwlock",
                "-p",
                "parkcheck-parking-lot-0-12",
                "-p",
                "parkcheck-parking-lot-0-13",
                "-p",
                "parkcheck-once-cell",
                "-p",
                "parkcheck-dashmap",
                "-p",
                "event-a",
                "-p",
                "flag-b",
                "--features",
                "parksema/loom,parksema/broken_sema,parkcheck/loom,parkcheck/unfaithful,\
                 parksema-condvar/loom,parksema-condvar/broken_condvar,\
                 parksema-rwlock/loom,parksema-rwlock/broken_rwlock,\
                 parkcheck-parking-lot-0-12/loom,parkcheck-parking-lot-0-12/unfaithful,\
                 parkcheck-parking-lot-0-13/loom,parkcheck-parking-lot-0-13/unfaithful,\
                 parkcheck-once-cell/loom,parkcheck-dashmap/loom,\
                 event-a/loom,flag-b/loom",
                "--",
                "-Z",
                "unstable-options",
                "--format",
                "json",
            ],
            Step::Shuttle => &[
                "test",
                "--config",
                BOOTSTRAP_RUNNER,
                "--no-fail-fast",
                "-p",
                "parksema",
                "-p",
                "parkcheck",
                "-p",
                "parksema-condvar",
                "-p",
                "parksema-rwlock",
                "-p",
                "parkcheck-parking-lot-0-12",
                "-p",
                "parkcheck-parking-lot-0-13",
                "-p",
                "parkcheck-once-cell",
                "-p",
                "parkcheck-dashmap",
                "-p",
                "event-a",
                "-p",
                "flag-b",
                "--features",
                "parksema/shuttle,parksema/broken_sema,parkcheck/shuttle,parkcheck/unfaithful,\
                 parksema-condvar/shuttle,parksema-condvar/broken_condvar,\
                 parksema-rwlock/shuttle,parksema-rwlock/broken_rwlock,\
                 parkcheck-parking-lot-0-12/shuttle,parkcheck-parking-lot-0-13/shuttle,\
                 parkcheck-once-cell/shuttle,parkcheck-dashmap/shuttle,\
                 event-a/shuttle,flag-b/shuttle",
                "--",
                "-Z",
                "unstable-options",
                "--format",
                "json",
            ],
            Step::Miri | Step::Tsan | Step::Mutants | Step::ModelMutants => &[],
        }
    }
}

/// A check in the report.
#[derive(Debug, Clone, Serialize)]
struct CheckRow {
    build: String,
    check: String,
    /// `pass`, `FAIL`.
    result: String,
    /// `count unit, detail`, from the records; empty if the check writes none.
    size: String,
    secs: Option<f64>,
}

/// A cell's flaw, column and check.
type CellKey = (String, String, String);

/// One run of a cell: what it reported (`None`: not caught) and the seconds it took.
type Run = (Option<String>, f64);

/// A cell of the matrix in the report.
#[derive(Debug, Clone, Serialize)]
struct CellRow {
    flaw: String,
    build: String,
    check: String,
    #[serde(flatten)]
    expect: Option<Expect>,
    /// Every run of this cell: the failure it reported, or `None` (not caught).
    runs: Vec<Option<String>>,
    /// Fastest time to a catch.
    time_to_catch: Option<f64>,
    /// `ok`: as expected (or only reported); `MISSED`: an expected catch not seen; `WRONG`:
    /// a cell the verification guide calls blind was caught; `NOT RUN`: gated but not run.
    verdict: String,
}

/// How often one build's search reached one protocol situation.
#[derive(Debug, Clone, Serialize)]
struct CoverageRow {
    build: String,
    check: String,
    situation: String,
    count: u64,
    runs: u64,
    /// Whether the check fails when no run reaches it (the checker builds); real threads
    /// only report theirs.
    required: bool,
}

/// The whole report, as printed and as written by `--json`.
#[derive(Debug, Serialize)]
struct Report {
    /// The schema's version (`docs/report.md`).
    schema: u32,
    passed: bool,
    secs: f64,
    settings: Settings,
    steps: Vec<StepOutcome>,
    checks: Vec<CheckRow>,
    cells: Vec<CellRow>,
    /// What each build's search reached: one row per build, check and situation.
    coverage: Vec<CoverageRow>,
    /// A one-line reason per failure.
    failures: Vec<String>,
}

/// Runs `steps` with `settings`; prints the report, writes it to `json` if asked; returns
/// whether everything passed.
pub(crate) fn verify(settings: Settings, steps: &[Step], json: Option<&Path>) -> bool {
    let root = crate::workspace_root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let start = Instant::now();
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let dir = target.join("verify");
    if let Err(e) = fs::create_dir_all(&dir) {
        eprintln!("xtask: cannot create {}: {e}", dir.display());
        return false;
    }
    let records_file = dir.join("records.jsonl");
    let _ = fs::remove_file(&records_file);

    let mut outcomes = Vec::new();
    // The supervisor: a hang anywhere becomes a stall report with backtraces.
    if steps.iter().any(|s| !s.cargo_test_args().is_empty()) {
        let built = Command::new(&cargo)
            .current_dir(&root)
            .args([
                "build",
                "--release",
                "--quiet",
                "-p",
                "parksema-watchdog",
                "--bin",
                "watchdog",
            ])
            .status();
        if !built.is_ok_and(|s| s.success()) {
            eprintln!("xtask: could not build the watchdog supervisor");
            return false;
        }
    }
    let supervisor = target.join("release").join("watchdog");
    let rustdoc = match rustdoc_wrapper(&dir) {
        Ok(path) => path,
        Err(e) => {
            eprintln!("xtask: cannot write the rustdoc wrapper: {e}");
            return false;
        }
    };
    let mut extra_records = Vec::new();
    for &step in steps {
        let outcome = match step {
            Step::Real | Step::Loom | Step::Shuttle => {
                let mut cmd = Command::new(&supervisor);
                cmd.current_dir(&root)
                    .args(["--stall", &settings.stall.to_string(), "--"])
                    .arg(&cargo)
                    .args(step.cargo_test_args());
                environment(&mut cmd, &settings, &records_file, &rustdoc);
                let outcome = run_step(step, cmd, &dir.join(format!("{}.log", step.name())));
                if step == Step::Real && outcome.passed {
                    // The soak's short runs, correct and against each flaw: real threads too.
                    let started = Instant::now();
                    match crate::soak::soak_records(&root, settings.full) {
                        Ok(records) => extra_records.extend(records),
                        Err(e) => {
                            outcomes.push(failed_step(step, "soak's short runs", &e, started));
                        }
                    }
                }
                outcome
            }
            Step::Miri | Step::Tsan => {
                let started = Instant::now();
                announce(step);
                let result = if step == Step::Miri {
                    crate::sanitizers::miri(&root, settings.full)
                } else {
                    crate::sanitizers::tsan(&root, settings.full)
                };
                match result {
                    Ok(records) => {
                        extra_records.extend(records);
                        StepOutcome {
                            step,
                            command: format!("xtask {}", step.name()),
                            passed: true,
                            secs: started.elapsed().as_secs_f64(),
                            log: None,
                            failure: None,
                            tests: Vec::new(),
                        }
                    }
                    Err(e) => failed_step(step, &format!("xtask {}", step.name()), &e, started),
                }
            }
            Step::Mutants | Step::ModelMutants => {
                let started = Instant::now();
                announce(step);
                let of = if step == Step::Mutants {
                    crate::mutants::Of::Semaphore
                } else {
                    crate::mutants::Of::Model
                };
                match crate::mutants::mutants_records(&root, of) {
                    Ok((records, passed)) => {
                        extra_records.extend(records);
                        let out = of.output(&root);
                        StepOutcome {
                            step,
                            command: of.command(),
                            passed,
                            secs: started.elapsed().as_secs_f64(),
                            failure: (!passed).then(|| {
                                format!("mutants missed or timed out: see {}", out.display())
                            }),
                            log: Some(out),
                            tests: Vec::new(),
                        }
                    }
                    Err(e) => failed_step(step, "cargo mutants", &e, started),
                }
            }
        };
        outcomes.push(outcome);
    }

    let mut records = read_records(&records_file);
    records.extend(extra_records);
    let report = build_report(settings, outcomes, &records, steps, start.elapsed());
    print!("{}", render(&report));
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(&report).expect("the report serializes");
        match fs::write(path, text + "\n") {
            Ok(()) => eprintln!("xtask: report written to {}", path.display()),
            Err(e) => {
                eprintln!("xtask: cannot write {}: {e}", path.display());
                return false;
            }
        }
    }
    report.passed
}

/// The environment every cargo-test step gets: the records file, the fixed seeds, the sizes.
fn environment(cmd: &mut Command, settings: &Settings, records: &Path, rustdoc: &Path) {
    cmd.env("PARKSEMA_REPORT", records)
        .env("RUSTDOC", rustdoc)
        .env("SHUTTLE_RANDOM_SEED", settings.shuttle_seed.to_string())
        .env("PROPTEST_RNG_SEED", settings.proptest_seed.to_string())
        .env("SHUTTLE_ITERATIONS", settings.shuttle_factor.to_string())
        .env("RUST_BACKTRACE", "0");
    if settings.full {
        cmd.env("PARKSEMA_FULL", "1");
    }
    if let Some(bound) = settings.loom_bound {
        cmd.env("PARKSEMA_LOOM_BOUND", bound.to_string());
    }
    if let Some(dir) = &settings.loom_checkpoints {
        cmd.env("PARKSEMA_LOOM_CHECKPOINT_DIR", dir)
            // Every 1 000 executions: a resumed model reaches its failure within that many.
            .env("LOOM_CHECKPOINT_INTERVAL", "1000");
    }
}

fn read_records(path: &Path) -> Vec<Record> {
    let Ok(text) = fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| match serde_json::from_str::<Record>(l) {
            Ok(r) => Some(r),
            Err(e) => {
                eprintln!("xtask: unreadable record {l:?}: {e}");
                None
            }
        })
        .collect()
}

fn build_report(
    settings: Settings,
    steps: Vec<StepOutcome>,
    records: &[Record],
    ran: &[Step],
    elapsed: Duration,
) -> Report {
    let mut failures = Vec::new();
    for s in &steps {
        if !s.passed {
            failures.push(format!(
                "{} failed: {}",
                s.step.name(),
                s.failure
                    .as_deref()
                    .unwrap_or("")
                    .lines()
                    .find(|l| !l.starts_with("exit"))
                    .unwrap_or("see its log")
            ));
        }
    }

    for s in &steps {
        for t in s.tests.iter().filter(|t| t.result == "FAILED") {
            failures.push(format!(
                "{} test failed: {}: {}",
                s.step.name(),
                t.target,
                t.name
            ));
        }
    }

    // Sizes per (build, check), summed over the records of a check that runs several times.
    let mut sizes: BTreeMap<(String, String), (u64, String, String, f64)> = BTreeMap::new();
    for r in records {
        if let Record::Check {
            build,
            check,
            count,
            unit,
            detail,
            secs,
        } = r
        {
            let e = sizes.entry((build.clone(), check.clone())).or_insert((
                0,
                unit.clone(),
                detail.clone(),
                0.0,
            ));
            e.0 += count;
            e.3 += secs;
        }
    }
    let mut checks = Vec::new();
    let mut used = std::collections::BTreeSet::new();
    for s in &steps {
        for t in &s.tests {
            if t.result == "ignored" {
                continue;
            }
            // A record's check is the test's name, or (shuttle, loom) the test's last path
            // segment; proptest's records belong to the test that wrote them.
            let short = t.name.rsplit("::").next().unwrap_or(&t.name).to_string();
            let key = [s.step.name(), "proptest"]
                .iter()
                .map(|b| (b.to_string(), short.clone()))
                .find(|k| sizes.contains_key(k));
            let (size, secs) = match &key {
                Some(k) => {
                    used.insert(k.clone());
                    let (count, unit, detail, secs) = &sizes[k];
                    (format_size(*count, unit, detail), Some(*secs))
                }
                None => (String::new(), None),
            };
            checks.push(CheckRow {
                build: s.step.name().to_string(),
                check: format!("{}: {}", t.target, t.name),
                result: if t.result == "ok" { "pass" } else { "FAIL" }.to_string(),
                size,
                secs,
            });
        }
    }
    // Checks that only `xtask` runs (soak, Miri, TSan, mutants) have records but no test.
    for ((build, check), (count, unit, detail, secs)) in &sizes {
        if used.contains(&(build.clone(), check.clone())) {
            continue;
        }
        let step_passed = steps
            .iter()
            .filter(|s| s.step.name() == build || (build == "proptest"))
            .all(|s| s.passed);
        checks.push(CheckRow {
            build: build.clone(),
            check: check.clone(),
            result: if step_passed { "pass" } else { "FAIL" }.to_string(),
            size: format_size(*count, unit, detail),
            secs: Some(*secs),
        });
    }

    // The matrix: every expected cell, then every observed cell nobody listed.
    let mut observed: BTreeMap<CellKey, Vec<Run>> = BTreeMap::new();
    for r in records {
        if let Record::Cell {
            build,
            check,
            flaw,
            caught,
            secs,
        } = r
        {
            observed
                .entry((flaw.clone(), build.clone(), check.clone()))
                .or_default()
                .push((caught.clone(), *secs));
        }
    }
    let ran_column = |cell: &matrix::Cell| -> bool { ran.iter().any(|s| s.name() == cell.step()) };
    let mut cells = Vec::new();
    for e in matrix::expected() {
        let key = (e.flaw.to_string(), e.build.to_string(), e.check.to_string());
        let runs = observed.remove(&key).unwrap_or_default();
        let caught = runs.iter().filter(|(c, _)| c.is_some()).count();
        let verdict = match (e.expect, runs.is_empty(), caught) {
            (_, true, _) if !ran_column(&e) => "skipped",
            (Expect::Report, true, _) => "not run",
            (_, true, _) => "NOT RUN",
            (Expect::Catch, false, c) if c < runs.len() => "MISSED",
            (Expect::Blind(_), false, c) if c > 0 => "WRONG",
            _ => "ok",
        };
        if matches!(verdict, "MISSED" | "WRONG" | "NOT RUN") {
            failures.push(format!(
                "{verdict}: {} × {} {} (expected {})",
                e.flaw,
                e.build,
                e.check,
                match e.expect {
                    Expect::Catch => "a catch".to_string(),
                    Expect::Blind(why) => format!("no catch: {why}"),
                    Expect::Report => "nothing".to_string(),
                }
            ));
        }
        if verdict == "skipped" {
            continue;
        }
        cells.push(cell_row(key, Some(e.expect), runs, verdict));
    }
    for (key, runs) in observed {
        cells.push(cell_row(key, None, runs, "ok"));
    }
    let coverage: Vec<CoverageRow> = records
        .iter()
        .filter_map(|r| match r {
            Record::Coverage {
                build,
                check,
                situation,
                count,
                runs,
                required,
            } => Some(CoverageRow {
                build: build.clone(),
                check: check.clone(),
                situation: situation.clone(),
                count: *count,
                runs: *runs,
                required: *required,
            }),
            _ => None,
        })
        .collect();
    for c in coverage.iter().filter(|c| c.required && c.count == 0) {
        failures.push(format!(
            "UNREACHED: {} {} reached no {:?} in {} runs",
            c.build, c.check, c.situation, c.runs
        ));
    }
    Report {
        schema: 1,
        passed: failures.is_empty(),
        secs: elapsed.as_secs_f64(),
        settings,
        steps,
        checks,
        cells,
        coverage,
        failures,
    }
}

fn cell_row(
    (flaw, build, check): CellKey,
    expect: Option<Expect>,
    runs: Vec<Run>,
    verdict: &str,
) -> CellRow {
    let time_to_catch = runs
        .iter()
        .filter(|(c, _)| c.is_some())
        .map(|(_, t)| *t)
        .min_by(f64::total_cmp);
    CellRow {
        flaw,
        build,
        check,
        expect,
        runs: runs.into_iter().map(|(c, _)| c).collect(),
        time_to_catch,
        verdict: verdict.to_string(),
    }
}

fn format_size(count: u64, unit: &str, detail: &str) -> String {
    let count = indicatif::HumanCount(count);
    if detail.is_empty() {
        format!("{count} {unit}")
    } else {
        format!("{count} {unit} ({detail})")
    }
}

/// The coverage of the searches: a row per situation, a column per build, each cell the
/// runs that reached it out of the build's runs (`!` after a required situation that none
/// reached; `·` where the build's search does not require it).
fn coverage_table(s: &mut String, r: &Report) {
    if r.coverage.is_empty() {
        return;
    }
    let mut builds: Vec<(&str, u64)> = Vec::new();
    for c in &r.coverage {
        if !builds.iter().any(|(b, _)| *b == c.build) {
            builds.push((&c.build, c.runs));
        }
    }
    let _ = writeln!(
        s,
        "\n## What the generated programs reached\n\nRuns that reached each protocol \
         situation, per build (of the runs in the header); `·` marks a situation the build \
         does not require, `!` a required one no run reached.\n"
    );
    let header: Vec<String> = builds
        .iter()
        .map(|(b, runs)| format!("{b} ({})", indicatif::HumanCount(*runs)))
        .collect();
    let _ = writeln!(
        s,
        "| situation | {} |\n|---|{}",
        header.join(" | "),
        "---:|".repeat(builds.len())
    );
    let mut situations: Vec<&str> = Vec::new();
    for c in &r.coverage {
        if !situations.contains(&c.situation.as_str()) {
            situations.push(&c.situation);
        }
    }
    for situation in situations {
        let cells: Vec<String> = builds
            .iter()
            .map(|(b, _)| {
                r.coverage
                    .iter()
                    .find(|c| c.build == *b && c.situation == situation)
                    .map_or(String::new(), |c| {
                        let mark = match (c.required, c.count) {
                            (true, 0) => " !",
                            (false, _) => " ·",
                            _ => "",
                        };
                        format!("{}{mark}", indicatif::HumanCount(c.count))
                    })
            })
            .collect();
        let _ = writeln!(s, "| {situation} | {} |", cells.join(" | "));
    }
}

/// The report as text: the steps, the checks, the matrix (flaws × columns), the cells that
/// decided it, and the verdict.
fn render(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "\n# Verification report\n");
    let _ = writeln!(
        s,
        "Settings: {}, loom bound {}, shuttle ×{} from seed {}, proptest seed {}.\n",
        if r.settings.full {
            "full"
        } else {
            "default sizes"
        },
        r.settings
            .loom_bound
            .map_or("as each model states".to_string(), |b| format!("≥ {b}")),
        r.settings.shuttle_factor,
        r.settings.shuttle_seed,
        r.settings.proptest_seed
    );
    let _ = writeln!(s, "## Steps\n");
    for st in &r.steps {
        let _ = writeln!(
            s,
            "- {} {}: {:.0} s, {} tests{}",
            st.step.name(),
            if st.passed { "passed" } else { "FAILED" },
            st.secs,
            st.tests.iter().filter(|t| t.result != "ignored").count(),
            st.log
                .as_ref()
                .map_or(String::new(), |l| format!(", log {}", l.display()))
        );
        if let Some(f) = &st.failure {
            for line in f.lines().take(30) {
                let _ = writeln!(s, "    {line}");
            }
        }
    }
    let _ = writeln!(s, "\n## Checks\n");
    let _ = writeln!(
        s,
        "| build | check | result | size | s |\n|---|---|---|---|---:|"
    );
    for c in &r.checks {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} |",
            c.build,
            c.check,
            c.result,
            c.size,
            c.secs.map_or(String::new(), |t| format!("{t:.2}"))
        );
    }
    coverage_table(&mut s, r);
    let _ = writeln!(
        s,
        "\n## Flaws × checks\n\nEach cell: how many of the checks run against the flaw in that \
         column caught it, and the fastest time to the catch; `blind` where every check there \
         is expected not to (and did not); a `!` marks a cell that failed its expectation.\n"
    );
    matrix_table(&mut s, r, &matrix::ROWS, &matrix::COLUMNS);
    let _ = writeln!(
        s,
        "\nThe park-table model's unfaithful variants (parkcheck's conformance suite must catch \
         them) and the other primitives' flaws:\n"
    );
    matrix_table(&mut s, r, &matrix::MODEL_ROWS, &matrix::MODEL_COLUMNS);
    let _ = writeln!(
        s,
        "\n### Cells\n\n| flaw | column | check | expected | runs caught | time to catch | verdict |\n|---|---|---|---|---|---|---|"
    );
    for c in &r.cells {
        let expected = match c.expect {
            Some(Expect::Catch) => "catch".to_string(),
            Some(Expect::Blind(why)) => format!("blind: {why}"),
            Some(Expect::Report) => "reported".to_string(),
            None => "(unlisted) reported".to_string(),
        };
        let caught: Vec<&str> = c.runs.iter().filter_map(|x| x.as_deref()).collect();
        let runs = format!(
            "{}/{}{}",
            caught.len(),
            c.runs.len(),
            caught
                .first()
                .map_or(String::new(), |m| format!(": {}", m.replace('|', "/")))
        );
        let _ = writeln!(
            s,
            "| {} | {} | {} | {expected} | {runs} | {} | {} |",
            c.flaw,
            c.build,
            c.check,
            c.time_to_catch.map_or(String::new(), secs),
            c.verdict
        );
    }
    let _ = writeln!(s);
    if r.failures.is_empty() {
        let _ = writeln!(
            s,
            "verify PASSED in {:.0} s: every check passed, every expected catch was observed, \
             no blind cell was caught.",
            r.secs
        );
    } else {
        let _ = writeln!(s, "verify FAILED in {:.0} s:", r.secs);
        for f in &r.failures {
            let _ = writeln!(s, "- {f}");
        }
    }
    s
}

/// One flaws × columns table of the report.
fn matrix_table(s: &mut String, r: &Report, rows: &[&str], columns: &[&str]) {
    let _ = writeln!(
        *s,
        "| flaw | {} |\n|---|{}",
        columns.join(" | "),
        "---|".repeat(columns.len())
    );
    for &row in rows {
        let mut line = format!("| {row} |");
        for &col in columns {
            let cells: Vec<&CellRow> = r
                .cells
                .iter()
                .filter(|c| c.flaw == row && c.build == col && !c.runs.is_empty())
                .collect();
            let bad = r.cells.iter().any(|c| {
                c.flaw == row && c.build == col && c.verdict != "ok" && c.verdict != "not run"
            });
            let text = if cells.is_empty() {
                "–".to_string()
            } else {
                let caught = cells
                    .iter()
                    .filter(|c| c.runs.iter().any(Option::is_some))
                    .count();
                let fastest = cells
                    .iter()
                    .filter_map(|c| c.time_to_catch)
                    .min_by(f64::total_cmp);
                let blind = cells
                    .iter()
                    .all(|c| matches!(c.expect, Some(Expect::Blind(_))));
                match (caught, fastest) {
                    (0, _) if blind => format!("blind (0/{})", cells.len()),
                    (0, _) => format!("0/{}", cells.len()),
                    (k, Some(t)) => format!("{k}/{} in {}", cells.len(), secs(t)),
                    (k, None) => format!("{k}/{}", cells.len()),
                }
            };
            let _ = write!(line, " {}{text} |", if bad { "! " } else { "" });
        }
        let _ = writeln!(*s, "{line}");
    }
}

fn secs(t: f64) -> String {
    if t < 0.01 {
        "< 0.01 s".to_string()
    } else {
        format!("{t:.2} s")
    }
}

#[cfg(test)]
mod tests {
    use super::steps::TestResult;
    use super::*;

    fn settings() -> Settings {
        Settings {
            full: false,
            loom_bound: None,
            shuttle_factor: 1,
            shuttle_seed: 1,
            proptest_seed: 1,
            loom_checkpoints: None,
            stall: 300,
        }
    }

    fn cell(build: &str, check: &str, flaw: &str, caught: Option<&str>) -> Record {
        Record::Cell {
            build: build.into(),
            check: check.into(),
            flaw: flaw.into(),
            caught: caught.map(str::to_string),
            secs: 0.5,
        }
    }

    fn passed(step: Step) -> StepOutcome {
        StepOutcome {
            step,
            command: String::new(),
            passed: true,
            secs: 1.0,
            log: None,
            failure: None,
            tests: Vec::new(),
        }
    }

    /// Every expected shuttle cell, observed as the table says.
    fn shuttle_as_expected() -> Vec<Record> {
        matrix::expected()
            .into_iter()
            .filter(|c| c.step() == "shuttle")
            .map(|c| {
                let caught = matches!(c.expect, Expect::Catch).then_some("caught");
                cell(c.build, c.check, c.flaw, caught)
            })
            .collect()
    }

    fn report(records: &[Record]) -> Report {
        build_report(
            settings(),
            vec![passed(Step::Shuttle)],
            records,
            &[Step::Shuttle],
            Duration::from_secs(1),
        )
    }

    #[test]
    fn a_run_as_the_table_expects_passes_and_leaves_other_steps_out() {
        let r = report(&shuttle_as_expected());
        assert!(r.passed, "{:?}", r.failures);
        assert!(r.cells.iter().all(|c| c.verdict == "ok"));
        assert!(
            r.cells.iter().all(|c| c.build != "loom"),
            "loom did not run"
        );
    }

    #[test]
    fn a_missed_catch_fails_the_run() {
        let mut records = shuttle_as_expected();
        records.retain(|r| !matches!(r, Record::Cell { flaw, check, .. } if flaw == "LostWaiters" && check == "wakes_every_waiter"));
        records.push(cell("shuttle", "wakes_every_waiter", "LostWaiters", None));
        let r = report(&records);
        assert!(!r.passed);
        assert_eq!(
            r.failures,
            ["MISSED: LostWaiters × shuttle wakes_every_waiter (expected a catch)"]
        );
    }

    #[test]
    fn a_caught_blind_cell_fails_the_run() {
        let mut records = shuttle_as_expected();
        records.push(cell(
            "shuttle",
            "visibility",
            "RelaxedOrdering",
            Some("caught"),
        ));
        let r = report(&records);
        assert!(!r.passed);
        assert!(r.failures[0].starts_with("WRONG: RelaxedOrdering × shuttle visibility"));
    }

    #[test]
    fn a_gated_cell_without_a_record_fails_the_run() {
        let mut records = shuttle_as_expected();
        records.retain(|r| !matches!(r, Record::Cell { flaw, .. } if flaw == "mode Barging"));
        let r = report(&records);
        assert!(!r.passed);
        assert!(r.failures[0].starts_with("NOT RUN: mode Barging × shuttle"));
    }

    #[test]
    fn a_failed_test_fails_the_run_and_is_named() {
        let mut step = passed(Step::Shuttle);
        step.passed = false;
        step.tests.push(TestResult {
            target: "models/shuttle.rs".into(),
            name: "visibility".into(),
            result: "FAILED".into(),
        });
        let r = build_report(
            settings(),
            vec![step],
            &shuttle_as_expected(),
            &[Step::Shuttle],
            Duration::from_secs(1),
        );
        assert!(!r.passed);
        assert!(
            r.failures
                .iter()
                .any(|f| f.contains("models/shuttle.rs: visibility"))
        );
        assert!(
            r.checks
                .iter()
                .any(|c| c.check.ends_with("visibility") && c.result == "FAIL")
        );
    }

    /// Every cargo-test step runs every test binary whatever fails: `--no-fail-fast` is
    /// among its arguments, before libtest's `--` (it is cargo's option, not libtest's).
    #[test]
    fn every_cargo_test_step_runs_every_binary() {
        for step in [Step::Real, Step::Loom, Step::Shuttle] {
            let args = step.cargo_test_args();
            let cargos = args.split(|a| *a == "--").next().unwrap_or(args);
            assert_eq!(args.first(), Some(&"test"), "{}", step.name());
            assert!(
                cargos.contains(&"--no-fail-fast"),
                "{} must run with --no-fail-fast: {args:?}",
                step.name()
            );
        }
    }

    /// Every cargo-test step asks libtest for JSON, after libtest's `--`, and runs its
    /// binaries with `RUSTC_BOOTSTRAP` through the runner (cargo's option, before it).
    #[test]
    fn every_cargo_test_step_reads_libtest_json() {
        for step in [Step::Real, Step::Loom, Step::Shuttle] {
            let args = step.cargo_test_args();
            let mut parts = args.split(|a| *a == "--");
            let cargos = parts.next().unwrap_or_default();
            let libtests = parts.next().unwrap_or_default();
            assert!(cargos.contains(&BOOTSTRAP_RUNNER), "{}", step.name());
            assert!(
                libtests
                    .windows(4)
                    .any(|w| w == ["-Z", "unstable-options", "--format", "json"]),
                "{}: {args:?}",
                step.name()
            );
        }
    }

    #[test]
    fn sizes_are_grouped() {
        assert_eq!(
            format_size(1_234_567, "executions", "bound 2"),
            "1,234,567 executions (bound 2)"
        );
        assert_eq!(format_size(12, "cases", ""), "12 cases");
    }
}
