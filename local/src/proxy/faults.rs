//! The fault settings of one proxy: what the setters change and what connections read.

use std::fmt;
use std::time::Duration;

use rand::Rng;

/// Which way through the proxy a fault applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Client → master (requests).
    Upstream,
    /// Master → client (replies).
    Downstream,
    /// Both ways.
    Both,
}

impl Direction {
    pub(crate) fn includes_upstream(self) -> bool {
        matches!(self, Direction::Upstream | Direction::Both)
    }
    pub(crate) fn includes_downstream(self) -> bool {
        matches!(self, Direction::Downstream | Direction::Both)
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::Upstream => "upstream",
            Direction::Downstream => "downstream",
            Direction::Both => "both",
        })
    }
}

impl std::str::FromStr for Direction {
    type Err = String;

    /// Accepts `upstream`/`up`, `downstream`/`down`, `both`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "upstream" | "up" => Ok(Direction::Upstream),
            "downstream" | "down" => Ok(Direction::Downstream),
            "both" => Ok(Direction::Both),
            other => Err(format!(
                "unknown direction {other:?}: expected upstream, downstream or both"
            )),
        }
    }
}

/// Added latency of one direction, Toxiproxy style: every chunk is held for `latency ± jitter`
/// (uniform) after it arrived, and chunks never overtake each other.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Latency {
    /// Mean delay added to each chunk.
    pub latency: Duration,
    /// Maximum deviation from `latency`, either way.
    pub jitter: Duration,
}

impl Latency {
    /// True when this adds no delay at all.
    pub fn is_zero(&self) -> bool {
        self.latency.is_zero() && self.jitter.is_zero()
    }

    /// One chunk's delay, uniform in `[latency − jitter, latency + jitter]` (floored at zero).
    pub(crate) fn sample(&self) -> Duration {
        if self.jitter.is_zero() {
            return self.latency;
        }
        let low = self.latency.saturating_sub(self.jitter);
        let high = self.latency.saturating_add(self.jitter);
        rand::rng().random_range(low..=high)
    }
}

/// A snapshot of every fault of one proxy ([`FaultProxy::faults`](super::FaultProxy::faults)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    /// Latency added to client → master bytes.
    pub upstream_latency: Latency,
    /// Latency added to master → client bytes.
    pub downstream_latency: Latency,
    /// New connections are refused and existing ones were cut.
    pub down: bool,
    /// Bytes are read and discarded both ways; nothing is answered.
    pub blackhole: bool,
    /// The next connection to carry bytes will be reset.
    pub reset_armed: bool,
}

impl Faults {
    /// True when no fault is on: the proxy forwards bytes as they come.
    pub fn is_clear(&self) -> bool {
        *self == Faults::default()
    }

    pub(crate) fn latency(&self, upstream: bool) -> Latency {
        if upstream {
            self.upstream_latency
        } else {
            self.downstream_latency
        }
    }
}

impl fmt::Display for Faults {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_clear() {
            return f.write_str("no fault");
        }
        let mut parts = Vec::new();
        if self.down {
            parts.push("down".to_string());
        }
        if self.blackhole {
            parts.push("blackhole".to_string());
        }
        for (name, l) in [
            ("upstream", self.upstream_latency),
            ("downstream", self.downstream_latency),
        ] {
            if !l.is_zero() {
                parts.push(format!("{name} latency {:?} ± {:?}", l.latency, l.jitter));
            }
        }
        if self.reset_armed {
            parts.push("reset armed".to_string());
        }
        f.write_str(&parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_stays_within_bounds_and_floors_at_zero() {
        let l = Latency {
            latency: Duration::from_millis(10),
            jitter: Duration::from_millis(4),
        };
        for _ in 0..1000 {
            let d = l.sample();
            assert!(
                d >= Duration::from_millis(6) && d <= Duration::from_millis(14),
                "{d:?}"
            );
        }
        let wide = Latency {
            latency: Duration::from_millis(1),
            jitter: Duration::from_millis(5),
        };
        for _ in 0..1000 {
            assert!(wide.sample() <= Duration::from_millis(6));
        }
        let fixed = Latency {
            latency: Duration::from_millis(3),
            jitter: Duration::ZERO,
        };
        assert_eq!(fixed.sample(), Duration::from_millis(3));
    }

    #[test]
    fn directions_parse_and_print() {
        for d in [Direction::Upstream, Direction::Downstream, Direction::Both] {
            assert_eq!(d.to_string().parse::<Direction>(), Ok(d));
        }
        assert_eq!("up".parse::<Direction>(), Ok(Direction::Upstream));
        let err = "sideways".parse::<Direction>().unwrap_err();
        assert!(err.contains("\"sideways\""), "{err}");
        assert!(Direction::Both.includes_upstream() && Direction::Both.includes_downstream());
        assert!(!Direction::Upstream.includes_downstream());
    }

    #[test]
    fn faults_describe_themselves() {
        assert_eq!(Faults::default().to_string(), "no fault");
        let f = Faults {
            blackhole: true,
            downstream_latency: Latency {
                latency: Duration::from_millis(50),
                jitter: Duration::ZERO,
            },
            ..Faults::default()
        };
        assert!(!f.is_clear());
        assert_eq!(f.to_string(), "blackhole, downstream latency 50ms ± 0ns");
    }
}
