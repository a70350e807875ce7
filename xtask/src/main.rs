//! Project automation, run as `cargo xtask <command>` (an alias in `.cargo/config.toml`).
//!
//! - `verify`: the verification suite as it stands, in three builds, each with the
//!   `broken_sema` feature so that every check runs against the correct semaphore and is
//!   shown to catch each deliberate flaw:
//!   - real: a release build; the stress scenarios at seed 000's sizes, the shared scenarios
//!     on real threads, and the real-thread catch tests, which print the checks-by-flaws
//!     matrix;
//!   - loom: every model of `models/loom.rs` (bounds and costs are in that file) and its
//!     catch tests;
//!   - shuttle: `models/shuttle.rs` under the random and PCT schedulers, the replays, the
//!     proptest-generated programs, and its catch tests.
//!
//!   Each runs under the `watchdog` supervisor, so a hang anywhere (even one the in-process
//!   watchdog cannot see, such as a hung build or a loom model that never ends) becomes a
//!   stall report with backtraces instead of a stuck job.
//! - `bench`: the benchmarks against the peers (`benches/`), one markdown report with ratios,
//!   CSV files and SVG charts.
//! - `mutants`: `cargo mutants` with the outcome recorded in `mutants/outcome.md`, or
//!   (`--by-hand`) the mutants it cannot make, each run against its check
//!   (`mutants/README.md` has the policy).

use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::Instant;

use clap::{Parser, Subcommand, ValueEnum};

mod by_hand;
mod mutants;

#[derive(Parser, Debug)]
#[command(about = "parksema project automation")]
struct Cli {
    #[command(subcommand)]
    command: Task,
}

#[derive(Subcommand, Debug)]
enum Task {
    /// Run the verification suite: real threads, loom and shuttle, each with every catch test.
    Verify {
        /// Seconds without output after which the supervisor reports a stall. The longest
        /// quiet stretches seen are a release build of the test binaries and the largest loom
        /// model (each under a minute on 2 cores); 300 s leaves room for a slower machine.
        #[arg(long, default_value_t = 300)]
        stall: u64,
        /// Run only these builds (repeatable); all three by default.
        #[arg(long = "build", value_enum)]
        builds: Vec<Build>,
    },
    /// Run `cargo mutants` (settings in `.cargo/mutants.toml`) and, when given no extra
    /// arguments, record the outcome in `mutants/outcome.md`.
    Mutants {
        /// Instead, apply the mutants `cargo mutants` cannot make (orderings, literals,
        /// arguments, method calls) and check that each is caught; writes
        /// `mutants/by-hand.md`.
        #[arg(long)]
        by_hand: bool,
        /// Extra arguments for `cargo mutants` (after `--`), e.g. `--in-diff changes.diff`.
        #[arg(last = true)]
        extra: Vec<String>,
    },
    /// Run the benchmarks against the peers: criterion micro-benchmarks, the contention
    /// matrix, wake latency and sizes, then seed 004's fairness experiment; prints the
    /// markdown reports and writes them with CSV files and SVG charts.
    Bench {
        /// A smoke run of a few seconds (CI): tiny criterion samples, two thread counts,
        /// 20 ms cells. Its numbers are not meant to be read.
        #[arg(long)]
        quick: bool,
        /// Where the report, CSV files and charts go (`benches/results` holds the ones the
        /// README shows).
        #[arg(long, default_value = "target/bench-report")]
        out: PathBuf,
        /// Extra arguments for the contention/latency binary (after `--`), e.g.
        /// `--max-threads 16`.
        #[arg(last = true)]
        extra: Vec<String>,
    },
}

/// One of the three ways the state machine is compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Build {
    /// Real `parking_lot_core`, real threads.
    Real,
    /// Loom's atomics and the mocked park table.
    Loom,
    /// Shuttle's atomics and the mocked park table.
    Shuttle,
}

impl Build {
    /// The `cargo test` arguments that run this build's checks.
    fn cargo_test_args(self) -> &'static [&'static str] {
        match self {
            // One test thread: the stress scenarios start up to 33 threads each and are meant
            // to contend with themselves, and the summaries and the matrix print in order.
            Build::Real => &[
                "test",
                "--release",
                "--features",
                "broken_sema",
                "--",
                "--nocapture",
                "--test-threads",
                "1",
            ],
            // The test profile: debug assertions on, dependencies (loom) optimized.
            Build::Loom => &[
                "test",
                "--features",
                "loom,broken_sema",
                "--",
                "--nocapture",
            ],
            Build::Shuttle => &[
                "test",
                "--features",
                "shuttle,broken_sema",
                "--",
                "--nocapture",
            ],
        }
    }
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Task::Verify { stall, builds } => {
            let builds = if builds.is_empty() {
                vec![Build::Real, Build::Loom, Build::Shuttle]
            } else {
                builds
            };
            verify(stall, &builds)
        }
        Task::Mutants { by_hand: true, .. } => mutants::by_hand(),
        Task::Mutants {
            by_hand: false,
            extra,
        } => mutants::cargo_mutants(&extra),
        Task::Bench { quick, out, extra } => bench(quick, &out, &extra),
    }
}

/// The workspace root: the parent of this crate's directory.
fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace root")
        .to_path_buf()
}

/// Runs `cmd`, echoing it first; returns whether it succeeded.
fn run(cmd: &mut Command) -> bool {
    eprintln!("xtask: running {cmd:?}");
    match cmd.status() {
        Ok(status) => status.success(),
        Err(e) => {
            eprintln!("xtask: could not start {cmd:?}: {e}");
            false
        }
    }
}

fn verify(stall: u64, builds: &[Build]) -> ExitCode {
    let root = workspace_root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let start = Instant::now();

    if !run(Command::new(&cargo).current_dir(&root).args([
        "build",
        "--release",
        "--quiet",
        "-p",
        "watchdog",
        "--bin",
        "watchdog",
    ])) {
        return ExitCode::FAILURE;
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let supervisor = target.join("release").join("watchdog");

    let mut failed = Vec::new();
    for &build in builds {
        let step = Instant::now();
        let ok = run(Command::new(&supervisor)
            .current_dir(&root)
            .args(["--stall", &stall.to_string(), "--"])
            .arg(&cargo)
            .args(build.cargo_test_args()));
        eprintln!(
            "xtask: {build:?} build {} in {:.1} s",
            if ok { "passed" } else { "FAILED" },
            step.elapsed().as_secs_f64()
        );
        if !ok {
            failed.push(build);
        }
    }

    eprintln!(
        "xtask: verify {} in {:.1} s",
        if failed.is_empty() {
            "passed".to_string()
        } else {
            format!("FAILED ({failed:?})")
        },
        start.elapsed().as_secs_f64()
    );
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn bench(quick: bool, out: &std::path::Path, extra: &[String]) -> ExitCode {
    let root = workspace_root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let start = Instant::now();
    // Criterion's settings: the full run gives each function 1 s of warm-up and 3 s of
    // samples (18 functions: about 75 s); the smoke run the least criterion accepts.
    let criterion_args: &[&str] = if quick {
        &[
            "--warm-up-time",
            "0.05",
            "--measurement-time",
            "0.1",
            "--sample-size",
            "10",
        ]
    } else {
        &["--warm-up-time", "1", "--measurement-time", "3"]
    };
    // Old results would be read as this run's.
    let criterion_dir = target.join("criterion");
    let _ = std::fs::remove_dir_all(&criterion_dir);
    if !run(Command::new(&cargo)
        .current_dir(&root)
        .args(["bench", "-p", "parksema-bench", "--bench", "micro", "--"])
        .args(criterion_args))
    {
        return ExitCode::FAILURE;
    }
    let out = if out.is_absolute() {
        out.to_path_buf()
    } else {
        root.join(out)
    };
    let mut cmd = Command::new(&cargo);
    cmd.current_dir(&root)
        .args(["run", "--release", "--quiet", "-p", "parksema-bench", "--"])
        .arg("--out")
        .arg(&out)
        .arg("--criterion")
        .arg(&criterion_dir);
    if quick {
        cmd.arg("--quick");
    }
    cmd.args(extra);
    let mut ok = run(&mut cmd);
    // Seed 004's fairness experiment, into the same directory.
    if ok {
        let mut fairness = Command::new(&cargo);
        fairness
            .current_dir(&root)
            .args([
                "run",
                "--release",
                "--quiet",
                "-p",
                "parksema-bench",
                "--bin",
                "fairness",
                "--",
            ])
            .arg("--out")
            .arg(&out);
        if quick {
            fairness.arg("--quick");
        }
        ok = run(&mut fairness);
    }
    eprintln!(
        "xtask: bench {} in {:.0} s",
        if ok { "finished" } else { "FAILED" },
        start.elapsed().as_secs_f64()
    );
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
