//! Project automation, run as `cargo xtask <command>` (an alias in `.cargo/config.toml`).
//!
//! - `verify`: the verification suite as it stands. One release build with the
//!   `broken_sema` feature runs every test: the stress scenarios at seed 000's sizes against
//!   the correct semaphore, and the catch tests that run them against each deliberate flaw
//!   and print the checks-by-flaws matrix. It runs under the `watchdog` supervisor, so a
//!   hang anywhere (even one the in-process watchdog cannot see, such as a hung build) ends
//!   as a stall report with backtraces instead of a stuck job.

use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::Instant;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(about = "parksema project automation")]
struct Cli {
    #[command(subcommand)]
    command: Task,
}

#[derive(Subcommand, Debug)]
enum Task {
    /// Run the verification suite: full-size stress tests and every catch test, in release.
    Verify {
        /// Seconds without output after which the supervisor reports a stall. The longest
        /// quiet stretch seen is a release build of the test binaries (under a minute on 2
        /// cores); 300 s leaves room for a slower machine.
        #[arg(long, default_value_t = 300)]
        stall: u64,
    },
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Task::Verify { stall } => verify(stall),
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

fn verify(stall: u64) -> ExitCode {
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

    // One test thread: the stress scenarios each start up to 33 threads and are meant to
    // contend with themselves, and the summaries and the matrix print in order.
    let ok = run(Command::new(&supervisor)
        .current_dir(&root)
        .args(["--stall", &stall.to_string(), "--"])
        .arg(&cargo)
        .args(["test", "--release", "--features", "broken_sema"])
        .args(["--", "--nocapture", "--test-threads", "1"]));

    eprintln!(
        "xtask: verify {} in {:.1} s",
        if ok { "passed" } else { "FAILED" },
        start.elapsed().as_secs_f64()
    );
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
