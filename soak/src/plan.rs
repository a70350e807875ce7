//! What a round does, drawn from its seed: the scenario, the fairness mode, the permits, the
//! threads, the request sizes, the mix of acquire forms and timeouts, and whether and when
//! to close. A round's plan is a pure function of (the soak's seed, the round's number, the
//! options that restrict the draw), so `--seed` replays it and a report can name it.

use std::time::Duration;

use parksema::Fairness;
use serde::Serialize;

use crate::rng::Rng;

/// The kinds of round the soak rotates through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Scenario {
    /// Weighted traffic of every operation: blocking, non-blocking and timed acquires
    /// (borrowed and owned), holds, `split`, `merge`, `release_fair`, permits forgotten and
    /// added back, and a conductor thread that adds, forgets and over-fills.
    Traffic,
    /// The same traffic, and the conductor closes the semaphore in the middle of it.
    Close,
    /// Waiters parked one by one in a known order, then permits released a few at a time:
    /// who is served must be what the mode promises (under `Fifo`, arrival order), no one
    /// may barge under `Fifo`, and sometimes `close` ends it with waiters parked.
    Queue,
    /// A timed waiter and an untimed one behind it; a release lands near the deadline.
    Deadline,
    /// The fairness experiment's shape: a few threads re-acquiring one or two permits at
    /// once, so the longest streak of one thread shows what each mode allows.
    Streak,
}

impl Scenario {
    /// Every scenario, in the report's order.
    pub(crate) const ALL: [Scenario; 5] = [
        Scenario::Traffic,
        Scenario::Close,
        Scenario::Queue,
        Scenario::Deadline,
        Scenario::Streak,
    ];

    /// The name used on the command line and in reports.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Scenario::Traffic => "traffic",
            Scenario::Close => "close",
            Scenario::Queue => "queue",
            Scenario::Deadline => "deadline",
            Scenario::Streak => "streak",
        }
    }

    /// Its index in [`Scenario::ALL`].
    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// The semaphore's fairness mode, as the soak names it (parksema's `Fairness` is
/// `non_exhaustive`; this one lists exactly the modes that exist).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, clap::ValueEnum)]
pub(crate) enum Mode {
    /// `Fairness::Eventual`.
    Eventual,
    /// `Fairness::Fifo`.
    Fifo,
    /// `Fairness::Barging`.
    Barging,
}

impl Mode {
    /// Every mode, in the report's order.
    pub(crate) const ALL: [Mode; 3] = [Mode::Eventual, Mode::Fifo, Mode::Barging];

    /// The semaphore's fairness for this mode.
    pub(crate) fn fairness(self) -> Fairness {
        match self {
            Mode::Eventual => Fairness::Eventual,
            Mode::Fifo => Fairness::Fifo,
            Mode::Barging => Fairness::Barging,
        }
    }

    /// The name in reports (the variant's).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Mode::Eventual => "Eventual",
            Mode::Fifo => "Fifo",
            Mode::Barging => "Barging",
        }
    }

    /// Its index in [`Mode::ALL`].
    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// How a traffic operation asks for its permits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Form {
    /// `acquire`, `acquire_many` or `acquire_many_owned`: waits as long as it takes.
    Blocking,
    /// `try_acquire`, `try_acquire_many` or `try_acquire_many_owned`: never waits.
    Try,
    /// `try_acquire_for` / `try_acquire_many_for` with this timeout (zero included).
    For(Duration),
    /// `try_acquire_until` / `try_acquire_many_until`, this far ahead (`None`: a deadline
    /// already past).
    Until(Option<Duration>),
}

/// How a holder gives its permits back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Return {
    /// Drops the guard.
    Drop,
    /// Splits one permit off at a time and drops each part.
    Split,
    /// `release_fair`: hands them to the parked threads they satisfy.
    Fair,
    /// Forgets the guard, then adds the permits back with `add_permits`.
    ForgetAndAdd,
}

/// Everything one traffic operation does, drawn before it starts: the same number of draws
/// whatever happens, so that a thread's sequence of operations depends on its seed alone,
/// never on which of its calls succeeded (a replay attempts the same operations even where a
/// race ends differently).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Op {
    /// The request.
    pub(crate) n: usize,
    /// How it asks.
    pub(crate) form: Form,
    /// An `_owned` call (blocking and non-blocking forms).
    pub(crate) owned: bool,
    /// `acquire`/`try_acquire`/`try_acquire_for`/`_until` rather than the `_many` call, when
    /// `n` is 1.
    pub(crate) single: bool,
    /// Spin-loop iterations to hold for.
    pub(crate) spins: u64,
    /// Yield once while holding.
    pub(crate) yield_holding: bool,
    /// Take this many more without waiting and merge them in.
    pub(crate) merge: Option<usize>,
    /// How to give the permits back.
    pub(crate) give_back: Return,
    /// Yield between forgetting a guard and adding its permits back.
    pub(crate) yield_forgotten: bool,
}

/// The timeouts of the timed forms: zero (a free permit is taken, nothing waits), then from
/// shorter than a park-and-wake round trip (about 10 µs here) to a few of them, to longer than
/// a typical hold.
const TIMEOUTS: [Duration; 6] = [
    Duration::ZERO,
    Duration::from_micros(1),
    Duration::from_micros(10),
    Duration::from_micros(100),
    Duration::from_micros(500),
    Duration::from_millis(2),
];

/// The mixes of acquire forms (blocking, try, for, until), one drawn per round.
const FORM_MIXES: [[u32; 4]; 4] = [[4, 3, 2, 1], [8, 1, 1, 0], [2, 1, 4, 3], [1, 6, 2, 1]];

/// What restricts the draw: the options of the run.
#[derive(Clone, Debug)]
pub(crate) struct Limits {
    /// The most worker threads a round may start (`--threads`).
    pub(crate) threads: usize,
    /// The scenarios to rotate through (`--scenario`; all by default).
    pub(crate) scenarios: Vec<Scenario>,
    /// The modes to rotate through (`--fairness`; all by default).
    pub(crate) modes: Vec<Mode>,
    /// Check the `Fifo` promises on semaphores of this mode too (`--check-fifo-on`), to show
    /// that those checks fail where the promise is not made.
    pub(crate) fifo_checks_on: Option<Mode>,
}

/// One round's plan.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    /// The round's number (from 0).
    pub(crate) round: u64,
    /// The round's own seed, derived from the soak's; every thread's stream derives from it.
    pub(crate) seed: u64,
    /// What the round does.
    pub(crate) scenario: Scenario,
    /// The semaphore's mode.
    pub(crate) mode: Mode,
    /// Whether the queue scenario holds the semaphore to the `Fifo` promises (arrival order,
    /// no barging): the mode is `Fifo`, or `--check-fifo-on` names it.
    pub(crate) fifo_checks: bool,
    /// The permits the semaphore starts with.
    pub(crate) permits: usize,
    /// The worker threads (the conductor, which is the round's main thread, comes on top).
    pub(crate) threads: usize,
    /// The largest request (`acquire_many(n)`, n up to this).
    pub(crate) max_weight: usize,
    /// Operations per worker (traffic and streak; the close scenario's workers run until
    /// the close).
    pub(crate) ops_per_thread: usize,
    /// The weights of the acquire forms (blocking, try, for, until).
    pub(crate) forms: [u32; 4],
    /// The most spin-loop iterations a holder holds for (a random number up to it).
    pub(crate) spin: u32,
    /// Repetitions (queue: waiters parked and served; deadline: the race).
    pub(crate) reps: usize,
    /// The conductor's operations in a traffic round.
    pub(crate) conductor_ops: usize,
    /// Close scenario: successful acquisitions before the conductor closes.
    pub(crate) close_after: u64,
    /// Queue scenario: close at this step of the last repetition (or once its queue is
    /// empty, if that comes first).
    pub(crate) close_at_step: Option<usize>,
    /// Streak scenario: how many of 8 returns are `release_fair`.
    pub(crate) fair_in_8: u64,
}

impl Plan {
    /// The plan of round `round` of the soak seeded with `seed`.
    pub(crate) fn new(seed: u64, round: u64, limits: &Limits) -> Plan {
        let round_seed = Rng::derive(seed, round);
        let mut rng = Rng::new(round_seed);
        let scenario = rng.pick(&limits.scenarios);
        let mode = rng.pick(&limits.modes);
        let mut plan = Plan {
            round,
            seed: round_seed,
            scenario,
            mode,
            fifo_checks: mode == Mode::Fifo || limits.fifo_checks_on == Some(mode),
            permits: 1,
            threads: 2,
            max_weight: 1,
            ops_per_thread: 0,
            forms: FORM_MIXES[0],
            spin: 0,
            reps: 0,
            conductor_ops: 0,
            close_after: 0,
            close_at_step: None,
            fair_in_8: 0,
        };
        let max_threads = limits.threads;
        match scenario {
            Scenario::Traffic | Scenario::Close => {
                plan.permits = rng.pick(&[1, 1, 2, 3, 4, 4, 8, 16]);
                plan.max_weight = if rng.chance(1, 3) {
                    1
                } else {
                    rng.range(1, plan.permits.min(8))
                };
                plan.threads = rng.range(2, max_threads);
                // 2 000 to 20 000 operations in all: tens to a few hundred milliseconds on
                // 2 cores, so the rotation comes round to every scenario and mode within
                // seconds.
                let total = rng.range(2_000, 20_000);
                plan.ops_per_thread = (total / plan.threads).max(50);
                plan.forms = rng.pick(&FORM_MIXES);
                plan.spin = rng.pick(&[0, 16, 256, 4096]);
                plan.conductor_ops = rng.range(0, 40);
                plan.close_after = rng.range(20, total / 4) as u64;
            }
            Scenario::Queue => {
                plan.permits = rng.range(1, 6);
                plan.max_weight = plan.permits;
                plan.threads = rng.range(2, max_threads);
                plan.reps = rng.range(2, 12);
                if rng.chance(1, 4) {
                    plan.close_at_step = Some(rng.range(0, 3));
                }
            }
            Scenario::Deadline => {
                plan.permits = rng.range(1, 3);
                plan.max_weight = plan.permits;
                plan.threads = 2;
                plan.reps = rng.range(3, 10);
            }
            Scenario::Streak => {
                plan.permits = if rng.chance(3, 4) { 1 } else { 2 };
                plan.threads = rng.range(2, max_threads.min(4));
                // A hold of about 1 µs, 12 µs or 120 µs (50, 500 or 5 000 spin-loop hints),
                // and enough acquisitions for tens to hundreds of milliseconds per thread: a
                // round much shorter than a scheduler time slice lets each thread run alone,
                // which measures nothing.
                plan.spin = rng.pick(&[50, 500, 5_000]);
                plan.ops_per_thread = match plan.spin {
                    50 => rng.range(10_000, 25_000),
                    500 => rng.range(1_500, 4_000),
                    _ => rng.range(250, 750),
                };
                plan.fair_in_8 = rng.pick(&[0, 0, 1, 4]);
            }
        }
        plan
    }

    /// A one-line description for reports.
    pub(crate) fn describe(&self) -> String {
        let mut s = format!(
            "{}, {}, {} permit{}, {} thread{}",
            self.scenario.name(),
            self.mode.name(),
            self.permits,
            if self.permits == 1 { "" } else { "s" },
            self.threads,
            if self.threads == 1 { "" } else { "s" },
        );
        match self.scenario {
            Scenario::Traffic | Scenario::Close => {
                s += &format!(
                    ", requests up to {}, {} operations each",
                    self.max_weight, self.ops_per_thread
                );
                if self.scenario == Scenario::Close {
                    s += &format!(", closed after {} acquisitions", self.close_after);
                }
            }
            Scenario::Queue | Scenario::Deadline => {
                s += &format!(", {} repetitions", self.reps);
                if let Some(step) = self.close_at_step {
                    s += &format!(", closed at step {step} of the last");
                }
            }
            Scenario::Streak => s += &format!(", {} acquisitions each", self.ops_per_thread),
        }
        if self.fifo_checks && self.mode != Mode::Fifo {
            s += ", Fifo checks on (--check-fifo-on)";
        }
        s
    }

    /// A request size for a traffic operation: half of them one permit, the rest up to the
    /// round's largest.
    pub(crate) fn weight(&self, rng: &mut Rng) -> usize {
        if self.max_weight == 1 || rng.chance(1, 2) {
            1
        } else {
            rng.range(1, self.max_weight)
        }
    }

    /// An acquire form for a traffic operation, from the round's mix.
    pub(crate) fn form(&self, rng: &mut Rng) -> Form {
        match rng.weighted(&self.forms) {
            0 => Form::Blocking,
            1 => Form::Try,
            2 => Form::For(rng.pick(&TIMEOUTS)),
            _ if rng.chance(1, 4) => Form::Until(None),
            _ => Form::Until(Some(rng.pick(&TIMEOUTS))),
        }
    }

    /// The next traffic operation of a thread whose generator is `rng`.
    pub(crate) fn op(&self, rng: &mut Rng) -> Op {
        let n = self.weight(rng);
        let form = self.form(rng);
        let owned = rng.chance(1, 8);
        let single = rng.chance(1, 2) && n == 1;
        let spins = rng.below(u64::from(self.spin) + 1);
        let yield_holding = rng.chance(1, 32);
        let merge = rng.chance(1, 6);
        let more = self.weight(rng);
        let give_back = self.give_back(rng, n);
        let yield_forgotten = rng.chance(1, 2);
        Op {
            n,
            form,
            owned,
            single,
            spins,
            yield_holding,
            merge: merge.then_some(more),
            give_back,
            yield_forgotten,
        }
    }

    /// How a holder of `n` permits returns them.
    fn give_back(&self, rng: &mut Rng, n: usize) -> Return {
        match rng.weighted(&[5, if n >= 2 { 2 } else { 0 }, 2, 1]) {
            0 => Return::Drop,
            1 => Return::Split,
            2 => Return::Fair,
            _ => Return::ForgetAndAdd,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            threads: 8,
            scenarios: Scenario::ALL.to_vec(),
            modes: Mode::ALL.to_vec(),
            fifo_checks_on: None,
        }
    }

    #[test]
    fn a_plan_is_a_function_of_seed_and_round() {
        let a = Plan::new(42, 7, &limits());
        let b = Plan::new(42, 7, &limits());
        assert_eq!(a.describe(), b.describe());
        assert_eq!(a.seed, b.seed);
        assert_ne!(Plan::new(42, 8, &limits()).seed, a.seed);
    }

    #[test]
    fn every_scenario_and_mode_comes_round_and_sizes_stay_in_bounds() {
        let mut seen = [[false; 3]; 5];
        for round in 0..500 {
            let p = Plan::new(1, round, &limits());
            seen[p.scenario.index()][p.mode.index()] = true;
            assert!((1..=16).contains(&p.permits), "{}", p.describe());
            assert!(p.max_weight <= p.permits.max(1), "{}", p.describe());
            assert!((2..=8).contains(&p.threads), "{}", p.describe());
            assert_eq!(p.fifo_checks, p.mode == Mode::Fifo);
        }
        assert!(seen.iter().flatten().all(|&s| s), "{seen:?}");
    }

    #[test]
    fn a_threads_operations_depend_on_its_seed_alone() {
        let p = Plan::new(3, 0, &limits());
        let ops = |seed| {
            let mut rng = Rng::new(seed);
            (0..100)
                .map(|_| format!("{:?}", p.op(&mut rng)))
                .collect::<Vec<_>>()
        };
        assert_eq!(ops(9), ops(9));
        assert_ne!(ops(9), ops(10));
    }

    #[test]
    fn restrictions_are_honoured() {
        let l = Limits {
            threads: 3,
            scenarios: vec![Scenario::Queue],
            modes: vec![Mode::Eventual],
            fifo_checks_on: Some(Mode::Eventual),
        };
        for round in 0..50 {
            let p = Plan::new(5, round, &l);
            assert_eq!((p.scenario, p.mode), (Scenario::Queue, Mode::Eventual));
            assert!(p.fifo_checks && p.threads <= 3);
        }
    }
}
