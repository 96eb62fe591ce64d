//! The coordinator's clock as seen from one agent: a mapping between this machine's monotonic
//! clock and the coordinator's `TIME` (µs since the Unix epoch), with a bound on its error.
//!
//! `TIME` is answered at some instant between sending it and receiving the reply, so taking
//! the midpoint of that round trip errs by at most half of it. Of a few samples the one with
//! the shortest round trip is kept (the tightest bound). The machines' wall clocks are never
//! used: only the coordinator's, so agents need no synchronised clocks.

use std::time::{Duration, Instant};

use super::Coordinator;
use crate::error::LoadgenError;

/// `TIME` samples per synchronisation.
const SAMPLES: usize = 5;

/// One synchronisation: `local` (this machine's monotonic clock) corresponds to `coord_us`
/// (coordinator µs since the Unix epoch) within ± `uncertainty_us`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sync {
    pub local: Instant,
    pub coord_us: u64,
    pub uncertainty_us: u64,
    /// The round trip of the kept sample.
    pub rtt_us: u64,
}

impl Sync {
    /// The coordinator time of the local instant `at`.
    pub fn to_coord_us(&self, at: Instant) -> u64 {
        if at >= self.local {
            self.coord_us + (at - self.local).as_micros() as u64
        } else {
            self.coord_us
                .saturating_sub((self.local - at).as_micros() as u64)
        }
    }

    /// The local instant of coordinator time `coord_us`.
    pub fn to_local(&self, coord_us: u64) -> Instant {
        if coord_us >= self.coord_us {
            self.local + Duration::from_micros(coord_us - self.coord_us)
        } else {
            self.local - Duration::from_micros(self.coord_us - coord_us)
        }
    }

    /// How far `later` disagrees with this mapping at its own instant, µs (clock drift, or a
    /// step of the coordinator's clock, between the two), plus both error bounds: the error
    /// bound of times mapped with `self` up to `later`.
    pub fn bound_until(&self, later: &Sync) -> u64 {
        let predicted = self.to_coord_us(later.local);
        predicted.abs_diff(later.coord_us) + self.uncertainty_us + later.uncertainty_us
    }
}

/// Samples the coordinator's `TIME` and keeps the sample with the shortest round trip.
pub async fn sync(coordinator: &Coordinator) -> Result<Sync, LoadgenError> {
    let mut best: Option<Sync> = None;
    for _ in 0..SAMPLES {
        let sent = Instant::now();
        let (secs, micros): (u64, u64) = coordinator.query(&redis::cmd("TIME")).await?;
        let received = Instant::now();
        let rtt = received - sent;
        let sample = Sync {
            local: sent + rtt / 2,
            coord_us: secs * 1_000_000 + micros,
            uncertainty_us: (rtt.as_micros() as u64).div_ceil(2),
            rtt_us: rtt.as_micros() as u64,
        };
        if best.is_none_or(|b| sample.rtt_us < b.rtt_us) {
            best = Some(sample);
        }
    }
    Ok(best.expect("at least one sample"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapping_goes_both_ways_and_bounds_include_drift() {
        let now = Instant::now() + Duration::from_secs(10);
        let s = Sync {
            local: now,
            coord_us: 5_000_000,
            uncertainty_us: 100,
            rtt_us: 200,
        };
        assert_eq!(s.to_coord_us(now + Duration::from_millis(3)), 5_003_000);
        assert_eq!(s.to_coord_us(now - Duration::from_millis(3)), 4_997_000);
        assert_eq!(s.to_local(5_250_000), now + Duration::from_millis(250));
        assert_eq!(s.to_local(4_750_000), now - Duration::from_millis(250));
        // 1 s later the coordinator says 40 µs more than predicted: drift 40 + both bounds.
        let later = Sync {
            local: now + Duration::from_secs(1),
            coord_us: 6_000_040,
            uncertainty_us: 60,
            rtt_us: 120,
        };
        assert_eq!(s.bound_until(&later), 40 + 100 + 60);
    }
}
