//! A fenced acquire attempt (docs/src/design.md#fencing): a max-register over majorities.
//!
//! Round 1 is the normal attempt, except that each master grants with a script that also
//! reads the resource's counter in the same atomic step. With a quorum of grants, the fencing
//! token is `t = max(counters read) + 1`. Round 2 asks every master that granted to raise its
//! counter to `t` if the lock key still holds this attempt's token; it is decided at quorum
//! like round 1. The lock is returned only once a quorum confirmed, so:
//!
//! - an acquire that begins after a lock was returned reads, on a master of both quorums, a
//!   counter written before that lock was returned: its token is higher;
//! - no two acquires return the same token, with no timing assumption: on a master where both
//!   confirmed, each raised the counter while its own key was there, and the later one's key
//!   was set (and the counter read) after the earlier one's key was gone, so after the
//!   earlier one's raise.
//!
//! Both hold as long as no master of those quorums lost its counter (see the book's fencing
//! page: AOF with `appendfsync always`, or never restarting empty).

use std::sync::Arc;
use std::time::Duration;

use super::Redlock;
use crate::fanout::{round_counted, Request, Stop};
use crate::master::{Master, Op};
use crate::validity::{drift, validity};
use crate::vote::{Outcome, Vote};

impl Redlock {
    /// One fenced attempt: the vote (per master, round 2's answer for the masters that granted
    /// round 1; elapsed from round 1's start to round 2's decision) and the fencing token when
    /// the attempt won.
    pub(super) async fn fenced_attempt(
        &self,
        resource: &Arc<str>,
        token: &Arc<str>,
        ttl: Duration,
    ) -> (Vote, Option<u64>) {
        let settings = &self.inner.settings;
        let masters = &self.inner.masters;
        // One admission for both rounds: they are one attempt, and a wait between them would
        // eat the lock's validity.
        let _admitted = self.inner.admission.acquire().await;
        let first = Request {
            op: Op::FencedLock {
                ttl_ms: ttl.as_millis() as u64,
            },
            resource,
            token,
            on_queued: None,
        };
        let (mut vote, counters) = round_counted(
            masters,
            settings.fanout,
            settings.instance_timeout,
            settings.quorum,
            first,
            Stop::WhenDecided,
        )
        .await;
        let drift = drift(ttl, settings.drift_factor);
        if !self.quorum().reached(vote.granted()) || validity(ttl, vote.elapsed, drift).is_none() {
            // Lost, or won too late: round 2 cannot help (the verdict says which).
            return (vote, None);
        }
        let granting: Vec<usize> = vote
            .masters
            .iter()
            .filter(|m| m.outcome == Outcome::Granted)
            .map(|m| m.master)
            .collect();
        // A granting master's counter is below MAX_FENCING_TOKEN (fence.rs fails the master
        // for any other value), so the token is at most the bound.
        let fencing_token = granting.iter().map(|&i| counters[i]).max().unwrap_or(0) + 1;
        debug_assert!(fencing_token <= crate::MAX_FENCING_TOKEN);
        let members: Vec<&Master> = granting.iter().map(|&i| &masters[i]).collect();
        let second = Request {
            op: Op::Fence {
                value: fencing_token,
            },
            resource,
            token,
            on_queued: None,
        };
        let (confirmed, _) = round_counted(
            &members,
            settings.fanout,
            settings.instance_timeout,
            settings.quorum,
            second,
            Stop::WhenDecided,
        )
        .await;
        merge_second_round(&mut vote, &granting, &confirmed);
        let vote = self.with_validity(vote, ttl);
        let won = vote.validity.is_some().then_some(fencing_token);
        (vote, won)
    }
}

/// Writes round 2's answers into round 1's vote: a master that granted round 1 counts as
/// granted only if it confirmed round 2; its round trip is both requests' together. The vote
/// then spans both rounds.
fn merge_second_round(vote: &mut Vote, granting: &[usize], second: &Vote) {
    for (answer, &i) in second.masters.iter().zip(granting) {
        let m = &mut vote.masters[i];
        m.outcome = answer.outcome;
        m.error.clone_from(&answer.error);
        m.round_trip = m.round_trip.zip(answer.round_trip).map(|(a, b)| a + b);
    }
    vote.elapsed = second.completed().saturating_duration_since(vote.started);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vote::FailureKind;

    #[test]
    fn a_master_counts_for_the_attempt_only_if_it_confirmed_round_two() {
        let mut first = Vote::new(5, 3);
        for (m, outcome) in first.masters.iter_mut().zip([
            Outcome::Granted,
            Outcome::Denied,
            Outcome::Granted,
            Outcome::Granted,
            Outcome::NotAwaited,
        ]) {
            m.outcome = outcome;
            m.round_trip = Some(Duration::from_millis(1));
        }
        first.elapsed = Duration::from_millis(1);
        let mut second = Vote::new(3, 3);
        second.started = first.started + Duration::from_millis(2);
        second.elapsed = Duration::from_millis(3);
        second.masters[0].outcome = Outcome::Granted;
        second.masters[0].round_trip = Some(Duration::from_millis(2));
        second.masters[1].outcome = Outcome::Denied;
        second.masters[1].round_trip = Some(Duration::from_millis(2));
        second.masters[2].outcome = Outcome::Failed(FailureKind::Server);
        second.masters[2].error = Some(Arc::from("OOM"));
        merge_second_round(&mut first, &[0, 2, 3], &second);
        let outcomes: Vec<Outcome> = first.masters.iter().map(|m| m.outcome).collect();
        assert_eq!(
            outcomes,
            [
                Outcome::Granted,
                Outcome::Denied,
                Outcome::Denied,
                Outcome::Failed(FailureKind::Server),
                Outcome::NotAwaited
            ]
        );
        assert_eq!(first.granted(), 1);
        assert_eq!(first.masters[0].round_trip, Some(Duration::from_millis(3)));
        assert_eq!(first.masters[3].round_trip, None);
        assert_eq!(first.masters[3].error.as_deref(), Some("OOM"));
        assert_eq!(first.elapsed, Duration::from_millis(5));
    }
}
