//! The executable specification: the semaphore as a sequential model, one per fairness mode,
//! and the linearizability check of recorded histories against it.
//!
//! # The model
//!
//! A [`Spec`] is the semaphore's whole observable state: the free permits, whether it is
//! closed, the mocked clock, the `Eventual` timer, and the blocked requests in the park
//! table's order, each with its size, its deadline, whether its thread is awake (unparked and
//! not parked again) and whether permits have been handed to it. Every operation is a step of
//! that state; what the docs leave open is a free choice of the model, so a step may have
//! several successors:
//!
//! - **A waiting call has two events.** Its *arrival* either completes it at once (closed,
//!   a request of zero, permits it may take, or a deadline already past) or queues it; its
//!   *completion* returns a queued request's result: `Ok` once it may take its permits (or
//!   they were handed to it), `Closed` once the semaphore is closed (unless handed), `TimedOut`
//!   once the clock has reached its deadline (unless handed). The implementation's arrival is
//!   the park table's insertion, under the bucket lock (`validate` returning true): under
//!   `Fifo` that is what orders a request against the others and makes the `try_` forms fail.
//!   A deadline that passes while the call is on its way to the table may still queue it.
//! - **A thread's own moves** happen between the calls: a parked request whose size the free
//!   permits cover may be woken (outside `Fifo`), an awake one they do not cover parks again at
//!   the back of the table, and a timed-out one leaves the table before it hands on what is
//!   free (under `Fifo`) and returns.
//! - **`Fifo`**: a request takes permits at arrival only if nobody is queued; every change
//!   that can let the head through (a release, a timed-out head leaving) hands permits to the
//!   head while it fits, in order, and stops at the first that does not fit. A head whose
//!   request can never be met blocks the requests behind it for as long as it waits (this
//!   differs from Go's semaphore, which never queues a request larger than its size; here a
//!   semaphore has no fixed size: permits can be added at any time).
//! - **`Eventual`**: a queued request that fits may complete at any time (barging is free).
//!   Where the timer is known (shuttle: it draws from a fixed seed and reads the mocked
//!   clock), a release that finds a parked request runs it: the first starts it, one past the
//!   deadline hands its permits over to the parked requests they satisfy (in the table's
//!   order, passing over those that do not fit) and spends the turn only if it unparked one.
//!   Elsewhere the handoff is a free choice.
//! - **`Barging`**: as `Eventual` without the handoff; who gets released permits is any
//!   request that fits.
//! - `release_fair` hands over to the parked requests (`Fifo`'s walk under `Fifo`, the
//!   passing walk otherwise; a woken request not parked again is not reached);
//!   `forget_permits(k)` takes `min(k, free)`; an add past `Semaphore::MAX_PERMITS` is refused
//!   with the count untouched; `parked_threads` is exactly the requests in the table.
//!
//! # The check
//!
//! A [`History`] is the list of calls of one run, each with its thread, what it returned,
//! the ticks at which it started and ended (which order calls of different threads where
//! precedence is real time), and, under the checkers, what it did in the park table.
//! [`History::linearizable`] searches for an order of the events that respects precedence and
//! that the model accepts step by step (the Wing–Gong search with Lowe's memoization of
//! visited (linearized set, state) pairs); each release's wake-ups are bounded on the way
//! (promise 7), and each call's table cost is checked first (promise 14, a zero timeout never
//! parks). [`History::quiescent`] additionally places quiescence points: every call that had
//! returned before one is linearized before it, the calls still waiting then have arrived and
//! not completed, and the model must have exactly them parked, none of them able to complete:
//! a lost wakeup or a stranded head fails there. A search that succeeds returns the protocol
//! situations ([`SITUATIONS`]) its linearization passed through.

#![allow(dead_code)]

use std::collections::HashSet;

use parksema::Fairness;

/// The largest number of permits, as `Semaphore::MAX_PERMITS`.
pub(crate) const MAX: usize = usize::MAX >> 3;

/// What a waiting call returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Wait {
    Ok,
    Closed,
    TimedOut,
    /// A `try_` form found too few permits (or, under `Fifo`, someone queued).
    NoPermits,
    TooLarge,
}

/// One call and what it returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Call {
    /// A blocking or timed acquire of `n` (deadline on the mocked clock, in microseconds;
    /// `Some(0)` for a zero duration; `None`: no deadline).
    Acquire {
        n: usize,
        deadline: Option<u64>,
        result: Wait,
    },
    /// A `try_` acquire of `n`.
    TryAcquire {
        n: usize,
        result: Wait,
    },
    /// A plain release of `n` (a guard dropped, `add_permits`, `try_add_permits`); `ok`:
    /// whether it was accepted.
    Release {
        n: usize,
        ok: bool,
    },
    /// `release_fair` of `n`.
    ReleaseFair {
        n: usize,
    },
    /// `forget_permits(asked)`, which returned `taken`.
    Forget {
        asked: usize,
        taken: usize,
    },
    Close,
    /// `available_permits()` returned `seen`.
    Available {
        seen: usize,
    },
    /// `is_closed()` returned `seen`.
    IsClosed {
        seen: bool,
    },
    /// `advance_clock` by `micros`.
    Advance {
        micros: u64,
    },
    /// `parked_threads()` returned `seen`: under `Fifo`, while open, exactly the queued
    /// requests (each is in the park table from its arrival until it is handed its permits or
    /// leaves); otherwise at most them (a woken request that has not parked again is queued
    /// here and not in the table).
    Parked {
        seen: usize,
    },
    /// A guard was split, merged or forgotten: nothing changes in the semaphore (a forgotten
    /// guard's permits are gone), recorded so that coverage can see it race the others.
    Guard,
}

impl Call {
    /// Whether the call has two events (arrival and completion).
    fn waits(&self) -> bool {
        matches!(self, Call::Acquire { .. })
    }
}

/// A blocked request.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Blocked {
    /// The call's index in the history.
    id: usize,
    n: usize,
    deadline: Option<u64>,
    /// Its thread was unparked (by a wake-up its request fitted, or by `close`) and has not
    /// parked again: it is not in the park table, so no handoff reaches it.
    awake: bool,
}

/// The `Eventual` fairness timer as the model knows it. Under shuttle the implementation's
/// timer is deterministic (its generator starts from a fixed seed and reads the mocked
/// clock), so the model can run the same timer and hold the mode to its promises: past the
/// deadline, a release that finds a parked request its permits satisfy hands over (promise
/// 29), and only a release that handed something spends the turn (promise 31). Its draws
/// restate `src/semaphore/timer.rs`'s generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Timer {
    /// Not started: the first release that finds `WAITERS` starts it, and hands nothing.
    Idle,
    /// The next turn is due once the clock reaches `deadline`; `seed` is the generator's
    /// state that drew it.
    Set { deadline: u64, seed: u32 },
    /// Not known (real threads, loom's unordered clock, or since two releases, or a release
    /// and a clock advance, ran at the same time and either may have read the timer first):
    /// a release may hand over or not.
    Unknown,
}

/// The timer's first generator state (`src/semaphore/timer.rs`).
const TIMER_SEED: u32 = 0x9e37_79b9;
/// The longest fairness interval, in microseconds.
const FAIR_WINDOW_US: u64 = 1000;

impl Timer {
    /// When the next turn is due (`u64::MAX` if not known).
    fn deadline(self) -> u64 {
        match self {
            Timer::Set { deadline, .. } => deadline,
            _ => u64::MAX,
        }
    }

    /// The timer after a turn taken (or the timer started) at `now`: the generator stepped
    /// (xorshift32, 13, 17, 5), the deadline `now` plus its draw modulo the window plus one.
    fn next(self, now: u64) -> Timer {
        let seed = match self {
            Timer::Set { seed, .. } => {
                let mut x = seed;
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x
            }
            _ => TIMER_SEED,
        };
        Timer::Set {
            deadline: now + u64::from(seed) % (FAIR_WINDOW_US + 1),
            seed,
        }
    }
}

/// What ran beside a call, where that changes what the call may do.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Beside {
    /// No other plain release and no clock advance: an `Eventual` release reads the timer
    /// and the clock as the model has them.
    pub(crate) timer_alone: bool,
    /// A `close`: a handoff walk checks `CLOSED` at each parked request, so a close that
    /// lands during the walk stops it after the handoffs already made.
    pub(crate) close: bool,
    /// A call that reads or takes from the count without the bucket lock (`available_permits`,
    /// a `try_` acquire, `forget_permits`): a handoff walk takes each handed request's
    /// permits from the count one request at a time, under the bucket lock, so such a call
    /// may land between two of them.
    pub(crate) observed: bool,
    /// Another thread's plain release: it adds its permits to the count with a CAS before it takes any
    /// bucket lock, so the add may land between two steps of a handoff walk, which then
    /// hands to a request behind one it passed over before the add (what the walk hands is
    /// then not the model's walk at either count).
    pub(crate) added: bool,
}

/// The model's state.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Spec {
    mode: Fairness,
    permits: usize,
    closed: bool,
    clock: u64,
    /// Queued requests not yet handed their permits, in arrival order.
    queue: Vec<Blocked>,
    /// Calls (by index) that were handed their permits and have not completed yet.
    handed: Vec<usize>,
    /// Calls (by index) whose arrival completed them: their completion event only returns.
    done_at_arrival: Vec<usize>,
    /// Where precedence is program order only (loom), the clock every advance of the run
    /// reaches: a thread may read the mocked clock moved by another thread that its atomics
    /// do not yet show (the clock orders nothing), so its deadline may have passed for it
    /// before the advance is linearized.
    horizon: Option<u64>,
    /// The `Eventual` timer (`Unknown` in the other modes, where nothing reads it).
    timer: Timer,
    /// A handoff walk was cut short by a `close` that landed during it: the close is the
    /// next step.
    pending_close: bool,
    /// Calls (by index) whose deadline passed and that have left the park table (removed
    /// from the queue under the bucket lock), not yet returned: they return `TimedOut`, and
    /// under `Fifo` hand what is free to the head first.
    left: Vec<usize>,
    /// A handoff walk under way, seen from beside it (`Beside::observed`): whether it is
    /// `Fifo`'s, and how many of the releasing call's own permits it has not handed yet.
    /// Those are not in the count yet (a handing-over release deposits what is left only at
    /// the end), so a look at the count sees `permits - own`. Only the calls that take no
    /// bucket lock may run until the walk ends (`finish_walk`).
    walk: Option<(bool, usize)>,
}

impl Spec {
    /// A semaphore of `permits` in mode `mode`, the clock at 0.
    pub(crate) fn new(permits: usize, mode: Fairness) -> Spec {
        Spec {
            mode,
            permits,
            closed: false,
            clock: 0,
            queue: Vec::new(),
            handed: Vec::new(),
            done_at_arrival: Vec::new(),
            left: Vec::new(),
            horizon: None,
            timer: Timer::Unknown,
            pending_close: false,
            walk: None,
        }
    }

    /// The permits a look at the count sees: all of them but a walk's own undelivered ones.
    fn visible(&self) -> usize {
        self.permits - self.walk.map_or(0, |(_, own)| own)
    }

    /// The state once the walk under way has ended: the rest of it made at once.
    fn finish_walk(&self) -> Spec {
        let (fifo, _) = self.walk.expect("a walk is under way");
        let mut next = self.clone();
        next.walk = None;
        next.hand_overs(fifo, false, None)
            .pop()
            .expect("a walk ends in a state")
    }

    /// Every state a plain `Eventual` release of permits already added to `next` can lead
    /// to. With the timer known and read alone: while a request is parked the release finds
    /// `WAITERS` and consults the timer (starting it, or, past its deadline, handing its
    /// permits over and spending the turn if that unparked anyone); with nobody parked it
    /// may also take the fast path (`WAITERS` can still be set by a thread about to park, or
    /// by a wake-up whose clear is under way). Otherwise the handoff is a free choice.
    fn eventual_release(&self, next: Spec, beside: Beside) -> Vec<Spec> {
        let timer = if beside.timer_alone {
            self.timer
        } else {
            Timer::Unknown
        };
        let mut outs = Vec::new();
        // The release's own permits, for a walk seen from beside it.
        let own = beside.observed.then(|| next.permits - self.permits);
        match timer {
            Timer::Unknown => {
                let mut plain = next.clone();
                plain.timer = Timer::Unknown;
                // Where every clock reading of the run is known to stay below the first
                // deadline the timer can draw (loom's horizon: all the run's advances), no
                // turn is ever due, whichever timer word a release reads (a stale one is the
                // unstarted word or that first deadline): it hands nothing.
                if self
                    .horizon
                    .is_some_and(|h| h < Timer::Idle.next(0).deadline())
                {
                    return vec![plain];
                }
                outs.extend(
                    plain
                        .hand_overs(false, beside.close, own)
                        .into_iter()
                        .filter(|h| *h != plain),
                );
                outs.push(plain);
                return outs;
            }
            Timer::Idle => {
                let mut started = next.clone();
                started.timer = Timer::Idle.next(self.clock);
                outs.push(started);
            }
            Timer::Set { deadline, .. } if deadline <= self.clock => {
                // The turn is spent at the walk's end if it unparked anyone: a walk seen
                // under way has the timer its end will have (nothing reads the timer before).
                let whole = next
                    .hand_overs(false, false, None)
                    .pop()
                    .expect("a walk ends in a state");
                let spends = whole.handed.len() > next.handed.len();
                for mut handed in next.hand_overs(false, beside.close, own) {
                    let spent = if handed.walk.is_some() {
                        spends
                    } else {
                        handed.handed.len() > next.handed.len()
                    };
                    if spent {
                        handed.timer = timer.next(self.clock);
                    }
                    outs.push(handed);
                }
            }
            Timer::Set { .. } => outs.push(next.clone()),
        }
        if !self.queue.iter().any(|b| !b.awake) && !outs.contains(&next) {
            outs.push(next);
        }
        outs
    }

    /// Whether a thread may find the deadline `d` passed.
    fn passed(&self, d: u64) -> bool {
        d <= self.clock || self.horizon.is_some_and(|h| d <= h)
    }

    /// Whether a running thread may take `n` now.
    fn may_take(&self, n: usize) -> bool {
        self.visible() >= n && (self.mode != Fairness::Fifo || self.queue.is_empty())
    }

    /// Every state handing permits to the parked requests can lead to, in the park table's
    /// order: under `Fifo` (or `fifo`) stopping at the first that does not fit, otherwise
    /// passing over it (and over the requests whose threads are awake, which are not in the
    /// table). The whole walk's state is the last; with `interruptible` (a `close` ran beside
    /// the call) also the state before each handoff, cut short there, with the close next;
    /// with `observed` (a call that takes no bucket lock ran beside it: the releasing call's
    /// own permits) also the state before each handoff with the rest of the walk to come.
    fn hand_overs(&self, fifo: bool, interruptible: bool, observed: Option<usize>) -> Vec<Spec> {
        let mut state = self.clone();
        if state.closed {
            return vec![state];
        }
        let mut outs = Vec::new();
        let mut i = 0;
        let mut own = observed;
        loop {
            if interruptible {
                let mut cut = state.clone();
                cut.pending_close = true;
                outs.push(cut);
            }
            if let Some(left) = own {
                let mut mid = state.clone();
                mid.walk = Some((fifo, left));
                outs.push(mid);
            }
            let mut next = None;
            while i < state.queue.len() {
                let b = &state.queue[i];
                if b.awake {
                    i += 1;
                } else if b.n <= state.permits {
                    next = Some(i);
                    break;
                } else if fifo {
                    break;
                } else {
                    i += 1;
                }
            }
            let Some(j) = next else { break };
            let b = state.queue.remove(j);
            state.permits -= b.n;
            state.handed.push(b.id);
            own = own.map(|left| left.saturating_sub(b.n));
        }
        outs.push(state);
        outs
    }

    /// Every state the arrival of call `id` can lead to.
    fn arrive(&self, id: usize, call: &Call) -> Vec<Spec> {
        let Call::Acquire {
            n,
            deadline,
            result,
        } = *call
        else {
            unreachable!("only acquires arrive")
        };
        let immediate = if self.closed {
            Some(Wait::Closed)
        } else if n > MAX {
            Some(Wait::TooLarge)
        } else if n == 0 || self.may_take(n) {
            Some(Wait::Ok)
        } else if deadline.is_some_and(|d| self.passed(d)) {
            Some(Wait::TimedOut)
        } else {
            None
        };
        let mut next = self.clone();
        match immediate {
            // A deadline that passes while the call is on its way to the table: it looked
            // at the clock before the clock moved, and queues; it times out there (or is
            // handed permits first). A zero timeout reads the clock it is measured from, so
            // it never does (its cost says whether it parked).
            Some(Wait::TimedOut) if deadline != Some(0) => {
                let mut queued = self.clone();
                queued.queue.push(Blocked {
                    id,
                    n,
                    deadline,
                    awake: false,
                });
                if result != Wait::TimedOut {
                    return vec![queued];
                }
                next.done_at_arrival.push(id);
                vec![next, queued]
            }
            Some(r) if r != result => Vec::new(),
            Some(r) => {
                if r == Wait::Ok {
                    next.permits -= n;
                }
                next.done_at_arrival.push(id);
                vec![next]
            }
            None => {
                next.queue.push(Blocked {
                    id,
                    n,
                    deadline,
                    awake: false,
                });
                vec![next]
            }
        }
    }

    /// Every state the completion of call `id` can lead to.
    fn complete(&self, id: usize, call: &Call, beside: Beside) -> Vec<Spec> {
        let Call::Acquire { n, result, .. } = *call else {
            unreachable!("only acquires complete")
        };
        let mut next = self.clone();
        if let Some(i) = next.done_at_arrival.iter().position(|&d| d == id) {
            next.done_at_arrival.remove(i);
            return vec![next];
        }
        if let Some(i) = next.left.iter().position(|&l| l == id) {
            if result != Wait::TimedOut {
                return Vec::new();
            }
            next.left.remove(i);
            if self.mode == Fifo {
                return next.hand_overs(true, beside.close, beside.observed.then_some(0));
            }
            return vec![next];
        }
        if let Some(i) = next.handed.iter().position(|&h| h == id) {
            if result != Wait::Ok {
                return Vec::new();
            }
            next.handed.remove(i);
            return vec![next];
        }
        let Some(i) = next.queue.iter().position(|b| b.id == id) else {
            return Vec::new();
        };
        let ok = match result {
            // Under `Fifo` a queued request gets permits only by a handoff.
            Wait::Ok => !self.closed && self.mode != Fifo && self.permits >= n,
            Wait::Closed => self.closed,
            Wait::TimedOut => next.queue[i].deadline.is_some_and(|d| self.passed(d)),
            Wait::NoPermits | Wait::TooLarge => false,
        };
        if !ok {
            return Vec::new();
        }
        let b = next.queue.remove(i);
        if result == Wait::Ok {
            next.permits -= b.n;
        }
        if self.mode == Fifo && i == 0 {
            return next.hand_overs(true, beside.close, beside.observed.then_some(0));
        }
        vec![next]
    }

    /// Every state the one-event call `call` can lead to.
    /// `beside`: what ran beside it.
    fn step(&self, call: &Call, beside: Beside) -> Vec<Spec> {
        let mut next = self.clone();
        match *call {
            Call::Acquire { .. } => unreachable!("acquires have two events"),
            Call::TryAcquire { n, result } => {
                let r = if self.closed {
                    Wait::Closed
                } else if n > MAX {
                    Wait::TooLarge
                } else if n == 0 {
                    Wait::Ok
                } else if self.may_take(n) {
                    next.permits -= n;
                    Wait::Ok
                } else {
                    Wait::NoPermits
                };
                if r != result {
                    return Vec::new();
                }
                vec![next]
            }
            Call::Release { n, ok } => {
                let fits = n <= MAX - self.permits;
                if fits != ok {
                    return Vec::new();
                }
                if !ok {
                    return vec![next];
                }
                next.permits += n;
                match self.mode {
                    Fifo => next.hand_overs(true, beside.close, beside.observed.then_some(n)),
                    Fairness::Eventual => self.eventual_release(next, beside),
                    _ => vec![next],
                }
            }
            Call::ReleaseFair { n } => {
                if n > MAX - self.permits {
                    return Vec::new();
                }
                next.permits += n;
                next.hand_overs(
                    self.mode == Fifo,
                    beside.close,
                    beside.observed.then_some(n),
                )
            }
            Call::Forget { asked, taken } => {
                if taken != asked.min(self.visible()) {
                    return Vec::new();
                }
                next.permits -= taken;
                vec![next]
            }
            Call::Close => {
                next.closed = true;
                next.pending_close = false;
                vec![next]
            }
            Call::Available { seen } => {
                if seen == self.visible() {
                    vec![next]
                } else {
                    Vec::new()
                }
            }
            Call::IsClosed { seen } => {
                if seen == self.closed {
                    vec![next]
                } else {
                    Vec::new()
                }
            }
            Call::Advance { micros } => {
                next.clock += micros;
                vec![next]
            }
            Call::Parked { seen } => {
                // Exactly the requests in the park table: every queued one whose thread is
                // not awake (a timed-out one is queued until it has left: `leave_moves`).
                if seen == self.queue.iter().filter(|b| !b.awake).count() {
                    vec![next]
                } else {
                    Vec::new()
                }
            }
            Call::Guard => vec![next],
        }
    }

    /// The most parked requests that `permits` free permits can satisfy at once (the smallest
    /// first): the bound on the threads one release may wake (promise 7), with every queued
    /// request counted as parked.
    fn most_satisfied(&self, permits: usize) -> usize {
        let mut sizes: Vec<usize> = self.queue.iter().map(|b| b.n).collect();
        sizes.sort_unstable();
        let mut left = permits;
        sizes
            .into_iter()
            .take_while(|&n| {
                let fits = n <= left;
                left = left.saturating_sub(n);
                fits
            })
            .count()
    }

    /// Every state in which one queued request whose deadline has passed has left the park
    /// table: a timed-out thread leaves under the bucket lock, and only later (under
    /// `Fifo`) hands what is free to the new head and returns; releases in between find it
    /// gone.
    fn leave_moves(&self) -> Vec<Spec> {
        (0..self.queue.len())
            .filter(|&i| self.queue[i].deadline.is_some_and(|d| self.passed(d)))
            .map(|i| {
                let mut next = self.clone();
                let b = next.queue.remove(i);
                next.left.push(b.id);
                next
            })
            .collect()
    }

    /// Every state one thread's wake-up or return to the table leads to: without `Fifo`
    /// (where every other wake-up is a handoff or a timeout) a parked request whose size the
    /// free permits cover may be unparked (by a release's wake-up, or by a woken thread
    /// passing one on), and an awake request they do not cover parks again, at the back of
    /// the table (its `validate`: open, fewer permits than it asks for); once closed, every
    /// parked request may be unparked (`close` sets `CLOSED` first and unparks everyone
    /// after, under the bucket lock).
    fn wake_moves(&self) -> Vec<Spec> {
        let barging = self.mode != Fifo && !self.closed;
        let mut moves = Vec::new();
        for i in 0..self.queue.len() {
            let b = &self.queue[i];
            if !b.awake && (self.closed || (barging && b.n <= self.permits)) {
                let mut next = self.clone();
                next.queue[i].awake = true;
                moves.push(next);
            } else if b.awake && barging && b.n > self.permits {
                let mut next = self.clone();
                let mut b = next.queue.remove(i);
                b.awake = false;
                next.queue.push(b);
                moves.push(next);
            }
        }
        moves
    }

    /// Whether no blocked request could complete now, and the blocked ones are exactly
    /// `waiting` (call indices): the state a quiescent run must be in.
    fn stuck_with(&self, waiting: &[usize]) -> bool {
        if !self.handed.is_empty()
            || self.pending_close
            || self.walk.is_some()
            || !self.left.is_empty()
            || (self.closed && !self.queue.is_empty())
        {
            return false;
        }
        let mut queued: Vec<usize> = self.queue.iter().map(|b| b.id).collect();
        queued.sort_unstable();
        let mut expected = waiting.to_vec();
        expected.sort_unstable();
        if queued != expected {
            return false;
        }
        self.queue.iter().all(|b| {
            let may_complete = match self.mode {
                Fifo => false,
                _ => self.permits >= b.n,
            };
            !b.awake && !may_complete && b.deadline.is_none_or(|d| d > self.clock)
        })
    }
}

use Fairness::Fifo;

/// The protocol situations a bug needs, named so that a search can say how often it reached
/// each: a set of them is a `u32` of bits, one per entry of [`SITUATIONS`] (by index). The
/// first nine come per mode, in the order Eventual, Fifo, Barging.
pub(crate) const SITUATIONS: [&str; 22] = [
    "queue of 2 (Eventual)",
    "queue of 2 (Fifo)",
    "queue of 2 (Barging)",
    "queue of 3 (Eventual)",
    "queue of 3 (Fifo)",
    "queue of 3 (Barging)",
    "head does not fit, smaller behind (Eventual)",
    "head does not fit, smaller behind (Fifo)",
    "head does not fit, smaller behind (Barging)",
    "timed head expires, a waiter behind",
    "close while a handoff is in flight",
    "release_fair with requests queued",
    "release_fair racing close",
    "release_fair racing a timeout",
    "release_fair racing a plain release",
    "a queued request out-barged",
    "refused add with requests queued",
    "forget_permits under Fifo with a queue",
    "split, merge or forget racing an acquire",
    "data read after observing closed",
    "one release wakes two or more",
    "request past MAX_PERMITS or add near it",
];

/// Indices into [`SITUATIONS`].
pub(crate) mod at {
    pub(crate) const QUEUE_2: usize = 0;
    pub(crate) const QUEUE_3: usize = 3;
    pub(crate) const HEAD_DOES_NOT_FIT: usize = 6;
    pub(crate) const TIMED_HEAD_EXPIRES: usize = 9;
    pub(crate) const CLOSE_DURING_HANDOFF: usize = 10;
    pub(crate) const FAIR_WITH_QUEUE: usize = 11;
    pub(crate) const FAIR_RACES_CLOSE: usize = 12;
    pub(crate) const FAIR_RACES_TIMEOUT: usize = 13;
    pub(crate) const FAIR_RACES_RELEASE: usize = 14;
    pub(crate) const OUT_BARGED: usize = 15;
    pub(crate) const REFUSED_WITH_QUEUE: usize = 16;
    pub(crate) const FORGET_FIFO_QUEUE: usize = 17;
    pub(crate) const GUARD_RACES_ACQUIRE: usize = 18;
    pub(crate) const READ_AFTER_CLOSED: usize = 19;
    pub(crate) const WAKES_TWO: usize = 20;
    pub(crate) const NEAR_MAX: usize = 21;
}

/// The bit of situation `i`.
pub(crate) const fn bit(i: usize) -> u32 {
    1 << i
}

fn mode_index(mode: Fairness) -> usize {
    match mode {
        Fairness::Eventual => 0,
        Fifo => 1,
        _ => 2,
    }
}

/// The situations the model's step from `before` to `after` by call `id` (`kind` of its
/// events) passes through.
fn situations_of_step(before: &Spec, id: usize, call: &Call, kind: Kind, after: &Spec) -> u32 {
    let m = mode_index(before.mode);
    let mut reached = 0;
    if kind == Kind::Arrive && after.queue.len() > before.queue.len() {
        if after.queue.len() >= 2 {
            reached |= bit(at::QUEUE_2 + m);
        }
        if after.queue.len() >= 3 {
            reached |= bit(at::QUEUE_3 + m);
        }
    }
    if let [head, behind @ ..] = &after.queue[..]
        && head.n > after.permits
        && behind.iter().any(|b| b.n < head.n)
    {
        reached |= bit(at::HEAD_DOES_NOT_FIT + m);
    }
    // A take while a queued request (not the taker) fits the permits that were free.
    let took = match (*call, kind) {
        (Call::TryAcquire { n, result }, _) => result == Wait::Ok && n > 0,
        (Call::Acquire { n, result, .. }, Kind::Arrive | Kind::Complete) => {
            result == Wait::Ok && n > 0 && after.permits < before.permits
        }
        _ => false,
    };
    if took
        && before.mode != Fifo
        && before
            .queue
            .iter()
            .any(|b| b.id != id && b.n <= before.permits)
    {
        reached |= bit(at::OUT_BARGED);
    }
    match *call {
        Call::Advance { .. }
            if before.queue.len() >= 2
                && before.queue[0]
                    .deadline
                    .is_some_and(|d| d > before.clock && d <= after.clock) =>
        {
            reached |= bit(at::TIMED_HEAD_EXPIRES);
        }
        Call::Close if !before.handed.is_empty() => reached |= bit(at::CLOSE_DURING_HANDOFF),
        Call::ReleaseFair { .. } if !before.queue.is_empty() => {
            reached |= bit(at::FAIR_WITH_QUEUE);
        }
        Call::Release { ok: false, .. } if !before.queue.is_empty() => {
            reached |= bit(at::REFUSED_WITH_QUEUE);
        }
        Call::Forget { taken, .. }
            if taken > 0 && before.mode == Fifo && !before.queue.is_empty() =>
        {
            reached |= bit(at::FORGET_FIFO_QUEUE);
        }
        _ => {}
    }
    reached
}

/// One recorded call.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Record {
    pub(crate) thread: usize,
    pub(crate) call: Call,
    /// Ticks of a clock that orders every record of the run (shuttle's one-task-at-a-time
    /// execution, or a `SeqCst` counter on real threads), when the call started and returned.
    pub(crate) start: u64,
    pub(crate) end: u64,
    /// What the call did in the park table (the calling thread's own counters, read before and
    /// after it), where the build counts it (the checkers); `None` on real threads.
    pub(crate) cost: Option<Cost>,
}

/// One call's park-table cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Cost {
    /// `park` calls that queued the thread.
    pub(crate) parks: usize,
    /// `unpark_*` calls.
    pub(crate) unpark_calls: usize,
    /// Threads those calls unparked.
    pub(crate) woken: usize,
    /// Threads those calls handed permits to (unparked with the `HANDED` token).
    pub(crate) handed: usize,
}

/// One event of the search: a call's single event, or a waiting call's arrival or
/// completion.
#[derive(Clone, Copy, Debug)]
struct Event {
    record: usize,
    kind: Kind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Single,
    Arrive,
    Complete,
}

/// A run's calls, and how precedence between them is decided.
#[derive(Clone, Debug)]
pub(crate) struct History {
    pub(crate) permits: usize,
    pub(crate) mode: Fairness,
    pub(crate) records: Vec<Record>,
    /// Real time (`start`/`end` ticks) orders calls of different threads; without it only
    /// each thread's program order does (loom: its execution order is not happens-before).
    pub(crate) real_time: bool,
    /// Whether the `Eventual` timer is the deterministic one the model can run (shuttle:
    /// fixed seed, the mocked clock, real-time order); elsewhere it is `Timer::Unknown`.
    pub(crate) exact_timer: bool,
}

/// Why a history is not linearizable, with the history.
#[derive(Debug)]
pub(crate) struct Violation(pub(crate) String);

impl History {
    fn events(&self) -> Vec<Event> {
        let mut events = Vec::new();
        for (record, r) in self.records.iter().enumerate() {
            if r.call.waits() {
                events.push(Event {
                    record,
                    kind: Kind::Arrive,
                });
                events.push(Event {
                    record,
                    kind: Kind::Complete,
                });
            } else {
                events.push(Event {
                    record,
                    kind: Kind::Single,
                });
            }
        }
        events
    }

    /// Whether record `a` must be linearized before record `b` starts.
    fn precedes(&self, a: usize, b: usize) -> bool {
        let (ra, rb) = (&self.records[a], &self.records[b]);
        if ra.thread == rb.thread {
            return ra.start < rb.start;
        }
        self.real_time && ra.end < rb.start
    }

    /// Searches for a linearization; `Ok` with the situations its witness passes through if
    /// there is one.
    pub(crate) fn linearizable(&self) -> Result<u32, Violation> {
        self.search(&[])
    }

    /// As [`linearizable`](History::linearizable), with quiescence points at the ticks
    /// `points` (increasing): at each, the calls that had started and not returned
    /// (`start <= at < end`) were all waiting, and the model must have exactly them blocked,
    /// none able to complete.
    pub(crate) fn quiescent(&self, points: &[u64]) -> Result<u32, Violation> {
        self.search(points)
    }

    /// Whether records `a` and `b` ran at the same time (their tick intervals overlap).
    fn overlap(&self, a: usize, b: usize) -> bool {
        let (ra, rb) = (&self.records[a], &self.records[b]);
        ra.start < rb.end && rb.start < ra.end
    }

    /// Whether record `r` is a call that waits (an acquire other than a zero timeout).
    fn may_wait(&self, r: usize) -> bool {
        matches!(self.records[r].call, Call::Acquire { deadline, .. } if deadline != Some(0))
    }

    /// The park-table checks on each call's own cost, where the build counts it: a call that
    /// is no waiting acquire never parks; a zero timeout never parks (promise 21); only a
    /// release, a `close` or `parked_threads` enters the table otherwise (promise 14), and a
    /// release or `close` does only while `WAITERS` may be set: while a waiting acquire runs
    /// beside it (only such a call sets the bit), or while another release or `close` that
    /// entered the table runs beside it, with such a call beside it in turn (the bit a
    /// waiter set is cleared by the release that finds nobody left to wake, when it gets to
    /// the lock; until then a second release still sees it).
    fn table_costs(&self) -> Result<(), Violation> {
        let n = self.records.len();
        let cost = |i: usize| self.records[i].cost.unwrap_or_default();
        let enters = |i: usize| {
            matches!(
                self.records[i].call,
                Call::Release { .. } | Call::ReleaseFair { .. } | Call::Close
            ) && cost(i).unpark_calls > 0
        };
        // Where precedence is program order only (loom), a release may read a `WAITERS` that
        // was set and cleared before it started, by a thread it never synchronized with (its
        // loads are relaxed, and a handing-over release takes the lock without a CAS that
        // would confirm the bit): any waiting call or entering release that started before
        // it ended can have set the bit it saw.
        let beside = |i: usize, j: usize| {
            if self.real_time {
                self.overlap(i, j)
            } else {
                self.records[j].start < self.records[i].end
            }
        };
        let mut justified: Vec<bool> = (0..n)
            .map(|i| enters(i) && (0..n).any(|w| self.may_wait(w) && beside(i, w)))
            .collect();
        loop {
            let more: Vec<usize> = (0..n)
                .filter(|&i| enters(i) && !justified[i])
                .filter(|&i| (0..n).any(|j| j != i && justified[j] && beside(i, j)))
                .collect();
            if more.is_empty() {
                break;
            }
            for i in more {
                justified[i] = true;
            }
        }
        for (i, r) in self.records.iter().enumerate() {
            let Some(cost) = r.cost else { continue };
            let wrong = match r.call {
                Call::Acquire {
                    deadline: Some(0), ..
                } if cost.parks > 0 => Some("a zero timeout parked"),
                Call::Acquire { .. } => None,
                _ if cost.parks > 0 => Some("a call that does not wait parked"),
                _ if enters(i) && !justified[i] => Some(
                    "entered the park table with no waiting acquire running (WAITERS set with \
                     nobody waiting)",
                ),
                Call::Release { .. }
                | Call::ReleaseFair { .. }
                | Call::Close
                | Call::Parked { .. } => None,
                _ if cost.unpark_calls > 0 => {
                    Some("a call that wakes nobody entered the park table")
                }
                _ => None,
            };
            if let Some(what) = wrong {
                return Err(Violation(format!(
                    "park table: {what}: thread {} {:?} ({cost:?})\n{self}",
                    r.thread, r.call
                )));
            }
        }
        Ok(())
    }

    /// The situations the history shows by itself: calls that ran at the same time, and what
    /// the park table did.
    fn situations(&self) -> u32 {
        let mut reached = 0;
        let n = self.records.len();
        for i in 0..n {
            let r = &self.records[i];
            let beside = |pred: &dyn Fn(&Call) -> bool| {
                (0..n).any(|j| j != i && self.overlap(i, j) && pred(&self.records[j].call))
            };
            match r.call {
                Call::ReleaseFair { .. } => {
                    if beside(&|c| matches!(c, Call::Close)) {
                        reached |= bit(at::FAIR_RACES_CLOSE);
                    }
                    if beside(
                        &|c| matches!(c, Call::Acquire { deadline: Some(d), result: Wait::TimedOut, .. } if *d > 0),
                    ) {
                        reached |= bit(at::FAIR_RACES_TIMEOUT);
                    }
                    if beside(&|c| matches!(c, Call::Release { ok: true, .. })) {
                        reached |= bit(at::FAIR_RACES_RELEASE);
                    }
                }
                Call::Guard if (0..n).any(|j| self.may_wait(j) && self.overlap(i, j)) => {
                    reached |= bit(at::GUARD_RACES_ACQUIRE);
                }
                _ => {}
            }
            if matches!(r.call, Call::Release { .. } | Call::ReleaseFair { .. })
                && r.cost.is_some_and(|c| c.woken >= 2)
            {
                reached |= bit(at::WAKES_TWO);
            }
            let near_max = match r.call {
                Call::Acquire { n, .. } | Call::TryAcquire { n, .. } => n > MAX,
                Call::Release { n, .. } => n >= MAX / 2,
                _ => false,
            };
            if near_max {
                reached |= bit(at::NEAR_MAX);
            }
        }
        reached
    }

    fn search(&self, points: &[u64]) -> Result<u32, Violation> {
        self.table_costs()?;
        let events = self.events();
        assert!(events.len() < 128, "a history of fewer than 128 events");
        let all = (1u128 << events.len()) - 1;
        let mut phases = Vec::new();
        for (k, &at) in points.iter().enumerate() {
            // The calls waiting at the point: started before it, not returned.
            let waiting: Vec<usize> = (0..self.records.len())
                .filter(|&i| self.records[i].start <= at && self.records[i].end > at)
                .collect();
            if let Some(&w) = waiting.iter().find(|&&i| !self.records[i].call.waits()) {
                return Err(Violation(format!(
                    "quiescent liveness: {:?} had not returned at quiescence point {k} (tick \
                     {at})\n{self}",
                    self.records[w].call
                )));
            }
            // The events linearized before the point: every event of a call that had
            // returned, and the arrivals of the waiting calls.
            let before = events.iter().enumerate().fold(0u128, |mask, (e, ev)| {
                let r = ev.record;
                let in_before =
                    self.records[r].end <= at || (ev.kind == Kind::Arrive && waiting.contains(&r));
                if in_before { mask | (1 << e) } else { mask }
            });
            phases.push(Phase { before, waiting });
        }
        // A release with no other release beside it: the permits free when it looks at the
        // queue are at most the count just after it (promise 7's bound applies).
        let adds =
            |c: &Call| matches!(c, Call::Release { ok: true, .. } | Call::ReleaseFair { .. });
        let alone = (0..self.records.len())
            .map(|i| {
                !(0..self.records.len())
                    .any(|j| j != i && adds(&self.records[j].call) && self.overlap(i, j))
            })
            .collect();
        // A plain release with no other plain release and no clock advance beside it reads
        // the fairness timer and the clock as the model has them.
        let touches_timer =
            |c: &Call| matches!(c, Call::Release { ok: true, .. } | Call::Advance { .. });
        let timer_alone: Vec<bool> = (0..self.records.len())
            .map(|i| {
                !(0..self.records.len())
                    .any(|j| j != i && touches_timer(&self.records[j].call) && self.overlap(i, j))
            })
            .collect();
        let beside = (0..self.records.len())
            .map(|i| Beside {
                timer_alone: timer_alone[i],
                close: (0..self.records.len()).any(|j| {
                    j != i && matches!(self.records[j].call, Call::Close) && self.overlap(i, j)
                }),
                observed: (0..self.records.len()).any(|j| {
                    j != i
                        && matches!(
                            self.records[j].call,
                            Call::Available { .. } | Call::TryAcquire { .. } | Call::Forget { .. }
                        )
                        && (!self.real_time || self.overlap(i, j))
                }),
                added: (0..self.records.len()).any(|j| {
                    self.records[j].thread != self.records[i].thread
                        && matches!(self.records[j].call, Call::Release { ok: true, .. })
                        && (!self.real_time || self.overlap(i, j))
                }),
            })
            .collect();
        let mut seen = HashSet::new();
        let mut start = Spec::new(self.permits, self.mode);
        if self.exact_timer && self.mode == Fairness::Eventual {
            start.timer = Timer::Idle;
        }
        if !self.real_time {
            start.horizon = Some(
                self.records
                    .iter()
                    .map(|r| match r.call {
                        Call::Advance { micros } => micros,
                        _ => 0,
                    })
                    .sum(),
            );
        }
        let search = Search {
            history: self,
            events: &events,
            all,
            phases: &phases,
            alone,
            beside,
        };
        if let Some(reached) = search.dfs(0, start, 0, 0, &mut seen) {
            Ok(reached | self.situations())
        } else {
            let what = if points.is_empty() {
                "not linearizable"
            } else {
                "not linearizable with the waiting calls blocked at each quiescence point (a \
                 lost wakeup, a stranded head, a wrong result, or more threads woken than the \
                 permits satisfy)"
            };
            Err(Violation(format!(
                "{what}: {:?} semaphore of {} permits, quiescence at ticks {points:?}\n{self}",
                self.mode, self.permits
            )))
        }
    }
}

/// Whether an event may land between a handoff walk's steps, which all run under the
/// bucket lock: `close` (whose `CLOSED` stops the walk) and every event that takes no bucket
/// lock (the count's reads and compare-exchanges, the clock, a refused add, an arrival that
/// completes at once; the model's `arrive` keeps only that outcome while a close is due).
fn lock_free(call: &Call, kind: Kind) -> bool {
    match kind {
        Kind::Arrive => true,
        Kind::Complete => false,
        Kind::Single => matches!(
            call,
            Call::Close
                | Call::Available { .. }
                | Call::IsClosed { .. }
                | Call::Forget { .. }
                | Call::TryAcquire { .. }
                | Call::Advance { .. }
                | Call::Guard
                | Call::Release { ok: false, .. }
        ),
    }
}

/// Whether event `kind` of `call` may land during a handoff walk: it takes no bucket lock
/// and only reads the count, takes from it, or moves nothing the walk reads.
fn beside_a_walk(call: &Call, kind: Kind) -> bool {
    kind == Kind::Single
        && matches!(
            call,
            Call::Available { .. }
                | Call::IsClosed { .. }
                | Call::Forget { .. }
                | Call::TryAcquire { .. }
                | Call::Advance { .. }
                | Call::Guard
        )
}

/// What must hold at one quiescence point.
struct Phase {
    /// The events linearized before it.
    before: u128,
    /// The calls blocked at it.
    waiting: Vec<usize>,
}

/// One search over a history's events.
struct Search<'a> {
    history: &'a History,
    events: &'a [Event],
    all: u128,
    phases: &'a [Phase],
    /// Per record: no other release ran beside it.
    alone: Vec<bool>,
    /// Per record: what ran beside it.
    beside: Vec<Beside>,
}

impl Search<'_> {
    /// Whether event `e` may be linearized next, the events in `done` being linearized.
    fn ready(&self, done: u128, e: usize) -> bool {
        let ev = self.events[e];
        if ev.kind == Kind::Complete && done & (1 << (e - 1)) == 0 {
            return false;
        }
        // Every event of a call that must precede this one is linearized.
        self.events.iter().enumerate().all(|(f, other)| {
            done & (1 << f) != 0
                || other.record == ev.record
                || !self.history.precedes(other.record, ev.record)
        })
    }

    /// Whether a release's wake-ups, linearized on `state`, stay within promise 7's bound:
    /// no more threads woken than the queued requests its permits and the free ones can
    /// satisfy at once; a `close` wakes at most the queued requests.
    fn wakes_within_bound(&self, record: usize, state: &Spec) -> bool {
        let r = &self.history.records[record];
        let Some(cost) = r.cost else { return true };
        match r.call {
            Call::Release { n, ok: true } | Call::ReleaseFair { n } if self.alone[record] => {
                cost.woken <= state.most_satisfied(state.permits.saturating_add(n))
            }
            Call::Close => cost.woken <= state.queue.len(),
            _ => true,
        }
    }

    /// Whether a release linearized from `before` to `after` handed its permits to as many
    /// parked requests as the park table counted threads unparked with `HANDED` for it (a
    /// walk still under way, seen from beside it, to at most that many; not checked where
    /// another thread's plain release ran beside it, whose add may land in the middle of the
    /// walk: `Beside::added`). A handoff and a
    /// wake-up that lets the woken thread take the same permits can end in the same history,
    /// so without this count an `Eventual` release that hands over before its turn is due
    /// passes; with it the timer's free choice (loom, real time) is pinned as well.
    fn hands_as_counted(&self, record: usize, before: &Spec, after: &Spec) -> bool {
        let r = &self.history.records[record];
        let Some(cost) = r.cost else { return true };
        if self.beside[record].added {
            return true;
        }
        if !matches!(
            r.call,
            Call::Release { ok: true, .. } | Call::ReleaseFair { .. }
        ) {
            return true;
        }
        let made = after.handed.len() - before.handed.len();
        if after.walk.is_some() {
            made <= cost.handed
        } else {
            made == cost.handed
        }
    }

    /// Depth-first search from `state` with the events of `done` linearized, the quiescence
    /// points before `phase` passed, the situations `reached` on the way; the situations of
    /// a whole linearization if one is found.
    fn dfs(
        &self,
        done: u128,
        state: Spec,
        phase: usize,
        reached: u32,
        seen: &mut HashSet<(u128, Spec, usize)>,
    ) -> Option<u32> {
        let mut phase = phase;
        // Whether a quiescence point is due and the state does not satisfy it yet: only a
        // thread's own move (a wake-up, a return to the table, a timed-out thread leaving)
        // can still get it there.
        let mut unsettled = false;
        while let Some(p) = self.phases.get(phase) {
            if done != p.before {
                break;
            }
            if !state.stuck_with(&p.waiting) {
                unsettled = true;
                break;
            }
            phase += 1;
        }
        if !unsettled && done == self.all {
            return Some(reached);
        }
        if !seen.insert((done, state.clone(), phase)) {
            return None;
        }
        let moves = if state.walk.is_some() {
            vec![state.finish_walk()]
        } else if state.pending_close {
            Vec::new()
        } else {
            state
                .leave_moves()
                .into_iter()
                .chain(state.wake_moves())
                .collect()
        };
        for s in moves {
            if let Some(all) = self.dfs(done, s, phase, reached, seen) {
                return Some(all);
            }
        }
        if unsettled {
            return None;
        }
        let limit = self.phases.get(phase).map(|p| p.before);
        for e in 0..self.events.len() {
            if done & (1 << e) != 0 || limit.is_some_and(|mask| mask & (1 << e) == 0) {
                continue;
            }
            if !self.ready(done, e) {
                continue;
            }
            let ev = self.events[e];
            let call = &self.history.records[ev.record].call;
            if state.pending_close && !lock_free(call, ev.kind) {
                continue;
            }
            if state.walk.is_some() && !beside_a_walk(call, ev.kind) {
                continue;
            }
            let next = match ev.kind {
                Kind::Single => {
                    if !self.wakes_within_bound(ev.record, &state) {
                        continue;
                    }
                    let mut next = state.step(call, self.beside[ev.record]);
                    next.retain(|after| self.hands_as_counted(ev.record, &state, after));
                    next
                }
                Kind::Arrive => {
                    let mut next = state.arrive(ev.record, call);
                    if state.pending_close {
                        next.retain(|s| s.done_at_arrival.contains(&ev.record));
                    }
                    next
                }
                Kind::Complete => state.complete(ev.record, call, self.beside[ev.record]),
            };
            for s in next {
                let more = situations_of_step(&state, ev.record, call, ev.kind, &s);
                if let Some(all) = self.dfs(done | (1 << e), s, phase, reached | more, seen) {
                    return Some(all);
                }
            }
        }
        None
    }
}

impl std::fmt::Display for History {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for r in &self.records {
            write!(
                f,
                "  thread {} [{:>3}, {:>3}] {:?}",
                r.thread, r.start, r.end, r.call
            )?;
            // The park table's count for the call, where a checker gave one and it did
            // something there.
            match r.cost {
                Some(c) if c != Cost::default() => writeln!(
                    f,
                    " (parks {}, unpark calls {}, woken {}, handed {})",
                    c.parks, c.unpark_calls, c.woken, c.handed
                )?,
                _ => writeln!(f)?,
            }
        }
        Ok(())
    }
}

/// The checker on histories whose answers are known.
#[cfg(test)]
mod known_answers {
    use super::{Call, Cost, History, Record, Wait};
    use parksema::Fairness;

    fn rec(thread: usize, start: u64, end: u64, call: Call) -> Record {
        Record {
            thread,
            call,
            start,
            end,
            cost: None,
        }
    }

    fn history(permits: usize, mode: Fairness, records: Vec<Record>) -> History {
        History {
            permits,
            mode,
            records,
            real_time: true,
            exact_timer: false,
        }
    }

    fn acquire(n: usize, result: Wait) -> Call {
        Call::Acquire {
            n,
            deadline: None,
            result,
        }
    }

    #[test]
    fn two_overlapping_takes_of_one_permit_are_not_linearizable() {
        let h = history(
            1,
            Fairness::Eventual,
            vec![
                rec(
                    0,
                    0,
                    3,
                    Call::TryAcquire {
                        n: 1,
                        result: Wait::Ok,
                    },
                ),
                rec(
                    1,
                    1,
                    2,
                    Call::TryAcquire {
                        n: 1,
                        result: Wait::Ok,
                    },
                ),
            ],
        );
        assert!(h.linearizable().is_err());
    }

    #[test]
    fn a_blocked_take_completed_by_a_later_release_is_linearizable() {
        let h = history(
            0,
            Fairness::Eventual,
            vec![
                rec(0, 0, 5, acquire(1, Wait::Ok)),
                rec(1, 1, 2, Call::Release { n: 1, ok: true }),
                rec(1, 3, 4, Call::Available { seen: 1 }),
            ],
        );
        assert!(h.linearizable().is_ok());
    }

    #[test]
    fn under_fifo_a_handed_permit_never_shows_in_the_count() {
        let with = |seen: usize| {
            history(
                0,
                Fairness::Fifo,
                vec![
                    rec(0, 0, 10, acquire(1, Wait::Ok)),
                    rec(1, 1, 2, Call::Release { n: 1, ok: true }),
                    // Fails with the permit free only if the acquire took it or was handed it.
                    rec(
                        1,
                        3,
                        4,
                        Call::TryAcquire {
                            n: 1,
                            result: Wait::NoPermits,
                        },
                    ),
                    rec(1, 5, 6, Call::Available { seen }),
                ],
            )
        };
        assert!(with(0).linearizable().is_ok());
        assert!(
            with(1).linearizable().is_err(),
            "a handed permit showed in the count"
        );
    }

    #[test]
    fn a_lost_wakeup_fails_quiescence() {
        // A permit was added and nobody took it, yet the acquire was still waiting.
        let h = history(
            0,
            Fairness::Barging,
            vec![
                rec(0, 0, 9, acquire(1, Wait::Closed)),
                rec(1, 1, 2, Call::Release { n: 1, ok: true }),
                rec(2, 6, 7, Call::Close),
            ],
        );
        assert!(h.linearizable().is_ok(), "linearizable: close came first");
        assert!(
            h.quiescent(&[5]).is_err(),
            "but the waiter was stranded at tick 5"
        );
        // Without the release it is stuck legitimately.
        let h = history(
            0,
            Fairness::Barging,
            vec![
                rec(0, 0, 9, acquire(1, Wait::Closed)),
                rec(2, 6, 7, Call::Close),
            ],
        );
        assert!(h.quiescent(&[5]).is_ok());
    }

    #[test]
    fn under_fifo_a_later_arrival_is_not_served_first() {
        // The large request is queued (a `try_` of one fails with a permit free) before the
        // small one starts; the small one returns while only one permit was ever free.
        let h = |small: Wait| {
            history(
                0,
                Fairness::Fifo,
                vec![
                    rec(1, 0, 20, acquire(2, Wait::Closed)),
                    rec(0, 1, 2, Call::Release { n: 1, ok: true }),
                    rec(
                        0,
                        3,
                        4,
                        Call::TryAcquire {
                            n: 1,
                            result: Wait::NoPermits,
                        },
                    ),
                    rec(2, 5, 8, acquire(1, small)),
                    rec(3, 6, 7, Call::Close),
                    rec(0, 10, 11, Call::Release { n: 1, ok: true }),
                ],
            )
        };
        assert!(h(Wait::Closed).linearizable().is_ok());
        assert!(
            h(Wait::Ok).linearizable().is_err(),
            "served ahead of the head"
        );
    }

    fn try_acquire(n: usize, result: Wait) -> Call {
        Call::TryAcquire { n, result }
    }

    fn release(n: usize) -> Call {
        Call::Release { n, ok: true }
    }

    fn timed(n: usize, deadline: u64, result: Wait) -> Call {
        Call::Acquire {
            n,
            deadline: Some(deadline),
            result,
        }
    }

    fn with_cost(mut r: Record, unpark_calls: usize, woken: usize, parks: usize) -> Record {
        r.cost = Some(Cost {
            parks,
            unpark_calls,
            woken,
            handed: 0,
        });
        r
    }

    /// A release's cost: one unpark call that woke one thread, `handed` of them with
    /// `HANDED`.
    fn handing(mut r: Record, handed: usize) -> Record {
        r.cost = Some(Cost {
            parks: 0,
            unpark_calls: 1,
            woken: 1,
            handed,
        });
        r
    }

    /// The park table's count of handoffs pins what a release did: the first `Eventual`
    /// release starts the timer and hands nothing, and a release that handed its permit
    /// over leaves none for a `try_acquire` after it, whatever the timer.
    #[test]
    fn a_release_hands_over_exactly_what_the_park_table_counted() {
        let first = |handed: usize| History {
            exact_timer: true,
            ..history(
                0,
                Fairness::Eventual,
                vec![
                    rec(0, 0, 40, acquire(1, Wait::Ok)),
                    rec(1, 1, 2, Call::Parked { seen: 1 }),
                    handing(rec(1, 3, 4, release(1)), handed),
                ],
            )
        };
        assert!(first(0).linearizable().is_ok());
        assert!(
            first(1).linearizable().is_err(),
            "the release that starts the timer handed over"
        );
        let barged = |handed: usize| {
            history(
                0,
                Fairness::Eventual,
                vec![
                    rec(0, 0, 40, acquire(1, Wait::Ok)),
                    rec(1, 1, 2, Call::Parked { seen: 1 }),
                    handing(rec(1, 3, 4, release(1)), handed),
                    rec(
                        2,
                        5,
                        6,
                        Call::TryAcquire {
                            n: 1,
                            result: Wait::Ok,
                        },
                    ),
                    rec(1, 7, 8, release(1)),
                ],
            )
        };
        assert!(barged(0).linearizable().is_ok());
        assert!(
            barged(1).linearizable().is_err(),
            "a try_acquire took a permit the release had handed over"
        );
        // Program order only (loom): the timer is not known, but with the run's clock
        // advances all below the first deadline it can draw, no turn is ever due.
        let still = |handed: usize, micros: u64| History {
            real_time: false,
            ..history(
                0,
                Fairness::Eventual,
                vec![
                    rec(0, 0, 40, acquire(1, Wait::Ok)),
                    rec(1, 1, 2, Call::Parked { seen: 1 }),
                    rec(1, 3, 4, Call::Advance { micros }),
                    handing(rec(1, 5, 6, release(1)), handed),
                ],
            )
        };
        assert!(still(0, 10).linearizable().is_ok());
        assert!(
            still(1, 10).linearizable().is_err(),
            "a handoff with the clock short of any deadline"
        );
        assert!(still(1, 1000).linearizable().is_ok());
        assert!(still(0, 1000).linearizable().is_ok());
        // A plain release's add may land in the middle of a `release_fair`'s walk: the walk
        // passes over the first request (one permit of its own does not fit it), the add
        // lands, and the second request fits. One handed, which neither count alone gives
        // (0 before the add, 2 after); the other request is handed its permits later by the
        // first's own `release_fair`. Every wake-up is one of those two handoffs.
        let mid_walk_add = |adder_overlaps: bool| {
            let add_at = if adder_overlaps { (5, 17) } else { (18, 19) };
            history(
                0,
                Fairness::Barging,
                vec![
                    rec(0, 0, 30, acquire(2, Wait::Ok)),
                    rec(1, 1, 7, acquire(2, Wait::Ok)),
                    rec(2, 2, 3, Call::Parked { seen: 2 }),
                    handing(rec(2, 4, 9, Call::ReleaseFair { n: 1 }), 1),
                    with_cost(rec(3, add_at.0, add_at.1, release(10)), 1, 0, 0),
                    handing(rec(1, 8, 16, Call::ReleaseFair { n: 2 }), 1),
                ],
            )
        };
        assert!(mid_walk_add(true).linearizable().is_ok());
        assert!(
            mid_walk_add(false).linearizable().is_err(),
            "with the add after it, the first walk could hand nobody"
        );
        let fair = |handed: usize| {
            history(
                0,
                Fairness::Barging,
                vec![
                    rec(0, 0, 40, acquire(1, Wait::Ok)),
                    rec(1, 1, 2, Call::Parked { seen: 1 }),
                    handing(rec(1, 3, 4, Call::ReleaseFair { n: 1 }), handed),
                ],
            )
        };
        assert!(fair(1).linearizable().is_ok());
        assert!(
            fair(0).linearizable().is_err(),
            "release_fair woke its request without handing it the permit"
        );
    }

    #[test]
    fn a_fifo_head_holds_up_a_free_permit_until_its_deadline() {
        let h = |try_result: Wait, head: Wait| {
            history(
                0,
                Fairness::Fifo,
                vec![
                    rec(0, 0, 10, timed(2, 1000, head)),
                    rec(1, 1, 12, acquire(1, Wait::Ok)),
                    rec(2, 2, 3, Call::Parked { seen: 2 }),
                    rec(2, 4, 5, release(1)),
                    rec(2, 6, 7, try_acquire(1, try_result)),
                    rec(2, 8, 9, Call::Advance { micros: 1000 }),
                ],
            )
        };
        assert!(h(Wait::NoPermits, Wait::TimedOut).linearizable().is_ok());
        assert!(
            h(Wait::Ok, Wait::TimedOut).linearizable().is_err(),
            "a try took the permit the queued head holds up"
        );
        assert!(
            h(Wait::NoPermits, Wait::Ok).linearizable().is_err(),
            "the head got two permits when one was ever free"
        );
    }

    #[test]
    fn release_fair_hands_over_to_a_parked_request() {
        let h = |barger: Wait| {
            history(
                1,
                Fairness::Barging,
                vec![
                    rec(1, 0, 1, try_acquire(1, Wait::Ok)),
                    rec(0, 2, 9, acquire(1, Wait::Ok)),
                    rec(1, 3, 4, Call::Parked { seen: 1 }),
                    rec(1, 5, 6, Call::ReleaseFair { n: 1 }),
                    rec(1, 7, 8, try_acquire(1, barger)),
                ],
            )
        };
        assert!(h(Wait::NoPermits).linearizable().is_ok());
        assert!(
            h(Wait::Ok).linearizable().is_err(),
            "the barger took a permit release_fair owed the parked thread"
        );
    }

    /// A woken thread that has not parked again is not in the table: `release_fair` does
    /// not reach it, and it may lose the permits to `close` (what promise 28 says). Pinned
    /// as parked, it is reached.
    #[test]
    fn release_fair_does_not_reach_a_woken_thread() {
        let h = |parked_after_barge: usize| {
            history(
                1,
                Fairness::Barging,
                vec![
                    rec(1, 0, 1, try_acquire(1, Wait::Ok)),
                    rec(0, 2, 20, acquire(1, Wait::Closed)),
                    rec(1, 3, 4, Call::Parked { seen: 1 }),
                    rec(1, 5, 6, release(1)),
                    rec(1, 7, 8, try_acquire(1, Wait::Ok)),
                    rec(
                        1,
                        9,
                        10,
                        Call::Parked {
                            seen: parked_after_barge,
                        },
                    ),
                    rec(1, 11, 12, Call::ReleaseFair { n: 1 }),
                    rec(1, 13, 14, Call::Close),
                ],
            )
        };
        assert!(h(0).linearizable().is_ok());
        assert!(
            h(1).linearizable().is_err(),
            "release_fair passed over a parked thread it satisfies"
        );
    }

    #[test]
    fn forget_takes_what_is_free_and_no_more() {
        let h = |taken: usize| {
            history(
                2,
                Fairness::Fifo,
                vec![
                    rec(0, 0, 10, acquire(3, Wait::Closed)),
                    rec(1, 1, 2, Call::Parked { seen: 1 }),
                    rec(1, 3, 4, Call::Forget { asked: 1, taken }),
                    rec(1, 5, 6, Call::Available { seen: 2 - taken }),
                    rec(1, 7, 8, Call::Close),
                ],
            )
        };
        assert!(h(1).linearizable().is_ok());
        assert!(h(2).linearizable().is_err(), "forgot more than asked");
    }

    #[test]
    fn an_add_past_max_permits_is_refused_with_the_count_untouched() {
        let h = |ok: bool| {
            history(
                0,
                Fairness::Eventual,
                vec![
                    rec(0, 0, 5, acquire(1, Wait::Ok)),
                    rec(1, 1, 2, Call::Release { n: usize::MAX, ok }),
                    rec(1, 3, 4, release(1)),
                ],
            )
        };
        assert!(h(false).linearizable().is_ok());
        assert!(
            h(true).linearizable().is_err(),
            "an add past MAX_PERMITS accepted"
        );
    }

    /// Under loom only program order is precedence: what real time forbids, a
    /// linearization that reorders the two threads allows.
    #[test]
    fn without_real_time_only_program_order_is_precedence() {
        let records = vec![
            rec(0, 0, 1, try_acquire(1, Wait::Ok)),
            rec(1, 2, 3, try_acquire(1, Wait::Ok)),
            rec(0, 4, 5, release(1)),
        ];
        let real = history(1, Fairness::Barging, records.clone());
        assert!(
            real.linearizable().is_err(),
            "two holders of one permit at once"
        );
        let program_order = History {
            real_time: false,
            ..real
        };
        assert!(program_order.linearizable().is_ok());
    }

    #[test]
    fn every_quiescence_point_is_checked() {
        let h = |end: u64| {
            history(
                0,
                Fairness::Barging,
                vec![
                    rec(0, 0, end, acquire(2, Wait::Ok)),
                    rec(1, 5, 6, release(1)),
                    rec(1, 10, 11, release(1)),
                ],
            )
        };
        assert!(h(12).quiescent(&[3, 8, 15]).is_ok());
        assert!(
            h(20).quiescent(&[3, 8, 15]).is_err(),
            "still waiting at the third point with both permits free"
        );
        assert!(h(20).quiescent(&[3, 8]).is_ok());
    }

    #[test]
    fn a_release_wakes_no_more_than_its_permits_satisfy() {
        let h = |woken: usize| {
            history(
                0,
                Fairness::Barging,
                vec![
                    rec(0, 0, 10, acquire(1, Wait::Ok)),
                    rec(1, 1, 11, acquire(1, Wait::Ok)),
                    rec(2, 2, 3, Call::Parked { seen: 2 }),
                    with_cost(rec(2, 4, 5, release(1)), 1, woken, 0),
                    with_cost(rec(2, 6, 7, release(1)), 1, 2 - woken, 0),
                ],
            )
        };
        assert!(h(1).linearizable().is_ok());
        assert!(h(2).linearizable().is_err(), "one permit woke two threads");
    }

    #[test]
    fn a_release_enters_the_table_only_beside_a_waiting_call() {
        let alone = history(
            1,
            Fairness::Eventual,
            vec![with_cost(rec(0, 0, 1, release(1)), 1, 0, 0)],
        );
        assert!(
            alone.linearizable().is_err(),
            "WAITERS set with nobody waiting"
        );
        let beside = history(
            0,
            Fairness::Eventual,
            vec![
                rec(1, 0, 3, acquire(1, Wait::Ok)),
                with_cost(rec(0, 1, 2, release(1)), 1, 1, 0),
            ],
        );
        assert!(beside.linearizable().is_ok());
        let zero_parks = history(
            0,
            Fairness::Eventual,
            vec![with_cost(
                rec(0, 0, 1, timed(1, 0, Wait::TimedOut)),
                0,
                0,
                1,
            )],
        );
        assert!(zero_parks.linearizable().is_err(), "a zero timeout parked");
    }

    /// Under shuttle the model runs the `Eventual` timer: the first release that finds a
    /// parked request starts it (986 µs: the generator's first draw), and one past its
    /// deadline hands over, so the count shows nothing; where the timer is not known, the
    /// same history is one free choice among others.
    #[test]
    fn past_its_deadline_an_eventual_release_hands_over() {
        let h = |seen: usize, exact_timer: bool| History {
            exact_timer,
            ..history(
                0,
                Fairness::Eventual,
                vec![
                    rec(0, 0, 40, acquire(2, Wait::Ok)),
                    rec(1, 1, 2, Call::Parked { seen: 1 }),
                    rec(1, 3, 4, release(1)),
                    rec(1, 5, 6, Call::Advance { micros: 1000 }),
                    rec(1, 7, 8, release(1)),
                    rec(1, 9, 10, Call::Available { seen }),
                ],
            )
        };
        assert!(h(0, true).linearizable().is_ok());
        assert!(
            h(2, true).linearizable().is_err(),
            "past the deadline the release added its permits instead of handing them over"
        );
        assert!(h(2, false).linearizable().is_ok());
        // Before the deadline the same release adds: the count shows both permits while the
        // request is still parked.
        let early = |seen: usize| History {
            exact_timer: true,
            ..history(
                0,
                Fairness::Eventual,
                vec![
                    rec(0, 0, 40, acquire(2, Wait::Ok)),
                    rec(1, 1, 2, Call::Parked { seen: 1 }),
                    rec(1, 3, 4, release(1)),
                    rec(1, 5, 6, Call::Advance { micros: 900 }),
                    rec(1, 7, 8, release(1)),
                    rec(1, 9, 10, Call::Available { seen }),
                    // Still parked: it took nothing.
                    rec(1, 11, 12, Call::Parked { seen: 1 }),
                ],
            )
        };
        assert!(early(2).linearizable().is_ok());
        assert!(
            early(0).linearizable().is_err(),
            "a handoff before the deadline"
        );
    }

    /// Under loom a release may read a `WAITERS` that a waiter set and cleared before the
    /// release started (relaxed loads, no synchronization between the two): entering the
    /// table then is no broken promise. With real time it is.
    #[test]
    fn without_real_time_a_release_may_see_a_stale_waiters_bit() {
        let records = vec![
            rec(0, 0, 5, timed(1, 1000, Wait::TimedOut)),
            rec(1, 1, 2, Call::Advance { micros: 1000 }),
            with_cost(rec(1, 10, 11, release(1)), 1, 0, 0),
        ];
        let real = history(0, Fairness::Fifo, records);
        assert!(
            real.linearizable().is_err(),
            "WAITERS set with nobody waiting"
        );
        let program_order = History {
            real_time: false,
            ..real
        };
        assert!(program_order.linearizable().is_ok());
    }

    /// A handoff walk cut short by `close` (a timed-out `Fifo` head hands on what is free):
    /// a look at the count between the walk's handoffs sees the part already handed.
    #[test]
    fn a_close_may_cut_a_handoff_walk_short() {
        let h = |seen: usize| {
            history(
                2,
                Fairness::Fifo,
                vec![
                    rec(0, 0, 30, timed(3, 1000, Wait::TimedOut)),
                    rec(1, 1, 31, acquire(1, Wait::Ok)),
                    rec(2, 2, 32, acquire(1, Wait::Closed)),
                    rec(3, 3, 4, Call::Parked { seen: 3 }),
                    rec(3, 5, 6, Call::Advance { micros: 1000 }),
                    rec(3, 7, 8, Call::Available { seen }),
                    rec(3, 9, 10, Call::Close),
                ],
            )
        };
        assert!(h(1).linearizable().is_ok());
        assert!(
            h(0).linearizable().is_err(),
            "both handed before the close, yet the second returned Closed"
        );
    }

    /// A handoff walk takes each handed request's permits from the count one request at a
    /// time, under the bucket lock, and deposits what is left of the release's own only at
    /// the end: a look at the count beside it may see the walk under way. Here a release of
    /// 2 finds 2 free, a `Fifo` head of 3 and a request of 1 behind it: the head takes the
    /// release's 2 and 1 from the count, the next 1 from the count; a look sees 2, 1 or 0,
    /// never the 3 or 4 an atomic walk's intermediate states would hold. The generated
    /// programs found the 1 on the correct semaphore (shuttle), which the model refused
    /// while it made the walk atomic.
    #[test]
    fn a_look_at_the_count_may_see_a_handoff_walk_under_way() {
        let h = |seen: usize| {
            history(
                2,
                Fairness::Fifo,
                vec![
                    rec(1, 0, 30, acquire(3, Wait::Ok)),
                    rec(2, 1, 2, Call::Parked { seen: 1 }),
                    rec(0, 3, 31, acquire(1, Wait::Ok)),
                    rec(2, 4, 5, Call::Parked { seen: 2 }),
                    rec(2, 6, 10, release(2)),
                    rec(3, 7, 8, Call::Available { seen }),
                ],
            )
        };
        for seen in [0, 1, 2] {
            assert!(h(seen).linearizable().is_ok(), "seen {seen}");
        }
        assert!(h(3).linearizable().is_err(), "3 is never in the count");
        // A look that does not overlap the release sees it whole.
        let after = history(
            2,
            Fairness::Fifo,
            vec![
                rec(1, 0, 30, acquire(3, Wait::Ok)),
                rec(2, 1, 2, Call::Parked { seen: 1 }),
                rec(0, 3, 31, acquire(1, Wait::Ok)),
                rec(2, 4, 5, Call::Parked { seen: 2 }),
                rec(2, 6, 10, release(2)),
                rec(3, 11, 12, Call::Available { seen: 1 }),
            ],
        );
        assert!(
            after.linearizable().is_err(),
            "the walk ended before the look"
        );
    }

    /// One call of a sequential history the model plays itself.
    #[derive(Clone, Debug)]
    enum Step {
        Try(usize),
        /// A blocking acquire, kept only where it completes at once.
        Take(usize),
        Release(usize),
        Fair(usize),
        Overfill,
        Forget(usize),
        Close,
        Available,
        IsClosed,
        Advance(u64),
        Parked,
    }

    fn step_strategy() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        prop_oneof![
            (0..4usize).prop_map(Step::Try),
            (0..4usize).prop_map(Step::Take),
            (1..3usize).prop_map(Step::Release),
            (1..3usize).prop_map(Step::Fair),
            Just(Step::Overfill),
            (1..3usize).prop_map(Step::Forget),
            Just(Step::Close),
            Just(Step::Available),
            Just(Step::IsClosed),
            (1..3u64).prop_map(|ms| Step::Advance(ms * 1000)),
            Just(Step::Parked),
        ]
    }

    /// The history of `steps` played one at a time on the model (what it returns is what the
    /// model accepts), on three threads taking turns.
    fn play(permits: usize, mode: Fairness, steps: &[Step]) -> History {
        let mut state = super::Spec::new(permits, mode);
        let mut records = Vec::new();
        for step in steps {
            let id = records.len();
            let candidates: Vec<Call> = match *step {
                Step::Try(n) => [Wait::Ok, Wait::NoPermits, Wait::Closed]
                    .into_iter()
                    .map(|result| Call::TryAcquire { n, result })
                    .collect(),
                Step::Take(n) => [Wait::Ok, Wait::Closed]
                    .into_iter()
                    .map(|result| acquire(n, result))
                    .collect(),
                Step::Release(n) => vec![release(n)],
                Step::Fair(n) => vec![Call::ReleaseFair { n }],
                Step::Overfill => vec![Call::Release {
                    n: usize::MAX,
                    ok: false,
                }],
                Step::Forget(asked) => (0..=asked)
                    .map(|taken| Call::Forget { asked, taken })
                    .collect(),
                Step::Close => vec![Call::Close],
                Step::Available => (0..16).map(|seen| Call::Available { seen }).collect(),
                Step::IsClosed => [false, true]
                    .into_iter()
                    .map(|seen| Call::IsClosed { seen })
                    .collect(),
                Step::Advance(micros) => vec![Call::Advance { micros }],
                Step::Parked => vec![Call::Parked { seen: 0 }],
            };
            let next = candidates.into_iter().find_map(|call| {
                let after = if call.waits() {
                    // Only a call that its arrival completes: a single thread cannot wait.
                    state
                        .arrive(id, &call)
                        .into_iter()
                        .find(|s| s.done_at_arrival.contains(&id))
                        .and_then(|s| {
                            s.complete(id, &call, super::Beside::default())
                                .into_iter()
                                .next()
                        })
                } else {
                    state
                        .step(
                            &call,
                            super::Beside {
                                timer_alone: true,
                                close: false,
                                observed: false,
                                added: false,
                            },
                        )
                        .into_iter()
                        .next()
                };
                after.map(|s| (call, s))
            });
            if let Some((call, after)) = next {
                let tick = 2 * id as u64;
                records.push(rec(id % 3, tick, tick + 1, call));
                state = after;
            }
        }
        history(permits, mode, records)
    }

    /// `call` with its result changed to one the model never gives in the state it was given
    /// in (the results of these calls are determined by the state); `None` for the others.
    fn corrupted(call: Call) -> Option<Call> {
        Some(match call {
            Call::TryAcquire { n, result } => Call::TryAcquire {
                n,
                result: if result == Wait::Ok {
                    Wait::NoPermits
                } else {
                    Wait::Ok
                },
            },
            Call::Available { seen } => Call::Available { seen: seen + 1 },
            Call::IsClosed { seen } => Call::IsClosed { seen: !seen },
            Call::Forget { asked, taken } => Call::Forget {
                asked,
                taken: if taken < asked { taken + 1 } else { taken - 1 },
            },
            Call::Parked { seen } => Call::Parked { seen: seen + 1 },
            _ => return None,
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config {
            cases: 256,
            failure_persistence: None,
            ..proptest::test_runner::Config::default()
        })]

        /// Histories the model plays itself are linearizable, and with one determined result
        /// changed they are not: the check accepts what the model does and nothing else.
        #[test]
        fn the_models_own_histories_pass_and_one_wrong_result_fails(
            permits in 0..3usize,
            mode in proptest::prop_oneof![
                proptest::strategy::Just(Fairness::Eventual),
                proptest::strategy::Just(Fairness::Fifo),
                proptest::strategy::Just(Fairness::Barging),
            ],
            steps in proptest::collection::vec(step_strategy(), 1..24),
            pick in proptest::prelude::any::<proptest::sample::Index>(),
        ) {
            let h = play(permits, mode, &steps);
            proptest::prop_assert!(h.linearizable().is_ok(), "the model's own history failed\n{h}");
            let corruptible: Vec<usize> = (0..h.records.len())
                .filter(|&i| corrupted(h.records[i].call).is_some())
                .collect();
            if !corruptible.is_empty() {
                let i = corruptible[pick.index(corruptible.len())];
                let mut bad = h.clone();
                bad.records[i].call = corrupted(h.records[i].call).expect("corruptible");
                proptest::prop_assert!(
                    bad.linearizable().is_err(),
                    "record {i} corrupted and still accepted\n{bad}"
                );
            }
        }
    }
}
