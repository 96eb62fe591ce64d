//! The quorum rules, written once: how many votes win, when a round is decided, and whether
//! a lost round means contention (`NotAcquired`) or masters that failed (`Unavailable`).
//!
//! Acquire, extend, the fan-out and every surface read these; nothing else counts to N/2+1.

/// The default quorum of `n` masters: a strict majority, `n / 2 + 1`.
pub fn majority(n_masters: usize) -> usize {
    n_masters / 2 + 1
}

/// The smallest and largest quorum accepted for `n` masters: `[majority, n]`.
pub(crate) fn valid_range(n_masters: usize) -> std::ops::RangeInclusive<usize> {
    majority(n_masters)..=n_masters
}

/// Counts of one round so far.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tally {
    pub(crate) granted: usize,
    pub(crate) denied: usize,
    /// Failed or timed out.
    pub(crate) failed: usize,
}

/// `needed` votes of `n` masters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Quorum {
    n: usize,
    needed: usize,
}

impl Quorum {
    pub(crate) fn new(n: usize, needed: usize) -> Self {
        debug_assert!(valid_range(n).contains(&needed));
        Quorum { n, needed }
    }

    /// Enough masters granted (validity is checked separately).
    pub(crate) fn reached(self, granted: usize) -> bool {
        granted >= self.needed
    }

    /// Failures alone leave fewer than `needed` masters that could grant: Redis is down or
    /// refusing us, not busy.
    pub(crate) fn unavailable(self, failed: usize) -> bool {
        failed > self.n - self.needed
    }

    /// True once nothing still pending can change the result or its classification:
    /// - quorum granted: won;
    /// - quorum out of reach AND it is clear why: enough masters answered (contention,
    ///   `NotAcquired`) or failures alone exceed `n − needed` (`Unavailable`). With a mix of
    ///   failures and denials and too few answers, the pending masters decide which error
    ///   it is, so they are awaited (bounded by the per-master timeout).
    pub(crate) fn decided(self, t: Tally) -> bool {
        let out_of_reach = t.denied + t.failed > self.n - self.needed;
        let answered = t.granted + t.denied;
        self.reached(t.granted)
            || (out_of_reach && (answered >= self.needed || self.unavailable(t.failed)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(granted: usize, denied: usize, failed: usize) -> Tally {
        Tally {
            granted,
            denied,
            failed,
        }
    }

    #[test]
    fn majority_and_range() {
        assert_eq!(
            (1..=7).map(majority).collect::<Vec<_>>(),
            [1, 2, 2, 3, 3, 4, 4]
        );
        assert_eq!(valid_range(5), 3..=5);
    }

    #[test]
    fn a_round_stops_only_when_its_result_and_its_reason_are_known() {
        let q = Quorum::new(5, 3);
        assert!(q.decided(t(3, 0, 0)), "won");
        assert!(q.decided(t(0, 3, 0)), "contention: 3 answered no");
        assert!(q.decided(t(0, 0, 3)), "3 failed: unavailable");
        assert!(q.decided(t(1, 2, 1)), "3 answered, quorum out of reach");
        assert!(!q.decided(t(2, 0, 0)), "could still win");
        assert!(
            !q.decided(t(0, 2, 1)),
            "NotAcquired or Unavailable: the rest decide"
        );
        assert!(
            !q.decided(t(0, 1, 2)),
            "NotAcquired or Unavailable: the rest decide"
        );
        assert!(q.decided(t(0, 2, 3)));
        assert!(q.unavailable(3) && !q.unavailable(2));
        let all = Quorum::new(3, 3);
        assert!(all.decided(t(2, 0, 1)) && all.unavailable(1));
    }
}
