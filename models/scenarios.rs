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
//! - `close lost: ...`, `a parked acquire ...`: a closed semaphore handed out a permit;
//! - `WAITERS left set with nobody parked: ...`: the bit outlived the last waiter;
//! - `park table: ...`: a call cost more wake-ups than it may (under the checkers, whose
//!   mocked park table counts them per semaphore);
//! - `refused add: ...`, `impossible results: ...`: an operation's result fits no order of
//!   the operations that raced it;
//! - a lost wakeup shows as the checker's deadlock report (loom: `deadlock`, shuttle:
//!   `deadlock!`), or as a watchdog stall on real threads;
//! - a missing happens-before edge between two holders shows as loom's `Causality violation`;
//! - `timed out ...`: a timed acquire's result is not what its race allows (it took a permit
//!   it reported timing out on, or timed out where it could not);
//! - `forget_permits ...`: shrinking touched a flag or took more than was there;
//! - `fifo: ...`: under `Fairness::Fifo` a running thread took a permit while another was
//!   parked, or a later request was served before an earlier one;
//! - `eventual: ...`: under `Fairness::Eventual` a release whose fairness deadline had passed
//!   did not hand its permit to the parked thread;
//! - `lost handoff: ...`: a timed waiter handed its permits at its deadline neither kept
//!   them nor gave them back.

#![allow(dead_code)]

use std::time::Duration;

use parksema::__model::{
    Arc, AtomicUsize, Ordering, SharedCell, advance_clock, now, park_stats, thread,
};
use parksema::{AddPermitsError, Fairness, Semaphore, TryAcquireError};

/// Which semaphore a scenario runs against: the correct one, or (feature `broken_sema`) one
/// with a deliberate flaw, in a fairness mode (`Eventual`, what `Semaphore::new` gives,
/// unless a scenario or model says otherwise).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Build {
    /// The flaw, if any.
    #[cfg(feature = "broken_sema")]
    pub flaw: Option<parksema::Flaw>,
    /// The fairness mode.
    pub fairness: Fairness,
}

impl Build {
    /// The correct semaphore.
    pub(crate) const CORRECT: Build = Build {
        #[cfg(feature = "broken_sema")]
        flaw: None,
        fairness: Fairness::Eventual,
    };

    /// A semaphore with the deliberate flaw `flaw`.
    #[cfg(feature = "broken_sema")]
    pub(crate) const fn flawed(flaw: parksema::Flaw) -> Build {
        Build {
            flaw: Some(flaw),
            fairness: Fairness::Eventual,
        }
    }

    /// This build in the fairness mode `fairness`.
    pub(crate) const fn fair(mut self, fairness: Fairness) -> Build {
        self.fairness = fairness;
        self
    }

    /// A semaphore of this build holding `permits` permits.
    pub(crate) fn semaphore(self, permits: usize) -> Semaphore {
        #[cfg(feature = "broken_sema")]
        return Semaphore::with_fairness_and_flaw(permits, self.fairness, self.flaw);
        #[cfg(not(feature = "broken_sema"))]
        Semaphore::with_fairness(permits, self.fairness)
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

/// (b) The three interleavings of clearing `WAITERS`: two acquirers find no
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
    assert_waiters_clear(&sem);
}

/// (c) Every parked thread is woken: `waiters` threads wait on an empty semaphore while the
/// main thread releases one permit at a time, `waiters` times; with `serial`, each release
/// waits until the permit before it was taken. A lost wakeup is a deadlock (loom, shuttle)
/// or a stall (real threads). Under the checkers no release of one permit may wake more than
/// one thread, where that is the promise: a release counts the permits free when it looks,
/// and a permit promised to a woken thread that has not run yet still counts, so releases
/// that race woken threads may wake a thread in vain (it parks again). With `serial` they
/// do not race; with at most two waiters they cannot either (the first release's one permit
/// always wakes the first waiter, leaving one queued for each later release).
pub(crate) fn wakes_every_waiter(build: Build, waiters: usize, serial: bool) {
    let sem = Arc::new(build.semaphore(0));
    let taken = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..waiters)
        .map(|_| {
            let (sem, taken) = (Arc::clone(&sem), Arc::clone(&taken));
            thread::spawn(move || {
                sem.acquire()
                    .expect("never closed in this scenario")
                    .forget();
                // Counted only when it is waited for: under loom each atomic operation
                // multiplies the interleavings.
                if serial {
                    taken.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    for i in 0..waiters {
        sem.add_permits(1);
        while serial && taken.load(Ordering::SeqCst) <= i {
            thread::yield_now();
        }
    }
    join(handles);
    assert_conserved(&sem, 0);
    assert_waiters_clear(&sem);
    if let Some(stats) = park_stats(&sem)
        && (serial || waiters <= 2)
    {
        assert!(
            stats.most_woken_by_one_call <= 1,
            "park table: a release of 1 permit woke {} threads ({stats:?})",
            stats.most_woken_by_one_call
        );
    }
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

/// (d) Two semaphores whose keys share the park table's bucket (under the checkers,
/// parkcheck's `one_bucket` setting puts every key in one): a waiter on each, released in
/// turn; `have_more_threads` must count each key alone.
pub(crate) fn two_semaphores_share_bucket(build: Build) {
    #[cfg(any(feature = "loom", feature = "shuttle"))]
    {
        let mut settings = parksema::__model::mock_settings();
        settings.one_bucket = true;
        parksema::__model::with_settings(settings, || two_semaphores_in_one_bucket(build));
    }
    #[cfg(not(any(feature = "loom", feature = "shuttle")))]
    two_semaphores_in_one_bucket(build);
}

/// [`two_semaphores_share_bucket`]'s body.
fn two_semaphores_in_one_bucket(build: Build) {
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
        // A `have_more_threads` that counted the other semaphore's waiter would leave this
        // one's bit set.
        assert_waiters_clear(sem);
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
        Err(e) => panic!("try_acquire of one permit failed with {e:?}"),
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

/// Yields (to the checker, or the OS) until `n` threads are parked on `sem`. Under loom and
/// shuttle a yielding loop is explored like any other code; on real threads it is bounded by
/// the caller's watchdog.
fn wait_parked(sem: &Semaphore, n: usize) {
    while sem.parked_threads() < n {
        thread::yield_now();
    }
}

/// (i) `close` wakes every waiter: `waiters` threads acquire on an empty semaphore; the main
/// thread writes data that is not atomic and closes. With `all_parked`, it first waits until
/// every waiter is parked (`close` with two or more threads parked); without, `close` races
/// the acquirers, including one that has set `WAITERS` but not yet parked. Every acquire must
/// fail, see the write made before `close`, and return; `WAITERS` is clear at the end; under
/// the checkers, with `all_parked`, `close` woke each parked thread once, in one call.
pub(crate) fn close_wakes_waiters(build: Build, waiters: usize, all_parked: bool) {
    let sem = Arc::new(build.semaphore(0));
    let data = Arc::new(SharedCell::new(0u32));
    let handles: Vec<_> = (0..waiters)
        .map(|_| {
            let (sem, data) = (Arc::clone(&sem), Arc::clone(&data));
            thread::spawn(move || {
                let refused = sem.acquire().is_err();
                assert!(
                    refused,
                    "close lost: an acquire got a permit from a semaphore nobody adds to"
                );
                // SAFETY: the close, which follows the only write, happened-before this
                // failed acquire returned (what loom checks).
                data.with(|d| unsafe { *d })
            })
        })
        .collect();
    if all_parked {
        wait_parked(&sem, waiters);
    }
    // SAFETY: no waiter reads `data` before its acquire has failed, after the close below.
    data.with_mut(|d| unsafe { *d = 7 });
    sem.close();
    let seen = join(handles);
    assert!(
        seen.iter().all(|&v| v == 7),
        "an acquire failed on the close but did not see the write before it: {seen:?}"
    );
    assert!(sem.is_closed());
    assert_waiters_clear(&sem);
    if all_parked && let Some(stats) = park_stats(&sem) {
        assert!(
            stats.woken == waiters && stats.most_woken_by_one_call == waiters,
            "park table: close must wake each of the {waiters} parked threads once, in one \
             call ({stats:?})"
        );
    }
}

/// (j) Permits added after `close`, while a thread that was parked at `close` wakes: the
/// waiter must fail (it never takes the permit), the permit must still count, `try_acquire`
/// must report `Closed` although a permit is there, and an `is_closed` poller that sees the
/// close sees the write made before it.
pub(crate) fn add_after_close(build: Build) {
    let sem = Arc::new(build.semaphore(0));
    let data = Arc::new(SharedCell::new(0u32));
    let waiter = {
        let (sem, data) = (Arc::clone(&sem), Arc::clone(&data));
        thread::spawn(move || {
            let got = sem.acquire().map(|p| p.forget()).is_ok();
            assert!(
                !got,
                "close lost: a thread parked at close took a permit added after it ({sem:?})"
            );
            // SAFETY: the close happened-before the failed acquire returned.
            data.with(|d| unsafe { *d })
        })
    };
    let poller = {
        let (sem, data) = (Arc::clone(&sem), Arc::clone(&data));
        // SAFETY: the close happened-before `is_closed` returned true (what loom checks).
        thread::spawn(move || sem.is_closed().then(|| data.with(|d| unsafe { *d })))
    };
    wait_parked(&sem, 1);
    // SAFETY: nobody reads `data` before observing the close below.
    data.with_mut(|d| unsafe { *d = 9 });
    sem.close();
    // Closing twice is harmless: the semaphore stays closed.
    sem.close();
    sem.add_permits(1);
    assert_eq!(
        sem.try_acquire().map(|p| p.forget()),
        Err(TryAcquireError::Closed),
        "close lost: a closed semaphore handed out a permit it holds ({sem:?})"
    );
    let seen = join(vec![waiter]);
    assert_eq!(
        seen,
        [9],
        "the failed acquire did not see the write before close"
    );
    let polled = join(vec![poller]);
    assert!(
        polled[0].is_none_or(|v| v == 9),
        "is_closed saw the close but not the write before it"
    );
    assert_conserved(&sem, 1);
    assert_waiters_clear(&sem);
}

/// (k) Releases racing each other with several threads parked: `waiters` threads park on an
/// empty semaphore; once all are parked, one release per entry of `sizes` runs, the first
/// from the main thread and each other from a thread of its own. `sizes` adds up to at least
/// `waiters`, so a release can find more permits than waiters. Every waiter returns, the
/// count ends at `sum - waiters`, and `WAITERS` is clear.
pub(crate) fn releases_race(build: Build, waiters: usize, sizes: &'static [usize]) {
    let total: usize = sizes.iter().sum();
    assert!(
        total >= waiters,
        "the scenario needs a permit for every waiter"
    );
    let sem = Arc::new(build.semaphore(0));
    let handles: Vec<_> = (0..waiters)
        .map(|_| {
            let sem = Arc::clone(&sem);
            thread::spawn(move || sem.acquire().expect("never closed").forget())
        })
        .collect();
    wait_parked(&sem, waiters);
    // An add refused while threads are parked leaves the count and the flags alone: if it
    // cleared WAITERS, the releases below would take the fast path and wake nobody.
    let err = sem
        .try_add_permits(usize::MAX)
        .expect_err("an add of usize::MAX permits succeeded");
    assert_eq!(
        (err.available(), err.added()),
        (0, usize::MAX),
        "refused add: it reports {err:?} on an empty semaphore"
    );
    let releasers: Vec<_> = sizes[1..]
        .iter()
        .map(|&n| {
            let sem = Arc::clone(&sem);
            thread::spawn(move || sem.add_permits(n))
        })
        .collect();
    sem.add_permits(sizes[0]);
    join(releasers);
    join(handles);
    assert_conserved(&sem, total - waiters);
    assert_waiters_clear(&sem);
    // No park-table bound here: a release counts the permits free when it looks, including
    // those promised to a thread another release woke that has not run yet, so racing
    // releases may wake a thread in vain (it parks again). The per-release bound is checked
    // where releases do not race: (c), (o), (t) and the library's unit tests.
}

/// Every order in which `ops` could have taken effect, applied to a count starting at
/// `start`, as the results each order would give: `Ok` or the count a refused add saw.
/// An `Op` is `+n` (an add of n) or `-1` (a take).
fn possible_results(start: usize, ops: &[isize]) -> Vec<Vec<Result<(), usize>>> {
    fn permutations(n: usize) -> Vec<Vec<usize>> {
        if n == 0 {
            return vec![vec![]];
        }
        let mut all = Vec::new();
        for p in permutations(n - 1) {
            for at in 0..=p.len() {
                let mut q = p.clone();
                q.insert(at, n - 1);
                all.push(q);
            }
        }
        all
    }
    permutations(ops.len())
        .into_iter()
        .map(|order| {
            let mut count = start;
            let mut results = vec![Ok(()); ops.len()];
            for i in order {
                let op = ops[i];
                if op < 0 {
                    if count == 0 {
                        results[i] = Err(count);
                    } else {
                        count -= 1;
                    }
                } else if op.unsigned_abs() > Semaphore::MAX_PERMITS - count {
                    results[i] = Err(count);
                } else {
                    count += op.unsigned_abs();
                }
            }
            results
        })
        .collect()
}

/// (l) Additions refused near `MAX_PERMITS`, racing a take and each other: the semaphore
/// holds `MAX_PERMITS - 1`; one thread adds 2, one takes a permit, the main thread adds 1.
/// Each refused add must report the count it saw and the amount it tried, and together the
/// results must be those of some order of the three operations; at the end the count is
/// exactly what the successful ones left and no flag is set (a refused add touches nothing).
pub(crate) fn refused_adds_near_max(build: Build) {
    const MAX: usize = Semaphore::MAX_PERMITS;
    let sem = Arc::new(build.semaphore(MAX - 1));
    let outcome = |r: Result<(), AddPermitsError>, n: usize| {
        r.map_err(|e| {
            assert_eq!(
                e.added(),
                n,
                "refused add: it reports {e:?} for an add of {n}"
            );
            e.available()
        })
    };
    let adder = {
        let sem = Arc::clone(&sem);
        thread::spawn(move || outcome(sem.try_add_permits(2), 2))
    };
    let taker = {
        let sem = Arc::clone(&sem);
        thread::spawn(move || {
            sem.try_acquire().map(|p| p.forget()).map_err(|e| match e {
                TryAcquireError::NoPermits => 0,
                other => panic!("try_acquire of one permit on an open semaphore: {other:?}"),
            })
        })
    };
    let main = outcome(sem.try_add_permits(1), 1);
    let results = vec![
        join(vec![adder]).remove(0),
        join(vec![taker]).remove(0),
        main,
    ];
    let possible = possible_results(MAX - 1, &[2, -1, 1]);
    assert!(
        possible.contains(&results),
        "impossible results: add 2, take 1, add 1 on {} gave {results:?} ({sem:?})",
        MAX - 1
    );
    let added: usize = [(results[0], 2), (results[2], 1)]
        .iter()
        .filter(|(r, _)| r.is_ok())
        .map(|(_, n)| n)
        .sum();
    let expected = MAX - 1 - usize::from(results[1].is_ok()) + added;
    assert_eq!(
        sem.available_permits(),
        expected,
        "refused add: the count is not what the successful operations left ({sem:?})"
    );
    let state = format!("{sem:?}");
    assert!(
        state.contains("waiters: false") && state.contains("closed: false"),
        "refused add: a flag changed: {state}"
    );
    assert_eq!(
        Semaphore::MAX_PERMITS,
        usize::MAX >> 3,
        "MAX_PERMITS must stay usize::MAX >> 3"
    );
    if let Some(stats) = park_stats(&sem) {
        assert!(
            stats.parks == 0 && stats.unpark_calls == 0,
            "park table: nobody waits here, so no call may enter the table ({stats:?})"
        );
    }
}

/// The payload of the deliberate panic in [`unwind_and_move`], so it can be told apart from a
/// checker's own failure (which must propagate).
#[derive(Debug)]
struct DeliberatePanic;

/// Silences the default panic message for [`DeliberatePanic`] alone (installed once, from
/// inside a running model, so it wraps any hook the checker installed; every other panic is
/// passed on unchanged).
fn quiet_deliberate_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !info.payload().is::<DeliberatePanic>() {
                previous(info);
            }
        }));
    });
}

/// (m) A holder that panics while another thread waits, holding an `OwnedPermit` that was
/// moved to it from the thread that acquired it: the permit must come back during unwinding
/// (the waiter gets it, with the holder's writes visible), one holder at a time, the permit
/// conserved. The panic is caught inside the holder's thread, since loom and shuttle fail a
/// model on any thread's panic; anything else caught there (a checker's own failure) is
/// re-raised.
pub(crate) fn unwind_and_move(build: Build) {
    quiet_deliberate_panics();
    // A std `Arc`, which `acquire_owned` takes (under loom its reference counts are not
    // tracked, which this scenario does not need).
    let sem = std::sync::Arc::new(build.semaphore(1));
    let data = Arc::new(SharedCell::new(0u32));
    let holders = Arc::new(Holders::new(1));
    let permit = std::sync::Arc::clone(&sem)
        .acquire_owned()
        .expect("the permit is free");
    holders.enter();
    let waiter = {
        let sem = std::sync::Arc::clone(&sem);
        let (data, holders) = (Arc::clone(&data), Arc::clone(&holders));
        thread::spawn(move || {
            let p = sem.acquire().expect("never closed");
            // Read before `holders.enter()`: the holder counter's `SeqCst` read-modify-writes
            // would otherwise order this read after the holder's `leave`, and hide a missing
            // edge in the semaphore.
            // SAFETY: the permit, returned by the panicking holder after its write, orders
            // that write before this read (what loom checks).
            let seen = data.with(|d| unsafe { *d });
            holders.enter();
            holders.leave();
            drop(p);
            seen
        })
    };
    let holder = {
        let (data, holders) = (Arc::clone(&data), Arc::clone(&holders));
        thread::spawn(move || {
            let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
                let _moved = permit;
                // SAFETY: this thread holds the only permit.
                data.with_mut(|d| unsafe { *d = 5 });
                holders.leave();
                std::panic::panic_any(DeliberatePanic);
            }));
            match unwound {
                Err(payload) if payload.is::<DeliberatePanic>() => {}
                Err(payload) => std::panic::resume_unwind(payload),
                Ok(()) => unreachable!("the holder panics"),
            }
        })
    };
    join(vec![holder]);
    let seen = join(vec![waiter]);
    assert_eq!(
        seen,
        [5],
        "the permit a panicking holder returned did not carry its write"
    );
    assert_conserved(&sem, 1);
    assert_waiters_clear(&sem);
}

/// (n) A woken thread takes the permit of a releaser that woke someone else: two threads park
/// (`first`, then `second`); the main thread adds a permit, which wakes `first`, and takes it
/// straight back if it can; then a second releaser writes data that is not atomic and adds a
/// permit, waking `second`; then the main thread joins it and adds the last permit. When the
/// main thread took its permit back, each waiter's permit is the second releaser's or the
/// last one, and each must see the data. Only the second releaser's `Release` orders the
/// write before the read of a waiter that it did not wake: a woken thread is ordered after its
/// own waker only, as in the real park table.
pub(crate) fn woken_takes_another_releasers_permit(build: Build) {
    let sem = Arc::new(build.semaphore(0));
    let data = Arc::new(SharedCell::new(0u32));
    let retook = Arc::new(parksema::__model::AtomicBool::new(false));
    let waiter = || {
        let (sem, data, retook) = (Arc::clone(&sem), Arc::clone(&data), Arc::clone(&retook));
        thread::spawn(move || {
            sem.acquire().expect("never closed").forget();
            // Relaxed: a hint only. If it reads true, the main thread's first permit is gone,
            // and this thread's permit was added after the data was written.
            if retook.load(Ordering::Relaxed) {
                // SAFETY: this thread's permit was added by the second releaser after its
                // write, or by the main thread after joining it (what loom checks).
                let seen = data.with(|d| unsafe { *d });
                assert_eq!(seen, 4, "a woken thread did not see the releaser's write");
            }
        })
    };
    let first = waiter();
    wait_parked(&sem, 1);
    let second = waiter();
    wait_parked(&sem, 2);
    sem.add_permits(1);
    // Taken back before the second releaser starts, so a waiter that finds `retook` set
    // cannot hold this permit.
    if let Ok(p) = sem.try_acquire() {
        p.forget();
        retook.store(true, Ordering::Relaxed);
    }
    let releaser = {
        let (sem, data) = (Arc::clone(&sem), Arc::clone(&data));
        thread::spawn(move || {
            // SAFETY: nobody reads `data` before taking a permit added after this write.
            data.with_mut(|d| unsafe { *d = 4 });
            sem.add_permits(1);
        })
    };
    join(vec![releaser]);
    sem.add_permits(1);
    join(vec![first, second]);
    let left = usize::from(!retook.load(Ordering::Relaxed));
    assert_conserved(&sem, left);
    assert_waiters_clear(&sem);
}

/// Like [`Holders`], for weighted requests: counts the permits held and fails at once when
/// they exceed the permits put in.
#[derive(Debug)]
pub(crate) struct WeightedHolders {
    held: AtomicUsize,
    permits: usize,
}

impl WeightedHolders {
    pub(crate) fn new(permits: usize) -> Self {
        WeightedHolders {
            held: AtomicUsize::new(0),
            permits,
        }
    }

    /// Called right after `n` permits were taken.
    pub(crate) fn enter(&self, n: usize) {
        // SeqCst: one total order of its own, independent of the semaphore's orderings.
        let now = self.held.fetch_add(n, Ordering::SeqCst) + n;
        assert!(
            now <= self.permits,
            "over-issue: {now} permits held > {} permits",
            self.permits
        );
    }

    /// Called right before `n` permits are returned.
    pub(crate) fn leave(&self, n: usize) {
        self.held.fetch_sub(n, Ordering::SeqCst);
    }
}

/// (o) A large request at the head with a small one behind it: a thread parks for two
/// permits, then another for one; a release of one permit must wake the small one (the large
/// one does not fit and must not hold it up), and once it has returned, under the checkers
/// that release woke that thread alone. Then two more permits wake the large one.
pub(crate) fn large_head_small_behind(build: Build) {
    let sem = Arc::new(build.semaphore(0));
    let big = take_and_forget(&sem, 2);
    wait_parked(&sem, 1);
    let small = take_and_forget(&sem, 1);
    wait_parked(&sem, 2);
    sem.add_permits(1);
    join(vec![small]);
    if let Some(stats) = park_stats(&sem) {
        assert!(
            stats.woken == 1,
            "park table: one permit with requests of 2 and 1 parked must wake the 1 alone \
             ({stats:?})"
        );
    }
    sem.add_permits(2);
    join(vec![big]);
    assert_conserved(&sem, 0);
    assert_waiters_clear(&sem);
}

/// A thread that acquires `n` permits of `sem` (never closed) and forgets them.
fn take_and_forget(sem: &Arc<Semaphore>, n: usize) -> thread::JoinHandle<()> {
    let sem = Arc::clone(sem);
    thread::spawn(move || sem.acquire_many(n).expect("never closed").forget())
}

/// (p) A timeout racing the release that would satisfy it: a timed waiter parks first, an
/// untimed one behind it; then the timed waiter's deadline passes (another thread advances
/// the clock) while the main thread adds one permit. Either the timed waiter takes the
/// permit (and gives it back) or it times out holding nothing; either way the untimed waiter
/// must get the permit: a timed-out waiter chosen by the release passes the wake-up on, and
/// its leaving the queue keeps `WAITERS` for the waiter behind it.
pub(crate) fn timeout_races_release(build: Build) {
    let sem = Arc::new(build.semaphore(0));
    let timed_done = Arc::new(parksema::__model::AtomicBool::new(false));
    let timed = {
        let (sem, timed_done) = (Arc::clone(&sem), Arc::clone(&timed_done));
        thread::spawn(move || {
            let got = match sem.try_acquire_for(Duration::from_millis(10)) {
                Ok(p) => {
                    drop(p);
                    true
                }
                Err(TryAcquireError::TimedOut) => false,
                Err(e) => panic!("timed out wrongly: a timed acquire on an open semaphore: {e:?}"),
            };
            timed_done.store(true, Ordering::SeqCst);
            got
        })
    };
    // On real threads the deadline runs in real time and may pass before a waiter is seen
    // parked; under the checkers it passes only when the clock thread below advances it, so
    // these waits are `wait_parked`.
    let parked_or_timed_out = |n: usize| {
        while sem.parked_threads() < n && !timed_done.load(Ordering::SeqCst) {
            thread::yield_now();
        }
    };
    parked_or_timed_out(1);
    let untimed = {
        let sem = Arc::clone(&sem);
        thread::spawn(move || sem.acquire().expect("never closed").forget())
    };
    parked_or_timed_out(2);
    let clock = thread::spawn(|| advance_clock(Duration::from_millis(10)));
    sem.add_permits(1);
    join(vec![clock]);
    join(vec![untimed]);
    join(vec![timed]);
    assert_conserved(&sem, 0);
    assert_waiters_clear(&sem);
}

/// (q) `close` racing timed waits: two threads wait with deadlines (one for one permit, one
/// for two) on an empty semaphore while the main thread closes it and another thread lets
/// both deadlines pass. Each wait ends closed or timed out, never with a permit; nobody is
/// left parked and `WAITERS` is clear.
pub(crate) fn close_races_timed_waits(build: Build) {
    let sem = Arc::new(build.semaphore(0));
    let waiters: Vec<_> = [1, 2]
        .into_iter()
        .map(|n| {
            let sem = Arc::clone(&sem);
            thread::spawn(move || {
                let deadline = now() + Duration::from_millis(5 * n as u64);
                match sem.try_acquire_many_until(n, deadline) {
                    Err(TryAcquireError::Closed | TryAcquireError::TimedOut) => {}
                    Ok(_) => panic!("close lost: a timed wait got a permit nobody added"),
                    Err(e) => panic!("timed out wrongly: {e:?}"),
                }
            })
        })
        .collect();
    let clock = thread::spawn(|| advance_clock(Duration::from_millis(10)));
    sem.close();
    join(vec![clock]);
    join(waiters);
    assert!(sem.is_closed());
    assert_conserved(&sem, 0);
    assert_waiters_clear(&sem);
}

/// (r) `split`, `merge` and `forget_permits` racing acquires: three permits; one thread takes
/// two, splits one off, returns it, merges in a third and returns all; another takes one and
/// returns it; the main thread forgets one permit if one is free. Never more permits held
/// than put in, and the count ends at three minus what was forgotten.
pub(crate) fn split_merge_forget_race_acquires(build: Build) {
    let sem = Arc::new(build.semaphore(3));
    let holders = Arc::new(WeightedHolders::new(3));
    let splitter = {
        let (sem, holders) = (Arc::clone(&sem), Arc::clone(&holders));
        thread::spawn(move || {
            let mut two = sem.acquire_many(2).expect("never closed");
            holders.enter(2);
            let one = two.split(1).expect("two permits split into one and one");
            holders.leave(1);
            drop(one);
            let more = sem.acquire().expect("never closed");
            holders.enter(1);
            two.merge(more);
            assert_eq!(two.num_permits(), 2, "merge lost or made up a permit");
            holders.leave(2);
            drop(two);
        })
    };
    let taker = {
        let (sem, holders) = (Arc::clone(&sem), Arc::clone(&holders));
        thread::spawn(move || {
            let p = sem.acquire().expect("never closed");
            holders.enter(1);
            holders.leave(1);
            drop(p);
        })
    };
    let forgotten = sem.forget_permits(1);
    assert!(
        forgotten <= 1,
        "forget_permits took {forgotten} permits when asked for one"
    );
    // With the forgotten permit gone there are two left, enough for either thread at any
    // time: both finish.
    join(vec![splitter, taker]);
    assert_conserved(&sem, 3 - forgotten);
    assert_waiters_clear(&sem);
}

/// (s) `forget_permits` racing `close` and an acquire: two permits; one thread forgets up to
/// two, the main thread closes, another thread acquires one and keeps it. The semaphore stays
/// closed whatever the order (shrinking never clears a flag), and the permits forgotten,
/// taken and left add up to two.
pub(crate) fn forget_races_close(build: Build) {
    let sem = Arc::new(build.semaphore(2));
    let forgetter = {
        let sem = Arc::clone(&sem);
        thread::spawn(move || sem.forget_permits(2))
    };
    let taker = {
        let sem = Arc::clone(&sem);
        thread::spawn(move || match sem.try_acquire() {
            Ok(p) => {
                p.forget();
                1
            }
            Err(_) => 0,
        })
    };
    sem.close();
    let forgotten = join(vec![forgetter])[0];
    let taken = join(vec![taker])[0];
    assert!(
        sem.is_closed(),
        "forget_permits reopened a closed semaphore ({sem:?})"
    );
    assert_eq!(
        sem.try_acquire().map(|p| p.forget()),
        Err(TryAcquireError::Closed),
        "close lost: a closed semaphore handed out a permit after forget_permits ({sem:?})"
    );
    assert!(
        forgotten + taken <= 2,
        "forget_permits took {forgotten} and an acquire {taken} of 2 permits ({sem:?})"
    );
    assert_conserved(&sem, 2 - forgotten - taken);
    assert_waiters_clear(&sem);
}

/// (t) A released batch wakes several waiters at once: `waiters` threads park for one permit
/// each; one release of `waiters` permits must wake them all, and under the checkers in one
/// unpark call.
pub(crate) fn batch_wakes_several(build: Build, waiters: usize) {
    let sem = Arc::new(build.semaphore(0));
    let handles: Vec<_> = (0..waiters)
        .map(|_| {
            let sem = Arc::clone(&sem);
            thread::spawn(move || sem.acquire().expect("never closed").forget())
        })
        .collect();
    wait_parked(&sem, waiters);
    sem.add_permits(waiters);
    join(handles);
    assert_conserved(&sem, 0);
    assert_waiters_clear(&sem);
    if let Some(stats) = park_stats(&sem) {
        assert!(
            stats.woken == waiters && stats.most_woken_by_one_call == waiters,
            "park table: a release of {waiters} permits must wake the {waiters} parked \
             threads in one call ({stats:?})"
        );
    }
}

/// (u) A woken thread that finds its permits taken passes the wake-up on: a thread parks for
/// two permits, another for one behind it; the main thread adds two, which wakes the first
/// (the release promises it both, so the second is not woken), while a barger takes one of
/// them for good. If the barger got one, the first thread wakes to a single permit, which
/// does not fit it, and must hand the wake-up to the thread behind it, which it fits:
/// nobody else will ever release. If the barger got none, the first thread took both and
/// the second waits for the permit the main thread adds next.
pub(crate) fn woken_out_barged_passes_on(build: Build) {
    let sem = Arc::new(build.semaphore(0));
    let first = {
        let sem = Arc::clone(&sem);
        thread::spawn(move || sem.acquire_many(2).expect("never closed").forget())
    };
    wait_parked(&sem, 1);
    let second = {
        let sem = Arc::clone(&sem);
        thread::spawn(move || sem.acquire().expect("never closed").forget())
    };
    wait_parked(&sem, 2);
    let barger = {
        let sem = Arc::clone(&sem);
        thread::spawn(move || sem.try_acquire().map(|p| p.forget()).is_ok())
    };
    sem.add_permits(2);
    let barged = join(vec![barger])[0];
    if barged {
        // One permit left, which only the second thread's request fits.
        join(vec![second]);
        sem.add_permits(2);
        join(vec![first]);
    } else {
        join(vec![first]);
        sem.add_permits(1);
        join(vec![second]);
    }
    assert_conserved(&sem, 0);
    assert_waiters_clear(&sem);
}

/// Where a thread writes before it returns its permits and the thread they go to reads
/// after it has them, with nothing else ordering the two: under loom a missing edge is a
/// causality violation.
type Note = Arc<SharedCell<u32>>;

/// Writes `value` to `note` (the caller holds a permit that the reader will get).
fn write_note(note: &Note, value: u32) {
    // SAFETY: the writer holds a permit the reader does not have yet; the permit's release
    // and the reader's acquire (here: the handoff) order this write before the read, which
    // is what loom checks.
    note.with_mut(|n| unsafe { *n = value });
}

/// Reads `note` (the caller holds the permits its writer returned).
fn read_note(note: &Note) -> u32 {
    // SAFETY: as in `write_note`: the reader holds the permits the writer returned.
    note.with(|n| unsafe { *n })
}

/// (v) A handoff assembled from two releasers' permits: two threads each hold one of two
/// permits and write a note, then return the permit (dropped, or with `release_fair` when
/// `fair`); a third thread asks for both. When the first permit comes back before the third
/// thread parks it goes into the count; the second releaser then finds the thread parked and
/// hands it both, its own and the first releaser's, which it takes out of the word. The
/// third thread's reads of both notes must happen-after both writes: for its own permit the
/// park table's wake carries the edge, for the other only the handing-over release's Acquire
/// on the word (with one releaser the check could not fail). Every permit comes back.
pub(crate) fn handoff_from_two_releasers(build: Build, fair: bool) {
    // A std `Arc`, which owned permits need (the checker's `Arc` is another type); the
    // semaphore's own atomics are the checker's either way.
    let sem = std::sync::Arc::new(build.semaphore(2));
    let notes: [Note; 2] = [Arc::new(SharedCell::new(0)), Arc::new(SharedCell::new(0))];
    let releasers: Vec<_> = (0..2)
        .map(|i| {
            let permit = std::sync::Arc::clone(&sem)
                .try_acquire_owned()
                .expect("two free");
            let note = Arc::clone(&notes[i]);
            thread::spawn(move || {
                write_note(&note, i as u32 + 1);
                if fair {
                    permit.release_fair();
                } else {
                    drop(permit);
                }
            })
        })
        .collect();
    let taker = {
        let (sem, notes) = (std::sync::Arc::clone(&sem), notes.clone());
        thread::spawn(move || {
            let both = sem.acquire_many(2).expect("never closed");
            let seen = [read_note(&notes[0]), read_note(&notes[1])];
            drop(both);
            seen
        })
    };
    join(releasers);
    let seen = join(vec![taker])[0];
    assert!(
        seen == [1, 2],
        "a handed-over permit came without its releaser's write: saw {seen:?}"
    );
    assert_conserved(&sem, 2);
    assert_waiters_clear(&sem);
}

/// (w) Under `Fifo` no running thread takes a permit while another is parked: a thread parks
/// for two permits; a barger tries for one while the main thread adds them one at a time.
/// The first permit does not fit the parked request and stays in the count, but the barger
/// must not take it; the second hands both over. The barger may succeed only once the
/// parked thread has had its permits (and given them back). On an `Eventual` or `Barging`
/// semaphore the barger may take the first permit: there the check must fail.
pub(crate) fn fifo_no_barging(build: Build) {
    let sem = Arc::new(build.semaphore(0));
    let served = Arc::new(parksema::__model::AtomicBool::new(false));
    let waiter = {
        let (sem, served) = (Arc::clone(&sem), Arc::clone(&served));
        thread::spawn(move || {
            let both = sem.acquire_many(2).expect("never closed");
            served.store(true, Ordering::SeqCst);
            drop(both);
        })
    };
    wait_parked(&sem, 1);
    let barger = {
        let (sem, served) = (Arc::clone(&sem), Arc::clone(&served));
        thread::spawn(move || {
            if let Ok(p) = sem.try_acquire() {
                assert!(
                    served.load(Ordering::SeqCst),
                    "fifo: a barger took a permit while a thread was parked ({sem:?})"
                );
                drop(p);
            }
        })
    };
    sem.add_permits(1);
    sem.add_permits(1);
    join(vec![waiter, barger]);
    assert_conserved(&sem, 2);
    assert_waiters_clear(&sem);
}

/// (x) Under `Fifo` requests are served in arrival order, weighted ones included: a thread
/// parks for two permits, then another for one; the main thread adds one permit (which fits
/// only the second, and must wait for the first), then one more (which completes the
/// first's two). The first must be served first; the second gets a permit when the first
/// returns its two.
pub(crate) fn fifo_keeps_arrival_order(build: Build) {
    let sem = Arc::new(build.semaphore(0));
    let order = Arc::new(AtomicUsize::new(0));
    let waiter = |n: usize| {
        let (sem, order) = (Arc::clone(&sem), Arc::clone(&order));
        thread::spawn(move || {
            let p = sem.acquire_many(n).expect("never closed");
            let turn = order.fetch_add(1, Ordering::SeqCst);
            drop(p);
            turn
        })
    };
    let first = waiter(2);
    wait_parked(&sem, 1);
    let second = waiter(1);
    wait_parked(&sem, 2);
    sem.add_permits(1);
    sem.add_permits(1);
    let turns = join(vec![first, second]);
    assert!(
        turns == [0, 1],
        "fifo: the request that arrived second was served first (turns {turns:?}, {sem:?})"
    );
    assert_conserved(&sem, 2);
    assert_waiters_clear(&sem);
}

/// (y) A permit handed to a waiter that is timing out at that moment: a timed waiter parks
/// on a semaphore whose one permit the main thread holds; another thread lets its deadline
/// pass while the main thread returns the permit (a handoff under `Fifo`, or with `fair`).
/// Either the waiter got the permit (and gives it back) or it timed out holding nothing and
/// the permit is in the count: never lost, never doubled.
pub(crate) fn handoff_to_timing_out_waiter(build: Build, fair: bool) {
    // A std `Arc`, which owned permits need.
    let sem = std::sync::Arc::new(build.semaphore(1));
    let held = std::sync::Arc::clone(&sem)
        .try_acquire_owned()
        .expect("one free");
    let done = Arc::new(parksema::__model::AtomicBool::new(false));
    let timed = {
        let (sem, done) = (std::sync::Arc::clone(&sem), Arc::clone(&done));
        thread::spawn(move || {
            let got = match sem.try_acquire_for(Duration::from_millis(10)) {
                Ok(p) => {
                    drop(p);
                    true
                }
                Err(TryAcquireError::TimedOut) => false,
                Err(e) => panic!("timed out wrongly: a timed acquire on an open semaphore: {e:?}"),
            };
            done.store(true, Ordering::SeqCst);
            got
        })
    };
    // On real threads the deadline may pass before the waiter is seen parked.
    while sem.parked_threads() < 1 && !done.load(Ordering::SeqCst) {
        thread::yield_now();
    }
    let clock = thread::spawn(|| advance_clock(Duration::from_millis(10)));
    if fair {
        held.release_fair();
    } else {
        drop(held);
    }
    join(vec![clock]);
    join(vec![timed]);
    let left = sem.available_permits();
    assert!(
        left == 1,
        "lost handoff: {left} permits left of 1 after a handoff raced a timeout ({sem:?})"
    );
    assert_waiters_clear(&sem);
}

/// (z) `Eventual`'s timer under the mocked clock: the first release that finds a thread
/// parked only starts the timer (a deadline drawn from 0-1 ms); once the clock has passed
/// it, the next release that wakes a parked thread hands it the permit, so a barger racing
/// that release cannot take it. Round one: a thread parks, the main thread adds a permit
/// (the timer starts; the thread takes the permit and forgets it). Round two: another thread
/// parks, the clock advances 1 ms, a barger tries while the main thread adds a permit: the
/// barger may succeed only after the parked thread was served. On a `Barging` semaphore the
/// barger may win: there the check must fail.
pub(crate) fn eventual_timer_hands_over(build: Build) {
    let sem = Arc::new(build.semaphore(0));
    let first = {
        let sem = Arc::clone(&sem);
        thread::spawn(move || sem.acquire().expect("never closed").forget())
    };
    wait_parked(&sem, 1);
    sem.add_permits(1);
    join(vec![first]);
    let served = Arc::new(parksema::__model::AtomicBool::new(false));
    let second = {
        let (sem, served) = (Arc::clone(&sem), Arc::clone(&served));
        thread::spawn(move || {
            let p = sem.acquire().expect("never closed");
            served.store(true, Ordering::SeqCst);
            drop(p);
        })
    };
    wait_parked(&sem, 1);
    advance_clock(Duration::from_millis(1));
    let barger = {
        let (sem, served) = (Arc::clone(&sem), Arc::clone(&served));
        thread::spawn(move || {
            if let Ok(p) = sem.try_acquire() {
                assert!(
                    served.load(Ordering::SeqCst),
                    "eventual: a barger took the permit of a release whose fairness deadline \
                     had passed ({sem:?})"
                );
                drop(p);
            }
        })
    };
    sem.add_permits(1);
    join(vec![second, barger]);
    assert_conserved(&sem, 1);
    assert_waiters_clear(&sem);
}

/// (z') Under `Fifo` a head that times out lets the requests behind it through: a thread
/// waits (with a deadline) for two permits, another (without) for one behind it; the main
/// thread adds one permit, which fits only the second and so stays in the count while the
/// head waits; then another thread lets the head's deadline pass. The head leaves, and the
/// permit now fits the new head: it must be handed over (nobody else will ever release).
pub(crate) fn fifo_head_times_out(build: Build) {
    let sem = Arc::new(build.semaphore(0));
    let head_done = Arc::new(parksema::__model::AtomicBool::new(false));
    let head = {
        let (sem, head_done) = (Arc::clone(&sem), Arc::clone(&head_done));
        thread::spawn(move || {
            let got = sem
                .try_acquire_many_for(2, Duration::from_millis(10))
                .map(|p| p.forget());
            head_done.store(true, Ordering::SeqCst);
            got
        })
    };
    // On real threads the head's deadline runs in real time and may pass before it is seen
    // parked; under the checkers it passes only when the clock is advanced below.
    while sem.parked_threads() < 1 && !head_done.load(Ordering::SeqCst) {
        thread::yield_now();
    }
    let behind = {
        let sem = Arc::clone(&sem);
        thread::spawn(move || sem.acquire().expect("never closed").forget())
    };
    // On real threads the head's deadline may pass before the second thread parks; then the
    // second takes the permit without parking, which is as good.
    while sem.parked_threads() < 2 && !head_done.load(Ordering::SeqCst) {
        thread::yield_now();
    }
    sem.add_permits(1);
    advance_clock(Duration::from_millis(10));
    join(vec![behind]);
    let head = join(vec![head]).remove(0);
    assert!(
        head == Err(TryAcquireError::TimedOut),
        "fifo: the head got {head:?} with one permit for a request of two"
    );
    assert_conserved(&sem, 0);
    assert_waiters_clear(&sem);
}

/// (z'') Under `Fifo` two requests race to park while a permit is free: a thread asks for
/// two permits of a semaphore holding one (it cannot fit, so it parks), another for one (it
/// fits). Whichever is queued first arrived first. If the one-permit request was queued
/// first it was the head with its request free, and must not have slept; so whenever both
/// are seen parked at once, the two-permit request is the head, and the one permit the main
/// thread then adds must complete it first. The small request either took the free permit
/// without parking, or is served second.
pub(crate) fn fifo_arrivals_race_a_free_permit(build: Build) {
    let sem = Arc::new(build.semaphore(1));
    let order = Arc::new(AtomicUsize::new(0));
    let small_done = Arc::new(parksema::__model::AtomicBool::new(false));
    let request = |n: usize, done: Option<Arc<parksema::__model::AtomicBool>>| {
        let (sem, order) = (Arc::clone(&sem), Arc::clone(&order));
        thread::spawn(move || {
            let p = sem.acquire_many(n).expect("never closed");
            let turn = order.fetch_add(1, Ordering::SeqCst);
            if let Some(done) = done {
                done.store(true, Ordering::SeqCst);
            }
            drop(p);
            turn
        })
    };
    let large = request(2, None);
    let small = request(1, Some(Arc::clone(&small_done)));
    // Wait until both are parked, or the small one is through and the large one parked.
    let both_parked = loop {
        let parked = sem.parked_threads();
        if parked == 2 {
            break true;
        }
        if parked == 1 && small_done.load(Ordering::SeqCst) {
            break false;
        }
        thread::yield_now();
    };
    sem.add_permits(1);
    let large_turn = join(vec![large]).remove(0);
    let small_turn = join(vec![small]).remove(0);
    if both_parked {
        assert!(
            (large_turn, small_turn) == (0, 1),
            "fifo: with both requests parked the one queued second was served first, or the \
             head slept while its request fit (turns: large {large_turn}, small {small_turn}; \
             {sem:?})"
        );
    }
    assert_conserved(&sem, 2);
    assert_waiters_clear(&sem);
}

/// (z''') `Eventual`'s turn is spent only on a release that hands its permit to someone.
/// First the timer is started (a thread parks and is woken by the first release that finds
/// it) and the clock moved past every deadline it can draw. Then a holder takes and returns
/// the one permit three times while a waiter asks for it once. The first release that finds
/// the waiter queued must hand the permit over (the turn is due, and no earlier release can
/// have spent it on nobody, such as one that found the waiter announced but not yet
/// queued), so the holder's next `try_acquire` may succeed only once the waiter has been
/// served. On a `Barging` semaphore the holder takes it back: there the check must fail.
pub(crate) fn eventual_turn_goes_to_a_parked_waiter(build: Build, rounds: usize) {
    let sem = Arc::new(build.semaphore(1));
    let held = sem.try_acquire().expect("one free");
    let first = {
        let sem = Arc::clone(&sem);
        thread::spawn(move || drop(sem.acquire().expect("never closed")))
    };
    wait_parked(&sem, 1);
    drop(held);
    join(vec![first]);
    advance_clock(Duration::from_millis(2));
    let served = Arc::new(parksema::__model::AtomicBool::new(false));
    let waiter = {
        let (sem, served) = (Arc::clone(&sem), Arc::clone(&served));
        thread::spawn(move || {
            let p = sem.acquire().expect("never closed");
            served.store(true, Ordering::SeqCst);
            drop(p);
        })
    };
    let mut handed_over = false;
    for _ in 0..rounds {
        let Ok(p) = sem.try_acquire() else {
            thread::yield_now();
            continue;
        };
        // The waiter cannot leave the queue while the holder holds the only permit, so if
        // it is queued now it is queued at the release below.
        let queued = sem.parked_threads() == 1;
        drop(p);
        if queued && !handed_over {
            handed_over = true;
            if let Ok(p) = sem.try_acquire() {
                assert!(
                    served.load(Ordering::SeqCst),
                    "eventual: a release past the fairness deadline found the waiter queued \
                     and let the releaser take the permit back ({sem:?})"
                );
                drop(p);
            }
        }
    }
    join(vec![waiter]);
    assert_conserved(&sem, 1);
    assert_waiters_clear(&sem);
}

/// (z'''') A small request arriving while a release passes over a large head: a thread parks
/// for two permits of an empty semaphore; another asks for one while the main thread adds
/// one. The release wakes nobody (the head does not fit) and leaves `WAITERS` set for the
/// head, so the small request must not park on the bit alone with the permit free: if it
/// validates after the release's unpark, nobody is left to wake it. It must get the
/// permit; then two more complete the head.
pub(crate) fn small_arrives_as_a_large_head_is_passed_over(build: Build) {
    let sem = Arc::new(build.semaphore(0));
    let big = take_and_forget(&sem, 2);
    wait_parked(&sem, 1);
    let small = take_and_forget(&sem, 1);
    sem.add_permits(1);
    join(vec![small]);
    sem.add_permits(2);
    join(vec![big]);
    assert_conserved(&sem, 0);
    assert_waiters_clear(&sem);
}
