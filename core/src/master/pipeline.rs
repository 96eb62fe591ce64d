//! One open connection at work: requests go out in queue order, replies are matched to them
//! in the same order, and anything that shows the two are no longer in step ends the
//! connection.
//!
//! A single task owns the stream, the write buffer and the list of requests sent and not yet
//! answered; nothing is shared, so nothing is locked. Requests waiting in the queue are not
//! touched when the connection ends: the next connection sends them, still in order.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use redlock_resp::{decimal, read_reply};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

use crate::vote::FailureKind;

use super::dial::{io_failure, Stream};
use super::job::{Job, Queued, QUEUE_GRACE};
use super::scripts::{
    encode_request, judge, judge_echo, judge_lead, refused_both_ways, Judged, Lead, LeadReply,
};
use super::server::MasterServer;
use crate::answer::Failure;

/// Requests sent and not answered on one connection, at most. More wait in the queue (which
/// is bounded too), so a master that stops answering holds a bounded amount of memory.
const MAX_IN_FLIGHT: usize = 1024;
/// Bytes encoded ahead of the socket, at most, before new requests wait in the queue.
const MAX_UNWRITTEN: usize = 256 * 1024;
/// Requests taken from the queue per wake-up (written together, in one system call when the
/// socket takes them).
const BATCH: usize = 256;

/// A request written to the master, waiting for its reply (or its two: a command and the
/// `ECHO` of its id).
struct Sent {
    id: u64,
    job: Job,
    /// The command of a two-reply request.
    lead: Option<Lead>,
    /// Its first reply, held until the `ECHO` after it arrives.
    first: Option<LeadReply>,
}

/// A connection counts as proven once it has answered correctly for this long: its master
/// is healthy, and if the connection breaks later (a restart, a network cut) it is re-opened
/// at once. One that breaks sooner is re-opened only after a back-off (`mod.rs`).
pub(crate) const PROVEN_AFTER: Duration = Duration::from_secs(1);

/// Why a connection ended.
pub(crate) enum Ended {
    /// Every handle of the client is gone and nothing is left to do.
    Shutdown,
    /// The connection broke or was given up on; requests in flight on it failed with
    /// `failure`. `proven`: it had answered correctly for [`PROVEN_AFTER`] before.
    Broken { failure: Failure, proven: bool },
}

/// Requests written and not yet answered on one connection, and how they are written.
struct InFlight {
    sent: VecDeque<Sent>,
    unwritten: Vec<u8>,
    next_id: u64,
    /// The commands this connection uses: the handshake's, until the master refuses one.
    server: MasterServer,
}

impl InFlight {
    /// Encodes `job` behind everything already written, with the next id, sent at `now`.
    fn send(&mut self, mut job: Job, now: Instant) {
        let id = self.next_id;
        self.next_id += 1;
        let mut digits = [0u8; 20];
        let lead = encode_request(
            &mut self.unwritten,
            job.op,
            &self.server,
            &job.resource,
            &job.token,
            decimal(&mut digits, id),
        );
        job.mark_sent(now);
        self.sent.push_back(Sent {
            id,
            job,
            lead,
            first: None,
        });
    }

    /// Sends the requests whose native command the master refused again, with the script;
    /// the connection leaves that command for good (`changed` hears of it once).
    fn send_again(
        &mut self,
        refused: Vec<(Job, Lead, Failure)>,
        changed: &(dyn Fn(&MasterServer) + Sync),
    ) {
        let now = Instant::now();
        for (mut job, lead, failure) in refused {
            let command = lead.native_command(&self.server).unwrap_or("SET");
            if self.server.fall_back(command, &failure.cause) {
                changed(&self.server);
            }
            job.refused = Some(format!("{command}: {}", failure.cause).into());
            self.send(job, now);
        }
    }
}

/// Serves `queue` on `stream` until the connection breaks or the client is dropped, in the
/// commands `server` takes; `changed` hears of each native command the master refuses (the
/// connection then uses the script for it).
/// `silence` bounds how long the oldest request may go unanswered before the connection is
/// replaced (a master that reads and never answers).
pub(crate) async fn serve(
    stream: Stream,
    queue: &mut mpsc::Receiver<Queued>,
    silence: Duration,
    server: MasterServer,
    changed: &(dyn Fn(&MasterServer) + Sync),
) -> Ended {
    let opened = Instant::now();
    // When a reply last answered its request correctly (a grant, a denial, an error reply).
    let mut last_answer: Option<Instant> = None;
    let (mut reader, mut writer) = tokio::io::split(stream);
    let mut flight = InFlight {
        sent: VecDeque::with_capacity(64),
        unwritten: Vec::with_capacity(4096),
        next_id: 1,
        server,
    };
    let mut incoming: Vec<u8> = Vec::with_capacity(4096);
    let mut batch: Vec<Queued> = Vec::with_capacity(BATCH);
    let mut refused = Vec::new();
    // Catch-ups taken from the queue, answered when everything before them is written, with
    // the time of the last write (`last_batch`: when the latest requests were encoded, which
    // is when they left unless a catch-up found them still unwritten).
    let mut caught_up: Vec<oneshot::Sender<Option<Instant>>> = Vec::new();
    let mut last_batch: Option<Instant> = None;
    let mut queue_open = true;
    // One coarse timer per connection (not one per wake-up): every half silence bound, see
    // whether the oldest request has waited past it.
    let check_every = silence / 2;
    let silence_check = tokio::time::sleep(check_every);
    tokio::pin!(silence_check);
    let broken = loop {
        if !queue_open && flight.sent.is_empty() && flight.unwritten.is_empty() {
            return Ended::Shutdown;
        }
        let room = MAX_IN_FLIGHT.saturating_sub(flight.sent.len());
        let take = queue_open && room > 0 && flight.unwritten.len() < MAX_UNWRITTEN;
        // Order matters: replies first (they free room), then every request already queued
        // (so concurrent callers' requests leave in one write), then the write.
        tokio::select! {
            biased;
            read = reader.read_buf(&mut incoming) => {
                match read {
                    Ok(0) => break Failure::new(
                        FailureKind::Connection,
                        "connection closed by the master",
                    ),
                    Ok(_) => {
                        let arrived = Instant::now();
                        let read = dispatch(&mut incoming, &mut flight.sent, arrived, &mut last_answer, &mut refused);
                        if let Err(failure) = read {
                            break failure;
                        }
                        if !refused.is_empty() {
                            flight.send_again(std::mem::take(&mut refused), changed);
                        }
                        incoming.reserve(4096);
                    }
                    Err(e) => break io_failure(&e),
                }
            }
            n = queue.recv_many(&mut batch, BATCH.min(room)), if take => {
                if n == 0 {
                    queue_open = false;
                    continue;
                }
                let busy = !flight.sent.is_empty();
                let now = Instant::now();
                for queued in batch.drain(..) {
                    let job = match queued {
                        Queued::Request(job) => job,
                        // This branch runs only after the read above found nothing more:
                        // every reply received so far is with its round. Answered once what
                        // was queued before it is written too (its timeout starts then).
                        Queued::CatchUp(done) => {
                            caught_up.push(done);
                            continue;
                        }
                    };
                    if now.saturating_duration_since(job.queued_at) > QUEUE_GRACE {
                        job.fail(Failure::new(
                            FailureKind::Connection,
                            format!("not sent: waited over {QUEUE_GRACE:?} for a connection"),
                        ));
                        continue;
                    }
                    flight.send(job, now);
                    last_batch = Some(now);
                }
                if flight.unwritten.is_empty() {
                    // Nothing is waiting to be written: the catch-ups are answered now.
                    for done in caught_up.drain(..) {
                        let _ = done.send(last_batch);
                    }
                }
                if busy {
                    // Replies are awaited anyway: let the tasks that are ready to run queue
                    // their requests first, so they leave in this write instead of one
                    // system call each (and one wake-up of the master each).
                    tokio::task::yield_now().await;
                }
            }
            written = writer.write(&flight.unwritten), if !flight.unwritten.is_empty() => {
                match written {
                    Ok(0) => break Failure::new(
                        FailureKind::Connection,
                        "connection closed by the master",
                    ),
                    Ok(n) => {
                        flight.unwritten.drain(..n);
                        if flight.unwritten.is_empty() && !caught_up.is_empty() {
                            let at = Instant::now();
                            for done in caught_up.drain(..) {
                                let _ = done.send(Some(at));
                            }
                        }
                    }
                    Err(e) => break io_failure(&e),
                }
            }
            () = &mut silence_check => {
                if flight.sent.front().is_some_and(|s| s.job.sent_at().elapsed() >= silence) {
                    break Failure::new(
                        FailureKind::Connection,
                        format!("no reply from the master for {silence:?}; connection replaced"),
                    );
                }
                silence_check.as_mut().reset(tokio::time::Instant::now() + check_every);
            }
        }
    };
    for s in flight.sent.drain(..) {
        s.job.fail(broken.clone());
    }
    for (job, _, failure) in refused {
        job.fail(failure);
    }
    let proven = last_answer.is_some_and(|at| at.saturating_duration_since(opened) >= PROVEN_AFTER);
    Ended::Broken {
        failure: broken,
        proven,
    }
}

/// Matches every complete reply in `incoming` to the oldest request in flight; `last_answer`
/// becomes `arrived` when one answered its request correctly. A request whose native command
/// the master refused goes to `refused`, to be sent again with the script. An error ends the
/// connection: the reply that showed it failed its request with the cause.
fn dispatch(
    incoming: &mut Vec<u8>,
    sent: &mut VecDeque<Sent>,
    arrived: Instant,
    last_answer: &mut Option<Instant>,
    refused: &mut Vec<(Job, Lead, Failure)>,
) -> Result<(), Failure> {
    let mut used = 0;
    let result = loop {
        match read_reply(&incoming[used..]) {
            Ok(None) => break Ok(()),
            Err(e) => {
                let failure = Failure::new(FailureKind::Protocol, e.to_string());
                if let Some(s) = sent.pop_front() {
                    s.job.fail(failure.clone());
                }
                break Err(failure);
            }
            Ok(Some((reply, n))) => {
                used += n;
                let Some(mut s) = sent.pop_front() else {
                    break Err(Failure::new(
                        FailureKind::Protocol,
                        format!("unsolicited reply {reply} with no request waiting"),
                    ));
                };
                if let (Some(lead), None) = (s.lead, &s.first) {
                    // The command's reply: judged once its ECHO shows the replies are in step.
                    match judge_lead(lead, reply) {
                        Ok(first) => {
                            s.first = Some(first);
                            sent.push_front(s);
                            continue;
                        }
                        Err(failure) => {
                            s.job.answer(Err(failure.clone()), arrived);
                            break Err(failure);
                        }
                    }
                }
                let mut digits = [0u8; 20];
                let id = decimal(&mut digits, s.id);
                let judged = match (s.lead, s.first) {
                    (Some(lead), Some(first)) => judge_echo(lead, id, reply, first),
                    _ => judge(s.job.op, id, reply),
                };
                match judged {
                    Judged::Answer(granted) => {
                        *last_answer = Some(arrived);
                        s.job.answer(Ok(granted), arrived);
                    }
                    Judged::Counted(counter) => {
                        *last_answer = Some(arrived);
                        s.job.answer_counted(counter, arrived);
                    }
                    Judged::Failed(failure) => {
                        *last_answer = Some(arrived);
                        let failure = match &s.job.refused {
                            Some(native) => refused_both_ways(s.job.op, native, &failure),
                            None => failure,
                        };
                        s.job.answer(Err(failure), arrived);
                    }
                    Judged::Refused(failure) => {
                        *last_answer = Some(arrived);
                        match s.lead {
                            Some(lead) => refused.push((s.job, lead, failure)),
                            None => s.job.answer(Err(failure), arrived),
                        }
                    }
                    Judged::Broken(failure) => {
                        s.job.answer(Err(failure.clone()), arrived);
                        break Err(failure);
                    }
                }
            }
        }
    };
    incoming.drain(..used);
    result
}
