//! Which resource a client locks next, and for how long it holds it: seeded, per worker.

use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Zipf};

use crate::model::values::{HoldSpec, KeyDist};

/// One worker's random choices, reproducible from the run's seed and the worker's index.
#[derive(Debug)]
pub struct Choices {
    rng: StdRng,
    resources: u32,
    zipf: Option<Zipf<f64>>,
    hold: HoldSpec,
}

impl Choices {
    pub fn new(seed: u64, worker: u32, resources: u32, dist: KeyDist, hold: HoldSpec) -> Self {
        // Distinct, well-mixed streams per worker (SplitMix64 step on the worker index).
        let stream = seed ^ (u64::from(worker) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let zipf = match dist {
            KeyDist::Uniform => None,
            KeyDist::Zipf(exponent) => Some(
                Zipf::new(f64::from(resources), exponent)
                    .expect("resources ≥ 1 and exponent > 0 are checked when parsing"),
            ),
        };
        Choices {
            rng: StdRng::seed_from_u64(stream),
            resources,
            zipf,
            hold,
        }
    }

    /// Index of the next resource, in `0..resources`.
    pub fn resource(&mut self) -> u32 {
        match &self.zipf {
            // Zipf samples are ranks in [1, n]: rank 1 (resource 0) is the hottest.
            Some(zipf) => (zipf.sample(&mut self.rng) as u32).clamp(1, self.resources) - 1,
            None => self.rng.random_range(0..self.resources),
        }
    }

    /// The next hold time.
    pub fn hold(&mut self) -> Duration {
        if self.hold.min == self.hold.max {
            return self.hold.min;
        }
        let (lo, hi) = (
            self.hold.min.as_nanos() as u64,
            self.hold.max.as_nanos() as u64,
        );
        Duration::from_nanos(self.rng.random_range(lo..=hi))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_stay_in_range_and_repeat_with_the_seed() {
        let hold = "1ms..2ms".parse::<HoldSpec>().unwrap();
        let mut a = Choices::new(7, 3, 10, KeyDist::Zipf(1.2), hold);
        let mut b = Choices::new(7, 3, 10, KeyDist::Zipf(1.2), hold);
        let picks: Vec<u32> = (0..1000).map(|_| a.resource()).collect();
        assert!(picks.iter().all(|&r| r < 10));
        assert_eq!(picks, (0..1000).map(|_| b.resource()).collect::<Vec<_>>());
        // Zipf: resource 0 is picked more often than resource 9.
        let count = |r| picks.iter().filter(|&&p| p == r).count();
        assert!(count(0) > count(9), "{} vs {}", count(0), count(9));
        let h = a.hold();
        assert!(h >= Duration::from_millis(1) && h <= Duration::from_millis(2));
        let mut uniform = Choices::new(1, 0, 3, KeyDist::Uniform, hold);
        assert!((0..100).all(|_| uniform.resource() < 3));
    }
}
