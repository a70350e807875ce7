//! The `watchdog` supervisor: runs a command and turns a hang of it into a fast, clear failure.
//!
//! ```text
//! watchdog [--stall SECS] [--max SECS] [--no-backtrace] -- CMD ARGS...
//! ```
//!
//! The command runs in a process group of its own, with stdin inherited and its stdout and
//! stderr forwarded as they arrive. When it prints nothing for `--stall` seconds (default 300),
//! or runs longer than `--max` seconds in total (default: no limit), the supervisor prints a
//! `watchdog: STALL` or `watchdog: OVERRUN` line, backtraces every process of the group with
//! `gdb` (unless `--no-backtrace`), kills the whole group and exits. SIGINT and SIGTERM also
//! kill the group.
//!
//! # Exit codes
//!
//! | Code | Meaning |
//! |------|---------|
//! | 0    | The command exited successfully. |
//! | 87   | [`exit::STALL`]: the command printed nothing for the stall limit. |
//! | 88   | [`exit::OVERRUN`]: the command ran longer than `--max`. |
//! | 89   | [`exit::CHILD_FAILED`]: the command failed or was killed by a signal. |
//! | 90   | [`exit::SPAWN_FAILED`]: the command could not be started. |
//! | 130  | [`exit::INTERRUPTED`]: the supervisor got SIGINT or SIGTERM. |
//! | 2    | The command line of the supervisor itself was invalid. |
//!
//! ```
//! use clap::Parser as _;
//! use watchdog::supervise::{self, Args};
//!
//! let args = Args::parse_from(["watchdog", "--stall", "30", "--", "sh", "-c", "exit 3"]);
//! assert_eq!(supervise::run(&args), watchdog::exit::CHILD_FAILED);
//! ```

mod backtrace;

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use clap::Parser;

use crate::exit;

/// How often the supervisor checks the command, its output and the signals.
const POLL: Duration = Duration::from_millis(50);

/// How long the output forwarders may keep running after the command has ended; a daemonized
/// grandchild may hold the pipes open forever.
const DRAIN: Duration = Duration::from_secs(2);

/// The exit codes, as printed at the end of `--help`.
const EXIT_CODES_HELP: &str = "\
Exit codes:
  0    the command exited successfully
  87   STALL: the command printed nothing for --stall seconds
  88   OVERRUN: the command ran longer than --max seconds
  89   CHILD_FAILED: the command exited unsuccessfully or was killed by a signal
  90   SPAWN_FAILED: the command could not be started
  130  INTERRUPTED: the supervisor got SIGINT or SIGTERM
  2    the watchdog's own command line was invalid";

/// The command line of the `watchdog` binary.
///
/// ```
/// use clap::Parser as _;
/// use std::time::Duration;
///
/// let args = watchdog::supervise::Args::parse_from(["watchdog", "--max", "1.5", "--", "true"]);
/// assert_eq!(args.stall, Duration::from_secs(300));
/// assert_eq!(args.max, Some(Duration::from_millis(1500)));
/// assert!(!args.no_backtrace);
/// assert_eq!(args.command, ["true"]);
/// ```
#[derive(Debug, Clone, Parser)]
#[command(
    name = "watchdog",
    version,
    about = "Runs a command; if it stalls or overruns, backtraces its processes with gdb and kills them.",
    long_about = None,
    override_usage = "watchdog [--stall SECS] [--max SECS] [--no-backtrace] -- CMD [ARGS]...",
    after_help = EXIT_CODES_HELP
)]
pub struct Args {
    /// How long the command may go without printing anything (`--stall SECS`, default 300 s).
    ///
    /// ```
    /// use clap::Parser as _;
    /// use std::time::Duration;
    ///
    /// let args = watchdog::supervise::Args::parse_from(["watchdog", "--stall", "0.5", "true"]);
    /// assert_eq!(args.stall, Duration::from_millis(500));
    /// ```
    #[arg(
        long,
        value_name = "SECS",
        default_value = "300",
        value_parser = parse_secs,
        help = "Seconds without any output after which the command counts as stalled (fractions allowed)",
        long_help = None
    )]
    pub stall: Duration,

    /// How long the command may run in total (`--max SECS`), or `None` for no limit.
    ///
    /// ```
    /// use clap::Parser as _;
    ///
    /// let args = watchdog::supervise::Args::parse_from(["watchdog", "true"]);
    /// assert_eq!(args.max, None);
    /// ```
    #[arg(
        long,
        value_name = "SECS",
        value_parser = parse_secs,
        help = "Seconds of total run time after which the command is stopped (fractions allowed; default: no limit)",
        long_help = None
    )]
    pub max: Option<Duration>,

    /// Whether to skip the `gdb` backtraces before killing a stalled or overrunning command.
    ///
    /// ```
    /// use clap::Parser as _;
    ///
    /// let args = watchdog::supervise::Args::parse_from(["watchdog", "--no-backtrace", "true"]);
    /// assert!(args.no_backtrace);
    /// ```
    #[arg(
        long,
        help = "Kill a stalled or overrunning command without backtracing it first",
        long_help = None
    )]
    pub no_backtrace: bool,

    /// The command to run, then its arguments.
    ///
    /// ```
    /// use clap::Parser as _;
    ///
    /// let args = watchdog::supervise::Args::parse_from(["watchdog", "--", "sh", "-c", "exit 3"]);
    /// assert_eq!(args.command, ["sh", "-c", "exit 3"]);
    /// ```
    #[arg(
        value_name = "CMD",
        required = true,
        trailing_var_arg = true,
        num_args = 1..,
        help = "The command to run, and its arguments",
        long_help = None
    )]
    pub command: Vec<OsString>,
}

/// Parses a positive number of seconds, fractions allowed.
fn parse_secs(value: &str) -> Result<Duration, String> {
    let secs: f64 = value
        .trim()
        .parse()
        .map_err(|_| format!("`{value}` is not a number of seconds"))?;
    if secs.is_nan() || secs <= 0.0 {
        return Err(format!("`{value}` is not a positive number of seconds"));
    }
    Duration::try_from_secs_f64(secs).map_err(|err| format!("`{value}`: {err}"))
}

/// Runs the command of `args` under watch and returns the supervisor's exit code (see the
/// [module documentation](self)).
///
/// Messages of the supervisor go to stderr, each starting with `watchdog: `. SIGINT and
/// SIGTERM are caught for the rest of the process's life once this has been called.
///
/// ```
/// use clap::Parser as _;
/// use watchdog::supervise::{self, Args};
///
/// let args = Args::parse_from(["watchdog", "--", "true"]);
/// assert_eq!(supervise::run(&args), 0);
/// ```
pub fn run(args: &Args) -> i32 {
    let interrupted = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        if let Err(err) = signal_hook::flag::register(signal, Arc::clone(&interrupted)) {
            eprintln!("watchdog: cannot catch signal {signal}: {err}");
        }
    }

    let Some((program, program_args)) = args.command.split_first() else {
        eprintln!("watchdog: no command given");
        return exit::SPAWN_FAILED;
    };
    let shown = shell_words(&args.command);
    let start = Instant::now();
    let spawned = Command::new(program)
        .args(program_args)
        .process_group(0)
        .stdin(Stdio::inherit())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(err) => {
            eprintln!("watchdog: cannot start `{shown}`: {err}");
            return exit::SPAWN_FAILED;
        }
    };
    // The command leads its own process group, so the group id is its pid.
    let pgid = libc::pid_t::try_from(child.id()).expect("a pid always fits in pid_t");

    let clock = Arc::new(OutputClock {
        start,
        last: AtomicU64::new(0),
    });
    let (done, forwarders) = mpsc::channel();
    let mut running = 0;
    if let Some(out) = child.stdout.take() {
        running += spawn_forwarder("stdout", out, io::stdout, Arc::clone(&clock), done.clone());
    }
    if let Some(err) = child.stderr.take() {
        running += spawn_forwarder("stderr", err, io::stderr, Arc::clone(&clock), done.clone());
    }
    drop(done);
    let drain = |deadline: Instant| wait_forwarders(&forwarders, running, deadline);

    match watch(&mut child, args, &clock, &interrupted) {
        Outcome::Exited(status) => {
            drain(Instant::now() + DRAIN);
            exited(status)
        }
        Outcome::WaitFailed(err) => {
            eprintln!("watchdog: cannot wait for `{shown}`: {err}; killing process group {pgid}");
            kill_group(pgid);
            let _ = child.wait();
            drain(Instant::now() + DRAIN);
            exit::CHILD_FAILED
        }
        Outcome::Interrupted => {
            eprintln!("watchdog: interrupted; killing process group {pgid}");
            kill_group(pgid);
            let _ = child.wait();
            drain(Instant::now() + DRAIN);
            exit::INTERRUPTED
        }
        Outcome::Stalled(quiet) => {
            eprintln!(
                "watchdog: STALL: no output for {:.1}s (limit {:.1}s) from `{shown}`",
                quiet.as_secs_f64(),
                args.stall.as_secs_f64()
            );
            give_up(&mut child, pgid, args, &drain);
            exit::STALL
        }
        Outcome::Overran(ran) => {
            let max = args.max.unwrap_or_default();
            eprintln!(
                "watchdog: OVERRUN: `{shown}` still running after {:.1}s (limit {:.1}s)",
                ran.as_secs_f64(),
                max.as_secs_f64()
            );
            give_up(&mut child, pgid, args, &drain);
            exit::OVERRUN
        }
    }
}

/// How the watch over the command ended.
enum Outcome {
    /// The command exited by itself.
    Exited(ExitStatus),
    /// Waiting for the command failed.
    WaitFailed(io::Error),
    /// The supervisor got SIGINT or SIGTERM.
    Interrupted,
    /// The command printed nothing for this long, at least the stall limit.
    Stalled(Duration),
    /// The command ran this long, at least the total limit.
    Overran(Duration),
}

/// Polls the command until it exits, stalls, overruns or the supervisor is interrupted.
fn watch(child: &mut Child, args: &Args, clock: &OutputClock, interrupted: &AtomicBool) -> Outcome {
    loop {
        if interrupted.load(Ordering::Relaxed) {
            return Outcome::Interrupted;
        }
        match child.try_wait() {
            Ok(Some(status)) => return Outcome::Exited(status),
            Ok(None) => {}
            Err(err) => return Outcome::WaitFailed(err),
        }
        let quiet = clock.quiet();
        if quiet >= args.stall {
            return Outcome::Stalled(quiet);
        }
        let ran = clock.start.elapsed();
        if let Some(max) = args.max
            && ran >= max
        {
            return Outcome::Overran(ran);
        }
        thread::sleep(POLL);
    }
}

/// Backtraces (unless disabled) and kills the process group of a stalled or overrunning command.
fn give_up(child: &mut Child, pgid: libc::pid_t, args: &Args, drain: &dyn Fn(Instant)) {
    if args.no_backtrace {
        eprintln!("watchdog: backtraces skipped (--no-backtrace)");
    } else {
        backtrace::dump_group(pgid);
    }
    eprintln!("watchdog: killing process group {pgid}");
    kill_group(pgid);
    let _ = child.wait();
    drain(Instant::now() + DRAIN);
}

/// Maps the exit status of a command that ended by itself to the supervisor's exit code.
fn exited(status: ExitStatus) -> i32 {
    if status.success() {
        return 0;
    }
    match (status.code(), status.signal()) {
        (Some(code), _) => eprintln!("watchdog: command failed: exit code {code}"),
        (None, Some(signal)) => eprintln!("watchdog: command failed: killed by signal {signal}"),
        (None, None) => eprintln!("watchdog: command failed: {status}"),
    }
    exit::CHILD_FAILED
}

/// Sends SIGKILL to every process of the group `pgid`.
fn kill_group(pgid: libc::pid_t) {
    // SAFETY:
    // - `killpg` has no memory-safety preconditions: it takes two integers and only sends a
    //   signal.
    // - `pgid` is the pid of our child, which has not been reaped yet when this is called, so
    //   the id still names the group created for it and cannot have been reused by another
    //   process (group).
    let rc = unsafe { libc::killpg(pgid, libc::SIGKILL) };
    if rc != 0 {
        let err = io::Error::last_os_error();
        // ESRCH means every process of the group is already gone, which is the goal.
        if err.raw_os_error() != Some(libc::ESRCH) {
            eprintln!("watchdog: cannot kill process group {pgid}: {err}");
        }
    }
}

/// When the command last printed anything, on either stream.
#[derive(Debug)]
struct OutputClock {
    /// When the command was started.
    start: Instant,
    /// Nanoseconds from `start` to the latest output.
    last: AtomicU64,
}

impl OutputClock {
    /// Records output now.
    fn touch(&self) {
        let now = u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.last.fetch_max(now, Ordering::Relaxed);
    }

    /// How long ago the latest output (or the start) was.
    fn quiet(&self) -> Duration {
        let last = self.start + Duration::from_nanos(self.last.load(Ordering::Relaxed));
        last.elapsed()
    }
}

/// Starts a thread that copies `from` to the stream returned by `to` as bytes arrive, records
/// output on `clock`, and reports on `done` when `from` reaches its end. Returns how many
/// threads were started (0 or 1).
fn spawn_forwarder<R, W>(
    which: &str,
    mut from: R,
    to: fn() -> W,
    clock: Arc<OutputClock>,
    done: mpsc::Sender<()>,
) -> usize
where
    R: Read + Send + 'static,
    W: Write + 'static,
{
    let spawned = thread::Builder::new()
        .name(format!("watchdog {which}"))
        .spawn(move || {
            let mut buf = [0; 8192];
            loop {
                match from.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        clock.touch();
                        // If our own stream is gone, keep draining so that the command never blocks
                        // on a full pipe.
                        let mut to = to();
                        let _ = to.write_all(&buf[..n]).and_then(|()| to.flush());
                    }
                    Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = done.send(());
        });
    match spawned {
        Ok(_) => 1,
        Err(err) => {
            eprintln!("watchdog: cannot forward the command's {which}: {err}");
            0
        }
    }
}

/// Waits until `running` forwarders have finished, or until `deadline`.
fn wait_forwarders(forwarders: &mpsc::Receiver<()>, running: usize, deadline: Instant) {
    for _ in 0..running {
        let left = deadline.saturating_duration_since(Instant::now());
        if forwarders.recv_timeout(left).is_err() {
            eprintln!(
                "watchdog: the command's output is still open (a background process may hold it); not waiting for it"
            );
            return;
        }
    }
}

/// Joins `words` with spaces, quoting the ones that need it, for messages.
fn shell_words(words: &[OsString]) -> String {
    let quoted: Vec<String> = words
        .iter()
        .map(|word| {
            let word = word.to_string_lossy();
            let plain = !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
            if plain {
                word.into_owned()
            } else {
                format!("'{}'", word.replace('\'', r"'\''"))
            }
        })
        .collect();
    quoted.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secs_accept_fractions() {
        assert_eq!(parse_secs("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_secs("300"), Ok(Duration::from_secs(300)));
    }

    #[test]
    fn secs_reject_nonsense() {
        for value in ["", "x", "0", "-2", "NaN", "inf"] {
            assert!(parse_secs(value).is_err(), "{value:?}");
        }
    }

    #[test]
    fn words_are_quoted_when_needed() {
        let words: Vec<OsString> = ["sh", "-c", "exit 3", "it's"].map(OsString::from).into();
        assert_eq!(shell_words(&words), r"sh -c 'exit 3' 'it'\''s'");
    }

    #[test]
    fn command_line_without_separator_keeps_flags_of_the_command() {
        let args = Args::parse_from(["watchdog", "--stall", "2", "ls", "-l", "--all"]);
        assert_eq!(args.stall, Duration::from_secs(2));
        assert_eq!(args.command, ["ls", "-l", "--all"]);
    }

    #[test]
    fn command_line_with_separator() {
        let args = Args::parse_from(["watchdog", "--no-backtrace", "--", "sh", "-c", "exit 3"]);
        assert!(args.no_backtrace);
        assert_eq!(args.max, None);
        assert_eq!(args.command, ["sh", "-c", "exit 3"]);
    }

    #[test]
    fn command_is_required() {
        assert!(Args::try_parse_from(["watchdog", "--stall", "2"]).is_err());
    }
}
