//! dashmap's own `RawRwLock`, every published version on `parking_lot_core` (generated from
//! the registry's source, on parkcheck's park table), under loom or shuttle: `cargo test -p
//! parkcheck-dashmap --features loom --test models` (or `shuttle`). Each model runs once per
//! distinct text of `lock.rs` (the versions sharing one are named in its output), at
//! preemption bound 2 under loom and with 1 000 random plus 1 000 PCT (depth 3) schedules
//! under shuttle.
//!
//! What a reader-writer lock promises, as dashmap's shards rely on it: a writer excludes
//! every other holder, readers share, a downgraded writer keeps out writers and lets the
//! readers waiting in, and nobody parked is left parked once the lock is free (every model
//! ends with each thread done: a lost wake-up is the checker's deadlock report). A plain cell
//! (`DataCell`) stands for a shard's map: loom reports any access the lock does not order.
//!
//! Each model is shown to catch a flaw: a copy of the latest stable version whose last
//! reader does not wake the parked writer (deadlock, both checkers), and under loom every
//! atomic made `Relaxed` (loom's race report on the cell).

#![cfg(any(feature = "loom", feature = "shuttle"))]

use parkcheck_dashmap::{parkcheck, Lock, Source, FLAWED_READER_WAKES_NOBODY, VERSIONS};

use parkcheck::sync::thread;
use std::sync::Arc;

/// Loom's preemption bound for every model. Bound 2: 3 828, 22 122 and 8 123 executions,
/// about 2 s a text; bound 3 (where parking_lot's own models run): 41 786, 220 989 and
/// 109 245, 25 s a text, which CI's 2 cores cannot spare for two texts. Both bounds catch
/// both flaws.
const BOUND: usize = 2;

/// Random and PCT schedules per model under shuttle.
const SCHEDULES: usize = 1000;

/// A model: what it is called, and its body for one version.
type Model = (&'static str, fn(&'static Source));

/// A new lock of `source`, used once on this thread before it is shared (the shimmed atomic
/// is created at its first use, which loom requires to be ordered before the others').
fn new_lock(source: &Source) -> Arc<dyn Lock> {
    let lock: Arc<dyn Lock> = Arc::from((source.new)());
    assert!(lock.try_write(&mut |_| {}), "a new lock is free");
    lock
}

/// Two writers and a reader at once: each writer adds one under the write lock, the reader
/// reads under the read lock and sees 0, 1 or 2, and at the end the cell holds 2 (with
/// `Relaxed` atomics loom reports the unordered accesses).
fn writers_exclude_everyone(source: &'static Source) {
    let lock = new_lock(source);
    let mut threads: Vec<_> = (0..2)
        .map(|_| {
            let lock = Arc::clone(&lock);
            thread::spawn(move || lock.write(&mut |cell| cell.bump()))
        })
        .collect();
    let reader = Arc::clone(&lock);
    threads.push(thread::spawn(move || {
        reader.read(&mut |cell| assert!(cell.get() <= 2, "a reader saw a torn count"))
    }));
    for t in threads {
        t.join().unwrap();
    }
    lock.read(&mut |cell| assert_eq!(cell.get(), 2, "a write was lost"));
}

/// Two readers hold the lock together while a writer waits: each reader reads the cell
/// twice and sees the same value (no writer in between), and the writer gets in once they
/// are gone (the last reader out wakes it).
fn readers_share_and_the_writer_follows(source: &'static Source) {
    let lock = new_lock(source);
    let mut threads: Vec<_> = (0..2)
        .map(|_| {
            let lock = Arc::clone(&lock);
            thread::spawn(move || {
                lock.read(&mut |cell| {
                    let first = cell.get();
                    thread::yield_now();
                    assert_eq!(cell.get(), first, "a writer entered beside a reader");
                })
            })
        })
        .collect();
    let writer = Arc::clone(&lock);
    threads.push(thread::spawn(move || writer.write(&mut |cell| cell.bump())));
    for t in threads {
        t.join().unwrap();
    }
    lock.read(&mut |cell| assert_eq!(cell.get(), 1, "the writer did not write once"));
}

/// A writer writes and downgrades while a reader and another writer wait: after the
/// downgrade it still sees its own write (no writer got in), the reader sees 0, 1 or 2, and
/// everyone finishes.
fn downgrade_keeps_writers_out(source: &'static Source) {
    let lock = new_lock(source);
    let downgrading = {
        let lock = Arc::clone(&lock);
        thread::spawn(move || {
            let mine = std::cell::Cell::new(0);
            lock.write_then_downgrade(
                &mut |cell| {
                    cell.bump();
                    mine.set(cell.get());
                },
                &mut |cell| {
                    assert_eq!(cell.get(), mine.get(), "a writer entered after a downgrade")
                },
            );
        })
    };
    let reader = {
        let lock = Arc::clone(&lock);
        thread::spawn(move || lock.read(&mut |cell| assert!(cell.get() <= 2)))
    };
    let writer = {
        let lock = Arc::clone(&lock);
        thread::spawn(move || lock.write(&mut |cell| cell.bump()))
    };
    for t in [downgrading, reader, writer] {
        t.join().unwrap();
    }
    lock.read(&mut |cell| assert_eq!(cell.get(), 2, "a write was lost"));
}

const MODELS: [Model; 3] = [
    ("writers_exclude_everyone", writers_exclude_everyone),
    (
        "readers_share_and_the_writer_follows",
        readers_share_and_the_writer_follows,
    ),
    ("downgrade_keeps_writers_out", downgrade_keeps_writers_out),
];

/// Runs `model` on `source` under this build's checker, printing its size and time.
fn check(name: &str, source: &'static Source, model: fn(&'static Source)) {
    let start = std::time::Instant::now();
    let runs = parkcheck_shim::check(Some(BOUND), SCHEDULES, move || model(source));
    let unit = if cfg!(feature = "loom") {
        format!("executions (bound {BOUND})")
    } else {
        "schedules (random + PCT)".to_string()
    };
    println!(
        "dashmap {:?} {name}: {runs} {unit}, {:.2} s",
        source.versions,
        start.elapsed().as_secs_f64()
    );
}

#[test]
fn every_version_keeps_the_lock_s_promises() {
    for source in VERSIONS {
        for (name, model) in MODELS {
            check(name, source, model);
        }
    }
}

/// The copy whose last reader wakes nobody leaves the writer parked: a deadlock in the models
/// where a writer waits for readers.
#[test]
fn a_lost_wake_up_is_caught() {
    for (name, model) in &MODELS[..2] {
        let caught = parkcheck_shim::failure(|| check(name, &FLAWED_READER_WAKES_NOBODY, *model));
        assert!(
            caught.as_deref().is_some_and(|m| m.contains("deadlock")),
            "{name}: the lost wake-up was not caught: {caught:?}"
        );
    }
}

/// Relaxed atomics are caught by every model (loom's race report on the cell).
#[cfg(feature = "loom")]
#[test]
fn relaxed_atomics_are_caught() {
    let latest = VERSIONS.last().expect("versions are listed");
    for (name, model) in MODELS {
        let caught = parkcheck_shim::failure(|| {
            parkcheck_dashmap::with_relaxed_orderings(|| check(name, latest, model))
        });
        assert!(
            caught
                .as_deref()
                .is_some_and(|m| m.contains("Causality violation")),
            "{name}: relaxed atomics were not caught: {caught:?}"
        );
    }
}
