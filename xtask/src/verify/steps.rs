//! The cargo-test steps of `cargo xtask verify`: each runs under the `watchdog` supervisor,
//! its output kept in `target/verify/<build>.log` and read a line at a time, cargo's
//! announcements of its targets and libtest's JSON events (`--format json`), into each
//! test's result and, for a failed step, why it failed.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io::{BufRead, BufReader, IsTerminal, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use super::Step;

/// libtest's JSON output (`-Z unstable-options --format json`) is unstable: libtest accepts
/// it when `RUSTC_BOOTSTRAP` is set in the test binary's environment, read when it runs. So
/// the variable goes to what runs the tests, never to cargo, whose compilers would see it
/// (proc-macro2's build script reads it, and every derive would be rebuilt): the test
/// binaries get it from this runner (`env` in front of each), and the doctests, which rustdoc
/// runs, from the `RUSTDOC` wrapper `rustdoc_wrapper` writes.
pub(super) const BOOTSTRAP_RUNNER: &str =
    "target.'cfg(all())'.runner = ['env', 'RUSTC_BOOTSTRAP=1']";

/// Writes the `RUSTDOC` wrapper of the cargo-test steps into `dir`: rustdoc with
/// `RUSTC_BOOTSTRAP` set, so the doctests' libtest takes `--format json` (see
/// [`BOOTSTRAP_RUNNER`]).
pub(super) fn rustdoc_wrapper(dir: &Path) -> Result<PathBuf, String> {
    let path = dir.join("rustdoc-json");
    fs::write(&path, "#!/bin/sh\nRUSTC_BOOTSTRAP=1 exec rustdoc \"$@\"\n")
        .map_err(|e| format!("{}: {e}", path.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(path)
}

/// One event of libtest's JSON output: a suite (a test binary, or a crate's doctests) starts
/// or ends, a test starts or ends. The fields a report needs; libtest writes more.
#[derive(Debug, serde::Deserialize)]
struct Event {
    #[serde(rename = "type")]
    kind: String,
    /// Absent from rustdoc's closing `report` event.
    #[serde(default)]
    event: String,
    name: Option<String>,
    test_count: Option<u64>,
    /// A failed test's captured output.
    stdout: Option<String>,
}

/// A test's result from its closing event: `ok`, `FAILED` or `ignored`; `None` for the other
/// events.
fn test_result(e: &Event) -> Option<&'static str> {
    if e.kind != "test" {
        return None;
    }
    match e.event.as_str() {
        "ok" => Some("ok"),
        "failed" => Some("FAILED"),
        "ignored" => Some("ignored"),
        _ => None,
    }
}

/// What one cargo-test step's output says, read a line at a time: the targets cargo
/// announced (its `Running X` and `Doc-tests X` lines, on stderr) and libtest's events (on
/// stdout). The two streams arrive out of step, each in its own order, so a test is filed
/// under a block (the k-th run libtest started) and the block's target is resolved at the
/// end: the k-th target cargo announced.
#[derive(Default)]
struct Results {
    tests: Vec<(usize, TestResult)>,
    targets: Vec<String>,
    block: usize,
    /// A crate's doctests run as up to two suites under one `Doc-tests` line (the doctests
    /// merged into one binary, then those that must run alone), closed by a `report` event:
    /// while this is set, a suite that starts before cargo announces another target belongs
    /// to the same block.
    doc_run_open: bool,
    /// The last lines that are not events (a build error, a stall report).
    tail: Vec<String>,
    /// Each failed test's captured output.
    outputs: BTreeMap<(usize, String), String>,
    /// The test that started last without ending (the one a stall or a crash stopped).
    unfinished: Option<(usize, String)>,
}

/// A failed test: its target, its name, its captured output.
type Failure = (String, String, Option<String>);

impl Results {
    fn target(&self, block: usize) -> String {
        self.targets
            .get(block.saturating_sub(1))
            .cloned()
            .unwrap_or_default()
    }

    fn line(&mut self, line: &str, progress: &Progress) {
        let trimmed = line.trim();
        let event = trimmed
            .starts_with('{')
            .then(|| serde_json::from_str::<Event>(trimmed).ok())
            .flatten();
        let Some(event) = event else {
            self.tail.push(line.to_string());
            if self.tail.len() > 40 {
                self.tail.remove(0);
            }
            if let Some(rest) = trimmed.strip_prefix("Running ") {
                // cargo: `Running tests/loom.rs (target/debug/deps/loom-...)`.
                let target = rest.split(" (").next().unwrap_or(rest).to_string();
                if progress.plain {
                    progress.line(&format!("xtask: {}: {target}", progress.step.name()));
                }
                self.targets.push(target);
            } else if let Some(rest) = trimmed.strip_prefix("Doc-tests ") {
                self.targets.push(format!("doc-tests {rest}"));
            }
            return;
        };
        match (event.kind.as_str(), event.event.as_str()) {
            ("suite", "started") => {
                if !(self.doc_run_open && self.targets.len() <= self.block) {
                    self.block += 1;
                }
                self.doc_run_open = self.target(self.block).starts_with("doc-tests ");
                progress.bar.inc_length(event.test_count.unwrap_or(0));
                progress.bar.set_message(self.target(self.block));
            }
            ("report", _) => self.doc_run_open = false,
            ("test", "started") => {
                let name = event.name.clone().unwrap_or_default();
                progress
                    .bar
                    .set_message(format!("{}: {name}", self.target(self.block)));
                self.unfinished = Some((self.block, name));
            }
            _ => {}
        }
        let Some(result) = test_result(&event) else {
            return;
        };
        let name = event.name.unwrap_or_default();
        progress.bar.inc(1);
        if self
            .unfinished
            .as_ref()
            .is_some_and(|(b, n)| *b == self.block && *n == name)
        {
            self.unfinished = None;
        }
        if result == "FAILED" {
            progress.line(&format!(
                "xtask: {} FAILED: {}: {name}",
                progress.step.name(),
                self.target(self.block)
            ));
            if let Some(out) = event.stdout {
                self.outputs.insert((self.block, name.clone()), out);
            }
        }
        self.tests.push((
            self.block,
            TestResult {
                target: String::new(),
                name,
                result: result.to_string(),
            },
        ));
    }

    /// Every test with its target, the failures with their output, the test that never
    /// ended, and the last lines that were not events.
    fn finish(mut self) -> (Vec<TestResult>, Vec<Failure>, Option<String>, Vec<String>) {
        let target_of = |block: usize| {
            self.targets
                .get(block.saturating_sub(1))
                .cloned()
                .unwrap_or_else(|| "?".to_string())
        };
        let failures = self
            .tests
            .iter()
            .filter(|(_, t)| t.result == "FAILED")
            .map(|(block, t)| {
                let out = self.outputs.remove(&(*block, t.name.clone()));
                (target_of(*block), t.name.clone(), out)
            })
            .collect();
        let unfinished = self
            .unfinished
            .as_ref()
            .map(|(block, name)| format!("{}: {name}", target_of(*block)));
        let tests = self
            .tests
            .iter()
            .cloned()
            .map(|(block, mut t)| {
                t.target = target_of(block);
                t
            })
            .collect();
        (tests, failures, unfinished, self.tail)
    }
}

/// One libtest result.
#[derive(Debug, Clone, Serialize)]
pub(super) struct TestResult {
    /// The test binary (`tests/loom.rs`, `src/lib.rs`, ...), as cargo names it.
    pub(super) target: String,
    pub(super) name: String,
    /// `ok`, `FAILED` or `ignored`.
    pub(super) result: String,
}

/// How one step went.
#[derive(Debug, Clone, Serialize)]
pub(super) struct StepOutcome {
    pub(super) step: Step,
    /// The command, as run.
    pub(super) command: String,
    pub(super) passed: bool,
    pub(super) secs: f64,
    /// Where its whole output is.
    pub(super) log: Option<PathBuf>,
    /// Why it failed, in a few lines, if it did.
    pub(super) failure: Option<String>,
    pub(super) tests: Vec<TestResult>,
}

pub(super) fn announce(step: Step) {
    eprintln!("xtask: {} ...", step.name());
}

pub(super) fn failed_step(step: Step, command: &str, why: &str, started: Instant) -> StepOutcome {
    eprintln!("xtask: {}: {why}", step.name());
    StepOutcome {
        step,
        command: command.to_string(),
        passed: false,
        secs: started.elapsed().as_secs_f64(),
        log: None,
        failure: Some(why.to_string()),
        tests: Vec::new(),
    }
}

/// A progress bar on a terminal; on anything else, plain lines (one per test binary and per
/// failure), so a CI log shows what ran.
struct Progress {
    bar: ProgressBar,
    plain: bool,
    step: Step,
}

impl Progress {
    fn new(step: Step) -> Progress {
        let plain = !std::io::stderr().is_terminal();
        let bar = if plain {
            ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden())
        } else {
            ProgressBar::new(0)
        };
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix:>8} [{elapsed_precise}] {bar:30} {pos}/{len} tests {wide_msg}",
            )
            .expect("the template is valid"),
        );
        bar.set_prefix(step.name());
        bar.enable_steady_tick(Duration::from_millis(250));
        Progress { bar, plain, step }
    }

    fn line(&self, text: &str) {
        if self.plain {
            eprintln!("{text}");
        } else {
            self.bar.println(text);
        }
    }
}

/// Runs one cargo-test step, keeping its output in `log` and its results.
pub(super) fn run_step(step: Step, mut cmd: Command, log: &Path) -> StepOutcome {
    let started = Instant::now();
    let command = format!("{cmd:?}");
    let progress = Progress::new(step);
    progress.line(&format!("xtask: {} build: {command}", step.name()));
    // stdout and stderr in two pipes: the supervisor forwards each as it arrives, in chunks,
    // so one pipe for both would splice a line of one into a line of the other; each stream
    // keeps its own order and its lines whole.
    let mut child = match cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => return failed_step(step, &command, &format!("cannot start: {e}"), started),
    };
    let (tx, rx) = mpsc::channel::<String>();
    let readers: Vec<_> = [
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
    ]
    .into_iter()
    .flatten()
    .map(|stream| {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        })
    })
    .collect();
    drop(tx);
    let mut file = fs::File::create(log).ok();
    let mut results = Results::default();
    for line in rx {
        if let Some(f) = file.as_mut() {
            let _ = writeln!(f, "{line}");
        }
        results.line(&line, &progress);
    }
    for reader in readers {
        let _ = reader.join();
    }
    let (tests, failures, unfinished, tail) = results.finish();
    let status = child.wait();
    progress.bar.finish_and_clear();
    let passed = status.as_ref().is_ok_and(|s| s.success());
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "xtask: {} build {} in {secs:.1} s ({} tests; log {})",
        step.name(),
        if passed { "passed" } else { "FAILED" },
        tests.len(),
        log.display()
    );
    let failure = (!passed).then(|| {
        let code = status.map_or("not started".to_string(), |s| format!("{s}"));
        failure_summary(&failures, unfinished.as_deref(), &code, &tail)
    });
    StepOutcome {
        step,
        command,
        passed,
        secs,
        log: Some(log.to_path_buf()),
        failure,
        tests,
    }
}

/// Why a step failed: each failed test's first lines of captured output (from its libtest
/// event), the test that started and never ended (a stall, a crash), else the last lines of
/// output (a build error, a stall report).
fn failure_summary(
    failures: &[Failure],
    unfinished: Option<&str>,
    code: &str,
    tail: &[String],
) -> String {
    let mut out = format!("exit: {code}\n");
    for (target, name, output) in failures {
        let _ = writeln!(out, "---- {target}: {name} ----");
        match output {
            Some(text) => {
                let head: Vec<&str> = text.lines().take(10).collect();
                let _ = writeln!(out, "{}", head.join("\n"));
            }
            None => {
                let _ = writeln!(out, "(no output captured)");
            }
        }
    }
    if let Some(name) = unfinished {
        let _ = writeln!(out, "started and never ended: {name}");
    }
    if failures.is_empty() {
        let _ = writeln!(out, "{}", tail.join("\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each test is filed under the target cargo announced for its run, whichever stream
    /// comes first, and a crate's doctests in their two suites under their one `Doc-tests`
    /// line.
    #[test]
    fn tests_are_filed_under_their_targets() {
        let suite =
            |n: u64| format!(r#"{{ "type": "suite", "event": "started", "test_count": {n} }}"#);
        let ok = |name: &str| format!(r#"{{ "type": "test", "name": "{name}", "event": "ok" }}"#);
        let report = r#"{ "type": "report", "total_time": 0.8, "compilation_time": 0.7 }"#;
        let lines = [
            "     Running tests/api.rs (target/release/deps/api-1)".to_string(),
            suite(1),
            ok("a"),
            // libtest's first event before cargo's line that announces its target.
            suite(1),
            "     Running tests/stress.rs (target/release/deps/stress-2)".to_string(),
            ok("s"),
            "   Doc-tests parksema".to_string(),
            suite(2),
            ok("src/lib.rs - (line 1)"),
            ok("src/lib.rs - (line 9)"),
            suite(1),
            ok("src/permit.rs - split (line 112)"),
            report.to_string(),
            "   Doc-tests watchdog".to_string(),
            suite(1),
            ok("watchdog/src/lib.rs - (line 23)"),
            report.to_string(),
            // A doctest run without the closing event (a crate of an earlier edition).
            "   Doc-tests old".to_string(),
            suite(1),
            ok("old/src/lib.rs - (line 3)"),
            "   Doc-tests last".to_string(),
            suite(1),
            ok("last/src/lib.rs - (line 5)"),
        ];
        let progress = Progress {
            bar: ProgressBar::hidden(),
            plain: false,
            step: Step::Real,
        };
        let mut results = Results::default();
        for line in &lines {
            results.line(line, &progress);
        }
        let (tests, failures, unfinished, _) = results.finish();
        let filed: Vec<(&str, &str)> = tests
            .iter()
            .map(|t| (t.target.as_str(), t.name.as_str()))
            .collect();
        assert_eq!(
            filed,
            [
                ("tests/api.rs", "a"),
                ("tests/stress.rs", "s"),
                ("doc-tests parksema", "src/lib.rs - (line 1)"),
                ("doc-tests parksema", "src/lib.rs - (line 9)"),
                ("doc-tests parksema", "src/permit.rs - split (line 112)"),
                ("doc-tests watchdog", "watchdog/src/lib.rs - (line 23)"),
                ("doc-tests old", "old/src/lib.rs - (line 3)"),
                ("doc-tests last", "last/src/lib.rs - (line 5)"),
            ]
        );
        assert!(failures.is_empty() && unfinished.is_none());
    }

    #[test]
    fn libtest_events_are_read() {
        let read = |l: &str| serde_json::from_str::<Event>(l).unwrap();
        let ok = read(r#"{ "type": "test", "name": "a::b", "event": "ok" }"#);
        assert_eq!(
            (test_result(&ok), ok.name.as_deref()),
            (Some("ok"), Some("a::b"))
        );
        let failed = read(
            r#"{ "type": "test", "name": "x - should panic", "event": "failed", "stdout": "boom\n" }"#,
        );
        assert_eq!(test_result(&failed), Some("FAILED"));
        assert_eq!(failed.stdout.as_deref(), Some("boom\n"));
        let ignored =
            read(r#"{ "type": "test", "name": "c", "event": "ignored", "message": "slow" }"#);
        assert_eq!(test_result(&ignored), Some("ignored"));
        let started = read(r#"{ "type": "test", "event": "started", "name": "c" }"#);
        assert_eq!(test_result(&started), None);
        let suite = read(r#"{ "type": "suite", "event": "started", "test_count": 13 }"#);
        assert_eq!((test_result(&suite), suite.test_count), (None, Some(13)));
        let summary = failure_summary(
            &[("tests/api.rs".into(), "t".into(), Some("boom\n".into()))],
            Some("tests/stress.rs: s"),
            "exit status: 1",
            &[],
        );
        assert!(
            summary.contains("---- tests/api.rs: t ----\nboom"),
            "{summary}"
        );
        assert!(
            summary.contains("started and never ended: tests/stress.rs: s"),
            "{summary}"
        );
    }
}
