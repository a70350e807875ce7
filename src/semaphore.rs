//! The state machine: the only file with protocol logic.
//!
//! Everything it uses for synchronization comes from [`crate::sync`], so the same code can
//! be compiled against real `parking_lot_core` or against a checker's mocked park table.

use core::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{AcquireError, AddPermitsError, TryAcquireError};
use crate::permit::{OwnedPermit, Permit};
use crate::profile;
use crate::sync::{
    AtomicU64, AtomicUsize, DEFAULT_UNPARK_TOKEN, FilterOp, Ordering, ParkResult, ParkToken,
    SpinWait, UnparkResult, UnparkToken, clock_micros, const_fn, fence, note_guarded,
    note_slow_release, now, park, unpark_filter,
};

#[cfg(feature = "broken_sema")]
use crate::flaw::{self, Flaw};

// The flags are written as literals, not shifts: `1 << 0` and `1 >> 0` are the same number,
// so a shift here would only give `cargo mutants` an equivalent mutant to report.

/// Some thread is parked, or is about to park, on this semaphore.
const WAITERS: usize = 0b001;
/// The semaphore is closed.
const CLOSED: usize = 0b010;
/// The semaphore is strictly FIFO ([`Fairness::Fifo`]): set at construction, never changed.
/// It is the bit that was reserved so that `MAX_PERMITS` would not change when a flag came.
/// Keeping it in the word lets the fast path's one test, `s & (CLOSED | FIFO)`, send a FIFO
/// semaphore's requests to the checked path at no cost to the other modes.
const FIFO: usize = 0b100;
/// The word's bits that send a request to the guarded try loop, as one literal (`CLOSED |
/// FIFO` would be the same number as `CLOSED ^ FIFO`, an equivalent mutant).
const CLOSED_OR_FIFO: usize = 0b110;
const _: () = assert!(CLOSED_OR_FIFO == CLOSED | FIFO);
/// The number of flag bits below the permit count.
const FLAG_BITS: u32 = 3;
/// The unpark token of a thread that was handed its permits: they never went through the
/// word, and the woken thread owns them when `park` returns.
const HANDED: UnparkToken = UnparkToken(1);

/// How a semaphore orders the threads that wait for its permits.
///
/// | mode | who gets a released permit while threads wait | cost |
/// |------|-----------------------------------------------|------|
/// | `Eventual` (default) | whoever takes it first (a running thread may barge past the parked ones), except that once a random deadline per semaphore has passed (0–1 ms after the previous handoff) the first release that finds a thread parked hands it its permits | a clock read on each release that finds waiters |
/// | `Fifo` | the parked threads, in arrival order: no thread takes a permit while another is parked, and a small request waits behind a larger one at the head | every contended release is a handoff: one wake-up per hand-over, no barging |
/// | `Barging` | whoever takes it first, without bound | none: the highest throughput, and one thread can keep the permits for as long as it keeps re-acquiring |
///
/// The repository's `docs/fairness.md` has the measurements behind the last column.
///
/// # Examples
///
#[doc = crate::doc_fence!()]
/// use parksema::{Fairness, Semaphore};
///
/// static FAIR: Semaphore = Semaphore::with_fairness(1, Fairness::Fifo);
/// assert_eq!(FAIR.fairness(), Fairness::Fifo);
/// assert_eq!(Semaphore::new(1).fairness(), Fairness::Eventual);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Fairness {
    /// Barging with a fairness timer: once this semaphore's deadline has passed, the first
    /// release that finds a thread parked hands it the permits through the unpark token (they
    /// never appear in the count, so no barger can take them), and only then is the next
    /// deadline drawn, uniformly from 0–1 ms after that release: a release that finds nobody
    /// to hand to (the only waiter not queued yet, or just timed out) spends nothing. The
    /// timer starts at the first release that finds a thread waiting. So a thread that keeps
    /// re-acquiring loses the permits at its first release, after a deadline at most 1 ms
    /// after the previous handoff, that finds another thread parked; it does not bound the
    /// wait of a request larger than the permits that come back at once (the handoff goes to
    /// the first parked request the permits satisfy).
    #[default]
    Eventual,
    /// Strict arrival order: while any thread is parked no thread takes a permit (the
    /// `try_` forms and a timed acquire with a zero or past deadline fail then too, as Go's
    /// `TryAcquire` does), and every release to a waiter hands the permits over, to the head
    /// of the queue first; a request behind a head that does not fit waits for it (Go's
    /// `x/sync/semaphore`). A request arrives when it is queued (under the park table's
    /// bucket lock), so a request that fits the free permits with nobody queued takes them
    /// and never sleeps. A large request is never starved; a head whose request is never
    /// met (more than will ever be free) holds up every request behind it for as long as it
    /// waits.
    Fifo,
    /// No fairness: a woken thread competes with running ones for the permits, without
    /// bound.
    Barging,
}

/// The fairness timer's word (the semaphore's second word): the mode in the low 2 bits, the
/// next deadline in the 30 above them (microseconds of `clock_micros`, modulo 2^30: 17.9
/// minutes), and the xorshift32 generator's state in the high 32 (0: the timer has not
/// started).
const MODE_MASK: u64 = 0b11;
/// Where the deadline starts in the timer word.
const DEADLINE_SHIFT: u32 = 2;
/// The deadline's 30 bits, once shifted down.
const DEADLINE_MASK: u64 = 0x3fff_ffff;
/// Where the generator's state starts in the timer word.
const SEED_SHIFT: u32 = 32;
/// The longest fairness interval, in microseconds: each is drawn from `0..=FAIR_WINDOW_US`.
const FAIR_WINDOW_US: u64 = 1000;
/// The generator's first state (any nonzero number; xorshift never leaves zero). Fixed, so
/// that under the checkers every execution draws the same deadlines.
const INITIAL_SEED: u32 = 0x9e37_79b9;

/// The mode's code in the timer word.
const fn mode_code(fairness: Fairness) -> u64 {
    match fairness {
        Fairness::Eventual => 0,
        Fairness::Fifo => 1,
        Fairness::Barging => 2,
    }
}

/// One step of the xorshift32 generator (Marsaglia's 13, 17, 5).
fn xorshift32(mut x: u32) -> u32 {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    x
}

/// Whether the fairness deadline of the timer word `t` has passed at `now` (microseconds):
/// a timer not yet started counts as passed. Deadlines are kept modulo 2^30, and one is never
/// set more than `FAIR_WINDOW_US` ahead, so a deadline that looks further ahead than that is
/// one that wrapped long ago: passed. (A stale deadline can look 0–1 ms ahead only within
/// 1 ms of a multiple of 17.9 minutes after it was set, and then costs that much delay.)
fn timer_due(t: u64, now: u64) -> bool {
    let ahead = (t >> DEADLINE_SHIFT).wrapping_sub(now) & DEADLINE_MASK;
    t >> SEED_SHIFT == 0 || ahead == 0 || ahead > FAIR_WINDOW_US
}

/// The timer word after a turn taken at `now`: the generator stepped, and the next deadline
/// `now` plus a draw from `0..=FAIR_WINDOW_US`; the mode kept.
fn next_timer(t: u64, now: u64) -> u64 {
    let seed = match (t >> SEED_SHIFT) as u32 {
        0 => INITIAL_SEED,
        seed => xorshift32(seed),
    };
    let deadline = (now + u64::from(seed) % (FAIR_WINDOW_US + 1)) & DEADLINE_MASK;
    // `+` rather than `|`: the three fields do not overlap, so `|` and `^` would be the same
    // number, an equivalent mutant for `cargo mutants`.
    (t & MODE_MASK) + (deadline << DEADLINE_SHIFT) + (u64::from(seed) << SEED_SHIFT)
}
/// One permit, as it is counted in the state word.
const ONE: usize = 1 << FLAG_BITS;

/// A blocking counting semaphore for threads.
///
/// A semaphore holds a number of permits. [`acquire`](Semaphore::acquire) takes one,
/// parking the thread until one is available, and [`acquire_many`](Semaphore::acquire_many)
/// takes several at once; the returned [`Permit`] gives them back when dropped. The
/// `try_` forms never block, the `_for` and `_until` forms wait until a deadline, and the
/// `_owned` forms take an `Arc<Semaphore>` and return a guard that owns it.
/// [`close`](Semaphore::close) makes every parked and future acquire fail.
///
/// The whole semaphore is two words (16 bytes: the permit count and flags, and the fairness
/// timer), needs no allocation and can live in a `static`. Parked threads wait in
/// `parking_lot_core`'s global park table, keyed by the semaphore's address. How released
/// permits are shared between parked and running threads is the semaphore's [`Fairness`]
/// ([`with_fairness`](Semaphore::with_fairness)).
///
/// # Examples
///
#[doc = crate::doc_fence!()]
/// use parksema::Semaphore;
/// use std::thread;
///
/// // At most two threads are inside the guarded section at once.
/// static SLOTS: Semaphore = Semaphore::new(2);
///
/// let handles: Vec<_> = (0..8)
///     .map(|_| {
///         thread::spawn(|| {
///             let _permit = SLOTS.acquire().expect("the semaphore is never closed");
///             // ... at most two threads run here at a time ...
///         })
///     })
///     .collect();
/// for h in handles {
///     h.join().unwrap();
/// }
/// assert_eq!(SLOTS.available_permits(), 2);
/// ```
pub struct Semaphore {
    /// The permit count and the flags, in one word: `permits * ONE | FIFO | CLOSED | WAITERS`.
    ///
    /// | permits | `CLOSED` | `WAITERS` | meaning |
    /// |---------|----------|-----------|---------|
    /// | p       | 0        | 0         | nobody waits: acquire's fast path takes a request of n ≤ p with a single CAS; a larger request spins a little, then sets `WAITERS` |
    /// | p       | 0        | 1         | threads parked or about to park (under `FIFO`: a thread is queued, the bit being set by `validate` under the lock that queues it): a thread requesting n may park only in this row, and only while n > p or `FIFO` is set (what `validate` checks; under `FIFO` a thread that does not fit may also park from the row above, setting the bit); without `FIFO` a running thread may still take permits that are free (barging), with `FIFO` none may; a release either hands its permits to the parked requests they satisfy (always under `FIFO`, with `release_fair`, and on an `Eventual` semaphore whose fairness deadline has passed) or adds them to the count and wakes, in queue order, the requests that fit what it has not yet promised |
    /// | any     | 1        | 0         | closed: every acquire fails; permits still count, so held ones come back |
    /// | any     | 1        | 1         | closed while threads waited: `close` is waking them all and clears `WAITERS` |
    ///
    /// `FIFO` is set at construction for [`Fairness::Fifo`] and never changes.
    ///
    /// Transitions:
    ///
    /// - acquire takes n permits with a CAS `s -> s - n * ONE` (`Acquire` on success); it
    ///   never takes any from a closed semaphore; n = 0 succeeds without writing;
    /// - an acquirer that finds too few permits sets `WAITERS` with a CAS, then parks with its
    ///   request as the park token and a `validate` that re-checks, under the bucket lock,
    ///   that `WAITERS` is set, `CLOSED` clear and fewer than n permits free; under `FIFO`
    ///   (also when it finds `WAITERS` set) it parks without the CAS, and `validate` queues it
    ///   if `CLOSED` is clear and `WAITERS` is set or n do not fit, setting `WAITERS` itself
    ///   (`fifo_park_word`); a thread woken with the `HANDED` token owns
    ///   its permits; one woken with the default token re-runs the loop (barging), and if it
    ///   finds the permits gone passes the wake-up on;
    /// - a release that finds `WAITERS` clear adds n permits with a checked CAS (`Release`).
    ///   One that finds it set either hands over (under the bucket lock, in queue order, each
    ///   parked request that its own permits and the free ones satisfy is unparked with
    ///   `HANDED`, the free permits it uses taken out with an `Acquire` CAS; under `FIFO` the
    ///   first request that does not fit stops the walk; the rest of its own permits are then
    ///   added with `Release`), or adds its permits and unparks, in queue order, the waiters
    ///   whose requests fit the permits free under the bucket lock (each promised its share;
    ///   one that does not fit is passed over, not a barrier);
    /// - a timed park that expires leaves the queue under the bucket lock, clearing
    ///   `WAITERS` if it was the last waiter;
    /// - `close` sets `CLOSED` with `fetch_or` (`Release`) and, if `WAITERS` was set, unparks
    ///   every waiter;
    /// - `forget_permits` takes permits out with a CAS and never touches a flag.
    ///
    /// Invariants:
    ///
    /// - `WAITERS` — some thread is parked, or is about to park, on this semaphore. Set only by an acquirer
    ///   (CAS) before it parks; under `FIFO` by the parking thread's `validate`, under the bucket lock that
    ///   queues it, so that there it means exactly "a thread is queued". Cleared **only under the bucket
    ///   lock**: in the `unpark_*` callback when no thread with this key remains, or in `timed_out` when the
    ///   last waiter leaves.
    /// - `CLOSED` — set once by `close()`, never cleared.
    ///
    /// Every write to the word is a read-modify-write (the flawed semaphores of the
    /// `broken_sema` feature excepted), so no release sequence is ever broken.
    state: AtomicUsize,

    /// The fairness timer (see `MODE_MASK`): the mode, the next deadline and the generator.
    /// Under `Eventual` the first release that finds `WAITERS` starts it (a CAS from the
    /// unstarted word); a release that finds `WAITERS` once the deadline has passed hands
    /// over, and the handoff spends the turn, under the bucket lock, only if it unparked a
    /// thread. The other modes never write it.
    timer: AtomicU64,

    /// The deliberate flaw this semaphore runs with, if any.
    #[cfg(feature = "broken_sema")]
    flaw: Option<Flaw>,
}

/// Whether a thread requesting `n` permits of a semaphore without `FIFO` may park when the
/// state word is `s`: only while `WAITERS` is set (so every release takes the slow path and
/// looks at the queue), the semaphore is open, and fewer than `n` permits are free. The
/// parking thread's `validate` asks this under the bucket lock. For one permit it is the
/// state exactly `WAITERS`.
fn may_park(s: usize, n: usize) -> bool {
    // Separate tests rather than one mask: `CLOSED | WAITERS` is the same number as
    // `CLOSED ^ WAITERS`, an equivalent mutant for `cargo mutants`.
    s & WAITERS != 0 && s & CLOSED == 0 && !fits(s, n)
}

/// The word a thread requesting `n` permits of a `FIFO` semaphore parks on, from the word
/// `s` read under the bucket lock, or `None` if it may not park. Under `FIFO` `WAITERS`
/// means exactly "a thread is queued": it is set here, by the thread about to be queued,
/// under the lock that queues it. So a request parks behind the queued ones whether or not
/// it fits (no running thread takes a permit past them), and with nobody queued it parks
/// only if it does not fit, setting `WAITERS`; it never parks on a closed semaphore.
fn fifo_park_word(s: usize, n: usize) -> Option<usize> {
    if s & CLOSED != 0 || (s & WAITERS == 0 && fits(s, n)) {
        return None;
    }
    // `|`, not `+`: the bit may be set already.
    Some(s | WAITERS)
}

/// Whether a running thread may take `n` permits from the word `s` (open): they are free,
/// and no `FIFO` waiter is ahead of it.
fn may_take(s: usize, n: usize) -> bool {
    fits(s, n) && (s & FIFO == 0 || s & WAITERS == 0)
}

/// Builds the initial state word, refusing counts that do not fit.
const fn initial_state(permits: usize, fairness: Fairness) -> usize {
    assert!(
        permits <= Semaphore::MAX_PERMITS,
        "Semaphore::new: the permit count exceeds Semaphore::MAX_PERMITS (usize::MAX >> 3)"
    );
    match fairness {
        // `+`, not `|`: the bit is clear, so `|` and `^` would be the same number (an
        // equivalent mutant).
        Fairness::Fifo => (permits << FLAG_BITS) + FIFO,
        _ => permits << FLAG_BITS,
    }
}

impl Semaphore {
    /// The largest number of permits a semaphore can hold: `usize::MAX >> 3`.
    ///
    /// The low three bits of the state word are flags (the fairness timer has a word of its
    /// own, so this number did not change when fairness came).
    ///
    #[doc = crate::doc_fence!()]
    /// assert_eq!(parksema::Semaphore::MAX_PERMITS, usize::MAX >> 3);
    /// ```
    pub const MAX_PERMITS: usize = usize::MAX >> FLAG_BITS;

    const_fn! {
        /// Creates a semaphore holding `permits` permits.
        ///
        /// This is a `const fn`, so a semaphore can be a `static`.
        ///
        /// # Panics
        ///
        /// If `permits > Semaphore::MAX_PERMITS` (at compile time when evaluated in a
        /// constant).
        ///
        /// # Examples
        ///
        #[doc = crate::doc_fence!()]
        /// use parksema::Semaphore;
        ///
        /// static LIMIT: Semaphore = Semaphore::new(4);
        /// assert_eq!(LIMIT.available_permits(), 4);
        /// ```
        ///
        #[doc = crate::doc_fence!(should_panic)]
        /// let _ = parksema::Semaphore::new(parksema::Semaphore::MAX_PERMITS + 1);
        /// ```
        pub fn new(permits: usize) -> Semaphore {
            Semaphore::with_fairness(permits, Fairness::Eventual)
        }
    }

    const_fn! {
        /// Creates a semaphore holding `permits` permits that orders its waiters by
        /// `fairness` ([`new`](Semaphore::new) gives [`Fairness::Eventual`]).
        ///
        /// # Panics
        ///
        /// If `permits > Semaphore::MAX_PERMITS`, as [`new`](Semaphore::new).
        ///
        /// # Examples
        ///
        #[doc = crate::doc_fence!()]
        /// use parksema::{Fairness, Semaphore, TryAcquireError};
        /// use std::{sync::Arc, thread};
        ///
        /// let sem = Arc::new(Semaphore::with_fairness(1, Fairness::Fifo));
        /// let held = sem.acquire().unwrap();
        /// let waiter = {
        ///     let sem = Arc::clone(&sem);
        ///     // The waiter holds its permit until the join.
        ///     thread::spawn(move || sem.acquire().unwrap().forget())
        /// };
        /// while sem.parked_threads() == 0 {
        ///     thread::yield_now();
        /// }
        /// drop(held); // handed to the parked thread: it never shows in the count
        /// assert_eq!(sem.try_acquire().unwrap_err(), TryAcquireError::NoPermits);
        /// waiter.join().unwrap();
        /// sem.add_permits(1); // the one the waiter forgot
        /// assert_eq!(sem.available_permits(), 1);
        /// ```
        pub fn with_fairness(permits: usize, fairness: Fairness) -> Semaphore {
            Semaphore {
                state: AtomicUsize::new(initial_state(permits, fairness)),
                timer: AtomicU64::new(mode_code(fairness)),
                #[cfg(feature = "broken_sema")]
                flaw: None,
            }
        }
    }

    /// Creates a semaphore that runs with the deliberate flaw `flaw` (`None`: the correct
    /// protocol). For the verification suite only.
    #[cfg(feature = "broken_sema")]
    #[doc(hidden)]
    pub fn with_flaw(permits: usize, flaw: Option<Flaw>) -> Semaphore {
        Semaphore::with_fairness_and_flaw(permits, Fairness::Eventual, flaw)
    }

    /// Creates a semaphore of the given fairness that runs with the deliberate flaw `flaw`.
    /// For the verification suite only.
    #[cfg(feature = "broken_sema")]
    #[doc(hidden)]
    pub fn with_fairness_and_flaw(
        permits: usize,
        fairness: Fairness,
        flaw: Option<Flaw>,
    ) -> Semaphore {
        let mut sem = Semaphore::with_fairness(permits, fairness);
        sem.flaw = flaw;
        sem
    }

    /// The fairness this semaphore was created with.
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::{Fairness, Semaphore};
    ///
    /// assert_eq!(Semaphore::with_fairness(2, Fairness::Barging).fairness(), Fairness::Barging);
    /// ```
    #[must_use]
    pub fn fairness(&self) -> Fairness {
        match self.timer.load(Ordering::Relaxed) & MODE_MASK {
            0 => Fairness::Eventual,
            1 => Fairness::Fifo,
            _ => Fairness::Barging,
        }
    }

    /// Takes a permit, parking the thread until one is available.
    ///
    /// Returns [`AcquireError::Closed`] once the semaphore is closed, also for a thread that
    /// was already parked when [`close`](Semaphore::close) was called. A closed semaphore
    /// never hands out a permit, even if it has some.
    ///
    /// Everything a thread did before it returned a permit (by dropping a [`Permit`] or by
    /// [`add_permits`](Semaphore::add_permits)) happens-before everything the thread that
    /// acquires after it does once `acquire` returns.
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    ///
    /// let sem = Semaphore::new(1);
    /// let permit = sem.acquire().unwrap();
    /// assert_eq!(sem.available_permits(), 0);
    /// drop(permit);
    /// assert_eq!(sem.available_permits(), 1);
    /// ```
    #[inline]
    pub fn acquire(&self) -> Result<Permit<'_>, AcquireError> {
        self.acquire_n(1)?;
        Ok(Permit::new(self, 1))
    }

    /// Takes `n` permits at once, parking the thread until `n` are available.
    ///
    /// The permits are taken together or not at all: a thread never holds part of its
    /// request while it waits, so two threads waiting for more than half of the permits each
    /// cannot deadlock each other. Who goes first while it waits is the semaphore's
    /// [`Fairness`]. Under `Eventual` and `Barging` smaller requests that fit may go ahead of
    /// it: a large request can wait behind a stream of small ones, but a parked thread is
    /// never left asleep while its request fits the free permits and no other thread is
    /// running (a large request parked first does not hold up a small one behind it). Under
    /// `Fifo` requests are served in arrival order: a large request waits only for those
    /// ahead of it, and holds up the ones behind it until it is served.
    ///
    /// # Errors
    ///
    /// [`AcquireError::Closed`] if the semaphore is closed (checked first, so `n == 0` fails
    /// too) or closes while the thread waits; [`AcquireError::TooLarge`] at once if
    /// `n > Semaphore::MAX_PERMITS`, a request that could never be met. On an open semaphore
    /// `n == 0` succeeds at once.
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::{sync::Arc, thread};
    ///
    /// let sem = Arc::new(Semaphore::new(1));
    /// let waiter = {
    ///     let sem = Arc::clone(&sem);
    ///     thread::spawn(move || sem.acquire_many(3).unwrap().num_permits())
    /// };
    /// sem.add_permits(2);
    /// assert_eq!(waiter.join().unwrap(), 3);
    /// assert_eq!(sem.available_permits(), 3);
    /// ```
    #[inline]
    pub fn acquire_many(&self, n: usize) -> Result<Permit<'_>, AcquireError> {
        self.acquire_n(n)?;
        Ok(Permit::new(self, n))
    }

    /// Takes a permit if one is available now; never blocks.
    ///
    /// # Errors
    ///
    /// [`TryAcquireError::Closed`] if the semaphore is closed (checked first),
    /// [`TryAcquireError::NoPermits`] if no permit is available.
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::{Semaphore, TryAcquireError};
    ///
    /// let sem = Semaphore::new(1);
    /// let held = sem.try_acquire().unwrap();
    /// assert_eq!(sem.try_acquire().unwrap_err(), TryAcquireError::NoPermits);
    /// drop(held);
    /// sem.close();
    /// assert_eq!(sem.try_acquire().unwrap_err(), TryAcquireError::Closed);
    /// ```
    #[inline]
    pub fn try_acquire(&self) -> Result<Permit<'_>, TryAcquireError> {
        self.try_acquire_n(1)?;
        Ok(Permit::new(self, 1))
    }

    /// Takes `n` permits if that many are available now; never blocks.
    ///
    /// # Errors
    ///
    /// [`TryAcquireError::Closed`] if the semaphore is closed (checked first, also for
    /// `n == 0`), [`TryAcquireError::TooLarge`] if `n > Semaphore::MAX_PERMITS`,
    /// [`TryAcquireError::NoPermits`] if fewer than `n` are available.
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::{Semaphore, TryAcquireError};
    ///
    /// let sem = Semaphore::new(3);
    /// let two = sem.try_acquire_many(2).unwrap();
    /// assert_eq!(sem.try_acquire_many(2).unwrap_err(), TryAcquireError::NoPermits);
    /// assert_eq!(sem.try_acquire_many(0).unwrap().num_permits(), 0);
    /// drop(two);
    /// assert_eq!(sem.available_permits(), 3);
    /// ```
    #[inline]
    pub fn try_acquire_many(&self, n: usize) -> Result<Permit<'_>, TryAcquireError> {
        self.try_acquire_n(n)?;
        Ok(Permit::new(self, n))
    }

    /// Takes a permit, waiting at most `timeout` for one.
    ///
    /// A permit that is free at the call is taken without parking, even if `timeout` is zero
    /// (as `parking_lot`'s `try_lock_for`, Java's `tryAcquire(0, unit)` and C++'s
    /// `try_acquire_for` do). A `timeout` too large to add to the current time (such as
    /// [`Duration::MAX`]) waits without a deadline. A call that times out takes no permit.
    ///
    /// # Errors
    ///
    /// [`TryAcquireError::Closed`] if the semaphore is closed or closes while the thread
    /// waits, [`TryAcquireError::TimedOut`] if no permit came before the deadline.
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::{Semaphore, TryAcquireError};
    /// use std::time::Duration;
    ///
    /// let sem = Semaphore::new(1);
    /// let held = sem.try_acquire_for(Duration::ZERO).unwrap();
    /// let err = sem.try_acquire_for(Duration::from_millis(5)).unwrap_err();
    /// assert_eq!(err, TryAcquireError::TimedOut);
    /// drop(held);
    /// assert_eq!(sem.available_permits(), 1);
    /// ```
    #[inline]
    pub fn try_acquire_for(&self, timeout: Duration) -> Result<Permit<'_>, TryAcquireError> {
        self.try_acquire_many_for(1, timeout)
    }

    /// Takes a permit, waiting until `deadline` at most. A deadline already past still takes
    /// a permit that is free now, without parking. Otherwise as
    /// [`try_acquire_for`](Semaphore::try_acquire_for).
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::{Semaphore, TryAcquireError};
    /// use std::time::{Duration, Instant};
    ///
    /// let sem = Semaphore::new(1);
    /// let past = Instant::now();
    /// let held = sem.try_acquire_until(past).unwrap();
    /// let soon = Instant::now() + Duration::from_millis(5);
    /// assert_eq!(sem.try_acquire_until(soon).unwrap_err(), TryAcquireError::TimedOut);
    /// drop(held);
    /// ```
    #[inline]
    pub fn try_acquire_until(&self, deadline: Instant) -> Result<Permit<'_>, TryAcquireError> {
        self.try_acquire_many_until(1, deadline)
    }

    /// Takes `n` permits at once, waiting at most `timeout` for them; as
    /// [`try_acquire_for`](Semaphore::try_acquire_for) for the timeout and
    /// [`acquire_many`](Semaphore::acquire_many) for the request.
    ///
    /// # Errors
    ///
    /// [`TryAcquireError::Closed`] (checked first), [`TryAcquireError::TooLarge`] at once if
    /// `n > Semaphore::MAX_PERMITS`, [`TryAcquireError::TimedOut`] if fewer than `n`
    /// permits were free at the deadline. A timed-out call takes none of them.
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::{Semaphore, TryAcquireError};
    /// use std::time::Duration;
    ///
    /// let sem = Semaphore::new(2);
    /// let err = sem.try_acquire_many_for(3, Duration::from_millis(5)).unwrap_err();
    /// assert_eq!(err, TryAcquireError::TimedOut);
    /// assert_eq!(sem.available_permits(), 2, "a timed-out call takes nothing");
    /// assert_eq!(sem.try_acquire_many_for(2, Duration::ZERO).unwrap().num_permits(), 2);
    /// ```
    #[inline]
    pub fn try_acquire_many_for(
        &self,
        n: usize,
        timeout: Duration,
    ) -> Result<Permit<'_>, TryAcquireError> {
        self.acquire_timed(n, || now().checked_add(timeout))?;
        Ok(Permit::new(self, n))
    }

    /// Takes `n` permits at once, waiting until `deadline` at most; as
    /// [`try_acquire_many_for`](Semaphore::try_acquire_many_for).
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::time::{Duration, Instant};
    ///
    /// let sem = Semaphore::new(2);
    /// let deadline = Instant::now() + Duration::from_secs(1);
    /// assert_eq!(sem.try_acquire_many_until(2, deadline).unwrap().num_permits(), 2);
    /// ```
    #[inline]
    pub fn try_acquire_many_until(
        &self,
        n: usize,
        deadline: Instant,
    ) -> Result<Permit<'_>, TryAcquireError> {
        self.acquire_timed(n, || Some(deadline))?;
        Ok(Permit::new(self, n))
    }

    /// Like [`acquire`](Semaphore::acquire), for a semaphore in an [`Arc`]: the permit owns a
    /// reference to the semaphore and can be moved to another thread or stored.
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::{sync::Arc, thread};
    ///
    /// let sem = Arc::new(Semaphore::new(1));
    /// let permit = Arc::clone(&sem).acquire_owned().unwrap();
    /// thread::spawn(move || drop(permit)).join().unwrap();
    /// assert_eq!(sem.available_permits(), 1);
    /// ```
    #[inline]
    pub fn acquire_owned(self: Arc<Self>) -> Result<OwnedPermit, AcquireError> {
        self.acquire_n(1)?;
        Ok(OwnedPermit::new(self, 1))
    }

    /// Like [`acquire_many`](Semaphore::acquire_many), for a semaphore in an [`Arc`].
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::sync::Arc;
    ///
    /// let sem = Arc::new(Semaphore::new(3));
    /// let permit = Arc::clone(&sem).acquire_many_owned(3).unwrap();
    /// assert_eq!((permit.num_permits(), sem.available_permits()), (3, 0));
    /// ```
    #[inline]
    pub fn acquire_many_owned(self: Arc<Self>, n: usize) -> Result<OwnedPermit, AcquireError> {
        self.acquire_n(n)?;
        Ok(OwnedPermit::new(self, n))
    }

    /// Like [`try_acquire`](Semaphore::try_acquire), for a semaphore in an [`Arc`].
    ///
    /// # Errors
    ///
    /// As [`try_acquire`](Semaphore::try_acquire); the `Arc` is dropped.
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::sync::Arc;
    ///
    /// let sem = Arc::new(Semaphore::new(1));
    /// let permit = Arc::clone(&sem).try_acquire_owned().unwrap();
    /// assert!(Arc::clone(&sem).try_acquire_owned().is_err());
    /// drop(permit);
    /// assert_eq!(sem.available_permits(), 1);
    /// ```
    #[inline]
    pub fn try_acquire_owned(self: Arc<Self>) -> Result<OwnedPermit, TryAcquireError> {
        self.try_acquire_n(1)?;
        Ok(OwnedPermit::new(self, 1))
    }

    /// Like [`try_acquire_many`](Semaphore::try_acquire_many), for a semaphore in an [`Arc`].
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::sync::Arc;
    ///
    /// let sem = Arc::new(Semaphore::new(2));
    /// assert!(Arc::clone(&sem).try_acquire_many_owned(3).is_err());
    /// assert_eq!(sem.try_acquire_many_owned(2).unwrap().num_permits(), 2);
    /// ```
    #[inline]
    pub fn try_acquire_many_owned(
        self: Arc<Self>,
        n: usize,
    ) -> Result<OwnedPermit, TryAcquireError> {
        self.try_acquire_n(n)?;
        Ok(OwnedPermit::new(self, n))
    }

    /// Like [`try_acquire_for`](Semaphore::try_acquire_for), for a semaphore in an [`Arc`].
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::{sync::Arc, time::Duration};
    ///
    /// let sem = Arc::new(Semaphore::new(1));
    /// let permit = Arc::clone(&sem).try_acquire_for_owned(Duration::ZERO).unwrap();
    /// assert!(Arc::clone(&sem).try_acquire_for_owned(Duration::ZERO).is_err());
    /// drop(permit);
    /// ```
    #[inline]
    pub fn try_acquire_for_owned(
        self: Arc<Self>,
        timeout: Duration,
    ) -> Result<OwnedPermit, TryAcquireError> {
        self.try_acquire_many_for_owned(1, timeout)
    }

    /// Like [`try_acquire_until`](Semaphore::try_acquire_until), for a semaphore in an
    /// [`Arc`].
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::{sync::Arc, time::Instant};
    ///
    /// let sem = Arc::new(Semaphore::new(1));
    /// assert!(sem.try_acquire_until_owned(Instant::now()).is_ok());
    /// ```
    #[inline]
    pub fn try_acquire_until_owned(
        self: Arc<Self>,
        deadline: Instant,
    ) -> Result<OwnedPermit, TryAcquireError> {
        self.try_acquire_many_until_owned(1, deadline)
    }

    /// Like [`try_acquire_many_for`](Semaphore::try_acquire_many_for), for a semaphore in an
    /// [`Arc`].
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::{sync::Arc, time::Duration};
    ///
    /// let sem = Arc::new(Semaphore::new(2));
    /// let permit = Arc::clone(&sem).try_acquire_many_for_owned(2, Duration::MAX).unwrap();
    /// assert_eq!(permit.num_permits(), 2);
    /// ```
    #[inline]
    pub fn try_acquire_many_for_owned(
        self: Arc<Self>,
        n: usize,
        timeout: Duration,
    ) -> Result<OwnedPermit, TryAcquireError> {
        self.acquire_timed(n, || now().checked_add(timeout))?;
        Ok(OwnedPermit::new(self, n))
    }

    /// Like [`try_acquire_many_until`](Semaphore::try_acquire_many_until), for a semaphore in
    /// an [`Arc`].
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::{Semaphore, TryAcquireError};
    /// use std::{sync::Arc, time::Instant};
    ///
    /// let sem = Arc::new(Semaphore::new(1));
    /// let err = sem.try_acquire_many_until_owned(2, Instant::now()).unwrap_err();
    /// assert_eq!(err, TryAcquireError::TimedOut);
    /// ```
    #[inline]
    pub fn try_acquire_many_until_owned(
        self: Arc<Self>,
        n: usize,
        deadline: Instant,
    ) -> Result<OwnedPermit, TryAcquireError> {
        self.acquire_timed(n, || Some(deadline))?;
        Ok(OwnedPermit::new(self, n))
    }

    /// Adds `n` permits for the parked threads, as the semaphore's [`Fairness`] says. Under
    /// `Eventual` and `Barging` it wakes, in the order they parked, every parked thread whose
    /// request fits the permits then free (a request that does not fit does not hold up a
    /// smaller one behind it), and a running thread may take them first; `Eventual`, once its
    /// fairness deadline has passed, hands them over instead, as `Fifo` always does: to the
    /// parked requests in arrival order, stopping at the first that does not fit (`Eventual`
    /// passes over it).
    ///
    /// Permits may be added to a closed semaphore (a held permit still comes back); they
    /// are counted but never handed out.
    ///
    /// # Panics
    ///
    /// If the count would exceed [`MAX_PERMITS`](Semaphore::MAX_PERMITS). The message names
    /// the numbers, and the count is left untouched.
    /// [`try_add_permits`](Semaphore::try_add_permits) returns this case as an error instead.
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    ///
    /// let sem = Semaphore::new(0);
    /// sem.add_permits(3);
    /// assert_eq!(sem.available_permits(), 3);
    /// ```
    #[inline]
    #[track_caller]
    pub fn add_permits(&self, n: usize) {
        if let Err(e) = self.try_add_permits(n) {
            panic!("{e}");
        }
    }

    /// Adds `n` permits and wakes the parked threads they let proceed (as
    /// [`add_permits`](Semaphore::add_permits)), unless the count would exceed
    /// [`MAX_PERMITS`](Semaphore::MAX_PERMITS).
    ///
    /// # Errors
    ///
    /// [`AddPermitsError`] if `available + n > MAX_PERMITS`; nothing was added and nothing
    /// was handed to a parked thread, in every fairness mode. (One race remains: a release
    /// that hands over checks the count before it hands over and again when it adds what
    /// is left; if other adds push the count past `MAX_PERMITS` in between, the permits
    /// already handed over were delivered, and the error names the rest.)
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    ///
    /// let sem = Semaphore::new(Semaphore::MAX_PERMITS - 1);
    /// let err = sem.try_add_permits(2).unwrap_err();
    /// assert_eq!((err.available(), err.added()), (Semaphore::MAX_PERMITS - 1, 2));
    /// assert_eq!(sem.available_permits(), Semaphore::MAX_PERMITS - 1);
    /// sem.try_add_permits(1).unwrap();
    /// ```
    #[inline]
    pub fn try_add_permits(&self, n: usize) -> Result<(), AddPermitsError> {
        if n == 0 {
            return Ok(());
        }
        self.release(n, false)
    }

    /// Returns `n > 0` permits (`fair`: handing them over to the parked requests they
    /// satisfy, whatever the mode). Nobody waiting: one checked CAS, in line; everything else
    /// goes to the out-of-line `release_slow`.
    #[inline]
    fn release(&self, n: usize, fair: bool) -> Result<(), AddPermitsError> {
        if self.release_unwaited(n) {
            return Ok(());
        }
        self.release_slow(n, fair)
    }

    /// The fast path of every release: adds `n` permits with one CAS if nobody waits, they
    /// fit the count and the word does not change under it; `false` (nothing done) otherwise.
    /// Its failures go to an out-of-line call with nothing live across it, so a guard's
    /// `drop` compiles to a load, a few tests, a CAS and no stack frame.
    #[inline(always)]
    fn release_unwaited(&self, n: usize) -> bool {
        let s = self.state.load(Ordering::Relaxed);
        s & WAITERS == 0 && room(s, n).is_ok() && self.add(s, n).is_ok()
    }

    /// `release` once its fast path has failed: refuses what does not fit, hands over or adds
    /// and wakes while threads wait (`release_waited`), and retries a lost race.
    #[cold]
    #[inline(never)]
    fn release_slow(&self, n: usize, fair: bool) -> Result<(), AddPermitsError> {
        note_slow_release(self.key());
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            if s & WAITERS != 0 {
                match self.release_waited(s, n, fair)? {
                    None => return Ok(()),
                    Some(now) => {
                        s = now;
                        continue;
                    }
                }
            }
            room(s, n)?;
            match self.add(s, n) {
                Ok(_) => return Ok(()),
                Err(now) => s = now,
            }
        }
    }

    /// Adds `n` permits to the word if it is still `s` (`Err(now)` if it is not); the caller
    /// has checked that they fit (`room`). A strong CAS: a spurious failure would only take
    /// the slow path, but the unit tests count the slow path's runs and must see none without
    /// a race.
    #[inline]
    fn add(&self, s: usize, n: usize) -> Result<usize, usize> {
        // Release: pairs with the Acquire of `take`'s CAS (or of a handing-over release's
        // `hand_to` CAS) in the thread that takes one of these permits, so this thread's
        // writes (a holder's, when a permit is dropped) happen-before that thread's.
        self.state
            .compare_exchange(s, s + n * ONE, self.release_ordering(s), Ordering::Relaxed)
    }

    /// Returns `n > 0` permits on the word `s`, which has `WAITERS` set: refuses them if
    /// they would not fit the count (`room`), whoever would take them; else hands them over
    /// if `fair` or the semaphore's fairness says so, or adds them to the count if the word
    /// is still `s` and wakes the parked requests they let proceed. `Some(now)` if the word
    /// had changed (the caller looks again).
    #[cold]
    #[inline(never)]
    fn release_waited(
        &self,
        s: usize,
        n: usize,
        fair: bool,
    ) -> Result<Option<usize>, AddPermitsError> {
        // Checked before a handoff too: a refused add hands nothing over, so the refusal
        // means what it says in every mode (a handoff would otherwise deliver some of an
        // over-full add's permits and refuse only the rest).
        room(s, n)?;
        if fair || s & FIFO != 0 {
            return self.hand_over(n, None).map(|()| None);
        }
        if let Some(now) = self.turn_due() {
            return self.hand_over(n, Some(now)).map(|()| None);
        }
        match self.add(s, n) {
            Ok(_) => {
                self.unpark_waiters(false);
                Ok(None)
            }
            Err(now) => Ok(Some(now)),
        }
    }

    /// Returns `n` permits from a guard's `release_fair`: handed to the parked requests they
    /// satisfy (with the free permits), whatever the semaphore's fairness.
    #[track_caller]
    pub(crate) fn release_fair(&self, n: usize) {
        if n == 0 {
            return;
        }
        // As a guard's drop: a refused release while unwinding leaves the count as it was
        // instead of turning the unwinding into an abort.
        if let Err(e) = self.release(n, true)
            && !std::thread::panicking()
        {
            panic!("{e}");
        }
    }

    /// Whether an `Eventual` semaphore's release that found `WAITERS` must hand over: its
    /// fairness deadline has passed. `Some(now)`, the clock it was read at, if so; the turn
    /// is spent (`spend_turn`) only by the handoff that then unparks a thread, so a release
    /// that finds nobody to hand to (the only waiter not queued yet, or just timed out)
    /// leaves the turn to the next one. The first call only starts the timer. `Barging` and
    /// `Fifo` never take a turn.
    fn turn_due(&self) -> Option<u64> {
        // Relaxed: the timer publishes nothing. A stale word can only make a release hand
        // over once more than it had to.
        let t = self.timer.load(Ordering::Relaxed);
        if t & MODE_MASK != mode_code(Fairness::Eventual) {
            return None;
        }
        let now = clock_micros();
        if t >> SEED_SHIFT == 0 {
            // Relaxed, as above; the CAS keeps a start from overwriting a turn just spent.
            let _ = self.timer.compare_exchange(
                t,
                next_timer(t, now),
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
            return None;
        }
        timer_due(t, now).then_some(now)
    }

    /// Spends the fairness turn taken at `now`: the generator steps and the next deadline is
    /// drawn. Called by a handoff that unparked a thread, under the bucket lock. Every other
    /// write of the timer holds that lock too, except the start (`turn_due`'s CAS from the
    /// unstarted word), which is always the first write and so cannot race this one: a plain
    /// load and store cannot lose a turn.
    fn spend_turn(&self, now: u64) {
        let t = self.timer.load(Ordering::Relaxed);
        self.timer.store(next_timer(t, now), Ordering::Relaxed);
    }

    /// Returns `n` permits from a dropped guard: as [`add_permits`](Semaphore::add_permits),
    /// except while this thread is already unwinding, where a second panic would abort the
    /// process; then the refused permits are dropped and the count stays at its maximum.
    #[inline]
    pub(crate) fn release_from_guard(&self, n: usize) {
        if !self.release_unwaited(n) {
            self.release_from_guard_slow(n);
        }
    }

    /// `release_from_guard` once its fast path has failed; out of line with the panic, so a
    /// guard's `drop` in line is only the fast path.
    #[cold]
    #[inline(never)]
    fn release_from_guard_slow(&self, n: usize) {
        if let Err(e) = self.try_add_permits(n)
            && !std::thread::panicking()
        {
            panic!("{e}");
        }
    }

    /// Takes up to `n` of the available permits out of circulation for good, and returns how
    /// many it took (fewer than `n` when fewer are available; it never waits). The flags are
    /// untouched: a closed semaphore stays closed, and parked threads stay parked (fewer
    /// permits never let a waiter proceed).
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    ///
    /// let sem = Semaphore::new(5);
    /// assert_eq!(sem.forget_permits(2), 2);
    /// assert_eq!(sem.forget_permits(9), 3);
    /// assert_eq!(sem.available_permits(), 0);
    /// sem.close();
    /// sem.add_permits(1);
    /// assert_eq!(sem.forget_permits(1), 1);
    /// assert!(sem.is_closed(), "forgetting permits never reopens a semaphore");
    /// ```
    pub fn forget_permits(&self, n: usize) -> usize {
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            let taken = n.min(s >> FLAG_BITS);
            if taken == 0 {
                return 0;
            }
            // Relaxed: the permits go to nobody, so there is no holder to order after their
            // last holder; being a read-modify-write, it keeps every release sequence on the
            // word intact.
            match self.state.compare_exchange_weak(
                s,
                s - taken * ONE,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return taken,
                Err(now) => s = now,
            }
        }
    }

    /// Closes the semaphore: every parked and every future acquire fails with the `Closed`
    /// error ([`AcquireError::Closed`], [`TryAcquireError::Closed`]). Permits still held may
    /// be returned as usual. Closing twice is harmless.
    ///
    /// Everything a thread did before `close` happens-before everything a thread does after
    /// it observes the semaphore closed (an acquire error, or `is_closed` returning `true`).
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::{sync::Arc, thread};
    ///
    /// let sem = Arc::new(Semaphore::new(0));
    /// let waiter = {
    ///     let sem = Arc::clone(&sem);
    ///     thread::spawn(move || sem.acquire().is_err())
    /// };
    /// sem.close();
    /// assert!(waiter.join().unwrap(), "a parked acquire fails once closed");
    /// assert!(sem.is_closed());
    /// ```
    pub fn close(&self) {
        // Release: pairs with the Acquire fence an acquirer runs when it observes CLOSED, and
        // with `is_closed`'s Acquire load.
        let old = self.state.fetch_or(CLOSED, Ordering::Release);
        if old & WAITERS != 0 {
            self.unpark_waiters(true);
        }
    }

    /// Whether [`close`](Semaphore::close) has been called.
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// let sem = parksema::Semaphore::new(1);
    /// assert!(!sem.is_closed());
    /// sem.close();
    /// assert!(sem.is_closed());
    /// ```
    #[must_use]
    pub fn is_closed(&self) -> bool {
        // Acquire: pairs with `close`'s Release.
        self.state.load(Ordering::Acquire) & CLOSED != 0
    }

    /// The number of permits available now. Under concurrency it may be stale as soon as it
    /// is returned.
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// let sem = parksema::Semaphore::new(2);
    /// let _p = sem.acquire().unwrap();
    /// assert_eq!(sem.available_permits(), 1);
    /// ```
    #[must_use]
    pub fn available_permits(&self) -> usize {
        self.state.load(Ordering::Relaxed) >> FLAG_BITS
    }

    /// The number of threads parked on this semaphore at one instant: a diagnostic for tests
    /// and stall reports. It takes the park table's bucket lock, so it is not free, and the
    /// number may be stale as soon as it is returned.
    ///
    /// # Examples
    ///
    #[doc = crate::doc_fence!()]
    /// use parksema::Semaphore;
    /// use std::time::{Duration, Instant};
    /// use std::{sync::Arc, thread};
    ///
    /// let sem = Arc::new(Semaphore::new(0));
    /// let waiter = {
    ///     let sem = Arc::clone(&sem);
    ///     thread::spawn(move || drop(sem.acquire()))
    /// };
    /// // Bounded, so that a `parked_threads` that never counts the waiter fails this example
    /// // instead of hanging it.
    /// let give_up = Instant::now() + Duration::from_secs(10);
    /// while sem.parked_threads() == 0 {
    ///     assert!(Instant::now() < give_up, "the waiter never showed up as parked");
    ///     thread::yield_now();
    /// }
    /// sem.add_permits(1);
    /// waiter.join().unwrap();
    /// assert_eq!(sem.parked_threads(), 0);
    /// ```
    #[must_use]
    pub fn parked_threads(&self) -> usize {
        let mut parked = 0;
        let count = |_| {
            parked += 1;
            FilterOp::Skip
        };
        // SAFETY:
        // - `key` is this semaphore's own address, which only this semaphore parks on;
        // - `count` and the callback run under the bucket lock: they only increment a local
        //   counter and return a constant, so they cannot unwind or call into the park table;
        // - this is not a signal handler.
        unsafe { unpark_filter(self.key(), count, |_| DEFAULT_UNPARK_TOKEN) };
        parked
    }

    /// What this semaphore's contended acquires have cost so far (feature `profile`, real
    /// threads only): see [`Profile`](crate::Profile). Reading it locks one shard of a side
    /// table that contended acquires also write.
    #[cfg(all(feature = "profile", not(any(feature = "loom", feature = "shuttle"))))]
    #[must_use]
    pub fn profile(&self) -> crate::Profile {
        profile::read(self.key())
    }

    /// Starts this semaphore's profile over (feature `profile`): the counts go to zero and
    /// the wait histogram empties.
    #[cfg(all(feature = "profile", not(any(feature = "loom", feature = "shuttle"))))]
    pub fn reset_profile(&self) {
        profile::forget(self.key());
    }

    /// The park-table key: this semaphore's address.
    pub(crate) fn key(&self) -> usize {
        core::ptr::from_ref(self).addr()
    }

    /// Takes `n` permits or reports why not, parking as long as needed.
    ///
    /// The fast path is `try_acquire`'s: the permits are taken with no spinning and no
    /// park-table call whenever they are free. Sharing it leaves no separate fast-path test
    /// whose every mutation only costs time.
    #[inline]
    fn acquire_n(&self, n: usize) -> Result<(), AcquireError> {
        match self.try_acquire_n(n) {
            Ok(()) => Ok(()),
            // Without a deadline the slow path fails only when the semaphore is closed.
            Err(TryAcquireError::NoPermits) => {
                self.acquire_slow(n, None).map_err(|_| AcquireError::Closed)
            }
            Err(e) => Err(blocking_error(e)),
        }
    }

    /// Takes `n` permits, waiting until the deadline that `deadline` computes (`None`: no
    /// deadline). The clock is read only once the fast path has failed.
    #[inline]
    fn acquire_timed(
        &self,
        n: usize,
        deadline: impl FnOnce() -> Option<Instant>,
    ) -> Result<(), TryAcquireError> {
        match self.try_acquire_n(n) {
            Err(TryAcquireError::NoPermits) => self.acquire_slow(n, deadline()),
            other => other,
        }
    }

    /// Takes `n` permits if they are available now.
    #[inline]
    fn try_acquire_n(&self, n: usize) -> Result<(), TryAcquireError> {
        self.try_acquire_loop::<false>(n)
    }

    /// `try_acquire_n` on a word that has `CLOSED` or `FIFO` set: the same checks, in the
    /// same order, with closed first and, under `FIFO`, no permit taken while threads are
    /// parked. Out of line, so the modes without `FIFO` pay nothing for it.
    #[cold]
    #[inline(never)]
    fn try_acquire_guarded(&self, n: usize) -> Result<(), TryAcquireError> {
        note_guarded(self.key());
        self.try_acquire_loop::<true>(n)
    }

    /// The loop of `try_acquire_n`. Unguarded, one test sends a word with `CLOSED` or `FIFO`
    /// set to the guarded loop, which checks both.
    #[inline(always)]
    fn try_acquire_loop<const GUARDED: bool>(&self, n: usize) -> Result<(), TryAcquireError> {
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            if !GUARDED && s & CLOSED_OR_FIFO != 0 {
                return self.try_acquire_guarded(n);
            }
            // Only the guarded loop sees `CLOSED` or `FIFO`.
            if GUARDED && s & CLOSED != 0 {
                // Acquire: pairs with `close`'s Release.
                fence(Ordering::Acquire);
                return Err(TryAcquireError::Closed);
            }
            if n > Self::MAX_PERMITS {
                return Err(TryAcquireError::TooLarge { requested: n });
            }
            if n == 0 {
                return Ok(());
            }
            // Under `FIFO` a request that fits still waits for the parked ones.
            let free = if GUARDED { may_take(s, n) } else { fits(s, n) };
            if !free {
                return Err(TryAcquireError::NoPermits);
            }
            match self.take(s, n) {
                Ok(_) => return Ok(()),
                Err(now) => s = now,
            }
        }
    }

    /// Takes `n` permits (`0 < n <= permits in s`) if the state word is still `s`.
    #[inline]
    fn take(&self, s: usize, n: usize) -> Result<usize, usize> {
        #[cfg(feature = "broken_sema")]
        if self.flaw == Some(Flaw::OverIssue) {
            return flaw::over_issue_take(&self.state, s, n, ONE);
        }
        // Acquire: pairs with the Release of the `try_add_permits` CAS that put the permits
        // into the word, so the previous holders' writes happen-before this holder's.
        self.state.compare_exchange_weak(
            s,
            s - n * ONE,
            self.permit_ordering(Ordering::Acquire),
            Ordering::Relaxed,
        )
    }

    /// The ordering of a CAS that moves a permit: `correct`, unless this semaphore runs with
    /// the `RelaxedOrdering` flaw.
    #[inline(always)]
    fn permit_ordering(&self, correct: Ordering) -> Ordering {
        #[cfg(feature = "broken_sema")]
        if self.flaw == Some(Flaw::RelaxedOrdering) {
            return flaw::relaxed_ordering();
        }
        correct
    }

    /// The ordering of a release's CAS, which replaces the word `s`: `Release`, unless this
    /// semaphore runs with a flaw that weakens it.
    #[inline(always)]
    fn release_ordering(&self, s: usize) -> Ordering {
        #[cfg(feature = "broken_sema")]
        if flaw::is(self.flaw, Flaw::RelaxedWhenWaited) {
            return flaw::relaxed_when_waited(s, WAITERS, Ordering::Release);
        }
        let _ = s;
        self.permit_ordering(Ordering::Release)
    }

    /// The slow path of every waiting acquire of `n` permits (`0 < n <= MAX_PERMITS`): take
    /// them if they are free (barging), give up once `deadline` has passed, spin while nobody
    /// waits, set `WAITERS`, park, and start over when woken. Fails with `Closed` or (only
    /// with a deadline) `TimedOut`.
    #[cold]
    fn acquire_slow(&self, n: usize, deadline: Option<Instant>) -> Result<(), TryAcquireError> {
        let mut rec = profile::Acquire::start();
        let result = self.acquire_contended(n, deadline, &mut rec);
        rec.finish(
            self.key(),
            match result {
                Ok(()) => profile::Outcome::Acquired,
                Err(TryAcquireError::Closed) => profile::Outcome::Closed,
                Err(_) => profile::Outcome::TimedOut,
            },
        );
        result
    }

    /// `acquire_slow`'s loop, telling `rec` (the contention profile's hooks) what it does.
    #[inline(always)]
    fn acquire_contended(
        &self,
        n: usize,
        deadline: Option<Instant>,
        rec: &mut profile::Acquire,
    ) -> Result<(), TryAcquireError> {
        let mut spin = SpinWait::new();
        // Set when an unpark chose this thread, until it has taken its permits or passed the
        // wake-up on.
        let mut woken = false;
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            if s & CLOSED != 0 {
                // Acquire: pairs with `close`'s Release (also for a thread `close` woke).
                fence(Ordering::Acquire);
                return Err(TryAcquireError::Closed);
            }

            // The permits are free: take them, even if others are parked (unless the
            // semaphore is `FIFO`), and even if the deadline has passed (a zero timeout still
            // takes what is free now).
            if may_take(s, n) {
                match self.take(s, n) {
                    Ok(_) => return Ok(()),
                    Err(now) => s = now,
                }
                continue;
            }

            if woken {
                // An unpark chose this thread for permits it does not find: a barger took
                // them, or they were forgotten. Smaller requests behind it may fit what is
                // left, and the release that woke this thread counted on it to take them:
                // pass the wake-up on before parking again or giving up.
                woken = false;
                rec.woken();
                self.pass_on(s);
            }

            if deadline.is_some_and(|d| d <= now()) {
                return Err(TryAcquireError::TimedOut);
            }

            if s & WAITERS == 0 {
                // Nobody is parked (and the permits do not fit): they may come back soon, so
                // spin a little first.
                if spin.spin() {
                    rec.spun();
                    s = self.state.load(Ordering::Relaxed);
                    continue;
                }
                // Announce that a thread is about to park, so releases take the slow path.
                // `WAITERS` is clear here, so adding it sets it; `s | WAITERS` would be the
                // same number as `s ^ WAITERS`, an equivalent mutant for `cargo mutants`.
                // Under `FIFO` the parking thread's `validate` sets it instead, under the
                // lock that queues the thread: an announcer not yet queued would otherwise
                // send a request that fits, arriving after it, to sleep ahead of it.
                if self.announces_before_park(s)
                    && let Err(now) = self.state.compare_exchange_weak(
                        s,
                        s + WAITERS,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    )
                {
                    s = now;
                    continue;
                }
            }

            rec.parked();
            match self.park(n, deadline) {
                ParkResult::Unparked(token) => {
                    #[cfg(feature = "broken_sema")]
                    if flaw::is(self.flaw, Flaw::TimeoutLeak) && flaw::timeout_leak(deadline, now())
                    {
                        return Err(TryAcquireError::TimedOut);
                    }
                    // Handed over: the permits are this thread's, also if its deadline has
                    // passed or the semaphore closed since (the handoff came first). The
                    // releaser's writes, and those of every thread whose permits it took
                    // from the word (its Acquire CAS), happen-before this return: the park
                    // table's wake carries the edge from the releaser.
                    if token == HANDED {
                        rec.handed();
                        return Ok(());
                    }
                    woken = true;
                }
                // The deadline passed while this thread was still queued: no unpark chose
                // it, so it owes nobody a wake-up, and `timed_out` has cleared `WAITERS` if
                // it was the last waiter. Under `FIFO` it may have been the head that held
                // up the requests behind it: they may fit the free permits now.
                ParkResult::TimedOut => {
                    self.after_timeout();
                    return Err(TryAcquireError::TimedOut);
                }
                ParkResult::Invalid => {}
            }
            spin.reset();
            s = self.state.load(Ordering::Relaxed);
        }
    }

    /// Whether an acquirer about to park on the word `s` announces itself with `WAITERS`
    /// before it takes the bucket lock: always without `FIFO`; under `FIFO` never (its
    /// `validate` sets the bit, see `fifo_park_word`).
    fn announces_before_park(&self, s: usize) -> bool {
        #[cfg(feature = "broken_sema")]
        if flaw::is(self.flaw, Flaw::FifoEarlyAnnounce) {
            return true;
        }
        s & FIFO == 0
    }

    /// `park`'s `validate` for a request of `n` permits, under the bucket lock: whether this
    /// thread may be queued on the word as it is now (`may_park`; under `FIFO`
    /// `fifo_park_word`, whose `WAITERS` this sets).
    fn may_queue(&self, n: usize) -> bool {
        // Relaxed: under the bucket lock, which every clear of `WAITERS` also holds; the
        // permits are taken (after an `Invalid`) with `take`'s own Acquire CAS.
        let mut s = self.state.load(Ordering::Relaxed);
        if s & FIFO == 0 {
            return may_park(s, n);
        }
        loop {
            let Some(queued) = fifo_park_word(s, n) else {
                return false;
            };
            if queued == s {
                return true;
            }
            // Relaxed: the bit orders nothing by itself; a release that adds permits outside
            // the lock either lands first (and this sees them) or sees the bit and takes the
            // lock, which queues this thread before the release looks at the queue.
            match self
                .state
                .compare_exchange_weak(s, queued, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
    }

    /// After a `FIFO` waiter timed out: if threads are still parked and permits are free,
    /// hand them to the requests now at the head that they satisfy.
    fn after_timeout(&self) {
        let s = self.state.load(Ordering::Relaxed);
        if s & FIFO != 0 && s & WAITERS != 0 && s >= ONE {
            // Hands over nothing of its own, so nothing can be refused.
            let _ = self.hand_over(0, None);
        }
    }

    /// Hands on the wake-up of a thread that was woken for permits it did not take, when the
    /// word `s` shows permits free and threads parked.
    fn pass_on(&self, s: usize) {
        if s & WAITERS != 0 && s >= ONE {
            self.unpark_waiters(false);
        }
    }

    /// Parks this thread, which requests `n` permits, until a release or `close` unparks it
    /// or `deadline` passes, unless, when the bucket is locked, the word no longer says it
    /// may park.
    fn park(&self, n: usize, deadline: Option<Instant>) -> ParkResult {
        // Runs under the bucket lock, which every clear of WAITERS also holds, so a clear
        // either happened before (and this sees it) or happens after this thread is queued
        // (and the clearing unpark finds it).
        #[cfg(feature = "broken_sema")]
        let stale = flaw::is(self.flaw, Flaw::StaleValidate).then(|| {
            let seen = self.state.load(Ordering::Relaxed);
            flaw::stale_validate_gap();
            seen
        });
        let validate = || {
            #[cfg(feature = "broken_sema")]
            if let Some(seen) = stale {
                if seen & FIFO == 0 {
                    return may_park(seen, n);
                }
                return flaw::stale_fifo_queue(&self.state, fifo_park_word(seen, n), WAITERS);
            }
            self.may_queue(n)
        };
        let timed_out = |_, was_last| self.leave_queue(was_last);
        // SAFETY:
        // - `key` is this semaphore's own address, which only this semaphore parks on;
        // - `validate` and `timed_out` run under the bucket lock: relaxed loads, comparisons
        //   and a compare-exchange loop (`may_queue`), and at most one atomic RMW
        //   (`leave_queue`), none of which can unwind or call into the park table;
        // - `before_sleep` does nothing;
        // - this is not a signal handler.
        unsafe {
            park(
                self.key(),
                validate,
                || {},
                timed_out,
                ParkToken(n),
                deadline,
            )
        }
    }

    /// `park`'s `timed_out` callback: this thread's deadline passed and it left the queue,
    /// the last thread parked on this semaphore if `was_last`; only then does `WAITERS` go
    /// (another waiter still needs the releases to take the slow path).
    fn leave_queue(&self, was_last: bool) {
        if was_last {
            // Relaxed: this runs under the bucket lock, as every `validate` does.
            self.state.fetch_and(!WAITERS, Ordering::Relaxed);
        }
    }

    /// Hands `own` permits (a release's, not yet in the word) together with the free ones to
    /// the parked requests they satisfy, in queue order, unparking each with `HANDED`; under
    /// `FIFO` the first request that does not fit stops the walk (the ones behind it wait for
    /// it). What is left of `own` goes into the count, and `WAITERS` goes if nobody is left
    /// parked. `Err` if that count would pass `MAX_PERMITS`: those permits are refused (the
    /// ones handed over were delivered).
    ///
    /// `turn`: this handoff is an `Eventual` fairness turn taken at that clock reading, spent
    /// only if it unparks a thread.
    #[cold]
    fn hand_over(&self, own: usize, turn: Option<u64>) -> Result<(), AddPermitsError> {
        // This release's permits not handed over yet, and the permits handed over in all.
        let own = core::cell::Cell::new(own);
        let handed = core::cell::Cell::new(0);
        let mut refused = None;
        let filter = |token: ParkToken| self.hand_to(&own, &handed, token.0);
        let callback = |result: UnparkResult| {
            let back = own.get();
            #[cfg(feature = "broken_sema")]
            let back = if self.flaw == Some(Flaw::HandoffDoubleCount) {
                flaw::handoff_double_count(back, handed.get())
            } else {
                back
            };
            refused = self.deposit(back, self.no_waiter_left(&result)).err();
            if result.unparked_threads == 0 {
                return DEFAULT_UNPARK_TOKEN;
            }
            if let Some(now) = turn {
                self.spend_turn(now);
            }
            HANDED
        };
        // SAFETY:
        // - `key` is this semaphore's own address, which only this semaphore parks on;
        // - `filter` and `callback` run under the bucket lock: relaxed loads, compare-exchange
        //   loops on the state word, a load and a store of the timer word (`spend_turn`), and
        //   arithmetic that cannot overflow (`hand_to`, `deposit` check it, `next_timer`
        //   masks), none of which can unwind or call into the park table;
        // - this is not a signal handler.
        unsafe { unpark_filter(self.key(), filter, callback) };
        refused.map_or(Ok(()), Err)
    }

    /// `hand_over`'s filter for a parked request of `want` permits, with `own` of the
    /// release's permits not yet handed over: unpark it (taking from the word what `own` does
    /// not cover) if they satisfy it, else pass over it or stop (`handoff_op`).
    fn hand_to(
        &self,
        own: &core::cell::Cell<usize>,
        handed: &core::cell::Cell<usize>,
        want: usize,
    ) -> FilterOp {
        loop {
            // Relaxed: under the bucket lock; the permits it uses are taken with the Acquire
            // CAS below.
            let s = self.state.load(Ordering::Relaxed);
            let op = handoff_op(s, own.get(), want);
            if op != FilterOp::Unpark {
                return op;
            }
            let from_word = want.saturating_sub(own.get());
            // Acquire: pairs with the Release of the add (`add`, `deposit`) that put these
            // permits into the word, so their last holders' writes happen-before this
            // thread's unpark of the waiter, and so before the waiter's return.
            if from_word != 0
                && self
                    .state
                    .compare_exchange_weak(
                        s,
                        s - from_word * ONE,
                        self.permit_ordering(Ordering::Acquire),
                        Ordering::Relaxed,
                    )
                    .is_err()
            {
                continue;
            }
            own.set(own.get() - (want - from_word));
            handed.set(handed.get() + want);
            return op;
        }
    }

    /// Adds `n` permits to the count (refusing them, count untouched, if it would pass
    /// `MAX_PERMITS`) and, with `clear`, clears `WAITERS`: the end of a handing-over release,
    /// under the bucket lock.
    fn deposit(&self, n: usize, clear: bool) -> Result<(), AddPermitsError> {
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            let available = s >> FLAG_BITS;
            let refused = n > Self::MAX_PERMITS - available;
            let added = if refused { s } else { s + n * ONE };
            let new = if clear { added & !WAITERS } else { added };
            // Release: pairs with the Acquire of the CAS that takes these permits (`take`, or
            // a later `hand_to`). Clearing `WAITERS` needs no ordering of its own: it happens
            // under the bucket lock, as every `validate` does.
            match self.state.compare_exchange_weak(
                s,
                new,
                self.release_ordering(s),
                Ordering::Relaxed,
            ) {
                Ok(_) if refused => return Err(AddPermitsError::new(available, n)),
                Ok(_) => return Ok(()),
                Err(now) => s = now,
            }
        }
    }

    /// Unparks, in queue order, the parked threads whose requests fit the permits free when
    /// the bucket is locked (or, with `all`, every parked thread); clears `WAITERS` if none
    /// is left parked.
    #[cold]
    fn unpark_waiters(&self, all: bool) {
        // The permits not yet promised to a thread this call woke, read under the lock at
        // the first parked thread.
        let mut left = None;
        let filter = |token: ParkToken| {
            if all {
                return FilterOp::Unpark;
            }
            // Relaxed: under the bucket lock; the woken thread takes its permits with its own
            // Acquire CAS.
            let left = left.get_or_insert_with(|| self.state.load(Ordering::Relaxed) >> FLAG_BITS);
            self.wake_if_fits(left, token.0)
        };
        let callback = |result: UnparkResult| {
            if self.no_waiter_left(&result) {
                // Relaxed: this runs under the bucket lock, and so does every `validate`,
                // which the lock orders before or after this clear.
                self.state.fetch_and(!WAITERS, Ordering::Relaxed);
            }
            DEFAULT_UNPARK_TOKEN
        };
        // SAFETY:
        // - `key` is this semaphore's own address, which only this semaphore parks on;
        // - `filter` and `callback` run under the bucket lock: a relaxed load, counter
        //   arithmetic that cannot overflow (`wake_if_fits`), and one atomic RMW, none of which
        //   can unwind or call into the park table;
        // - this is not a signal handler.
        unsafe { unpark_filter(self.key(), filter, callback) };
    }

    /// The unpark filter's decision for a parked request of `want` permits when `left`
    /// permits are not yet promised to a thread woken by this call: wake it if it fits (and
    /// promise it those permits), else pass over it to the smaller requests behind it; stop
    /// once nothing is left (every parked request is for at least one permit).
    fn wake_if_fits(&self, left: &mut usize, want: usize) -> FilterOp {
        if *left == 0 {
            return FilterOp::Stop;
        }
        if want <= *left {
            *left -= want;
            return FilterOp::Unpark;
        }
        #[cfg(feature = "broken_sema")]
        if self.flaw == Some(Flaw::WeightedLostWakeup) {
            return flaw::weighted_lost_wakeup();
        }
        FilterOp::Skip
    }

    /// Whether an unpark left no thread parked on this semaphore, so `WAITERS` must go.
    fn no_waiter_left(&self, result: &UnparkResult) -> bool {
        #[cfg(feature = "broken_sema")]
        if self.flaw == Some(Flaw::LostWaiters) {
            return flaw::lost_waiters_clears(result);
        }
        !result.have_more_threads
    }
}

/// Whether `n` more permits fit the word `s` without passing `MAX_PERMITS`: `Err` naming
/// the count and the amount if not.
#[inline]
fn room(s: usize, n: usize) -> Result<(), AddPermitsError> {
    let available = s >> FLAG_BITS;
    if n > Semaphore::MAX_PERMITS - available {
        return Err(AddPermitsError::new(available, n));
    }
    Ok(())
}

/// What a handing-over release does with a parked request of `want` permits when `own` of
/// its permits are not yet handed over and the word is `s`: unpark it if `own` and the free
/// permits satisfy it; otherwise stop under `FIFO` (the head holds up the rest) or when
/// nothing is left, and pass over it (to a smaller request behind) in the other modes. A
/// closed semaphore hands nothing over (`close` is waking every waiter).
fn handoff_op(s: usize, own: usize, want: usize) -> FilterOp {
    if s & CLOSED != 0 {
        return FilterOp::Stop;
    }
    let free = own + (s >> FLAG_BITS);
    if want <= free {
        FilterOp::Unpark
    } else if s & FIFO != 0 || free == 0 {
        FilterOp::Stop
    } else {
        FilterOp::Skip
    }
}

/// Whether the word `s` holds at least `n` free permits.
#[inline(always)]
fn fits(s: usize, n: usize) -> bool {
    s >> FLAG_BITS >= n
}

/// The error of a blocking acquire for the fast path's failure `e` (never `NoPermits`, which
/// sends it to the slow path).
fn blocking_error(e: TryAcquireError) -> AcquireError {
    match e {
        TryAcquireError::TooLarge { requested } => AcquireError::TooLarge { requested },
        _ => AcquireError::Closed,
    }
}

impl fmt::Debug for Semaphore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.state.load(Ordering::Relaxed);
        let mut d = f.debug_struct("Semaphore");
        d.field("permits", &(s >> FLAG_BITS))
            .field("waiters", &(s & WAITERS != 0))
            .field("closed", &(s & CLOSED != 0))
            .field("fairness", &self.fairness())
            .field("state", &format_args!("{s:#x}"));
        #[cfg(feature = "broken_sema")]
        d.field("flaw", &self.flaw);
        d.finish()
    }
}

// What a user may rely on in every build: a semaphore can be shared and used across threads
// and across `catch_unwind`, and an owned permit can be moved to and kept by any thread.
const _: () = {
    const fn shareable<T: Send + Sync + std::panic::UnwindSafe + std::panic::RefUnwindSafe>() {}
    const fn movable<T: Send + Sync + 'static>() {}
    shareable::<Semaphore>();
    movable::<OwnedPermit>();
};

// The real build keeps the semaphore to 16 bytes: the state word and the fairness timer (two
// words on 64-bit targets; on 32-bit ones the timer's `u64` alignment pads the state word to
// 8 bytes). The flawed build adds a field, and the checkers' atomics carry their own
// bookkeeping.
#[cfg(not(any(feature = "broken_sema", feature = "loom", feature = "shuttle")))]
const _: () = assert!(size_of::<Semaphore>() == 16);

// A plain `#[cfg(test)]` on the module, which `cargo mutants` recognizes and skips (it does
// not mutate tests; it did not recognize `cfg(all(test, ...))`); the backend condition is a
// second attribute.
#[cfg(test)]
#[cfg(not(any(feature = "loom", feature = "shuttle")))]
mod tests {
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
}
