//! Backtraces of every process in a process group, taken with `gdb`.

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// At most this many processes of the group are backtraced.
const MAX_PROCESSES: usize = 8;

/// How long one `gdb` run may take before it is killed.
const GDB_LIMIT: Duration = Duration::from_secs(30);

/// How often a running `gdb` is checked for having finished.
const GDB_POLL: Duration = Duration::from_millis(50);

/// Prints, to stderr, the pid, command line and `gdb` backtrace of every process in the group
/// `pgid` (at most [`MAX_PROCESSES`]).
pub(crate) fn dump_group(pgid: libc::pid_t) {
    let Some(gdb) = find_in_path("gdb") else {
        eprintln!("watchdog: gdb not installed; no backtraces");
        return;
    };
    let members = group_members(pgid);
    if members.is_empty() {
        eprintln!("watchdog: no process left in process group {pgid}; no backtraces");
        return;
    }
    eprintln!(
        "watchdog: backtraces of {} process(es) in process group {pgid}",
        members.len()
    );
    for member in members.iter().take(MAX_PROCESSES) {
        eprintln!(
            "watchdog: ===== process {}: {}",
            member.pid,
            cmdline(member.pid)
        );
        if member.state == 'Z' {
            eprintln!("watchdog: process {} is a zombie; no backtrace", member.pid);
            continue;
        }
        if let Err(err) = run_gdb(&gdb, member.pid) {
            eprintln!("watchdog: gdb failed on process {}: {err}", member.pid);
        }
    }
    if members.len() > MAX_PROCESSES {
        eprintln!(
            "watchdog: {} more process(es) in the group not backtraced",
            members.len() - MAX_PROCESSES
        );
    }
    eprintln!("watchdog: ===== end of backtraces");
}

/// One process of the group, as read from `/proc/PID/stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Member {
    /// Its process id.
    pid: libc::pid_t,
    /// Its state letter, for example `S` (sleeping) or `Z` (zombie).
    state: char,
}

/// Lists the processes whose process group is `pgid`: the group leader first, then by pid.
fn group_members(pgid: libc::pid_t) -> Vec<Member> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut members: Vec<Member> = entries
        .filter_map(|entry| {
            entry
                .ok()?
                .file_name()
                .to_str()?
                .parse::<libc::pid_t>()
                .ok()
        })
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (state, pgrp) = parse_stat(&stat)?;
            (pgrp == pgid).then_some(Member { pid, state })
        })
        .collect();
    members.sort_by_key(|member| (member.pid != pgid, member.pid));
    members
}

/// Extracts the state and the process group from the contents of `/proc/PID/stat`.
///
/// The second field, the command name, is in parentheses and may itself contain spaces and
/// parentheses, so the fields after it are found from the last `)`.
fn parse_stat(stat: &str) -> Option<(char, libc::pid_t)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, pgrp))
}

/// The command line of process `pid`, its arguments joined by spaces.
fn cmdline(pid: libc::pid_t) -> String {
    match std::fs::read(format!("/proc/{pid}/cmdline")) {
        Ok(bytes) if !bytes.is_empty() => {
            let words: Vec<_> = bytes
                .split(|&byte| byte == 0)
                .filter(|word| !word.is_empty())
                .map(String::from_utf8_lossy)
                .collect();
            words.join(" ")
        }
        _ => "(command line unavailable)".to_string(),
    }
}

/// Finds an executable called `name` in the directories of `PATH`.
fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

/// Whether `path` is a regular file that someone may execute.
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    path.metadata()
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// Runs `gdb` on process `pid`, its output going straight to our stderr, for at most
/// [`GDB_LIMIT`].
fn run_gdb(gdb: &Path, pid: libc::pid_t) -> io::Result<()> {
    let mut child = Command::new(gdb)
        .args(["-batch", "-nx", "-iex", "set debuginfod enabled off"])
        .args(["-ex", "info threads", "-ex", "thread apply all bt"])
        .arg("-p")
        .arg(pid.to_string())
        .stdin(Stdio::null())
        .stdout(io::stderr())
        .stderr(io::stderr())
        .spawn()?;
    let deadline = Instant::now() + GDB_LIMIT;
    loop {
        if child.try_wait()?.is_some() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            eprintln!(
                "watchdog: gdb on process {pid} took longer than {}s; killed it",
                GDB_LIMIT.as_secs()
            );
            let _ = child.kill();
            let _ = child.wait();
            return Ok(());
        }
        thread::sleep(GDB_POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_odd_command_name() {
        let stat = "1234 (a) b (c)) S 1 777 777 0 -1 4194560 120 0 0 0";
        assert_eq!(parse_stat(stat), Some(('S', 777)));
    }

    #[test]
    fn stat_truncated() {
        assert_eq!(parse_stat("1234 (x) S 1"), None);
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn own_group_contains_this_process() {
        let pid = libc::pid_t::try_from(std::process::id()).unwrap();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let (_, pgrp) = parse_stat(&stat).unwrap();
        let members = group_members(pgrp);
        assert!(
            members.iter().any(|member| member.pid == pid),
            "{members:?}"
        );
        assert!(cmdline(pid).contains("watchdog"), "{}", cmdline(pid));
    }
}
