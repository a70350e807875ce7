//! The in-process stall detector: [`Watchdog`], [`Worker`] and [`stall_limit`].

use std::fmt;
use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::STALL_EXIT_CODE;

/// The environment variable that overrides every stall limit, in seconds.
const STALL_ENV: &str = "WATCHDOG_STALL_SECS";

/// The shortest interval between two checks of the detector thread.
const MIN_TICK: Duration = Duration::from_millis(5);

/// How long the describe callback may run before the process exits without it.
const DESCRIBE_GRACE: Duration = Duration::from_secs(2);

/// The callback that describes the state under test.
type Describe = Arc<dyn Fn() -> String + Send + Sync + 'static>;

/// Locks `mutex`, ignoring poisoning: every value guarded here stays valid after a panic.
fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The progress record of one worker, shared between its [`Worker`] and the detector.
struct Slot {
    /// The name given to [`Watchdog::worker`].
    name: String,
    /// How many operations the worker has reported.
    progress: AtomicU64,
    /// The operation the worker reported last.
    last_op: Mutex<&'static str>,
}

/// The state shared between a [`Watchdog`], its workers and its detector thread.
struct Shared {
    /// The name of the scenario under watch.
    scenario: String,
    /// How long the workers may go without progress.
    stall: Duration,
    /// Every registered worker, in registration order.
    workers: Mutex<Vec<Arc<Slot>>>,
    /// How many workers were registered; registering counts as progress too.
    registrations: AtomicU64,
    /// The callback set by [`Watchdog::describe`], if any.
    describe: Mutex<Option<Describe>>,
}

impl Shared {
    /// Sums the progress of every worker, plus the number of registrations.
    fn progress(&self) -> u64 {
        let workers = lock(&self.workers);
        workers
            .iter()
            .fold(self.registrations.load(Ordering::Relaxed), |sum, slot| {
                sum.wrapping_add(slot.progress.load(Ordering::Relaxed))
            })
    }
}

/// A stall detector for one scenario of a stress test.
///
/// Arming it starts a detector thread. Every worker thread of the scenario gets a [`Worker`]
/// and reports its operations through [`Worker::op`]. When no worker reports anything for the
/// stall limit, the detector writes a report to stderr, naming the last operation of every
/// worker and the state described by [`Watchdog::describe`], and exits the process with
/// [`STALL_EXIT_CODE`]. Dropping the `Watchdog` disarms it.
///
/// ```
/// use std::time::Duration;
/// use watchdog::Watchdog;
///
/// let dog = Watchdog::arm("two workers", Duration::from_secs(60));
/// std::thread::scope(|s| {
///     for i in 0..2 {
///         let worker = dog.worker(format!("w{i}"));
///         s.spawn(move || {
///             for _ in 0..100 {
///                 worker.op("work");
///             }
///         });
///     }
/// });
/// drop(dog);
/// ```
pub struct Watchdog {
    /// The state shared with the workers and the detector thread.
    shared: Arc<Shared>,
    /// Dropping this sender stops the detector thread.
    stop: Option<mpsc::Sender<()>>,
    /// The detector thread, joined on drop.
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    /// Arms a detector for `scenario`: if no worker of it reports an operation for `stall`, it
    /// prints a report and exits the process with [`STALL_EXIT_CODE`]. Dropping it disarms
    /// (stops and joins its thread).
    ///
    /// The time without progress counts from the moment of arming; registering a worker counts
    /// as progress.
    ///
    /// # Panics
    ///
    /// Panics if the detector thread cannot be spawned.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let dog = watchdog::Watchdog::arm("arm example", Duration::from_secs(60));
    /// dog.worker("main").op("did something");
    /// drop(dog);
    /// ```
    pub fn arm(scenario: impl Into<String>, stall: Duration) -> Watchdog {
        let shared = Arc::new(Shared {
            scenario: scenario.into(),
            stall,
            workers: Mutex::new(Vec::new()),
            registrations: AtomicU64::new(0),
            describe: Mutex::new(None),
        });
        let (stop, stopped) = mpsc::channel();
        let detector = Arc::clone(&shared);
        let thread = thread::Builder::new()
            .name(format!("watchdog: {}", shared.scenario))
            .spawn(move || watch(&detector, &stopped))
            .expect("the watchdog could not spawn its detector thread");
        Watchdog {
            shared,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Sets (replaces) a callback that describes the state under test (e.g. a semaphore's Debug
    /// and parked-thread count); called only when a stall fires.
    ///
    /// The callback runs on the detector thread after the worker lines are written. It may
    /// block on the very thing that is wedged, so the process exits two seconds after calling
    /// it even if it never returns.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::time::Duration;
    ///
    /// let permits = Arc::new(AtomicUsize::new(3));
    /// let dog = watchdog::Watchdog::arm("describe example", Duration::from_secs(60));
    /// let seen = Arc::clone(&permits);
    /// dog.describe(move || format!("permits: {}", seen.load(Ordering::Relaxed)));
    /// permits.store(2, Ordering::Relaxed);
    /// drop(dog);
    /// ```
    pub fn describe(&self, f: impl Fn() -> String + Send + Sync + 'static) {
        *lock(&self.shared.describe) = Some(Arc::new(f));
    }

    /// Registers a worker thread; each worker reports its operations.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let dog = watchdog::Watchdog::arm("worker example", Duration::from_secs(60));
    /// let worker = dog.worker("producer");
    /// std::thread::spawn(move || worker.op("produce")).join().unwrap();
    /// drop(dog);
    /// ```
    pub fn worker(&self, name: impl Into<String>) -> Worker {
        let slot = Arc::new(Slot {
            name: name.into(),
            progress: AtomicU64::new(0),
            last_op: Mutex::new("(none yet)"),
        });
        lock(&self.shared.workers).push(Arc::clone(&slot));
        self.shared.registrations.fetch_add(1, Ordering::Relaxed);
        Worker { slot }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        // Dropping the only sender wakes the detector at once with `Disconnected`.
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            // A panic of the detector thread has already been reported by the panic hook.
            let _ = thread.join();
        }
    }
}

impl fmt::Debug for Watchdog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Each lock is taken and released on its own: `progress` takes the workers lock too.
        let workers = lock(&self.shared.workers).len();
        let progress = self.shared.progress();
        let describe = lock(&self.shared.describe).is_some();
        f.debug_struct("Watchdog")
            .field("scenario", &self.shared.scenario)
            .field("stall", &self.shared.stall)
            .field("workers", &workers)
            .field("progress", &progress)
            .field("describe", &describe)
            .finish()
    }
}

/// The handle through which one worker thread reports its progress to a [`Watchdog`].
///
/// ```
/// use std::time::Duration;
///
/// let dog = watchdog::Watchdog::arm("worker handle", Duration::from_secs(60));
/// let worker = dog.worker("w0");
/// worker.op("acquire");
/// println!("{worker:?}");
/// drop(dog);
/// ```
pub struct Worker {
    /// The slot this worker reports into.
    slot: Arc<Slot>,
}

impl Worker {
    /// Records `op` as this worker's last operation and counts one unit of progress.
    ///
    /// This is meant for hot loops: it neither allocates nor touches any lock shared with other
    /// workers.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let dog = watchdog::Watchdog::arm("op example", Duration::from_secs(60));
    /// let worker = dog.worker("w0");
    /// for _ in 0..10_000 {
    ///     worker.op("try_acquire");
    /// }
    /// drop(dog);
    /// ```
    pub fn op(&self, op: &'static str) {
        *lock(&self.slot.last_op) = op;
        self.slot.progress.fetch_add(1, Ordering::Relaxed);
    }
}

impl fmt::Debug for Worker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Worker")
            .field("name", &self.slot.name)
            .field("last_op", &*lock(&self.slot.last_op))
            .field("ops", &self.slot.progress.load(Ordering::Relaxed))
            .finish()
    }
}

/// `default`, unless the environment variable WATCHDOG_STALL_SECS holds a positive number of
/// seconds (float allowed), which then wins. Lets slow machines widen every limit at once.
///
/// ```
/// use std::time::Duration;
///
/// let limit = watchdog::stall_limit(Duration::from_secs(10));
/// if std::env::var_os("WATCHDOG_STALL_SECS").is_none() {
///     assert_eq!(limit, Duration::from_secs(10));
/// }
/// ```
pub fn stall_limit(default: Duration) -> Duration {
    let value = std::env::var(STALL_ENV).ok();
    parse_stall_secs(value.as_deref()).unwrap_or(default)
}

/// Parses a value of WATCHDOG_STALL_SECS; `None` unless it is a positive, representable number
/// of seconds.
fn parse_stall_secs(value: Option<&str>) -> Option<Duration> {
    let secs: f64 = value?.trim().parse().ok()?;
    if secs > 0.0 {
        Duration::try_from_secs_f64(secs).ok()
    } else {
        None
    }
}

/// The body of the detector thread: checks progress until told to stop, and fires on a stall.
fn watch(shared: &Shared, stopped: &mpsc::Receiver<()>) {
    let tick = (shared.stall / 8).max(MIN_TICK);
    let mut seen = shared.progress();
    let mut since = Instant::now();
    loop {
        match stopped.recv_timeout(tick) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
        }
        let now = shared.progress();
        if now != seen {
            seen = now;
            since = Instant::now();
            continue;
        }
        let idle = since.elapsed();
        if idle >= shared.stall {
            fire(shared, idle);
        }
    }
}

/// Writes the stall report to stderr and exits the process with [`STALL_EXIT_CODE`].
fn fire(shared: &Shared, idle: Duration) -> ! {
    // The report goes straight to the stderr handle: libtest captures `eprintln!` from threads
    // spawned by a test, and that captured output would be lost when the process exits.
    // Write errors are ignored because there is nowhere else to report them.
    let workers: Vec<Arc<Slot>> = lock(&shared.workers).clone();
    {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(
            err,
            "watchdog: STALL in scenario `{}`: no progress for {:.1}s (limit {:.1}s)",
            shared.scenario,
            idle.as_secs_f64(),
            shared.stall.as_secs_f64()
        );
        for slot in &workers {
            let last_op = *lock(&slot.last_op);
            let ops = slot.progress.load(Ordering::Relaxed);
            let _ = writeln!(
                err,
                "watchdog:   worker {}: last op `{last_op}` ({ops} ops)",
                slot.name
            );
        }
        if workers.is_empty() {
            let _ = writeln!(err, "watchdog:   no workers were registered");
        }
        let _ = err.flush();
    }

    let describe = lock(&shared.describe).clone();
    if let Some(describe) = describe {
        // The callback may block on the wedged primitive, so a grace thread ends the process
        // anyway. If that thread cannot be spawned, the callback is run regardless: the worker
        // lines are already out.
        let _ = thread::Builder::new()
            .name("watchdog grace".into())
            .spawn(grace_exit);
        let state = describe();
        let mut err = std::io::stderr().lock();
        let mut lines = state.lines();
        let first = lines.next().unwrap_or("");
        let _ = writeln!(err, "watchdog: state: {first}");
        for line in lines {
            let _ = writeln!(err, "watchdog:   {line}");
        }
        let _ = err.flush();
    }

    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "watchdog: exiting with code {STALL_EXIT_CODE}");
    let _ = err.flush();
    drop(err);
    std::process::exit(STALL_EXIT_CODE)
}

/// Ends the process if the describe callback has not returned within [`DESCRIBE_GRACE`].
fn grace_exit() {
    thread::sleep(DESCRIBE_GRACE);
    // The detector thread may hold the stderr lock forever if the callback blocked while
    // printing, so this message goes out only if the lock is free; `write_stderr_raw` does not
    // take it.
    write_stderr_raw(&format!(
        "watchdog: state: describe callback did not return within {}s\n\
         watchdog: exiting with code {STALL_EXIT_CODE}\n",
        DESCRIBE_GRACE.as_secs()
    ));
    std::process::exit(STALL_EXIT_CODE)
}

/// Writes `message` to file descriptor 2 without taking the lock of [`std::io::stderr`].
fn write_stderr_raw(message: &str) {
    let mut rest = message.as_bytes();
    while !rest.is_empty() {
        // SAFETY:
        // - `rest.as_ptr()` points to `rest.len()` initialized bytes that stay borrowed, and so
        //   valid, for the whole call, as `write(2)` requires of its buffer.
        // - File descriptor 2 is only written to; if it is closed, `write` fails with EBADF
        //   instead of touching memory.
        let written = unsafe { libc::write(2, rest.as_ptr().cast(), rest.len()) };
        match usize::try_from(written) {
            Ok(0) => return,
            Ok(n) => rest = &rest[n.min(rest.len())..],
            Err(_) if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {
            }
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_accepts_positive_seconds() {
        assert_eq!(parse_stall_secs(Some("2")), Some(Duration::from_secs(2)));
        assert_eq!(
            parse_stall_secs(Some("0.25")),
            Some(Duration::from_millis(250))
        );
        assert_eq!(
            parse_stall_secs(Some(" 1.5 ")),
            Some(Duration::from_millis(1500))
        );
    }

    #[test]
    fn parse_rejects_everything_else() {
        for value in [
            None,
            Some(""),
            Some("abc"),
            Some("0"),
            Some("-1"),
            Some("NaN"),
            Some("inf"),
            Some("1e300"),
        ] {
            assert_eq!(parse_stall_secs(value), None, "{value:?}");
        }
    }

    #[test]
    fn progress_counts_ops_and_registrations() {
        let dog = Watchdog::arm("unit", Duration::from_secs(600));
        assert_eq!(dog.shared.progress(), 0);
        let worker = dog.worker("w");
        assert_eq!(dog.shared.progress(), 1);
        worker.op("a");
        worker.op("b");
        assert_eq!(dog.shared.progress(), 3);
        assert_eq!(*lock(&worker.slot.last_op), "b");
    }
}
