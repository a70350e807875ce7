//! What a call costs in the park table, seen through the real backend's test counters
//! (`sync::real::counted`): properties that no functional test observes, because a
//! spurious unpark only costs time.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::thread;

use super::*;
use crate::sync::counted::{Counts, counts, reset};

/// These tests run first in `cargo test` and so meet most mutants first; a mutant that
/// leaves a thread parked (or never parks it) must fail fast. They take milliseconds, so
/// 3 s without finishing is a hang (`WATCHDOG_STALL_SECS` widens it on a slow machine).
fn hang_guard(test: &str) -> watchdog::Watchdog {
    watchdog::Watchdog::arm(
        format!("semaphore::tests::{test}"),
        watchdog::stall_limit(std::time::Duration::from_secs(3)),
    )
}

fn wait_until(what: impl Fn() -> bool) {
    while !what() {
        thread::yield_now();
    }
}

#[test]
fn nobody_waiting_means_no_park_table_call() {
    let _guard = hang_guard("nobody_waiting_means_no_park_table_call");
    for fairness in [Fairness::Eventual, Fairness::Fifo, Fairness::Barging] {
        let sem = Semaphore::with_fairness(0, fairness);
        reset(sem.key());
        sem.add_permits(2);
        sem.try_add_permits(1).unwrap();
        drop(sem.acquire().unwrap());
        drop(sem.try_acquire().unwrap());
        sem.acquire_many(2).unwrap().release_fair();
        let open = counts(sem.key());
        // A refused add leaves the fast path, and with nobody waiting it must not call the
        // table either.
        sem.try_add_permits(Semaphore::MAX_PERMITS).unwrap_err();
        sem.close();
        sem.close();
        assert_eq!(sem.available_permits(), 3);
        let c = counts(sem.key());
        assert_eq!((c.unpark_calls, c.woken), (0, 0), "{sem:?}: {c:?}");
        // Only `FIFO` sends an open semaphore's requests to the guarded loop.
        assert_eq!(
            open.guarded != 0,
            fairness == Fairness::Fifo,
            "{sem:?}: {open:?}"
        );
        // With nobody waiting every release stays on the fast path.
        assert_eq!(open.slow_releases, 0, "{sem:?}: {open:?}");
    }
}

/// `release_fair` hands its permits to the parked request they satisfy in every mode: the
/// waiter's park returns with the handoff token, however the threads are scheduled (a
/// functional test can only race a barger against the woken thread).
#[test]
fn release_fair_hands_over_in_every_mode() {
    let _guard = hang_guard("release_fair_hands_over_in_every_mode");
    for fairness in [Fairness::Eventual, Fairness::Fifo, Fairness::Barging] {
        let sem = Semaphore::with_fairness(2, fairness);
        reset(sem.key());
        let held = sem.acquire_many(2).unwrap();
        thread::scope(|s| {
            let waiter = s.spawn(|| sem.acquire_many(2).unwrap().num_permits());
            wait_until(|| sem.parked_threads() == 1);
            held.release_fair();
            assert_eq!(waiter.join().unwrap(), 2);
        });
        let c = counts(sem.key());
        assert_eq!((c.woken, c.handed_over), (1, 1), "{fairness:?}");
        assert_eq!(sem.available_permits(), 2, "{fairness:?}");
    }
}

#[test]
fn a_release_of_n_permits_wakes_at_most_n_threads() {
    let _guard = hang_guard("a_release_of_n_permits_wakes_at_most_n_threads");
    let sem = Semaphore::new(0);
    reset(sem.key());
    let taken = AtomicUsize::new(0);
    let woken_by_one_permit = thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                sem.acquire().unwrap().forget();
                taken.fetch_add(1, SeqCst);
            });
        }
        wait_until(|| sem.parked_threads() == 3);
        sem.add_permits(1);
        // Once the permit is taken and everyone else is parked again, a thread woken
        // in vain would have been counted.
        wait_until(|| taken.load(SeqCst) == 1 && sem.parked_threads() == 2);
        let woken = counts(sem.key()).woken;
        // Release the others before asserting: a failed assertion inside the scope
        // would wait for them forever and show up as a stall, not as this failure.
        sem.add_permits(2);
        woken
    });
    assert_eq!(woken_by_one_permit, 1, "one permit, one wake-up");
    assert_eq!(counts(sem.key()).woken, 3);
    assert_eq!(sem.available_permits(), 0);
}

#[test]
fn close_wakes_every_parked_thread_once() {
    let _guard = hang_guard("close_wakes_every_parked_thread_once");
    let sem = Semaphore::new(0);
    reset(sem.key());
    thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| assert!(sem.acquire().is_err()));
        }
        wait_until(|| sem.parked_threads() == 3);
        sem.close();
    });
    assert_eq!(counts(sem.key()).woken, 3);
    assert_eq!(
        sem.state.load(Ordering::Relaxed),
        CLOSED,
        "WAITERS cleared, no permit"
    );
}

/// The state table's parking rule, row by row: a thread requesting `n` permits may park
/// only while `WAITERS` is set, the semaphore is open, and fewer than `n` permits are
/// free (for one permit: the state exactly `WAITERS`). Parking in a state that has the
/// bit *and* enough permits (or `CLOSED`) is rescued by the release (or close) that is
/// about to unpark, so no scenario can see it; this test can.
#[test]
fn a_thread_may_park_only_while_waiters_is_set_open_and_its_request_does_not_fit() {
    for permits in [0, 1, 2, 3, Semaphore::MAX_PERMITS] {
        for closed in [0, CLOSED] {
            for waiters in [0, WAITERS] {
                for n in [1, 2, 3, Semaphore::MAX_PERMITS] {
                    let s = (permits * ONE) | closed | waiters;
                    let expected = permits < n && closed == 0 && waiters == WAITERS;
                    assert_eq!(may_park(s, n), expected, "state {s:#x}, request {n}");
                }
            }
        }
    }
}

/// The parking and taking rules under `FIFO`, where `WAITERS` means a thread is queued:
/// while it is set a thread parks behind it even when its request fits, and no running
/// thread takes a free permit; while it is clear a request that fits never parks, and one
/// that does not parks and sets the bit; nothing parks on a closed semaphore.
#[test]
fn under_fifo_a_thread_parks_and_takes_nothing_while_waiters_is_set() {
    for permits in [0, 1, 2] {
        for n in [1, 2] {
            let fits = permits >= n;
            let s = (permits * ONE) | FIFO;
            assert_eq!(
                fifo_park_word(s | WAITERS, n),
                Some(s | WAITERS),
                "{s:#x} {n}"
            );
            let alone = (!fits).then_some(s | WAITERS);
            assert_eq!(fifo_park_word(s, n), alone, "{s:#x} {n}");
            assert_eq!(fifo_park_word(s | WAITERS | CLOSED, n), None, "{s:#x} {n}");
            assert_eq!(fifo_park_word(s | CLOSED, n), None, "{s:#x} {n}");
            assert_eq!(may_take(s, n), fits, "{s:#x} {n}");
            let fifo = Semaphore::with_fairness(permits, Fairness::Fifo);
            assert!(!fifo.announces_before_park(s), "{s:#x}: validate sets it");
            let other = Semaphore::with_fairness(permits, Fairness::Barging);
            assert!(other.announces_before_park(permits * ONE), "{permits}");
            assert!(!may_take(s | WAITERS, n), "{s:#x} {n}");
            assert_eq!(
                may_take((permits * ONE) | WAITERS, n),
                fits,
                "{permits} {n}"
            );
        }
    }
}

/// `validate` (`may_queue`) applies each mode's rule to the word as it is: without `FIFO`
/// a request that fits never parks, even with `WAITERS` set; under `FIFO` it parks behind
/// the queued threads, and one that does not fit with nobody queued sets `WAITERS`.
#[test]
fn validate_applies_each_modes_rule_to_the_word() {
    for fairness in [Fairness::Eventual, Fairness::Barging] {
        let sem = Semaphore::with_fairness(1, fairness);
        sem.state.store(ONE | WAITERS, Ordering::Relaxed);
        assert!(
            !sem.may_queue(1),
            "{fairness:?}: it fits, so it must not park"
        );
        assert!(sem.may_queue(2), "{fairness:?}: it does not fit");
        assert_eq!(sem.state.load(Ordering::Relaxed), ONE | WAITERS);
    }
    let fifo = Semaphore::with_fairness(1, Fairness::Fifo);
    assert!(!fifo.may_queue(1), "nobody queued and it fits");
    assert!(fifo.may_queue(2), "it does not fit: it queues");
    assert_eq!(
        fifo.state.load(Ordering::Relaxed),
        ONE | FIFO | WAITERS,
        "and sets WAITERS"
    );
    assert!(
        fifo.may_queue(1),
        "someone is queued: it fits, but queues behind"
    );
}

/// A handing-over release's filter, decision by decision: a request that its own
/// permits and the free ones satisfy is unparked; one that does not fit is passed over,
/// except under `FIFO` (the head holds up the rest) or when nothing is left; nothing is
/// handed over on a closed semaphore.
#[test]
fn a_handing_over_release_serves_what_fits_and_stops_where_it_must() {
    use FilterOp::{Skip, Stop, Unpark};
    for (s, own, want, op) in [
        (0, 1, 1, Unpark),
        (ONE, 1, 2, Unpark),
        (2 * ONE, 0, 2, Unpark),
        (ONE, 0, 2, Skip),
        (ONE | FIFO, 0, 2, Stop),
        (FIFO, 1, 2, Stop),
        (0, 0, 1, Stop),
        (ONE | CLOSED, 1, 1, Stop),
        ((3 * ONE) | WAITERS, 0, 3, Unpark),
        (
            Semaphore::MAX_PERMITS * ONE,
            Semaphore::MAX_PERMITS,
            Semaphore::MAX_PERMITS,
            Unpark,
        ),
    ] {
        assert_eq!(
            handoff_op(s, own, want),
            op,
            "word {s:#x}, own {own}, want {want}"
        );
    }
}

/// The fairness timer: not started counts as due; a deadline is due at or after its
/// time; one that looks more than the window ahead has wrapped, so it is due; each turn
/// steps the generator and draws a deadline at most the window ahead; the mode is kept.
#[test]
fn the_fairness_timer_is_due_at_its_deadline_and_draws_within_the_window() {
    let at = |deadline: u64, seed: u64| deadline << DEADLINE_SHIFT | seed << SEED_SHIFT;
    assert!(timer_due(0, 12345), "a timer not started is due");
    assert!(timer_due(at(100, 7), 100));
    assert!(timer_due(at(100, 7), 101));
    assert!(!timer_due(at(100, 7), 99));
    assert!(
        !timer_due(at(1100, 7), 100),
        "a deadline the whole window ahead"
    );
    assert!(
        timer_due(at(1101, 7), 100),
        "further than the window: wrapped, so due"
    );
    assert!(!timer_due(at(5, 7), DEADLINE_MASK), "ahead across the wrap");
    assert!(timer_due(at(DEADLINE_MASK, 7), 3), "passed across the wrap");
    // Started is told by the generator's state alone, whatever the other bits hold.
    let soon = DEADLINE_MASK + 1 - 500;
    assert!(
        timer_due(mode_code(Fairness::Barging), soon),
        "not started, mode bits set"
    );
    assert!(
        !timer_due(1 << SEED_SHIFT, soon),
        "started, deadline 0, 500 µs ahead"
    );

    let mode = mode_code(Fairness::Barging);
    let first = next_timer(mode, 500);
    assert_eq!(first & MODE_MASK, mode);
    assert_eq!(
        first >> SEED_SHIFT,
        u64::from(INITIAL_SEED),
        "the first turn seeds it"
    );
    let draw = |t: u64, now: u64| ((t >> DEADLINE_SHIFT) & DEADLINE_MASK) - now;
    assert_eq!(
        draw(first, 500),
        u64::from(INITIAL_SEED) % (FAIR_WINDOW_US + 1)
    );
    let mut t = first;
    let mut draws = Vec::new();
    for _ in 0..100 {
        let next = next_timer(t, 1000);
        assert_eq!(
            next >> SEED_SHIFT,
            u64::from(xorshift32((t >> SEED_SHIFT) as u32))
        );
        let d = draw(next, 1000);
        assert!(d <= FAIR_WINDOW_US, "draw {d}");
        draws.push(d);
        t = next;
    }
    assert!(
        draws.iter().any(|&d| d < 300) && draws.iter().any(|&d| d > 700),
        "{draws:?}"
    );
    let wrapped = next_timer(first, DEADLINE_MASK);
    assert!(
        (wrapped >> DEADLINE_SHIFT) & DEADLINE_MASK < FAIR_WINDOW_US,
        "kept modulo 2^30"
    );
    // Known answers of Marsaglia's xorshift32 (13, 17, 5), computed independently.
    assert_eq!(xorshift32(1), 270_369);
    assert_eq!(xorshift32(INITIAL_SEED), 1_359_758_873);
    assert_eq!(xorshift32(1_359_758_873), 3_761_132_862);
}

/// Only an `Eventual` semaphore takes fairness turns; its first call starts the timer (no
/// turn), a turn is spent only when `spend_turn` is called (by a handoff that unparked
/// someone), and once the drawn deadline (at most 1 ms) has passed the turn is due.
#[test]
fn an_eventual_semaphore_takes_a_fairness_turn_once_its_deadline_has_passed() {
    for fairness in [Fairness::Barging, Fairness::Fifo] {
        let sem = Semaphore::with_fairness(0, fairness);
        assert_eq!(sem.turn_due(), None);
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert_eq!(sem.turn_due(), None, "{fairness:?}");
        assert_eq!(sem.timer.load(Ordering::Relaxed), mode_code(fairness));
    }
    let sem = Semaphore::new(0);
    assert_eq!(sem.turn_due(), None, "the first call only starts the timer");
    let started = sem.timer.load(Ordering::Relaxed);
    assert_eq!(started >> SEED_SHIFT, u64::from(INITIAL_SEED));
    std::thread::sleep(std::time::Duration::from_millis(2));
    let now = sem.turn_due().expect("the deadline has passed");
    assert!(sem.turn_due().is_some(), "a turn not spent stays due");
    assert_eq!(
        sem.timer.load(Ordering::Relaxed),
        started,
        "looking spends nothing"
    );
    sem.spend_turn(now);
    assert_ne!(
        sem.timer.load(Ordering::Relaxed),
        started,
        "the turn drew a new deadline"
    );
    // A started timer whose low 32 bits are all zero (deadline 0, mode `Eventual`): its
    // deadline passed long ago (unless the clock is within 1 ms of a wrap), so the turn
    // is due; started is told by the generator's bits alone.
    sem.timer.store(5 << SEED_SHIFT, Ordering::Relaxed);
    assert!(
        sem.turn_due().is_some(),
        "{:#x}",
        sem.timer.load(Ordering::Relaxed)
    );
}

/// The end of a handing-over release: the rest of its permits go into the count (or are
/// refused past `MAX_PERMITS`, count untouched), and `WAITERS` goes only when asked;
/// `FIFO` stays.
#[test]
fn a_deposit_adds_what_fits_and_clears_waiters_when_asked() {
    let sem = Semaphore::with_fairness(1, Fairness::Fifo);
    sem.state.fetch_add(WAITERS, Ordering::Relaxed);
    sem.deposit(2, false).unwrap();
    assert_eq!(
        sem.state.load(Ordering::Relaxed),
        (3 * ONE) | FIFO | WAITERS
    );
    sem.deposit(0, true).unwrap();
    assert_eq!(sem.state.load(Ordering::Relaxed), (3 * ONE) | FIFO);
    sem.state.fetch_add(WAITERS, Ordering::Relaxed);
    let err = sem.deposit(Semaphore::MAX_PERMITS - 2, true).unwrap_err();
    assert_eq!(
        (err.available(), err.added()),
        (3, Semaphore::MAX_PERMITS - 2)
    );
    assert_eq!(
        sem.state.load(Ordering::Relaxed),
        (3 * ONE) | FIFO,
        "refused, bit cleared"
    );
    sem.deposit(Semaphore::MAX_PERMITS - 3, false).unwrap();
    assert_eq!(sem.available_permits(), Semaphore::MAX_PERMITS);
}

/// A handing-over release wakes exactly the requests it serves, in one call, takes the
/// free permits it uses out of the count, and keeps the rest of its own in the count.
#[test]
fn a_handoff_wakes_the_requests_it_serves_and_counts_the_rest() {
    let _guard = hang_guard("a_handoff_wakes_the_requests_it_serves_and_counts_the_rest");
    let sem = Semaphore::new(1);
    reset(sem.key());
    let done = AtomicUsize::new(0);
    let (called, left) = thread::scope(|s| {
        // Queue order: 3, 2; one permit free.
        for (i, n) in [3, 2].into_iter().enumerate() {
            let (sem, done) = (&sem, &done);
            s.spawn(move || {
                sem.acquire_many(n).unwrap().forget();
                done.fetch_add(n, SeqCst);
            });
            wait_parked(sem, i + 1);
        }
        reset(sem.key());
        // Four of its own and the free one: the 3 is served from its own, the 2 from
        // the one own permit left and the free one (taken out of the count).
        sem.hand_over(4, None).unwrap();
        let left = sem.state.load(Ordering::Relaxed);
        (counts(sem.key()), left)
    });
    // Counted as the woken threads return from `park`, so read after the scope.
    let served = counts(sem.key());
    assert_eq!(served.woken, 2, "{served:?}");
    assert_eq!(called.unpark_calls, 1, "{called:?}");
    assert_eq!(served.unpark_calls, 1, "{served:?}");
    assert_eq!(left, 0, "every permit handed over, WAITERS cleared");
    assert_eq!(done.load(SeqCst), 5);
    let sem = Semaphore::new(0);
    sem.hand_over(2, None).unwrap();
    assert_eq!(
        sem.state.load(Ordering::Relaxed),
        2 * ONE,
        "nobody parked: all counted"
    );
}

/// The release's filter, decision by decision: in queue order, a request that fits what
/// is not yet promised is woken and promised its permits; one that does not fit is passed
/// over (a smaller one behind it may fit); nothing is left: stop.
#[test]
fn a_release_wakes_in_queue_order_every_request_that_fits_what_is_left() {
    let sem = Semaphore::new(0);
    let decide = |left: usize, queue: &[usize]| {
        let mut left = left;
        let ops: Vec<_> = queue
            .iter()
            .map(|&want| sem.wake_if_fits(&mut left, want))
            .collect();
        (ops, left)
    };
    use FilterOp::{Skip, Stop, Unpark};
    assert_eq!(decide(1, &[1, 1]), (vec![Unpark, Stop], 0));
    assert_eq!(decide(1, &[2, 1]), (vec![Skip, Unpark], 0));
    assert_eq!(decide(3, &[2, 2, 1]), (vec![Unpark, Skip, Unpark], 0));
    assert_eq!(decide(5, &[2, 2]), (vec![Unpark, Unpark], 1));
    assert_eq!(decide(0, &[1]), (vec![Stop], 0));
    let max = Semaphore::MAX_PERMITS;
    assert_eq!(decide(max, &[max, 1]), (vec![Unpark, Stop], 0));
}

/// Waits until `n` threads are parked on `sem` (the calling test's watchdog fails it if
/// they never are).
fn wait_parked(sem: &Semaphore, n: usize) {
    wait_until(|| sem.parked_threads() == n);
}

/// A thread woken for permits it does not find passes the wake-up on, and only when
/// permits are free and someone waits: the rule that keeps a timed-out or out-barged
/// waiter from stranding the one behind it.
#[test]
fn a_woken_thread_that_takes_nothing_passes_the_wake_up_on() {
    let _guard = hang_guard("a_woken_thread_that_takes_nothing_passes_the_wake_up_on");
    let sem = Semaphore::new(0);
    reset(sem.key());
    let idle = thread::scope(|s| {
        s.spawn(|| sem.acquire().unwrap().forget());
        wait_parked(&sem, 1);
        // `parked_threads` counts as an unpark call: start counting from here.
        reset(sem.key());
        // No permit free, or nobody announced: nothing to pass on.
        sem.pass_on(WAITERS);
        sem.pass_on(ONE);
        let idle = counts(sem.key());
        // A permit is free and the waiter's bit is set: the waiter is woken. (Asserting
        // only after the scope: a failure inside it would wait for the waiter forever.)
        sem.state.fetch_add(ONE, Ordering::Relaxed);
        sem.pass_on(sem.state.load(Ordering::Relaxed));
        idle
    });
    assert_eq!(
        idle,
        Counts::default(),
        "nothing to pass on, yet the table was called"
    );
    assert_eq!(counts(sem.key()).woken, 1);
    assert_eq!(sem.state.load(Ordering::Relaxed), 0, "{sem:?}");
}

/// A timed-out waiter hands free permits on only under `FIFO`, and only when threads are
/// still parked and permits are free (a head that leaves may have held them up).
#[test]
fn a_timed_out_fifo_head_hands_free_permits_to_the_next() {
    let _guard = hang_guard("a_timed_out_fifo_head_hands_free_permits_to_the_next");
    for (fairness, extra, calls) in [
        (Fairness::Eventual, WAITERS + ONE, 0),
        (Fairness::Barging, WAITERS + ONE, 0),
        (Fairness::Fifo, ONE, 0),
        (Fairness::Fifo, WAITERS, 0),
        (Fairness::Fifo, WAITERS + ONE, 1),
    ] {
        let sem = Semaphore::with_fairness(0, fairness);
        sem.state.fetch_add(extra, Ordering::Relaxed);
        reset(sem.key());
        sem.after_timeout();
        let c = counts(sem.key());
        assert_eq!(c.unpark_calls, calls, "{fairness:?}, {sem:?}");
    }
}

/// `timed_out` clears `WAITERS` only when the leaving thread was the last one parked.
#[test]
fn a_timed_out_thread_clears_waiters_only_when_it_was_the_last() {
    let sem = Semaphore::new(0);
    sem.state.fetch_add(WAITERS, Ordering::Relaxed);
    sem.leave_queue(false);
    assert_eq!(sem.state.load(Ordering::Relaxed), WAITERS);
    sem.leave_queue(true);
    assert_eq!(sem.state.load(Ordering::Relaxed), 0);
}

/// A release that finds a weighted queue wakes exactly the requests that fit, in one
/// call, and the thread counters see it.
#[test]
fn a_release_wakes_only_the_requests_it_can_satisfy() {
    let _guard = hang_guard("a_release_wakes_only_the_requests_it_can_satisfy");
    let sem = Semaphore::new(0);
    reset(sem.key());
    let done = AtomicUsize::new(0);
    let after_two = thread::scope(|s| {
        // Queue order: 3, 1, 1 (each waits until the one before it has parked).
        for (i, n) in [3, 1, 1].into_iter().enumerate() {
            let (sem, done) = (&sem, &done);
            s.spawn(move || {
                sem.acquire_many(n).unwrap().forget();
                done.fetch_add(n, SeqCst);
            });
            wait_parked(sem, i + 1);
        }
        // `parked_threads` counts as an unpark call: start counting from here.
        reset(sem.key());
        // Two permits: the head (3) does not fit and is passed over; both 1s wake.
        sem.add_permits(2);
        wait_until(|| done.load(SeqCst) == 2);
        let after_two = counts(sem.key());
        sem.add_permits(3);
        after_two
    });
    assert_eq!(after_two.woken, 2, "{after_two:?}");
    assert_eq!(after_two.unpark_calls, 1, "{after_two:?}");
    assert_eq!(
        counts(sem.key()).woken,
        3,
        "the head is woken once, by the second release"
    );
    assert_eq!(done.load(SeqCst), 5);
    assert_eq!(sem.state.load(Ordering::Relaxed), 0, "{sem:?}");
}

#[cfg(feature = "broken_sema")]
#[test]
fn only_the_relaxed_ordering_flaw_weakens_permit_orderings() {
    for flaw in [
        None,
        Some(Flaw::OverIssue),
        Some(Flaw::LostWaiters),
        Some(Flaw::StaleValidate),
        Some(Flaw::RelaxedWhenWaited),
        Some(Flaw::TimeoutLeak),
        Some(Flaw::WeightedLostWakeup),
        Some(Flaw::HandoffDoubleCount),
        Some(Flaw::FifoEarlyAnnounce),
    ] {
        let sem = Semaphore::with_flaw(1, flaw);
        assert_eq!(
            sem.permit_ordering(Ordering::Acquire),
            Ordering::Acquire,
            "{flaw:?}"
        );
        assert_eq!(
            sem.permit_ordering(Ordering::Release),
            Ordering::Release,
            "{flaw:?}"
        );
    }
    let sem = Semaphore::with_flaw(1, Some(Flaw::RelaxedOrdering));
    assert_eq!(sem.permit_ordering(Ordering::Acquire), Ordering::Relaxed);
    assert_eq!(sem.permit_ordering(Ordering::Release), Ordering::Relaxed);
}
