//! `redlock-loadgen scenarios`: a fixed matrix of fault runs, each with the outcome it must
//! have, including negative controls that must be *detected* (proof the checker is not blind).
//!
//! Every row is an ordinary `redlock-loadgen run` command line (shown by `--list`), run on 5
//! fresh local masters; a row passes when its expectation holds and, once the TTL has passed,
//! no lock key is left on any master.

use redlock_core::FanOut;

use super::run::{lock_keys, lock_keys_left, run_with_faults, wait_until_keys_expire};
use super::verdict::keys_verdict;
pub use super::verdict::{acquire_bound, judge, Expect};
use crate::engine::config::RunConfig;
use crate::engine::faults::master::FaultSpec;
use crate::engine::target::Target;
use crate::error::LoadgenError;
use crate::model::report::Report;
pub use crate::model::scenarios::Outcome;

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

/// A row of the matrix.
fn row(name: &'static str, about: &'static str, flags: &'static str, expect: Expect) -> Scenario {
    Scenario {
        name,
        about,
        flags,
        expect,
    }
}

/// Contended load: 8 clients on one lock, 1 s TTL, 0.5 s warm-up then 3 s measured; faults
/// start 0.5 s into the measurement.
const LOAD: &str = "--clients 8 --resources 1 --ttl 1s --warmup 500ms --duration 3s";
/// Negative-control setup: 2 clients on one lock held 2.5 s with a 3 s TTL. m3 and m4 are down
/// from the start until half a second after the first lock is granted, so the first holder
/// gets exactly m0, m1, m2 (3 of 5); they come back empty, then a second after that first lock
/// one of the holder's masters loses its key. Timed from the first lock, not the clock: on a
/// slow machine the holder may win later than planned, and the schedule waits for it.
const CONTROL: &str = "--clients 2 --resources 1 --ttl 3s --hold 2500ms --warmup 0s --duration 4s --fault kill:m3,m4@0s-lock+500ms";

/// The single-master baselines broken where their assumption fails, each next to Redlock
/// under the same fault. Flags are complete (no shared load is added):
/// - restart / killed: 2 clients on one lock held 4.5 s with a 5 s TTL, so the second client
///   is still trying when the fault strikes (the restart a second after the first lock, the
///   kill at 1.5 s);
/// - crash: 4 clients on one lock; the first to win it at or after 1 s dies holding it
///   (setnx-expire waits up to 5 s for a reply: a SETNX whose reply times out on a busy
///   machine strands the key just as the crash does, and before it, so it must not time out);
/// - clocks: 4 clients on one lock retrying without pause; client 3's clock runs 5 s ahead.
fn baseline_rows() -> Vec<Scenario> {
    vec![
        row(
            "single: restart",
            "its master restarts at once, empty",
            "--lock single --clients 2 --resources 1 --ttl 5s --hold 4500ms --warmup 0s --duration 6s --fault restart:m0@lock+1s",
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
            "--lock setnx-expire --clients 4 --resources 1 --ttl 1s --instance-timeout 5s --warmup 0s --duration 4s --client-fault crash@1s",
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
        row(
            "redlock: holder pause",
            "a holder stops past its TTL, then writes",
            "--clients 4 --resources 1 --ttl 500ms --warmup 0s --duration 3s --client-fault pause:0:1500ms@500ms",
            Expect::StaleAccepted,
        ),
        row(
            "redlock fenced: holder pause",
            "the same pause, writes checked by token",
            "--fencing --clients 4 --resources 1 --ttl 500ms --warmup 0s --duration 3s --client-fault pause:0:1500ms@500ms",
            Expect::StaleRejected,
        ),
        // Two quorums that meet only in masters restarted empty between them: the first locks
        // go through m0-m2 (m3, m4 down), then m0, m1 die, m2 restarts empty, and m3, m4 come
        // back empty, so the later locks go through m2-m4, where no counter survived.
        row(
            "fenced: quorums meet in an emptied master",
            "3 of 5; the one shared master restarts empty",
            "--fencing --clients 4 --resources 1 --ttl 500ms --warmup 0s --duration 3s --fault kill:m3,m4@0s-1500ms --fault kill:m0,m1@1s --fault restart:m2@1200ms",
            Expect::TokensOutOfOrder,
        ),
        // Quorum 4 of 5: two quorums share 3 masters, so 2 may restart empty. First locks
        // through m0-m3 (m4 down), then m0 dies and m1, m2 restart empty: the later locks go
        // through m1-m4, and m3 still holds the counter.
        row(
            "fenced 4 of 5: two shared masters emptied",
            "quorum 4; 2 of the 3 shared masters restart empty",
            "--fencing --quorum 4 --clients 4 --resources 1 --ttl 500ms --warmup 0s --duration 3s --fault kill:m4@0s-1500ms --fault kill:m0@1s --fault restart:m1,m2@1200ms",
            Expect::TokensInOrder,
        ),
    ]
}

/// The matrix, in the order it runs.
pub fn matrix() -> Vec<Scenario> {
    let live = |name, about, fault| row(name, about, fault, Expect::Live);
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
        row(
            "3 killed",
            "the majority down from the start",
            "--fault kill:3@0s",
            Expect::Unavailable,
        ),
        row(
            "control: restart",
            "a holder's master restarts at once, empty",
            "--fault restart:m0@lock+1s",
            Expect::Detected,
        ),
        row(
            "control: expire",
            "a holder's key expires early (clock jump)",
            "--fault expire:m0@lock+1s",
            Expect::Detected,
        ),
        // Real clock jumps (masters under libfaketime; Valkey unless --server names another).
        // A holder of all 5 masters loses 2 of them: the other client still cannot win 3.
        row(
            "clock: minority jumps",
            "2 of the holder's 5 masters jump +5 s",
            "--clients 2 --resources 1 --ttl 3s --hold 2500ms --warmup 0s --duration 4s --fault clock:m0,m1:+5s@lock+1s",
            Expect::NoViolation,
        ),
        // Kleppmann's scenario, on the control's schedule: the holder has exactly m0-m2, m0's
        // clock jumps past the key's expiry, the other client wins m0, m3, m4.
        row(
            "clock: shared master jumps",
            "a holder's master's wall clock jumps +5 s (libfaketime)",
            "--fault clock:m0:+5s@lock+1s",
            Expect::Detected,
        ),
        row(
            "clock: shared master jumps (fenced)",
            "the same jump; holders write at both ends of the hold, by token",
            "--fencing --write-at-release --fault clock:m0:+5s@lock+1s",
            Expect::OverlapFenced,
        ),
        row(
            "control: delayed restart",
            "the same restart, back only after the TTL",
            "--fault restart-delayed:m0@lock+1s",
            Expect::Safe,
        ),
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
            Expect::Detected | Expect::Safe | Expect::OverlapFenced => CONTROL,
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
    (mut cfg, specs): (RunConfig, Vec<FaultSpec>),
    server: Option<&redlock_local::ServerKind>,
    signals: &crate::signals::Signals,
) -> Result<Outcome, LoadgenError> {
    cfg.quiet = true;
    let flags = scenario.run_flags(cfg.fanouts[0]);
    // Clock rows need a server that runs under libfaketime: Valkey, unless one was named.
    let jumps = specs.iter().any(FaultSpec::jumps_clocks);
    let valkey = redlock_local::ServerKind::Valkey;
    let server = server.or(jumps.then_some(&valkey));
    cfg.command_line = match server {
        Some(server) => format!("redlock-loadgen run {flags} --server {server}"),
        None => format!("redlock-loadgen run {flags}"),
    };
    let mut target =
        Target::spawn_masters(crate::engine::target::DEFAULT_LOCAL_MASTERS, server, jumps)?;
    target.attach_storage(&cfg)?;
    let (result, faults) = rt.block_on(run_with_faults(&cfg, &mut target, &specs, signals))?;
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
            .contains(&crate::model::lock::LockAlgorithm::SetnxGetset);
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

    Ok(Outcome {
        scenario: scenario.name.into(),
        command: cfg.command_line.clone(),
        expected: scenario.expect.describe().into(),
        passed: verdict.is_ok(),
        reason: verdict.err().unwrap_or_default(),
        keys_left,
        faults,
        history: None,
        timeline: None,
        result: report,
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::model::interval::Interval;
    use crate::model::mode::{ModeStats, VotePattern};

    fn cfg() -> RunConfig {
        crate::cli::translate::scenario_run("--ttl 1s").unwrap().0
    }

    /// A mode of 3 measured seconds with these locks acquired in each.
    fn mode(per_second: &[u64]) -> ModeStats {
        let mut m = ModeStats::new(FanOut::Concurrent, 5, Duration::from_secs(1));
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
    fn the_fenced_overlap_needs_two_holders_and_a_write_refused_by_token() {
        let cfg = cfg();
        let mut m = mode(&[1, 0, 1]);
        m.vote_patterns.insert(
            VotePattern {
                granted: 3,
                denied: 0,
                failed: 2,
                not_awaited: 0,
            },
            1,
        );
        m.counts.violations = 1;
        let mut f = crate::model::fencing::FencingStats {
            fenced: true,
            storage_writes: 4,
            ..Default::default()
        };
        m.fencing = Some(f.clone());
        let none_refused = judge(Expect::OverlapFenced, &m, &cfg, 5).unwrap_err();
        assert!(none_refused.contains("no write refused"), "{none_refused}");
        f.storage_writes_rejected = 1;
        m.fencing = Some(f.clone());
        assert_eq!(judge(Expect::OverlapFenced, &m, &cfg, 5), Ok(()));
        f.stale_writes_accepted = 1;
        m.fencing = Some(f);
        assert!(judge(Expect::OverlapFenced, &m, &cfg, 5).is_err());
        m.counts.violations = 0;
        assert!(judge(Expect::OverlapFenced, &m, &cfg, 5)
            .unwrap_err()
            .contains("no overlap"));
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
}
