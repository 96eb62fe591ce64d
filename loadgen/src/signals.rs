//! SIGINT, SIGTERM and SIGHUP all end a run the same way: no new operation starts, operations
//! in flight get the grace ([`crate::engine::runner::GRACE`]), the partial report is printed, local
//! masters are stopped, and the process exits with 128 + the signal's number (130 for Ctrl-C).
//! `timeout` and CI runners send SIGTERM; a closed terminal sends SIGHUP.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// A signal that ends a run early.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Signal {
    Sighup,
    Sigint,
    Sigterm,
}

impl Signal {
    const ALL: [Signal; 3] = [Signal::Sighup, Signal::Sigint, Signal::Sigterm];

    /// The signal's number (POSIX).
    pub fn number(self) -> u8 {
        match self {
            Signal::Sighup => 1,
            Signal::Sigint => 2,
            Signal::Sigterm => 15,
        }
    }

    /// The conventional exit code of a process ended by this signal.
    pub fn exit_code(self) -> u8 {
        128 + self.number()
    }

    fn from_number(n: u8) -> Option<Signal> {
        Signal::ALL.into_iter().find(|s| s.number() == n)
    }
}

impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Signal::Sighup => "SIGHUP",
            Signal::Sigint => "SIGINT",
            Signal::Sigterm => "SIGTERM",
        })
    }
}

/// The stop of a whole command, and which signal asked for it.
#[derive(Debug, Clone)]
pub struct Signals {
    pub stop: Arc<Stop>,
    received: Arc<AtomicU8>,
}

impl Signals {
    /// Starts listening for the three signals (call inside the runtime).
    pub fn install() -> Result<Signals, String> {
        use tokio::signal::unix::{signal, SignalKind};
        let signals = Signals::none();
        for which in Signal::ALL {
            let kind = SignalKind::from_raw(i32::from(which.number()));
            let mut stream = signal(kind).map_err(|e| format!("listening for {which}: {e}"))?;
            let me = signals.clone();
            tokio::spawn(async move {
                while stream.recv().await.is_some() {
                    me.deliver(which);
                }
            });
        }
        Ok(signals)
    }

    /// A stop that no signal sets (tests, nested runs).
    pub fn none() -> Signals {
        Signals {
            stop: Stop::new(),
            received: Arc::new(AtomicU8::new(0)),
        }
    }

    /// Records the first signal and stops the run; later ones change nothing (the grace
    /// already bounds how long the end takes).
    pub fn deliver(&self, signal: Signal) {
        let _ =
            self.received
                .compare_exchange(0, signal.number(), Ordering::AcqRel, Ordering::Acquire);
        self.stop.set();
    }

    /// The first signal received, if any.
    pub fn received(&self) -> Option<Signal> {
        Signal::from_number(self.received.load(Ordering::Acquire))
    }
}

/// The shared "stop" of a run: a flag to test on the hot path and a notification for tasks
/// that wait (for a slot, during a hold).
#[derive(Debug, Default)]
pub struct Stop {
    flag: AtomicBool,
    notify: tokio::sync::Notify,
}

impl Stop {
    pub fn new() -> Arc<Stop> {
        Arc::new(Stop::default())
    }

    pub fn is_set(&self) -> bool {
        self.flag.load(Ordering::Acquire)
    }

    pub fn set(&self) {
        self.flag.store(true, Ordering::Release);
        self.notify.notify_waiters();
    }

    /// Completes once [`set`](Self::set) was called.
    pub async fn wait(&self) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_set() {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_signal_is_kept_and_exit_codes_are_128_plus_its_number() {
        let s = Signals::none();
        assert_eq!(s.received(), None);
        s.deliver(Signal::Sigterm);
        s.deliver(Signal::Sigint);
        assert_eq!(s.received(), Some(Signal::Sigterm));
        assert!(s.stop.is_set());
        assert_eq!(Signal::Sigint.exit_code(), 130);
        assert_eq!(Signal::Sigterm.exit_code(), 143);
        assert_eq!(Signal::Sighup.exit_code(), 129);
    }
}
