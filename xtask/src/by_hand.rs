//! Mutants that `cargo mutants` cannot make (memory orderings, literals and constants,
//! arguments and method calls) and the breakages that demonstrate each row of
//! `docs/promises.md`. Each is applied by hand to a copy of the workspace and run against
//! every check listed for it, each of which must fail; `cargo xtask mutants --by-hand`
//! reports which were caught by which check and writes `mutants/by-hand.md`.

/// One hand-made mutant.
pub(crate) struct HandMutant {
    /// A short name.
    pub(crate) id: &'static str,
    /// The promise of `docs/promises.md` it breaks (its row's number), if any.
    pub(crate) promise: Option<u8>,
    /// The file it changes, relative to the workspace root.
    pub(crate) file: &'static str,
    /// The original text, which must occur exactly once in `file`.
    pub(crate) find: &'static str,
    /// What replaces it.
    pub(crate) replace: &'static str,
    /// The checks that must each fail: in two builds wherever two can see the breakage.
    pub(crate) checks: &'static [Check],
    /// Why fewer than two builds' checks are listed, where that is so.
    pub(crate) why_one_build: Option<&'static str>,
}

/// A check: the `cargo test` arguments that run it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Check {
    /// Shown in the report.
    pub(crate) name: &'static str,
    /// The build it runs in: `real`, `loom` or `shuttle`.
    pub(crate) build: &'static str,
    /// Arguments after `cargo`.
    pub(crate) args: &'static [&'static str],
}

/// A check that runs one test (`--exact NAME`) of an integration-test target of the
/// parksema package: the build, the label the name starts with, the features, the target.
macro_rules! one_test {
    ($build:literal, $label:literal, $features:literal, $target:literal, $test:literal) => {
        Check {
            name: concat!($label, $test, "`"),
            build: $build,
            args: &[
                "test",
                "-p",
                "parksema",
                "--features",
                $features,
                "--test",
                $target,
                "--",
                "--exact",
                $test,
            ],
        }
    };
}

/// A loom model of `models/loom.rs`, by name.
macro_rules! loom {
    ($model:literal) => {
        one_test!("loom", "loom `", "loom", "loom", $model)
    };
}

/// A shuttle test of `models/shuttle.rs`, by name.
macro_rules! shuttle {
    ($test:literal) => {
        one_test!("shuttle", "shuttle `", "shuttle", "shuttle", $test)
    };
}

/// A real-thread stress test of `stress/`, by name (debug sizes).
macro_rules! stress {
    ($test:literal) => {
        one_test!("real", "real `stress::", "broken_sema", "stress", $test)
    };
}

/// The library's unit tests (`src/semaphore/tests.rs`), real build.
const REAL_UNIT: Check = Check {
    name: "real unit tests (`src/semaphore/tests.rs`)",
    build: "real",
    args: &[
        "test",
        "-p",
        "parksema",
        "--features",
        "broken_sema",
        "--lib",
    ],
};
/// The single-threaded API tests (`tests/api.rs`), real build.
const REAL_API: Check = Check {
    name: "real API tests (`tests/api.rs`)",
    build: "real",
    args: &[
        "test",
        "-p",
        "parksema",
        "--features",
        "broken_sema",
        "--test",
        "api",
    ],
};

/// The hand-made mutants: first those `cargo mutants` cannot make, then the breakages of
/// `docs/promises.md` not already among them.
pub(crate) const MUTANTS: &[HandMutant] = &[
    // Orderings: each Acquire/Release that pairs with another, weakened to Relaxed (a fence
    // is deleted, since `fence(Relaxed)` panics). Only loom can see them (shuttle runs every
    // atomic as SeqCst; x86-64 makes every locked read-modify-write a full barrier), so the
    // second check is a second loom model.
    HandMutant {
        id: "take: Acquire CAS -> Relaxed",
        promise: Some(5),
        file: "src/semaphore/take.rs",
        find: "            s - n * ONE,\n            self.permit_ordering(Ordering::Acquire),",
        replace: "            s - n * ONE,\n            self.permit_ordering(Ordering::Relaxed),",
        checks: &[loom!("visibility"), loom!("unwind_and_move")],
        why_one_build: Some(ORDERINGS),
    },
    HandMutant {
        id: "try_add_permits: Release CAS -> Relaxed",
        promise: Some(5),
        file: "src/semaphore/give.rs",
        find: "self.flaw.release_ordering(s, Ordering::Release)",
        replace: "self.flaw.release_ordering(s, Ordering::Relaxed)",
        checks: &[loom!("visibility"), loom!("unwind_and_move")],
        why_one_build: Some(ORDERINGS),
    },
    HandMutant {
        id: "close: Release fetch_or -> Relaxed",
        promise: Some(6),
        file: "src/semaphore/api.rs",
        find: "fetch_or(CLOSED, Ordering::Release)",
        replace: "fetch_or(CLOSED, Ordering::Relaxed)",
        checks: &[
            loom!("close_publishes"),
            loom!("close_races_announced_acquirers"),
        ],
        why_one_build: Some(ORDERINGS),
    },
    HandMutant {
        id: "is_closed: Acquire load -> Relaxed",
        promise: Some(6),
        file: "src/semaphore/api.rs",
        find: "self.state.load(Ordering::Acquire) & CLOSED != 0",
        replace: "self.state.load(Ordering::Relaxed) & CLOSED != 0",
        checks: &[loom!("close_publishes"), loom!("add_after_close")],
        why_one_build: Some(ORDERINGS),
    },
    HandMutant {
        id: "try_acquire_n: Acquire fence on CLOSED deleted",
        promise: Some(6),
        file: "src/semaphore/take.rs",
        find: "            if GUARDED && s & CLOSED != 0 {\n                // Acquire: pairs with `close`'s Release.\n                fence(Ordering::Acquire);\n",
        replace: "            if GUARDED && s & CLOSED != 0 {\n                // Acquire: pairs with `close`'s Release.\n",
        checks: &[
            loom!("close_publishes"),
            loom!("close_races_announced_acquirers"),
        ],
        why_one_build: Some(ORDERINGS),
    },
    HandMutant {
        id: "acquire_slow: Acquire fence on CLOSED deleted",
        promise: Some(6),
        file: "src/semaphore/take.rs",
        find: "                // Acquire: pairs with `close`'s Release (also for a thread `close` woke).\n                fence(Ordering::Acquire);",
        replace: "                // Acquire: pairs with `close`'s Release (also for a thread `close` woke).",
        checks: &[
            loom!("close_publishes"),
            loom!("close_races_announced_acquirers"),
        ],
        why_one_build: Some(ORDERINGS),
    },
    // Literals and constants.
    HandMutant {
        id: "CLOSED = WAITERS's bit (0b010 -> 0b001)",
        promise: None,
        file: "src/semaphore/word.rs",
        find: "const CLOSED: usize = 0b010;",
        replace: "const CLOSED: usize = 0b001;",
        checks: &[REAL_UNIT, loom!("close_wakes_two_parked")],
        why_one_build: None,
    },
    HandMutant {
        id: "FLAG_BITS 3 -> 2 (ONE and MAX_PERMITS change)",
        promise: Some(13),
        file: "src/semaphore/word.rs",
        find: "const FLAG_BITS: u32 = 3;",
        replace: "const FLAG_BITS: u32 = 2;",
        checks: &[REAL_API, loom!("refused_adds_near_max")],
        why_one_build: None,
    },
    HandMutant {
        id: "FLAG_BITS 3 -> 4",
        promise: Some(13),
        file: "src/semaphore/word.rs",
        find: "const FLAG_BITS: u32 = 3;",
        replace: "const FLAG_BITS: u32 = 4;",
        checks: &[REAL_API, loom!("refused_adds_near_max")],
        why_one_build: None,
    },
    HandMutant {
        id: "parked_threads counts from 1",
        promise: None,
        file: "src/semaphore/api.rs",
        find: "let mut parked = 0;",
        replace: "let mut parked = 1;",
        checks: &[REAL_UNIT, loom!("close_wakes_two_parked")],
        why_one_build: None,
    },
    // Arguments and method calls.
    HandMutant {
        id: "a release wakes only the first request that fits",
        promise: Some(8),
        file: "src/semaphore/give.rs",
        find: "            *left -= want;\n",
        replace: "            *left = 0;\n",
        checks: &[
            REAL_UNIT,
            loom!("release_of_two_wakes_two"),
            shuttle!("batch_wakes_several"),
        ],
        why_one_build: None,
    },
    HandMutant {
        id: "close wakes only the requests that fit, not all (unpark_waiters(true) -> false)",
        promise: Some(9),
        file: "src/semaphore/api.rs",
        find: "            self.unpark_waiters(true);",
        replace: "            self.unpark_waiters(false);",
        checks: &[
            REAL_UNIT,
            loom!("close_wakes_two_parked"),
            shuttle!("close_wakes_four_parked"),
        ],
        why_one_build: None,
    },
    HandMutant {
        id: "close toggles CLOSED (fetch_or -> fetch_xor)",
        promise: Some(2),
        file: "src/semaphore/api.rs",
        find: "fetch_or(CLOSED, Ordering::Release)",
        replace: "fetch_xor(CLOSED, Ordering::Release)",
        checks: &[
            REAL_API,
            loom!("add_after_close"),
            shuttle!("add_after_close"),
        ],
        why_one_build: None,
    },
    HandMutant {
        id: "the unpark callback sets instead of clearing WAITERS (fetch_and -> fetch_or)",
        promise: Some(12),
        file: "src/semaphore/give.rs",
        find: "                self.state.fetch_and(!WAITERS, Ordering::Relaxed);\n            }\n            DEFAULT_UNPARK_TOKEN",
        replace: "                self.state.fetch_or(WAITERS, Ordering::Relaxed);\n            }\n            DEFAULT_UNPARK_TOKEN",
        checks: &[
            REAL_UNIT,
            loom!("wakes_every_waiter"),
            shuttle!("wakes_every_waiter"),
        ],
        why_one_build: None,
    },
    // The promises' own breakages (docs/promises.md), where no mutant above is one.
    HandMutant {
        id: "try_acquire takes a permit from a closed semaphore that has one",
        promise: Some(1),
        file: "src/semaphore/take.rs",
        find: "            if GUARDED && s & CLOSED != 0 {\n",
        replace: "            if GUARDED && s & CLOSED != 0 && s < ONE {\n",
        checks: &[
            REAL_API,
            loom!("add_after_close"),
            shuttle!("add_after_close"),
        ],
        why_one_build: None,
    },
    HandMutant {
        id: "a woken acquire takes a permit added after close",
        promise: Some(2),
        file: "src/semaphore/take.rs",
        find: "            if s & CLOSED != 0 {\n                // Acquire: pairs with `close`'s Release (also for a thread `close` woke).",
        replace: "            if s & CLOSED != 0 && !fits(s, n) {\n                // Acquire: pairs with `close`'s Release (also for a thread `close` woke).",
        checks: &[
            loom!("add_after_close"),
            shuttle!("add_after_close"),
            stress!("shared_add_after_close"),
        ],
        why_one_build: None,
    },
    HandMutant {
        id: "a thread may park without WAITERS or when closed (flags ignored)",
        promise: Some(3),
        file: "src/semaphore/word.rs",
        find: "    s & (WAITERS | CLOSED) == WAITERS && !fits(s, n)\n",
        replace: "    !fits(s, n)\n",
        // A late waiter parks in the state 0 that an unpark finding nobody left behind, or
        // in CLOSED after close's unpark: (a) with two rounds and the announced acquirers of
        // (i) reach those states; (b) does not (its adder's permits stay until taken).
        checks: &[
            REAL_UNIT,
            loom!("one_permit_two_threads"),
            loom!("close_races_announced_acquirers"),
            shuttle!("one_permit_six_threads"),
        ],
        why_one_build: None,
    },
    HandMutant {
        id: "a thread may park whenever WAITERS is set (count and CLOSED ignored)",
        promise: Some(3),
        file: "src/semaphore/word.rs",
        find: "    s & (WAITERS | CLOSED) == WAITERS && !fits(s, n)\n",
        replace: "    s & WAITERS != 0\n",
        // A release that passes over a large head leaves the bit set for it; a small request
        // that validates after that release's unpark parks with its permit free, and nobody
        // is left to wake it.
        checks: &[
            REAL_UNIT,
            loom!("small_arrives_as_a_large_head_is_passed_over"),
            shuttle!("small_arrives_as_a_large_head_is_passed_over"),
        ],
        why_one_build: None,
    },
    HandMutant {
        id: "under FIFO an acquirer sets WAITERS before it is queued",
        promise: Some(24),
        file: "src/semaphore/take.rs",
        find: "        self.flaw.announces_before_park(s & FIFO == 0)\n",
        replace: "        self.flaw.announces_before_park({\n            let _ = s;\n            true\n        })\n",
        // A request that fits, arriving while the announcer is between its CAS and the
        // bucket lock, is queued first and sleeps as the head with its request free.
        checks: &[
            REAL_UNIT,
            loom!("fifo_arrivals_race_a_free_permit"),
            shuttle!("fifo_arrivals_race_a_free_permit"),
        ],
        why_one_build: None,
    },
    HandMutant {
        id: "a release's filter counts one permit more than is free",
        promise: Some(7),
        file: "src/semaphore/give.rs",
        find: "self.state.load(Ordering::Relaxed) >> FLAG_BITS);",
        replace: "(self.state.load(Ordering::Relaxed) >> FLAG_BITS) + 1);",
        checks: &[
            REAL_UNIT,
            loom!("wakes_every_waiter"),
            shuttle!("wakes_every_waiter"),
        ],
        why_one_build: None,
    },
    HandMutant {
        id: "a guard dropped while unwinding keeps its permit",
        promise: Some(10),
        file: "src/semaphore/give.rs",
        find: "    pub(crate) fn release_from_guard(&self, n: usize) {\n",
        replace: "    pub(crate) fn release_from_guard(&self, n: usize) {\n        if std::thread::panicking() {\n            return;\n        }\n",
        checks: &[
            REAL_API,
            loom!("unwind_and_move"),
            shuttle!("unwind_and_move"),
        ],
        why_one_build: None,
    },
    HandMutant {
        id: "a refused add clears WAITERS",
        promise: Some(11),
        file: "src/semaphore/give.rs",
        find: "        room(s, n)?;\n        if fair || s & FIFO != 0 {",
        replace: "        if let Err(e) = room(s, n) {\n            self.state.fetch_and(!WAITERS, Ordering::Relaxed);\n            return Err(e);\n        }\n        if fair || s & FIFO != 0 {",
        checks: &[
            stress!("shared_releases_race"),
            loom!("release_of_two_wakes_two"),
            shuttle!("releases_race"),
        ],
        why_one_build: None,
    },
    HandMutant {
        id: "a handing-over release checks the count only after the handoff",
        promise: Some(11),
        file: "src/semaphore/give.rs",
        find: "        room(s, n)?;\n        if fair || s & FIFO != 0 {\n            return self.hand_over(n, None).map(|()| None);\n        }\n        if let Some(now) = self.turn_due() {\n            return self.hand_over(n, Some(now)).map(|()| None);\n        }\n",
        replace: "        if fair || s & FIFO != 0 {\n            return self.hand_over(n, None).map(|()| None);\n        }\n        if let Some(now) = self.turn_due() {\n            return self.hand_over(n, Some(now)).map(|()| None);\n        }\n        room(s, n)?;\n",
        checks: &[one_test!(
            "real",
            "real `tests/api.rs::",
            "broken_sema",
            "api",
            "a_refused_add_hands_nothing_to_a_parked_thread"
        )],
        why_one_build: Some(
            "one parked thread and one over-full add show it deterministically; the model \
             scenarios' refused adds run where no release hands over (`Eventual` before its \
             first turn)",
        ),
    },
    HandMutant {
        id: "the MAX_PERMITS check is not repeated after a failed CAS",
        promise: Some(11),
        file: "src/semaphore/give.rs",
        find: "            match self.add(s, n) {\n                Ok(_) => return Ok(()),\n                Err(now) => s = now,\n            }",
        replace: "            match self.add(s, n) {\n                Ok(_) => return Ok(()),\n                Err(mut now) => {\n                    while let Err(again) = self.add(now, n) {\n                        now = again;\n                    }\n                    return Ok(());\n                }\n            }",
        checks: &[
            loom!("refused_adds_near_max"),
            shuttle!("refused_adds_near_max"),
        ],
        why_one_build: None,
    },
    HandMutant {
        id: "a take writes the decremented word instead of compare-exchanging it (lost update)",
        promise: Some(4),
        file: "src/semaphore/take.rs",
        find: "        self.state.compare_exchange_weak(\n            s,\n            s - n * ONE,\n            self.permit_ordering(Ordering::Acquire),\n            Ordering::Relaxed,\n        )",
        replace: "        self.state.swap(s - n * ONE, Ordering::Acquire);\n        Ok(s)",
        checks: &[
            loom!("one_permit_two_threads"),
            shuttle!("one_permit_six_threads"),
        ],
        why_one_build: None,
    },
    // With nobody waiting, the out-of-line release runs only when the fast path's CAS lost a
    // race (a refused add is refused before the table, mutant or not), which the
    // single-threaded unit test never produces and two real threads only now and then; the
    // model checkers produce it, so they are the two builds.
    HandMutant {
        id: "a release with nobody waiting enters the park table",
        promise: Some(14),
        file: "src/semaphore/give.rs",
        find: "            if s & WAITERS != 0 {\n                match self.release_waited(s, n, fair)? {",
        replace: "            if true {\n                match self.release_waited(s, n, fair)? {",
        checks: &[
            loom!("refused_adds_near_max"),
            shuttle!("refused_adds_near_max"),
        ],
        why_one_build: None,
    },
    // The weighted, timed and shrinking paths.
    HandMutant {
        id: "a timed-out thread clears WAITERS although others still wait",
        promise: Some(18),
        file: "src/semaphore/take.rs",
        find: "let timed_out = |_, was_last| self.leave_queue(was_last);",
        replace: "let timed_out = |_, _was_last: bool| self.leave_queue(true);",
        // Not `stress::timeout_at_release`: it catches this mutant only in the rounds where
        // the timed waiter times out while the untimed one is queued, which the machine's
        // timing decides (caught in one by-hand run, missed in the next).
        checks: &[
            loom!("timeout_races_release"),
            shuttle!("timeout_races_release"),
        ],
        why_one_build: Some(
            "the real-thread scenario that can see it, `stress::timeout_at_release`, does so \
             only when the machine's timing makes the timed waiter leave while the other is \
             queued: reported, not relied on",
        ),
    },
    HandMutant {
        id: "a timed-out last waiter leaves WAITERS set",
        promise: Some(12),
        file: "src/semaphore/take.rs",
        find: "let timed_out = |_, was_last| self.leave_queue(was_last);",
        replace: "let timed_out = |_, _was_last: bool| self.leave_queue(false);",
        checks: &[REAL_API],
        why_one_build: Some(
            "in every concurrent scenario the next release or close finds the bit, calls the \
             park table, finds nobody and clears it, so the stale bit costs one park-table call \
             and nothing a scenario observes; the single-threaded API test sees the bit left \
             set after the last timed waiter leaves",
        ),
    },
    HandMutant {
        id: "a woken thread that takes nothing does not pass the wake-up on",
        promise: Some(17),
        file: "src/semaphore/take.rs",
        find: "                self.pass_on(s);\n",
        replace: "",
        checks: &[
            loom!("woken_out_barged_passes_on"),
            shuttle!("woken_out_barged_passes_on"),
        ],
        why_one_build: Some(
            "on real threads the barger must take a permit between the release and the woken \
             thread's take, a window of nanoseconds; the unit test \
             `a_woken_thread_that_takes_nothing_passes_the_wake_up_on` checks `pass_on` \
             itself, not its call",
        ),
    },
    HandMutant {
        id: "forget_permits clears the flags",
        promise: Some(19),
        file: "src/semaphore/api.rs",
        find: "                s - taken * ONE,",
        replace: "                ((s >> FLAG_BITS) - taken) << FLAG_BITS,",
        checks: &[
            REAL_API,
            loom!("forget_races_close"),
            shuttle!("forget_races_close"),
        ],
        why_one_build: None,
    },
    HandMutant {
        id: "merge checks for usize overflow only, not MAX_PERMITS",
        promise: Some(20),
        file: "src/permit.rs",
        find: "        Some(sum) if sum <= Semaphore::MAX_PERMITS => sum,",
        replace: "        Some(sum) => sum,",
        checks: &[REAL_API],
        why_one_build: Some(SINGLE_THREADED),
    },
    HandMutant {
        id: "a request of zero succeeds before closed is checked",
        promise: Some(16),
        file: "src/semaphore/take.rs",
        find: "        loop {\n            if !GUARDED && s & (CLOSED | FIFO) != 0 {",
        replace: "        if n == 0 {\n            return Ok(());\n        }\n        loop {\n            if !GUARDED && s & (CLOSED | FIFO) != 0 {",
        checks: &[REAL_API],
        why_one_build: Some(SINGLE_THREADED),
    },
    HandMutant {
        id: "a request larger than MAX_PERMITS waits (forever)",
        promise: Some(16),
        file: "src/semaphore/take.rs",
        find: "            if n > Self::MAX_PERMITS {\n                return Err(TryAcquireError::TooLarge { requested: n });\n            }\n",
        replace: "",
        checks: &[REAL_API],
        why_one_build: Some(SINGLE_THREADED),
    },
    HandMutant {
        id: "a timeout too large to add to now panics (checked_add -> +)",
        promise: Some(21),
        file: "src/semaphore/acquire.rs",
        find: "        self.acquire_timed(n, || now().checked_add(timeout))?;\n        Ok(Permit::new(self, n))",
        replace: "        self.acquire_timed(n, || Some(now() + timeout))?;\n        Ok(Permit::new(self, n))",
        checks: &[REAL_API],
        why_one_build: Some(SINGLE_THREADED),
    },
    // Fairness (rows 23-30).
    HandMutant {
        id: "under FIFO the try forms take free permits while threads are parked",
        promise: Some(23),
        file: "src/semaphore/take.rs",
        find: "let free = if GUARDED { may_take(s, n) } else { fits(s, n) };",
        replace: "let free = fits(s, n);",
        checks: &[
            REAL_API,
            loom!("fifo_no_barging"),
            shuttle!("fifo_no_barging"),
        ],
        why_one_build: None,
    },
    HandMutant {
        id: "a FIFO handoff passes over a head that does not fit",
        promise: Some(24),
        file: "src/semaphore/word.rs",
        find: "    } else if s & FIFO != 0 || free == 0 {",
        replace: "    } else if free == 0 {",
        checks: &[
            REAL_API,
            loom!("fifo_keeps_arrival_order"),
            shuttle!("fifo_keeps_arrival_order"),
        ],
        why_one_build: None,
    },
    HandMutant {
        id: "a handoff leaves the free permits it hands over in the count",
        promise: Some(25),
        file: "src/semaphore/give.rs",
        find: "            if from_word != 0\n                && self",
        replace: "            if false\n                && self",
        checks: &[
            REAL_UNIT,
            loom!("handoff_from_two_releasers"),
            shuttle!("handoff_from_two_releasers"),
        ],
        why_one_build: None,
    },
    HandMutant {
        id: "hand_to: Acquire CAS -> Relaxed",
        promise: Some(26),
        file: "src/semaphore/give.rs",
        find: "                        s - from_word * ONE,\n                        self.permit_ordering(Ordering::Acquire),",
        replace: "                        s - from_word * ONE,\n                        Ordering::Relaxed,",
        checks: &[
            loom!("handoff_from_two_releasers"),
            loom!("handoff_from_two_fair_releases"),
        ],
        why_one_build: Some(ORDERINGS),
    },
    HandMutant {
        id: "a waiter handed its permits past its deadline reports TimedOut",
        promise: Some(27),
        file: "src/semaphore/take.rs",
        find: "                    if token == HANDED {",
        replace: "                    if token == HANDED && !deadline.is_some_and(|d| d <= now()) {",
        checks: &[
            loom!("handoff_to_timing_out_waiter"),
            shuttle!("handoff_to_timing_out_waiter"),
        ],
        why_one_build: None,
    },
    HandMutant {
        id: "release_fair is a plain release",
        promise: Some(28),
        file: "src/semaphore/give.rs",
        find: "        if let Err(e) = self.release(n, true)\n",
        replace: "        if let Err(e) = self.release(n, false)\n",
        checks: &[REAL_UNIT],
        why_one_build: Some(
            "the loom and shuttle scenarios that return permits with `release_fair` check \
             conservation and happens-before, which a plain release keeps too; the unit test \
             sees the handoff token the woken thread's park returns with. (The API test \
             `release_fair_hands_the_permits_over_in_every_mode` sees it only when the \
             releaser's `try_acquire` runs before the woken thread: against this mutant it \
             passed 5 of 40 runs on the idle machine and 38 of 40 beside two busy processes.)",
        ),
    },
    HandMutant {
        id: "an Eventual semaphore never takes a fairness turn",
        promise: Some(29),
        file: "src/semaphore/timer.rs",
        find: "        timer_due(t, now).then_some(now)\n",
        replace: "        timer_due(t, now).then_some(now).filter(|_| false)\n",
        checks: &[
            REAL_UNIT,
            loom!("eventual_timer_hands_over"),
            shuttle!("eventual_timer_hands_over"),
        ],
        why_one_build: None,
    },
    HandMutant {
        id: "an Eventual release hands over before its turn is due",
        promise: Some(29),
        file: "src/semaphore/timer.rs",
        find: "        timer_due(t, now).then_some(now)\n",
        replace: "        Some(now)\n",
        // The history alone cannot tell a handoff from a wake-up whose thread takes the same
        // permits: the checks count the park table's `HANDED` unparks (none under the
        // checkers' still clock, real threads have no such count).
        checks: &[
            loom!("eventual_timer_hands_over"),
            shuttle!("eventual_timer_hands_over"),
        ],
        why_one_build: None,
    },
    HandMutant {
        id: "a fairness turn is spent by a release that hands nothing",
        promise: Some(31),
        file: "src/semaphore/timer.rs",
        find: "        timer_due(t, now).then_some(now)\n",
        replace: "        timer_due(t, now).then(|| {\n            \
                  self.timer.store(next_timer(t, now), Ordering::Relaxed);\n            \
                  now\n        })\n",
        // The release that finds the waiter announced but not yet queued spends the turn;
        // with the clock still, the next one that finds it queued is no turn.
        checks: &[
            loom!("eventual_turn_goes_to_a_parked_waiter"),
            shuttle!("eventual_turn_goes_to_a_parked_waiter"),
        ],
        why_one_build: None,
    },
    HandMutant {
        id: "a FIFO head that times out does not let the next through",
        promise: Some(30),
        file: "src/semaphore/take.rs",
        find: "                    self.after_timeout();\n",
        replace: "",
        checks: &[
            REAL_API,
            loom!("fifo_head_times_out"),
            shuttle!("fifo_head_times_out"),
        ],
        why_one_build: None,
    },
];

/// Why a single-threaded promise has a check in one build only.
const SINGLE_THREADED: &str = "a single-threaded property of the API: no interleaving changes it, \
                               so the model checkers would only repeat the API test";

/// Why an ordering mutant has checks in one build only.
const ORDERINGS: &str = "only loom models weak memory: shuttle runs every atomic as SeqCst, and \
                         on x86-64 every locked read-modify-write is a full barrier, so the \
                         second check is a second loom model";

#[cfg(test)]
mod tests {
    use super::MUTANTS;

    /// Every mutant's text is where it says, exactly once, so no mutant silently stops
    /// applying when the code it mutates moves.
    #[test]
    fn every_mutant_finds_its_text_exactly_once_in_its_file() {
        let root = crate::workspace_root();
        let mut wrong = Vec::new();
        for m in MUTANTS {
            let text = std::fs::read_to_string(root.join(m.file)).unwrap_or_default();
            let found = text.matches(m.find).count();
            if found != 1 {
                let homes: Vec<String> = glob_rs(&root.join("src"))
                    .into_iter()
                    .filter(|p| {
                        std::fs::read_to_string(p).is_ok_and(|t| t.matches(m.find).count() == 1)
                    })
                    .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
                    .collect();
                wrong.push(format!(
                    "{}: {found} in {} (found once in {homes:?})",
                    m.id, m.file
                ));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// The `.rs` files under `dir`.
    fn glob_rs(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(glob_rs(&p));
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
        out
    }
}
