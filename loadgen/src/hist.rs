//! Latency histograms: microsecond HdrHistograms, their percentile summary and their
//! portable encoding (base64 of the compressed HdrHistogram V2 format, as in HdrHistogram logs).
//! In a result file a histogram is its summary next to its encoding (`histogram` in
//! `loadgen/schema.json`); reading one decodes the encoding and recomputes the summary.

pub mod decode;

use std::time::Duration;

use base64::Engine as _;
use hdrhistogram::serialization::Serializer as _;
use hdrhistogram::serialization::{self as hdr, V2DeflateSerializer, V2Serializer};
use hdrhistogram::Histogram;
use serde::ser::SerializeStruct as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Significant decimal digits kept by every histogram (0.1% value precision).
const SIGFIG: u8 = 3;

/// A histogram of values in microseconds (or any integer unit named by its owner).
#[derive(Debug, Clone, PartialEq)]
pub struct Hist(Histogram<u64>);

impl Default for Hist {
    fn default() -> Self {
        Hist::new()
    }
}

impl Hist {
    /// An empty histogram that grows as needed (no value is ever dropped).
    pub fn new() -> Self {
        Hist(Histogram::new(SIGFIG).expect("3 significant digits is a valid precision"))
    }

    /// Records one duration in whole microseconds (at least 1 µs: sub-µs rounds up).
    pub fn record_duration(&mut self, d: Duration) {
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX).max(1);
        self.record(us);
    }

    /// Records one value. The histogram grows to hold it; only a value beyond what any
    /// histogram can hold (≈ 2^63) is clamped to the largest trackable one.
    pub fn record(&mut self, value: u64) {
        // Not `saturating_record`: it clamps to the current size instead of growing.
        if self.0.record(value).is_err() {
            self.0.saturating_record(value);
        }
    }

    /// Adds every count of `other` (exact: histograms are mergeable).
    pub fn add(&mut self, other: &Hist) {
        self.0
            .add(&other.0)
            .expect("auto-resizing histograms accept any value");
    }

    /// Number of recorded values.
    pub fn count(&self) -> u64 {
        self.0.len()
    }

    /// Value at `quantile` in [0, 1] (0 when empty).
    pub fn quantile(&self, quantile: f64) -> u64 {
        if self.0.is_empty() {
            return 0;
        }
        self.0.value_at_quantile(quantile)
    }

    /// Largest value recorded (0 when empty).
    pub fn max(&self) -> u64 {
        if self.0.is_empty() {
            return 0;
        }
        self.0.max()
    }

    /// Smallest value recorded (0 when empty).
    pub fn min(&self) -> u64 {
        self.0.min()
    }

    /// Mean (0 when empty).
    pub fn mean(&self) -> f64 {
        self.0.mean()
    }

    /// Standard deviation (0 when empty).
    pub fn stdev(&self) -> f64 {
        self.0.stdev()
    }

    /// The underlying HdrHistogram (for renderers that iterate over it).
    pub fn inner(&self) -> &Histogram<u64> {
        &self.0
    }

    /// Base64 of the compressed V2 encoding.
    pub fn encode(&self) -> String {
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&self.0, &mut bytes)
            .expect("serializing into memory cannot fail");
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// Decodes [`encode`](Self::encode)'s output, within the limits of a result file
    /// ([`decode`]: checked before anything is allocated or inflated).
    pub fn decode(text: &str) -> Result<Hist, String> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|e| format!("histogram is not valid base64: {e}"))?;
        decode::decode_histogram(&bytes)
            .map(Hist)
            .map_err(|e| format!("histogram: {e}"))
    }
}

impl Serialize for Hist {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut out = s.serialize_struct("Hist", 11)?;
        out.serialize_field("count", &self.count())?;
        out.serialize_field("min_us", &self.min())?;
        out.serialize_field("mean_us", &self.mean())?;
        for (key, q) in [
            ("p1_us", 0.01),
            ("p10_us", 0.10),
            ("p50_us", 0.50),
            ("p90_us", 0.90),
            ("p99_us", 0.99),
            ("p999_us", 0.999),
        ] {
            out.serialize_field(key, &self.quantile(q))?;
        }
        out.serialize_field("max_us", &self.max())?;
        out.serialize_field("hdr", &self.encode())?;
        out.end()
    }
}

impl<'de> Deserialize<'de> for Hist {
    /// Reads the encoding; the count stored next to it must agree (the summary is recomputed).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Hist, D::Error> {
        #[derive(Deserialize)]
        struct Stored {
            count: u64,
            hdr: String,
        }
        let stored = Stored::deserialize(d)?;
        let h = Hist::decode(&stored.hdr).map_err(serde::de::Error::custom)?;
        if h.count() != stored.count {
            return Err(serde::de::Error::custom(format!(
                "the histogram holds {} values but its count says {}",
                h.count(),
                stored.count
            )));
        }
        Ok(h)
    }
}

/// A histogram kept as its V2 encoding: a few hundred bytes where a live histogram holds tens
/// of kilobytes of counters, so a long run's per-interval histograms stay small in memory.
/// In a result file it is the base64 of the compressed encoding, as [`Hist::encode`] writes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PackedHist(Vec<u8>);

impl PackedHist {
    pub fn pack(h: &Hist) -> PackedHist {
        if h.count() == 0 {
            return PackedHist::default();
        }
        let mut bytes = Vec::new();
        V2Serializer::new()
            .serialize(&h.0, &mut bytes)
            .expect("serializing into memory cannot fail");
        PackedHist(bytes)
    }

    pub fn unpack(&self) -> Hist {
        if self.0.is_empty() {
            return Hist::new();
        }
        let mut h: Histogram<u64> = hdr::Deserializer::new()
            .deserialize(&mut self.0.as_slice())
            .expect("a packed histogram is a valid encoding");
        h.auto(true);
        Hist(h)
    }

    /// Adds every count of `other`.
    pub fn add(&mut self, other: &PackedHist) {
        if other.0.is_empty() {
            return;
        }
        if self.0.is_empty() {
            self.0.clone_from(&other.0);
            return;
        }
        let mut sum = self.unpack();
        sum.add(&other.unpack());
        *self = PackedHist::pack(&sum);
    }

    /// Whether it holds no value.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for PackedHist {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.unpack().encode())
    }
}

impl<'de> Deserialize<'de> for PackedHist {
    /// Keeps the encoding as read once checked and decoded (no second encoding: a file's
    /// many interval histograms cost one decoding each).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<PackedHist, D::Error> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(String::deserialize(d)?.trim())
            .map_err(|e| serde::de::Error::custom(format!("histogram is not valid base64: {e}")))?;
        let (h, v2) = decode::decode_histogram_v2(&bytes)
            .map_err(|e| serde::de::Error::custom(format!("histogram: {e}")))?;
        Ok(if h.is_empty() {
            PackedHist::default()
        } else {
            PackedHist(v2)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_round_trips_and_merging_adds_counts() {
        let mut a = Hist::new();
        for v in [5, 70, 900, 12_000, 3_000_000] {
            a.record(v);
        }
        // Large values are kept, not clamped (within 0.1%).
        assert!(a.max().abs_diff(3_000_000) <= 3_000, "{}", a.max());
        let back = Hist::decode(&a.encode()).unwrap();
        assert_eq!(back, a);
        let mut sum = back.clone();
        sum.add(&a);
        assert_eq!(sum.count(), 10);
        assert_eq!(sum.max(), a.max());
        assert!(Hist::decode("not base64!").unwrap_err().contains("base64"));
    }

    #[test]
    fn packed_histograms_add_like_live_ones_and_serialize_as_the_compressed_encoding() {
        let mut a = Hist::new();
        [3, 400, 50_000].iter().for_each(|&v| a.record(v));
        let mut packed = PackedHist::default();
        packed.add(&PackedHist::pack(&a));
        packed.add(&PackedHist::pack(&a));
        let mut twice = a.clone();
        twice.add(&a);
        assert_eq!(packed.unpack(), twice);
        let text = serde_json::to_string(&packed).unwrap();
        assert_eq!(text, format!("\"{}\"", twice.encode()));
        assert_eq!(serde_json::from_str::<PackedHist>(&text).unwrap(), packed);
        assert_eq!(PackedHist::default().unpack().count(), 0);
    }

    #[test]
    fn sub_microsecond_durations_count_as_one() {
        let mut h = Hist::new();
        h.record_duration(Duration::from_nanos(300));
        assert_eq!((h.count(), h.min()), (1, 1));
    }
}
