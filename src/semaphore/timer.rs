//! The fairness timer of `Fairness::Eventual`: the semaphore's second word, its layout, the
//! generator that draws each deadline, and the two calls the release path makes (is a turn
//! due, spend it). A turn is due once its deadline has passed; the release that takes it hands
//! its permits to a parked thread instead of freeing them.

use super::*;

/// The fairness timer's word (the semaphore's second word): the mode in the low 2 bits, the
/// next deadline in the 30 above them (microseconds of `clock_micros`, modulo 2^30: 17.9
/// minutes), and the xorshift32 generator's state in the high 32 (0: the timer has not
/// started).
pub(super) const MODE_MASK: u64 = 0b11;
/// Where the deadline starts in the timer word.
pub(super) const DEADLINE_SHIFT: u32 = 2;
/// The deadline's 30 bits, once shifted down.
pub(super) const DEADLINE_MASK: u64 = 0x3fff_ffff;
/// Where the generator's state starts in the timer word.
pub(super) const SEED_SHIFT: u32 = 32;
/// The longest fairness interval, in microseconds: each is drawn from `0..=FAIR_WINDOW_US`.
pub(super) const FAIR_WINDOW_US: u64 = 1000;
/// The generator's first state (any nonzero number; xorshift never leaves zero). Fixed, so
/// that under the checkers every execution draws the same deadlines.
pub(super) const INITIAL_SEED: u32 = 0x9e37_79b9;

/// The mode's code in the timer word.
pub(super) const fn mode_code(fairness: Fairness) -> u64 {
    match fairness {
        Fairness::Eventual => 0,
        Fairness::Fifo => 1,
        Fairness::Barging => 2,
    }
}

/// One step of the xorshift32 generator (Marsaglia's 13, 17, 5).
pub(super) fn xorshift32(mut x: u32) -> u32 {
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
pub(super) fn timer_due(t: u64, now: u64) -> bool {
    let ahead = (t >> DEADLINE_SHIFT).wrapping_sub(now) & DEADLINE_MASK;
    t >> SEED_SHIFT == 0 || ahead == 0 || ahead > FAIR_WINDOW_US
}

/// The timer word after a turn taken at `now`: the generator stepped, and the next deadline
/// `now` plus a draw from `0..=FAIR_WINDOW_US`; the mode kept.
pub(super) fn next_timer(t: u64, now: u64) -> u64 {
    let seed = match (t >> SEED_SHIFT) as u32 {
        0 => INITIAL_SEED,
        seed => xorshift32(seed),
    };
    let deadline = (now + u64::from(seed) % (FAIR_WINDOW_US + 1)) & DEADLINE_MASK;
    (t & MODE_MASK) | (deadline << DEADLINE_SHIFT) | (u64::from(seed) << SEED_SHIFT)
}
impl Semaphore {
    /// Whether an `Eventual` semaphore's release that found `WAITERS` must hand over: its
    /// fairness deadline has passed. `Some(now)`, the clock it was read at, if so; the turn
    /// is spent (`spend_turn`) only by the handoff that then unparks a thread, so a release
    /// that finds nobody to hand to (the only waiter not queued yet, or just timed out)
    /// leaves the turn to the next one. The first call only starts the timer. `Barging` and
    /// `Fifo` never take a turn.
    pub(super) fn turn_due(&self) -> Option<u64> {
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
    pub(super) fn spend_turn(&self, now: u64) {
        let t = self.timer.load(Ordering::Relaxed);
        self.timer.store(next_timer(t, now), Ordering::Relaxed);
    }
}
