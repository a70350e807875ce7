//! Exclusion and ordering: no more holders than permits, and what a holder wrote is seen
//! by the next (also across a panic that unwinds a guard, and a permit moved to another
//! thread).

use super::*;

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
