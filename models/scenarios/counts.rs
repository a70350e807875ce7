//! The count: adds refused near the maximum, and `split`, `merge` and `forget_permits`
//! racing acquires.

use super::*;

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
