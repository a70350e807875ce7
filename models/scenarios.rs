//! Scenario bodies written once and run under every build: loom (every interleaving, tiny
//! sizes), shuttle (random and PCT schedules, medium sizes) and real threads (`stress/`, large
//! sizes, repeated). They use only `parksema::__model`'s threads, `Arc` and atomics, which are
//! the checker's under `loom`/`shuttle` and std's otherwise.
//!
//! Invariants are asserted inside, with messages that name the violated property, so a
//! failure says what broke in any build:
//!
//! - `over-issue: max in use N > permits P`: more holders than permits;
//! - `permits not conserved: ...`: the count at the end is not what was put in;
//! - `close lost: ...`: an acquire that started after `close` returned got a permit;
//! - a lost wakeup shows as the checker's deadlock report (loom: `deadlock`, shuttle:
//!   `deadlock!`), or as a watchdog stall on real threads;
//! - a missing happens-before edge between two holders shows as loom's `Causality violation`.

#![allow(dead_code)]

use parksema::__model::{Arc, AtomicUsize, Ordering, SharedCell, thread};
use parksema::Semaphore;

/// Which semaphore a scenario runs against: the correct one, or (feature `broken_sema`) one
/// with a deliberate flaw.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Build {
    /// The flaw, if any.
    #[cfg(feature = "broken_sema")]
    pub flaw: Option<parksema::Flaw>,
}

impl Build {
    /// The correct semaphore.
    pub(crate) const CORRECT: Build = Build {
        #[cfg(feature = "broken_sema")]
        flaw: None,
    };

    /// A semaphore with the deliberate flaw `flaw`.
    #[cfg(feature = "broken_sema")]
    pub(crate) const fn flawed(flaw: parksema::Flaw) -> Build {
        Build { flaw: Some(flaw) }
    }

    /// A semaphore of this build holding `permits` permits.
    pub(crate) fn semaphore(self, permits: usize) -> Semaphore {
        #[cfg(feature = "broken_sema")]
        return Semaphore::with_flaw(permits, self.flaw);
        #[cfg(not(feature = "broken_sema"))]
        Semaphore::new(permits)
    }
}

/// Counts the threads holding a permit and fails at once when they outnumber the permits.
#[derive(Debug)]
pub(crate) struct Holders {
    in_use: AtomicUsize,
    max: AtomicUsize,
    /// 1 once an over-issue was reported: only the first thread to see one panics.
    reported: AtomicUsize,
    permits: usize,
}

impl Holders {
    /// A counter for a semaphore of `permits` permits.
    pub(crate) fn new(permits: usize) -> Self {
        Holders {
            in_use: AtomicUsize::new(0),
            max: AtomicUsize::new(0),
            reported: AtomicUsize::new(0),
            permits,
        }
    }

    /// Called right after a permit was taken.
    ///
    /// # Panics
    ///
    /// With `over-issue: max in use N > permits P` when more threads hold a permit than there
    /// are permits. Only the first thread to see an over-issue panics; the others go on: a
    /// second panic while the first unwinds would make shuttle report its own confusion
    /// ("panicked while another task was unwinding") instead of the over-issue.
    pub(crate) fn enter(&self) {
        // SeqCst: the counter must be one total order of its own, independent of the
        // semaphore's orderings, so it cannot hide an over-issue.
        let now = self.in_use.fetch_add(1, Ordering::SeqCst) + 1;
        let max = self.max.fetch_max(now, Ordering::SeqCst).max(now);
        if now > self.permits && self.reported.swap(1, Ordering::SeqCst) == 0 {
            panic!("over-issue: max in use {max} > permits {}", self.permits);
        }
    }

    /// Called right before a permit is returned.
    pub(crate) fn leave(&self) {
        self.in_use.fetch_sub(1, Ordering::SeqCst);
    }

    /// The largest number of simultaneous holders seen.
    pub(crate) fn max(&self) -> usize {
        self.max.load(Ordering::SeqCst)
    }
}

/// Spawns `n` threads running `body(i)` and joins them, re-raising the first panic.
fn run_threads<T: Send + 'static>(
    n: usize,
    body: impl Fn(usize) -> T + Send + Sync + 'static,
) -> Vec<T> {
    let body = Arc::new(body);
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let body = Arc::clone(&body);
            thread::spawn(move || body(i))
        })
        .collect();
    join(handles)
}

/// Joins every handle, then re-raises the first panic with its own message.
fn join<T>(handles: Vec<thread::JoinHandle<T>>) -> Vec<T> {
    results_or_first_panic(handles.into_iter().map(|h| h.join()))
}

/// The values of `joined` (threads' results, in order), or the first panic among them
/// re-raised with its own message once all are in, so a worker's violated property is what
/// the test reports.
pub(crate) fn results_or_first_panic<T>(
    joined: impl IntoIterator<Item = std::thread::Result<T>>,
) -> Vec<T> {
    let mut results = Vec::new();
    let mut first_panic = None;
    for result in joined {
        match result {
            Ok(v) => results.push(v),
            Err(payload) => {
                first_panic.get_or_insert(payload);
            }
        }
    }
    if let Some(payload) = first_panic {
        std::panic::resume_unwind(payload);
    }
    results
}

/// The text of a panic payload (`panic!` with a literal gives a `&str`, with arguments a
/// `String`); empty for any other payload.
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Asserts the semaphore ends with `expected` permits. More than that means a permit was
/// handed out twice and both copies came back (an over-issue whose holders did not overlap
/// in time); fewer means a permit was lost.
fn assert_conserved(sem: &Semaphore, expected: usize) {
    let left = sem.available_permits();
    assert!(
        left <= expected,
        "over-issue: {left} permits left > {expected} put in ({sem:?})"
    );
    assert!(
        left == expected,
        "permits lost: {left} left < {expected} put in ({sem:?})"
    );
}

/// (a) Mutual exclusion and conservation: `threads` threads each take and return a permit
/// `rounds` times; never more holders than `permits`; every permit back at the end.
pub(crate) fn mutual_exclusion(build: Build, permits: usize, threads: usize, rounds: usize) {
    let sem = Arc::new(build.semaphore(permits));
    let holders = Arc::new(Holders::new(permits));
    {
        let (sem, holders) = (Arc::clone(&sem), Arc::clone(&holders));
        run_threads(threads, move |_| {
            for _ in 0..rounds {
                let p = sem.acquire().expect("never closed in this scenario");
                holders.enter();
                holders.leave();
                drop(p);
            }
        });
    }
    assert!(holders.max() <= permits);
    assert_conserved(&sem, permits);
}

/// (b) The three interleavings of clearing `WAITERS` (seed 000): two acquirers find no
/// permit while a third thread adds two permits at once. Every schedule includes one of: a
/// waiter queued before the unpark callback decides (it keeps `WAITERS`); a waiter that set
/// `WAITERS` but validates after the clear (it must see the clear and start over); an unpark
/// that finds nobody parked yet (it clears `WAITERS`, and the late waiter's `validate`
/// fails). Both acquirers must return.
pub(crate) fn waiters_bit_races(build: Build) {
    let sem = Arc::new(build.semaphore(0));
    let adder = {
        let sem = Arc::clone(&sem);
        thread::spawn(move || sem.add_permits(2))
    };
    {
        let sem = Arc::clone(&sem);
        run_threads(2, move |_| {
            sem.acquire()
                .expect("never closed in this scenario")
                .forget();
        });
    }
    adder.join().expect("the adder does not panic");
    assert_conserved(&sem, 0);
    assert_eq!(sem.parked_threads(), 0, "a thread is still parked: {sem:?}");
}

/// (c) Every parked thread is woken: `waiters` threads wait on an empty semaphore while the
/// main thread releases one permit at a time, `waiters` times.
pub(crate) fn wakes_every_waiter(build: Build, waiters: usize) {
    let sem = Arc::new(build.semaphore(0));
    let returned = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..waiters)
        .map(|_| {
            let (sem, returned) = (Arc::clone(&sem), Arc::clone(&returned));
            thread::spawn(move || {
                sem.acquire()
                    .expect("never closed in this scenario")
                    .forget();
                returned.fetch_add(1, Ordering::SeqCst);
            })
        })
        .collect();
    for _ in 0..waiters {
        sem.add_permits(1);
    }
    join(handles);
    assert_eq!(returned.load(Ordering::SeqCst), waiters, "lost wakeup");
    assert_conserved(&sem, 0);
    assert_waiters_clear(&sem);
}

/// Asserts that no `WAITERS` bit is left behind once every waiter has left: the unpark that
/// took the last one must have cleared it, or every later release takes the slow path.
fn assert_waiters_clear(sem: &Semaphore) {
    let state = format!("{sem:?}");
    assert!(
        state.contains("waiters: false"),
        "WAITERS left set with nobody parked: {state}"
    );
}

/// (d) Two semaphores whose keys share the park table's bucket (under the mock every key
/// does): a waiter on each, released in turn; `have_more_threads` must count each key alone.
pub(crate) fn two_semaphores_share_bucket(build: Build) {
    let sems = Arc::new([build.semaphore(0), build.semaphore(0)]);
    let handles: Vec<_> = (0..2)
        .map(|i| {
            let sems = Arc::clone(&sems);
            thread::spawn(move || sems[i].acquire().expect("never closed").forget())
        })
        .collect();
    sems[1].add_permits(1);
    sems[0].add_permits(1);
    join(handles);
    for sem in sems.iter() {
        assert_conserved(sem, 0);
    }
}

/// (e) `close` racing `acquire` and `add_permits`: the acquirer either gets the one permit
/// (before the close) or the closed error; it never hangs, and the permit is never lost.
pub(crate) fn close_races(build: Build) {
    let sem = Arc::new(build.semaphore(0));
    let acquirer = {
        let sem = Arc::clone(&sem);
        thread::spawn(move || sem.acquire().map(|p| p.forget()).is_ok())
    };
    let adder = {
        let sem = Arc::clone(&sem);
        thread::spawn(move || sem.add_permits(1))
    };
    sem.close();
    assert!(
        sem.acquire().is_err(),
        "close lost: an acquire that started after close returned got a permit ({sem:?})"
    );
    let got = acquirer.join().expect("the acquirer does not panic");
    adder.join().expect("the adder does not panic");
    assert_conserved(&sem, usize::from(!got));
    assert!(sem.is_closed());
}

/// (f) `try_acquire` racing a parked `acquire` and the release that should wake it: at most
/// one holder at a time, the parked thread always returns, one permit at the end.
pub(crate) fn try_acquire_races(build: Build) {
    let sem = Arc::new(build.semaphore(1));
    let holders = Arc::new(Holders::new(1));
    let held = sem.acquire().expect("the permit is free");
    holders.enter();
    let waiter = {
        let (sem, holders) = (Arc::clone(&sem), Arc::clone(&holders));
        thread::spawn(move || {
            let p = sem.acquire().expect("never closed in this scenario");
            holders.enter();
            holders.leave();
            drop(p);
        })
    };
    let trier = {
        let (sem, holders) = (Arc::clone(&sem), Arc::clone(&holders));
        thread::spawn(move || {
            if let Ok(p) = sem.try_acquire() {
                holders.enter();
                holders.leave();
                drop(p);
            }
        })
    };
    holders.leave();
    drop(held);
    join(vec![waiter, trier]);
    assert_conserved(&sem, 1);
}

/// (g) Memory visibility: each of `threads` threads, holding the single permit, reads a
/// counter that is not atomic and writes it back incremented. The permit's release/acquire
/// pair is the only thing ordering those accesses, so under loom a missing happens-before is
/// reported as a causality violation; in every build the count must come out exact.
pub(crate) fn visibility(build: Build, threads: usize) {
    let sem = Arc::new(build.semaphore(1));
    let counter = Arc::new(SharedCell::new(0usize));
    {
        let (sem, counter) = (Arc::clone(&sem), Arc::clone(&counter));
        run_threads(threads, move |_| {
            let p = sem.acquire().expect("never closed in this scenario");
            // SAFETY: only the holder of the single permit touches the counter, and the
            // permit's release/acquire orders one holder's accesses before the next's (which
            // is exactly what loom checks here).
            let seen = counter.with(|c| unsafe { *c });
            // SAFETY: as above.
            counter.with_mut(|c| unsafe { *c = seen + 1 });
            drop(p);
        });
    }
    let total = sem.acquire().expect("never closed");
    // SAFETY: every other thread has been joined; this thread holds the permit.
    let count = counter.with(|c| unsafe { *c });
    drop(total);
    assert_eq!(
        count, threads,
        "lost update under the permit: {count} of {threads}"
    );
}

/// (h) `close` publishes: a thread writes data that is not atomic, then closes; observers
/// look once each, with `try_acquire`, `is_closed` and a blocking `acquire`, and read the data
/// when they see the semaphore closed. Nothing orders those reads after the write except `close`'s
/// Release and the Acquire an observer runs when it sees `CLOSED`, so under loom a missing
/// edge is a reported causality violation. (A parked acquirer would also be ordered by the
/// park table's lock, which is why the observers do not park; they look once rather than
/// poll, since loom explores every point at which they can look.)
pub(crate) fn close_publishes(build: Build) {
    let sem = Arc::new(build.semaphore(0));
    let data = Arc::new(SharedCell::new(0u32));
    let closer = {
        let (sem, data) = (Arc::clone(&sem), Arc::clone(&data));
        thread::spawn(move || {
            // SAFETY: no other thread reads `data` before it observes the close that follows.
            data.with_mut(|d| unsafe { *d = 42 });
            sem.close();
        })
    };
    let poller = {
        let (sem, data) = (Arc::clone(&sem), Arc::clone(&data));
        thread::spawn(move || {
            // SAFETY: the close happened-before this read (what loom checks).
            sem.is_closed().then(|| data.with(|d| unsafe { *d }))
        })
    };
    // A blocking acquirer: it parks if it comes before the close (then the park table's lock
    // orders it too), and fails at once if it comes after (then only the Acquire does).
    let acquirer = {
        let (sem, data) = (Arc::clone(&sem), Arc::clone(&data));
        thread::spawn(move || {
            let refused = sem.acquire().is_err();
            assert!(refused, "a permit appeared in a semaphore nobody adds to");
            // SAFETY: as above.
            data.with(|d| unsafe { *d })
        })
    };
    let seen = match sem.try_acquire() {
        // SAFETY: as above.
        Err(parksema::TryAcquireError::Closed) => Some(data.with(|d| unsafe { *d })),
        Err(parksema::TryAcquireError::NoPermits) => None,
        Ok(_) => panic!("a permit appeared in a semaphore nobody adds to"),
    };
    assert!(
        seen.is_none_or(|v| v == 42),
        "try_acquire saw the close but not the write before it"
    );
    let polled = join(vec![poller]);
    assert!(
        polled[0].is_none_or(|v| v == 42),
        "is_closed saw the close but not the write before it"
    );
    assert_eq!(
        join(vec![acquirer]),
        [42],
        "acquire failed on the close but did not see the write before it"
    );
    join(vec![closer]);
}
