//! Criterion micro-benchmarks, one thread, no contention: an acquire + release pair, and a
//! `try_acquire` that fails, for parksema, every peer, and the atomic floors; plus parksema's
//! `acquire_many(4)` pair and a timed acquire that succeeds at once. parksema runs in each
//! fairness mode (`parksema` is the default, `Eventual`).
//!
//! `cargo xtask bench` runs this and turns the medians into the report's ratio table.

use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use criterion::Criterion;
use parksema_bench::floors;
use parksema_bench::peers::{
    AsyncLock, CondvarSem, Parksema, ParksemaBarging, ParksemaFifo, Peer, PlMutex, PosixSem,
    RsEvents, StdMutex,
};

fn pair<P: Peer>(c: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    let p = P::with_permits(1);
    c.bench_function(P::NAME, |b| b.iter(|| black_box(&p).hold(|| ())));
}

fn failing_try<P: Peer>(c: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    // The only permit is held by this thread while the loop runs, so every try fails.
    let p = P::with_permits(1);
    p.hold(|| c.bench_function(P::NAME, |b| b.iter(|| assert!(!black_box(&p).try_hold()))));
}

fn uncontended(c: &mut Criterion) {
    let mut g = c.benchmark_group("acquire+release");
    pair::<Parksema>(&mut g);
    pair::<ParksemaFifo>(&mut g);
    pair::<ParksemaBarging>(&mut g);
    pair::<PosixSem>(&mut g);
    pair::<CondvarSem>(&mut g);
    pair::<RsEvents>(&mut g);
    pair::<AsyncLock>(&mut g);
    pair::<PlMutex>(&mut g);
    pair::<StdMutex>(&mut g);
    let word = AtomicUsize::new(8);
    // The floor of a pair: the compare-exchange that takes a permit and the fetch_add that
    // returns it, uncontended.
    g.bench_function("floor: CAS + fetch_add", |b| {
        b.iter(|| floors::pair(black_box(&word)))
    });
    g.bench_function("floor: CAS", |b| {
        b.iter(|| {
            let w = black_box(&word);
            let s = w.load(Ordering::Relaxed);
            black_box(w.compare_exchange(s, s, Ordering::Acquire, Ordering::Relaxed))
        })
    });
    g.bench_function("floor: fetch_add", |b| {
        b.iter(|| black_box(black_box(&word).fetch_add(0, Ordering::Release)))
    });
    // The checked floor (see `floors::checked_pair`).
    g.bench_function("floor: checked (load+CAS, load+CAS)", |b| {
        b.iter(|| floors::checked_pair(black_box(&word)))
    });
    // parksema's other fast paths, against the same peers and floors.
    let four = parksema::Semaphore::new(4);
    g.bench_function("parksema acquire_many(4)", |b| {
        b.iter(|| drop(black_box(&four).acquire_many(4).expect("never closed")))
    });
    let timed = parksema::Semaphore::new(1);
    g.bench_function("parksema try_acquire_for (free)", |b| {
        b.iter(|| {
            drop(
                black_box(&timed)
                    .try_acquire_for(Duration::from_secs(1))
                    .expect("the permit is free"),
            )
        })
    });
    g.finish();

    let mut g = c.benchmark_group("failing try_acquire");
    failing_try::<Parksema>(&mut g);
    failing_try::<ParksemaFifo>(&mut g);
    failing_try::<ParksemaBarging>(&mut g);
    failing_try::<PosixSem>(&mut g);
    failing_try::<CondvarSem>(&mut g);
    failing_try::<RsEvents>(&mut g);
    failing_try::<AsyncLock>(&mut g);
    failing_try::<PlMutex>(&mut g);
    failing_try::<StdMutex>(&mut g);
    // A failing try needs no more than one load that sees no permit.
    g.bench_function("floor: load", |b| {
        b.iter(|| black_box(black_box(&word).load(Ordering::Acquire)))
    });
    g.finish();
}

fn main() {
    // What `criterion_main!` expands to, written out: the macro's generated function has
    // no doc comment, which the workspace's `missing_docs` lint refuses.
    let mut c = Criterion::default().configure_from_args();
    uncontended(&mut c);
    c.final_summary();
}
