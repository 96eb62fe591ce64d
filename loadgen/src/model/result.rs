//! The run result as JSON (`kind: "run"`, `loadgen/schema.json`) and back: what `--json`
//! writes ([`crate::render::json`]) and `merge` reads. Every histogram is stored as base64
//! compressed HdrHistogram V2 next to its percentiles, so `merge` is exact.

use std::collections::BTreeMap;
use std::time::Duration;

use redlock_core::FanOut;
use serde::{Deserialize, Serialize};

use crate::generator::Judgement;
use crate::hist::Hist;
use crate::report::{Header, Report};
use crate::stats::{Counts, GeneratorCpu, Interval, MasterStats, ModeStats, VotePattern};

/// Version of the result format; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 2;

/// One histogram: its summary (µs) and its exact content.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HistJson {
    pub count: u64,
    pub min_us: u64,
    pub mean_us: f64,
    pub p1_us: u64,
    pub p10_us: u64,
    pub p50_us: u64,
    pub p90_us: u64,
    pub p99_us: u64,
    pub p999_us: u64,
    pub max_us: u64,
    /// Base64 of the compressed HdrHistogram V2 encoding (values in µs).
    pub hdr: String,
}

impl From<&Hist> for HistJson {
    fn from(h: &Hist) -> Self {
        HistJson {
            count: h.count(),
            min_us: h.min(),
            mean_us: h.mean(),
            p1_us: h.quantile(0.01),
            p10_us: h.quantile(0.10),
            p50_us: h.quantile(0.50),
            p90_us: h.quantile(0.90),
            p99_us: h.quantile(0.99),
            p999_us: h.quantile(0.999),
            max_us: h.max(),
            hdr: h.encode(),
        }
    }
}

impl HistJson {
    fn decode(&self, what: &str) -> Result<Hist, String> {
        let h = Hist::decode(&self.hdr).map_err(|e| format!("{what}: {e}"))?;
        if h.count() != self.count {
            return Err(format!(
                "{what}: the histogram holds {} values but its count says {}",
                h.count(),
                self.count
            ));
        }
        Ok(h)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RatesJson {
    /// Locks acquired per second of the measured window (merged: of the union of the parts'
    /// windows).
    pub acquires_per_s: f64,
    /// Merged results: locks acquired per second while every part was measuring (null for a
    /// single run, or when the parts never measured at the same time).
    pub acquires_per_s_while_all_measured: Option<f64>,
    /// Acquire calls started per second (open loop: the rate the schedule reached).
    pub started_per_s: f64,
    pub acquire_calls_per_s: f64,
    pub attempts_per_s: f64,
    pub redis_commands_per_s: f64,
    pub acquire_success_rate: f64,
    pub quorum_success_rate: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LatencyJson {
    pub acquire: HistJson,
    pub attempt: HistJson,
    pub release: HistJson,
    pub extend: HistJson,
    pub validity_margin: HistJson,
    /// Open loop: actual − intended start (empty in closed loop).
    pub start_lag: HistJson,
    /// Open loop: the start lag of operations a free client waited for (the pacing error).
    pub pacing_lag: HistJson,
}

/// The generator's own cost and its judgement of the measurement.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GeneratorJson {
    pub cpu: GeneratorCpu,
    /// (user + sys) ÷ acquire+release cycles started.
    pub cpu_per_cycle_us: f64,
    /// (user + sys) ÷ (wall time × cores).
    pub core_share: f64,
    #[serde(flatten)]
    pub judgement: Judgement,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MasterJson {
    pub index: usize,
    pub round_trip: HistJson,
    pub granted: u64,
    pub denied: u64,
    pub not_awaited: u64,
    pub errors: u64,
    pub timeouts: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PatternJson {
    pub granted: u16,
    pub denied: u16,
    pub failed: u16,
    pub not_awaited: u16,
    pub attempts: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FairnessJson {
    pub workers: usize,
    pub min_acquired: u64,
    pub max_acquired: u64,
    pub jain_index: f64,
    pub acquired_per_worker: Vec<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IntervalJson {
    pub second: usize,
    pub acquire_calls: u64,
    pub acquired: u64,
    pub attempts: u64,
    pub split_votes: u64,
    pub acquire_p99_us: u64,
    pub acquire_hdr: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ModeJson {
    pub fanout: String,
    /// Length of the measured window (merged: of the union of the parts' windows).
    pub duration_s: f64,
    /// Wall-clock start of the measured window (merged: the earliest part's).
    pub measured_from_unix_ms: u64,
    /// Merged results: each part's measured window, `[from, to]` in ms since the Unix epoch.
    pub windows_unix_ms: Vec<[u64; 2]>,
    pub counts: Counts,
    pub rates: RatesJson,
    pub latency: LatencyJson,
    pub generator: GeneratorJson,
    pub masters: Vec<MasterJson>,
    pub vote_patterns: Vec<PatternJson>,
    pub fairness: FairnessJson,
    pub intervals: Vec<IntervalJson>,
}

/// Concurrent ÷ sequential for the figures users compare (null when undefined).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ComparisonJson {
    pub acquires_per_s_ratio: Option<f64>,
    pub acquire_p50_ratio: Option<f64>,
    pub acquire_p99_ratio: Option<f64>,
    pub attempt_p50_ratio: Option<f64>,
    pub attempt_p99_ratio: Option<f64>,
    pub quorum_success_rate_ratio: Option<f64>,
    pub split_votes_ratio: Option<f64>,
}

/// The whole file of a `run` (and one level of a sweep, one step of a capacity search).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResultJson {
    pub schema_version: u32,
    /// Always "run" here (sweeps and capacity searches have kinds of their own).
    pub kind: String,
    #[serde(flatten)]
    pub header: Header,
    pub modes: Vec<ModeJson>,
    pub comparison: Option<ComparisonJson>,
    /// Faults applied during the run, with their times (absent when there were none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<crate::faults::schedule::FaultEvent>,
}

fn mode_json(report: &Report, m: &ModeStats) -> ModeJson {
    ModeJson {
        fanout: m.fanout.as_str().into(),
        duration_s: m.duration.as_secs_f64(),
        measured_from_unix_ms: m.measured_from_unix_ms,
        windows_unix_ms: m.windows_unix_ms.iter().map(|&(a, b)| [a, b]).collect(),
        counts: m.counts.clone(),
        generator: GeneratorJson {
            cpu: m.cpu,
            cpu_per_cycle_us: m.cpu_per_cycle_us(),
            core_share: m.cpu.core_share(),
            judgement: report.judge(m),
        },
        rates: RatesJson {
            acquires_per_s: m.acquires_per_s(),
            acquires_per_s_while_all_measured: crate::merge::windows::rate_while_all_measured(m),
            started_per_s: m.started_per_s(),
            acquire_calls_per_s: m.acquire_calls_per_s(),
            attempts_per_s: m.attempts_per_s(),
            redis_commands_per_s: m.redis_commands_per_s(),
            acquire_success_rate: m.acquire_success_rate(),
            quorum_success_rate: m.quorum_success_rate(),
        },
        latency: LatencyJson {
            acquire: (&m.acquire).into(),
            attempt: (&m.attempt).into(),
            release: (&m.release).into(),
            extend: (&m.extend).into(),
            validity_margin: (&m.validity_margin).into(),
            start_lag: (&m.start_lag).into(),
            pacing_lag: (&m.pacing_lag).into(),
        },
        masters: m
            .masters
            .iter()
            .enumerate()
            .map(|(index, s)| MasterJson {
                index,
                round_trip: (&s.round_trip).into(),
                granted: s.granted,
                denied: s.denied,
                not_awaited: s.not_awaited,
                errors: s.errors,
                timeouts: s.timeouts,
            })
            .collect(),
        vote_patterns: m
            .vote_patterns
            .iter()
            .map(|(p, &attempts)| PatternJson {
                granted: p.granted,
                denied: p.denied,
                failed: p.failed,
                not_awaited: p.not_awaited,
                attempts,
            })
            .collect(),
        fairness: FairnessJson {
            workers: m.acquired_per_worker.len(),
            min_acquired: m.acquired_per_worker.iter().copied().min().unwrap_or(0),
            max_acquired: m.acquired_per_worker.iter().copied().max().unwrap_or(0),
            jain_index: m.jain_index(),
            acquired_per_worker: m.acquired_per_worker.clone(),
        },
        intervals: m
            .intervals
            .iter()
            .enumerate()
            .map(|(second, i)| IntervalJson {
                second,
                acquire_calls: i.acquire_calls,
                acquired: i.acquired,
                attempts: i.attempts,
                split_votes: i.split_votes,
                acquire_p99_us: i.acquire.quantile(0.99),
                acquire_hdr: i.acquire.encode(),
            })
            .collect(),
    }
}

fn mode_stats(m: &ModeJson) -> Result<ModeStats, String> {
    let fanout: FanOut = m.fanout.parse().map_err(|e| format!("modes: {e}"))?;
    let at = |what: &str| format!("{} mode, {what}", m.fanout);
    let mut masters = Vec::with_capacity(m.masters.len());
    for s in &m.masters {
        masters.push(MasterStats {
            round_trip: s
                .round_trip
                .decode(&at(&format!("master {} round trip", s.index)))?,
            granted: s.granted,
            denied: s.denied,
            not_awaited: s.not_awaited,
            errors: s.errors,
            timeouts: s.timeouts,
        });
    }
    let mut vote_patterns = BTreeMap::new();
    for p in &m.vote_patterns {
        let key = VotePattern {
            granted: p.granted,
            denied: p.denied,
            failed: p.failed,
            not_awaited: p.not_awaited,
        };
        *vote_patterns.entry(key).or_default() += p.attempts;
    }
    let mut intervals = Vec::new();
    for i in &m.intervals {
        if intervals.len() <= i.second {
            intervals.resize(i.second + 1, Interval::default());
        }
        intervals[i.second].add(&Interval {
            acquire_calls: i.acquire_calls,
            acquired: i.acquired,
            attempts: i.attempts,
            split_votes: i.split_votes,
            acquire: Hist::decode(&i.acquire_hdr)
                .map_err(|e| at(&format!("second {}: {e}", i.second)))?,
        });
    }
    if !m.duration_s.is_finite() || m.duration_s < 0.0 {
        return Err(at("duration_s is not a valid duration"));
    }
    let l = &m.latency;
    Ok(ModeStats {
        fanout,
        duration: Duration::from_secs_f64(m.duration_s),
        measured_from_unix_ms: m.measured_from_unix_ms,
        windows_unix_ms: m.windows_unix_ms.iter().map(|w| (w[0], w[1])).collect(),
        counts: m.counts.clone(),
        start_lag: l.start_lag.decode(&at("start lag"))?,
        pacing_lag: l.pacing_lag.decode(&at("pacing lag"))?,
        cpu: m.generator.cpu,
        acquire: l.acquire.decode(&at("acquire latency"))?,
        attempt: l.attempt.decode(&at("attempt latency"))?,
        release: l.release.decode(&at("release latency"))?,
        extend: l.extend.decode(&at("extend latency"))?,
        validity_margin: l.validity_margin.decode(&at("validity margin"))?,
        masters,
        vote_patterns,
        acquired_per_worker: m.fairness.acquired_per_worker.clone(),
        intervals,
    })
}

fn ratio(concurrent: f64, sequential: f64) -> Option<f64> {
    (sequential > 0.0 && concurrent.is_finite()).then(|| concurrent / sequential)
}

/// Concurrent ÷ sequential, when both modes are in the report.
pub fn comparison(report: &Report) -> Option<ComparisonJson> {
    let (s, c) = (report.mode("sequential")?, report.mode("concurrent")?);
    let q = |h: &Hist, p| h.quantile(p) as f64;
    Some(ComparisonJson {
        acquires_per_s_ratio: ratio(c.acquires_per_s(), s.acquires_per_s()),
        acquire_p50_ratio: ratio(q(&c.acquire, 0.5), q(&s.acquire, 0.5)),
        acquire_p99_ratio: ratio(q(&c.acquire, 0.99), q(&s.acquire, 0.99)),
        attempt_p50_ratio: ratio(q(&c.attempt, 0.5), q(&s.attempt, 0.5)),
        attempt_p99_ratio: ratio(q(&c.attempt, 0.99), q(&s.attempt, 0.99)),
        quorum_success_rate_ratio: ratio(c.quorum_success_rate(), s.quorum_success_rate()),
        split_votes_ratio: ratio(c.counts.split_votes as f64, s.counts.split_votes as f64),
    })
}

/// The report as a JSON value.
pub fn to_json(report: &Report) -> ResultJson {
    ResultJson {
        schema_version: SCHEMA_VERSION,
        kind: "run".into(),
        header: report.header.clone(),
        modes: report.modes.iter().map(|m| mode_json(report, m)).collect(),
        comparison: comparison(report),
        faults: report.faults.clone(),
    }
}

/// Reads a run result (already checked to be one) back into a report; derived figures are
/// recomputed, not read.
pub fn from_value(value: serde_json::Value) -> Result<Report, String> {
    let result: ResultJson =
        serde_json::from_value(value).map_err(|e| format!("not a redlock-loadgen result: {e}"))?;
    from_result(result)
}

/// A parsed run result back into a report.
pub fn from_result(result: ResultJson) -> Result<Report, String> {
    let modes = result
        .modes
        .iter()
        .map(mode_stats)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Report {
        header: result.header,
        modes,
        faults: result.faults,
    })
}
