//! The stress scenarios, each a function of the semaphore build and its sizes, so the
//! ordinary tests run them against the correct semaphore and the catch tests against each
//! flaw. Invariants are asserted inside, with messages that name the violated property.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use parksema::{AcquireError, Semaphore, TryAcquireError};

use crate::support::{Build, Holders, Rng, arm, arm_with, describe, join_all, wait_until};

/// The first stress test: `threads` threads each take and return a permit `per_thread`
/// times; never more holders than `permits`, every permit back, the exact total counted.
pub(crate) fn never_exceeds_permits(
    build: Build,
    permits: usize,
    threads: usize,
    per_thread: usize,
) -> String {
    let sem = Arc::new(build.semaphore(permits));
    let wd = arm(
        format!("never_exceeds_permits permits={permits} threads={threads}"),
        &sem,
    );
    let holders = Holders::new(permits);
    let acquisitions = AtomicUsize::new(0);
    // Set by a worker that found a violation, so the others stop soon instead of running on.
    let stop = AtomicBool::new(false);

    thread::scope(|s| {
        let handles = (0..threads)
            .map(|t| {
                let w = wd.worker(format!("t{t}"));
                let (sem, holders, acquisitions, stop) = (&sem, &holders, &acquisitions, &stop);
                s.spawn(move || {
                    for i in 0..per_thread {
                        if stop.load(Ordering::Relaxed) {
                            return;
                        }
                        w.op("acquire");
                        let permit = sem.acquire().expect("never closed in this scenario");
                        w.op("holding");
                        if let Err(e) = std::panic::catch_unwind(|| holders.enter()) {
                            stop.store(true, Ordering::Relaxed);
                            std::panic::resume_unwind(e);
                        }
                        acquisitions.fetch_add(1, Ordering::Relaxed);
                        // The holder yields now and then while holding, so that holders overlap
                        // with parked and spinning acquirers.
                        if i % 64 == 0 {
                            thread::yield_now();
                        }
                        holders.leave();
                        w.op("release");
                        drop(permit);
                    }
                })
            })
            .collect();
        join_all(handles);
    });

    let max = holders.max();
    let left = sem.available_permits();
    let total = acquisitions.load(Ordering::Relaxed);
    assert!(
        max <= permits,
        "over-issue: max in use {max} > permits {permits}"
    );
    assert_eq!(
        left,
        permits,
        "permits not restored: {left} left, {permits} expected ({})",
        describe(&sem)
    );
    assert_eq!(
        total,
        threads * per_thread,
        "acquisitions lost: {total} counted, {} expected",
        threads * per_thread
    );
    format!(
        "permits={permits} threads={threads}: max in use {max}, permits left {left}, acquisitions {total}"
    )
}

/// The second stress test: with no permit, `waiters` threads park; then `waiters` single
/// releases must wake every one of them, and the count ends at 0.
pub(crate) fn wakes_every_parked_thread(build: Build, waiters: usize) -> String {
    let sem = Arc::new(build.semaphore(0));
    let wd = arm("wakes_every_parked_thread", &sem);
    let main = wd.worker("main");

    thread::scope(|s| {
        let handles = (0..waiters)
            .map(|t| {
                let w = wd.worker(format!("waiter{t}"));
                let sem = &sem;
                s.spawn(move || {
                    w.op("acquire (parks)");
                    sem.acquire()
                        .expect("never closed in this scenario")
                        .forget();
                    w.op("returned");
                })
            })
            .collect();
        // Every waiter must be parked before the first release, or the test would not test
        // waking. The park table is asked, not a timer.
        wait_until(&main, "waiting for all to park", waiters, || {
            sem.parked_threads()
        });
        for _ in 0..waiters {
            main.op("release one");
            sem.add_permits(1);
        }
        main.op("join");
        join_all(handles);
    });

    // A lost wakeup never gets here: the join above stalls and the watchdog reports it.
    assert_eq!(
        sem.available_permits(),
        0,
        "permits miscounted: {} ({})",
        sem.available_permits(),
        describe(&sem)
    );
    // The unpark that took the last waiter must have cleared WAITERS, or every later
    // release would take the slow path.
    assert!(
        format!("{sem:?}").contains("waiters: false"),
        "WAITERS left set with nobody parked: {}",
        describe(&sem)
    );
    format!("waiters={waiters}: all returned, permits left 0")
}

/// Mixed traffic: blocking and non-blocking takes, forgotten permits put back with
/// `add_permits` (one or a batch), and refused over-full additions, all at once. A thread
/// only ever adds permits it took and forgot, so the total never exceeds `permits` and the
/// holder check stays exact.
pub(crate) fn mixed_traffic(
    build: Build,
    permits: usize,
    threads: usize,
    per_thread: usize,
) -> String {
    const KINDS: [&str; 5] = [
        "acquire",
        "try_acquire",
        "forget + add 1",
        "batch forget + add n",
        "refused add",
    ];
    let sem = Arc::new(build.semaphore(permits));
    let wd = arm(
        format!("mixed_traffic permits={permits} threads={threads}"),
        &sem,
    );
    let holders = Holders::new(permits);
    let done = [0; KINDS.len()].map(|_: i32| AtomicUsize::new(0));

    thread::scope(|s| {
        let handles = (0..threads)
            .map(|t| {
                let w = wd.worker(format!("t{t}"));
                let (sem, holders, done) = (&sem, &holders, &done);
                s.spawn(move || {
                    let mut rng = Rng::new(t as u64 + 1);
                    for _ in 0..per_thread {
                        let kind = rng.below(KINDS.len() as u64) as usize;
                        w.op(KINDS[kind]);
                        match kind {
                            0 => {
                                let p = sem.acquire().expect("never closed in this scenario");
                                holders.enter();
                                holders.leave();
                                drop(p);
                            }
                            1 => match sem.try_acquire() {
                                Ok(p) => {
                                    holders.enter();
                                    holders.leave();
                                    drop(p);
                                }
                                Err(e) => assert_eq!(e, TryAcquireError::NoPermits),
                            },
                            2 => {
                                let p = sem.acquire().expect("never closed in this scenario");
                                holders.enter();
                                holders.leave();
                                p.forget();
                                sem.add_permits(1);
                            }
                            3 => {
                                // One blocking take, then non-blocking ones, so no thread
                                // waits while holding (which could deadlock).
                                let first = sem.acquire().expect("never closed in this scenario");
                                holders.enter();
                                let mut batch = vec![first];
                                let want = 1 + rng.below(permits as u64) as usize;
                                while batch.len() < want {
                                    let Ok(p) = sem.try_acquire() else { break };
                                    holders.enter();
                                    batch.push(p);
                                }
                                let n = batch.len();
                                for p in batch {
                                    holders.leave();
                                    p.forget();
                                }
                                sem.add_permits(n);
                            }
                            _ => {
                                // usize::MAX is more than MAX_PERMITS, so it is refused
                                // whatever the count.
                                let err = sem
                                    .try_add_permits(usize::MAX)
                                    .expect_err("over-full add accepted: wraparound");
                                assert_eq!(err.added(), usize::MAX);
                                assert!(
                                    err.available() <= permits,
                                    "over-issue: {} available > permits {permits}",
                                    err.available()
                                );
                            }
                        }
                        done[kind].fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        join_all(handles);
    });

    let left = sem.available_permits();
    let max = holders.max();
    assert!(
        max <= permits,
        "over-issue: max in use {max} > permits {permits}"
    );
    assert_eq!(
        left,
        permits,
        "permits not restored: {left} left, {permits} expected ({})",
        describe(&sem)
    );
    let counts: Vec<usize> = done.iter().map(|c| c.load(Ordering::Relaxed)).collect();
    assert_eq!(
        counts.iter().sum::<usize>(),
        threads * per_thread,
        "operations lost: {counts:?}"
    );
    format!(
        "permits={permits} threads={threads}: max in use {max}, permits left {left}, \
         operations {}",
        KINDS
            .iter()
            .zip(&counts)
            .map(|(k, c)| format!("{k}: {c}"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Many semaphores whose keys must share park-table buckets, each woken across threads.
///
/// `threads * lanes` semaphores form a ring: thread `t` owns `lanes` of them, and each
/// lane's single token (permit) travels from thread to thread. Thread `t` takes the token of
/// each of its lanes in turn (parking until it arrives), then hands it to thread `t + 1`'s
/// semaphore of the same lane, for `rounds` rounds. Almost every take parks, on a different
/// key each time. `parking_lot_core` sizes its table to the next power of two above three
/// buckets per live thread, so while fewer than 171 threads are alive it has at most 512
/// buckets, and 1024 semaphores (16 threads, 64 lanes) must share them.
pub(crate) fn many_semaphores(build: Build, threads: usize, lanes: usize, rounds: usize) -> String {
    let sems: Arc<Vec<Semaphore>> = Arc::new(
        (0..threads * lanes)
            .map(|i| build.semaphore(usize::from(i < lanes)))
            .collect(),
    );
    let wd = {
        let sems = Arc::clone(&sems);
        arm_with(
            format!("many_semaphores threads={threads} lanes={lanes}"),
            move || {
                // Only the semaphores that hold a token or a waiter are of interest.
                sems.iter()
                    .enumerate()
                    .filter(|(_, s)| s.available_permits() > 0 || s.parked_threads() > 0)
                    .map(|(i, s)| format!("\n  [{i}] {}", describe(s)))
                    .collect()
            },
        )
    };
    thread::scope(|s| {
        let handles =
            (0..threads)
                .map(|t| {
                    let w = wd.worker(format!("t{t}"));
                    let sems = &sems;
                    s.spawn(move || {
                    let next = (t + 1) % threads;
                    for _ in 0..rounds {
                        for lane in 0..lanes {
                            let mine = &sems[t * lanes + lane];
                            w.op("acquire lane token");
                            mine.acquire().expect("never closed in this scenario").forget();
                            // The lane has one token and this thread holds it, so no permit
                            // can be left behind.
                            let extra = mine.available_permits();
                            assert_eq!(
                                extra, 0,
                                "over-issue: lane {lane} of thread {t} still has {extra} permits \
                                 while its only token is held"
                            );
                            w.op("pass token on");
                            sems[next * lanes + lane].add_permits(1);
                        }
                    }
                })
                })
                .collect();
        join_all(handles);
    });

    // Every take happened (a lost one would have stalled the join above).
    let taken = threads * lanes * rounds;
    for (i, sem) in sems.iter().enumerate() {
        let expected = usize::from(i < lanes);
        assert_eq!(
            sem.available_permits(),
            expected,
            "token miscounted at semaphore {i}: {}",
            describe(sem)
        );
        assert!(
            format!("{sem:?}").contains("waiters: false"),
            "WAITERS left set with nobody parked at semaphore {i}: {}",
            describe(sem)
        );
    }
    format!(
        "{} semaphores, threads={threads} lanes={lanes} rounds={rounds}: {taken} takes",
        sems.len()
    )
}

/// `close` while `waiters` threads are parked: every one returns the closed error, none
/// hangs, and the closed semaphore still counts returned permits but never hands them out.
pub(crate) fn close_while_parked(build: Build, waiters: usize) -> String {
    let sem = Arc::new(build.semaphore(0));
    let wd = arm("close_while_parked", &sem);
    let main = wd.worker("main");

    thread::scope(|s| {
        let handles = (0..waiters)
            .map(|t| {
                let w = wd.worker(format!("waiter{t}"));
                let sem = &sem;
                s.spawn(move || {
                    w.op("acquire (parks)");
                    let result = sem.acquire().map(|p| p.forget());
                    let err: AcquireError =
                        result.expect_err("a parked acquire succeeded after close");
                    assert_eq!(err.to_string(), "semaphore closed");
                    w.op("refused");
                })
            })
            .collect();
        wait_until(&main, "waiting for all to park", waiters, || {
            sem.parked_threads()
        });
        main.op("close");
        sem.close();
        main.op("join");
        join_all(handles);
    });

    // Every waiter's acquire failed (each asserts its own), or the join above panicked.
    assert!(sem.is_closed());
    assert_eq!(sem.try_acquire().unwrap_err(), TryAcquireError::Closed);
    sem.add_permits(2);
    assert_eq!(
        sem.available_permits(),
        2,
        "a closed semaphore still counts permits"
    );
    assert!(
        sem.acquire().is_err(),
        "a closed semaphore handed out a permit"
    );
    format!("waiters={waiters}: all {waiters} refused after close")
}

/// `close` in the middle of traffic: threads take and return permits until their acquire
/// fails; once `warmup` acquisitions have happened the main thread closes. Every thread must
/// end with the closed error, and every held permit must come back.
pub(crate) fn close_during_traffic(
    build: Build,
    permits: usize,
    threads: usize,
    warmup: usize,
) -> String {
    let sem = Arc::new(build.semaphore(permits));
    let wd = arm(
        format!("close_during_traffic permits={permits} threads={threads}"),
        &sem,
    );
    let main = wd.worker("main");
    let holders = Holders::new(permits);
    let acquisitions = AtomicUsize::new(0);
    // Set once `close` has returned: an acquire that starts after that must fail. This also
    // bounds the loop, which would otherwise run forever (with progress, so no stall) if a
    // flaw let acquires succeed after the close.
    let closed = AtomicBool::new(false);

    thread::scope(|s| {
        let handles = (0..threads)
            .map(|t| {
                let w = wd.worker(format!("t{t}"));
                let (sem, holders, acquisitions, closed) = (&sem, &holders, &acquisitions, &closed);
                s.spawn(move || {
                    loop {
                        w.op("acquire");
                        let after_close = closed.load(Ordering::SeqCst);
                        let Ok(p) = sem.acquire() else { break };
                        assert!(
                            !after_close,
                            "close lost: an acquire that started after close returned got a \
                             permit ({})",
                            describe(sem)
                        );
                        holders.enter();
                        acquisitions.fetch_add(1, Ordering::SeqCst);
                        holders.leave();
                        w.op("release");
                        drop(p);
                    }
                    w.op("saw close");
                })
            })
            .collect();
        wait_until(&main, "waiting for traffic", warmup, || {
            acquisitions.load(Ordering::SeqCst)
        });
        main.op("close");
        sem.close();
        closed.store(true, Ordering::SeqCst);
        main.op("join");
        join_all(handles);
    });

    let left = sem.available_permits();
    assert_eq!(
        left,
        permits,
        "permits not returned after close: {}",
        describe(&sem)
    );
    assert!(
        sem.acquire().is_err(),
        "a closed semaphore handed out a permit"
    );
    format!(
        "permits={permits} threads={threads}: closed after {} acquisitions, all threads refused, \
         permits left {left}",
        acquisitions.load(Ordering::SeqCst)
    )
}

/// A holder that panics returns its permit while unwinding, and the thread parked behind it
/// is woken.
pub(crate) fn holder_panics(build: Build) -> String {
    let sem = Arc::new(build.semaphore(1));
    let wd = arm("holder_panics", &sem);
    let main = wd.worker("main");
    let (holding_tx, holding_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();

    thread::scope(|s| {
        let hw = wd.worker("holder");
        let sem_ref = &sem;
        let holder = s.spawn(move || {
            let sem = sem_ref;
            hw.op("acquire");
            let _permit = sem.acquire().expect("never closed in this scenario");
            holding_tx.send(()).expect("main is waiting");
            hw.op("holding, waiting for go");
            go_rx.recv().expect("main sends go");
            hw.op("panicking");
            panic!("deliberate panic while holding a permit");
        });
        main.op("waiting for the holder");
        holding_rx.recv().expect("the holder reports");
        let ww = wd.worker("waiter");
        let waiter = s.spawn(move || {
            let sem = sem_ref;
            ww.op("acquire (parks)");
            let p = sem.acquire().expect("never closed in this scenario");
            ww.op("acquired");
            drop(p);
        });
        wait_until(&main, "waiting for the waiter to park", 1, || {
            sem.parked_threads()
        });
        main.op("go");
        go_tx.send(()).expect("the holder waits for go");
        main.op("join");
        let payload = holder.join().expect_err("the holder panics");
        let msg = crate::shared::panic_text(&*payload);
        assert_eq!(msg, "deliberate panic while holding a permit");
        waiter
            .join()
            .expect("the waiter gets the permit the panicking holder returned");
    });

    assert_eq!(
        sem.available_permits(),
        1,
        "the panicking holder's permit was lost: {}",
        describe(&sem)
    );
    "holder panicked, its permit came back and woke the waiter".to_string()
}

/// Weighted traffic: each thread takes random requests of 1 to `permits` permits by every
/// acquire there is (blocking, non-blocking, timed with a short timeout), splits some of
/// them and returns the parts one by one, and merges a second non-blocking take into some.
/// The permits held never exceed `permits` (checked at every take), a timed-out or refused
/// call takes nothing, and every permit is back at the end.
pub(crate) fn weighted_traffic(
    build: Build,
    permits: usize,
    threads: usize,
    per_thread: usize,
) -> String {
    let sem = Arc::new(build.semaphore(permits));
    let wd = arm(
        format!("weighted_traffic permits={permits} threads={threads}"),
        &sem,
    );
    let holders = crate::shared::WeightedHolders::new(permits);
    let timed_out = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    thread::scope(|s| {
        let handles = (0..threads)
            .map(|t| {
                let w = wd.worker(format!("t{t}"));
                let (sem, holders, timed_out, stop) = (&sem, &holders, &timed_out, &stop);
                s.spawn(move || {
                    let mut rng = Rng::new(t as u64 + 1);
                    for _ in 0..per_thread {
                        if stop.load(Ordering::Relaxed) {
                            return;
                        }
                        let n = 1 + rng.below(permits as u64) as usize;
                        w.op("acquire");
                        let permit = match rng.below(3) {
                            0 => Some(sem.acquire_many(n).expect("never closed")),
                            1 => match sem.try_acquire_many(n) {
                                Ok(p) => Some(p),
                                Err(TryAcquireError::NoPermits) => None,
                                Err(e) => panic!("try_acquire_many({n}) failed with {e:?}"),
                            },
                            _ => match sem.try_acquire_many_for(n, Duration::from_micros(200)) {
                                Ok(p) => Some(p),
                                Err(TryAcquireError::TimedOut) => {
                                    timed_out.fetch_add(1, Ordering::Relaxed);
                                    None
                                }
                                Err(e) => panic!("try_acquire_many_for({n}) failed with {e:?}"),
                            },
                        };
                        let Some(mut permit) = permit else { continue };
                        w.op("holding");
                        if let Err(e) = std::panic::catch_unwind(|| holders.enter(n)) {
                            stop.store(true, Ordering::Relaxed);
                            std::panic::resume_unwind(e);
                        }
                        let mut held = n;
                        if rng.below(2) == 0
                            && let Ok(more) = sem.try_acquire()
                        {
                            if let Err(e) = std::panic::catch_unwind(|| holders.enter(1)) {
                                stop.store(true, Ordering::Relaxed);
                                std::panic::resume_unwind(e);
                            }
                            permit.merge(more);
                            held += 1;
                        }
                        assert_eq!(permit.num_permits(), held, "merge miscounted");
                        w.op("release");
                        // Return the permits one part at a time.
                        while held > 1 {
                            let part = permit.split(1).expect("at least two permits held");
                            holders.leave(1);
                            drop(part);
                            held -= 1;
                        }
                        holders.leave(1);
                        drop(permit);
                    }
                })
            })
            .collect();
        join_all(handles);
    });
    assert_eq!(
        sem.available_permits(),
        permits,
        "permits not restored: {}",
        describe(&sem)
    );
    assert!(
        format!("{sem:?}").contains("waiters: false"),
        "WAITERS left set with nobody parked: {}",
        describe(&sem)
    );
    format!(
        "permits={permits} threads={threads}: {} timed out, all permits back",
        timed_out.load(Ordering::Relaxed)
    )
}

/// A large request parked at the head with a small one behind it, `rounds` times: one
/// permit released must wake the small one (the parking order is set up first, so every
/// round tests it), then two more wake the large one.
pub(crate) fn small_behind_large(build: Build, rounds: usize) -> String {
    for round in 0..rounds {
        let sem = Arc::new(build.semaphore(0));
        let wd = arm(format!("small_behind_large round={round}"), &sem);
        let main = wd.worker("main");
        thread::scope(|s| {
            let big = s.spawn(|| sem.acquire_many(2).expect("never closed").forget());
            wait_until(&main, "large request parking", 1, || sem.parked_threads());
            let small = s.spawn(|| sem.acquire().expect("never closed").forget());
            wait_until(&main, "small request parking", 2, || sem.parked_threads());
            main.op("release one (for the small request)");
            sem.add_permits(1);
            join_all(vec![small]);
            main.op("release two (for the large request)");
            sem.add_permits(2);
            join_all(vec![big]);
        });
        assert_eq!(sem.available_permits(), 0, "{}", describe(&sem));
    }
    format!("{rounds} rounds: the small request behind the large one was woken each time")
}

/// A timed waiter's deadline passing just as a release arrives, `rounds` times: a timed
/// waiter parks with a 10 ms deadline, an untimed one behind it; the main thread waits until
/// a moment near the deadline and releases one permit. The moment moves from round to round,
/// from 150 us before the deadline to 50 us after it: after it, the release usually comes
/// before the kernel's timer has woken the timed waiter (Linux lets a timeout fire up to
/// 50 us late); before it, the woken waiter usually runs only after the deadline on a busy
/// machine. Either way the release chooses a waiter whose deadline has passed by the time it
/// runs, which must take the permit or pass the wake-up on: the untimed waiter always ends
/// with the permit.
pub(crate) fn timeout_at_release(build: Build, rounds: usize) -> String {
    let mut chosen_late = 0;
    for round in 0..rounds {
        let sem = Arc::new(build.semaphore(0));
        let wd = arm(format!("timeout_at_release round={round}"), &sem);
        let main = wd.worker("main");
        // 10 ms: time for the second waiter to park behind the first on a busy machine in a
        // debug build (with 2 ms the first one often timed out before the second had parked,
        // and the release never met it).
        let deadline = Instant::now() + Duration::from_millis(10);
        thread::scope(|s| {
            let timed = s.spawn(|| match sem.try_acquire_until(deadline) {
                Ok(p) => {
                    drop(p);
                    true
                }
                Err(TryAcquireError::TimedOut) => false,
                Err(e) => panic!("a timed acquire on an open semaphore failed with {e:?}"),
            });
            // The timed waiter may time out before it is seen parked.
            wait_until(&main, "timed waiter parking", 1, || {
                usize::from(sem.parked_threads() >= 1 || timed.is_finished())
            });
            let untimed = s.spawn(|| sem.acquire().expect("never closed").forget());
            // The timed waiter may time out before the untimed one parks (then the release
            // goes to the untimed one directly).
            wait_until(&main, "untimed waiter parking", 1, || {
                usize::from(sem.parked_threads() == 2 || timed.is_finished())
            });
            // 150 us before the deadline to 50 us after it, in steps of 50 us.
            let offset = Duration::from_micros(50 * (round % 5) as u64);
            let release_at = deadline - Duration::from_micros(150) + offset;
            while Instant::now() < release_at {
                std::hint::spin_loop();
            }
            main.op("release near the deadline");
            sem.add_permits(1);
            main.op("join");
            if join_all(vec![timed])[0] {
                chosen_late += 1;
            }
            join_all(vec![untimed]);
        });
        assert_eq!(sem.available_permits(), 0, "{}", describe(&sem));
    }
    format!("{rounds} rounds: the timed waiter took the permit in {chosen_late}")
}
