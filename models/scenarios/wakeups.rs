//! Wake-ups: every parked thread is woken when permits come back, also when several releases
//! race, when two semaphores share a bucket, and when weighted requests queue behind each other.

use super::*;

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
