//! Project automation, run as `cargo xtask <command>` (an alias in `.cargo/config.toml`).
//!
//! - `verify`: the verification suite as it stands, in three builds, each with the
//!   `broken_sema` feature so that every check runs against the correct semaphore and is
//!   shown to catch each deliberate flaw:
//!   - real: a release build; the stress scenarios at full size, the shared scenarios
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
//!   (`mutants/README.md` has the policy), or (`--by-hand --generated`) against the
//!   generated programs in each build instead; `--only SUBSTRING` selects mutants by id.
//! - `links`: every relative link and anchor in the Markdown resolves.
//! - `public-api`: each publishable crate's public API against its listing in `api/`.

use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::Instant;

use clap::{Parser, Subcommand};

mod by_hand;
mod links;
mod matrix;
mod mutants;
mod public_api;
mod report;
mod sanitizers;
mod soak;
mod verify;

#[derive(Parser, Debug)]
#[command(about = "parksema project automation")]
struct Cli {
    #[command(subcommand)]
    command: Task,
}

#[derive(Subcommand, Debug)]
enum Task {
    /// Run the whole verification: real threads (stress, API, proptest, catch tests, matrix,
    /// the soak's short runs), loom and shuttle, each against the correct semaphore and every
    /// deliberate flaw; with `--miri`, `--tsan`, `--mutants` those columns too. Prints one
    /// report (checks with their sizes, then the flaws × checks matrix) and exits non-zero if
    /// a check fails, an expected catch is missed, or a cell the verification guide calls
    /// blind is caught.
    Verify {
        /// Seconds without output after which the supervisor reports a stall. The longest
        /// quiet stretches are a release build of the test binaries and the largest loom
        /// model (each under a minute and a half on 2 cores); 300 s leaves room for a slower
        /// machine.
        #[arg(long, default_value_t = 300)]
        stall: u64,
        /// Run only these steps (repeatable); default: real, loom, shuttle, and the columns
        /// the flags below add.
        #[arg(long = "build", value_enum)]
        builds: Vec<verify::Step>,
        /// Every cell at full size (the nightly job): the reduced blind cells and short soaks
        /// of the default run at their full sizes, the real-thread matrix three times.
        #[arg(long)]
        full: bool,
        /// Raise every bounded loom model's preemption bound to at least this.
        #[arg(long)]
        loom_bound: Option<usize>,
        /// Multiply every shuttle schedule count by this.
        #[arg(long, default_value_t = 1)]
        shuttle_factor: usize,
        /// The seed of every shuttle scheduler (fixed, so a run is reproducible; a failure
        /// prints its schedule for `shuttle::replay`).
        #[arg(long, default_value_t = 20_261_201)]
        shuttle_seed: u64,
        /// The seed of the proptest runners that take it from the environment.
        #[arg(long, default_value_t = 5_000_003)]
        proptest_seed: u64,
        /// Keep a loom checkpoint file per model in this directory (see `models/loom.rs`).
        #[arg(long)]
        loom_checkpoints: Option<PathBuf>,
        /// Add the Miri column (needs `rustup component add miri rust-src --toolchain
        /// nightly`).
        #[arg(long)]
        miri: bool,
        /// Add the ThreadSanitizer column (needs the nightly toolchain with rust-src).
        #[arg(long)]
        tsan: bool,
        /// Add the mutation-testing check: `cargo mutants` (needs cargo-mutants), with the
        /// arguments in `PARKSEMA_MUTANTS_ARGS` (e.g. `--shard 1/8`).
        #[arg(long)]
        mutants: bool,
        /// Add the park-table model's mutation testing: `cargo mutants` on `parkcheck`
        /// (settings in `parkcheck/mutants.toml`), with the arguments in
        /// `PARKSEMA_MUTANTS_ARGS`.
        #[arg(long)]
        model_mutants: bool,
        /// Also write the report as JSON to this file (schema: `docs/report.md`).
        #[arg(long)]
        json: Option<PathBuf>,
    },
    /// Soak the semaphore: mixed traffic on real threads under the watchdog for a duration,
    /// every invariant checked as it runs.
    Soak(soak::SoakArgs),
    /// Run `cargo mutants` (settings in `.cargo/mutants.toml`) and, when given no extra
    /// arguments, record the outcome in `mutants/outcome.md`.
    Mutants {
        /// Instead, apply the mutants `cargo mutants` cannot make (orderings, literals,
        /// arguments, method calls) and check that each is caught; writes
        /// `mutants/by-hand.md`.
        #[arg(long)]
        by_hand: bool,
        /// With `--by-hand`: run every hand-made mutant against the generated programs
        /// checked against the executable specification in each build (shuttle, loom, real
        /// threads) instead of its own checks; writes `mutants/by-hand-generated.md`.
        #[arg(long, requires = "by_hand")]
        generated: bool,
        /// With `--by-hand`: run only the mutants whose id contains this (repeatable: any
        /// of them); the report keeps the other mutants' rows as they were.
        #[arg(long, requires = "by_hand", value_name = "SUBSTRING")]
        only: Vec<String>,
        /// Instead, check that every `exclude_re` in `.cargo/mutants.toml` and
        /// `parkcheck/mutants.toml` matches at least one mutant (needs cargo-mutants).
        #[arg(long, conflicts_with = "by_hand")]
        check_excludes: bool,
        /// Extra arguments for `cargo mutants` (after `--`), e.g. `--in-diff changes.diff`.
        #[arg(last = true)]
        extra: Vec<String>,
    },
    /// Check that every relative link and anchor in the repository's Markdown resolves, and
    /// that the READMEs that ship in a package link only to absolute URLs.
    Links,
    /// Check the public API of each publishable crate (default features) against the listing
    /// committed in `api/`, so a change to what users can name shows in review.
    PublicApi {
        /// Rewrite the listings instead of checking them.
        #[arg(long)]
        bless: bool,
    },
    /// Run the benchmarks against the peers: criterion micro-benchmarks, the contention
    /// matrix, wake latency and sizes, then the fairness experiment; prints the
    /// markdown reports and writes them with CSV files and SVG charts.
    Bench {
        /// A smoke run of a few seconds (CI): tiny criterion samples, two thread counts,
        /// 20 ms cells. Its numbers are not meant to be read.
        #[arg(long)]
        quick: bool,
        /// Where the report, CSV files and charts go (`benches/results` holds the ones
        /// benches/README.md shows).
        #[arg(long, default_value = "target/bench-report")]
        out: PathBuf,
        /// Extra arguments for the contention/latency binary (after `--`), e.g.
        /// `--max-threads 16`.
        #[arg(last = true)]
        extra: Vec<String>,
    },
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Task::Verify {
            stall,
            builds,
            full,
            loom_bound,
            shuttle_factor,
            shuttle_seed,
            proptest_seed,
            loom_checkpoints,
            miri,
            tsan,
            mutants,
            model_mutants,
            json,
        } => {
            let steps = if builds.is_empty() {
                let mut steps = vec![
                    verify::Step::Real,
                    verify::Step::Loom,
                    verify::Step::Shuttle,
                ];
                for (on, step) in [
                    (miri, verify::Step::Miri),
                    (tsan, verify::Step::Tsan),
                    (mutants, verify::Step::Mutants),
                    (model_mutants, verify::Step::ModelMutants),
                ] {
                    if on {
                        steps.push(step);
                    }
                }
                steps
            } else {
                builds
            };
            let settings = verify::Settings {
                full,
                loom_bound,
                shuttle_factor,
                shuttle_seed,
                proptest_seed,
                loom_checkpoints,
                stall,
            };
            if verify::verify(settings, &steps, json.as_deref()) {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Task::Soak(args) => soak::soak(args),
        Task::Links => links::links(),
        Task::PublicApi { bless } => public_api::public_api(bless),
        Task::Mutants {
            check_excludes: true,
            ..
        } => mutants::check_excludes(),
        Task::Mutants {
            by_hand: true,
            generated,
            only,
            ..
        } => mutants::by_hand(&only, generated),
        Task::Mutants {
            by_hand: false,
            extra,
            ..
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
    // The fairness experiment, into the same directory.
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

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::{Cli, Task};

    #[test]
    fn by_hand_takes_generated_and_repeated_only() {
        let cli = Cli::try_parse_from([
            "xtask",
            "mutants",
            "--by-hand",
            "--generated",
            "--only",
            "FIFO",
            "--only",
            "fairness turn",
        ])
        .expect("parses");
        match cli.command {
            Task::Mutants {
                by_hand,
                generated,
                only,
                check_excludes,
                extra,
            } => {
                assert!(by_hand && generated && !check_excludes);
                assert_eq!(only, ["FIFO", "fairness turn"]);
                assert!(extra.is_empty());
            }
            other => panic!("not mutants: {other:?}"),
        }
    }

    #[test]
    fn generated_and_only_need_by_hand() {
        for args in [
            &["xtask", "mutants", "--generated"][..],
            &["xtask", "mutants", "--only", "FIFO"][..],
        ] {
            assert!(Cli::try_parse_from(args).is_err(), "{args:?}");
        }
    }
}
