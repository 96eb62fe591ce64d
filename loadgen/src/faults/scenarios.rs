//! `redlock-loadgen scenarios`: a fixed matrix of fault runs, each with the outcome it must
//! have, including negative controls that must be *detected* (proof the checker is not blind).
//!
//! Every row is an ordinary `redlock-loadgen run` command line (shown by `--list`), run on 5
//! fresh local masters; a row passes when its expectation holds and, once the TTL has passed,
//! no lock key is left on any master.

use std::time::Duration;

use redlock_core::FanOut;
use serde::Serialize;

use super::master::FaultEvent;
use super::run::{lock_keys, lock_keys_left, run_with_faults, wait_until_keys_expire};
use crate::cli::parse_run_flags;
use crate::config::{Load, RunConfig, RUN_TIMING};
use crate::error::LoadgenError;
use crate::model::mode::ModeStats;
use crate::model::report::Report;
use crate::render::scenarios::Row;
use crate::target::Target;

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
        }
    }
}

/// One row of the matrix.
#[derive(Debug, Clone, Copy)]
pub struct Scenario {
    pub name: &'static str,
    /// What it shows.
    pub about: &'static str,
    /// `redlock-loadgen run` flags (the fan-out is added from the command line).
    pub flags: &'static str,
    pub expect: Expect,
}

/// Contended load: 8 clients on one lock, 1 s TTL, 0.5 s warm-up then 3 s measured; faults
/// start 0.5 s into the measurement.
const LOAD: &str = "--clients 8 --resources 1 --ttl 1s --warmup 500ms --duration 3s";
/// Negative-control setup: 2 clients on one lock held 2.5 s with a 3 s TTL. m3 and m4 are down
/// for the first second, so the first holder gets exactly m0, m1, m2 (3 of 5); they come back
/// empty, then at 1.5 s one of the holder's masters loses its key.
const CONTROL: &str = "--clients 2 --resources 1 --ttl 3s --hold 2500ms --warmup 0s --duration 4s --fault kill:m3,m4@0s-1s";

/// The single-master baselines broken where their assumption fails, each next to Redlock
/// under the same fault. Flags are complete (no shared load is added):
/// - restart / killed: 2 clients on one lock held 4.5 s with a 5 s TTL, so the second client
///   is still trying when the fault strikes at 1.5 s;
/// - crash: 4 clients on one lock; the first to win it at or after 1 s dies holding it;
/// - clocks: 4 clients on one lock retrying without pause; client 3's clock runs 5 s ahead.
fn baseline_rows() -> Vec<Scenario> {
    let row = |name, about, flags, expect| Scenario {
        name,
        about,
        flags,
        expect,
    };
    vec![
        row(
            "single: restart",
            "its master restarts at once, empty",
            "--lock single --clients 2 --resources 1 --ttl 5s --hold 4500ms --warmup 0s --duration 6s --fault restart:m0@1500ms",
            Expect::Broken,
        ),
        row(
            "single: killed",
            "its master is killed",
            "--lock single --clients 2 --resources 1 --ttl 5s --hold 4500ms --warmup 0s --duration 6s --fault kill:m0@1500ms",
            Expect::Down,
        ),
        row(
            "redlock: 2 killed",
            "the same load, a minority killed",
            "--clients 2 --resources 1 --ttl 5s --hold 4500ms --warmup 0s --duration 6s --fault kill:m0,m1@1500ms",
            Expect::NoViolation,
        ),
        row(
            "setnx-expire: crash",
            "the holder dies between SETNX and EXPIRE",
            "--lock setnx-expire --clients 4 --resources 1 --ttl 1s --warmup 0s --duration 4s --client-fault crash@1s",
            Expect::Stuck,
        ),
        row(
            "single: crash",
            "the holder dies holding it",
            "--lock single --clients 4 --resources 1 --ttl 1s --warmup 0s --duration 4s --client-fault crash@1s",
            Expect::Recovers,
        ),
        row(
            "redlock: crash",
            "the holder dies holding it",
            "--clients 4 --resources 1 --ttl 1s --warmup 0s --duration 4s --client-fault crash@1s",
            Expect::Recovers,
        ),
        row(
            "setnx-getset: clocks",
            "one client's clock 5 s ahead",
            "--lock setnx-getset --clients 4 --resources 1 --ttl 1s --hold 20ms --retry-count 0 --warmup 0s --duration 2s --client-fault clock:3:+5s",
            Expect::TwoHolders,
        ),
        row(
            "redlock: clocks",
            "one client's clock 5 s ahead",
            "--clients 4 --resources 1 --ttl 1s --hold 20ms --retry-count 0 --warmup 0s --duration 2s --client-fault clock:3:+5s",
            Expect::NoViolation,
        ),
    ]
}

/// What fencing is for: 4 clients on one lock with a 500 ms TTL; at 500 ms client 0 stops for
/// 1.5 s between its validity check and its write to the storage, so the write lands a second
/// after its lock expired and others have held it since.
fn fencing_rows() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "redlock: holder pause",
            about: "a holder stops past its TTL, then writes",
            flags: "--clients 4 --resources 1 --ttl 500ms --warmup 0s --duration 3s --client-fault pause:0:1500ms@500ms",
            expect: Expect::StaleAccepted,
        },
        Scenario {
            name: "redlock fenced: holder pause",
            about: "the same pause, writes checked by token",
            flags: "--fencing --clients 4 --resources 1 --ttl 500ms --warmup 0s --duration 3s --client-fault pause:0:1500ms@500ms",
            expect: Expect::StaleRejected,
        },
        // Two quorums that meet only in masters restarted empty between them: the first locks
        // go through m0-m2 (m3, m4 down), then m0, m1 die, m2 restarts empty, and m3, m4 come
        // back empty, so the later locks go through m2-m4, where no counter survived.
        Scenario {
            name: "fenced: quorums meet in an emptied master",
            about: "3 of 5; the one shared master restarts empty",
            flags: "--fencing --clients 4 --resources 1 --ttl 500ms --warmup 0s --duration 3s --fault kill:m3,m4@0s-1500ms --fault kill:m0,m1@1s --fault restart:m2@1200ms",
            expect: Expect::TokensOutOfOrder,
        },
        // Quorum 4 of 5: two quorums share 3 masters, so 2 may restart empty. First locks
        // through m0-m3 (m4 down), then m0 dies and m1, m2 restart empty: the later locks go
        // through m1-m4, and m3 still holds the counter.
        Scenario {
            name: "fenced 4 of 5: two shared masters emptied",
            about: "quorum 4; 2 of the 3 shared masters restart empty",
            flags: "--fencing --quorum 4 --clients 4 --resources 1 --ttl 500ms --warmup 0s --duration 3s --fault kill:m4@0s-1500ms --fault kill:m0@1s --fault restart:m1,m2@1200ms",
            expect: Expect::TokensInOrder,
        },
    ]
}

/// The matrix, in the order it runs.
pub fn matrix() -> Vec<Scenario> {
    let live = |name, about, fault: &'static str| Scenario {
        name,
        about,
        flags: fault,
        expect: Expect::Live,
    };
    vec![
        live("no faults", "baseline", ""),
        live("1 killed", "a minority down", "--fault kill:1@1s"),
        live("2 killed", "the largest minority down", "--fault kill:2@1s"),
        live(
            "1 paused",
            "a hung master (SIGSTOP 1.5 s)",
            "--fault pause:1@1s-2500ms",
        ),
        live("2 paused", "two hung masters", "--fault pause:2@1s-2500ms"),
        live(
            "2 slow (+50ms)",
            "replies of 2 masters 50 ms late (proxy)",
            "--fault latency:2:50ms@1s-3s",
        ),
        live(
            "1 blackholed",
            "a master that swallows requests (proxy)",
            "--fault blackhole:1@1s",
        ),
        Scenario {
            name: "3 killed",
            about: "the majority down from the start",
            flags: "--fault kill:3@0s",
            expect: Expect::Unavailable,
        },
        Scenario {
            name: "control: restart",
            about: "a holder's master restarts at once, empty",
            flags: "--fault restart:m0@1500ms",
            expect: Expect::Detected,
        },
        Scenario {
            name: "control: expire",
            about: "a holder's key expires early (clock jump)",
            flags: "--fault expire:m0@1500ms",
            expect: Expect::Detected,
        },
        Scenario {
            name: "control: delayed restart",
            about: "the same restart, back only after the TTL",
            flags: "--fault restart-delayed:m0@1500ms",
            expect: Expect::Safe,
        },
    ]
    .into_iter()
    .chain(baseline_rows())
    .chain(fencing_rows())
    .collect()
}

impl Scenario {
    /// Whether the row measures a fan-out (the single-master baselines run once).
    pub fn fanout_matters(&self) -> bool {
        !self.flags.contains("--lock ")
    }

    /// The `redlock-loadgen run` flags of this row.
    pub fn run_flags(&self, fanout: FanOut) -> String {
        let base = match self.expect {
            Expect::Detected | Expect::Safe => CONTROL,
            Expect::Live | Expect::Unavailable => LOAD,
            _ => "",
        };
        let fanout = if self.fanout_matters() {
            format!("--fanout {}", fanout.as_str())
        } else {
            String::new()
        };
        [fanout.as_str(), base, self.flags]
            .iter()
            .filter(|part| !part.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// What one row measured.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub scenario: String,
    pub command: String,
    pub expected: String,
    pub passed: bool,
    /// Why it failed (empty when it passed).
    pub reason: String,
    /// (master, lock keys) still present once the TTL had passed.
    pub keys_left: Vec<(usize, u64)>,
    pub faults: Vec<FaultEvent>,
    pub result: Report,
    #[serde(skip)]
    pub row: Row,
}

/// The rows named in `only` (all when empty), in matrix order.
pub fn select(only: &[String]) -> Result<Vec<Scenario>, LoadgenError> {
    let all = matrix();
    if let Some(unknown) = only
        .iter()
        .find(|n| !all.iter().any(|s| s.name == n.trim()))
    {
        let names: Vec<&str> = all.iter().map(|s| s.name).collect();
        return Err(LoadgenError::Usage(format!(
            "--only: no scenario {unknown:?}; the rows are: {}",
            names.join(", ")
        )));
    }
    Ok(all
        .into_iter()
        .filter(|s| only.is_empty() || only.iter().any(|n| n.trim() == s.name))
        .collect())
}

/// Runs one row on 5 fresh local masters and judges it.
pub fn run_scenario(
    rt: &tokio::runtime::Runtime,
    scenario: &Scenario,
    fanout: FanOut,
    server: Option<&redlock_local::ServerKind>,
    signals: &crate::signals::Signals,
) -> Result<Outcome, LoadgenError> {
    let flags = scenario.run_flags(fanout);
    let args = parse_run_flags(&flags)
        .map_err(|e| LoadgenError::Failed(format!("scenario {:?}: {e}", scenario.name)))?;
    let mut cfg = RunConfig::new(
        &args.workload,
        Load::Closed {
            workers: args.clients,
        },
        RUN_TIMING,
    )
    .with_run_flags(&args)
    .map_err(|e| LoadgenError::Failed(format!("scenario {:?}: {e}", scenario.name)))?;
    cfg.quiet = true;
    cfg.command_line = match server {
        Some(server) => format!("redlock-loadgen run {flags} --server {server}"),
        None => format!("redlock-loadgen run {flags}"),
    };
    let mut target = Target::spawn(crate::target::DEFAULT_LOCAL_MASTERS, server)?;
    target.attach_storage(&cfg)?;
    let (result, faults) =
        rt.block_on(run_with_faults(&cfg, &mut target, &args.faults, signals))?;
    if let Some(signal) = result.interrupted {
        eprintln!(
            "redlock-loadgen: interrupted during scenario {:?}: no verdict",
            scenario.name
        );
        return Err(LoadgenError::Interrupted(signal));
    }
    // A stuck lock stays by definition, and setnx-getset's keys carry no TTL (a stale
    // timestamp is that pattern's normal state): look once instead of waiting them out.
    let keys_stay = scenario.expect == Expect::Stuck
        || cfg
            .locks
            .contains(&crate::locks::LockAlgorithm::SetnxGetset);
    let keys_left = if keys_stay {
        lock_keys_left(&target, &lock_keys(&cfg))?
    } else {
        wait_until_keys_expire(&target, &lock_keys(&cfg), cfg.ttl)?
    };
    let report = Report::from_run(&result);
    let mode = report.modes.first().ok_or_else(|| {
        LoadgenError::Failed(format!("scenario {:?} measured nothing", scenario.name))
    })?;
    let verdict =
        judge(scenario.expect, mode, &cfg, target.urls.len()).and_then(|()| {
            match scenario.expect {
                Expect::Stuck if keys_left.is_empty() => {
                    Err("the stuck lock's key is gone from its master".into())
                }
                _ if keys_stay => Ok(()),
                _ => keys_verdict(&keys_left),
            }
        });

    let row = Row::new(
        scenario.name,
        mode,
        scenario.expect.describe(),
        verdict.clone(),
    );
    Ok(Outcome {
        scenario: scenario.name.into(),
        command: cfg.command_line.clone(),
        expected: scenario.expect.describe().into(),
        passed: verdict.is_ok(),
        reason: verdict.err().unwrap_or_default(),
        keys_left,
        faults,
        result: report,
        row,
    })
}

fn keys_verdict(left: &[(usize, u64)]) -> Result<(), String> {
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
        Expect::Live => {
            if c.violations > 0 {
                return Err(format!("{} violation(s)", c.violations));
            }
            let seconds = mode.duration.as_secs_f64().ceil() as usize;
            let idle: Vec<usize> = (0..seconds)
                .filter(|&s| mode.intervals.get(s).is_none_or(|i| i.acquired == 0))
                .collect();
            if !idle.is_empty() {
                return Err(format!("no lock acquired in measured second(s) {idle:?}"));
            }
            Ok(())
        }
        Expect::Unavailable => {
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
            let bound = acquire_bound(cfg, mode.fanout, n_masters);
            let max = Duration::from_micros(mode.latency.acquire.max());
            if max > bound {
                return Err(format!(
                    "slowest acquire {max:?} exceeds the bound {bound:?}"
                ));
            }
            Ok(())
        }
        Expect::Detected | Expect::Safe if !exact_quorum_holder => Err(format!(
            "no lock was won with exactly {quorum} of {n_masters} grants: the control did not set up its holder"
        )),
        Expect::Detected if c.violations == 0 => {
            Err("the overlap the fault caused was not detected (0 violations)".into())
        }
        Expect::Detected => Ok(()),
        Expect::Safe if c.violations > 0 => Err(format!("{} violation(s)", c.violations)),
        Expect::Safe if c.acquired == 0 => Err("no lock acquired".into()),
        Expect::Safe => Ok(()),
        Expect::NoViolation | Expect::Recovers if c.violations > 0 => {
            Err(format!("{} violation(s)", c.violations))
        }
        Expect::NoViolation if c.acquired < 2 => Err(format!(
            "{} lock(s) acquired: none won after the fault",
            c.acquired
        )),
        Expect::NoViolation => Ok(()),
        Expect::Broken if c.violations == 0 => {
            Err("the fault this lock cannot survive caused no violation".into())
        }
        Expect::Broken => Ok(()),
        Expect::Down if c.acquired != 1 || c.unavailable == 0 => Err(format!(
            "{} lock(s) acquired and {} call(s) Unavailable: expected the one lock before the fault, then only Unavailable",
            c.acquired, c.unavailable
        )),
        Expect::Down => Ok(()),
        Expect::Stuck | Expect::Recovers if c.crashed_clients != 1 => Err(format!(
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
        Expect::Stuck => Ok(()),
        Expect::Recovers if c.acquired_after_crash == 0 => {
            Err("no lock won after the crash".into())
        }
        Expect::Recovers => Ok(()),
        Expect::TwoHolders if c.violations == 0 || c.foreign_releases == 0 => Err(format!(
            "{} violation(s), {} release(s) of another's lock: expected both above 0",
            c.violations, c.foreign_releases
        )),
        Expect::TwoHolders => Ok(()),
        Expect::StaleAccepted | Expect::StaleRejected => judge_stale_writes(expect, mode),
        Expect::TokensOutOfOrder | Expect::TokensInOrder => judge_token_order(expect, mode),
    }
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
    use super::*;
    use crate::model::interval::Interval;
    use crate::model::mode::VotePattern;

    fn cfg() -> RunConfig {
        let run = parse_run_flags("--ttl 1s").unwrap();
        RunConfig::new(&run.workload, Load::Closed { workers: 1 }, RUN_TIMING)
    }

    /// A mode of 3 measured seconds with these locks acquired in each.
    fn mode(per_second: &[u64]) -> ModeStats {
        let mut m = ModeStats::new(FanOut::Concurrent, 5);
        m.duration = Duration::from_secs(3);
        m.add_intervals(per_second.iter().enumerate().map(|(s, &acquired)| {
            let interval = Interval {
                acquired,
                ..Interval::default()
            };
            (s, interval)
        }));
        m.counts.acquired = per_second.iter().sum();
        m.counts.acquire_calls = m.counts.acquired;
        m
    }

    #[test]
    fn live_needs_locks_in_every_second_and_no_violation() {
        let cfg = cfg();
        assert_eq!(judge(Expect::Live, &mode(&[5, 5, 5]), &cfg, 5), Ok(()));
        let stalled = judge(Expect::Live, &mode(&[5, 0, 5]), &cfg, 5).unwrap_err();
        assert!(stalled.contains("[1]"), "{stalled}");
        let short = judge(Expect::Live, &mode(&[5, 5]), &cfg, 5).unwrap_err();
        assert!(short.contains("[2]"), "{short}");
        let mut unsafe_ = mode(&[5, 5, 5]);
        unsafe_.counts.violations = 1;
        assert!(judge(Expect::Live, &unsafe_, &cfg, 5).is_err());
    }

    #[test]
    fn unavailable_needs_every_call_refused_as_unavailable_within_the_bound() {
        let cfg = cfg();
        // 4 attempts × (SET + cleanup) × 50 ms + 3 retry delays × 200 ms.
        let concurrent = acquire_bound(&cfg, FanOut::Concurrent, 5);
        assert_eq!(concurrent, Duration::from_millis(1000));
        // Sequential fan-out waits for the 5 masters one after the other.
        let sequential = acquire_bound(&cfg, FanOut::Sequential, 5);
        assert_eq!(sequential, Duration::from_millis(2600));
        let mut m = mode(&[0, 0, 0]);
        m.counts.acquire_calls = 10;
        m.counts.unavailable = 10;
        m.latency.acquire.record(900_000);
        assert_eq!(judge(Expect::Unavailable, &m, &cfg, 5), Ok(()));
        let mut slow = m.clone();
        slow.latency.acquire.record(1_100_000);
        assert!(judge(Expect::Unavailable, &slow, &cfg, 5)
            .unwrap_err()
            .contains("bound"));
        let mut mixed = m.clone();
        mixed.counts.unavailable = 9;
        mixed.counts.not_acquired = 1;
        assert!(judge(Expect::Unavailable, &mixed, &cfg, 5).is_err());
        let mut won = m;
        won.counts.acquired = 1;
        assert!(judge(Expect::Unavailable, &won, &cfg, 5).is_err());
    }

    #[test]
    fn controls_need_a_holder_with_exactly_a_quorum() {
        let cfg = cfg();
        let mut m = mode(&[1, 0, 1]);
        let precondition = judge(Expect::Detected, &m, &cfg, 5).unwrap_err();
        assert!(precondition.contains("exactly 3 of 5"), "{precondition}");
        m.vote_patterns.insert(
            VotePattern {
                granted: 3,
                denied: 0,
                failed: 2,
                not_awaited: 0,
            },
            1,
        );
        assert!(judge(Expect::Detected, &m, &cfg, 5)
            .unwrap_err()
            .contains("not detected"));
        assert_eq!(judge(Expect::Safe, &m, &cfg, 5), Ok(()));
        m.counts.violations = 1;
        assert_eq!(judge(Expect::Detected, &m, &cfg, 5), Ok(()));
        assert!(judge(Expect::Safe, &m, &cfg, 5).is_err());
    }

    #[test]
    fn rows_are_selected_by_name_and_unknown_names_are_refused() {
        let rows = select(&["2 killed".into(), "no faults".into()]).unwrap();
        let names: Vec<&str> = rows.iter().map(|s| s.name).collect();
        assert_eq!(names, ["no faults", "2 killed"], "matrix order");
        let err = select(&["4 killed".into()]).unwrap_err().to_string();
        assert!(
            err.contains("\"4 killed\"") && err.contains("3 killed"),
            "{err}"
        );
        assert_eq!(select(&[]).unwrap().len(), matrix().len());
    }

    #[test]
    fn every_row_is_a_valid_run_command_line() {
        for s in matrix() {
            for mode in [FanOut::Sequential, FanOut::Concurrent] {
                let flags = s.run_flags(mode);
                let line = parse_run_flags(&flags);
                assert!(line.is_ok(), "{}: {flags}: {:?}", s.name, line.err());
            }
        }
    }
}
