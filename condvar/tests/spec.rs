//! The condition variable's executable specification, and the check of a run's log against
//! it.
//!
//! # The log
//!
//! The generated programs (`generated.rs`) write every event that matters into a log kept
//! inside the mutex, while they hold it: a wait's beginning (just before `wait`, which
//! releases the mutex only once the thread is queued) and its end (just after `wait` took the
//! mutex again, with what it returned), and each notification made while holding the mutex
//! with what it returned. So the log's order is the order of the critical sections, which
//! the mutex makes total: no search over orders is needed for them. A notification made
//! outside the mutex is logged in two parts: a mark in the critical section its thread left
//! just before notifying, and the result in the one it entered just after; it took effect
//! somewhere between the two. Every entry carries the clock when it was written (the mocked
//! clock under the checkers, real time otherwise, in microseconds since the program began).
//!
//! # The model
//!
//! Each wait is *unbegun*, *registered* (queued on the condition variable: a notification
//! can reach it), *notified* (by `notify_one` or counted by `notify_all`), *left* (it timed
//! out and removed itself from the queue) or *ended*. The rules, from the docs:
//!
//! - a wait registers when it begins (the mutex is released only after it is queued, so a
//!   notifier that takes the mutex afterwards finds it);
//! - `notify_one` returns `true` exactly when some wait is registered, and notifies one of
//!   them (which one is the implementation's choice);
//! - `notify_all` notifies every registered wait and returns how many there were (woken and
//!   requeued alike);
//! - a wait with a deadline may leave at any moment at which the clock has reached its
//!   deadline (unless notified first): the entry after that moment shows a clock at or past
//!   the deadline;
//! - a wait ends returning "timed out" exactly when it left, and "notified" exactly when it
//!   was notified: no spurious wake-up, and a wait that `notify_all` counted and whose
//!   deadline passed while it was waiting for the mutex is not a timeout;
//! - at the end of the program every wait has ended.
//!
//! # The check
//!
//! [`check`] walks the log in order, with the model's free choices explored depth-first
//! (which registered wait a `notify_one` reaches, when each timed wait leaves, where between
//! its mark and its result each outside notification took effect), visited states memoized.
//! A log no choice explains is a [`Violation`] naming the furthest entry any choice reached.
//! A log it explains yields the situations ([`SITUATIONS`]) the explanation passed through.

#![allow(dead_code)]

use std::collections::HashSet;

/// One entry of the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Entry {
    /// Wait number `wait` began; its deadline in microseconds since the program began
    /// (`None`: no deadline). A deadline is the clock at this entry plus the timeout: the
    /// implementation reads its clock later, so its deadline is this one or later.
    Begin { wait: usize, deadline: Option<u64> },
    /// Wait number `wait` returned, with the mutex held again; `timed_out` is what it said.
    End { wait: usize, timed_out: bool },
    /// `notify_one` returned `woke`. `after`: for a notification made outside the mutex, the
    /// index of its thread's mark (`None`: made while holding the mutex, at this entry).
    NotifyOne { woke: bool, after: Option<usize> },
    /// `notify_all` returned `count`; `after` as for `NotifyOne`.
    NotifyAll { count: usize, after: Option<usize> },
    /// The thread leaves the mutex to notify outside it.
    Mark,
}

/// An entry, who wrote it and the clock when it was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Logged {
    pub(crate) thread: usize,
    pub(crate) entry: Entry,
    /// Microseconds since the program began.
    pub(crate) now: u64,
}

/// Why a log is not explained by the specification, with the log.
#[derive(Debug)]
pub(crate) struct Violation(pub(crate) String);

/// A wait's state in the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum W {
    Unbegun,
    Registered,
    /// `by_all`: counted by a `notify_all` (for the situations: a wait requeued onto the
    /// mutex).
    Notified {
        by_all: bool,
    },
    Left,
    Ended,
}

/// The situations a log's explanation can pass through, named for the coverage table.
pub(crate) const SITUATIONS: [&str; 10] = [
    "notify_one with two or more waits queued",
    "notify_all reaching two or more waits under the mutex",
    "notify_all outside the mutex reaching two or more waits",
    "notify_one outside the mutex reaching a wait",
    "a wait timed out while another wait was in progress",
    "a notification reached a wait past its deadline",
    "a notification came after a wait timed out and before it returned",
    "a wait notify_all counted returned after its deadline passed",
    "two timed waits past their deadlines at once",
    "a wait began with its deadline already passed",
];

/// The bit of situation `i`.
pub(crate) const fn bit(i: usize) -> u32 {
    1 << i
}

/// The model's state before an entry: the waits' states and which outside notifications
/// have taken effect (a bit per entry index).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct State {
    at: usize,
    waits: Vec<W>,
    placed: u128,
}

struct Search<'a> {
    log: &'a [Logged],
    deadlines: Vec<Option<u64>>,
    seen: HashSet<State>,
    furthest: usize,
    why: String,
}

/// Checks `log` against the specification; `Ok` with the situations an explanation passed
/// through.
pub(crate) fn check(log: &[Logged]) -> Result<u32, Violation> {
    assert!(log.len() <= 128, "a log of at most 128 entries");
    let waits = log
        .iter()
        .filter(|l| matches!(l.entry, Entry::Begin { .. }))
        .count();
    let mut deadlines = vec![None; waits];
    for l in log {
        if let Entry::Begin { wait, deadline } = l.entry {
            deadlines[wait] = deadline;
        }
    }
    let mut search = Search {
        log,
        deadlines,
        seen: HashSet::new(),
        furthest: 0,
        why: String::new(),
    };
    let start = State {
        at: 0,
        waits: vec![W::Unbegun; waits],
        placed: 0,
    };
    match search.explore(start) {
        Some(reached) => Ok(reached),
        None => Err(Violation(format!(
            "the log is not explained by the condition variable's specification: no choice \
             gets past entry {} ({}); the log:\n{}",
            search.furthest,
            search.why,
            render(log)
        ))),
    }
}

/// The log, one entry a line.
pub(crate) fn render(log: &[Logged]) -> String {
    log.iter()
        .enumerate()
        .map(|(i, l)| format!("  {i:>3} t{} @{}us {:?}\n", l.thread, l.now, l.entry))
        .collect()
}

impl Search<'_> {
    fn fail(&mut self, at: usize, why: String) {
        if at >= self.furthest {
            self.furthest = at;
            self.why = why;
        }
    }

    /// Whether wait `w` may have left before entry `at` (the clock there reached its
    /// deadline). A `Begin`'s clock is read before its wait is queued, which happens before
    /// the next entry is written: what is placed before a `Begin` may have happened up to
    /// the next entry's clock.
    fn may_leave(&self, w: usize, at: usize) -> bool {
        let now = match self.log[at].entry {
            Entry::Begin { .. } if at + 1 < self.log.len() => self.log[at + 1].now,
            _ => self.log[at].now,
        };
        self.deadlines[w].is_some_and(|d| now >= d)
    }

    /// The situations of a state about to take entry `at` (or a notification placed before
    /// it).
    fn past_deadline(&self, s: &State, w: usize, at: usize) -> bool {
        s.waits[w] == W::Registered && self.may_leave(w, at)
    }

    /// Applies a notification (at entry `e`, taking effect before entry `at`) to `s`; the
    /// successor states with their situations.
    fn notify(&mut self, s: &State, e: usize, at: usize) -> Vec<(State, u32)> {
        let registered: Vec<usize> = (0..s.waits.len())
            .filter(|&w| s.waits[w] == W::Registered)
            .collect();
        let gone_before_return = s.waits.contains(&W::Left);
        let mut common = 0;
        if gone_before_return {
            common |= bit(6);
        }
        match self.log[e].entry {
            Entry::NotifyOne { woke: true, after } => {
                if registered.is_empty() {
                    self.fail(
                        at,
                        format!("notify_one at entry {e} woke a wait, but none was queued"),
                    );
                }
                let mut next = Vec::new();
                for &w in &registered {
                    let mut t = s.clone();
                    t.waits[w] = W::Notified { by_all: false };
                    let mut reached = common;
                    if registered.len() >= 2 {
                        reached |= bit(0);
                    }
                    if after.is_some() {
                        reached |= bit(3);
                    }
                    if self.may_leave(w, at) {
                        reached |= bit(5);
                    }
                    next.push((t, reached));
                }
                next
            }
            Entry::NotifyOne { woke: false, .. } => {
                if let Some(&w) = registered.first() {
                    self.fail(
                        at,
                        format!("notify_one at entry {e} found no wait, but wait {w} was queued"),
                    );
                    return Vec::new();
                }
                vec![(s.clone(), common)]
            }
            Entry::NotifyAll { count, after } => {
                if count != registered.len() {
                    self.fail(
                        at,
                        format!(
                            "notify_all at entry {e} returned {count}, but {} wait(s) were \
                             queued: {registered:?}",
                            registered.len()
                        ),
                    );
                    return Vec::new();
                }
                let mut t = s.clone();
                let mut reached = common;
                for &w in &registered {
                    t.waits[w] = W::Notified { by_all: true };
                    if self.may_leave(w, at) {
                        reached |= bit(5);
                    }
                }
                if count >= 2 {
                    reached |= if after.is_some() { bit(2) } else { bit(1) };
                }
                vec![(t, reached)]
            }
            _ => unreachable!("only notifications are placed"),
        }
    }

    /// Explores from `s`; the situations of the first explanation found.
    fn explore(&mut self, s: State) -> Option<u32> {
        if !self.seen.insert(s.clone()) {
            return None;
        }
        let at = s.at;
        if at == self.log.len() {
            if let Some(w) = s.waits.iter().position(|&w| w != W::Ended) {
                self.fail(at, format!("wait {w} never returned"));
                return None;
            }
            return Some(0);
        }
        let mut here = 0;
        let past: Vec<usize> = (0..s.waits.len())
            .filter(|&w| self.past_deadline(&s, w, at))
            .collect();
        if past.len() >= 2 {
            here |= bit(8);
        }
        // 1. Take entry `at` itself.
        let taken: Vec<(State, u32)> = match self.log[at].entry {
            Entry::Begin { wait, deadline } => {
                let mut t = s.clone();
                t.waits[wait] = W::Registered;
                let mut reached = 0;
                if deadline.is_some_and(|d| d <= self.log[at].now) {
                    reached |= bit(9);
                }
                vec![(t, reached)]
            }
            Entry::End { wait, timed_out } => match (s.waits[wait], timed_out) {
                (W::Left, true) => {
                    let mut t = s.clone();
                    t.waits[wait] = W::Ended;
                    let others = s.waits.iter().enumerate().any(|(w, &st)| {
                        w != wait && matches!(st, W::Registered | W::Notified { .. })
                    });
                    vec![(t, if others { bit(4) } else { 0 })]
                }
                (W::Notified { by_all }, false) => {
                    let mut t = s.clone();
                    t.waits[wait] = W::Ended;
                    let late =
                        by_all && self.deadlines[wait].is_some_and(|d| self.log[at].now >= d);
                    vec![(t, if late { bit(7) } else { 0 })]
                }
                (state, _) => {
                    self.fail(
                        at,
                        format!(
                            "wait {wait} returned {} but the model has it {state:?}",
                            if timed_out { "timed out" } else { "notified" }
                        ),
                    );
                    Vec::new()
                }
            },
            Entry::NotifyOne { after: None, .. } | Entry::NotifyAll { after: None, .. } => {
                self.notify(&s, at, at)
            }
            Entry::NotifyOne { after: Some(_), .. } | Entry::NotifyAll { after: Some(_), .. } => {
                if s.placed & (1 << at) == 0 {
                    self.fail(
                        at,
                        format!("the outside notification of entry {at} took effect nowhere"),
                    );
                    Vec::new()
                } else {
                    vec![(s.clone(), 0)]
                }
            }
            Entry::Mark => vec![(s.clone(), 0)],
        };
        for (mut t, reached) in taken {
            t.at = at + 1;
            if let Some(rest) = self.explore(t) {
                return Some(rest | reached | here);
            }
        }
        // 2. An outside notification takes effect before entry `at`.
        for e in at..self.log.len() {
            let mark = match self.log[e].entry {
                Entry::NotifyOne { after: Some(m), .. }
                | Entry::NotifyAll { after: Some(m), .. } => m,
                _ => continue,
            };
            if mark < at && s.placed & (1 << e) == 0 {
                for (mut t, reached) in self.notify(&s, e, at) {
                    t.placed |= 1 << e;
                    if let Some(rest) = self.explore(t) {
                        return Some(rest | reached | here);
                    }
                }
            }
        }
        // 3. A timed wait past its deadline leaves before entry `at`.
        for w in past {
            let mut t = s.clone();
            t.waits[w] = W::Left;
            if let Some(rest) = self.explore(t) {
                return Some(rest | here);
            }
        }
        None
    }
}

/// Known answers: logs the specification must accept, and logs it must reject, one per rule.
#[cfg(not(any(feature = "loom", feature = "shuttle")))]
mod known_answers {
    use super::{Entry, Logged, bit, check};

    fn log(entries: &[(usize, Entry, u64)]) -> Vec<Logged> {
        entries
            .iter()
            .map(|&(thread, entry, now)| Logged { thread, entry, now })
            .collect()
    }

    fn begin(wait: usize, deadline: Option<u64>) -> Entry {
        Entry::Begin { wait, deadline }
    }
    fn end(wait: usize, timed_out: bool) -> Entry {
        Entry::End { wait, timed_out }
    }
    fn one(woke: bool) -> Entry {
        Entry::NotifyOne { woke, after: None }
    }
    fn all(count: usize) -> Entry {
        Entry::NotifyAll { count, after: None }
    }

    #[test]
    fn a_notified_wait_passes() {
        let l = log(&[
            (1, begin(0, None), 0),
            (2, one(true), 0),
            (1, end(0, false), 0),
        ]);
        assert_eq!(check(&l).map_err(|v| v.0), Ok(0));
    }

    #[test]
    fn notify_one_finding_nobody_while_a_wait_is_queued_fails() {
        let l = log(&[
            (1, begin(0, None), 0),
            (2, one(false), 0),
            (2, all(1), 0),
            (1, end(0, false), 0),
        ]);
        let e = check(&l).unwrap_err().0;
        assert!(e.contains("found no wait, but wait 0 was queued"), "{e}");
    }

    #[test]
    fn a_spurious_wake_up_fails() {
        let l = log(&[(1, begin(0, None), 0), (1, end(0, false), 0)]);
        let e = check(&l).unwrap_err().0;
        assert!(
            e.contains("returned notified but the model has it Registered"),
            "{e}"
        );
    }

    #[test]
    fn a_timeout_needs_the_clock_past_the_deadline() {
        let early = log(&[(1, begin(0, Some(1000)), 0), (1, end(0, true), 999)]);
        assert!(check(&early).is_err());
        let late = log(&[(1, begin(0, Some(1000)), 0), (1, end(0, true), 1000)]);
        assert_eq!(check(&late).map_err(|v| v.0), Ok(0));
    }

    #[test]
    fn a_timed_wait_past_its_deadline_may_be_notified_or_gone() {
        // Gone: notify_one found nobody.
        let gone = log(&[
            (1, begin(0, Some(10)), 0),
            (2, one(false), 20),
            (1, end(0, true), 20),
        ]);
        assert_eq!(check(&gone).map_err(|v| v.0), Ok(bit(6)));
        // Reached first.
        let reached = log(&[
            (1, begin(0, Some(10)), 0),
            (2, one(true), 20),
            (1, end(0, false), 20),
        ]);
        assert_eq!(check(&reached).map_err(|v| v.0), Ok(bit(5)));
        // Not yet past its deadline: it cannot be gone.
        let early = log(&[
            (1, begin(0, Some(10)), 0),
            (2, one(false), 5),
            (1, end(0, true), 20),
        ]);
        assert!(check(&early).is_err());
    }

    #[test]
    fn notify_all_counts_exactly_the_queued_waits() {
        let ok = log(&[
            (1, begin(0, None), 0),
            (2, begin(1, None), 0),
            (3, all(2), 0),
            (2, end(1, false), 0),
            (1, end(0, false), 0),
        ]);
        assert_eq!(check(&ok).map_err(|v| v.0), Ok(bit(1)));
        let short = log(&[
            (1, begin(0, None), 0),
            (2, begin(1, None), 0),
            (3, all(1), 0),
            (2, end(1, false), 0),
            (1, end(0, false), 0),
        ]);
        let e = check(&short).unwrap_err().0;
        assert!(e.contains("returned 1, but 2 wait(s)"), "{e}");
    }

    #[test]
    fn a_requeued_wait_past_its_deadline_is_not_a_timeout() {
        let ok = log(&[
            (1, begin(0, Some(10)), 0),
            (2, all(1), 5),
            (1, end(0, false), 50),
        ]);
        assert_eq!(check(&ok).map_err(|v| v.0), Ok(bit(7)));
        let timed_out = log(&[
            (1, begin(0, Some(10)), 0),
            (2, all(1), 5),
            (1, end(0, true), 50),
        ]);
        assert!(check(&timed_out).is_err());
    }

    #[test]
    fn an_outside_notification_lands_between_its_mark_and_its_result() {
        // Marked before the wait began: it may land after the wait began.
        let ok = log(&[
            (2, Entry::Mark, 0),
            (1, begin(0, None), 0),
            (
                2,
                Entry::NotifyOne {
                    woke: true,
                    after: Some(0),
                },
                0,
            ),
            (1, end(0, false), 0),
        ]);
        assert_eq!(check(&ok).map_err(|v| v.0), Ok(bit(3)));
        // Marked after the wait ended: it cannot have woken it.
        let late = log(&[
            (1, begin(0, None), 0),
            (1, end(0, false), 0),
            (2, Entry::Mark, 0),
            (
                2,
                Entry::NotifyOne {
                    woke: true,
                    after: Some(2),
                },
                0,
            ),
        ]);
        assert!(check(&late).is_err());
    }

    /// Wait 1's `Begin` is written (its clock read) before it is queued; in that gap the
    /// clock passes wait 0's deadline and wait 0 leaves, and the outside `notify_one`
    /// (marked before wait 1 began) finds nobody. A correct condition variable can write
    /// this log.
    #[test]
    fn a_wait_may_leave_between_a_begin_and_its_queueing() {
        let l = log(&[
            (1, begin(0, Some(1000)), 0),
            (3, Entry::Mark, 0),
            (2, begin(1, None), 0),
            (1, end(0, true), 1000),
            (
                3,
                Entry::NotifyOne {
                    woke: false,
                    after: Some(1),
                },
                1000,
            ),
            (4, all(1), 1000),
            (2, end(1, false), 1000),
        ]);
        assert!(check(&l).is_ok(), "{:?}", check(&l).map_err(|v| v.0));
    }

    #[test]
    fn every_wait_must_return() {
        let l = log(&[(1, begin(0, None), 0), (2, one(true), 0)]);
        let e = check(&l).unwrap_err().0;
        assert!(e.contains("never returned"), "{e}");
    }
}
