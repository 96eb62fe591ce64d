//! `redlock_stats`: a client's figures since it was created (the counters of the
//! OpenTelemetry instruments of the other surfaces and the acquire latency's quantiles), in a
//! struct the caller owns and that can grow without an ABI break.
//!
//! The caller sets `struct_size` to the `sizeof(redlock_stats)` of its header; the library
//! writes the fields that fit in that many bytes (every field is 8 bytes, so the filled part
//! is `struct_size` rounded down to a multiple of 8, at most the library's own size), zeroes
//! the caller's bytes past them, and sets `struct_size` to the bytes it filled. Fields are only
//! ever appended, so an older program reads the fields it knows from a newer library, and a
//! newer program sees from `struct_size` which fields an older library left at 0.
//!
//! Every client records into a `redlock_core::ClientStats` (relaxed atomic adds, no lock:
//! docs/src/design.md#performance-targets), installed as its metrics sink when `redlock_client_new` builds it.

use std::mem::size_of;
use std::time::Duration;

use redlock_core::{ArgValue, Error, StatsSnapshot};

use crate::boundary::{self, non_null};
use crate::client::{handle_ref, redlock_client};
use crate::status::redlock_status;
use crate::vote::REDLOCK_MAX_MASTERS;

/// Requests to one master since the client was created.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub struct redlock_master_stats {
    /// Requests answered, failed or timed out (acquire, extend, release and the cleanup after
    /// a lost attempt; not those a concurrent round decided without waiting for).
    pub requests: u64,
    /// Of these, the ones that failed or timed out.
    pub failures: u64,
}

/// A client's figures since `redlock_client_new()` created it: the counters of the
/// OpenTelemetry instruments of the Rust and Python surfaces (same definitions) and the
/// quantiles of the acquire latency. Fill it with `redlock_client_stats()`.
///
/// A plain struct the caller owns (no pointers). Before the call set `struct_size` to
/// `sizeof(redlock_stats)` (`redlock_stats stats = {.struct_size = sizeof stats};`): the
/// library fills the fields that fit in that many bytes and sets `struct_size` to the bytes it
/// filled; your bytes past them are zeroed (a library older than your header does not know
/// the fields added since). Fields are only ever appended.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
#[allow(non_camel_case_types)]
pub struct redlock_stats {
    /// In: bytes of the caller's struct (`sizeof(redlock_stats)`). Out: bytes filled.
    pub struct_size: usize,
    /// Acquire calls that returned a lock (`redlock.outcome` `acquired`).
    pub acquires_acquired: u64,
    /// Acquire calls lost to contention (`REDLOCK_NOT_ACQUIRED`).
    pub acquires_not_acquired: u64,
    /// Acquire calls that found too few masters (`REDLOCK_UNAVAILABLE`).
    pub acquires_unavailable: u64,
    /// Acquire calls cancelled (none from C today; kept for the same definitions).
    pub acquires_cancelled: u64,
    /// Attempts that won: a quorum with validity left (`redlock.attempt.result` `won`).
    pub attempts_won: u64,
    /// Attempts that were split votes.
    pub attempts_split: u64,
    /// Attempts that were clean losses (no master granted, some denied).
    pub attempts_clean_loss: u64,
    /// Attempts that won a quorum whose validity ran out.
    pub attempts_expired: u64,
    /// Attempts that failures and timeouts alone kept from a quorum.
    pub attempts_unavailable: u64,
    /// Extends that asked the masters (extended, lost or unavailable).
    pub extends: u64,
    /// Releases.
    pub releases: u64,
    /// Locks acquired and not yet released (a lock freed without a release stays counted).
    pub locks_held: i64,
    /// Held locks found lost (e.g. an extend that found the lock gone).
    pub locks_lost: u64,
    /// Requests to all masters (the sum of `masters[i].requests`).
    pub master_requests: u64,
    /// Failed or timed-out requests to all masters (the sum of `masters[i].failures`).
    pub master_failures: u64,
    /// Acquire latency (the whole call: every attempt and wait, any outcome) in milliseconds,
    /// median. The quantiles are within 0.4 % of the exact values (log-linear histogram,
    /// values kept to the microsecond), never above `acquire_max_ms`; all 0 before the first
    /// acquire.
    pub acquire_p50_ms: f64,
    /// 90th percentile of the acquire latency, in milliseconds.
    pub acquire_p90_ms: f64,
    /// 99th percentile of the acquire latency, in milliseconds.
    pub acquire_p99_ms: f64,
    /// 99.9th percentile of the acquire latency, in milliseconds.
    pub acquire_p999_ms: f64,
    /// Longest acquire, in milliseconds (exact to the microsecond).
    pub acquire_max_ms: f64,
    /// Masters of the client; `masters[0 .. n_masters]` are filled, in configured order.
    pub n_masters: usize,
    /// Per-master requests; entries at `n_masters` and beyond are 0.
    pub masters: [redlock_master_stats; REDLOCK_MAX_MASTERS],
    /// Acquire calls that ended in any other error (`redlock.outcome` `error`: an invalid
    /// argument such as an empty resource or a zero TTL, an internal error). Appended after
    /// `masters`: a library older than this field leaves it 0 and `struct_size` short of it.
    pub acquires_error: u64,
}

/// Most bytes a `struct_size` may claim: far more than the struct will ever grow to; a larger
/// value is an uninitialized struct.
const MAX_STRUCT_SIZE: usize = 1 << 16;

fn millis(d: Option<Duration>) -> f64 {
    d.map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

impl From<&StatsSnapshot> for redlock_stats {
    fn from(s: &StatsSnapshot) -> Self {
        let mut masters = [redlock_master_stats::default(); REDLOCK_MAX_MASTERS];
        // The client refuses more than REDLOCK_MAX_MASTERS masters, so nothing is cut here.
        for (slot, m) in masters.iter_mut().zip(&s.masters) {
            *slot = redlock_master_stats {
                requests: m.requests,
                failures: m.failures,
            };
        }
        let latency = &s.acquire_latency;
        redlock_stats {
            struct_size: size_of::<redlock_stats>(),
            acquires_acquired: s.acquires.acquired,
            acquires_not_acquired: s.acquires.not_acquired,
            acquires_unavailable: s.acquires.unavailable,
            acquires_cancelled: s.acquires.cancelled,
            attempts_won: s.attempts.won,
            attempts_split: s.attempts.split,
            attempts_clean_loss: s.attempts.clean_loss,
            attempts_expired: s.attempts.expired,
            attempts_unavailable: s.attempts.unavailable,
            extends: s.extends,
            releases: s.releases,
            locks_held: s.locks_held,
            locks_lost: s.locks_lost,
            master_requests: s.master_requests(),
            master_failures: s.master_failures(),
            acquire_p50_ms: millis(latency.quantile(0.5)),
            acquire_p90_ms: millis(latency.quantile(0.9)),
            acquire_p99_ms: millis(latency.quantile(0.99)),
            acquire_p999_ms: millis(latency.quantile(0.999)),
            acquire_max_ms: millis(latency.max()),
            n_masters: s.masters.len().min(REDLOCK_MAX_MASTERS),
            masters,
            acquires_error: s.acquires.error,
        }
    }
}

/// Fills `*out` with `client`'s figures since it was created (see `redlock_stats`): set
/// `out->struct_size` to `sizeof(redlock_stats)` first. Safe to call from any thread while
/// others use the client; the figures are read one by one, so operations in flight may show
/// in some and not yet in others (e.g. an attempt counted before its acquire ended).
///
/// `REDLOCK_INVALID_ARGUMENT` (and `*out` untouched) for a NULL `client` or `out`, or an
/// `out->struct_size` smaller than `sizeof(size_t)` or over 65536 (an uninitialized struct).
///
/// # Safety
/// `client` must be NULL or a live client handle; `out` NULL or point to
/// `out->struct_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn redlock_client_stats(
    client: *const redlock_client,
    out: *mut redlock_stats,
) -> redlock_status {
    boundary::call("redlock_client_stats", || {
        // SAFETY: forwarded contract.
        let client = unsafe { handle_ref(client) }?;
        non_null(out, "out")?;
        let base = out.cast::<u8>();
        // SAFETY: non-NULL; every version of the struct starts with `struct_size`.
        let size = unsafe { base.cast::<usize>().read_unaligned() };
        if !(size_of::<usize>()..=MAX_STRUCT_SIZE).contains(&size) {
            return Err(Error::invalid_argument(
                "out->struct_size",
                ArgValue::Integer(size as u64),
                format!(
                    "not the size of a redlock_stats (set it to sizeof(redlock_stats), {} bytes \
                     in this library's header, before the call)",
                    size_of::<redlock_stats>()
                ),
            ));
        }
        let filled = size.min(size_of::<redlock_stats>()) / 8 * 8;
        let stats = redlock_stats {
            struct_size: filled,
            ..redlock_stats::from(&client.stats().snapshot())
        };
        // SAFETY: `out` points to `size` writable bytes by the caller's contract;
        // `filled <= size` and `stats` has `size_of::<redlock_stats>() >= filled` bytes, with
        // no padding (see the layout test).
        unsafe {
            std::ptr::copy_nonoverlapping(
                (&stats as *const redlock_stats).cast::<u8>(),
                base,
                filled,
            );
            std::ptr::write_bytes(base.add(filled), 0, size - filled);
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of_val};

    /// The filling rule copies whole 8-byte words: every field must be one (or, for the
    /// per-master array, made of them), with no padding anywhere.
    #[test]
    fn every_field_is_eight_bytes_without_padding() {
        assert_eq!(size_of::<redlock_master_stats>(), 16);
        let s = redlock_stats::from(&redlock_core::ClientStats::new(1).snapshot());
        let scalars = [
            size_of_val(&s.struct_size),
            size_of_val(&s.acquires_acquired),
            size_of_val(&s.locks_held),
            size_of_val(&s.acquire_p50_ms),
            size_of_val(&s.n_masters),
        ];
        assert!(scalars.iter().all(|&n| n == 8));
        assert_eq!(offset_of!(redlock_stats, n_masters), 8 * 21);
        assert_eq!(offset_of!(redlock_stats, masters), 8 * 22);
        assert_eq!(
            offset_of!(redlock_stats, acquires_error),
            8 * 22 + 16 * REDLOCK_MAX_MASTERS
        );
        assert_eq!(
            size_of::<redlock_stats>(),
            8 * 23 + 16 * REDLOCK_MAX_MASTERS
        );
    }

    #[test]
    fn an_empty_client_has_zero_figures() {
        let s = redlock_stats::from(&redlock_core::ClientStats::new(3).snapshot());
        assert_eq!(
            (s.n_masters, s.master_requests, s.acquires_acquired),
            (3, 0, 0)
        );
        assert_eq!((s.acquire_p50_ms, s.acquire_max_ms), (0.0, 0.0));
    }
}
