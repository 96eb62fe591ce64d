//! `--history FILE`: every operation of a run as JSON lines in Jepsen's shape, for checkers
//! that share nothing with the load generator's own (`loadgen/history-check`, on Porcupine).
//!
//! One line per event: `{"index", "process", "type", "f", "key", "value", "time"}`, `key` the
//! mode and the lock key (`concurrent/redlock-loadgen:0`: each mode starts from emptied local
//! masters, its fencing counters and protected resource new, so a checker must take each
//! mode's keys as a system of their own), `type`
//! invoke / ok / fail / info, `f` acquire / extend / release / write, `time` in ns on the
//! generator's monotonic clock (from the moment the file was opened). An acquire's or extend's
//! `ok` carries `{"token", "fence", "valid_until"}`: `valid_until` is the monotonic time at
//! which the holder stops acting on the lock, so a lease ends at the earlier of its release's
//! invoke and its last `valid_until` — the same window the own checker reads. An acquire's
//! `ok` is timed when its vote completed (when the holder learned it won). Faults are lines of
//! process `"nemesis"`, `f` start / stop, value the fault's label.
//!
//! Bounded: at most the `limit` given to [`HistoryLog::create`] events; a run that would write
//! more fails at its end (the file is kept, but a cut history proves nothing), so the user
//! shortens the run.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use serde_json::json;

use crate::error::LoadgenError;

/// The default bound on events per history: at about 165 bytes a line, about 330 MB.
pub const DEFAULT_LIMIT: u64 = 2_000_000;

/// What an operation was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Acquire,
    Extend,
    Release,
    Write,
}

impl Op {
    fn as_str(self) -> &'static str {
        match self {
            Op::Acquire => "acquire",
            Op::Extend => "extend",
            Op::Release => "release",
            Op::Write => "write",
        }
    }
}

/// How an operation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// It did not happen (a lock not won, a write refused).
    Fail,
    /// Unknown (cancelled, crashed, an error on the way).
    Info,
}

impl Outcome {
    fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Fail => "fail",
            Outcome::Info => "info",
        }
    }
}

/// What a lease line carries: its token, fencing token and validity deadline.
#[derive(Debug, Clone, Copy)]
pub struct Lease<'a> {
    pub token: &'a str,
    pub fence: Option<u64>,
    pub valid_until: Option<Instant>,
}

#[derive(Debug)]
struct Sink {
    out: BufWriter<File>,
    events: u64,
    /// Events that did not fit under the limit.
    dropped: u64,
    error: Option<std::io::Error>,
    /// The mode running now: every key is written as `<mode>/<key>`.
    mode: String,
}

/// One history file, shared by every worker and the fault schedule of a run.
#[derive(Debug)]
pub struct HistoryLog {
    path: PathBuf,
    base: Instant,
    limit: u64,
    sink: Mutex<Sink>,
}

impl HistoryLog {
    /// Creates (truncates) `path`; times count from now.
    pub fn create(path: &Path, limit: u64) -> Result<HistoryLog, LoadgenError> {
        let file = File::create(path).map_err(|e| {
            LoadgenError::Usage(format!(
                "--history {}: cannot create it: {e}",
                path.display()
            ))
        })?;
        Ok(HistoryLog {
            path: path.to_path_buf(),
            base: Instant::now(),
            limit,
            sink: Mutex::new(Sink {
                out: BufWriter::with_capacity(1 << 16, file),
                events: 0,
                dropped: 0,
                error: None,
                mode: String::new(),
            }),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn ns(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.base).as_nanos() as u64
    }

    fn lease_value(&self, lease: &Lease<'_>) -> serde_json::Value {
        let mut v = json!({ "token": lease.token, "fence": lease.fence });
        if let Some(until) = lease.valid_until {
            v["valid_until"] = json!(self.ns(until));
        }
        v
    }

    /// The mode whose events follow (`concurrent`, `sequential`, a baseline's name).
    pub fn begin_mode(&self, label: &str) {
        let mut sink = self.sink.lock().unwrap_or_else(PoisonError::into_inner);
        sink.mode = label.to_string();
    }

    fn push(&self, mut line: serde_json::Value) {
        let mut sink = self.sink.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(key) = line["key"].as_str().filter(|_| !sink.mode.is_empty()) {
            line["key"] = json!(format!("{}/{key}", sink.mode));
        }
        if sink.events >= self.limit {
            sink.dropped += 1;
            return;
        }
        line["index"] = json!(sink.events);
        sink.events += 1;
        if sink.error.is_none() {
            let written = serde_json::to_writer(&mut sink.out, &line)
                .map_err(std::io::Error::from)
                .and_then(|()| sink.out.write_all(b"\n"));
            if let Err(e) = written {
                sink.error = Some(e);
            }
        }
    }

    /// A client starts `op` on `key` at `at` (`lease`: the lock it acts for, if any).
    pub fn invoke(&self, process: u32, op: Op, key: &str, lease: Option<Lease<'_>>, at: Instant) {
        let value = lease.map_or(serde_json::Value::Null, |l| self.lease_value(&l));
        self.push(json!({
            "process": process, "type": "invoke", "f": op.as_str(), "key": key,
            "value": value, "time": self.ns(at),
        }));
    }

    /// The client's `op` on `key` ended at `at` as `outcome`.
    pub fn complete(
        &self,
        process: u32,
        op: Op,
        key: &str,
        outcome: Outcome,
        lease: Option<Lease<'_>>,
        at: Instant,
    ) {
        let value = lease.map_or(serde_json::Value::Null, |l| self.lease_value(&l));
        self.push(json!({
            "process": process, "type": outcome.as_str(), "f": op.as_str(), "key": key,
            "value": value, "time": self.ns(at),
        }));
    }

    /// A fault window opens (`start`) or closes at `at`.
    pub fn nemesis(&self, start: bool, label: &str, at: Instant) {
        self.push(json!({
            "process": "nemesis", "type": "info", "f": if start { "start" } else { "stop" },
            "key": null, "value": label, "time": self.ns(at),
        }));
    }

    /// Flushes the file; an error when writing failed or the limit cut the history.
    pub fn finish(&self) -> Result<u64, LoadgenError> {
        let mut sink = self.sink.lock().unwrap_or_else(PoisonError::into_inner);
        let path = self.path.display();
        if let Some(e) = sink.error.take() {
            return Err(LoadgenError::Failed(format!("--history {path}: {e}")));
        }
        sink.out
            .flush()
            .map_err(|e| LoadgenError::Failed(format!("--history {path}: {e}")))?;
        if sink.dropped > 0 {
            return Err(LoadgenError::Failed(format!(
                "--history {path}: the run made {} events, over the limit of {} (--history-limit); \
                 the file holds the first {} and proves nothing: shorten the run or raise the limit",
                sink.events + sink.dropped,
                self.limit,
                sink.events
            )));
        }
        Ok(sink.events)
    }
}

/// What one lock cycle writes to the history: one client's operations on one key, or nothing
/// when the run keeps no history. The times are read only when it does (no clock read for
/// nothing on the hot path).
#[derive(Debug, Clone, Copy)]
pub struct CycleLog<'a> {
    pub history: Option<&'a HistoryLog>,
    pub process: u32,
    pub key: &'a str,
}

impl CycleLog<'_> {
    /// The client starts `op` at `at()`.
    #[inline]
    pub fn invoke(&self, op: Op, lease: Option<Lease<'_>>, at: impl FnOnce() -> Instant) {
        if let Some(h) = self.history {
            h.invoke(self.process, op, self.key, lease, at());
        }
    }

    /// The client's `op` ended at `at()` as `outcome`.
    #[inline]
    pub fn complete(
        &self,
        op: Op,
        outcome: Outcome,
        lease: Option<Lease<'_>>,
        at: impl FnOnce() -> Instant,
    ) {
        if let Some(h) = self.history {
            h.complete(self.process, op, self.key, outcome, lease, at());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn lines_are_jepsen_shaped_and_the_limit_fails_the_history() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.jsonl");
        let log = HistoryLog::create(&path, 3).unwrap();
        let t = log.base + Duration::from_millis(1);
        let lease = Lease {
            token: "ab",
            fence: Some(7),
            valid_until: Some(t + Duration::from_secs(1)),
        };
        log.invoke(2, Op::Acquire, "k", None, log.base);
        log.complete(2, Op::Acquire, "k", Outcome::Ok, Some(lease), t);
        log.nemesis(true, "kill:m0@1s", t);
        assert_eq!(log.finish().unwrap(), 3);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[1]["type"], "ok");
        assert_eq!(lines[1]["index"], 1);
        assert_eq!(lines[1]["time"], 1_000_000);
        assert_eq!(lines[1]["value"]["fence"], 7);
        assert_eq!(lines[1]["value"]["valid_until"], 1_001_000_000);
        assert_eq!(lines[2]["process"], "nemesis");
        log.nemesis(false, "kill:m0@1s", t);
        let err = log.finish().unwrap_err().to_string();
        assert!(
            err.contains("4 events") && err.contains("limit of 3"),
            "{err}"
        );
    }

    #[test]
    fn each_mode_s_keys_are_a_system_of_their_own() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.jsonl");
        let log = HistoryLog::create(&path, 10).unwrap();
        log.begin_mode("sequential");
        log.invoke(0, Op::Acquire, "redlock-loadgen:0", None, log.base);
        log.begin_mode("concurrent");
        log.invoke(0, Op::Acquire, "redlock-loadgen:0", None, log.base);
        log.nemesis(true, "kill:m0@1s", log.base);
        log.finish().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let keys: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["key"].clone())
            .collect();
        assert_eq!(
            keys,
            [
                json!("sequential/redlock-loadgen:0"),
                json!("concurrent/redlock-loadgen:0"),
                serde_json::Value::Null
            ]
        );
    }
}
