//! What a contention run costs the kernel, per operation: context switches of the worker
//! threads (`getrusage(RUSAGE_THREAD)`, voluntary and involuntary) and futex system calls of
//! the whole process (the kernel's `syscalls:sys_enter_futex` tracepoint, counted by a
//! `perf_event_open` counter that the worker threads inherit). The futex counter needs a
//! kernel with tracefs and the permission to open tracepoint counters (root, or
//! `perf_event_paranoid` at most 1); where either is missing the count is `None`.

use std::fs;
use std::io;

/// A thread's context switches so far: voluntary (it blocked) and involuntary (preempted).
pub fn thread_context_switches() -> (u64, u64) {
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct; `getrusage`
    // overwrites it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable `rusage`; RUSAGE_THREAD exists on Linux.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    assert_eq!(rc, 0, "getrusage(RUSAGE_THREAD)");
    (usage.ru_nvcsw as u64, usage.ru_nivcsw as u64)
}

/// The leading fields of the kernel's `struct perf_event_attr`, as of its first version
/// (`PERF_ATTR_SIZE_VER0`, 64 bytes), which every kernel accepts.
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    /// The flag bits: `disabled` is bit 0, `inherit` bit 1.
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

const _: () = assert!(size_of::<PerfEventAttr>() == 64);

/// `perf_event_attr.flags`: the counter is inherited by threads created after it opens.
const INHERIT: u64 = 1 << 1;
/// `perf_event_open`'s flag for a close-on-exec descriptor (`linux/perf_event.h`).
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;

/// A count of the futex system calls this process and the threads it creates from now on
/// make. Threads' counts are added to it when they exit, so read it after joining them.
#[derive(Debug)]
pub struct FutexCounter {
    fd: libc::c_int,
}

impl FutexCounter {
    /// Opens the counter; `Err` where tracepoints cannot be counted here.
    pub fn open() -> io::Result<FutexCounter> {
        let read = |path: &str| -> io::Result<u64> {
            fs::read_to_string(path)?
                .trim()
                .parse()
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("{path}: {e}")))
        };
        let kind = read("/sys/bus/event_source/devices/tracepoint/type")?;
        let id = read("/sys/kernel/tracing/events/syscalls/sys_enter_futex/id")
            .or_else(|_| read("/sys/kernel/debug/tracing/events/syscalls/sys_enter_futex/id"))?;
        let attr = PerfEventAttr {
            kind: u32::try_from(kind).map_err(io::Error::other)?,
            size: size_of::<PerfEventAttr>() as u32,
            config: id,
            flags: INHERIT,
            ..PerfEventAttr::default()
        };
        // SAFETY: `attr` is a valid `perf_event_attr` of the size it states, alive for the
        // call; pid 0 and cpu -1 count this process on every CPU; no group fd; the flag
        // asks only for close-on-exec.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                &attr as *const PerfEventAttr,
                0 as libc::pid_t,
                -1 as libc::c_int,
                -1 as libc::c_int,
                PERF_FLAG_FD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(FutexCounter {
            fd: libc::c_int::try_from(fd).map_err(io::Error::other)?,
        })
    }

    /// The futex calls counted so far (with those of the threads that have exited).
    pub fn read(&self) -> u64 {
        let mut count = 0u64;
        // SAFETY: `fd` is an open perf counter (closed only in `drop`); the buffer is 8
        // writable bytes, the size of the counter's value with no `read_format` flags.
        let n = unsafe {
            libc::read(
                self.fd,
                (&mut count as *mut u64).cast::<libc::c_void>(),
                size_of::<u64>(),
            )
        };
        assert_eq!(n, 8, "read(perf counter): {}", io::Error::last_os_error());
        count
    }
}

impl Drop for FutexCounter {
    fn drop(&mut self) {
        // SAFETY: `fd` is the counter this value owns; nothing uses it after this.
        unsafe { libc::close(self.fd) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_futex_counter_counts_a_threads_calls() {
        let counter = match FutexCounter::open() {
            Ok(c) => c,
            // Where the kernel refuses, the benchmark reports no futex counts at all; this
            // test then has nothing to check, and says so.
            Err(e) => {
                eprintln!("tracepoint counters are not available here ({e}): nothing to check");
                return;
            }
        };
        let before = counter.read();
        // A thread created after the counter opened makes 1 000 futex calls (wakes on a word
        // nobody waits on, which return at once); they count once it exits.
        std::thread::spawn(|| {
            let word = 0u32;
            for _ in 0..1000 {
                // SAFETY: FUTEX_WAKE on a valid, aligned u32 that outlives the call; it
                // wakes nobody and touches no memory.
                unsafe {
                    libc::syscall(
                        libc::SYS_futex,
                        &word as *const u32,
                        libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
                        1,
                    )
                };
            }
        })
        .join()
        .unwrap();
        let counted = counter.read() - before;
        // The spawn and the join make a few calls of their own.
        assert!(
            (1000..1100).contains(&counted),
            "{counted} futex calls counted"
        );
    }

    #[test]
    fn context_switches_count_a_sleep() {
        let (v0, _) = thread_context_switches();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let (v1, _) = thread_context_switches();
        assert!(v1 > v0, "sleeping is a voluntary context switch");
    }
}
