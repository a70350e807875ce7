//! Tests of the `watchdog` supervisor binary, run on real commands.
//!
//! Wall-clock limits are part of what is tested here, so the bounds are generous: a loaded
//! two-core machine must still pass.

use std::ffi::OsStr;
use std::io::{BufRead as _, BufReader};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use watchdog::exit;

/// The supervisor binary under test.
const WATCHDOG: &str = env!("CARGO_BIN_EXE_watchdog");

/// Set in the environment of a re-executed test binary to run a child entry point.
const CHILD_ENV: &str = "WATCHDOG_SUPERVISOR_TEST_CHILD";

/// The most any supervised command in these tests may take, backtraces included.
const BOUND: Duration = Duration::from_secs(60);

/// Runs the supervisor with `args` (its options, `--` and the command) to completion.
fn supervise<I, S>(args: I) -> (Output, Duration)
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let start = Instant::now();
    let output = Command::new(WATCHDOG)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the watchdog binary could not be run");
    (output, start.elapsed())
}

/// The stdout and stderr of `output` as text, for assertions and failure messages.
fn texts(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Whether an executable called `name` is on `PATH`, decided independently of the supervisor.
fn on_path(name: &str) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            dir.join(name)
                .metadata()
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
    })
}

/// The state letter of process `pid`, or `None` once the process is gone.
fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().next()?.chars().next()
}

/// Waits (polling `/proc`, up to 10 s) until process `pid` is gone or a zombie; returns the
/// last state seen, `None` meaning gone.
///
/// SIGKILL takes effect asynchronously, so a process killed an instant ago may briefly still be
/// running; this polls an external condition and synchronizes no threads of this test.
fn wait_until_dead(pid: u32) -> Option<char> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let state = process_state(pid);
        if matches!(state, None | Some('Z')) || Instant::now() >= deadline {
            return state;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Kills process `pid` if it still exists, so that a failed test leaves nothing behind.
fn cleanup(pid: u32) {
    if matches!(process_state(pid), Some(state) if state != 'Z') {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
}

/// The first line of `text` parsed as a pid.
fn first_line_pid(text: &str) -> u32 {
    let line = text.lines().next().unwrap_or_default();
    line.trim()
        .parse()
        .unwrap_or_else(|_| panic!("expected a pid on the first line, got {text:?}"))
}

#[test]
fn hung_child_is_detected_and_backtraced() {
    let exe = std::env::current_exe().expect("the test binary's own path is unknown");
    let start = Instant::now();
    let output = Command::new(WATCHDOG)
        .args(["--stall", "1", "--"])
        .arg(&exe)
        .args([
            "--exact",
            "child_hangs_forever",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, "1")
        .stdin(Stdio::null())
        .output()
        .expect("the watchdog binary could not be run");
    let elapsed = start.elapsed();
    let (stdout, stderr) = texts(&output);
    let context = format!("elapsed {elapsed:?}\n--- stdout:\n{stdout}\n--- stderr:\n{stderr}");

    assert_eq!(output.status.code(), Some(exit::STALL), "{context}");
    assert!(
        elapsed >= Duration::from_secs(1),
        "fired before the stall limit: {context}"
    );
    assert!(elapsed < BOUND, "{context}");
    assert!(
        stderr.contains("watchdog: STALL: no output for"),
        "{context}"
    );
    assert!(
        stdout.contains("child_hangs_forever"),
        "libtest's output was not forwarded: {context}"
    );
    if on_path("gdb") {
        assert!(
            stderr.contains("child_hangs_forever --ignored"),
            "no process header: {context}"
        );
        if stderr.contains("ptrace: Operation not permitted") {
            // Some sandboxes forbid ptrace even to root; the attempt is all that can be checked.
            assert!(stderr.contains("watchdog: ===== process"), "{context}");
        } else {
            assert!(
                stderr.contains("deliberately_hung_here"),
                "no backtrace of the hung frame: {context}"
            );
        }
    } else {
        assert!(
            stderr.contains("watchdog: gdb not installed; no backtraces"),
            "{context}"
        );
    }
    assert!(
        stderr.contains("watchdog: killing process group"),
        "{context}"
    );
}

#[test]
#[ignore = "child entry point, run by hung_child_is_detected_and_backtraced"]
fn child_hangs_forever() {
    assert!(
        std::env::var_os(CHILD_ENV).is_some(),
        "child_hangs_forever is only a child entry point of hung_child_is_detected_and_backtraced, \
         which runs it under the watchdog binary; it hangs on purpose and is not a test by itself"
    );
    deliberately_hung_here();
}

/// Blocks the calling thread forever, in a frame that the backtrace must show.
#[inline(never)]
fn deliberately_hung_here() -> ! {
    loop {
        std::thread::park();
    }
}

#[test]
fn overrun_is_detected_while_output_continues() {
    let script = "while :; do echo tick; sleep 0.1; done";
    let (output, elapsed) = supervise([
        "--max",
        "1",
        "--stall",
        "30",
        "--no-backtrace",
        "--",
        "sh",
        "-c",
        script,
    ]);
    let (stdout, stderr) = texts(&output);
    let context = format!("elapsed {elapsed:?}\n--- stdout:\n{stdout}\n--- stderr:\n{stderr}");

    assert_eq!(output.status.code(), Some(exit::OVERRUN), "{context}");
    assert!(elapsed >= Duration::from_secs(1), "{context}");
    assert!(elapsed < Duration::from_secs(30), "{context}");
    assert!(stderr.contains("watchdog: OVERRUN:"), "{context}");
    assert!(!stderr.contains("STALL"), "{context}");
    assert!(stdout.contains("tick"), "{context}");
}

#[test]
fn stall_kills_the_whole_process_group() {
    let (output, elapsed) = supervise([
        "--stall",
        "1",
        "--no-backtrace",
        "--",
        "sh",
        "-c",
        "sleep 1000 & echo $! ; wait",
    ]);
    let (stdout, stderr) = texts(&output);
    let context = format!("elapsed {elapsed:?}\n--- stdout:\n{stdout}\n--- stderr:\n{stderr}");
    let grandchild = first_line_pid(&stdout);
    let state = wait_until_dead(grandchild);
    cleanup(grandchild);

    assert_eq!(output.status.code(), Some(exit::STALL), "{context}");
    assert!(elapsed < Duration::from_secs(30), "{context}");
    assert!(stderr.contains("watchdog: STALL:"), "{context}");
    assert!(stderr.contains("backtraces skipped"), "{context}");
    assert!(
        matches!(state, None | Some('Z')),
        "grandchild {grandchild} survived in state {state:?}: {context}"
    );
}

#[test]
fn failing_command_reports_its_exit_code() {
    let (output, _) = supervise(["--", "sh", "-c", "exit 3"]);
    let (_, stderr) = texts(&output);

    assert_eq!(output.status.code(), Some(exit::CHILD_FAILED), "{stderr}");
    assert!(
        stderr.contains("watchdog: command failed: exit code 3"),
        "{stderr}"
    );
}

#[test]
fn command_killed_by_a_signal_is_reported() {
    let (output, _) = supervise(["--", "sh", "-c", "kill -9 $$"]);
    let (_, stderr) = texts(&output);

    assert_eq!(output.status.code(), Some(exit::CHILD_FAILED), "{stderr}");
    assert!(
        stderr.contains("watchdog: command failed: killed by signal 9"),
        "{stderr}"
    );
}

#[test]
fn successful_command_exits_zero() {
    let (output, _) = supervise(["--", "true"]);
    let (stdout, stderr) = texts(&output);

    assert_eq!(output.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        !stderr.contains("watchdog:"),
        "unexpected messages: {stderr}"
    );
}

#[test]
fn missing_command_is_a_spawn_failure() {
    let (output, _) = supervise(["--", "/nonexistent/watchdog-test-command"]);
    let (_, stderr) = texts(&output);

    assert_eq!(output.status.code(), Some(exit::SPAWN_FAILED), "{stderr}");
    assert!(
        stderr.contains("watchdog: cannot start `/nonexistent/watchdog-test-command`"),
        "{stderr}"
    );
}

#[test]
fn output_is_forwarded() {
    let (output, _) = supervise(["--", "echo", "hello"]);
    let (stdout, stderr) = texts(&output);

    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "hello\n");
}

#[test]
fn stderr_is_forwarded_and_a_command_needs_no_separator() {
    let (output, _) = supervise(["sh", "-c", "echo to-stderr >&2"]);
    let (stdout, stderr) = texts(&output);

    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stderr, "to-stderr\n");
    assert_eq!(stdout, "");
}

#[test]
fn background_process_holding_the_output_does_not_hang_the_supervisor() {
    let (output, elapsed) = supervise(["--", "sh", "-c", "sleep 1000 & echo $!; exit 0"]);
    let (stdout, stderr) = texts(&output);
    let context = format!("elapsed {elapsed:?}\n--- stdout:\n{stdout}\n--- stderr:\n{stderr}");
    cleanup(first_line_pid(&stdout));

    assert_eq!(output.status.code(), Some(0), "{context}");
    assert!(elapsed < Duration::from_secs(30), "{context}");
    assert!(stderr.contains("output is still open"), "{context}");
}

#[test]
fn sigterm_kills_the_group_and_exits_130() {
    let mut supervisor = Command::new(WATCHDOG)
        .args(["--", "sh", "-c", "echo $$; exec sleep 1000"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the watchdog binary could not be run");
    // The command prints its pid once it runs; by then the supervisor catches SIGTERM, since it
    // registers its handlers before starting the command.
    let mut line = String::new();
    BufReader::new(supervisor.stdout.take().expect("stdout is piped"))
        .read_line(&mut line)
        .expect("the command's pid could not be read");
    let sleeper = first_line_pid(&line);
    let sent = Command::new("kill")
        .args(["-TERM", &supervisor.id().to_string()])
        .status();

    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = supervisor
            .try_wait()
            .expect("waiting for the supervisor failed")
        {
            break Some(status);
        }
        if Instant::now() >= deadline {
            let _ = supervisor.kill();
            let _ = supervisor.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let state = wait_until_dead(sleeper);
    cleanup(sleeper);
    let mut stderr = String::new();
    if let Some(mut pipe) = supervisor.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut pipe, &mut stderr);
    }

    assert!(
        sent.is_ok_and(|status| status.success()),
        "kill -TERM failed"
    );
    let status = status.expect("the supervisor ignored SIGTERM for 30 s");
    assert_eq!(status.code(), Some(exit::INTERRUPTED), "{stderr}");
    assert!(stderr.contains("watchdog: interrupted"), "{stderr}");
    assert!(
        matches!(state, None | Some('Z')),
        "command {sleeper} survived in state {state:?}"
    );
}

#[test]
fn help_lists_the_exit_codes() {
    let (output, _) = supervise(["--help"]);
    let (stdout, _) = texts(&output);

    assert_eq!(output.status.code(), Some(0));
    assert!(stdout.contains("Exit codes:"), "{stdout}");
    for code in [
        exit::STALL,
        exit::OVERRUN,
        exit::CHILD_FAILED,
        exit::SPAWN_FAILED,
        exit::INTERRUPTED,
    ] {
        assert!(
            stdout.contains(&format!("  {code} ")),
            "code {code} missing: {stdout}"
        );
    }
    assert!(
        stdout.contains("--stall <SECS>") && stdout.contains("--max <SECS>"),
        "{stdout}"
    );
    assert!(stdout.contains("--no-backtrace"), "{stdout}");
}

#[test]
fn invalid_limits_are_usage_errors() {
    for bad in [["--stall", "0"], ["--stall", "soon"], ["--max", "-1"]] {
        let (output, _) = supervise(bad.iter().copied().chain(["--", "true"]));
        let (_, stderr) = texts(&output);
        assert_eq!(output.status.code(), Some(2), "{bad:?}: {stderr}");
    }
    let (output, _) = supervise(["--stall", "1"]);
    assert_eq!(
        output.status.code(),
        Some(2),
        "a missing command must be a usage error"
    );
}
