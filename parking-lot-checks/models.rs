// The models of parking_lot's own locks, shared by both versions' `tests/models.rs` (each
// names its generated crate `pl` and its parking_lot version `VERSION`). Each model is one
// function body run under loom (every interleaving within the preemption bound next to it)
// or shuttle (random and PCT schedules); each asserts, where the property is first
// observable, with a message that names it. A plain cell (`Cell`, loom's `UnsafeCell` under
// loom, which reports two unordered accesses) stands for the data a lock protects.

use std::time::Duration;

use parkcheck::sync::Arc;

use parkcheck::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};

use parkcheck::sync::thread;

use crate::pl;

/// A plain cell for the data a lock protects (`parkcheck-shim`).
pub(crate) use parkcheck_shim::DataCell as Cell;

/// Marks the first use of a lock by the thread that built it, before it is shared: the
/// shimmed atomics are created on first use (`shim.rs`), and loom requires that creation to
/// be ordered before every other thread's use (it reports a causality violation otherwise),
/// as a real atomic's initialization is ordered before the threads it is published to.
fn touch<T>(first_use: T) {
    let _ = first_use;
}

/// The park-table key of `x` (parking_lot parks on the lock's own address).
fn key<T>(x: &T) -> usize {
    std::ptr::from_ref(x).addr()
}

/// Waits (yielding to the checker) until `n` threads are parked on `key`.
fn wait_parked(key: usize, n: usize) {
    while parkcheck::parked(key) < n {
        thread::yield_now();
    }
}

/// Mutual exclusion and visibility: two threads and the main one each take the lock and add
/// one to the cell; nobody's update is lost, and loom sees no unordered access.
pub(crate) fn mutex_exclusion() {
    let shared = Arc::new((pl::Mutex::new(()), Cell::new()));
    touch(shared.0.is_locked());
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                let _held = shared.0.lock();
                shared.1.bump();
            })
        })
        .collect();
    {
        let _held = shared.0.lock();
        shared.1.bump();
    }
    for h in handles {
        h.join().unwrap();
    }
    let _held = shared.0.lock();
    assert_eq!(shared.1.get(), 3, "mutual exclusion: an update was lost");
}

/// `unlock_fair` (or, with `plain_unlock_is_fair`, a plain unlock: `FairMutex`) and `bump`
/// hand the lock to the parked thread: the unlocker cannot take it back before that thread
/// has run its critical section.
fn hands_over<R: lock_api::RawMutexFair + Send + Sync + 'static>(plain_unlock_is_fair: bool) {
    let shared = Arc::new((
        lock_api::Mutex::<R, ()>::new(()),
        AtomicBool::new(false),
        AtomicBool::new(false),
        Cell::new(),
    ));
    touch(shared.0.is_locked());
    let held = shared.0.lock();
    let waiter = {
        let shared = Arc::clone(&shared);
        thread::spawn(move || {
            for flag in [&shared.1, &shared.2] {
                let _held = shared.0.lock();
                // What the holder wrote before handing over (a handoff takes no atomic
                // step on the lock: only the park table orders the two).
                shared.3.bump();
                flag.store(true, SeqCst);
            }
        })
    };
    wait_parked(key(&shared.0), 1);
    shared.3.bump();
    if plain_unlock_is_fair {
        drop(held);
    } else {
        lock_api::MutexGuard::unlock_fair(held);
    }
    let mut held = match shared.0.try_lock() {
        Some(held) => {
            assert!(
                shared.1.load(SeqCst),
                "unlock_fair hands over: the unlocker took the lock back before the parked \
                 thread ran"
            );
            held
        }
        None => shared.0.lock(),
    };
    // The waiter's second turn: `bump` must hand it the lock if it is parked.
    if parkcheck::parked(key(&shared.0)) == 1 {
        lock_api::MutexGuard::bump(&mut held);
        assert!(
            shared.2.load(SeqCst),
            "bump hands over: it returned with the lock before the parked thread ran"
        );
    }
    drop(held);
    waiter.join().unwrap();
}

pub(crate) fn unlock_fair_hands_over() {
    hands_over::<pl::RawMutex>(false);
}

pub(crate) fn fair_mutex_hands_over() {
    hands_over::<pl::RawFairMutex>(true);
}

/// A timed lock that times out takes nothing: after it, the lock is free once its holder
/// lets go, and no thread is left parked on it.
pub(crate) fn try_lock_for_takes_nothing() {
    const WAIT: Duration = Duration::from_millis(10);
    let shared = Arc::new((pl::Mutex::new(()), Cell::new()));
    touch(shared.0.is_locked());
    let held = shared.0.lock();
    let timed = {
        let shared = Arc::clone(&shared);
        thread::spawn(move || {
            let got = shared.0.try_lock_for(WAIT);
            // Read only if the lock was taken: then it is ordered after the holder's write.
            got.map(|_held| shared.1.get())
        })
    };
    let clock = thread::spawn(|| parkcheck::advance_clock(WAIT));
    shared.1.bump();
    clock.join().unwrap();
    drop(held);
    let seen = timed.join().unwrap();
    assert!(
        seen.is_none_or(|v| v == 1),
        "try_lock_for that takes the lock sees the holder's write: it saw {seen:?}"
    );
    assert!(
        !shared.0.is_locked() && parkcheck::parked(key(&shared.0)) == 0,
        "a timed-out try_lock_for takes nothing: the lock is held or a thread is parked after it"
    );
    assert!(
        shared.0.try_lock().is_some(),
        "a timed-out try_lock_for takes nothing: the lock is taken"
    );
}

/// Writers exclude each other and readers: a writer and a reader beside the main thread's
/// write; loom sees no unordered access, and the reader sees 0 or a whole write.
pub(crate) fn rwlock_writer_exclusion() {
    let shared = Arc::new((pl::RwLock::new(()), Cell::new()));
    touch(shared.0.is_locked());
    let writer = {
        let shared = Arc::clone(&shared);
        thread::spawn(move || {
            let _held = shared.0.write();
            shared.1.bump();
        })
    };
    let reader = {
        let shared = Arc::clone(&shared);
        thread::spawn(move || {
            let seen = {
                let _held = shared.0.read();
                shared.1.get()
            };
            assert!(seen <= 2, "writer exclusion: a reader saw {seen}");
        })
    };
    {
        let _held = shared.0.write();
        shared.1.bump();
    }
    writer.join().unwrap();
    reader.join().unwrap();
    let _held = shared.0.read();
    assert_eq!(shared.1.get(), 2, "writer exclusion: a write was lost");
}

/// An upgradable read excludes other upgradable reads and writers: two threads each take
/// it, one upgrades and writes, the other downgrades to a plain read and reads; at most one
/// holds it at a time.
pub(crate) fn rwlock_upgradable_exclusive() {
    let shared = Arc::new((pl::RwLock::new(()), Cell::new(), AtomicUsize::new(0)));
    touch(shared.0.is_locked());
    let handles: Vec<_> = (0..2)
        .map(|i| {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                let held = shared.0.upgradable_read();
                let holders = shared.2.fetch_add(1, SeqCst) + 1;
                assert_eq!(holders, 1, "upgradable exclusivity: two holders at once");
                shared.2.fetch_sub(1, SeqCst);
                if i == 0 {
                    let _held = lock_api::RwLockUpgradableReadGuard::upgrade(held);
                    shared.1.bump();
                } else {
                    let _held = lock_api::RwLockUpgradableReadGuard::downgrade(held);
                    let _ = shared.1.get();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

/// No notify is lost across `notify_all`'s requeue: two waiters wait for a flag under the
/// mutex; the main thread sets it and notifies all while it holds the mutex (so the waiters
/// are requeued onto the mutex, not woken); both return and see what the main thread wrote
/// under the mutex.
pub(crate) fn condvar_notify_all_requeue() {
    let shared = Arc::new((pl::Mutex::new(false), pl::Condvar::new(), Cell::new()));
    touch((shared.0.is_locked(), shared.1.notify_one()));
    let waiters: Vec<_> = (0..2)
        .map(|_| {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                let mut ready = shared.0.lock();
                while !*ready {
                    shared.1.wait(&mut ready);
                }
                assert_eq!(
                    shared.2.get(),
                    1,
                    "a woken waiter sees the notifier's write"
                );
            })
        })
        .collect();
    {
        let mut ready = shared.0.lock();
        shared.2.bump();
        *ready = true;
        shared.1.notify_all();
    }
    for w in waiters {
        w.join().unwrap();
    }
}

/// No notify is lost by `notify_one`: the waiter is inside `wait` (it said so under the
/// mutex, which the notifier then takes) when the notifier sets the flag and notifies; the
/// waiter returns and sees the notifier's write.
pub(crate) fn condvar_notify_one() {
    let shared = Arc::new((
        pl::Mutex::new(false),
        pl::Condvar::new(),
        Cell::new(),
        AtomicBool::new(false),
    ));
    touch((shared.0.is_locked(), shared.1.notify_one()));
    let waiter = {
        let shared = Arc::clone(&shared);
        thread::spawn(move || {
            let mut ready = shared.0.lock();
            shared.3.store(true, SeqCst);
            while !*ready {
                shared.1.wait(&mut ready);
            }
            assert_eq!(
                shared.2.get(),
                1,
                "a woken waiter sees the notifier's write"
            );
        })
    };
    while !shared.3.load(SeqCst) {
        thread::yield_now();
    }
    {
        let mut ready = shared.0.lock();
        shared.2.bump();
        *ready = true;
    }
    shared.1.notify_one();
    waiter.join().unwrap();
}

/// `call_once` runs its closure exactly once, and every caller returns after it, seeing what
/// it wrote.
pub(crate) fn once_runs_once() {
    let shared = Arc::new((pl::Once::new(), Cell::new()));
    touch(shared.0.state().done());
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                shared.0.call_once(|| shared.1.bump());
                assert_eq!(
                    shared.1.get(),
                    1,
                    "call_once runs once, before every return"
                );
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

/// A timed read that times out takes nothing: a writer holds the lock, a reader tries for
/// 10 ms, a thread moves the clock past it; if the reader got the lock it sees the writer's
/// write; afterwards the lock is free and nobody is parked on it.
pub(crate) fn rwlock_timed_read_takes_nothing() {
    const WAIT: Duration = Duration::from_millis(10);
    let shared = Arc::new((pl::RwLock::new(()), Cell::new()));
    touch(shared.0.is_locked());
    let held = shared.0.write();
    let reader = {
        let shared = Arc::clone(&shared);
        thread::spawn(move || shared.0.try_read_for(WAIT).map(|_held| shared.1.get()))
    };
    let clock = thread::spawn(|| parkcheck::advance_clock(WAIT));
    shared.1.bump();
    drop(held);
    clock.join().unwrap();
    let seen = reader.join().unwrap();
    assert!(
        seen.is_none_or(|v| v == 1),
        "a try_read_for that takes the lock sees the writer's write: it saw {seen:?}"
    );
    assert!(
        !shared.0.is_locked() && parkcheck::parked(key(&shared.0)) == 0,
        "a timed-out try_read_for takes nothing: the lock is held or a thread is parked"
    );
    assert!(
        shared.0.try_write().is_some(),
        "a timed-out try_read_for takes nothing: the lock is taken"
    );
}

/// A recursive read is granted while a writer waits, where the thread already reads (a
/// plain read would queue behind the writer, which waits for this thread's read: a
/// deadlock); the writer then gets the lock once both reads end. `read` is the recursive read
/// of the version under test (0.12: `read_recursive`; 0.13: `read` on `RawRwLockRecursive`);
/// the catch runs it with a plain read.
pub(crate) fn recursive_read_passes_a_waiting_writer<R>(
    read: for<'a> fn(&'a lock_api::RwLock<R, ()>) -> lock_api::RwLockReadGuard<'a, R, ()>,
) where
    R: lock_api::RawRwLock + Send + Sync + 'static,
{
    let shared = Arc::new((lock_api::RwLock::<R, ()>::new(()), Cell::new()));
    touch(shared.0.is_locked());
    let first = read(&shared.0);
    let writer = {
        let shared = Arc::clone(&shared);
        thread::spawn(move || {
            let _held = shared.0.write();
            shared.1.bump();
        })
    };
    // A writer that has set its bit waits for the readers to leave on the lock's second
    // key, its address + 1 (parking_lot's `wait_for_readers`).
    wait_parked(key(&shared.0) + 1, 1);
    let second = read(&shared.0);
    assert_eq!(shared.1.get(), 0, "no write while this thread reads");
    drop(second);
    drop(first);
    writer.join().unwrap();
    let _held = shared.0.write();
    assert_eq!(
        shared.1.get(),
        1,
        "the waiting writer wrote once the reads ended"
    );
}

/// `wait_for` returns with the mutex held, after a timeout as after a notify: a waiter waits
/// for a flag with a 10 ms limit while a thread moves the clock past it and the main thread
/// sets the flag and notifies; the waiter then writes under the mutex.
pub(crate) fn condvar_wait_for_returns_with_the_lock() {
    const WAIT: Duration = Duration::from_millis(10);
    let shared = Arc::new((pl::Mutex::new(false), pl::Condvar::new(), Cell::new()));
    touch((shared.0.is_locked(), shared.1.notify_one()));
    let waiter = {
        let shared = Arc::clone(&shared);
        thread::spawn(move || {
            let mut ready = shared.0.lock();
            while !*ready {
                if shared.1.wait_for(&mut ready, WAIT).timed_out() {
                    break;
                }
            }
            shared.2.bump();
        })
    };
    let clock = thread::spawn(|| parkcheck::advance_clock(WAIT));
    {
        let mut ready = shared.0.lock();
        shared.2.bump();
        *ready = true;
    }
    shared.1.notify_one();
    clock.join().unwrap();
    waiter.join().unwrap();
    let _held = shared.0.lock();
    assert_eq!(
        shared.2.get(),
        2,
        "wait_for returns with the lock: a write was lost"
    );
}
