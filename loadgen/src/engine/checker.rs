//! The mutual-exclusion check: no two holders of one resource may believe they own it at the
//! same time.
//!
//! Each successful acquire contributes one [`Window`] on the monotonic clock, from the moment
//! its vote completed (when the holder learns it owns the lock) to the earlier of the lock's
//! `valid_until` and the moment the holder started releasing it. Windows of one resource that
//! overlap are violations.
//!
//! Why not from the attempt's start: a contender's attempt may start while the previous holder
//! still owns the lock and win only after that holder's release deleted its keys; counting from
//! the attempt's start would report such a correct hand-over as an overlap. Likewise the release
//! *start* ends ownership: masters may grant the next contender as soon as the release reaches
//! them, before the release completes everywhere.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One holder's ownership of one resource, in nanoseconds since the run's epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Index of the resource.
    pub resource: u32,
    /// When the holder learned it owns the lock.
    pub start_ns: u64,
    /// When the holder stopped owning it (validity ran out or release started).
    pub end_ns: u64,
    /// The lock's token (its 20 random bytes), so an overlap names the two holders.
    pub token: [u8; 20],
}

/// The 20 bytes of a hex lock token (zeros for anything else: the token only labels a window).
pub fn token_bytes(hex: &str) -> [u8; 20] {
    let mut out = [0u8; 20];
    if hex.len() == 40 {
        for (i, byte) in out.iter_mut().enumerate() {
            match u8::from_str_radix(&hex[2 * i..2 * i + 2], 16) {
                Ok(b) => *byte = b,
                Err(_) => return [0u8; 20],
            }
        }
    }
    out
}

/// Counts pairs of windows of the same resource that overlap (a window ending exactly when
/// another starts does not overlap it). Sorts `windows` in place.
pub fn count_violations(windows: &mut [Window]) -> u64 {
    windows.sort_unstable_by_key(|w| (w.resource, w.start_ns, w.end_ns));
    let mut violations = 0u64;
    // Ends of the windows of the current resource that started earlier and may still be open.
    let mut open: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
    let mut current = None;
    for w in windows.iter() {
        if current != Some(w.resource) {
            current = Some(w.resource);
            open.clear();
        }
        if w.end_ns <= w.start_ns {
            continue; // owned nothing (cannot happen with validity > 0; kept harmless)
        }
        while open.peek().is_some_and(|Reverse(end)| *end <= w.start_ns) {
            open.pop();
        }
        violations += open.len() as u64;
        open.push(Reverse(w.end_ns));
    }
    violations
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(resource: u32, start_ns: u64, end_ns: u64) -> Window {
        Window {
            resource,
            start_ns,
            end_ns,
            token: [0; 20],
        }
    }

    #[test]
    fn tokens_are_their_bytes() {
        let hex = "00ff10a0b1c2d3e4f5061728394a5b6c7d8e9fa0";
        let bytes = token_bytes(hex);
        assert_eq!((bytes[0], bytes[1], bytes[19]), (0x00, 0xff, 0xa0));
        assert_eq!(token_bytes("short"), [0; 20]);
        assert_eq!(token_bytes(&"zz".repeat(20)), [0; 20]);
    }

    #[test]
    fn back_to_back_and_disjoint_windows_are_fine() {
        let mut windows = vec![w(0, 10, 20), w(0, 0, 10), w(0, 20, 30), w(0, 40, 50)];
        assert_eq!(count_violations(&mut windows), 0);
    }

    #[test]
    fn overlapping_windows_of_one_resource_are_counted_per_pair() {
        let mut windows = vec![w(0, 0, 100), w(0, 50, 60), w(0, 55, 70), w(0, 99, 120)];
        // (0-100, 50-60), (0-100, 55-70), (50-60, 55-70), (0-100, 99-120)
        assert_eq!(count_violations(&mut windows), 4);
    }

    #[test]
    fn windows_of_different_resources_never_conflict() {
        let mut windows = vec![w(0, 0, 100), w(1, 0, 100), w(2, 50, 150)];
        assert_eq!(count_violations(&mut windows), 0);
        windows.push(w(1, 99, 101));
        assert_eq!(count_violations(&mut windows), 1);
    }

    #[test]
    fn a_window_nested_inside_another_is_a_violation_and_empty_windows_own_nothing() {
        let mut windows = vec![w(3, 0, 1000), w(3, 400, 500), w(3, 600, 600)];
        assert_eq!(count_violations(&mut windows), 1);
        let mut empty = vec![w(0, 5, 5), w(0, 5, 5), w(0, 0, 10)];
        assert_eq!(count_violations(&mut empty), 0);
    }
}
