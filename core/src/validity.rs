//! Pure arithmetic of the algorithm: clock-drift allowance, lock validity, tokens, retry jitter.
//!
//! Kept free of I/O so it can be property-tested and benchmarked on its own.

use std::time::Duration;

/// Fixed part of the drift allowance, added to `ttl × drift_factor` (as in the Redlock description).
pub(crate) const DRIFT_FLOOR: Duration = Duration::from_millis(2);

/// Largest TTL accepted: far beyond any sane lock, small enough that no arithmetic on it overflows.
pub const MAX_TTL: Duration = Duration::from_millis(1 << 40);

/// Clock-drift allowance for a lock of `ttl`: `ttl × drift_factor + 2 ms`.
///
/// `drift_factor` must be finite and in `[0, 1)` (the builder enforces it); anything else is
/// clamped so this never panics.
pub fn drift(ttl: Duration, drift_factor: f64) -> Duration {
    let factor = if drift_factor.is_finite() {
        drift_factor.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let ttl = ttl.min(MAX_TTL);
    ttl.mul_f64(factor).saturating_add(DRIFT_FLOOR)
}

/// Validity left after an attempt: `ttl − elapsed − drift`, or `None` when that is not positive.
pub fn validity(ttl: Duration, elapsed: Duration, drift: Duration) -> Option<Duration> {
    ttl.checked_sub(elapsed)?
        .checked_sub(drift)
        .filter(|left| !left.is_zero())
}

/// A fresh lock token: 20 bytes from the OS CSPRNG, hex-encoded (40 lowercase characters).
pub fn new_token() -> Result<String, getrandom::Error> {
    let mut hex = [0u8; 40];
    fill_token(&mut hex)?;
    Ok(String::from_utf8_lossy(&hex).into_owned())
}

/// Writes a fresh token (20 random bytes as 40 lowercase hex digits) into `hex`, without
/// allocating: the client turns it straight into the shared `Arc<str>` it keeps.
pub(crate) fn fill_token(hex: &mut [u8; 40]) -> Result<(), getrandom::Error> {
    let mut bytes = [0u8; 20];
    getrandom::fill(&mut bytes)?;
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for (pair, byte) in hex.chunks_exact_mut(2).zip(bytes) {
        pair[0] = HEX[usize::from(byte >> 4)];
        pair[1] = HEX[usize::from(byte & 0x0f)];
    }
    Ok(())
}

/// A retry delay drawn uniformly from `[delay / 2, delay]`, so contenders de-synchronise.
pub fn jittered(delay: Duration) -> Duration {
    use rand::Rng;
    let half = delay / 2;
    let spread = delay - half;
    if spread.is_zero() {
        return delay;
    }
    let nanos = rand::rng().random_range(0..=spread.as_nanos().min(u128::from(u64::MAX)) as u64);
    half + Duration::from_nanos(nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_is_factor_times_ttl_plus_floor() {
        assert_eq!(
            drift(Duration::from_secs(10), 0.01),
            Duration::from_millis(102)
        );
        assert_eq!(drift(Duration::from_secs(10), 0.0), DRIFT_FLOOR);
    }

    #[test]
    fn validity_is_none_when_not_positive() {
        let ttl = Duration::from_millis(10);
        assert_eq!(validity(ttl, Duration::from_millis(8), DRIFT_FLOOR), None);
        assert_eq!(validity(ttl, Duration::from_millis(9), DRIFT_FLOOR), None);
        assert_eq!(
            validity(ttl, Duration::from_millis(7), DRIFT_FLOOR),
            Some(Duration::from_millis(1))
        );
    }

    #[test]
    fn tokens_are_40_hex_chars_and_fresh() {
        let a = new_token().unwrap();
        let b = new_token().unwrap();
        assert_eq!(a.len(), 40);
        assert!(a
            .bytes()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_ne!(a, b);
    }

    #[test]
    fn jitter_stays_in_half_to_full_delay() {
        let delay = Duration::from_millis(200);
        for _ in 0..1000 {
            let d = jittered(delay);
            assert!(d >= delay / 2 && d <= delay, "{d:?}");
        }
        assert_eq!(jittered(Duration::ZERO), Duration::ZERO);
    }

    proptest::proptest! {
        #[test]
        fn validity_math_never_panics_and_matches_formula(
            ttl_ms in 0u64..=(1u64 << 41),
            elapsed_us in 0u64..=u64::MAX / 2,
            factor in 0.0f64..1.0,
        ) {
            let ttl = Duration::from_millis(ttl_ms);
            let elapsed = Duration::from_micros(elapsed_us);
            let d = drift(ttl, factor);
            match validity(ttl, elapsed, d) {
                Some(v) => {
                    proptest::prop_assert!(!v.is_zero());
                    proptest::prop_assert_eq!(v + elapsed + d, ttl);
                }
                None => proptest::prop_assert!(elapsed + d >= ttl),
            }
        }

        #[test]
        fn drift_never_panics_on_any_factor(ttl_ms in proptest::num::u64::ANY, factor in proptest::num::f64::ANY) {
            let d = drift(Duration::from_millis(ttl_ms), factor);
            proptest::prop_assert!(d >= DRIFT_FLOOR);
        }
    }
}
