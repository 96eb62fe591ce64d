//! Mutual exclusion across agents, without trusting any machine's clock.
//!
//! Each agent checks its own holders on its own monotonic clock (exact). Across agents it
//! records every ownership window (from its winning vote to the earlier of the validity's end
//! and its release's start — see [`crate::engine::checker`]) in coordinator time: the phase's planned
//! start (a coordinator instant) plus the offset on the agent's monotonic clock. The error of
//! that mapping is bounded per agent and phase ([`super::clock::Sync::bound_until`]: half the
//! round trip of the `TIME` sample at the start, the same at the end, and how far the two
//! disagree — drift or a step of a clock in between).
//!
//! Two windows of different agents on one resource *certainly* overlapped when their common
//! part is longer than the sum of both bounds: no placement within the bounds separates them.
//! Shorter common parts are *undecidable* (counted, never called violations).
//!
//! What it cannot see: overlaps shorter than the agents' bounds (on a LAN, ~0.1–1 ms; it says
//! how large they were); windows an agent did not report (a crashed agent, or more than
//! [`MAX_WINDOWS`] in one phase — then it says the check was partial); anything between a
//! holder and a process that is not an agent of this run.

use std::collections::BTreeMap;

use crate::signals::Stop;

/// At most this many windows per agent and phase are kept for the check (40 bytes each).
pub const MAX_WINDOWS: usize = 2_000_000;
/// The largest windows record `collect` reads (one agent, one phase): [`MAX_WINDOWS`] windows,
/// 80,000,009 bytes.
pub const MAX_WINDOWS_BYTES: u64 = 9 + (RECORD * MAX_WINDOWS) as u64;

/// One agent's ownership window in coordinator µs since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoordWindow {
    pub resource: u32,
    pub start_us: u64,
    pub end_us: u64,
    /// The lock's token (names the holder in a finding).
    pub token: [u8; 20],
}

/// One agent's windows of one phase, with their error bound.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentWindows {
    pub agent: u32,
    pub bound_us: u64,
    /// Windows were dropped beyond [`MAX_WINDOWS`].
    pub truncated: bool,
    pub windows: Vec<CoordWindow>,
}

impl AgentWindows {
    /// `bound_us`, `truncated`, then per window its resource, start, end (little endian) and
    /// token: 40 bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(9 + RECORD * self.windows.len());
        out.extend_from_slice(&self.bound_us.to_le_bytes());
        out.push(u8::from(self.truncated));
        for w in &self.windows {
            out.extend_from_slice(&w.resource.to_le_bytes());
            out.extend_from_slice(&w.start_us.to_le_bytes());
            out.extend_from_slice(&w.end_us.to_le_bytes());
            out.extend_from_slice(&w.token);
        }
        out
    }

    pub fn decode(agent: u32, bytes: &[u8]) -> Result<AgentWindows, String> {
        if bytes.len() < 9 || (bytes.len() - 9) % RECORD != 0 {
            return Err(format!(
                "agent {agent}: a windows record of {} bytes is not 9 + {RECORD} × n",
                bytes.len()
            ));
        }
        let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
        let windows = bytes[9..]
            .chunks_exact(RECORD)
            .map(|c| CoordWindow {
                resource: u32::from_le_bytes(c[..4].try_into().expect("4 bytes")),
                start_us: u64::from_le_bytes(c[4..12].try_into().expect("8 bytes")),
                end_us: u64::from_le_bytes(c[12..20].try_into().expect("8 bytes")),
                token: c[20..40].try_into().expect("20 bytes"),
            })
            .collect();
        Ok(AgentWindows {
            agent,
            bound_us: u64_at(0),
            truncated: bytes[8] != 0,
            windows,
        })
    }
}

/// Bytes of one window in [`AgentWindows::encode`].
const RECORD: usize = 40;
/// Certain overlaps described in words (the rest are only counted).
const EXAMPLES: usize = 5;

/// What the cross-agent check found in one phase or in all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Findings {
    pub windows: u64,
    /// Pairs of windows of different agents whose overlap exceeds both bounds.
    pub certain: u64,
    /// Pairs that may or may not have overlapped (within the bounds).
    pub undecidable: u64,
    /// The largest bound of any agent, µs.
    pub max_bound_us: u64,
    pub truncated: bool,
    /// The first certain overlaps: agents, tokens, windows.
    pub examples: Vec<String>,
}

impl Findings {
    pub fn add(&mut self, other: &Findings) {
        self.windows += other.windows;
        self.certain += other.certain;
        self.undecidable += other.undecidable;
        self.max_bound_us = self.max_bound_us.max(other.max_bound_us);
        self.truncated |= other.truncated;
        let room = EXAMPLES.saturating_sub(self.examples.len());
        self.examples
            .extend(other.examples.iter().take(room).cloned());
    }
}

/// The check was stopped (a signal, or `collect --wait` ran out) before it finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cancelled;

/// How often (in windows) the sweep looks at its cancellation flag.
const CANCEL_EVERY: usize = 4096;

/// One non-empty window in the check. The field order is the order pairs are reported in:
/// by start, then end, agent, bound, token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Held {
    start: u64,
    end: u64,
    agent: u32,
    bound: u64,
    token: [u8; 20],
}

/// Compares the windows of different agents, resource by resource, in O(n log n) per pair of
/// agents that share a resource: each agent's windows are sorted by start once, and for every
/// window the windows of the other agent that start after it and within its reach are one
/// range found by binary search (see [`pairs`]), so pairs are counted without being visited.
/// Returns [`Cancelled`] soon after `cancel` is set.
pub fn check(agents: Vec<AgentWindows>, cancel: &Stop) -> Result<Findings, Cancelled> {
    let mut found = Findings {
        windows: agents.iter().map(|a| a.windows.len() as u64).sum(),
        max_bound_us: agents.iter().map(|a| a.bound_us).max().unwrap_or(0),
        truncated: agents.iter().any(|a| a.truncated),
        ..Findings::default()
    };
    // Per resource, per (agent, bound): the bound is the same for all windows of a group.
    let mut groups: BTreeMap<u32, BTreeMap<(u32, u64), Vec<Held>>> = BTreeMap::new();
    // Each agent's windows are dropped once grouped: memory stays near one copy.
    for a in agents {
        for w in a.windows.into_iter().filter(|w| w.end_us > w.start_us) {
            let held = Held {
                start: w.start_us,
                end: w.end_us,
                agent: a.agent,
                bound: a.bound_us,
                token: w.token,
            };
            let of_resource = groups.entry(w.resource).or_default();
            of_resource
                .entry((a.agent, a.bound_us))
                .or_default()
                .push(held);
        }
    }
    for (resource, of_resource) in groups {
        let mut of_resource: Vec<Vec<Held>> = of_resource.into_values().collect();
        for g in &mut of_resource {
            if cancel.is_set() {
                return Err(Cancelled);
            }
            g.sort_unstable();
        }
        check_resource(resource, &of_resource, cancel, &mut found)?;
    }
    Ok(found)
}

/// Counts the pairs of one resource's groups (one per agent and bound, each sorted) and
/// describes its first certain overlaps in the order of their earlier window.
fn check_resource(
    resource: u32,
    groups: &[Vec<Held>],
    cancel: &Stop,
    found: &mut Findings,
) -> Result<(), Cancelled> {
    let mut examples = Vec::new();
    for (i, a) in groups.iter().enumerate() {
        for b in &groups[i + 1..] {
            let (Some(x), Some(y)) = (a.first(), b.first()) else {
                continue;
            };
            if x.agent == y.agent {
                continue; // the agent's own check covers it, on an exact clock
            }
            let slack = i128::from(x.bound) + i128::from(y.bound);
            let near = pairs(a, b, -slack, cancel, None)?;
            let certain = pairs(a, b, slack, cancel, Some(&mut examples))?;
            found.certain += certain;
            found.undecidable += near - certain;
        }
    }
    examples.sort_unstable();
    let room = EXAMPLES.saturating_sub(found.examples.len());
    for (w, _, v) in examples.into_iter().take(room) {
        let common = w.end.min(v.end) as i128 - v.start as i128;
        found.examples.push(format!(
            "resource {resource}: agent {} token {} held it [{}, {}] µs and agent {} token {} [{}, {}] µs (coordinator time): {:.3} ms in common, bounds ±{:.3} and ±{:.3} ms",
            w.agent,
            hex(&w.token),
            w.start,
            w.end,
            v.agent,
            hex(&v.token),
            v.start,
            v.end,
            common as f64 / 1000.0,
            w.bound as f64 / 1000.0,
            v.bound as f64 / 1000.0
        ));
    }
    Ok(())
}

/// The pairs of a window of `a` and one of `b` (two agents, each sorted) whose common part
/// is longer than `t` µs (`t` may be negative: a gap shorter than −t counts too).
///
/// For windows `w` before `v` (in [`Held`] order, so `w` starts first), the common part
/// `min(w.end, v.end) − v.start` exceeds `t` exactly when both windows are longer than `t` and
/// `v` starts before `w.end − t`. So after dropping the windows not longer than `t`, the
/// partners of `w` are one range of the other agent's sorted windows: after `w`, and starting
/// before `w.end − t`. `examples` (when given) receives the first [`EXAMPLES`] pairs of each
/// side in that order.
fn pairs(
    a: &[Held],
    b: &[Held],
    t: i128,
    cancel: &Stop,
    mut examples: Option<&mut Vec<(Held, u32, Held)>>,
) -> Result<u64, Cancelled> {
    // The places of the windows longer than `t`, in order (a place also orders the copies
    // of one window).
    let longer = |g: &[Held]| -> Vec<u32> {
        (0..)
            .zip(g)
            .filter(|(_, w)| i128::from(w.end - w.start) > t)
            .map(|(i, _)| i)
            .collect()
    };
    let (of_a, of_b) = (longer(a), longer(b));
    let mut count = 0u64;
    for ((earlier, e), (later, l)) in [((a, &of_a), (b, &of_b)), ((b, &of_b), (a, &of_a))] {
        let mut described = 0;
        for (k, &place) in e.iter().enumerate() {
            if k % CANCEL_EVERY == 0 && cancel.is_set() {
                return Err(Cancelled);
            }
            let w = earlier[place as usize];
            let from = l.partition_point(|&i| later[i as usize] <= w);
            let reach = i128::from(w.end) - t;
            let to = l.partition_point(|&i| i128::from(later[i as usize].start) < reach);
            if to <= from {
                continue;
            }
            count += (to - from) as u64;
            if let Some(out) = examples.as_deref_mut() {
                let take = (to - from).min(EXAMPLES - described);
                let partners = l[from..from + take].iter().map(|&i| later[i as usize]);
                out.extend(partners.map(|v| (w, place, v)));
                described += take;
            }
        }
    }
    Ok(count)
}

fn hex(token: &[u8; 20]) -> String {
    token.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    fn check(agents: &[AgentWindows]) -> Findings {
        super::check(agents.to_vec(), &Stop::default()).expect("not cancelled")
    }

    /// The check as it was: every pair of windows of different agents on one resource that
    /// starts within reach of the earlier one's end. Quadratic; the reference for the sweep.
    fn check_pairwise(agents: &[AgentWindows]) -> Findings {
        let max_bound = agents.iter().map(|a| a.bound_us).max().unwrap_or(0);
        type Held = (u64, u64, u32, u64, [u8; 20]);
        let mut by_resource: BTreeMap<u32, Vec<Held>> = BTreeMap::new();
        for a in agents {
            for w in a.windows.iter().filter(|w| w.end_us > w.start_us) {
                by_resource
                    .entry(w.resource)
                    .or_default()
                    .push((w.start_us, w.end_us, a.agent, a.bound_us, w.token));
            }
        }
        let mut found = Findings {
            windows: agents.iter().map(|a| a.windows.len() as u64).sum(),
            max_bound_us: max_bound,
            truncated: agents.iter().any(|a| a.truncated),
            ..Findings::default()
        };
        for (resource, windows) in by_resource.iter_mut() {
            windows.sort_unstable();
            for (i, &(start, end, agent, bound, token)) in windows.iter().enumerate() {
                for &(s2, e2, a2, b2, t2) in &windows[i + 1..] {
                    if s2 >= end + bound + max_bound {
                        break;
                    }
                    if a2 == agent {
                        continue;
                    }
                    let common = end.min(e2) as i128 - start.max(s2) as i128;
                    let slack = i128::from(bound + b2);
                    if common > slack {
                        found.certain += 1;
                        if found.examples.len() < EXAMPLES {
                            found.examples.push(format!(
                                "resource {resource}: agent {agent} token {} held it [{start}, {end}] µs and agent {a2} token {} [{s2}, {e2}] µs (coordinator time): {:.3} ms in common, bounds ±{:.3} and ±{:.3} ms",
                                hex(&token),
                                hex(&t2),
                                common as f64 / 1000.0,
                                bound as f64 / 1000.0,
                                b2 as f64 / 1000.0
                            ));
                        }
                    } else if common > -slack {
                        found.undecidable += 1;
                    }
                }
            }
        }
        found
    }

    /// Random agents, resources, windows (empty, nested, touching, duplicated) and bounds.
    fn random_agents(rng: &mut SmallRng) -> Vec<AgentWindows> {
        let resources = rng.random_range(1..4u32);
        let span = rng.random_range(10..2_000u64);
        (1..=rng.random_range(1..5u32))
            .map(|agent| AgentWindows {
                agent,
                bound_us: rng.random_range(0..span / 4 + 1),
                truncated: rng.random_bool(0.1),
                windows: (0..rng.random_range(0..40))
                    .map(|_| {
                        let start_us = rng.random_range(0..span);
                        let length = rng.random_range(0..span / 3 + 2);
                        CoordWindow {
                            resource: rng.random_range(0..resources),
                            start_us,
                            // Some empty or reversed: the check skips those.
                            end_us: (start_us + length).saturating_sub(1),
                            token: [rng.random_range(0..3u8); 20],
                        }
                    })
                    .collect(),
            })
            .collect()
    }

    #[test]
    fn the_sweep_finds_exactly_what_the_pairwise_check_found() {
        let mut rng = SmallRng::seed_from_u64(51);
        let mut certain = 0;
        for case in 0..3_000 {
            let agents = random_agents(&mut rng);
            let swept = check(&agents);
            assert_eq!(swept, check_pairwise(&agents), "case {case}: {agents:?}");
            certain += swept.certain;
        }
        assert!(
            certain > 1_000,
            "the cases hold certain overlaps: {certain}"
        );
    }

    #[test]
    fn a_cancelled_check_stops() {
        let stop = Stop::default();
        stop.set();
        let a = agent(1, 0, &[(0, 0, 10)]);
        let b = agent(2, 0, &[(0, 5, 15)]);
        assert_eq!(super::check(vec![a, b], &stop), Err(Cancelled));
    }

    #[test]
    fn many_mutually_overlapping_windows_are_counted_not_visited() {
        // 2 × 20,000 windows all over each other: 400 million certain pairs, which the
        // pairwise check would visit one by one.
        let long: Vec<(u32, u64, u64)> = (0..20_000).map(|i| (0, i, 1_000_000 + i)).collect();
        let f = check(&[agent(1, 10, &long), agent(2, 10, &long)]);
        assert_eq!(
            (f.certain, f.undecidable, f.examples.len()),
            (400_000_000, 0, 5)
        );
    }

    fn agent(agent: u32, bound_us: u64, windows: &[(u32, u64, u64)]) -> AgentWindows {
        AgentWindows {
            agent,
            bound_us,
            truncated: false,
            windows: windows
                .iter()
                .map(|&(resource, start_us, end_us)| CoordWindow {
                    resource,
                    start_us,
                    end_us,
                    token: [agent as u8; 20],
                })
                .collect(),
        }
    }

    #[test]
    fn hand_overs_within_the_bounds_are_undecidable_not_violations() {
        // B wins 50 µs "before" A's release started: within 100 + 100 µs of error.
        let a = agent(1, 100, &[(0, 1_000, 2_000)]);
        let b = agent(2, 100, &[(0, 1_950, 3_000)]);
        let f = check(&[a, b]);
        assert_eq!((f.certain, f.undecidable, f.windows), (0, 1, 2));
    }

    #[test]
    fn overlaps_beyond_both_bounds_are_certain() {
        let a = agent(1, 100, &[(0, 1_000, 2_000), (1, 0, 10_000)]);
        let b = agent(2, 150, &[(0, 1_700, 3_000), (2, 0, 10_000)]);
        let f = check(&[a, b]);
        assert_eq!((f.certain, f.undecidable), (1, 0), "{f:?}");
        assert_eq!(f.max_bound_us, 150);
        let said = &f.examples[0];
        assert!(said.contains("resource 0: agent 1 token 0101"), "{said}");
        assert!(said.contains("agent 2 token 0202"), "{said}");
    }

    #[test]
    fn one_agents_own_windows_and_far_apart_ones_are_not_compared() {
        let a = agent(1, 10, &[(0, 0, 100), (0, 50, 150)]);
        let b = agent(2, 10, &[(0, 10_000, 10_100)]);
        assert_eq!(check(&[a, b]).certain + check(&[]).certain, 0);
    }

    #[test]
    fn windows_survive_their_encoding() {
        let a = agent(3, 77, &[(5, 1, 2), (u32::MAX, u64::MAX - 1, u64::MAX)]);
        let bytes = a.encode();
        assert_eq!(AgentWindows::decode(3, &bytes).unwrap(), a);
        assert!(AgentWindows::decode(3, &bytes[..bytes.len() - 1])
            .unwrap_err()
            .contains("agent 3"));
    }
}
