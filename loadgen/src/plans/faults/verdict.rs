//! The verdict of a `scenarios` row: whether a mode's figures show what its expectation asks,
//! and whether lock keys were left behind.

use std::time::Duration;

use redlock_core::FanOut;

use crate::engine::config::RunConfig;
use crate::model::counts::Counts;
use crate::model::mode::ModeStats;

/// What a scenario must show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// 0 violations and locks acquired in every measured second.
    Live,
    /// No lock at all: every acquire fails Unavailable, within the timeout-and-retry bound.
    Unavailable,
    /// Negative control: a holder with exactly a quorum exists, and the checker counts the
    /// overlap the fault causes (violations > 0).
    Detected,
    /// The same setup done safely: a holder with exactly a quorum, 0 violations.
    Safe,
    /// Under a fault Redlock tolerates: 0 violations and a lock won after the fault.
    NoViolation,
    /// A baseline breaking where it should (negative control): violations > 0.
    Broken,
    /// A single-master lock while its master is down: nothing acquired after the first lock,
    /// every later call Unavailable.
    Down,
    /// A client died holding the lock and the lock was never freed: no lock won after the
    /// crash, the key is still there.
    Stuck,
    /// A client died holding the lock and the others went on once it expired: 0 violations.
    Recovers,
    /// Clocks that disagree: two holders at once, and a holder's DEL removed the other's lock.
    TwoHolders,
    /// A holder paused past its validity wrote anyway and the unfenced storage stored it
    /// (negative control: stale writes accepted > 0).
    StaleAccepted,
    /// The same pause with fencing: the late write refused, none stored, tokens in order.
    StaleRejected,
    /// Two holders at once (a control's overlap), and fencing stops the older one: a write
    /// refused by token, none stored out of order, tokens in order.
    OverlapFenced,
    /// Fencing's stated assumption broken: tokens came out of order (negative control).
    TokensOutOfOrder,
    /// The same kind of schedule within the assumption: tokens in order, locks after it.
    TokensInOrder,
}

impl Expect {
    /// The "expected" column.
    pub fn describe(&self) -> &'static str {
        match self {
            Expect::Live => "0 violations, locks every second",
            Expect::Unavailable => "0 locks, all Unavailable, bounded",
            Expect::Detected => "violations > 0 (detected)",
            Expect::Safe => "0 violations",
            Expect::NoViolation => "0 violations, locks go on",
            Expect::Broken => "violations > 0 (breaks)",
            Expect::Down => "no lock while down",
            Expect::Stuck => "stuck lock: none after crash",
            Expect::Recovers => "locks after crash, 0 viol.",
            Expect::TwoHolders => "violations and foreign DEL",
            Expect::StaleAccepted => "stale writes accepted (breaks)",
            Expect::StaleRejected => "stale writes all rejected",
            Expect::TokensOutOfOrder => "tokens out of order (breaks)",
            Expect::TokensInOrder => "tokens in order, locks go on",
            Expect::OverlapFenced => "overlap; the old holder's write refused",
        }
    }
}

pub(crate) fn keys_verdict(left: &[(usize, u64)]) -> Result<(), String> {
    if left.is_empty() {
        return Ok(());
    }
    let where_: Vec<String> = left.iter().map(|(m, n)| format!("{n} on m{m}")).collect();
    Err(format!(
        "lock keys left after the TTL: {}",
        where_.join(", ")
    ))
}

/// The longest an acquire may take when every attempt fails: each attempt makes one round of
/// SET and one round of cleanup, a round waits at most the per-master timeout (sequential
/// fan-out: once per master, one after the other), and at most `retry_delay` passes between
/// attempts.
pub fn acquire_bound(cfg: &RunConfig, fanout: FanOut, n_masters: usize) -> Duration {
    let round = match fanout {
        FanOut::Sequential => cfg.instance_timeout * n_masters as u32,
        _ => cfg.instance_timeout,
    };
    round * 2 * (cfg.retry_count + 1) + cfg.retry_delay * cfg.retry_count
}

/// Whether `mode` shows what `expect` asks.
pub fn judge(
    expect: Expect,
    mode: &ModeStats,
    cfg: &RunConfig,
    n_masters: usize,
) -> Result<(), String> {
    match expect {
        Expect::Live => judge_live(mode),
        Expect::Unavailable => judge_unavailable(mode, cfg, n_masters),
        Expect::Detected | Expect::Safe | Expect::OverlapFenced => {
            judge_quorum_control(expect, mode, cfg, n_masters)
        }
        Expect::StaleAccepted | Expect::StaleRejected => judge_stale_writes(expect, mode),
        Expect::TokensOutOfOrder | Expect::TokensInOrder => judge_token_order(expect, mode),
        // Listed, not `_`: a new expectation must be given its judge.
        Expect::NoViolation
        | Expect::Broken
        | Expect::Down
        | Expect::TwoHolders
        | Expect::Stuck
        | Expect::Recovers => judge_counts(expect, &mode.counts),
    }
}

/// Liveness: 0 violations, and a lock acquired in every measured second the generator watched.
fn judge_live(mode: &ModeStats) -> Result<(), String> {
    let c = &mode.counts;
    if c.violations > 0 {
        return Err(format!("{} violation(s)", c.violations));
    }
    let seconds = mode.duration.as_secs_f64().ceil() as usize;
    // A second in which the generator itself did not run for a quarter of it (the
    // control loop woke that late: a busy machine) did not watch the masters: it
    // proves nothing either way.
    let unobserved =
        |i: &crate::model::interval::Interval| i.generator_stall_ms * 4 >= mode.interval_ms;
    let idle: Vec<usize> = (0..seconds)
        .filter(|&s| {
            mode.intervals
                .get(s)
                .is_none_or(|i| i.acquired == 0 && !unobserved(i))
        })
        .collect();
    if !idle.is_empty() {
        return Err(format!("no lock acquired in measured second(s) {idle:?}"));
    }
    Ok(())
}

/// No majority: no lock, every call Unavailable, none slower than the client's bound.
fn judge_unavailable(mode: &ModeStats, cfg: &RunConfig, n_masters: usize) -> Result<(), String> {
    let c = &mode.counts;
    if c.acquired > 0 {
        return Err(format!(
            "{} lock(s) acquired without a majority",
            c.acquired
        ));
    }
    if c.acquire_calls == 0 {
        return Err("no acquire call completed".into());
    }
    if c.unavailable != c.acquire_calls {
        return Err(format!(
            "{} of {} acquire calls failed Unavailable (the others otherwise)",
            c.unavailable, c.acquire_calls
        ));
    }
    // The client's bound, plus the longest the generator itself stood still (a busy
    // machine stretches an acquire by the time its process does not run).
    let stalled = mode
        .intervals
        .iter()
        .map(|i| i.generator_stall_ms)
        .max()
        .unwrap_or(0);
    let bound = acquire_bound(cfg, mode.fanout, n_masters);
    let allowed = bound + Duration::from_millis(stalled);
    let max = Duration::from_micros(mode.latency.acquire.max());
    if max > allowed {
        return Err(format!(
            "slowest acquire {max:?} exceeds the bound {bound:?} (+ {stalled} ms the generator stood still)"
        ));
    }
    Ok(())
}

/// The controls that need a holder with exactly a quorum of grants (the other masters down):
/// the overlap detected, the same setup safe, or the overlap fenced.
fn judge_quorum_control(
    expect: Expect,
    mode: &ModeStats,
    cfg: &RunConfig,
    n_masters: usize,
) -> Result<(), String> {
    let c = &mode.counts;
    let quorum = cfg
        .quorum
        .unwrap_or_else(|| redlock_core::quorum::majority(n_masters));
    // A lock won with exactly a quorum of grants while the other masters were down.
    let exact_quorum_holder = mode.vote_patterns.keys().any(|p| {
        usize::from(p.granted) == quorum
            && p.denied == 0
            && usize::from(p.failed + p.not_awaited) == n_masters - quorum
    });
    match expect {
        _ if !exact_quorum_holder => Err(format!(
            "no lock was won with exactly {quorum} of {n_masters} grants: the control did not set up its holder"
        )),
        Expect::Detected if c.violations == 0 => {
            Err("the overlap the fault caused was not detected (0 violations)".into())
        }
        Expect::Safe if c.violations > 0 => Err(format!("{} violation(s)", c.violations)),
        Expect::Safe if c.acquired == 0 => Err("no lock acquired".into()),
        Expect::OverlapFenced => judge_fenced_overlap(mode),
        _ => Ok(()),
    }
}

/// Faults judged on the run's counts alone (the other expectations: [`judge`]): one Redlock tolerates, one a baseline does not,
/// a single master down, clocks that disagree; a client that died holding the lock: the lock
/// stuck, or the others went on after its TTL.
fn judge_counts(expect: Expect, c: &Counts) -> Result<(), String> {
    let crash = matches!(expect, Expect::Stuck | Expect::Recovers);
    match expect {
        Expect::NoViolation if c.violations > 0 => Err(format!("{} violation(s)", c.violations)),
        Expect::NoViolation if c.acquired < 2 => Err(format!(
            "{} lock(s) acquired: none won after the fault",
            c.acquired
        )),
        Expect::Broken if c.violations == 0 => {
            Err("the fault this lock cannot survive caused no violation".into())
        }
        Expect::Down if c.acquired != 1 || c.unavailable == 0 => Err(format!(
            "{} lock(s) acquired and {} call(s) Unavailable: expected the one lock before the fault, then only Unavailable",
            c.acquired, c.unavailable
        )),
        Expect::TwoHolders if c.violations == 0 || c.foreign_releases == 0 => Err(format!(
            "{} violation(s), {} release(s) of another's lock: expected both above 0",
            c.violations, c.foreign_releases
        )),
        Expect::Recovers if c.violations > 0 => Err(format!("{} violation(s)", c.violations)),
        _ if crash && c.crashed_clients != 1 => Err(format!(
            "{} client(s) crashed (expected 1)",
            c.crashed_clients
        )),
        Expect::Stuck if c.acquired_after_crash > 0 => Err(format!(
            "{} lock(s) won after the crash: the lock was not stuck",
            c.acquired_after_crash
        )),
        Expect::Stuck if c.not_acquired == 0 => {
            Err("no acquire call was refused after the crash".into())
        }
        Expect::Recovers if c.acquired_after_crash == 0 => {
            Err("no lock won after the crash".into())
        }
        _ => Ok(()),
    }
}

/// Kleppmann's clock jump with fencing: the two holders overlap (the lock cannot stop it),
/// and the older holder's later write is refused by the storage's token check.
fn judge_fenced_overlap(mode: &ModeStats) -> Result<(), String> {
    let c = &mode.counts;
    let f = mode.fencing.clone().unwrap_or_default();
    if !f.fenced {
        return Err("the run was not fenced".into());
    }
    if c.violations == 0 {
        return Err("no overlap: the jump did not give two holders at once".into());
    }
    if f.storage_writes_rejected == 0 {
        return Err(format!(
            "no write refused by token ({} writes): the older holder never wrote after the newer one",
            f.storage_writes
        ));
    }
    if f.stale_writes_accepted > 0 || f.token_order_violations > 0 {
        return Err(format!(
            "{} stale write(s) stored, {} token order violation(s)",
            f.stale_writes_accepted, f.token_order_violations
        ));
    }
    Ok(())
}

/// The quorum-overlap rows: tokens before and after the masters they met in lost their data.
fn judge_token_order(expect: Expect, mode: &ModeStats) -> Result<(), String> {
    let f = mode.fencing.clone().unwrap_or_default();
    if !f.fenced || f.tokens_issued == 0 {
        return Err(format!(
            "{} token(s) issued (fenced: {}): nothing to order",
            f.tokens_issued, f.fenced
        ));
    }
    // The later quorum is only complete in the last second: locks there are the later ones.
    let last_second = mode.intervals.last().map_or(0, |i| i.acquired);
    if last_second == 0 {
        return Err("no lock acquired in the last second, after the fault".into());
    }
    match expect {
        Expect::TokensOutOfOrder if f.token_order_violations == 0 => {
            Err("tokens stayed in order: the emptied masters kept a counter after all".into())
        }
        Expect::TokensInOrder if f.token_order_violations > 0 => Err(format!(
            "{} token order violation(s)",
            f.token_order_violations
        )),
        _ => Ok(()),
    }
}

/// The holder-pause rows: the paused holder's late write, stored or refused.
fn judge_stale_writes(expect: Expect, mode: &ModeStats) -> Result<(), String> {
    let c = &mode.counts;
    let f = mode.fencing.clone().unwrap_or_default();
    if c.violations > 0 {
        return Err(format!("{} violation(s)", c.violations));
    }
    let stale = f.stale_writes_accepted + f.stale_writes_rejected;
    if stale == 0 {
        return Err(format!(
            "no stale write: the paused holder never wrote after its lock expired ({} writes)",
            f.storage_writes
        ));
    }
    match expect {
        Expect::StaleAccepted if f.stale_writes_accepted == 0 => Err(format!(
            "{} stale write(s), none stored: the unfenced storage refused them",
            f.stale_writes_rejected
        )),
        Expect::StaleRejected if !f.fenced => Err("the run was not fenced".into()),
        Expect::StaleRejected if f.stale_writes_accepted > 0 => Err(format!(
            "{} stale write(s) stored despite fencing",
            f.stale_writes_accepted
        )),
        Expect::StaleRejected if f.token_order_violations > 0 => Err(format!(
            "{} token order violation(s)",
            f.token_order_violations
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use redlock_core::FanOut;

    use super::*;
    use crate::model::interval::Interval;

    /// Three measured seconds; `locks[s]` acquired in second `s`, `stall_ms[s]` the
    /// generator's longest late wake-up in it.
    fn mode(locks: [u64; 3], stall_ms: [u64; 3]) -> ModeStats {
        let mut m = ModeStats::new(FanOut::Concurrent, 5, Duration::from_secs(1));
        m.duration = Duration::from_secs(3);
        m.add_intervals((0..3).map(|s| {
            let interval = Interval {
                index: s,
                acquired: locks[s],
                generator_stall_ms: stall_ms[s],
                ..Interval::default()
            };
            (s, interval)
        }));
        m
    }

    #[test]
    fn a_second_without_locks_fails_liveness_unless_the_generator_itself_stalled_in_it() {
        let cfg = crate::cli::translate::scenario_run("--clients 2")
            .unwrap()
            .0;
        let judge_live = |m: &ModeStats| judge(Expect::Live, m, &cfg, 5);
        assert_eq!(judge_live(&mode([5, 5, 5], [0, 0, 0])), Ok(()));
        let err = judge_live(&mode([5, 0, 5], [0, 0, 0])).unwrap_err();
        assert!(err.contains("[1]"), "{err}");
        // A short hiccup does not excuse it; a quarter of the second does.
        assert!(judge_live(&mode([5, 0, 5], [0, 249, 0])).is_err());
        assert_eq!(judge_live(&mode([5, 0, 5], [0, 250, 0])), Ok(()));
    }
}
