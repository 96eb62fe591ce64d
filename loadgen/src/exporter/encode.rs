//! The live figures in the Prometheus text format (version 0.0.4), written by the
//! `prometheus-client` crate's encoder from a [`Snapshot`] at each scrape.
//!
//! Histograms are classic Prometheus histograms (`_bucket{le}`, `_sum`, `_count`), their
//! buckets read off the run's HdrHistograms: a `le` bucket counts the values HdrHistogram
//! cannot tell from `le` or below (3 significant digits), `_sum` is its mean × count.

use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use redlock_core::AttemptResult;

use super::{LiveFigures, LiveMode, Snapshot};
use crate::hist::Hist;

/// The `Content-Type` of what [`render`] writes.
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// Upper bounds of the acquire-duration buckets, s: the library's own
/// ([`redlock_core::DURATION_BUCKETS_S`]), so a dashboard reads both the same way.
pub const ACQUIRE_BUCKETS_S: [f64; 16] = redlock_core::DURATION_BUCKETS_S;

/// Upper bounds of the start-lag buckets, s: 10 µs (a well-paced start) to 1 s (a generator
/// far behind its schedule).
pub const START_LAG_BUCKETS_S: [f64; 16] = [
    0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
    0.1, 0.25, 0.5, 1.0,
];

/// Every metric family served, as its samples are named (counters with `_total`).
pub const METRIC_NAMES: [&str; 6] = [
    "redlock_acquire_duration_seconds",
    "redlock_attempts_total",
    "redlock_master_failures_total",
    "redlock_loadgen_generator_cpu_ratio",
    "redlock_loadgen_start_lag_seconds",
    "redlock_loadgen_mutual_exclusion_violations_total",
];

/// The registry a server encodes at each scrape.
pub fn registry(figures: Arc<LiveFigures>) -> Registry {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(Scraped(figures)));
    registry
}

/// Everything `registry` serves now, as text.
pub fn render(registry: &Registry) -> String {
    let mut text = String::new();
    prometheus_client::encoding::prometheus_text::encode(&mut text, registry)
        .expect("writing into a String cannot fail");
    text
}

#[derive(Debug)]
struct Scraped(Arc<LiveFigures>);

impl Collector for Scraped {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        encode_snapshot(&self.0.scrape(), &mut encoder)
    }
}

type Labels = Vec<(&'static str, String)>;

/// The labels every series of `mode` carries: `redlock_lock` and `redlock_fanout`.
fn mode_labels(mode: &LiveMode) -> Labels {
    vec![
        ("redlock_lock", mode.lock.as_str().to_string()),
        ("redlock_fanout", mode.fanout_label().to_string()),
    ]
}

fn with(mut labels: Labels, key: &'static str, value: impl Into<String>) -> Labels {
    labels.push((key, value.into()));
    labels
}

fn encode_snapshot(s: &Snapshot, encoder: &mut DescriptorEncoder) -> Result<(), std::fmt::Error> {
    encode_library_families(s, encoder)?;
    encode_generator_families(s, encoder)
}

/// The families named as the library's own metrics (`redlock_*`), so one dashboard reads both:
/// acquire durations, attempts by result, failures by master.
fn encode_library_families(
    s: &Snapshot,
    encoder: &mut DescriptorEncoder,
) -> Result<(), std::fmt::Error> {
    let mut family = encoder.encode_descriptor(
        "redlock_acquire_duration_seconds",
        "Whole acquire calls, retries included (open loop: from the intended start), by outcome.",
        None,
        MetricType::Histogram,
    )?;
    for mode in &s.modes {
        for (outcome, h) in &mode.acquire {
            let labels = with(mode_labels(mode), "redlock_outcome", outcome.as_str());
            histogram(&mut family.encode_family(&labels)?, h, &ACQUIRE_BUCKETS_S)?;
        }
    }

    let mut family = encoder.encode_descriptor(
        "redlock_attempts",
        "Acquire attempts (one round of SET NX PX on every master) by result.",
        None,
        MetricType::Counter,
    )?;
    for mode in &s.modes {
        for (result, n) in AttemptResult::ALL.iter().zip(mode.attempts) {
            let labels = with(mode_labels(mode), "redlock_attempt_result", result.as_str());
            ConstCounter::new(n).encode(family.encode_family(&labels)?)?;
        }
    }

    let mut family = encoder.encode_descriptor(
        "redlock_master_failures",
        "Failed requests to a master in any operation, by failure kind (error_type).",
        None,
        MetricType::Counter,
    )?;
    for mode in &s.modes {
        for ((master, error_type), n) in &mode.failures {
            let Some(m) = s.masters.get(*master) else {
                continue;
            };
            let mut labels = mode_labels(mode);
            labels.extend([
                ("server_address", m.address.clone()),
                ("server_port", m.port.clone()),
                ("error_type", error_type.clone()),
            ]);
            ConstCounter::new(*n).encode(family.encode_family(&labels)?)?;
        }
    }
    Ok(())
}

/// The load generator's own families (`redlock_loadgen_*`): its CPU, its start lag, and the
/// violations its check found.
fn encode_generator_families(
    s: &Snapshot,
    encoder: &mut DescriptorEncoder,
) -> Result<(), std::fmt::Error> {
    let mut family = encoder.encode_descriptor(
        "redlock_loadgen_generator_cpu_ratio",
        "The load generator's own CPU (user + sys) over the measured window so far, as a share of the machine's cores (0 to 1).",
        None,
        MetricType::Gauge,
    )?;
    for mode in &s.modes {
        ConstGauge::new(mode.cpu.core_share()).encode(family.encode_family(&mode_labels(mode))?)?;
    }

    let mut family = encoder.encode_descriptor(
        "redlock_loadgen_start_lag_seconds",
        "Open loop: actual minus intended start of each operation (the generator's own timing error); empty in closed loop.",
        None,
        MetricType::Histogram,
    )?;
    for mode in &s.modes {
        let labels = mode_labels(mode);
        histogram(
            &mut family.encode_family(&labels)?,
            &mode.start_lag,
            &START_LAG_BUCKETS_S,
        )?;
    }

    let mut family = encoder.encode_descriptor(
        "redlock_loadgen_mutual_exclusion_violations",
        "Pairs of holders of one resource whose ownership windows overlapped; counted when each mode's check is done, at its end.",
        None,
        MetricType::Counter,
    )?;
    for mode in &s.modes {
        ConstCounter::new(mode.violations).encode(family.encode_family(&mode_labels(mode))?)?;
    }
    Ok(())
}

/// One histogram series from an HdrHistogram of µs, in seconds.
fn histogram(
    encoder: &mut prometheus_client::encoding::MetricEncoder,
    h: &Hist,
    bounds_s: &[f64],
) -> Result<(), std::fmt::Error> {
    let (count, sum_s, buckets) = buckets(h, bounds_s);
    encoder
        .encode_histogram::<prometheus_client::encoding::NoLabelSet>(sum_s, count, &buckets, None)
}

/// (count, sum in s, per-bucket counts — not cumulative, as the encoder wants them).
fn buckets(h: &Hist, bounds_s: &[f64]) -> (u64, f64, Vec<(f64, u64)>) {
    let count = h.count();
    let mut below = 0;
    let buckets = bounds_s
        .iter()
        .map(|&le| {
            let cumulative = if count == 0 {
                0
            } else {
                h.inner().count_between(0, (le * 1e6) as u64).min(count)
            };
            let n = cumulative.saturating_sub(below);
            below = below.max(cumulative);
            (le, n)
        })
        .collect();
    (count, h.mean() * count as f64 / 1e6, buckets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_count_the_values_at_or_below_each_bound() {
        let mut h = Hist::new();
        for us in [50, 400, 400, 3_000, 20_000_000] {
            h.record(us);
        }
        let (count, sum, b) = buckets(&h, &ACQUIRE_BUCKETS_S);
        assert_eq!(count, 5);
        assert!((sum - 20.00385).abs() < 0.05, "{sum}");
        let cumulative: Vec<u64> = b
            .iter()
            .scan(0, |acc, (_, n)| {
                *acc += n;
                Some(*acc)
            })
            .collect();
        // ≤100µs: 1; ≤500µs: 3; ≤5ms: 4; ≤10s: still 4 (20 s is only in +Inf).
        assert_eq!(cumulative[0], 1);
        assert_eq!(cumulative[2], 3);
        assert_eq!(cumulative[5], 4);
        assert_eq!(cumulative[15], 4);
    }
}
