//! The contention harness: persistent threads released together by a barrier, stopped by a
//! flag after a fixed duration, each counting its own operations (the design of
//! parking_lot's benchmark crate).

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::counters::{FutexCounter, thread_context_switches};
use crate::peers::{OwnCounts, Peer};

/// A busy loop of a calibrated length, standing for work done while holding a permit or
/// between two acquisitions.
#[derive(Clone, Copy, Debug)]
pub struct Work {
    /// What the loop is meant to take, in nanoseconds (the label in reports).
    pub nominal_ns: u64,
    /// Loop iterations that took about `nominal_ns` when calibrated.
    pub iterations: u64,
}

impl Work {
    /// No work at all.
    pub const NONE: Work = Work {
        nominal_ns: 0,
        iterations: 0,
    };

    /// Calibrates a loop that takes about `ns` nanoseconds on this machine: the median of
    /// several timings of a long loop, so one preemption does not skew it.
    pub fn calibrate(ns: u64) -> Work {
        if ns == 0 {
            return Work::NONE;
        }
        const PROBE: u64 = 2_000_000;
        let mut per_iter: Vec<f64> = (0..7)
            .map(|_| {
                let start = Instant::now();
                spin(PROBE);
                start.elapsed().as_nanos() as f64 / PROBE as f64
            })
            .collect();
        per_iter.sort_by(f64::total_cmp);
        let iterations = ((ns as f64 / per_iter[3]).round() as u64).max(1);
        Work {
            nominal_ns: ns,
            iterations,
        }
    }

    /// Runs the loop.
    #[inline]
    pub fn run(self) {
        spin(self.iterations);
    }
}

#[inline(never)]
fn spin(iterations: u64) {
    let mut x = 0u64;
    for i in 0..iterations {
        x = black_box(x.wrapping_add(i));
    }
    black_box(x);
}

/// One cell of the contention matrix.
#[derive(Clone, Copy, Debug)]
pub struct Cell {
    /// Threads competing.
    pub threads: usize,
    /// Permits in the semaphore.
    pub permits: usize,
    /// Work while holding a permit.
    pub hold: Work,
    /// Work between releasing a permit and asking for the next.
    pub between: Work,
    /// How long the threads run.
    pub duration: Duration,
}

/// What one run of one peer in one cell measured.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Operations (acquire + hold + release) per second, all threads together.
    pub ops_per_sec: f64,
    /// Operations of each thread, sorted.
    pub per_thread: Vec<u64>,
    /// Time from asking for a permit to having it, in nanoseconds: p50, p99, p99.9.
    pub wait_ns: [u64; 3],
    /// The longest run of consecutive acquisitions by one thread.
    pub longest_streak: u64,
    /// CPU time (user + system, all threads) per operation, in nanoseconds.
    pub cpu_ns_per_op: f64,
    /// Context switches of the worker threads per operation: voluntary (blocked), involuntary
    /// (preempted).
    pub switches_per_op: (f64, f64),
    /// Futex system calls of the process per operation (the threads' start and end add a
    /// few per thread); `None` where the kernel does not count them for us.
    pub futex_per_op: Option<f64>,
    /// The semaphore's own counts per operation (parksema with the `profile` feature).
    pub own_per_op: Option<OwnCounts>,
}

/// CPU time this thread has used so far.
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID exists on Linux.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

struct ThreadResult {
    ops: u64,
    waits: Histogram<u64>,
    longest_streak: u64,
    cpu: Duration,
    switches: (u64, u64),
}

/// Runs `P` in `cell` and measures it.
pub fn run<P: Peer>(cell: Cell) -> Outcome {
    let sem = Arc::new(P::with_permits(cell.permits));
    let start = Arc::new(Barrier::new(cell.threads + 1));
    let stop = Arc::new(AtomicBool::new(false));
    // The thread that took the last permit, for streaks. One more shared word every
    // operation touches; it costs every peer the same.
    let last = Arc::new(AtomicUsize::new(usize::MAX));
    // Opened before the workers start, so they inherit it.
    let futex = FutexCounter::open().ok();
    let futex0 = futex.as_ref().map(FutexCounter::read);
    let workers: Vec<_> = (0..cell.threads)
        .map(|id| {
            let (sem, start, stop, last) = (sem.clone(), start.clone(), stop.clone(), last.clone());
            thread::spawn(move || {
                // Up to a minute of waiting at two significant digits (1 % resolution).
                let mut waits = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 2)
                    .expect("valid histogram bounds");
                let (mut ops, mut streak, mut longest_streak) = (0u64, 0u64, 0u64);
                start.wait();
                let cpu0 = thread_cpu_time();
                let switches0 = thread_context_switches();
                while !stop.load(Ordering::Relaxed) {
                    let asked = Instant::now();
                    sem.hold(|| {
                        let waited = asked.elapsed();
                        waits.saturating_record(waited.as_nanos().max(1) as u64);
                        if last.swap(id, Ordering::Relaxed) == id {
                            streak += 1;
                        } else {
                            streak = 1;
                        }
                        longest_streak = longest_streak.max(streak);
                        cell.hold.run();
                    });
                    ops += 1;
                    cell.between.run();
                }
                let cpu = thread_cpu_time() - cpu0;
                let switches1 = thread_context_switches();
                ThreadResult {
                    ops,
                    waits,
                    longest_streak,
                    cpu,
                    switches: (switches1.0 - switches0.0, switches1.1 - switches0.1),
                }
            })
        })
        .collect();
    start.wait();
    let t0 = Instant::now();
    thread::sleep(cell.duration);
    stop.store(true, Ordering::Relaxed);
    let results: Vec<ThreadResult> = workers
        .into_iter()
        .map(|w| w.join().expect("a benchmark thread panicked"))
        .collect();
    // Counted up to the moment every thread saw the flag, so the last operations count.
    let elapsed = t0.elapsed();
    let mut waits = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 2).unwrap();
    let mut per_thread = Vec::with_capacity(results.len());
    let (mut cpu, mut longest_streak, mut switches) = (Duration::ZERO, 0, (0, 0));
    for r in &results {
        waits.add(&r.waits).expect("same bounds");
        per_thread.push(r.ops);
        cpu += r.cpu;
        longest_streak = longest_streak.max(r.longest_streak);
        switches = (switches.0 + r.switches.0, switches.1 + r.switches.1);
    }
    // The workers have exited: their futex calls are in the counter.
    let futex_calls = futex.as_ref().zip(futex0).map(|(f, f0)| f.read() - f0);
    per_thread.sort_unstable();
    let total: u64 = per_thread.iter().sum();
    let per_op = |n: u64| n as f64 / total.max(1) as f64;
    Outcome {
        ops_per_sec: total as f64 / elapsed.as_secs_f64(),
        per_thread,
        wait_ns: [
            waits.value_at_quantile(0.5),
            waits.value_at_quantile(0.99),
            waits.value_at_quantile(0.999),
        ],
        longest_streak,
        cpu_ns_per_op: cpu.as_nanos() as f64 / total.max(1) as f64,
        switches_per_op: (per_op(switches.0), per_op(switches.1)),
        futex_per_op: futex_calls.map(per_op),
        own_per_op: sem.own_counts().map(|c| c.per_op(total)),
    }
}
