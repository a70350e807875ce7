//! What a release owes the threads parked in a known order, as the semaphore promises it
//! (docs/fairness.md, `docs/promises.md` rows 7, 8, 17, 23 and 24), and the judgement of
//! what a real release did.
//!
//! The queue scenario parks its waiters one at a time (each is seen parked before the next
//! one starts), so their order in the park table is their arrival order; between releases
//! nothing else runs. At such a quiescent point a release of `c` permits with `free` in the
//! count must serve exactly:
//!
//! - under `Fifo`: the longest prefix of the queue whose requests the free permits satisfy,
//!   in order; the first request that does not fit holds up everyone behind it (Go's
//!   semantics, promise 24);
//! - in the other modes: in queue order, every request that fits what is left, passing over
//!   those that do not (a large request does not hold up a smaller one, promises 7, 8, 17).
//!
//! Both are synchronous: the release unparks (and, under `Fifo`, hands over to) the threads it
//! serves before it returns, so the number still parked right after it is exact.

/// A parked request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Waiter {
    /// The waiter's index, which is its arrival order (0 arrived first).
    pub(crate) id: usize,
    /// The permits it asked for.
    pub(crate) want: usize,
}

/// The queue as the promise sees it.
#[derive(Clone, Debug)]
pub(crate) struct QueueModel {
    /// Hold the semaphore to `Fifo`'s promise (else the other modes').
    fifo: bool,
    /// Parked requests in arrival order.
    queue: Vec<Waiter>,
    /// Permits in the count.
    free: usize,
}

impl QueueModel {
    /// An empty queue with no permit free.
    pub(crate) fn new(fifo: bool) -> QueueModel {
        QueueModel {
            fifo,
            queue: Vec::new(),
            free: 0,
        }
    }

    /// A request of `want` parks behind the others.
    pub(crate) fn park(&mut self, id: usize, want: usize) {
        self.queue.push(Waiter { id, want });
    }

    /// A release of `c` permits: returns the waiters it must serve, in queue order, and
    /// keeps the rest.
    pub(crate) fn release(&mut self, c: usize) -> Vec<Waiter> {
        self.free += c;
        let mut served = Vec::new();
        let mut i = 0;
        while i < self.queue.len() {
            let w = self.queue[i];
            if w.want <= self.free {
                self.free -= w.want;
                served.push(self.queue.remove(i));
            } else if self.fifo {
                break;
            } else {
                i += 1;
            }
        }
        served
    }

    /// The requests still parked.
    pub(crate) fn queue(&self) -> &[Waiter] {
        &self.queue
    }

    /// How many are still parked.
    pub(crate) fn parked(&self) -> usize {
        self.queue.len()
    }

    /// The permits left in the count.
    pub(crate) fn free(&self) -> usize {
        self.free
    }

    /// Whether this model holds the semaphore to `Fifo`'s promise.
    pub(crate) fn fifo(&self) -> bool {
        self.fifo
    }
}

/// `[#1 (for 2), #3 (for 1)]`: waiters by arrival (1-based), with their requests.
pub(crate) fn list(waiters: &[Waiter]) -> String {
    let items: Vec<String> = waiters
        .iter()
        .map(|w| format!("#{} (for {})", w.id + 1, w.want))
        .collect();
    format!("[{}]", items.join(", "))
}

/// A violated property: its name and what was seen.
pub(crate) type Finding = (&'static str, String);

/// Judges the threads still parked right after a release of `released` permits, with
/// `free` permits in the count before it and the queue `before`: `expected` are the ones the
/// promise says it serves, `parked` what the park table says now.
pub(crate) fn judge_woken(
    fifo: bool,
    before: &[Waiter],
    free: usize,
    released: usize,
    expected: &[Waiter],
    parked: usize,
) -> Result<(), Finding> {
    let should = before.len() - expected.len();
    let available = free + released;
    if parked > should {
        return Err((
            "lost wakeup",
            format!(
                "after a release of {released} with {free} free, {parked} threads are still \
                 parked where {should} should be: of the queue {}, {} fit the {available} \
                 permits and must have been woken",
                list(before),
                list(expected)
            ),
        ));
    }
    if parked < should {
        let woken = before.len() - parked;
        return Err(if fifo {
            let left = available - expected.iter().map(|w| w.want).sum::<usize>();
            let head = before[expected.len()];
            (
                "FIFO order",
                format!(
                    "a release of {released} with {free} free woke {woken} of the queue {}, \
                     where arrival order serves {}: then the head, #{} (for {}), does not fit \
                     the {left} permits left and holds up everyone behind it",
                    list(before),
                    if expected.is_empty() {
                        "nobody".to_string()
                    } else {
                        list(expected)
                    },
                    head.id + 1,
                    head.want
                ),
            )
        } else {
            (
                "over-wake",
                format!(
                    "a release of {released} with {free} free woke {woken} of the queue {}, \
                     where only {} fit the {available} permits",
                    list(before),
                    list(expected)
                ),
            )
        });
    }
    Ok(())
}

/// Judges who was served by a release: `served` are the waiters that returned with their
/// permits (their ids), `expected` those the promise serves.
pub(crate) fn judge_served(
    fifo: bool,
    before: &[Waiter],
    expected: &[Waiter],
    served: &[usize],
) -> Result<(), Finding> {
    let mut got: Vec<usize> = served.to_vec();
    got.sort_unstable();
    let mut want: Vec<usize> = expected.iter().map(|w| w.id).collect();
    want.sort_unstable();
    if got == want {
        return Ok(());
    }
    let got: Vec<Waiter> = before
        .iter()
        .copied()
        .filter(|w| got.contains(&w.id))
        .collect();
    Err(if fifo {
        (
            "FIFO order",
            format!(
                "of the queue {} (arrival order), {} were served, where arrival order serves {}",
                list(before),
                list(&got),
                list(expected)
            ),
        )
    } else {
        (
            "wake-up order",
            format!(
                "of the queue {}, {} were served, where the requests that fit in queue order are {}",
                list(before),
                list(&got),
                list(expected)
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue(fifo: bool, wants: &[usize]) -> QueueModel {
        let mut m = QueueModel::new(fifo);
        for (i, &w) in wants.iter().enumerate() {
            m.park(i, w);
        }
        m
    }

    #[test]
    fn fifo_serves_a_prefix_and_a_large_head_holds_up_the_rest() {
        let mut m = queue(true, &[3, 1, 1]);
        assert!(m.release(1).is_empty());
        assert_eq!(m.free(), 1);
        let served = m.release(3);
        assert_eq!(served.iter().map(|w| w.id).collect::<Vec<_>>(), [0, 1]);
        assert_eq!((m.free(), m.parked()), (0, 1));
    }

    #[test]
    fn the_other_modes_pass_over_what_does_not_fit() {
        let mut m = queue(false, &[3, 1, 2]);
        let served = m.release(1);
        assert_eq!(served, [Waiter { id: 1, want: 1 }]);
        let served = m.release(2);
        assert_eq!(served, [Waiter { id: 2, want: 2 }]);
        assert_eq!((m.free(), m.parked()), (0, 1));
    }

    /// The checker can fail: a semaphore that passes over the large head (what `Eventual`
    /// does) is a FIFO violation when held to `Fifo`'s promise, both by the count parked after
    /// the release and by who was served. (`--check-fifo-on eventual` shows the same live.)
    #[test]
    fn the_fifo_checks_fail_on_a_semaphore_that_passes_over_the_head() {
        let fifo = queue(true, &[3, 1]);
        let mut m = fifo.clone();
        let expected = m.release(1);
        let before = fifo.queue();
        // The release woke #2 (for 1): one parked where FIFO leaves two.
        let (prop, msg) = judge_woken(true, before, 0, 1, &expected, 1).unwrap_err();
        assert_eq!(prop, "FIFO order");
        assert!(msg.contains("[#1 (for 3), #2 (for 1)]"), "{msg}");
        let (prop, _) = judge_served(true, before, &expected, &[1]).unwrap_err();
        assert_eq!(prop, "FIFO order");
        // Held to the other modes' promise, the same behaviour is right.
        let mut skip = queue(false, &[3, 1]);
        let expected = skip.release(1);
        judge_woken(false, before, 0, 1, &expected, 1).unwrap();
        judge_served(false, before, &expected, &[1]).unwrap();
    }

    #[test]
    fn a_waiter_left_parked_is_a_lost_wakeup_and_one_served_out_of_turn_is_named() {
        let before = queue(false, &[2, 1]);
        let mut m = before.clone();
        let expected = m.release(1);
        let (prop, _) = judge_woken(false, before.queue(), 0, 1, &expected, 2).unwrap_err();
        assert_eq!(prop, "lost wakeup");
        let (prop, _) = judge_woken(false, before.queue(), 0, 1, &expected, 0).unwrap_err();
        assert_eq!(prop, "over-wake");
        let (prop, _) = judge_served(false, before.queue(), &expected, &[0]).unwrap_err();
        assert_eq!(prop, "wake-up order");
    }
}
