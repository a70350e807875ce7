//! `close`: it wakes every waiter, publishes what came before it, and no permit is handed out
//! after it.

use super::*;

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
