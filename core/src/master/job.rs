//! A request on a master's queue, and where its answer goes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::scripts::Op;
use crate::answer::{Answer, Failure};
use crate::collector::Collector;

/// A request that waited longer than this for a connection is failed, not sent.
pub(crate) const QUEUE_GRACE: Duration = Duration::from_secs(5);

/// What a master's queue carries.
pub(crate) enum Queued {
    Request(Job),
    /// Sent by a round whose deadline passed: answered once the connection has read every
    /// reply already received (the connection task takes it from the queue only after a read
    /// found nothing more) and written every request queued before it, with the time of the
    /// connection's last write; dropped when there is no connection to read.
    CatchUp(oneshot::Sender<Option<Instant>>),
}

impl Queued {
    /// A failed request gets the failure; a catch-up is answered (nothing is left to read).
    pub(super) fn fail(self, failure: Failure) {
        match self {
            Queued::Request(job) => job.fail(failure),
            Queued::CatchUp(done) => drop(done.send(None)),
        }
    }
}

/// A request on a master's queue.
pub(crate) struct Job {
    pub(super) op: Op,
    pub(super) resource: Arc<str>,
    pub(super) token: Arc<str>,
    pub(super) queued_at: Instant,
    pub(super) sent_at: Option<Instant>,
    /// Where the answer goes: the round's collector and this master's place in it.
    pub(super) reply: (Arc<Collector>, usize),
    /// The native command the master refused for this request (`DELIFEQ: NOPERM ...`), when
    /// it is being sent again with the script.
    pub(super) refused: Option<Arc<str>>,
}

impl Job {
    /// `at`: when the write that carries it was made (one clock read per write).
    pub(super) fn mark_sent(&mut self, at: Instant) {
        self.sent_at = Some(at);
    }
    pub(super) fn sent_at(&self) -> Instant {
        self.sent_at.unwrap_or(self.queued_at)
    }
    /// `arrived`: when the reply was read (one clock read per read, not per reply).
    pub(super) fn answer(self, answer: Answer, arrived: Instant) {
        // The round may have stopped listening; the request did its work anyway.
        let (collector, index) = self.reply;
        collector.record(index, answer, arrived);
    }
    /// A grant that carries the resource's fencing counter (round 1 of a fenced acquire).
    pub(super) fn answer_counted(self, counter: u64, arrived: Instant) {
        let (collector, index) = self.reply;
        collector.record_counted(index, counter, arrived);
    }
    pub(super) fn fail(self, failure: Failure) {
        self.answer(Err(failure), Instant::now());
    }
}
