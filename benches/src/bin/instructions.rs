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
//! semaphore in those fairness modes (the others use the default, `Eventual`).

use std::hint::black_box;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use parksema_bench::floors;

fn main() {
    let mut args = std::env::args().skip(1);
    let op = args.next().unwrap_or_default();
    let n: u64 = args
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| usage());
    let one = parksema::Semaphore::new(1);
    let fifo = parksema::Semaphore::with_fairness(1, parksema::Fairness::Fifo);
    let barging = parksema::Semaphore::with_fairness(1, parksema::Fairness::Barging);
    let four = parksema::Semaphore::new(4);
    let word = AtomicUsize::new(8);
    match op.as_str() {
        "pair" => (0..n).for_each(|_| drop(black_box(&one).acquire().expect("never closed"))),
        "try_fail" => {
            let _held = one.acquire().expect("never closed");
            (0..n).for_each(|_| assert!(black_box(&one).try_acquire().is_err()));
        }
        "many4" => {
            (0..n).for_each(|_| drop(black_box(&four).acquire_many(4).expect("never closed")))
        }
        "timed" => (0..n).for_each(|_| {
            drop(
                black_box(&one)
                    .try_acquire_for(Duration::from_secs(1))
                    .expect("free"),
            )
        }),
        "fifo_pair" => (0..n).for_each(|_| drop(black_box(&fifo).acquire().expect("never closed"))),
        "fifo_try_fail" => {
            let _held = fifo.acquire().expect("never closed");
            (0..n).for_each(|_| assert!(black_box(&fifo).try_acquire().is_err()));
        }
        "barging_pair" => {
            (0..n).for_each(|_| drop(black_box(&barging).acquire().expect("never closed")))
        }
        "floor_pair" => (0..n).for_each(|_| floors::pair(black_box(&word))),
        "floor_checked" => (0..n).for_each(|_| floors::checked_pair(black_box(&word))),
        _ => usage(),
    }
}

fn usage() -> ! {
    eprintln!(
        "usage: instructions OP N, OP one of pair, try_fail, many4, timed, fifo_pair, \
         fifo_try_fail, barging_pair, floor_pair, floor_checked"
    );
    std::process::exit(2)
}
