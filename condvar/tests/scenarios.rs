//! The scenarios, written once and run by every build at the sizes that fit it: tiny under
//! loom (`tests/loom.rs`), medium under shuttle (`tests/shuttle.rs`), large on real threads
//! (`tests/stress.rs`). Threads, `Arc` and the clock come from `parkcheck` (std's and real
//! time in the real build, the checker's and the mocked clock under a checker).
//!
//! Invariants are asserted inside the scenario, with messages naming the property
//! (`mutual exclusion: two holders`, `timeout after requeue: ...`), so a failure says what
//! broke in any build. A lost wake-up has no assertion of its own: loom and shuttle report
//! the deadlock, the watchdog reports the stall on real threads.
//!
//! Bookkeeping that only checks (the holder count, the tallies) uses std atomics, which the
//! checkers do not schedule: each check then costs no interleavings, and it is still exact,
//! since the checkers run one thread at a time and switch only at their own operations.

#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize as Ghost, Ordering::SeqCst};
use std::time::Duration;

use parkcheck::sync::{Arc, thread};
#[cfg(feature = "broken_condvar")]
use parksema_condvar::Flaw;
use parksema_condvar::{Condvar, Mutex, MutexGuard};

/// Which primitives a scenario runs against: the correct ones, or ones with a deliberate flaw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Build {
    #[cfg(feature = "broken_condvar")]
    pub(crate) flaw: Option<Flaw>,
}

impl Build {
    /// The correct mutex and condition variable.
    pub(crate) const CORRECT: Build = Build {
        #[cfg(feature = "broken_condvar")]
        flaw: None,
    };

    /// The primitives with `flaw` (each object ignores a flaw that is not its own).
    #[cfg(feature = "broken_condvar")]
    pub(crate) fn flawed(flaw: Flaw) -> Build {
        Build { flaw: Some(flaw) }
    }

    /// A mutex holding `value`.
    pub(crate) fn mutex<T>(self, value: T) -> Mutex<T> {
        #[cfg(feature = "broken_condvar")]
        return Mutex::with_flaw(value, self.flaw);
        #[cfg(not(feature = "broken_condvar"))]
        Mutex::new(value)
    }

    /// A condition variable.
    pub(crate) fn condvar(self) -> Condvar {
        #[cfg(feature = "broken_condvar")]
        return Condvar::with_flaw(self.flaw);
        #[cfg(not(feature = "broken_condvar"))]
        Condvar::new()
    }
}

/// Where a scenario reports each operation of its thread number `i` (the main thread is 0
/// where it takes part, spawned threads follow): the watchdog's workers on real threads,
/// nothing under the checkers.
pub(crate) type Progress = std::sync::Arc<dyn Fn(usize, &'static str) + Send + Sync>;

/// A [`Progress`] that reports nowhere.
pub(crate) fn quiet() -> Progress {
    std::sync::Arc::new(|_, _| {})
}

/// Counts the threads inside a critical section, and fails when there are two.
#[derive(Clone, Default)]
struct Holders(std::sync::Arc<Ghost>);

impl Holders {
    /// Entered the critical section.
    fn enter(&self, what: &str) {
        let before = self.0.fetch_add(1, SeqCst);
        assert_eq!(before, 0, "mutual exclusion: two holders ({what})");
    }

    /// Left it.
    fn leave(&self) {
        self.0.fetch_sub(1, SeqCst);
    }
}

/// Takes the lock and waits on `arrivals` until `ready` says yes. The scenarios' threads
/// announce themselves there (`notify_one` after each change `ready` looks at), so the main
/// thread waits without spinning: a spin loop gives loom schedules that spin forever, which
/// only a preemption bound would cut.
fn wait_for<'a, T>(
    m: &'a Mutex<T>,
    arrivals: &Condvar,
    ready: impl Fn(&T) -> bool,
) -> MutexGuard<'a, T> {
    let mut guard = m.lock();
    while !ready(&guard) {
        arrivals.wait(&mut guard);
    }
    guard
}

// (a) Mutual exclusion.

/// `threads` threads take the lock `rounds` times each (every other time with `try_lock`
/// first) and increment the protected counter. At most one holder at a time, no increment
/// lost; under loom the counter is in loom's `UnsafeCell`, so a holder not ordered after the
/// previous one's writes is a causality violation.
pub(crate) fn mutual_exclusion(build: Build, threads: usize, rounds: usize, progress: Progress) {
    let m = Arc::new(build.mutex(0usize));
    let holders = Holders::default();
    let handles: Vec<_> = (0..threads)
        .map(|i| {
            let (m, holders, progress) = (Arc::clone(&m), holders.clone(), progress.clone());
            thread::spawn(move || {
                for r in 0..rounds {
                    let mut guard = if r % 2 == 1 {
                        m.try_lock().unwrap_or_else(|| m.lock())
                    } else {
                        m.lock()
                    };
                    holders.enter("lock");
                    *guard += 1;
                    holders.leave();
                    drop(guard);
                    progress(i, "lock");
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("a locker panicked");
    }
    let total = *m.lock();
    assert_eq!(
        total,
        threads * rounds,
        "mutual exclusion: lost update ({total} of {} increments)",
        threads * rounds
    );
}

// (b) wait / notify_one with a predicate loop.

/// Two threads take turns on a counter, `rounds` turns each: thread `k` waits (predicate
/// loop) until the counter is `k` modulo 2, increments it and wakes the other with
/// `notify_one`, under the mutex on even turns and after releasing it on odd ones. A lost
/// wake-up leaves a thread asleep on its turn: a deadlock.
pub(crate) fn ping_pong(build: Build, rounds: usize, progress: Progress) {
    let shared = Arc::new((build.mutex(0usize), build.condvar()));
    let holders = Holders::default();
    let handles: Vec<_> = (0..2)
        .map(|k| {
            let (shared, holders, progress) =
                (Arc::clone(&shared), holders.clone(), progress.clone());
            thread::spawn(move || {
                let (m, cv) = &*shared;
                for r in 0..rounds {
                    let mut guard = m.lock();
                    while *guard % 2 != k {
                        cv.wait(&mut guard);
                        progress(k, "woken");
                    }
                    holders.enter("after wait");
                    *guard += 1;
                    holders.leave();
                    if r.is_multiple_of(2) {
                        cv.notify_one();
                        drop(guard);
                    } else {
                        drop(guard);
                        cv.notify_one();
                    }
                    progress(k, "turn");
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("a ping-pong thread panicked");
    }
    let (m, cv) = &*shared;
    assert_eq!(*m.lock(), 2 * rounds, "ping-pong: turns lost");
    assert!(
        !cv.__in_use(),
        "condvar state: still bound to a mutex with nobody waiting"
    );
}

// (c) notify_all requeues.

/// The waiters' gate: how many arrived in all, and the round that is open.
#[derive(Debug, Default)]
struct Gate {
    arrived: usize,
    open: usize,
    left: usize,
}

/// `waiters` threads wait at a gate, `rounds` times; the main thread opens it each round with
/// one `notify_all` once all of them wait (while holding the mutex, so everyone is requeued,
/// when `under_lock` says so for that round; else right after releasing it, so one is woken
/// and the rest requeued). Every waiter returns, each holding the mutex alone; `notify_all`
/// counts every waiter; under a checker, no `notify_all` wakes more than one thread itself.
pub(crate) fn notify_all_rounds(
    build: Build,
    waiters: usize,
    rounds: usize,
    under_lock: fn(usize) -> bool,
    progress: Progress,
) -> Outcomes {
    // The gate's condition variable (under test), and the one the main thread waits on for
    // arrivals (always the correct one, so a flaw shows in the one under test).
    let shared = Arc::new((
        build.mutex(Gate::default()),
        build.condvar(),
        Build::CORRECT.condvar(),
    ));
    let holders = Holders::default();
    let handles: Vec<_> = (0..waiters)
        .map(|i| {
            let (shared, holders, progress) =
                (Arc::clone(&shared), holders.clone(), progress.clone());
            thread::spawn(move || {
                let (m, cv, arrivals) = &*shared;
                for r in 0..rounds {
                    let mut guard = m.lock();
                    guard.arrived += 1;
                    arrivals.notify_one();
                    while guard.open == r {
                        cv.wait(&mut guard);
                        progress(i + 1, "woken");
                    }
                    holders.enter("after notify_all");
                    guard.left += 1;
                    holders.leave();
                    drop(guard);
                    progress(i + 1, "through the gate");
                }
            })
        })
        .collect();
    let (m, cv, arrivals) = &*shared;
    // Compared with the park table's counts under a checker.
    let mut counted = 0;
    for r in 0..rounds {
        // Every waiter of this round has arrived, so each is parked on the condition
        // variable (it bound it and queued before it let go of the mutex).
        let mut guard = wait_for(m, arrivals, |g| g.arrived == waiters * (r + 1));
        guard.open = r + 1;
        let n = if under_lock(r) {
            cv.notify_all()
        } else {
            drop(guard);
            cv.notify_all()
        };
        assert_eq!(
            n, waiters,
            "notify_all: {waiters} waiters parked, it counted {n} (round {r})"
        );
        counted += n;
        progress(0, "notify_all");
    }
    for h in handles {
        h.join().expect("a waiter panicked");
    }
    assert_eq!(counted, waiters * rounds, "notify_all: waiters not counted");
    assert_eq!(m.lock().left, waiters * rounds, "notify_all: waiters lost");
    assert!(
        !cv.__in_use(),
        "condvar state: still bound to a mutex with nobody waiting"
    );
    #[cfg(any(feature = "loom", feature = "shuttle"))]
    {
        let stats = parkcheck::stats(cv.__park_key());
        assert!(
            stats.most_woken_by_one_call <= 1,
            "thundering herd: a notify_all woke {} threads at once",
            stats.most_woken_by_one_call
        );
        assert_eq!(
            stats.woken + stats.requeued,
            counted,
            "notify_all: counted {counted} waiters, the table woke {} and requeued {}",
            stats.woken,
            stats.requeued
        );
        return Outcomes {
            woken_by_notify_all: stats.woken,
            ..Outcomes::default()
        };
    }
    #[allow(unreachable_code)]
    Outcomes::default()
}

// (d) A timed wait racing a notification.

/// When the notifier moves the clock (by twice the waits' timeout), while it holds the mutex.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Clock {
    /// Never: under the model, timeouts come from `Timeouts::CheckerChooses`; in the real
    /// build from real time.
    Still,
    /// Before it notifies: the wait may time out on the condition variable's key first.
    BeforeNotify,
    /// After `notify_all` moved the waiters onto the mutex, which it still holds: their
    /// deadlines pass while they are parked on the mutex's key.
    AfterNotify,
}

/// What a notifier calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Notify {
    One,
    All,
    /// `notify_one` on odd rounds, `notify_all` on even ones.
    Mixed,
}

/// The timed waits' state.
#[derive(Debug, Default)]
struct Timed {
    /// How many waits have started, in all.
    started: usize,
    /// Set at the end: the untimed waits of the last round may return.
    done: bool,
}

/// What the waits of one run did (each scenario fills in what it measures).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Outcomes {
    pub(crate) notified: usize,
    pub(crate) timed_out: usize,
    /// Notified waits whose deadline had passed while they waited for the mutex after a
    /// `notify_all` moved them (only counted where the checker's clock says so).
    pub(crate) requeued_past_deadline: usize,
    /// Threads the scenario's `notify_all`s woke themselves, rather than requeued (where the
    /// checker's table says so; 0 on real threads).
    pub(crate) woken_by_notify_all: usize,
}

/// `waiters` threads each make `rounds` timed waits (timeout `timeout`) on one condition
/// variable; the main thread, once all the waits of a round have started, notifies
/// (`notify`) under the mutex and moves the clock as `clock` says. So each wait either times
/// out or is notified, and the checker (or real time) decides which. Then every waiter makes
/// one untimed wait and the main thread ends it with `notify_all`: the condition variable must
/// still work after whatever the timed rounds did to its state.
///
/// Checks: the notifications' counts add up to the waits that report one, exactly (a wait
/// `notify_all` moved onto the mutex that times out there was counted, and must say
/// notified; no wait says notified that nobody counted); the final round returns; at the end
/// the condition variable is bound to nothing.
pub(crate) fn timed_wait_races_notify(
    build: Build,
    waiters: usize,
    rounds: usize,
    notify: Notify,
    clock: Clock,
    timeout: Duration,
    progress: Progress,
) -> Outcomes {
    // The condition variable under test, and the correct one for arrivals.
    let shared = Arc::new((
        build.mutex(Timed::default()),
        build.condvar(),
        Build::CORRECT.condvar(),
    ));
    // Timed waits that reported a notification, timed waits that reported a timeout, and
    // returns from the untimed waits (each one a notification: there are no spurious ones).
    let tally = std::sync::Arc::new([Ghost::new(0), Ghost::new(0), Ghost::new(0)]);
    let handles: Vec<_> = (0..waiters)
        .map(|i| {
            let (shared, progress, tally) = (Arc::clone(&shared), progress.clone(), tally.clone());
            thread::spawn(move || {
                let (m, cv, arrivals) = &*shared;
                let mut guard = m.lock();
                for _ in 0..rounds {
                    guard.started += 1;
                    arrivals.notify_one();
                    let timed_out = cv.wait_for(&mut guard, timeout).timed_out();
                    tally[usize::from(timed_out)].fetch_add(1, SeqCst);
                    progress(i + 1, "timed wait");
                }
                guard.started += 1;
                arrivals.notify_one();
                while !guard.done {
                    // A round's notification may reach this wait too, and the last
                    // `notify_all` counts it.
                    cv.wait(&mut guard);
                    tally[2].fetch_add(1, SeqCst);
                }
                drop(guard);
                progress(i + 1, "last wait");
            })
        })
        .collect();
    let (m, cv, arrivals) = &*shared;
    let mut counted = 0;
    for r in 0..rounds {
        // Every wait up to this round has started: each is parked on the condition
        // variable, or (timed out or notified) waits for the mutex or has moved on.
        // `>=`: a waiter whose wait timed out may already have started its next one.
        let guard = wait_for(m, arrivals, |g| g.started >= waiters * (r + 1));
        if clock == Clock::BeforeNotify {
            parkcheck::advance_clock(timeout * 2);
        }
        let all = match notify {
            Notify::One => false,
            Notify::All => true,
            Notify::Mixed => r.is_multiple_of(2),
        };
        counted += if all {
            cv.notify_all()
        } else {
            usize::from(cv.notify_one())
        };
        if clock == Clock::AfterNotify {
            parkcheck::advance_clock(timeout * 2);
        }
        drop(guard);
        progress(0, "notify");
    }
    // Every waiter is in its untimed wait (or about to test `done`).
    let mut guard = wait_for(m, arrivals, |g| g.started == waiters * (rounds + 1));
    guard.done = true;
    counted += cv.notify_all();
    drop(guard);
    for h in handles {
        h.join().expect("a timed waiter panicked");
    }
    let [notified, timed_out, untimed] = [0, 1, 2].map(|i| tally[i].load(SeqCst));
    let reported = notified + untimed;
    assert!(
        reported >= counted,
        "timeout after requeue: the notifications counted {counted} waits, but only \
         {reported} reported one ({timed_out} timed waits reported a timeout)"
    );
    assert!(
        reported <= counted,
        "spurious wake-up: {reported} waits reported a notification, the notifications \
         counted {counted}"
    );
    assert!(
        !cv.__in_use(),
        "condvar state: still bound to a mutex with nobody waiting"
    );
    #[allow(unused_mut)]
    let mut outcomes = Outcomes {
        notified,
        timed_out,
        ..Outcomes::default()
    };
    #[cfg(any(feature = "loom", feature = "shuttle"))]
    {
        assert_eq!(
            parkcheck::parked(cv.__park_key()),
            0,
            "condvar: threads still parked at the end"
        );
        // Nothing else parks on the mutex with a deadline.
        outcomes.requeued_past_deadline = parkcheck::stats(m.__park_key()).timeouts;
    }
    outcomes
}

// (e) A bounded buffer: two condition variables on one mutex.

/// The buffer's state.
#[derive(Debug, Default)]
struct Buffer {
    len: usize,
    produced: usize,
    consumed: usize,
}

/// `producers` threads put `items` items each into a buffer of `capacity`, `consumers`
/// threads take them out; producers wait on `not_full`, consumers on `not_empty`, half of the
/// waits timed (`timeout`; a timed-out wait just tests again). Producers wake a consumer
/// with `notify_one`, or all of them every third item; consumers wake a producer with
/// `notify_one`. The consumer that takes the last item wakes the other consumers with
/// `notify_all`. Checks: the buffer never over- or underflows, one holder at a time, every
/// item consumed once.
pub(crate) fn bounded_buffer(
    build: Build,
    producers: usize,
    consumers: usize,
    items: usize,
    capacity: usize,
    timeout: Duration,
    progress: Progress,
) {
    let total = producers * items;
    let shared = Arc::new((
        build.mutex(Buffer::default()),
        build.condvar(),
        build.condvar(),
    ));
    let holders = Holders::default();
    let mut handles = Vec::new();
    for p in 0..producers {
        let (shared, holders, progress) = (Arc::clone(&shared), holders.clone(), progress.clone());
        handles.push(thread::spawn(move || {
            let (m, not_empty, not_full) = &*shared;
            for i in 0..items {
                let mut guard = m.lock();
                while guard.len == capacity {
                    if i.is_multiple_of(2) {
                        let _ = not_full.wait_for(&mut guard, timeout);
                    } else {
                        not_full.wait(&mut guard);
                    }
                }
                holders.enter("producer");
                assert!(guard.len < capacity, "buffer overflow: {} items", guard.len);
                guard.len += 1;
                guard.produced += 1;
                holders.leave();
                if i.is_multiple_of(3) {
                    drop(guard);
                    not_empty.notify_all();
                } else {
                    not_empty.notify_one();
                    drop(guard);
                }
                progress(p, "produce");
            }
        }));
    }
    for c in 0..consumers {
        let (shared, holders, progress) = (Arc::clone(&shared), holders.clone(), progress.clone());
        handles.push(thread::spawn(move || {
            let (m, not_empty, not_full) = &*shared;
            let mut taken = 0usize;
            let mut guard = m.lock();
            loop {
                while guard.len == 0 && guard.consumed < total {
                    if taken.is_multiple_of(2) {
                        let _ = not_empty.wait_for(&mut guard, timeout);
                    } else {
                        not_empty.wait(&mut guard);
                    }
                }
                if guard.consumed == total {
                    break;
                }
                holders.enter("consumer");
                guard.len -= 1;
                guard.consumed += 1;
                taken += 1;
                let last = guard.consumed == total;
                holders.leave();
                not_full.notify_one();
                if last {
                    not_empty.notify_all();
                    break;
                }
                drop(guard);
                progress(producers + c, "consume");
                guard = m.lock();
            }
        }));
    }
    for h in handles {
        h.join().expect("a buffer thread panicked");
    }
    let (m, not_empty, not_full) = &*shared;
    let guard = m.lock();
    assert_eq!(
        (guard.produced, guard.consumed, guard.len),
        (total, total, 0),
        "bounded buffer: items lost or duplicated"
    );
    drop(guard);
    assert!(
        !not_empty.__in_use() && !not_full.__in_use(),
        "condvar state: still bound to a mutex with nobody waiting"
    );
}
