//! Miri and ThreadSanitizer: two checkers of the real build (std atomics, the real
//! `parking_lot_core`, std threads) that watch the program from inside. Each gives a column
//! of the checks-by-flaws matrix; with them every ordering flaw has a checker besides loom.
//!
//! Both run the shared scenarios in process (`models/inproc.rs`, one `#[test]` each; the
//! flaw comes from `PARKSEMA_FLAW`, the rounds from `PARKSEMA_INPROC_ROUNDS`): first against
//! the correct semaphore, which must pass (a failure is an `Err`), then each deliberate flaw
//! against the scenarios listed for it below, each (scenario, flaw) in a process of its own
//! so that one abort (a data race or a deadlock stops the whole program) ends one cell. A
//! cell's `caught` is what the tool or the scenario reported, in a few words; it is `Some`
//! only when the run failed (a non-zero exit) with a report this module recognizes, and a
//! run that passed must have printed the test's line naming the flaw, so a flaw that never
//! reached the program cannot pass for a blind cell.
//!
//! - Miri (`cargo +nightly miri test`): a missing happens-before edge is its data-race
//!   report on the data the permit protects; a lost wakeup is its deadlock report (every
//!   thread blocked). It also runs `tests/api.rs` against the correct semaphore. Miri
//!   cannot spawn processes, so the real-thread catch tests (child processes) do not run
//!   under it: the in-process scenarios are its catch tests, and the one `stress/` scenario
//!   a cell needs runs through that suite's child entry point directly. `stress/`'s own
//!   tests do not run under Miri: at their smallest (debug) size `never_exceeds_permits`
//!   alone makes 112 000 acquisitions, and one round of a shared scenario, a few dozen
//!   operations, costs Miri 0.1-0.6 s.
//! - ThreadSanitizer (`-Zsanitizer=thread -Zbuild-std`, in its own target directory): a
//!   missing edge is a `data race` report, which `halt_on_error=1` turns into the end of the
//!   run at the test that raced (without it the harness reports the test as passed and only
//!   the exit code says otherwise); a lost wakeup is a stall of the in-process watchdog
//!   (exit 86). It also runs `stress/`'s correct-semaphore tests. It cannot check the two
//!   scenarios whose readers rely on `fence(Acquire)` ([`TSAN_FENCE_BLIND`]).
//!
//! Neither function installs anything: each first checks that its tool is there and says
//! which command installs it.

use std::io::{BufRead, BufReader, Read, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::report::Record;

/// The checks each flaw runs against, under both tools, so that the two columns compare
/// cell by cell: tests of `models/inproc.rs` by name, and `stress::NAME`, a scenario of
/// `stress/` run through its child entry point (`child::child_entry`, in a process of its
/// own as always here). Each flaw gets the scenarios the loom catch tests pair it with
/// (docs/verification.md, "Flaws and which check catches them") and those found to show it on real
/// threads, measured with every scenario against every flaw under ThreadSanitizer (200
/// rounds each) and the candidates under Miri (16 seeds); the comment of each says what it
/// reported in those runs.
const CELLS: [(&str, &[&str]); 8] = [
    // Two takers that load the same word both take "the" permit: `over-issue` in both under
    // both tools, in every run (Miri once reported (c) as a `deadlock` instead: the lost
    // update can erase `WAITERS`).
    ("OverIssue", &["mutual_exclusion", "wakes_every_waiter"]),
    // The wake-up of the first of two parked waiters clears `WAITERS`, so the next release
    // wakes nobody; both scenarios wait until both are parked: Miri `deadlock`, TSan
    // `stall`, in every run.
    (
        "LostWaiters",
        &["two_releasers_two_waiters", "large_head_small_behind"],
    ),
    // A holder's write and the next holder's read unordered: `data race` in all three under
    // both tools, in every run.
    (
        "RelaxedOrdering",
        &[
            "visibility",
            "unwind_and_move",
            "handoff_from_two_releasers",
        ],
    ),
    // A release in the gap between the early read and the bucket lock: TSan `stall` in all
    // three; Miri `deadlock` in (a) only (in (c) and (k), 16 seeds of one round and 4 seeds
    // of 4 rounds found no schedule that stops a thread in the gap while a release runs).
    (
        "StaleValidate",
        &["mutual_exclusion", "wakes_every_waiter", "releases_race"],
    ),
    // A permit taken without the wake-up of the release that returned it: Miri `data race`
    // in (m) in every run, and never in (n) (16 seeds of 8 rounds) or (g) (two threads,
    // where a release that finds `WAITERS` always wakes the taker); TSan in (g) with four
    // threads (8 of 10 runs at 2 000 rounds, 2 of 10 at 500), in (n) now and then (2 of 10
    // runs at 2 000 rounds), never in (m).
    (
        "RelaxedWhenWaited",
        &[
            "woken_takes_another_releasers_permit",
            "unwind_and_move",
            "visibility",
        ],
    ),
    // A timed waiter chosen after its deadline swallows the wake-up. In process neither
    // tool sees it: the shared scenarios release right after the waiters park, long before
    // the 10 ms deadline in real time (loom and shuttle move a mocked clock instead). The
    // stress scenario releases at the deadline: TSan `stall`; under Miri's virtual clock
    // (5 us per basic block) the deadline passes while the second waiter is still being
    // set up, so the timed waiter always times out first (0 of 50 rounds took the permit).
    (
        "TimeoutLeak",
        &[
            "timeout_races_release",
            "handoff_to_timing_out_waiter",
            "stress::timeout_at_release",
        ],
    ),
    // The release stops at the large head: the small request behind it sleeps on. Both
    // tools in (o) in every run (the order is set up first); in (u) Miri at the first seeds
    // of 4 rounds (not in 16 seeds of one round), TSan in 3 of 4 runs.
    (
        "WeightedLostWakeup",
        &["large_head_small_behind", "woken_out_barged_passes_on"],
    ),
    // Every handoff mints the permits it hands over: more come back than were put in
    // (`over-issue`), in both under both tools, in every run.
    (
        "HandoffDoubleCount",
        &["fifo_no_barging", "fifo_keeps_arrival_order"],
    ),
];

/// The shared scenarios ThreadSanitizer cannot check: their threads see `CLOSED` through
/// a relaxed load followed by `fence(Acquire)` (the semaphore's acquire paths on a closed
/// word), and TSan does not model fences (its runtime's `AtomicFence` is marked "not
/// implemented": a hardware barrier, no happens-before edge), so it reports the read of the
/// data written before `close` as a race although `close`'s Release orders it. Measured:
/// both failed the correct semaphore at once with a `data race` on that read
/// (models/scenarios/, (h) and (i)); Miri and loom, which model fences, pass them. (i) with every
/// waiter parked first is kept: there `close`'s unpark carries the edge. The same scenarios
/// under `stress/`'s names are skipped in its run.
const TSAN_FENCE_BLIND: [&str; 2] = ["close_publishes", "close_races_announced_acquirers"];

/// `stress/`'s tests that run [`TSAN_FENCE_BLIND`]'s scenarios.
const TSAN_FENCE_BLIND_STRESS: [&str; 2] = ["shared_close_publishes", "shared_close_wakes_waiters"];

/// The sizes of one Miri column. Costs measured on the 2-core development machine with
/// another build running: Miri runs the seeds of one `-Zmiri-many-seeds` range on as many
/// host threads as there are cores, each seed starting the test harness afresh (about 1.8 s
/// of CPU before the first test runs); one round of a scenario costs it 0.2-0.6 s.
struct MiriSizes {
    /// Seeds of `tests/api.rs` (37 tests, about 9 s of CPU per seed).
    api_seeds: u32,
    /// Seeds of the correct semaphore's run of every scenario, one round each (about 24 s
    /// of CPU per seed for the 35 scenarios).
    inproc_seeds: u32,
    /// Seeds of each (scenario, flaw) cell; the run stops at the first failing seed.
    flaw_seeds: u32,
    /// Rounds of the scenario in each seed of a flaw cell: a round costs a fraction of a
    /// seed's start-up, so rounds are the cheaper way to more schedules.
    flaw_rounds: u32,
    /// Seeds of a `stress::` cell, whose scenario runs its own rounds in every seed.
    stress_seeds: u32,
}

impl MiriSizes {
    /// `cargo xtask verify --miri`. Four seeds of the correct run: 44-79 s. Sixteen seeds
    /// of four rounds per cell: with four (a cell Miri cannot catch then costs 6-8 s with
    /// both cores free) two cells were missed once each binary was rebuilt for its run
    /// (`rebuild_under_miri`; earlier runs had reused another run's seeds): `StaleValidate`
    /// in (a) and `RelaxedWhenWaited` in (m) failed first at seeds 5 and 6 of sixteen (16 s
    /// and 13 s). Miri names the first seed to fail among those it runs in parallel, not
    /// the lowest.
    ///
    /// One seed of the `stress::` cell (about 18 s): its 50 rounds already vary the moment
    /// of the release, and what keeps Miri blind there is the virtual clock, not the
    /// schedule (4 seeds cost 70 s and saw the same).
    const QUICK: MiriSizes = MiriSizes {
        api_seeds: 1,
        inproc_seeds: 4,
        flaw_seeds: 16,
        flaw_rounds: 4,
        stress_seeds: 1,
    };
    /// `--full`: eight times the seeds of the correct run, and four times the rounds (seeds
    /// times rounds) of each cell (not timed).
    const FULL: MiriSizes = MiriSizes {
        api_seeds: 8,
        inproc_seeds: 32,
        flaw_seeds: 32,
        flaw_rounds: 8,
        stress_seeds: 8,
    };
}

/// The sizes of one ThreadSanitizer column. A round of a shared scenario costs 0.2-2 ms under
/// TSan here (debug build), except the five that let a 10 ms deadline pass in real time
/// (about 11 ms each).
struct TsanSizes {
    /// Rounds of each scenario against the correct semaphore: 200 take about 16 s for the
    /// 33 scenarios, most of it the five timed ones.
    inproc_rounds: u32,
    /// Rounds of each (scenario, flaw) cell. 2 000: TSan's catch of `RelaxedWhenWaited` in
    /// `visibility` needs them (8 of 10 runs; 2 of 10 at 500); every other cell it catches
    /// failed within the first 200 in the runs measured here. A blind cell costs 0.5-2 s,
    /// and 22 s for each of the two timed ones (11 ms a round).
    flaw_rounds: u32,
    /// The watchdog's stall limit in a flaw cell, seconds: a lost wakeup costs its cell this
    /// long (4.4 s measured, with start-up and the detector's tick). A round takes
    /// milliseconds even under TSan, so 3 s is far above a legitimate pause (the correct
    /// runs keep the tests' own 10 s).
    stall_secs: u32,
}

impl TsanSizes {
    /// `cargo xtask verify --tsan`.
    const QUICK: TsanSizes = TsanSizes {
        inproc_rounds: 200,
        flaw_rounds: 2000,
        stall_secs: 3,
    };
    /// `--full`: ten times the rounds (about 9 minutes here, estimated from the costs above;
    /// not timed; the stress tests have no size to raise).
    const FULL: TsanSizes = TsanSizes {
        inproc_rounds: 2000,
        flaw_rounds: 20000,
        stall_secs: 5,
    };
}

/// The target triple ThreadSanitizer builds for: `-Zbuild-std` needs one named.
const TSAN_TARGET: &str = "x86_64-unknown-linux-gnu";

/// The rustup proxy, not `$CARGO`: under `cargo xtask` that names the stable toolchain's
/// cargo, which does not take `+nightly`.
fn nightly_cargo(root: &Path) -> Command {
    let mut cmd = Command::new("cargo");
    cmd.current_dir(root).arg("+nightly");
    // Flags of the outer build must not leak into these (ThreadSanitizer sets its own).
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTDOCFLAGS",
        "MIRIFLAGS",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// Removes the Miri build of the test target `test` (its "binary": the JSON file in which
/// cargo-miri records how to run it), so that the next `cargo miri test` builds it again,
/// which costs well under a second. cargo-miri records the environment (and `MIRIFLAGS`)
/// when it builds a binary and, when cargo finds the binary fresh, runs it with the recorded
/// values instead of the current ones ("Overwriting run-time env var ... with build-time
/// value"): without this, every flaw's run would reuse the first run's `PARKSEMA_FLAW` and
/// seeds (seen: the flaw cells ran the correct semaphore, which `judge` refused). Touching
/// the source does not make cargo rebuild it; a missing output does.
fn rebuild_under_miri(root: &Path, test: &str) -> Result<(), String> {
    let deps = target_dir(root)
        .join("miri")
        .join(TSAN_TARGET)
        .join("debug")
        .join("deps");
    let Ok(entries) = std::fs::read_dir(&deps) else {
        return Ok(()); // nothing built yet
    };
    let prefix = format!("{test}-");
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            std::fs::remove_file(entry.path())
                .map_err(|e| format!("cannot remove {}: {e}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// The target directory of the ordinary builds.
fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
}

/// Where each run's whole output is kept.
fn log_dir(root: &Path) -> Result<PathBuf, String> {
    let dir = target_dir(root).join("sanitizers");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(dir)
}

/// How a run ended.
struct Outcome {
    /// The exit code; `None` if a signal ended it.
    code: Option<i32>,
    /// Its stderr, then its stdout.
    output: String,
    /// Seconds from spawn to exit.
    secs: f64,
}

impl Outcome {
    fn passed(&self) -> bool {
        self.code == Some(0)
    }

    /// The last `n` lines of the output, for an error message.
    fn tail(&self, n: usize) -> String {
        let lines: Vec<&str> = self.output.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }
}

/// Whether a line of a run's output is worth echoing while it runs: progress and reports.
fn worth_echoing(line: &str) -> bool {
    line.starts_with("test ")
        || line.starts_with("Trying seed")
        || line.starts_with("FAILING SEED")
        || line.starts_with("error")
        || line.contains("WARNING: ThreadSanitizer")
        || line.starts_with("watchdog: STALL")
        || line.contains("panicked at")
}

/// Reads `pipe` to the end, echoing the lines [`worth_echoing`] to stderr.
fn drain(pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut all = String::new();
        let mut reader = BufReader::new(pipe);
        let mut line = Vec::new();
        while reader.read_until(b'\n', &mut line).unwrap_or(0) > 0 {
            let text = String::from_utf8_lossy(&line);
            if worth_echoing(text.trim_start()) {
                eprint!("  | {text}");
            }
            all.push_str(&text);
            line.clear();
        }
        all
    })
}

/// Runs `cmd`, echoing it (with the environment it sets) and the lines of its output worth
/// seeing, and keeps its whole output in `log`.
fn run(cmd: &mut Command, log: &Path) -> Result<Outcome, String> {
    eprintln!("xtask: running {cmd:?}");
    let start = Instant::now();
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start {cmd:?}: {e}"))?;
    let out = drain(child.stdout.take().expect("stdout is piped"));
    let err = drain(child.stderr.take().expect("stderr is piped"));
    let status = child
        .wait()
        .map_err(|e| format!("could not wait for {cmd:?}: {e}"))?;
    let output = format!(
        "{}{}",
        err.join().unwrap_or_default(),
        out.join().unwrap_or_default()
    );
    let secs = start.elapsed().as_secs_f64();
    std::fs::File::create(log)
        .and_then(|mut f| f.write_all(output.as_bytes()))
        .map_err(|e| format!("cannot write {}: {e}", log.display()))?;
    Ok(Outcome {
        code: status.code(),
        output,
        secs,
    })
}

/// Runs a command that only checks that a tool is there; `Err(install)` if it fails.
fn require(cmd: &mut Command, install: &str) -> Result<(), String> {
    let ok = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok { Ok(()) } else { Err(install.to_string()) }
}

/// What a failed run reported, in a few words: the tool's report, or the violated property
/// the scenario named in its panic; `None` if the output holds nothing this recognizes (a
/// build error, an unsupported operation), which is no catch.
fn failure(output: &str) -> Option<String> {
    // The tools' own reports first: a data race or deadlock aborts before any panic.
    for (mark, words) in [
        ("Undefined Behavior: Data race detected", "data race"),
        ("WARNING: ThreadSanitizer: data race", "data race"),
        ("the evaluated program deadlocked", "deadlock"),
        ("watchdog: STALL", "stall"),
    ] {
        if output.contains(mark) {
            return Some(words.to_string());
        }
    }
    if let Some(at) = output.find("WARNING: ThreadSanitizer: ") {
        let rest = &output[at + "WARNING: ThreadSanitizer: ".len()..];
        return Some(rest.split(" (").next().unwrap_or(rest).trim().to_string());
    }
    if let Some(at) = output.find("Undefined Behavior: ") {
        let rest = &output[at + "Undefined Behavior: ".len()..];
        return Some(
            rest.lines()
                .next()
                .unwrap_or(rest)
                .chars()
                .take(60)
                .collect(),
        );
    }
    // A scenario's assertion: the property is the message up to its first colon.
    let mut lines = output.lines();
    lines.find(|l| l.contains("panicked at"))?;
    let message = lines.next()?.trim();
    let property = message.split(':').next().unwrap_or(message);
    let property = property.split(" (").next().unwrap_or(property);
    Some(property.chars().take(60).collect())
}

/// The seed Miri names after a failing run of a `-Zmiri-many-seeds` range.
fn failing_seed(output: &str) -> Option<u32> {
    output
        .lines()
        .find_map(|l| l.trim().strip_prefix("FAILING SEED: "))
        .and_then(|s| s.trim().parse().ok())
}

/// Where a cell's check lives: a test of `models/inproc.rs`, or (`stress::NAME`) a scenario
/// of `stress/` run through its child entry point.
fn stress_scenario(check: &str) -> Option<&str> {
    check.strip_prefix("stress::")
}

/// Whether `check` ran to its end against `flaw`: the last line of an `inproc` test names
/// both; `stress/`'s child entry prints `child passed` (its flaw comes from the variable
/// the runner set, which the child panics on when it does not know it).
fn check_ran(output: &str, check: &str, flaw: &str) -> bool {
    match stress_scenario(check) {
        Some(_) => output.contains("child passed: "),
        None => {
            output.contains(&format!("inproc {check}: "))
                && output.contains(&format!(", flaw {flaw}"))
        }
    }
}

/// The names of the tests of `models/inproc.rs` whose end line (`inproc NAME: R rounds,
/// flaw F`) is in `output`, each once. The line may follow libtest's `test NAME ... ` on the
/// same line, and Miri's parallel seeds interleave their output, so it is looked for
/// anywhere in a line.
fn tests_that_ran(output: &str) -> Vec<String> {
    let mut names: Vec<String> = output
        .lines()
        .flat_map(|l| l.split("inproc ").skip(1))
        .filter_map(|rest| {
            let (name, tail) = rest.split_once(": ")?;
            let named =
                !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '_');
            (named && tail.contains(" rounds, flaw ")).then(|| name.to_string())
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The variables the programs read, which Miri passes through `-Zmiri-env-forward` (with
/// isolation on, the program sees no other environment).
const FORWARDED: [&str; 5] = [
    "PARKSEMA_FLAW",
    "PARKSEMA_INPROC_ROUNDS",
    "PARKSEMA_CHILD_SCENARIO",
    "PARKSEMA_CHILD_FLAW",
    "WATCHDOG_STALL_SECS",
];

/// The `MIRIFLAGS` of a run of `seeds` seeds. Isolation stays on (no flag disables it):
/// the scenarios read only the monotonic clock, which Miri emulates deterministically under
/// isolation (5 us per basic block, and a jump to the next timeout when every thread
/// sleeps), so every seed replays exactly.
fn miriflags(seeds: u32) -> String {
    let mut flags: Vec<String> = FORWARDED
        .iter()
        .map(|var| format!("-Zmiri-env-forward={var}"))
        .collect();
    if seeds > 1 {
        flags.push(format!("-Zmiri-many-seeds=0..{seeds}"));
    }
    flags.join(" ")
}

/// The Miri column: `tests/api.rs` and every shared scenario against the correct semaphore
/// (each a `check`), then each flaw against its checks (each a `cell`).
///
/// `Err` if Miri is missing (with the command that installs it), a build fails, or the
/// correct semaphore fails a check.
pub(crate) fn miri(root: &Path, full: bool) -> Result<Vec<Record>, String> {
    // `setup` prepares Miri's sysroot (a build into Miri's cache, the first time only); it
    // fails when the component or `rust-src` is missing.
    eprintln!("xtask: miri: checking that Miri is installed (`cargo +nightly miri setup`)");
    require(
        nightly_cargo(root).args(["miri", "setup"]),
        "Miri is not installed: run `rustup component add miri rust-src --toolchain nightly`",
    )?;
    let sizes = if full {
        MiriSizes::FULL
    } else {
        MiriSizes::QUICK
    };
    let logs = log_dir(root)?;
    let mut records = Vec::new();

    // The API tests, without `broken_sema`, so that the size test runs too. Every one of
    // them runs under Miri: none spawns a process, and the few that wait (a timeout, a
    // 2 ms sleep) wait on Miri's virtual clock.
    rebuild_under_miri(root, "api")?;
    let api = run(
        nightly_cargo(root)
            .env("MIRIFLAGS", miriflags(sizes.api_seeds))
            .args(["miri", "test", "--test", "api"]),
        &logs.join("miri-api.log"),
    )?;
    if !api.passed() {
        return Err(format!(
            "miri: tests/api.rs failed on the correct semaphore ({:?}):\n{}",
            failure(&api.output),
            api.tail(40)
        ));
    }
    records.push(Record::Check {
        build: "miri".into(),
        check: "api".into(),
        count: sizes.api_seeds.into(),
        unit: "seeds".into(),
        detail: "tests/api.rs, every test once per seed".into(),
        secs: api.secs,
    });

    // Every scenario on the correct semaphore, all in one process per seed (a seed's
    // start-up costs more than most scenarios, so the time is the target's, not each
    // scenario's: Miri's clock is virtual), with the feature on so that it is the binary
    // the flaw cells run.
    let correct = run(
        &mut miri_inproc(root, sizes.inproc_seeds, "none", 1, None),
        &logs.join("miri-inproc-correct.log"),
    )?;
    let ran = tests_that_ran(&correct.output);
    if !correct.passed() || ran.is_empty() {
        return Err(format!(
            "miri: the correct semaphore failed models/inproc.rs ({:?}, seed {:?}):\n{}",
            failure(&correct.output),
            failing_seed(&correct.output),
            correct.tail(60)
        ));
    }
    records.push(Record::Check {
        build: "miri".into(),
        check: "inproc".into(),
        count: sizes.inproc_seeds.into(),
        unit: "seeds".into(),
        detail: format!(
            "the {} scenarios of models/inproc.rs, 1 round each per seed, \
             -Zmiri-many-seeds=0..{}",
            ran.len(),
            sizes.inproc_seeds
        ),
        secs: correct.secs,
    });

    for (flaw, checks) in CELLS {
        for &check in checks {
            let mut cmd = match stress_scenario(check) {
                // A stress scenario runs its own sizes (50 rounds of `timeout_at_release`,
                // about 17 s of CPU per seed).
                Some(scenario) => miri_stress_child(root, sizes.stress_seeds, scenario, flaw),
                None => miri_inproc(root, sizes.flaw_seeds, flaw, sizes.flaw_rounds, Some(check)),
            };
            let outcome = run(&mut cmd, &logs.join(format!("miri-{check}-{flaw}.log")))?;
            let caught =
                judge(&outcome, check, flaw)?.map(|what| match failing_seed(&outcome.output) {
                    Some(seed) => format!("{what} (seed {seed})"),
                    None => what,
                });
            records.push(cell("miri", check, flaw, caught, outcome.secs));
        }
    }
    Ok(records)
}

/// `cargo +nightly miri test` of `models/inproc.rs` (all of it, or `only`) against `flaw`,
/// `rounds` rounds per seed.
fn miri_inproc(root: &Path, seeds: u32, flaw: &str, rounds: u32, only: Option<&str>) -> Command {
    if let Err(e) = rebuild_under_miri(root, "inproc") {
        eprintln!("xtask: miri: {e}");
    }
    let mut cmd = nightly_cargo(root);
    cmd.env("MIRIFLAGS", miriflags(seeds))
        .env("PARKSEMA_FLAW", flaw)
        .env("PARKSEMA_INPROC_ROUNDS", rounds.to_string())
        .args([
            "miri",
            "test",
            "--features",
            "broken_sema",
            "--test",
            "inproc",
            "--",
        ]);
    if let Some(test) = only {
        cmd.args(["--exact", test]);
    }
    // One test at a time: the seed, not the harness, chooses the schedule. Uncaptured, so
    // that each test's last line (which names the flaw) is in the output when it passes.
    cmd.args(["--test-threads", "1", "--nocapture"]);
    cmd
}

/// `cargo +nightly miri test` of `stress/`'s child entry point, running `scenario` against
/// `flaw` under the in-process watchdog (Miri cannot spawn the child process the catch
/// tests use, so this is the child itself). A lost wakeup there is a watchdog stall, not a
/// Miri deadlock: the watchdog's detector thread waits with a timeout, on Miri's virtual
/// clock.
fn miri_stress_child(root: &Path, seeds: u32, scenario: &str, flaw: &str) -> Command {
    if let Err(e) = rebuild_under_miri(root, "stress") {
        eprintln!("xtask: miri: {e}");
    }
    let mut cmd = nightly_cargo(root);
    cmd.env("MIRIFLAGS", miriflags(seeds))
        .env("PARKSEMA_CHILD_SCENARIO", scenario)
        .env("PARKSEMA_CHILD_FLAW", flaw)
        .env("WATCHDOG_STALL_SECS", "2")
        .args([
            "miri",
            "test",
            "--features",
            "broken_sema",
            "--test",
            "stress",
            "--",
            "--exact",
            "child::child_entry",
            "--ignored",
            "--nocapture",
            "--test-threads",
            "1",
        ]);
    cmd
}

/// What a flaw cell caught: `Some(report)` for a failed run with a recognized report,
/// `None` for a run that passed with the flaw in force; `Err` for anything else (a run that
/// passed without running the check, or failed without a report).
fn judge(outcome: &Outcome, check: &str, flaw: &str) -> Result<Option<String>, String> {
    if outcome.passed() {
        if check_ran(&outcome.output, check, flaw) {
            return Ok(None);
        }
        return Err(format!(
            "the run of {check} against {flaw} passed without running it:\n{}",
            outcome.tail(20)
        ));
    }
    match failure(&outcome.output) {
        Some(what) => Ok(Some(what)),
        None => Err(format!(
            "the run of {check} against {flaw} failed (exit {:?}) without a report:\n{}",
            outcome.code,
            outcome.tail(30)
        )),
    }
}

/// The record of one cell, printed as it is measured.
fn cell(build: &str, check: &str, flaw: &str, caught: Option<String>, secs: f64) -> Record {
    match &caught {
        Some(what) => eprintln!("xtask: {build}: {flaw} caught by {check}: {what}, {secs:.1} s"),
        None => eprintln!("xtask: {build}: {flaw} not caught by {check} ({secs:.1} s)"),
    }
    Record::Cell {
        build: build.into(),
        check: check.into(),
        flaw: flaw.into(),
        caught,
        secs,
    }
}

/// The ThreadSanitizer column: every shared scenario TSan can check and `stress/`'s
/// correct-semaphore tests against the correct semaphore (each a `check`), then each flaw
/// against its checks (each a `cell`).
///
/// `Err` if the nightly toolchain or its `rust-src` is missing (with the command that
/// installs it), the build fails, or the correct semaphore fails a check (a data-race
/// report included).
pub(crate) fn tsan(root: &Path, full: bool) -> Result<Vec<Record>, String> {
    let install = "ThreadSanitizer needs the nightly toolchain with the standard library's \
                   source (it is rebuilt instrumented, -Zbuild-std): run \
                   `rustup component add rust-src --toolchain nightly`";
    let sysroot = Command::new("rustc")
        .args(["+nightly", "--print", "sysroot"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .ok_or_else(|| install.to_string())?;
    if !sysroot.join("lib/rustlib/src/rust/library/std").is_dir() {
        return Err(install.to_string());
    }
    let sizes = if full {
        TsanSizes::FULL
    } else {
        TsanSizes::QUICK
    };
    let logs = log_dir(root)?;

    // One build of both test binaries, the standard library included (about 6 minutes the
    // first time here with another build running; then only what changed), with
    // `broken_sema` so that the correct runs check the binaries the flaw cells run.
    let build = run(
        &mut tsan_cargo(root, &target_dir(root).join("tsan")),
        &logs.join("tsan-build.log"),
    )?;
    if !build.passed() {
        return Err(format!("tsan: the build failed:\n{}", build.tail(40)));
    }
    let inproc = executable(&build.output, "inproc")?;
    let stress = executable(&build.output, "stress")?;
    eprintln!("xtask: tsan: built in {:.0} s", build.secs);
    let mut records = Vec::new();

    // Every scenario TSan can check on the correct semaphore, in one process, one test at a
    // time, each timed by the harness.
    let mut cmd = tsan_run(&inproc, root, "none", sizes.inproc_rounds, None);
    for blind in TSAN_FENCE_BLIND {
        cmd.args(["--skip", blind]);
    }
    let correct = run(
        cmd.args(["--exact", "--test-threads", "1"])
            .args(TIMED_JSON),
        &logs.join("tsan-inproc-correct.log"),
    )?;
    let timed = timed_tests(&correct.output);
    if !correct.passed() || timed.is_empty() {
        return Err(format!(
            "tsan: the correct semaphore failed models/inproc.rs ({:?}):\n{}",
            failure(&correct.output),
            correct.tail(60)
        ));
    }
    for (test, secs) in timed {
        records.push(Record::Check {
            build: "tsan".into(),
            check: test,
            count: sizes.inproc_rounds.into(),
            unit: "rounds".into(),
            detail: "models/inproc.rs, halt_on_error=1".into(),
            secs,
        });
    }

    // The stress tests at their debug sizes (stress/ reads no size variable; debug is its
    // smaller size, a tenth of the full iterations), without the catch tests, which run
    // the stress scenarios against each flaw in child processes (the real-thread column).
    let mut cmd = tsan_run(&stress, root, "none", 1, None);
    cmd.args(["--skip", "catches_"]);
    for blind in TSAN_FENCE_BLIND_STRESS {
        cmd.args(["--skip", blind]);
    }
    let stressed = run(
        cmd.args(["--test-threads", "1"]).args(TIMED_JSON),
        &logs.join("tsan-stress-correct.log"),
    )?;
    let timed = timed_tests(&stressed.output);
    if !stressed.passed() || timed.is_empty() {
        return Err(format!(
            "tsan: the correct semaphore failed stress/ ({:?}):\n{}",
            failure(&stressed.output),
            stressed.tail(60)
        ));
    }
    for (test, secs) in timed {
        records.push(Record::Check {
            build: "tsan".into(),
            check: format!("stress::{test}"),
            count: 1,
            unit: "runs".into(),
            detail: "stress/ at its debug sizes, halt_on_error=1".into(),
            secs,
        });
    }

    for (flaw, checks) in CELLS {
        for &check in checks {
            let mut cmd = match stress_scenario(check) {
                Some(scenario) => {
                    let mut cmd = tsan_run(&stress, root, flaw, 1, Some(sizes.stall_secs));
                    cmd.env("PARKSEMA_CHILD_SCENARIO", scenario)
                        .env("PARKSEMA_CHILD_FLAW", flaw)
                        .args(["--exact", "child::child_entry", "--ignored"]);
                    cmd
                }
                None => {
                    let mut cmd = tsan_run(
                        &inproc,
                        root,
                        flaw,
                        sizes.flaw_rounds,
                        Some(sizes.stall_secs),
                    );
                    cmd.args(["--exact", check]);
                    cmd
                }
            };
            cmd.args(["--test-threads", "1", "--nocapture"]);
            let outcome = run(&mut cmd, &logs.join(format!("tsan-{check}-{flaw}.log")))?;
            let caught = judge(&outcome, check, flaw)?;
            records.push(cell("tsan", check, flaw, caught, outcome.secs));
        }
    }
    Ok(records)
}

/// libtest's arguments for one JSON event per line, with each test's time (unstable
/// options, which the nightly-built test binaries take).
const TIMED_JSON: [&str; 4] = ["-Z", "unstable-options", "--format=json", "--report-time"];

/// `cargo +nightly test --no-run` of the two test binaries under ThreadSanitizer, into
/// `target` (its own directory: these artifacts would otherwise replace the ordinary ones).
fn tsan_cargo(root: &Path, target: &Path) -> Command {
    let mut cmd = nightly_cargo(root);
    // Every crate, the standard library included (hence -Zbuild-std), must be instrumented,
    // or the synchronization inside it (a channel, a thread's join) is invisible to TSan and
    // its accesses look like races. The flags reach only the target's crates: with
    // `--target` named, build scripts and proc macros are built without them.
    cmd.env("RUSTFLAGS", "-Zsanitizer=thread")
        .args([
            "test",
            "-Zbuild-std",
            "--target",
            TSAN_TARGET,
            "--target-dir",
        ])
        .arg(target)
        .args([
            "--features",
            "broken_sema",
            "--test",
            "inproc",
            "--test",
            "stress",
            "--no-run",
            "--message-format",
            "json-render-diagnostics",
        ]);
    cmd
}

/// A run of the ThreadSanitizer test binary `exe` against `flaw`, `rounds` rounds per
/// shared scenario, with the watchdog's stall limit at `stall_secs` (`None`: the tests'
/// own).
fn tsan_run(exe: &Path, root: &Path, flaw: &str, rounds: u32, stall_secs: Option<u32>) -> Command {
    let mut cmd = Command::new(exe);
    cmd.current_dir(root)
        // A report ends the run at once with TSan's exit code (66). Without it the harness
        // goes on and prints `test result: ok` for the test that raced; only the exit code,
        // which TSan sets to 66 at exit, says otherwise, and the report is tied to no test
        // (measured: RelaxedOrdering in `visibility`, 2 reports, "1 passed", exit 66). After
        // a watchdog stall TSan may also report the stuck threads as leaked on the way out
        // (exit 66 instead of 86); the stall report comes first and is what the cell
        // records.
        .env("TSAN_OPTIONS", "halt_on_error=1")
        .env("PARKSEMA_FLAW", flaw)
        .env("PARKSEMA_INPROC_ROUNDS", rounds.to_string())
        .env("RUST_BACKTRACE", "0");
    if let Some(secs) = stall_secs {
        cmd.env("WATCHDOG_STALL_SECS", secs.to_string());
    }
    cmd
}

/// The path of the test executable of target `name` in cargo's JSON messages.
fn executable(messages: &str, name: &str) -> Result<PathBuf, String> {
    messages
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|m| {
            m["reason"] == "compiler-artifact"
                && m["target"]["name"] == name
                && m["profile"]["test"] == true
        })
        .and_then(|m| m["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| format!("tsan: the build named no test executable for `{name}`"))
}

/// Each passed test and its seconds, from libtest's JSON events.
fn timed_tests(output: &str) -> Vec<(String, f64)> {
    output
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["type"] == "test" && e["event"] == "ok")
        .filter_map(|e| Some((e["name"].as_str()?.to_string(), e["exec_time"].as_f64()?)))
        .collect()
}
