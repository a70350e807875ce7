//! Runs one uncontended operation of parksema `N` times, for `valgrind --tool=callgrind`:
//! `instructions OP N`. Instruction counts do not depend on what else the machine runs, so
//! two runs with different `N` give the instructions of one operation exactly:
//! `(I(2N) - I(N)) / N` (start-up and exit cancel out). `benches/instructions.sh` does that
//! for every operation and prints the table.
//!
//! Operations: `pair` (acquire + drop), `try_fail` (a failing `try_acquire`), `many4`
//! (`acquire_many(4)` + drop), `timed` (`try_acquire_for` that succeeds at once, + drop), and
//! the floors `floor_pair` (load + CAS, fetch_add) and `floor_checked` (load + CAS, load +
//! CAS); `fifo_pair`, `fifo_try_fail` and `barging_pair` are `pair` and `try_fail` on a
//! semaphore in those fairness modes (the others use the default, `Eventual`); `timed_out`
//! (`try_acquire_for(0)` on a semaphore with no permit: the contended path, which gives up at
//! once) is what the contention profile adds to every contended acquire, when the binary is
//! built with `--features profile`.

use std::hint::black_box;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use parksema::Semaphore;
use parksema_bench::floors;

fn main() {
    let mut args = std::env::args().skip(1);
    let op = args.next().unwrap_or_default();
    let n: u64 = args
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| usage());
    let eventual = parksema::Semaphore::new(1);
    let fifo = parksema::Semaphore::with_fairness(1, parksema::Fairness::Fifo);
    let barging = parksema::Semaphore::with_fairness(1, parksema::Fairness::Barging);
    let four = parksema::Semaphore::new(4);
    let word = AtomicUsize::new(8);
    // Each operation's loop is a function of its own, so its count does not depend on
    // how the compiler lays out the other operations' loops.
    match op.as_str() {
        "pair" => pair(&eventual, n),
        "try_fail" => try_fail(&eventual, n),
        "many4" => many4(&four, n),
        "timed" => timed(&eventual, n),
        "timed_out" => timed_out(&eventual, n),
        "fifo_pair" => pair(&fifo, n),
        "fifo_try_fail" => try_fail(&fifo, n),
        "barging_pair" => pair(&barging, n),
        "floor_pair" => (0..n).for_each(|_| floors::pair(black_box(&word))),
        "floor_checked" => (0..n).for_each(|_| floors::checked_pair(black_box(&word))),
        _ => usage(),
    }
}

#[inline(never)]
fn pair(sem: &Semaphore, n: u64) {
    (0..n).for_each(|_| drop(black_box(sem).acquire().expect("never closed")));
}

#[inline(never)]
fn try_fail(sem: &Semaphore, n: u64) {
    let _held = sem.acquire().expect("never closed");
    (0..n).for_each(|_| assert!(black_box(sem).try_acquire().is_err()));
}

#[inline(never)]
fn many4(sem: &Semaphore, n: u64) {
    (0..n).for_each(|_| drop(black_box(sem).acquire_many(4).expect("never closed")));
}

#[inline(never)]
fn timed(sem: &Semaphore, n: u64) {
    (0..n).for_each(|_| {
        drop(
            black_box(sem)
                .try_acquire_for(Duration::from_secs(1))
                .expect("free"),
        )
    });
}

#[inline(never)]
fn timed_out(sem: &Semaphore, n: u64) {
    let _held = sem.acquire().expect("never closed");
    (0..n).for_each(|_| assert!(black_box(sem).try_acquire_for(Duration::ZERO).is_err()));
}

fn usage() -> ! {
    eprintln!(
        "usage: instructions OP N, OP one of pair, try_fail, many4, timed, timed_out, \
         fifo_pair, fifo_try_fail, barging_pair, floor_pair, floor_checked"
    );
    std::process::exit(2)
}
