//! The fairness modes: `Fifo`'s order and no barging, `Eventual`'s timer handing over, and
//! handoffs from racing releases.

use super::*;

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

/// (z) `Eventual`'s timer under the mocked clock: the first release that finds a thread
/// parked only starts the timer (a deadline drawn from 0-1 ms; the first is 986 µs), and a
/// release before the deadline hands nothing over; once the clock has passed it, the next
/// release that wakes a parked thread hands it the permit, so a barger racing that release
/// cannot take it. Round one: a thread parks, the main thread adds a permit (the timer
/// starts; the thread takes the permit and forgets it). Round two, the clock still: the
/// same again, and under the checkers the park table must count no handoff. Round three:
/// another thread parks, the clock advances 1 ms, a barger tries while the main thread adds
/// a permit: the barger may succeed only after the parked thread was served. On a `Barging`
/// semaphore the barger may win: there the check must fail.
pub(crate) fn eventual_timer_hands_over(build: Build) {
    let sem = Arc::new(build.semaphore(0));
    let first = {
        let sem = Arc::clone(&sem);
        thread::spawn(move || sem.acquire().expect("never closed").forget())
    };
    wait_parked(&sem, 1);
    sem.add_permits(1);
    join(vec![first]);
    let early = {
        let sem = Arc::clone(&sem);
        thread::spawn(move || sem.acquire().expect("never closed").forget())
    };
    wait_parked(&sem, 1);
    sem.add_permits(1);
    join(vec![early]);
    // Only the checkers' clock stands still; on real threads the deadline may have passed.
    if let Some(stats) = park_stats(&sem) {
        assert_eq!(
            stats.handed, 0,
            "eventual: a release handed its permit over before the fairness deadline ({sem:?})"
        );
    }
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
