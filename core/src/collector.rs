//! Where a round's answers land: one record per round, filled in by the masters' connection
//! tasks, that wakes the round once — when its outcome is known — instead of once per master.
//!
//! Why: a channel per master would wake the round at each answer, often on the other runtime
//! thread. Deciding here, where the answers arrive, saves those wake-ups and the allocation of
//! a channel per request; the quorum rule stays the one in `quorum.rs`.

use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use tokio::sync::Notify;

use crate::answer::Answer;
use crate::quorum::{Quorum, Tally};

/// When the waiting round is woken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WakeWhen {
    /// As soon as the quorum rule decides the round (or every master answered).
    Decided,
    /// When every master answered.
    AllAnswered,
    /// On every answer (sequential fan-out waits for one master at a time).
    EachAnswer,
}

/// One master's answer and when it arrived.
pub(crate) type Recorded = Option<(Answer, Instant)>;

struct State {
    answers: Vec<Recorded>,
    /// The fencing counter each granting master read with its grant (round 1 of a fenced
    /// acquire); empty, never allocated, for every other round.
    counters: Vec<u64>,
    tally: Tally,
    answered: usize,
    done: bool,
}

/// The shared record of one round.
pub(crate) struct Collector {
    state: Mutex<State>,
    done: Notify,
    rule: Quorum,
    wake: WakeWhen,
}

impl Collector {
    #[cfg(test)]
    pub(crate) fn new(n: usize, rule: Quorum, wake: WakeWhen) -> Self {
        Self::with_counters(n, rule, wake, false)
    }

    /// A collector that also keeps the fencing counter of each grant when `counted`.
    pub(crate) fn with_counters(n: usize, rule: Quorum, wake: WakeWhen, counted: bool) -> Self {
        Collector {
            state: Mutex::new(State {
                answers: vec![None; n],
                counters: if counted { vec![0; n] } else { Vec::new() },
                tally: Tally::default(),
                answered: 0,
                done: false,
            }),
            done: Notify::new(),
            rule,
            wake,
        }
    }

    /// Records master `i`'s answer, which arrived at `arrived`; wakes the round if this
    /// decides it. Answers that arrive after the round stopped listening change nothing.
    pub(crate) fn record(&self, i: usize, answer: Answer, arrived: Instant) {
        self.record_with(i, answer, arrived, None);
    }

    /// Records master `i`'s grant together with the fencing counter it read.
    pub(crate) fn record_counted(&self, i: usize, counter: u64, arrived: Instant) {
        self.record_with(i, Ok(true), arrived, Some(counter));
    }

    fn record_with(&self, i: usize, answer: Answer, arrived: Instant, counter: Option<u64>) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        // Taken already (the round is over), or answered already: nothing to change.
        if state.answers.get(i).is_none_or(Option::is_some) {
            return;
        }
        if let (Some(counter), Some(slot)) = (counter, state.counters.get_mut(i)) {
            *slot = counter;
        }
        match &answer {
            Ok(true) => state.tally.granted += 1,
            Ok(false) => state.tally.denied += 1,
            Err(_) => state.tally.failed += 1,
        }
        state.answers[i] = Some((answer, arrived));
        state.answered += 1;
        let finished = state.answered == state.answers.len()
            || (self.wake == WakeWhen::Decided && self.rule.decided(state.tally));
        let wake = self.wake == WakeWhen::EachAnswer || (finished && !state.done);
        state.done |= finished;
        drop(state);
        if wake {
            // Stores a permit if the round is not waiting yet: no wake-up is lost.
            self.done.notify_one();
        }
    }

    /// Waits until the round is decided (by `WakeWhen`).
    pub(crate) async fn finished(&self) {
        loop {
            if self
                .state
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .done
            {
                return;
            }
            self.done.notified().await;
        }
    }

    /// Waits until master `i` answered (with `WakeWhen::EachAnswer`).
    pub(crate) async fn answered(&self, i: usize) {
        while !self.has_answered(i) {
            self.done.notified().await;
        }
    }

    /// Whether the answers so far decide the round by the quorum rule, without waiting.
    pub(crate) fn is_decided(&self) -> bool {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        self.rule.decided(state.tally)
    }

    /// Whether master `i` answered, without waiting.
    pub(crate) fn has_answered(&self, i: usize) -> bool {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .answers[i]
            .is_some()
    }

    /// The answers so far, in master order (`None`: not answered yet), and the counters read
    /// with the grants among them (empty unless made `with_counters`).
    pub(crate) fn take(&self) -> (Vec<Recorded>, Vec<u64>) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.done = true;
        (
            std::mem::take(&mut state.answers),
            std::mem::take(&mut state.counters),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answer::Failure;
    use crate::vote::FailureKind;

    #[tokio::test]
    async fn wakes_once_the_quorum_rule_decides() {
        let c = Collector::new(5, Quorum::new(5, 3), WakeWhen::Decided);
        c.record(0, Ok(true), Instant::now());
        c.record(1, Ok(true), Instant::now());
        assert!(!c.state.lock().unwrap().done);
        c.record(2, Ok(true), Instant::now());
        c.finished().await; // returns: decided on three grants
        let (answers, _) = c.take();
        assert_eq!(answers.iter().filter(|a| a.is_some()).count(), 3);
        c.record(3, Ok(false), Instant::now()); // a straggler after the round stopped listening: harmless
    }

    #[tokio::test]
    async fn all_answered_waits_for_every_master_and_keeps_the_first_answer() {
        let c = Collector::new(2, Quorum::new(2, 2), WakeWhen::AllAnswered);
        c.record(0, Ok(true), Instant::now());
        c.record(0, Ok(false), Instant::now());
        assert!(!c.state.lock().unwrap().done);
        c.record(
            1,
            Err(Failure::new(FailureKind::Other, "x")),
            Instant::now(),
        );
        c.finished().await;
        let (answers, _) = c.take();
        assert!(matches!(answers[0], Some((Ok(true), _))));
        assert!(matches!(answers[1], Some((Err(_), _))));
    }
}
