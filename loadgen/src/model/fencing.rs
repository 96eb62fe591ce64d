//! The fencing figures of one mode (docs/src/design.md#metrics): present only when the run
//! was fenced (`--fencing`) or wrote to a protected resource (`--storage`, a holder pause).
//! They cover the whole run, warm-up included, as the mutual-exclusion check does: a safety
//! figure is not sampled.

use serde::{Deserialize, Serialize};

/// Tokens issued, their order, and what the protected resource accepted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FencingStats {
    /// The client was built with fencing (its writes carry tokens the storage checks).
    pub fenced: bool,
    /// Locks acquired with a fencing token.
    pub tokens_issued: u64,
    /// Acquisitions whose token was not above every token of the same resource returned by
    /// acquisitions that had completed before they began (0 while masters keep their data).
    pub token_order_violations: u64,
    /// Writes holders sent to the protected resource (one per lock still valid when checked).
    pub storage_writes: u64,
    /// Writes the storage refused (a token below the highest it had stored).
    pub storage_writes_rejected: u64,
    /// Writes sent after the writer's lock validity had ended, that the storage stored.
    pub stale_writes_accepted: u64,
    /// The same late writes, refused by the storage's token check.
    pub stale_writes_rejected: u64,
    /// Writes that got no answer (timeout, error): neither accepted nor rejected.
    pub storage_errors: u64,
}

impl FencingStats {
    /// Writes were sent and the storage answered none of them (wrong password, closed port):
    /// the stale-write figures then prove nothing.
    pub fn storage_took_no_write(&self) -> bool {
        self.storage_writes > 0 && self.storage_errors >= self.storage_writes
    }

    pub fn add(&mut self, other: &FencingStats) {
        self.fenced |= other.fenced;
        add_counts!(self, other; tokens_issued, token_order_violations, storage_writes);
        add_counts!(self, other; storage_writes_rejected, stale_writes_accepted);
        add_counts!(self, other; stale_writes_rejected, storage_errors);
    }
}

/// Adds `other` into `mine`, either side possibly absent.
pub fn add_optional(mine: &mut Option<FencingStats>, other: &Option<FencingStats>) {
    if let Some(theirs) = other {
        mine.get_or_insert_with(FencingStats::default).add(theirs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fencing_figures_add_up_and_stay_absent_when_no_part_has_them() {
        let part = FencingStats {
            fenced: true,
            tokens_issued: 5,
            token_order_violations: 1,
            storage_writes: 4,
            storage_writes_rejected: 2,
            stale_writes_accepted: 1,
            stale_writes_rejected: 2,
            storage_errors: 1,
        };
        let mut merged = None;
        add_optional(&mut merged, &None);
        assert_eq!(merged, None);
        add_optional(&mut merged, &Some(part.clone()));
        add_optional(&mut merged, &Some(part));
        let merged = merged.unwrap();
        assert!(merged.fenced);
        assert_eq!(
            (merged.tokens_issued, merged.token_order_violations),
            (10, 2)
        );
        assert_eq!(
            (merged.stale_writes_accepted, merged.stale_writes_rejected),
            (2, 4)
        );
        assert_eq!((merged.storage_writes, merged.storage_errors), (8, 2));
    }
}
