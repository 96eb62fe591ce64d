//! The once-a-second progress line on stderr (only on a terminal, never with `-q`).

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use redlock_core::FanOut;

use crate::hist::Hist;
use crate::model::interval::Interval;

/// Running totals of the seconds received so far, and the line showing them.
#[derive(Debug)]
pub struct Progress {
    enabled: bool,
    fanout: FanOut,
    totals: Interval,
    /// Whole-acquire latency so far.
    acquire: Hist,
    /// Length of an interval of the reports received.
    interval: Duration,
    /// Locks acquired in each interval received so far (for the last complete one's rate).
    acquired_per_second: Vec<u64>,
    last_print: Option<Instant>,
    printed: bool,
}

impl Progress {
    pub fn new(fanout: FanOut, quiet: bool, interval: Duration) -> Progress {
        Progress {
            interval,
            enabled: !quiet && std::io::stderr().is_terminal(),
            fanout,
            totals: Interval::default(),
            acquire: Hist::new(),
            acquired_per_second: Vec::new(),
            last_print: None,
            printed: false,
        }
    }

    /// Adds a task's finished interval.
    pub fn add(&mut self, index: usize, interval: &Interval) {
        if self.enabled {
            self.totals.acquire_calls += interval.acquire_calls;
            self.totals.acquired += interval.acquired;
            self.acquire.add(&interval.acquire.unpack());
            if self.acquired_per_second.len() <= index {
                self.acquired_per_second.resize(index + 1, 0);
            }
            self.acquired_per_second[index] += interval.acquired;
        }
    }

    /// Prints the line if a second passed since the last one. `measured` is the time since the
    /// measurement started (`None` during the warm-up).
    pub fn tick(
        &mut self,
        now: Instant,
        warmup: (Duration, Duration),
        measured: Option<(Duration, Duration)>,
    ) {
        if !self.enabled
            || self
                .last_print
                .is_some_and(|t| now - t < Duration::from_secs(1))
        {
            return;
        }
        self.last_print = Some(now);
        let line = match measured {
            None => format!(
                "{:<10} warm-up {:>4.1}s / {:.0}s",
                self.fanout.as_str(),
                warmup.0.as_secs_f64(),
                warmup.1.as_secs_f64()
            ),
            Some((elapsed, total)) => {
                let t = &self.totals;
                // Throughput of the last complete second (workers report a second once they
                // are past it); success and p99 over everything so far.
                let last = ((elapsed.as_nanos() / self.interval.as_nanos().max(1)) as usize)
                    .checked_sub(1);
                let rate = last
                    .map(|s| {
                        let n = self.acquired_per_second.get(s).copied().unwrap_or(0);
                        format!("{:.0}", n as f64 / self.interval.as_secs_f64())
                    })
                    .unwrap_or_else(|| "-".into());
                format!(
                    "{:<10} {:>5.1}s / {:.0}s  {:>9} acquires/s  success {:>6.2}%  acquire p99 {:>8.3} ms",
                    self.fanout.as_str(),
                    elapsed.as_secs_f64(),
                    total.as_secs_f64(),
                    rate,
                    100.0 * crate::model::mode::ratio(t.acquired, t.acquire_calls),
                    self.acquire.quantile(0.99) as f64 / 1000.0
                )
            }
        };
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{line}");
        let _ = err.flush();
        self.printed = true;
    }

    /// Clears the line.
    pub fn finish(&mut self) {
        if self.printed {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
            self.printed = false;
        }
    }
}
