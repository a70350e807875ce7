//! The contention profile (cargo feature `profile`, off by default): per semaphore, what its
//! contended acquires cost — how many there were, how often they spun, parked, were woken
//! without permits, were handed their permits, gave up at a deadline, and how long they
//! waited (a histogram, read as percentiles).
//!
//! The numbers live in a side table keyed by the semaphore's address, so the type keeps its
//! 16 bytes; a semaphore's entry goes when it is dropped. Only the contended path records: an
//! acquire that takes its permits at once never reaches a hook, so the uncontended paths
//! cost the same with the feature on as off. A contended acquire counts in local variables
//! and writes them into the table once, when it returns: one lock of one of 16 shards.
//!
//! Without the feature every hook is an empty inline function on a zero-sized type, and
//! under the checkers (loom, shuttle) too: the profile is for real threads.

#[cfg(all(feature = "profile", not(any(feature = "loom", feature = "shuttle"))))]
pub(crate) use on::*;

#[cfg(not(all(feature = "profile", not(any(feature = "loom", feature = "shuttle")))))]
pub(crate) use off::*;

/// The hooks without the feature (or under the checkers): nothing.
#[cfg(not(all(feature = "profile", not(any(feature = "loom", feature = "shuttle")))))]
mod off;

/// What a semaphore's contended acquires cost, from its creation (or the last
/// [`reset_profile`](crate::Semaphore::reset_profile)) until [`profile`](crate::Semaphore::profile)
/// was called. An acquire is contended when its permits were not free at the call: only
/// those are counted, and only those waited.
///
/// The numbers are kept per address, outside the semaphore (which stays 16 bytes), and a
/// dropped semaphore's go with it. A semaphore that moves after a contended acquire (into a
/// `Vec`, a `Box`, an `Arc`, or returned by value) leaves them behind: the moved one starts
/// from zero, and one made later at the old address reads them until it calls
/// `reset_profile`. Profile a semaphore that stays where it is: a `static`, or one put in
/// its `Arc` or `Box` before it is shared.
///
/// The feature gives `Semaphore` a `Drop` (to forget a dropped semaphore's numbers), so
/// with it on a `Semaphore` cannot be dropped inside a `const fn`.
///
/// # Examples
///
#[doc = crate::doc_fence!()]
/// use parksema::Semaphore;
/// use std::{sync::Arc, thread, time::Duration};
///
/// let sem = Arc::new(Semaphore::new(0));
/// let waiter = {
///     let sem = Arc::clone(&sem);
///     thread::spawn(move || sem.acquire().unwrap().forget())
/// };
/// while sem.parked_threads() == 0 {
///     thread::sleep(Duration::from_millis(1));
/// }
/// // The waiter is parked: its wait lasts at least this long.
/// thread::sleep(Duration::from_millis(10));
/// sem.add_permits(1);
/// waiter.join().unwrap();
/// let p = sem.profile();
/// assert_eq!(p.contended_acquires, 1);
/// assert!(p.parks >= 1);
/// assert!(p.wait_max >= Duration::from_millis(10));
/// ```
#[cfg(all(feature = "profile", not(any(feature = "loom", feature = "shuttle"))))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Profile {
    /// Acquires (blocking or timed) that did not find their permits free at the call.
    pub contended_acquires: u64,
    /// Rounds of spinning before parking, over all contended acquires.
    pub spins: u64,
    /// Times a contended acquire parked (a thread may park several times).
    pub parks: u64,
    /// Times a parked thread was woken and found no permits for it (another thread took
    /// them first), so it had to try again: the cost of barging.
    pub wakeups_without_permits: u64,
    /// Contended acquires that were handed their permits by a release (`Fifo`, an `Eventual`
    /// turn, `release_fair`) rather than taking them.
    pub handoffs: u64,
    /// Contended acquires that gave up at their deadline.
    pub timeouts: u64,
    /// Contended acquires that failed because the semaphore closed.
    pub closed: u64,
    /// The median time a contended acquire waited, from the call to its return (within 1 %).
    pub wait_p50: std::time::Duration,
    /// The 90th percentile of the same.
    pub wait_p90: std::time::Duration,
    /// The 99th percentile of the same.
    pub wait_p99: std::time::Duration,
    /// The longest wait (within 1 %).
    pub wait_max: std::time::Duration,
}

/// How a contended acquire ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// It took (or was handed) its permits.
    Acquired,
    /// Its deadline passed first.
    TimedOut,
    /// The semaphore closed first.
    Closed,
}

#[cfg(all(feature = "profile", not(any(feature = "loom", feature = "shuttle"))))]
mod on {
    use std::collections::HashMap;
    use std::sync::Mutex;
    use std::time::{Duration, Instant};

    use hdrhistogram::Histogram;

    use super::{Outcome, Profile};

    /// One semaphore's numbers.
    struct Entry {
        profile: Profile,
        waits: Histogram<u64>,
    }

    /// Shards of the side table: a contended acquire locks the one its semaphore's address
    /// picks, so semaphores in different shards never contend here.
    const SHARDS: usize = 16;
    static TABLE: [Mutex<Option<HashMap<usize, Entry>>>; SHARDS] =
        [const { Mutex::new(None) }; SHARDS];

    fn shard(key: usize) -> &'static Mutex<Option<HashMap<usize, Entry>>> {
        // Semaphores are at least 8-byte aligned: the bits above the low three spread them.
        &TABLE[(key >> 4) % SHARDS]
    }

    /// The hooks of one contended acquire: local counts, recorded by `finish`.
    #[derive(Debug)]
    pub(crate) struct Acquire {
        started: Instant,
        spins: u64,
        parks: u64,
        woken: u64,
        handed: bool,
    }

    impl Acquire {
        #[inline]
        pub(crate) fn start() -> Self {
            Acquire {
                started: Instant::now(),
                spins: 0,
                parks: 0,
                woken: 0,
                handed: false,
            }
        }
        #[inline]
        pub(crate) fn spun(&mut self) {
            self.spins += 1;
        }
        #[inline]
        pub(crate) fn parked(&mut self) {
            self.parks += 1;
        }
        #[inline]
        pub(crate) fn woken(&mut self) {
            self.woken += 1;
        }
        #[inline]
        pub(crate) fn handed(&mut self) {
            self.handed = true;
        }

        /// Records this acquire into the table entry of the semaphore at `key`.
        pub(crate) fn finish(self, key: usize, outcome: Outcome) {
            let waited = self.started.elapsed();
            let mut table = shard(key).lock().unwrap_or_else(|e| e.into_inner());
            let entry = table
                .get_or_insert_with(HashMap::new)
                .entry(key)
                .or_insert_with(|| Entry {
                    profile: Profile::default(),
                    // 1 ns to an hour at two significant digits (1 % resolution); longer
                    // waits are recorded as an hour.
                    waits: Histogram::new_with_bounds(1, 3_600_000_000_000, 2)
                        .expect("valid histogram bounds"),
                });
            let p = &mut entry.profile;
            p.contended_acquires += 1;
            p.spins += self.spins;
            p.parks += self.parks;
            p.wakeups_without_permits += self.woken;
            p.handoffs += u64::from(self.handed);
            match outcome {
                Outcome::Acquired => {}
                Outcome::TimedOut => p.timeouts += 1,
                Outcome::Closed => p.closed += 1,
            }
            let ns = u64::try_from(waited.as_nanos()).unwrap_or(u64::MAX).max(1);
            entry.waits.saturating_record(ns);
        }
    }

    /// The profile of the semaphore at `key` so far.
    pub(crate) fn read(key: usize) -> Profile {
        let table = shard(key).lock().unwrap_or_else(|e| e.into_inner());
        let Some(entry) = table.as_ref().and_then(|t| t.get(&key)) else {
            return Profile::default();
        };
        let at = |q: f64| Duration::from_nanos(entry.waits.value_at_quantile(q));
        Profile {
            wait_p50: at(0.5),
            wait_p90: at(0.9),
            wait_p99: at(0.99),
            wait_max: Duration::from_nanos(entry.waits.max()),
            ..entry.profile
        }
    }

    /// A dropped semaphore's entry goes, so a semaphore later made at the same address starts
    /// from zero.
    impl Drop for crate::Semaphore {
        fn drop(&mut self) {
            forget(self.key());
        }
    }

    /// The semaphore at `key` is gone (dropped) or starts over: its entry goes.
    pub(crate) fn forget(key: usize) {
        let mut table = shard(key).lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = table.as_mut() {
            t.remove(&key);
        }
    }

    #[cfg(test)]
    mod tests {
        use super::shard;

        #[test]
        fn neighbouring_semaphores_lock_different_shards() {
            let sems: Vec<crate::Semaphore> = (0..4).map(|_| crate::Semaphore::new(0)).collect();
            for pair in sems.windows(2) {
                assert!(
                    !std::ptr::eq(shard(pair[0].key()), shard(pair[1].key())),
                    "two semaphores side by side share a shard"
                );
            }
        }
    }
}
