//! The lock's scenario bodies, written once and run under every build: loom (every
//! interleaving, tiny sizes), shuttle (random and PCT schedules, medium sizes) and real threads
//! (`stress.rs`, large sizes, under the watchdog). They use only `parksema::__model`'s threads,
//! `Arc` and atomics, which are the checker's under `loom`/`shuttle` and std's otherwise.
//!
//! Invariants are asserted inside the threads, where they happen, with messages that name the
//! violated property, so a failure says what broke in any build:
//!
//! - `exclusion: a reader inside while a writer holds the lock`, `exclusion: a writer inside
//!   while N reader(s) hold the lock`, `exclusion: two writers inside at once`: the entry
//!   check of [`Inside`];
//! - `exclusion: torn read`: a reader saw the two halves of the value from different writes;
//! - `over-issue: N readers inside > max_readers M`;
//! - `lost write: ...`, `permits not conserved: ...`: the end state (checked after the join, as
//!   well as, never instead of, the checks above);
//! - `writer progress: a reader that arrived after a writer parked got the lock before it`:
//!   the exact writer-progress property of [`writer_progress`];
//! - a missing happens-before edge between a writer and the next holder shows as loom's
//!   `Causality violation` on the lock's data cell.

#![allow(dead_code)]

use parksema::__model::{Arc, AtomicUsize, Ordering, thread};
use parksema_rwlock::{Fairness, RwLock};

/// Which lock a scenario runs against: the correct one, or (feature `broken_rwlock`) one with
/// the deliberate flaw, in a fairness mode (`Fifo`, what `RwLock::new` gives, unless a test
/// says otherwise).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Build {
    /// The flaw, if any.
    #[cfg(feature = "broken_rwlock")]
    pub flaw: Option<parksema_rwlock::Flaw>,
    /// The fairness mode.
    pub fairness: Fairness,
}

impl Build {
    /// The correct lock.
    pub(crate) const CORRECT: Build = Build {
        #[cfg(feature = "broken_rwlock")]
        flaw: None,
        fairness: Fairness::Fifo,
    };

    /// A lock with the deliberate flaw `flaw`.
    #[cfg(feature = "broken_rwlock")]
    pub(crate) const fn flawed(flaw: parksema_rwlock::Flaw) -> Build {
        Build {
            flaw: Some(flaw),
            fairness: Fairness::Fifo,
        }
    }

    /// This build in the fairness mode `fairness`.
    pub(crate) const fn fair(mut self, fairness: Fairness) -> Build {
        self.fairness = fairness;
        self
    }

    /// A lock of this build holding `value`.
    pub(crate) fn lock<T>(self, value: T, max_readers: usize) -> RwLock<T> {
        #[cfg(feature = "broken_rwlock")]
        return RwLock::with_flaw(value, max_readers, self.fairness, self.flaw);
        #[cfg(not(feature = "broken_rwlock"))]
        RwLock::with_fairness(value, max_readers, self.fairness)
    }

    /// A lock of this build over the scenarios' [`Data`], shared.
    pub(crate) fn data_lock(self, max_readers: usize) -> Arc<RwLock<Data>> {
        Arc::new(self.lock(Data::default(), max_readers))
    }
}

/// What a scenario's threads report as they go: nothing under the checkers, the watchdog's
/// worker on real threads.
pub(crate) trait Progress: Send + 'static {
    /// One operation done.
    fn op(&self, op: &'static str);
}

impl Progress for () {
    fn op(&self, _: &'static str) {}
}

impl Progress for watchdog::Worker {
    fn op(&self, op: &'static str) {
        watchdog::Worker::op(self, op);
    }
}

/// The value the scenarios protect: two halves that a writer bumps one after the other (two
/// separate accesses through its guard), so a reader that reads while a writer writes can see
/// them differ.
#[derive(Debug, Default)]
pub(crate) struct Data {
    a: usize,
    b: usize,
}

/// Who is inside the lock: the number of readers in the low half of one word, the number of
/// writers in the high half.
///
/// Every operation is a read-modify-write of this one word, and a read-modify-write always
/// reads the latest value in the word's modification order, so two holders whose entries and
/// exits interleave are seen exactly, in every build and under weak memory. The operations
/// are `Relaxed` on purpose: they add no happens-before edge between holders, so under loom a
/// holder's access to the data cell is ordered after the previous holder's only by the lock
/// itself, which is what the cell's causality check is there to check.
#[derive(Debug, Default)]
pub(crate) struct Inside(AtomicUsize);

/// One writer in [`Inside`]'s word.
const ONE_WRITER: usize = 1 << (usize::BITS / 2);
/// The readers' half of [`Inside`]'s word.
const READERS: usize = ONE_WRITER - 1;

impl Inside {
    /// A reader enters: no writer may be inside, nor `max_readers` readers already. It
    /// leaves when the returned token is dropped (also while unwinding, so that a holder whose
    /// check failed does not leave a stale count that fails the others' checks too).
    pub(crate) fn read(&self, max_readers: usize) -> Entered<'_> {
        let before = self.0.fetch_add(1, Ordering::Relaxed);
        let entered = Entered {
            word: &self.0,
            unit: 1,
        };
        assert!(
            before < ONE_WRITER,
            "exclusion: a reader inside while a writer holds the lock ({} writer(s), {} \
             other reader(s) inside)",
            before / ONE_WRITER,
            before & READERS
        );
        assert!(
            before < max_readers,
            "over-issue: {} readers inside > max_readers {max_readers}",
            before + 1
        );
        entered
    }

    /// A writer enters: nobody may be inside. It leaves when the token is dropped.
    pub(crate) fn write(&self) -> Entered<'_> {
        let before = self.0.fetch_add(ONE_WRITER, Ordering::Relaxed);
        let entered = Entered {
            word: &self.0,
            unit: ONE_WRITER,
        };
        assert!(
            before < ONE_WRITER,
            "exclusion: two writers inside at once ({} other writer(s) and {} reader(s) \
             inside)",
            before / ONE_WRITER,
            before & READERS
        );
        assert!(
            before == 0,
            "exclusion: a writer inside while {before} reader(s) hold the lock"
        );
        entered
    }
}

/// A holder counted in [`Inside`]; dropping it leaves. Drop it before the lock's guard.
#[derive(Debug)]
#[must_use = "the holder leaves as soon as this is dropped"]
pub(crate) struct Entered<'a> {
    word: &'a AtomicUsize,
    unit: usize,
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        self.word.fetch_sub(self.unit, Ordering::Relaxed);
    }
}

/// A holder yields while inside, so that other threads run while it holds the lock: under
/// the checkers a switch that costs no preemption (loom runs another thread when one yields,
/// so even its first, preemption-free execution has a second thread try the lock while the
/// first is inside, and a lock that lets it in fails there with the exclusion message, before
/// any execution whose only fault is a missing happens-before edge); on real threads, more
/// overlap between holders.
fn hold() {
    thread::yield_now();
}

/// Joins every thread, then re-raises the panic of the first one, in spawn order, that
/// panicked: the other threads finish first (a failed holder's guard and its [`Entered`] are
/// dropped while it unwinds, so neither the lock nor the count of who is inside is left
/// stale, and the others' checks stay true), and the test reports an assertion that failed
/// where it happened.
fn join_all(handles: Vec<thread::JoinHandle<()>>) {
    let mut first = None;
    for h in handles {
        if let Err(payload) = h.join() {
            first.get_or_insert(payload);
        }
    }
    if let Some(payload) = first {
        std::panic::resume_unwind(payload);
    }
}

/// Every permit is back once every thread is joined.
fn assert_conserved(lock: &RwLock<Data>) {
    assert_eq!(
        lock.available_permits(),
        lock.max_readers(),
        "permits not conserved: {} free at the end of {}",
        lock.available_permits(),
        lock.max_readers()
    );
}

/// Reads the value as a reader: both halves must come from the same write.
fn read_both(data: &Data) -> (usize, usize) {
    let a = data.a;
    let b = data.b;
    assert!(
        a == b,
        "exclusion: torn read (a = {a}, b = {b}): a writer wrote while a reader read"
    );
    (a, b)
}

/// Exclusion: `readers` threads each read `lock` `rounds` times, `writers` threads each
/// write it `rounds` times. Every entry is checked by [`Inside`]
/// (no reader with a writer, no two writers, never more than `max_readers` readers), every read
/// sees both halves of the value from one write, and at the end every write is there and every
/// permit is back. Returns the number of acquisitions.
pub(crate) fn exclusion<P: Progress>(
    lock: Arc<RwLock<Data>>,
    readers: usize,
    writers: usize,
    rounds: usize,
    worker: impl Fn(String) -> P,
) -> usize {
    let max_readers = lock.max_readers();
    let inside = Arc::new(Inside::default());
    let mut handles = Vec::new();
    for w in 0..writers {
        let (lock, inside) = (Arc::clone(&lock), Arc::clone(&inside));
        let progress = worker(format!("writer {w}"));
        handles.push(thread::spawn(move || {
            for _ in 0..rounds {
                let mut guard = lock.write();
                let entered = inside.write();
                guard.a += 1;
                hold();
                guard.b += 1;
                drop(entered);
                drop(guard);
                progress.op("write");
            }
        }));
    }
    for r in 0..readers {
        let (lock, inside) = (Arc::clone(&lock), Arc::clone(&inside));
        let progress = worker(format!("reader {r}"));
        handles.push(thread::spawn(move || {
            for _ in 0..rounds {
                let guard = lock.read();
                let entered = inside.read(max_readers);
                let (a, _) = read_both(&guard);
                assert!(
                    a <= writers * rounds,
                    "exclusion: a read saw {a} writes of {} made",
                    writers * rounds
                );
                hold();
                drop(entered);
                drop(guard);
                progress.op("read");
            }
        }));
    }
    join_all(handles);
    assert_conserved(&lock);
    let data = lock.read();
    assert!(
        data.a == writers * rounds && data.b == writers * rounds,
        "lost write: {:?} after {} writes",
        &*data,
        writers * rounds
    );
    (readers + writers) * rounds
}

/// The same exclusion check with the main thread as one of the readers (one round each):
/// loom's smallest useful model, a writer and a reader spawned and the main thread reading,
/// which keeps it to three threads. With `yields` each holder yields while inside (see
/// [`hold`]); without, a holder is interrupted only by a preemption, and a lock that lets a
/// reader in beside the writer is then first seen by loom as a read not ordered after the
/// write it races (loom's `Causality violation` on the lock's data cell), which shows that
/// the cell's check sees what the lock fails to order, apart from the entry check.
pub(crate) fn exclusion_main_reads(lock: Arc<RwLock<Data>>, yields: bool) {
    let hold = move || {
        if yields {
            hold();
        }
    };
    let max_readers = lock.max_readers();
    let inside = Arc::new(Inside::default());
    let writer = {
        let (lock, inside) = (Arc::clone(&lock), Arc::clone(&inside));
        thread::spawn(move || {
            let mut guard = lock.write();
            let entered = inside.write();
            guard.a += 1;
            hold();
            guard.b += 1;
            drop(entered);
        })
    };
    let reader = {
        let (lock, inside) = (Arc::clone(&lock), Arc::clone(&inside));
        thread::spawn(move || {
            let guard = lock.read();
            let entered = inside.read(max_readers);
            read_both(&guard);
            hold();
            drop(entered);
        })
    };
    {
        let guard = lock.read();
        let entered = inside.read(max_readers);
        read_both(&guard);
        hold();
        drop(entered);
    }
    join_all(vec![writer, reader]);
    assert_conserved(&lock);
    let last = lock.read();
    assert!(
        last.a == 1 && last.b == 1,
        "lost write: {:?} after the writer's one write",
        &*last
    );
}

/// What a run of [`writer_progress`] did.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ProgressRun {
    /// Reads taken in all.
    pub reads: usize,
    /// Writes taken in all.
    pub writes: usize,
    /// Reads whose acquire started after a writer was seen parked: the reads the property
    /// constrains (a run with none checked nothing).
    pub armed: usize,
}

/// Writer progress: `readers` readers keep reading `lock` (`reader_rounds`
/// times each, or, with `None`, until every writer is done) while `writers` writers write it
/// `writer_rounds` times each. The property, checked by each reader at each read:
///
/// **once a writer is parked, no reader whose acquire starts after that gets the lock before
/// that writer does.**
///
/// A reader decides exactly whether a writer is parked before its acquire starts, from
/// monotonic counters and the park table: it reads `returned` (readers whose `read` has
/// returned) at `t0`, the number of threads parked on the lock at `t1`, and `announced`
/// (readers that have started a `read`) at `t2`. The readers parked at `t1` had announced and
/// not returned by `t1`, so there are at most `announced(t2) - returned(t0)` of them; if more
/// threads than that are parked, a writer is among them, parked before this reader's acquire
/// starts (after `t2`). Writes begun are counted right after `write` returns, and read before
/// `t1`: once the reader is in, at least one more write must have begun. The measure starts
/// when the writer is parked (a fact of the park table), not when it announces itself, so it
/// does not depend on when a scheduler lets the writer run.
///
/// The writers start once every reader has read once (`reader_rounds` must not be
/// `Some(0)`).
///
/// `Fairness::Fifo` promises this (no thread takes a permit while another is parked; requests
/// are served in arrival order). `Fairness::Barging` does not: a reader that finds a permit
/// free takes it, so readers that keep overlapping keep the writer out.
pub(crate) fn writer_progress<P: Progress>(
    lock: Arc<RwLock<Data>>,
    readers: usize,
    reader_rounds: Option<usize>,
    writers: usize,
    writer_rounds: usize,
    worker: impl Fn(String) -> P,
) -> ProgressRun {
    /// The counters the readers decide from; `SeqCst`, so that their reads and the park
    /// table's count are ordered as the argument above needs (every one of them is a total
    /// order of one word, and `SeqCst` puts them all in one order with the park table's lock).
    #[derive(Debug, Default)]
    struct Counters {
        announced: AtomicUsize,
        returned: AtomicUsize,
        writes_begun: AtomicUsize,
        writers_done: AtomicUsize,
        readers_started: AtomicUsize,
        reads: AtomicUsize,
        armed: AtomicUsize,
    }
    let max_readers = lock.max_readers();
    let inside = Arc::new(Inside::default());
    let counters = Arc::new(Counters::default());
    let mut handles = Vec::new();
    for w in 0..writers {
        let (lock, inside, counters) = (
            Arc::clone(&lock),
            Arc::clone(&inside),
            Arc::clone(&counters),
        );
        let progress = worker(format!("writer {w}"));
        handles.push(thread::spawn(move || {
            // The writers start once every reader has read once, so that they always meet
            // readers at work (on real threads the writers could otherwise be done before a
            // reader thread has started, and the run would check nothing).
            while counters.readers_started.load(Ordering::SeqCst) < readers {
                thread::yield_now();
            }
            for _ in 0..writer_rounds {
                let mut guard = lock.write();
                counters.writes_begun.fetch_add(1, Ordering::SeqCst);
                let entered = inside.write();
                guard.a += 1;
                guard.b += 1;
                drop(entered);
                drop(guard);
                // Only the writers report progress: on real threads the watchdog then fails
                // the test when no write completes for its stall limit, however busy the
                // readers are.
                progress.op("write");
            }
            counters.writers_done.fetch_add(1, Ordering::SeqCst);
        }));
    }
    for _ in 0..readers {
        let (lock, inside, counters) = (
            Arc::clone(&lock),
            Arc::clone(&inside),
            Arc::clone(&counters),
        );
        handles.push(thread::spawn(move || {
            let mut round = 0;
            loop {
                match reader_rounds {
                    Some(n) if round == n => break,
                    None if counters.writers_done.load(Ordering::SeqCst) == writers => break,
                    _ => round += 1,
                }
                let returned = counters.returned.load(Ordering::SeqCst);
                let writes_before = counters.writes_begun.load(Ordering::SeqCst);
                let parked = lock.parked_threads();
                let announced = counters.announced.load(Ordering::SeqCst);
                let writer_parked = parked > announced - returned;
                counters.announced.fetch_add(1, Ordering::SeqCst);
                let guard = lock.read();
                counters.returned.fetch_add(1, Ordering::SeqCst);
                let entered = inside.read(max_readers);
                if writer_parked {
                    counters.armed.fetch_add(1, Ordering::SeqCst);
                    let writes_now = counters.writes_begun.load(Ordering::SeqCst);
                    assert!(
                        writes_now > writes_before,
                        "writer progress: a reader that arrived after a writer parked got \
                         the lock before it ({parked} parked, at most {} of them readers; \
                         writes begun {writes_before} before the reader's acquire, \
                         {writes_now} once it was in)",
                        announced - returned
                    );
                }
                read_both(&guard);
                // Readers overlap while inside (see `hold`): the overlap is what keeps a
                // writer out of a lock that lets readers barge.
                hold();
                drop(entered);
                drop(guard);
                counters.reads.fetch_add(1, Ordering::SeqCst);
                if round == 1 {
                    counters.readers_started.fetch_add(1, Ordering::SeqCst);
                }
            }
        }));
    }
    join_all(handles);
    assert_conserved(&lock);
    ProgressRun {
        reads: counters.reads.load(Ordering::SeqCst),
        writes: counters.writes_begun.load(Ordering::SeqCst),
        armed: counters.armed.load(Ordering::SeqCst),
    }
}

/// The message of a panic payload (`String` or `&str`), or `""`.
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}
