//! The model's own tests, run under whichever checker is enabled (`cargo test -p parkcheck
//! --lib --features loom` or `--features shuttle`): what the conformance suite cannot see
//! from outside (the counters, the settings, the contract checks, the clock).

use super::*;
use crate::sync::Arc;
use crate::sync::atomic::{AtomicUsize, Ordering};
use parking_lot_core::{DEFAULT_PARK_TOKEN, DEFAULT_UNPARK_TOKEN};

/// Runs `f` under the checker. Loom's preemption bound is 2: the largest of these tests
/// (three parked threads plus the main thread polling the table) explores every schedule
/// with up to 2 preemptions in about a second in the test profile; unbounded it did not
/// finish in 60 s.
fn check(f: impl Fn() + Send + Sync + 'static) {
    #[cfg(feature = "loom")]
    {
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound.get_or_insert(2);
        builder.check(f);
    }
    #[cfg(all(feature = "shuttle", not(feature = "loom")))]
    shuttle::check_random(f, 200);
}

fn queued(key: usize) -> usize {
    parked(key)
}

/// Waits (yielding to the checker) until `n` threads are parked on `key`.
fn wait_queued(key: usize, n: usize) {
    while queued(key) < n {
        thread::yield_now();
    }
}

#[test]
fn validate_false_gives_invalid_without_queueing() {
    check(|| {
        // SAFETY: key 1 is used by this test only; the callbacks do not call into the
        // table or unwind.
        let r = unsafe { park(1, || false, || {}, |_, _| {}, DEFAULT_PARK_TOKEN, None) };
        assert_eq!(r, ParkResult::Invalid);
        assert_eq!(queued(1), 0);
    });
}

#[test]
fn unpark_without_waiter_still_runs_the_callback() {
    check(|| {
        let ran = std::cell::Cell::new(false);
        // SAFETY: as above.
        let r = unsafe {
            unpark_one(7, |r| {
                assert!(!r.have_more_threads && r.unparked_threads == 0);
                ran.set(true);
                DEFAULT_UNPARK_TOKEN
            })
        };
        assert!(ran.get(), "the callback must run even with no waiter");
        assert_eq!((r.unparked_threads, r.have_more_threads), (0, false));
        // SAFETY: as above.
        let r = unsafe { unpark_filter(7, |_| FilterOp::Unpark, |_| DEFAULT_UNPARK_TOKEN) };
        assert_eq!((r.unparked_threads, r.have_more_threads), (0, false));
        // SAFETY: as above.
        assert_eq!(unsafe { unpark_all(7, DEFAULT_UNPARK_TOKEN) }, 0);
    });
}

/// Parks one thread per key in `keys`; each returns its place in the queue (taken under
/// the table lock, in `validate`) and its park result.
fn park_all(keys: &[usize]) -> Vec<thread::JoinHandle<(usize, ParkResult)>> {
    let order = Arc::new(AtomicUsize::new(0));
    keys.iter()
        .map(|&key| {
            let order = Arc::clone(&order);
            thread::spawn(move || {
                let place = std::cell::Cell::new(0);
                let validate = || {
                    place.set(order.fetch_add(1, Ordering::Relaxed));
                    true
                };
                // SAFETY: the tests' keys are their own; the callbacks only touch an
                // atomic and a local.
                let r = unsafe { park(key, validate, || {}, |_, _| {}, DEFAULT_PARK_TOKEN, None) };
                (place.get(), r)
            })
        })
        .collect()
}

/// The report of threads left parked names each with its key, its park token and the line
/// of its `park` call; a woken thread leaves it.
#[test]
fn the_parked_report_names_key_token_and_call_site() {
    check(|| {
        let line = line!() + 3;
        let parked = thread::spawn(|| {
            // SAFETY: key 21 is this test's; the callbacks do nothing.
            unsafe { park(21, || true, || {}, |_, _| {}, ParkToken(5), None) }
        });
        let report = loop {
            match report_parked() {
                Some(report) => break report,
                None => thread::yield_now(),
            }
        };
        let site = format!("parkcheck/src/model/tests.rs:{line}:");
        assert!(
            report.contains("on key 0x15 with ParkToken(5), parked at ") && report.contains(&site),
            "{report}"
        );
        // SAFETY: the callback returns a constant.
        unsafe { unpark_one(21, |_| DEFAULT_UNPARK_TOKEN) };
        assert!(parked.join().unwrap().is_unparked());
        assert_eq!(
            report_parked(),
            None,
            "a woken thread is no longer reported"
        );
    });
}

/// A deadlock prints the report of the threads left parked (the checker's panic hook).
#[test]
fn a_deadlock_prints_the_threads_left_parked() {
    let stuck = std::panic::catch_unwind(|| {
        check(|| {
            // SAFETY: key 22 is this test's; the callbacks do nothing. Nobody unparks it.
            unsafe { park(22, || true, || {}, |_, _| {}, ParkToken(9), None) };
        })
    });
    assert!(
        stuck.is_err(),
        "a park nobody ends is the checker's deadlock"
    );
    let report = take_last_report().expect("the hook printed the report");
    assert!(report.contains("on key 0x16 with ParkToken(9)"), "{report}");
}

#[test]
fn fifo_per_key() {
    check(|| {
        let waiters = park_all(&[1, 1]);
        wait_queued(1, 2);
        // SAFETY: the callbacks return constants.
        let first = unsafe { unpark_one(1, |_| UnparkToken(100)) };
        assert_eq!((first.unparked_threads, first.have_more_threads), (1, true));
        // SAFETY: as above.
        let second = unsafe { unpark_one(1, |_| UnparkToken(200)) };
        assert_eq!(
            (second.unparked_threads, second.have_more_threads),
            (1, false)
        );
        let mut results: Vec<_> = waiters.into_iter().map(|h| h.join().unwrap()).collect();
        results.sort_by_key(|&(place, _)| place);
        let in_park_order: Vec<_> = results.into_iter().map(|(_, r)| r).collect();
        assert_eq!(
            in_park_order,
            [
                ParkResult::Unparked(UnparkToken(100)),
                ParkResult::Unparked(UnparkToken(200))
            ],
            "waiters on one key are unparked in the order they parked"
        );
    });
}

#[test]
fn have_more_threads_counts_the_same_key_only() {
    check(|| {
        // Keys 1 and 2 share the one bucket; a waiter on key 2 must not count for key 1.
        let waiters = park_all(&[2, 1]);
        wait_queued(1, 1);
        wait_queued(2, 1);
        // SAFETY: the callback returns a constant.
        let r = unsafe { unpark_one(1, |_| DEFAULT_UNPARK_TOKEN) };
        assert_eq!((r.unparked_threads, r.have_more_threads), (1, false));
        // SAFETY: as above.
        let r = unsafe { unpark_filter(2, |_| FilterOp::Unpark, |_| DEFAULT_UNPARK_TOKEN) };
        assert_eq!((r.unparked_threads, r.have_more_threads), (1, false));
        for h in waiters {
            assert!(h.join().unwrap().1.is_unparked());
        }
    });
}

#[test]
fn filter_sees_waiters_in_order_and_stop_keeps_the_rest() {
    check(|| {
        let waiters: Vec<_> = (0..2)
            .map(|i| {
                thread::spawn(move || {
                    // SAFETY: key 3 is this test's; the callbacks return constants.
                    unsafe { park(3, || true, || {}, |_, _| {}, ParkToken(i), None) }
                })
            })
            .collect();
        wait_queued(3, 2);
        let mut seen = Vec::new();
        // SAFETY: the filter only records tokens; the callback returns a constant.
        let r = unsafe {
            unpark_filter(
                3,
                |t| {
                    seen.push(t.0);
                    if seen.len() == 1 {
                        FilterOp::Unpark
                    } else {
                        FilterOp::Stop
                    }
                },
                |_| DEFAULT_UNPARK_TOKEN,
            )
        };
        assert_eq!((r.unparked_threads, r.have_more_threads), (1, true));
        assert_eq!(seen.len(), 2);
        assert_eq!(queued(3), 1);
        // SAFETY: as above.
        assert_eq!(unsafe { unpark_all(3, DEFAULT_UNPARK_TOKEN) }, 1);
        for h in waiters {
            assert!(h.join().unwrap().is_unparked());
        }
    });
}

#[test]
fn timeout_removes_the_thread_and_reports_whether_it_was_last() {
    check(|| {
        // A timed waiter and an untimed one on key 4; the clock passes the deadline.
        let deadline = now() + Duration::from_secs(1);
        let timed = thread::spawn(move || {
            let last = Arc::new(std::sync::Mutex::new(None));
            let seen = Arc::clone(&last);
            // SAFETY: key 4 is this test's; `timed_out` only records its arguments.
            let r = unsafe {
                park(
                    4,
                    || true,
                    || {},
                    move |key, was_last| *seen.lock().unwrap() = Some((key, was_last)),
                    DEFAULT_PARK_TOKEN,
                    Some(deadline),
                )
            };
            let recorded = *last.lock().unwrap();
            (r, recorded)
        });
        let untimed = thread::spawn(|| {
            // SAFETY: as above.
            unsafe { park(4, || true, || {}, |_, _| {}, DEFAULT_PARK_TOKEN, None) }
        });
        wait_queued(4, 2);
        advance_clock(Duration::from_secs(2));
        let (r, recorded) = timed.join().unwrap();
        assert_eq!(r, ParkResult::TimedOut);
        assert_eq!(
            recorded,
            Some((4, false)),
            "another thread with key 4 remains"
        );
        assert_eq!(queued(4), 1);
        // SAFETY: the callback returns a constant.
        unsafe { unpark_one(4, |_| DEFAULT_UNPARK_TOKEN) };
        assert!(untimed.join().unwrap().is_unparked());
    });
}

#[test]
fn last_waiter_to_time_out_reports_was_last() {
    check(|| {
        let deadline = now() + Duration::from_millis(10);
        let was_last = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let seen = Arc::clone(&was_last);
        let timed = thread::spawn(move || {
            // SAFETY: key 5 is this test's; `timed_out` stores one flag.
            unsafe {
                park(
                    5,
                    || true,
                    || {},
                    move |_, last| seen.store(last, std::sync::atomic::Ordering::Relaxed),
                    DEFAULT_PARK_TOKEN,
                    Some(deadline),
                )
            }
        });
        // The clock may move before or after the thread parks: either way it times out,
        // because nothing unparks it.
        advance_clock(Duration::from_millis(10));
        assert_eq!(timed.join().unwrap(), ParkResult::TimedOut);
        assert!(was_last.load(std::sync::atomic::Ordering::Relaxed));
        assert_eq!(queued(5), 0);
    });
}

#[test]
fn a_timeout_racing_an_unpark_ends_one_way_only() {
    check(|| {
        let deadline = now() + Duration::from_secs(1);
        let timed = thread::spawn(move || {
            // SAFETY: key 6 is this test's; the callbacks do nothing.
            unsafe {
                park(
                    6,
                    || true,
                    || {},
                    |_, _| {},
                    DEFAULT_PARK_TOKEN,
                    Some(deadline),
                )
            }
        });
        wait_queued(6, 1);
        let clock = thread::spawn(|| advance_clock(Duration::from_secs(1)));
        // SAFETY: the callback returns a constant.
        let unparked = unsafe { unpark_one(6, |_| UnparkToken(9)) };
        clock.join().unwrap();
        let r = timed.join().unwrap();
        match r {
            ParkResult::Unparked(UnparkToken(9)) => assert_eq!(unparked.unparked_threads, 1),
            ParkResult::TimedOut => assert_eq!(unparked.unparked_threads, 0),
            other => panic!("unexpected park result {other:?}"),
        }
    });
}

#[test]
fn a_woken_thread_sees_what_its_waker_did_before_unparking() {
    check(|| {
        let data = Arc::new(TrackedCell::new(0u32));
        let seen = Arc::clone(&data);
        let waiter = thread::spawn(move || {
            // SAFETY: key 11 is this test's; the callbacks return constants.
            let r = unsafe { park(11, || true, || {}, |_, _| {}, DEFAULT_PARK_TOKEN, None) };
            assert!(r.is_unparked());
            // SAFETY: the waker wrote before unparking this thread: the one edge the real
            // crate's futex gives, which loom checks here.
            seen.with(|v| unsafe { *v })
        });
        wait_queued(11, 1);
        // SAFETY: the waiter reads only once it is unparked below.
        data.with_mut(|v| unsafe { *v = 3 });
        // SAFETY: the callback returns a constant.
        unsafe { unpark_one(11, |_| DEFAULT_UNPARK_TOKEN) };
        assert_eq!(waiter.join().unwrap(), 3);
    });
}

#[test]
fn stats_count_per_key() {
    check(|| {
        let waiters = park_all(&[12, 12, 13]);
        wait_queued(12, 2);
        wait_queued(13, 1);
        // SAFETY: the callbacks return constants.
        unsafe { unpark_filter(12, |_| FilterOp::Unpark, |_| DEFAULT_UNPARK_TOKEN) };
        // SAFETY: as above.
        unsafe { unpark_one(13, |_| DEFAULT_UNPARK_TOKEN) };
        // SAFETY: as above.
        unsafe { unpark_one(13, |_| DEFAULT_UNPARK_TOKEN) };
        for h in waiters {
            assert!(h.join().unwrap().1.is_unparked());
        }
        let twelve = KeyStats {
            parks: 2,
            unpark_calls: 1,
            woken: 2,
            most_woken_by_one_call: 2,
            ..KeyStats::default()
        };
        let thirteen = KeyStats {
            parks: 1,
            unpark_calls: 2,
            woken: 1,
            most_woken_by_one_call: 1,
            ..KeyStats::default()
        };
        assert_eq!((stats(12), stats(13)), (twelve, thirteen));
        assert_eq!(stats(14), KeyStats::default());
    });
}

/// `handed` counts the threads unparked with a token other than the default one, in the
/// key's counts and the unparker's own, whichever call unparked them.
#[test]
fn stats_count_the_threads_handed_a_token() {
    check(|| {
        let waiters = park_all(&[18, 18, 19]);
        wait_queued(18, 2);
        wait_queued(19, 1);
        // SAFETY: the callbacks return constants; the default token hands nothing.
        unsafe { unpark_one(18, |_| DEFAULT_UNPARK_TOKEN) };
        // SAFETY: as above.
        unsafe { unpark_filter(18, |_| FilterOp::Unpark, |_| UnparkToken(7)) };
        // SAFETY: as above; the one thread parked on 19 is woken with a token.
        unsafe {
            unpark_requeue(
                19,
                20,
                || RequeueOp::UnparkOneRequeueRest,
                |_, _| UnparkToken(2),
            )
        };
        for h in waiters {
            assert!(h.join().unwrap().1.is_unparked());
        }
        assert_eq!((stats(18).handed, stats(19).handed), (1, 1));
        assert_eq!(
            (thread_stats(18).handed, thread_stats(19).handed),
            (1, 1),
            "the unparker's own counts"
        );
        assert_eq!(stats(18).woken, 2, "every wake-up still counts as one");
    });
}

/// `thread_stats` counts the calling thread's own calls only, per key: the parker's park on
/// its side, the unparker's calls and the threads they woke or requeued on the other.
#[test]
fn thread_stats_count_the_callers_own_calls() {
    check(|| {
        let waiter = thread::spawn(|| {
            // SAFETY: key 15 is this test's; the callbacks do nothing.
            let r = unsafe { park(15, || true, || {}, |_, _| {}, DEFAULT_PARK_TOKEN, None) };
            (r, thread_stats(15))
        });
        let requeued = park_all(&[16]);
        wait_queued(15, 1);
        wait_queued(16, 1);
        assert_eq!(
            thread_stats(15),
            KeyStats::default(),
            "nothing of its own yet"
        );
        // SAFETY: the callbacks return constants.
        unsafe { unpark_filter(15, |_| FilterOp::Unpark, |_| DEFAULT_UNPARK_TOKEN) };
        // SAFETY: as above.
        unsafe { unpark_one(15, |_| DEFAULT_UNPARK_TOKEN) };
        // SAFETY: as above; 16's waiter moves to 17 and is woken there.
        unsafe {
            unpark_requeue(
                16,
                17,
                || RequeueOp::RequeueAll,
                |_, _| DEFAULT_UNPARK_TOKEN,
            )
        };
        // SAFETY: as above.
        unsafe { unpark_one(17, |_| DEFAULT_UNPARK_TOKEN) };
        let (r, theirs) = waiter.join().unwrap();
        assert!(r.is_unparked());
        assert_eq!(
            theirs,
            KeyStats {
                parks: 1,
                ..KeyStats::default()
            },
            "the parker counts its park only"
        );
        for h in requeued {
            assert!(h.join().unwrap().1.is_unparked());
        }
        let mine = KeyStats {
            unpark_calls: 2,
            woken: 1,
            most_woken_by_one_call: 1,
            ..KeyStats::default()
        };
        let requeue = KeyStats {
            unpark_calls: 1,
            requeued: 1,
            ..KeyStats::default()
        };
        let woke_on_17 = KeyStats {
            unpark_calls: 1,
            woken: 1,
            most_woken_by_one_call: 1,
            ..KeyStats::default()
        };
        assert_eq!(
            (thread_stats(15), thread_stats(16), thread_stats(17)),
            (mine, requeue, woke_on_17)
        );
    });
}

#[test]
fn spin_wait_spins_a_bounded_number_of_times() {
    check(|| {
        for spins in [0, 1, 3] {
            let settings = Settings {
                spins,
                ..Settings::default()
            };
            SETTINGS.with(|s| s.set(settings));
            let mut spin = SpinWait::new();
            for _ in 0..spins {
                assert!(spin.spin());
            }
            assert!(!spin.spin(), "more than {spins} spins");
            spin.reset();
            assert_eq!(spin.spin(), spins > 0, "reset starts the count again");
        }
        SETTINGS.with(|s| s.set(Settings::default()));
    });
}

#[test]
#[should_panic(
    expected = "park-table contract violated: `unpark_one` was called from the `validate` callback"
)]
fn reentering_from_a_callback_fails_the_run() {
    check(|| {
        // SAFETY: deliberately broken: `validate` calls into the table, which the mock
        // must catch before anything is locked twice.
        unsafe {
            park(
                8,
                || {
                    unpark_one(9, |_| DEFAULT_UNPARK_TOKEN);
                    false
                },
                || {},
                |_, _| {},
                DEFAULT_PARK_TOKEN,
                None,
            )
        };
    });
}

#[test]
#[should_panic(expected = "park-table contract violated: the `callback` callback panicked (boom)")]
fn a_panicking_callback_fails_the_run() {
    check(|| {
        // SAFETY: deliberately broken: the callback unwinds.
        unsafe { unpark_one(10, |_| panic!("boom")) };
    });
}

/// A cell loom tracks (a read not ordered after the write is reported); a plain cell under
/// shuttle, which does not track memory.
#[cfg(feature = "loom")]
type TrackedCell<T> = loom::cell::UnsafeCell<T>;

#[cfg(not(feature = "loom"))]
struct TrackedCell<T>(std::cell::UnsafeCell<T>);

// SAFETY: the one test that uses it orders its accesses by a park and an unpark.
#[cfg(not(feature = "loom"))]
unsafe impl<T: Send> Sync for TrackedCell<T> {}

#[cfg(not(feature = "loom"))]
impl<T> TrackedCell<T> {
    fn new(value: T) -> Self {
        TrackedCell(std::cell::UnsafeCell::new(value))
    }
    fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }
    fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

#[test]
fn spin_no_yield_counts_towards_spin_and_caps_at_ten() {
    check(|| {
        let settings = Settings {
            spins: 12,
            ..Settings::default()
        };
        SETTINGS.with(|s| s.set(settings));
        // Two spins without yielding leave ten of the twelve to `spin`.
        let mut spin = SpinWait::new();
        spin.spin_no_yield();
        spin.spin_no_yield();
        for _ in 0..10 {
            assert!(spin.spin());
        }
        assert!(!spin.spin(), "spin_no_yield must count towards the limit");
        // Past ten, the count stays at ten (the real crate caps its back-off there).
        spin.reset();
        for _ in 0..15 {
            spin.spin_no_yield();
        }
        assert!(spin.spin() && spin.spin(), "the count is capped at ten");
        assert!(!spin.spin());
        SETTINGS.with(|s| s.set(Settings::default()));
    });
}

#[test]
fn stats_count_requeues_and_timeouts() {
    check(|| {
        let waiters = park_all(&[20, 20, 20]);
        wait_queued(20, 3);
        // SAFETY: the callbacks return constants.
        let r = unsafe {
            unpark_requeue(
                20,
                21,
                || RequeueOp::UnparkOneRequeueRest,
                |_, _| DEFAULT_UNPARK_TOKEN,
            )
        };
        assert_eq!((r.unparked_threads, r.requeued_threads), (1, 2));
        assert_eq!((parked(20), parked(21)), (0, 2));
        // SAFETY: as above.
        assert_eq!(unsafe { unpark_all(21, DEFAULT_UNPARK_TOKEN) }, 2);
        for h in waiters {
            assert!(h.join().unwrap().1.is_unparked());
        }
        let deadline = now() + Duration::from_millis(1);
        let timed = thread::spawn(move || {
            // SAFETY: key 22 is this test's; the callbacks do nothing.
            unsafe {
                park(
                    22,
                    || true,
                    || {},
                    |_, _| {},
                    DEFAULT_PARK_TOKEN,
                    Some(deadline),
                )
            }
        });
        advance_clock(Duration::from_millis(1));
        assert_eq!(timed.join().unwrap(), ParkResult::TimedOut);
        let twenty = KeyStats {
            parks: 3,
            unpark_calls: 1,
            woken: 1,
            most_woken_by_one_call: 1,
            requeued: 2,
            ..KeyStats::default()
        };
        let twenty_one = KeyStats {
            unpark_calls: 1,
            woken: 2,
            most_woken_by_one_call: 2,
            ..KeyStats::default()
        };
        let twenty_two = KeyStats {
            parks: 1,
            timeouts: 1,
            ..KeyStats::default()
        };
        assert_eq!(
            (stats(20), stats(21), stats(22)),
            (twenty, twenty_one, twenty_two)
        );
    });
}

#[test]
fn the_clock_moves_only_when_advanced() {
    check(|| {
        let start = now();
        assert_eq!(elapsed(), Duration::ZERO);
        advance_clock(Duration::from_millis(3));
        assert_eq!(elapsed(), Duration::from_millis(3));
        assert_eq!(now() - start, Duration::from_millis(3));
    });
}

#[test]
#[should_panic(
    expected = "park-table contract violated: `deadlock::acquire_resource` was called from the `callback` callback"
)]
fn a_deadlock_function_in_a_callback_fails_the_run() {
    check(|| {
        // SAFETY: deliberately broken: the callback calls `acquire_resource`.
        unsafe {
            unpark_one(23, |_| {
                crate::deadlock::acquire_resource(23);
                DEFAULT_UNPARK_TOKEN
            })
        };
    });
}

#[test]
#[should_panic(
    expected = "park-table contract violated: `deadlock::release_resource` was called from the `validate` callback"
)]
fn a_deadlock_release_in_a_callback_fails_the_run() {
    check(|| {
        // SAFETY: deliberately broken: `validate` calls `release_resource`.
        unsafe {
            park(
                24,
                || {
                    crate::deadlock::release_resource(24);
                    false
                },
                || {},
                |_, _| {},
                DEFAULT_PARK_TOKEN,
                None,
            )
        };
    });
}

#[test]
fn deadlock_functions_outside_callbacks_do_nothing() {
    check(|| {
        // SAFETY: not called from a callback.
        unsafe {
            crate::deadlock::acquire_resource(25);
            crate::deadlock::release_resource(25);
        }
        assert_eq!(parked(25), 0);
    });
}

/// Under `Timeouts::CheckerChooses` a timed park with a far deadline and an unpark racing it
/// end both ways across the checker's executions: the checker, not the clock, chose.
#[test]
fn the_checker_chooses_each_timeout() {
    use std::sync::atomic::AtomicUsize as StdCounter;
    static TIMED_OUT: StdCounter = StdCounter::new(0);
    static UNPARKED: StdCounter = StdCounter::new(0);
    let settings = Settings {
        timeouts: Timeouts::CheckerChooses,
        ..Settings::default()
    };
    with_settings(settings, || {
        check(|| {
            let deadline = now() + Duration::from_secs(3600);
            let timed = thread::spawn(move || {
                // SAFETY: key 26 is this test's; the callbacks do nothing.
                unsafe {
                    park(
                        26,
                        || true,
                        || {},
                        |_, _| {},
                        DEFAULT_PARK_TOKEN,
                        Some(deadline),
                    )
                }
            });
            // No waiting for the park: the unpark may come first (then it finds nobody and
            // the park, queued later, times out) or after it.
            // SAFETY: the callback returns a constant.
            let r = unsafe { unpark_one(26, |_| UnparkToken(5)) };
            match timed.join().unwrap() {
                ParkResult::TimedOut => {
                    assert_eq!(r.unparked_threads, 0);
                    TIMED_OUT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                ParkResult::Unparked(UnparkToken(5)) => {
                    assert_eq!(r.unparked_threads, 1);
                    UNPARKED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                other => panic!("unexpected park result {other:?}"),
            }
        })
    });
    let (t, u) = (
        TIMED_OUT.load(std::sync::atomic::Ordering::Relaxed),
        UNPARKED.load(std::sync::atomic::Ordering::Relaxed),
    );
    assert!(t > 0 && u > 0, "both outcomes: {t} timed out, {u} unparked");
}

#[test]
#[should_panic(
    expected = "park-table contract violated: `park` was called from the `before_sleep` callback"
)]
fn parking_from_before_sleep_fails_the_run() {
    check(|| {
        // SAFETY: deliberately broken: `before_sleep` parks.
        unsafe {
            park(
                27,
                || true,
                || {
                    park(28, || false, || {}, |_, _| {}, DEFAULT_PARK_TOKEN, None);
                },
                |_, _| {},
                DEFAULT_PARK_TOKEN,
                None,
            )
        };
    });
}

/// `before_sleep` runs after the lock is released, so it may unpark (the real crate allows
/// it; only parking there is forbidden).
#[test]
fn before_sleep_may_unpark() {
    check(|| {
        let woken = Arc::new(AtomicUsize::new(usize::MAX));
        let seen = Arc::clone(&woken);
        let other = thread::spawn(move || {
            // SAFETY: key 29 is this test's; the callbacks do nothing.
            unsafe { park(29, || true, || {}, |_, _| {}, DEFAULT_PARK_TOKEN, None) }
        });
        wait_queued(29, 1);
        let waiter = thread::spawn(move || {
            // SAFETY: key 30 is this test's; `before_sleep` unparks another key, as allowed.
            unsafe {
                park(
                    30,
                    || true,
                    || {
                        let n = unpark_all(29, DEFAULT_UNPARK_TOKEN);
                        seen.store(n, Ordering::Relaxed);
                    },
                    |_, _| {},
                    DEFAULT_PARK_TOKEN,
                    None,
                )
            }
        });
        assert!(other.join().unwrap().is_unparked());
        wait_queued(30, 1);
        // SAFETY: the callback returns a constant.
        unsafe { unpark_one(30, |_| DEFAULT_UNPARK_TOKEN) };
        assert!(waiter.join().unwrap().is_unparked());
        assert_eq!(
            woken.load(Ordering::Relaxed),
            1,
            "before_sleep's unpark woke one"
        );
    });
}

#[cfg(feature = "shuttle")]
/// Drops call into the table (as a primitive's guard releasing during unwinding does).
struct UnparksOnDrop(usize);

#[cfg(feature = "shuttle")]
impl Drop for UnparksOnDrop {
    fn drop(&mut self) {
        // SAFETY: the key is the test's; no callback.
        unsafe { unpark_all(self.0, DEFAULT_UNPARK_TOKEN) };
    }
}

/// A guard that calls into the table while its thread unwinds poisons the table's lock (std
/// semantics, which shuttle follows); the table must stay usable, since nothing broke the
/// contract.
// Shuttle only: its mutex poisons as std's does, which is what the model's handling of
// poison is for; loom's own bookkeeping does not survive a model thread unwinding while it
// holds the table lock after a callback broke the contract.
#[cfg(feature = "shuttle")]
#[test]
fn a_table_call_while_unwinding_leaves_the_table_usable() {
    check(|| {
        let unwound = catch_unwind(AssertUnwindSafe(|| {
            let _guard = UnparksOnDrop(31);
            panic!("a holder panics");
        }));
        assert!(unwound.is_err());
        // The table works on, for every later call.
        assert_eq!(parked(31), 0);
        // SAFETY: the callback returns a constant.
        let r = unsafe { unpark_one(31, |_| DEFAULT_UNPARK_TOKEN) };
        assert_eq!(r.unparked_threads, 0);
    });
}

/// A model thread unwinding (a primitive's guard released on the way) while another uses the
/// table: the threads share one OS thread's panic count, so the table lock can be poisoned
/// with nothing broken; the table must stay usable for everyone.
// Shuttle only, as above.
#[cfg(feature = "shuttle")]
#[test]
fn a_thread_unwinding_beside_table_calls_leaves_the_table_usable() {
    check(|| {
        let unwinding = thread::spawn(|| {
            let unwound = catch_unwind(AssertUnwindSafe(|| {
                let _first = UnparksOnDrop(34);
                let _second = UnparksOnDrop(34);
                panic!("a holder panics");
            }));
            assert!(unwound.is_err());
        });
        let user = thread::spawn(|| {
            for _ in 0..4 {
                assert_eq!(parked(34), 0);
            }
        });
        unwinding.join().unwrap();
        user.join().unwrap();
        // SAFETY: the callback returns a constant.
        let r = unsafe { unpark_one(34, |_| DEFAULT_UNPARK_TOKEN) };
        assert_eq!(r.unparked_threads, 0);
    });
}

/// After a callback broke the contract, every later call fails with that reason, except one
/// made while its thread is already unwinding, which must not turn the first failure into an
/// abort (a panic while panicking).
// Shuttle only: its mutex poisons as std's does, which is what the model's handling of
// poison is for; loom's own bookkeeping does not survive a model thread unwinding while it
// holds the table lock after a callback broke the contract.
#[cfg(feature = "shuttle")]
#[test]
fn a_broken_table_stays_broken_without_a_second_panic() {
    check(|| {
        let broke = catch_unwind(|| {
            // SAFETY: deliberately broken: the callback unwinds.
            unsafe { unpark_one(32, |_| panic!("boom")) };
        });
        assert!(broke.is_err());
        let later = catch_unwind(|| parked(32)).map_err(|p| panic_text(&*p));
        assert_eq!(
            later.unwrap_err(),
            "the park table is poisoned: an earlier callback broke the contract"
        );
        let unwinding = catch_unwind(AssertUnwindSafe(|| {
            let _guard = UnparksOnDrop(32);
            panic!("the first failure");
        }))
        .map_err(|p| panic_text(&*p));
        assert_eq!(unwinding.unwrap_err(), "the first failure");
    });
}

#[cfg(feature = "shuttle")]
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// The `SpuriousReturn` variant returns without an unpark and leaves the queue (so that what
/// the conformance suite sees is the early return alone, not a stale queue entry).
#[cfg(feature = "unfaithful")]
#[test]
fn the_spurious_variant_returns_early_and_leaves_the_queue() {
    let settings = Settings {
        unfaithful: Some(Unfaithful::SpuriousReturn),
        ..Settings::default()
    };
    with_settings(settings, || {
        check(|| {
            let other = thread::spawn(|| {
                // SAFETY: key 33 is this test's; the callbacks do nothing.
                unsafe { park(33, || true, || {}, |_, _| {}, DEFAULT_PARK_TOKEN, None) }
            });
            // SAFETY: as above.
            let r = unsafe { park(33, || true, || {}, |_, _| {}, ParkToken(1), None) };
            assert_eq!(r, ParkResult::Unparked(DEFAULT_UNPARK_TOKEN));
            assert!(other.join().unwrap().is_unparked());
            assert_eq!(
                parked(33),
                0,
                "the variant leaves the queue it returned from"
            );
        })
    });
}

/// A table call outside any model (where the checker's statics do not exist) fails, and the
/// models run after it on this thread still start each execution from an empty table.
#[test]
fn a_table_call_outside_a_model_leaves_later_models_fresh() {
    let outside = catch_unwind(now);
    assert!(
        outside.is_err(),
        "the mocked clock exists only inside a model"
    );
    check(|| {
        assert_eq!(
            stats(41),
            KeyStats::default(),
            "a fresh table in every execution"
        );
        let other = thread::spawn(|| {
            // SAFETY: key 41 is this test's; the callbacks do nothing.
            unsafe { park(41, || true, || {}, |_, _| {}, DEFAULT_PARK_TOKEN, None) }
        });
        wait_queued(41, 1);
        // SAFETY: the callback returns a constant.
        unsafe { unpark_one(41, |_| DEFAULT_UNPARK_TOKEN) };
        assert!(other.join().unwrap().is_unparked());
    });
}

/// A `Thread::unpark` given to a thread while it is parked in the table is not consumed by
/// the table: the real crate parks on its own futex, so the token is still there for the
/// thread's next `thread::park`.
#[test]
fn a_thread_token_given_while_parked_survives_the_park() {
    check(|| {
        let asleep = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&asleep);
        let waiter = thread::spawn(move || {
            // SAFETY: key 42 is this test's; `before_sleep` touches only an atomic.
            let r = unsafe {
                park(
                    42,
                    || true,
                    || {
                        seen.store(1, Ordering::SeqCst);
                    },
                    |_, _| {},
                    DEFAULT_PARK_TOKEN,
                    None,
                )
            };
            assert!(r.is_unparked());
            // The token given below, while this thread was in the table: returns at once.
            thread::park();
        });
        while asleep.load(Ordering::SeqCst) == 0 {
            thread::yield_now();
        }
        waiter.thread().unpark();
        // SAFETY: the callback returns a constant.
        while unsafe { unpark_one(42, |_| DEFAULT_UNPARK_TOKEN) }.unparked_threads == 0 {
            thread::yield_now();
        }
        waiter.join().unwrap();
    });
}

/// `parked_untracked` counts the threads queued on a key once no table operation is under
/// way: `None` never lasts past the operations themselves.
#[test]
fn parked_untracked_settles_after_each_operation() {
    check(|| {
        assert_eq!(parked_untracked(43), Some(0), "nobody parked yet");
        let other = thread::spawn(|| {
            // SAFETY: key 43 is this test's; the callbacks do nothing.
            unsafe { park(43, || true, || {}, |_, _| {}, DEFAULT_PARK_TOKEN, None) }
        });
        while parked_untracked(43) != Some(1) {
            thread::yield_now();
        }
        // SAFETY: the callback returns a constant.
        unsafe { unpark_one(43, |_| DEFAULT_UNPARK_TOKEN) };
        assert!(other.join().unwrap().is_unparked());
        assert_eq!(parked_untracked(43), Some(0), "the woken thread has left");
    });
}

/// Under `Settings::one_bucket` every key shares one lock: a callback on one key never runs
/// while a callback on another is running (by default they may, which the second half shows
/// is reachable, so the first half checks something).
#[test]
fn one_bucket_serializes_the_keys() {
    let overlapped = |one_bucket: bool| {
        let seen = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let saw = std::sync::Arc::clone(&seen);
        let settings = Settings {
            one_bucket,
            ..Settings::default()
        };
        with_settings(settings, || {
            check(move || {
                let inside = Arc::new(AtomicUsize::new(0));
                let other = {
                    let inside = Arc::clone(&inside);
                    thread::spawn(move || {
                        // SAFETY: key 44 is this test's; the callback touches only an atomic
                        // and yields.
                        unsafe {
                            unpark_one(44, |_| {
                                inside.store(1, Ordering::SeqCst);
                                thread::yield_now();
                                inside.store(0, Ordering::SeqCst);
                                DEFAULT_UNPARK_TOKEN
                            })
                        };
                    })
                };
                // SAFETY: key 45 is this test's; the callback only loads an atomic.
                unsafe {
                    unpark_one(45, |_| {
                        if inside.load(Ordering::SeqCst) == 1 {
                            saw.store(true, std::sync::atomic::Ordering::Relaxed);
                        }
                        DEFAULT_UNPARK_TOKEN
                    })
                };
                other.join().unwrap();
            })
        });
        seen.load(std::sync::atomic::Ordering::Relaxed)
    };
    assert!(
        !overlapped(true),
        "one_bucket: two keys' callbacks overlapped"
    );
    assert!(
        overlapped(false),
        "a bucket per key: two keys' callbacks can overlap"
    );
}

/// A park leaves no thread token behind: after an unparked park and a timed-out one, the
/// thread's next `thread::park` waits for the `unpark` given after the flag is set. Loom
/// only: shuttle's `park` wakes spuriously (as std's may), and the table hands a wake it did
/// not give back as a token, so there a later `thread::park` may return early, which std
/// allows.
#[cfg(feature = "loom")]
#[test]
fn a_park_leaves_no_thread_token_behind() {
    check(|| {
        let flag = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&flag);
        let waiter = thread::spawn(move || {
            // SAFETY: keys 46 and 47 are this test's; the callbacks do nothing.
            let r = unsafe { park(46, || true, || {}, |_, _| {}, DEFAULT_PARK_TOKEN, None) };
            assert!(r.is_unparked());
            let deadline = now() + Duration::from_millis(5);
            // SAFETY: as above.
            let r = unsafe {
                park(
                    47,
                    || true,
                    || {},
                    |_, _| {},
                    DEFAULT_PARK_TOKEN,
                    Some(deadline),
                )
            };
            assert_eq!(r, ParkResult::TimedOut);
            thread::park();
            assert_eq!(
                seen.load(Ordering::SeqCst),
                1,
                "a park left a token: thread::park returned before the unpark"
            );
        });
        wait_queued(46, 1);
        // SAFETY: the callback returns a constant.
        unsafe { unpark_one(46, |_| DEFAULT_UNPARK_TOKEN) };
        wait_queued(47, 1);
        advance_clock(Duration::from_millis(5));
        flag.store(1, Ordering::SeqCst);
        waiter.thread().unpark();
        waiter.join().unwrap();
    });
}

/// `parked_untracked` says `None` while a table operation is under way on any key, and does
/// not count a timed thread whose deadline the clock has reached.
#[test]
fn parked_untracked_waits_out_operations_and_skips_due_threads() {
    check(|| {
        let inside = Arc::new(AtomicUsize::new(0));
        let other = {
            let inside = Arc::clone(&inside);
            thread::spawn(move || {
                // SAFETY: key 48 is this test's; the callback touches only an atomic.
                unsafe {
                    unpark_one(48, |_| {
                        inside.store(1, Ordering::SeqCst);
                        thread::yield_now();
                        inside.store(0, Ordering::SeqCst);
                        DEFAULT_UNPARK_TOKEN
                    })
                };
            })
        };
        for _ in 0..3 {
            if inside.load(Ordering::SeqCst) == 1 {
                assert_eq!(parked_untracked(49), None, "an operation is under way");
            }
            thread::yield_now();
        }
        other.join().unwrap();

        let deadline = now() + Duration::from_millis(5);
        let timed = thread::spawn(move || {
            // SAFETY: key 49 is this test's; the callbacks do nothing.
            unsafe {
                park(
                    49,
                    || true,
                    || {},
                    |_, _| {},
                    DEFAULT_PARK_TOKEN,
                    Some(deadline),
                )
            }
        });
        let mut looks = 0;
        while parked_untracked(49) != Some(1) {
            looks += 1;
            assert!(looks < 1_000, "the timed thread never counted as parked");
            thread::yield_now();
        }
        advance_clock(Duration::from_millis(5));
        assert_ne!(
            parked_untracked(49),
            Some(1),
            "a thread whose deadline the clock has reached is not counted"
        );
        assert_eq!(timed.join().unwrap(), ParkResult::TimedOut);
    });
}

/// Parks a thread on `key` through the 0.9 API, unparks it with `v0_9::unpark_one` once it is
/// queued, and returns `be_fair`.
fn fair_unpark_0_9(key: usize) -> bool {
    use crate::v0_9;
    let parked = thread::spawn(move || {
        // SAFETY: the test's own key; the callbacks do not call into the table or unwind.
        unsafe {
            v0_9::park(
                key,
                || true,
                || {},
                |_, _| {},
                v0_9::DEFAULT_PARK_TOKEN,
                None,
            )
        }
    });
    wait_queued(key, 1);
    // SAFETY: as above.
    let r = unsafe { v0_9::unpark_one(key, |_| v0_9::DEFAULT_UNPARK_TOKEN) };
    assert_eq!(
        parked.join().unwrap(),
        v0_9::ParkResult::Unparked(v0_9::DEFAULT_UNPARK_TOKEN)
    );
    r.be_fair
}

#[test]
fn fair_timer_settings_decide_be_fair() {
    for (timer, expected) in [
        (FairTimer::Clock, [true, false]),
        (FairTimer::Always, [true, true]),
        (FairTimer::Never, [false, false]),
    ] {
        let settings = Settings {
            fair_timer: timer,
            ..Settings::default()
        };
        with_settings(settings, || {
            check(move || {
                let got = [fair_unpark_0_9(11), fair_unpark_0_9(11)];
                assert_eq!(got, expected, "two waking unparks under {timer:?}");
            })
        });
    }
}

/// Each key has its own fair timer, unless every key shares one bucket; the 0.10 API never
/// uses one.
#[test]
fn fair_timers_are_per_bucket_and_0_10_leaves_them() {
    for (one_bucket, expected) in [(false, [true, true]), (true, [true, false])] {
        let settings = Settings {
            one_bucket,
            ..Settings::default()
        };
        with_settings(settings, || {
            check(move || {
                let parked = thread::spawn(|| {
                    // SAFETY: the test's own key; the callbacks do not call into the table.
                    unsafe { park(21, || true, || {}, |_, _| {}, DEFAULT_PARK_TOKEN, None) }
                });
                wait_queued(21, 1);
                // SAFETY: as above.
                unsafe { unpark_one(21, |_| DEFAULT_UNPARK_TOKEN) };
                parked.join().unwrap();
                let got = [fair_unpark_0_9(21), fair_unpark_0_9(22)];
                assert_eq!(got, expected, "keys 21 then 22, one bucket: {one_bucket}");
            })
        });
    }
}

/// The fair timer waits what the real one's xorshift gives from seed 1 (270 369, 634 689,
/// 435 461 ns), due again only once the clock is strictly past the wait, as the real `>`.
#[test]
fn the_fair_timer_waits_as_the_real_generator() {
    let start = Instant::now();
    let mut timer = FairTimeout::new();
    let mut at = start;
    assert!(timer.should_timeout(at), "a new timer is due");
    for wait in [270_369, 634_689, 435_461] {
        let due = at + Duration::from_nanos(wait);
        assert!(!timer.should_timeout(due), "not due at exactly {wait} ns");
        at = due + Duration::from_nanos(1);
        assert!(timer.should_timeout(at), "due 1 ns after {wait} ns");
    }
}

/// Two-key operations lock the buckets in an order that is the same in every execution that
/// follows the same schedule, also when the keys' order as numbers flips from one execution
/// to the next (as addresses do: the allocator reuses what earlier executions freed). Here
/// the two keys swap every execution; locking by key order made loom's replay of the
/// schedule prefix diverge ("Reached unexpected exploration state", or a thread resumed on a
/// lock still held).
#[test]
fn bucket_order_does_not_depend_on_the_keys_values() {
    static EXECUTION: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    check(|| {
        let n = EXECUTION.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (from, to) = if n.is_multiple_of(2) {
            (40, 41)
        } else {
            (41, 40)
        };
        let deadline = now() + Duration::from_millis(1);
        let waiters: Vec<_> = [None, Some(deadline)]
            .into_iter()
            .map(|timeout| {
                thread::spawn(move || {
                    // SAFETY: the keys are this test's; the callbacks do nothing.
                    unsafe { park(from, || true, || {}, |_, _| {}, DEFAULT_PARK_TOKEN, timeout) }
                })
            })
            .collect();
        wait_queued(from, 2);
        let requeuer = thread::spawn(move || {
            // SAFETY: the callbacks return constants.
            unsafe {
                unpark_requeue(
                    from,
                    to,
                    || RequeueOp::RequeueAll,
                    |_, _| DEFAULT_UNPARK_TOKEN,
                )
            }
        });
        advance_clock(Duration::from_millis(1));
        let moved = requeuer.join().unwrap().requeued_threads;
        // SAFETY: as above.
        let woken = unsafe { unpark_all(to, DEFAULT_UNPARK_TOKEN) };
        let results: Vec<ParkResult> = waiters.into_iter().map(|h| h.join().unwrap()).collect();
        assert!(results[0].is_unparked(), "the untimed waiter is woken");
        assert!(woken <= moved && moved <= 2, "{moved} moved, {woken} woken");
    });
}
