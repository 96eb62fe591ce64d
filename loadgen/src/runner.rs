//! Running the workload: one measured run per fan-out mode against one set of masters.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use redlock_core::{FanOut, Redlock};
use tokio::sync::mpsc;

use crate::checker::count_violations;
use crate::config::RunConfig;
use crate::error::LoadgenError;
use crate::progress::Progress;
use crate::recorder::Recorder;
use crate::stats::ModeStats;
use crate::target::Target;
use crate::worker::{run_shard, Clock, WorkerSetup};

/// At most this many tasks run the clients (a client is one concurrent acquire loop; a task
/// runs a shard of them and keeps one set of histograms, so memory does not grow with clients).
const MAX_SHARDS: u32 = 64;

/// How often the control loop wakes up (collects seconds, prints progress, calls hooks).
const TICK: Duration = Duration::from_millis(100);

/// Called by the control loop about every 100 ms while a mode runs, with the masters at hand:
/// the place where a fault schedule plugs in.
pub trait RunHooks {
    /// Called once before the mode's client and workers start (after the masters were reset),
    /// e.g. to take masters down from the very start.
    fn mode_start(&mut self, _fanout: FanOut, _target: &Target) -> Result<(), LoadgenError> {
        Ok(())
    }
    /// `since_epoch` counts from the start of the mode's warm-up.
    fn tick(
        &mut self,
        _fanout: FanOut,
        _since_epoch: Duration,
        _target: &Target,
    ) -> Result<(), LoadgenError> {
        Ok(())
    }
    /// Called once after the mode's workers stopped (e.g. to heal every fault).
    fn mode_done(&mut self, _fanout: FanOut, _target: &Target) -> Result<(), LoadgenError> {
        Ok(())
    }
}

/// No hooks.
#[derive(Debug, Default)]
pub struct NoHooks;
impl RunHooks for NoHooks {}

/// The result of a run: its configuration, the masters, and each mode's measurements.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub config: RunConfig,
    /// Master URLs, passwords redacted.
    pub masters: Vec<String>,
    pub local_masters: bool,
    pub redis_versions: Vec<String>,
    pub started_unix_s: u64,
    /// True when Ctrl-C ended the run early.
    pub interrupted: bool,
    pub modes: Vec<ModeStats>,
}

impl RunResult {
    /// Violations over all modes.
    pub fn violations(&self) -> u64 {
        self.modes.iter().map(|m| m.counts.violations).sum()
    }
}

/// Runs every mode of `cfg`, one after the other, against `target`. `stop` ends it early.
pub async fn run(
    cfg: &RunConfig,
    target: &Target,
    hooks: &mut dyn RunHooks,
    stop: Arc<AtomicBool>,
) -> Result<RunResult, LoadgenError> {
    let started_unix_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let cfg_shared = Arc::new(cfg.clone());
    let mut modes = Vec::with_capacity(cfg.fanouts.len());
    for &fanout in &cfg.fanouts {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        modes.push(run_mode(&cfg_shared, fanout, target, hooks, &stop).await?);
    }
    Ok(RunResult {
        config: cfg.clone(),
        masters: target.display_urls(),
        local_masters: target.local.is_some(),
        redis_versions: target.redis_versions.clone(),
        started_unix_s,
        interrupted: stop.load(Ordering::Relaxed),
        modes,
    })
}

/// Lock key of resource `index`. The same on every machine, so several load generators
/// pointed at the same masters contend for the same locks.
pub fn resource_key(index: u32) -> String {
    format!("redlock-loadgen:{index}")
}

fn client(cfg: &RunConfig, fanout: FanOut, target: &Target) -> Result<Redlock, LoadgenError> {
    let mut builder = Redlock::builder(target.urls.iter().cloned())
        .fanout(fanout)
        .retry_count(cfg.retry_count)
        .retry_delay(cfg.retry_delay)
        .instance_timeout(cfg.instance_timeout);
    if let Some(q) = cfg.quorum {
        builder = builder.quorum(q);
    }
    let redlock = builder.build()?;
    // The core checks the TTL on every acquire; check it once up front so a bad --ttl is a
    // usage error (exit 2) rather than a run of failed calls.
    redlock_core::validity::validity(
        cfg.ttl,
        Duration::ZERO,
        redlock_core::validity::drift(cfg.ttl, redlock.settings().drift_factor),
    )
    .ok_or_else(|| {
        LoadgenError::Usage(format!(
            "--ttl {:?}: must be longer than the clock-drift allowance (ttl × {} + 2ms)",
            cfg.ttl,
            redlock.settings().drift_factor
        ))
    })?;
    Ok(redlock)
}

async fn run_mode(
    cfg: &Arc<RunConfig>,
    fanout: FanOut,
    target: &Target,
    hooks: &mut dyn RunHooks,
    stop: &Arc<AtomicBool>,
) -> Result<ModeStats, LoadgenError> {
    target.reset()?;
    hooks.mode_start(fanout, target)?;
    let redlock = client(cfg, fanout, target)?;
    let n_masters = target.urls.len();
    let keys: Arc<[String]> = (0..cfg.resources).map(resource_key).collect();
    let epoch = Instant::now();
    let clock = Clock {
        epoch,
        measure_start: epoch + cfg.warmup,
        end: epoch + cfg.warmup + cfg.duration,
    };
    let setup = WorkerSetup {
        redlock,
        cfg: Arc::clone(cfg),
        keys,
        clock,
        stop: Arc::clone(stop),
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let clients = cfg.load.workers();
    let shards = clients.min(MAX_SHARDS);
    let workers: Vec<_> = (0..shards)
        .map(|shard| {
            let members: Vec<u32> = (shard..clients).step_by(shards as usize).collect();
            let rec = Recorder::new(
                fanout,
                n_masters,
                members.len(),
                epoch,
                clock.measure_start,
                tx.clone(),
            );
            tokio::spawn(run_shard(setup.clone(), members, rec))
        })
        .collect();
    drop(tx);

    let mut stats = ModeStats::new(fanout, n_masters);
    let mut progress = Progress::new(fanout, cfg.quiet);
    let mut stopped_at = None;
    let mut ticker = tokio::time::interval(TICK);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        ticker.tick().await;
        while let Ok((second, interval)) = rx.try_recv() {
            progress.add(second, &interval);
            stats.add_intervals([(second, interval)]);
        }
        let now = Instant::now();
        if stopped_at.is_none() && stop.load(Ordering::Relaxed) {
            stopped_at = Some(now);
        }
        hooks.tick(fanout, now - epoch, target)?;
        let measured = (now >= clock.measure_start)
            .then(|| ((now - clock.measure_start).min(cfg.duration), cfg.duration));
        progress.tick(now, ((now - epoch).min(cfg.warmup), cfg.warmup), measured);
        if workers.iter().all(|w| w.is_finished()) {
            break;
        }
    }
    progress.finish();

    let mut windows = Vec::new();
    for worker in workers {
        let rec = worker
            .await
            .map_err(|e| LoadgenError::Failed(format!("a load worker failed: {e}")))?;
        stats.add(&rec.stats);
        windows.extend(rec.windows);
    }
    while let Some((second, interval)) = rx.recv().await {
        stats.add_intervals([(second, interval)]);
    }
    hooks.mode_done(fanout, target)?;
    stats.counts.windows_checked = windows.len() as u64;
    stats.counts.violations = count_violations(&mut windows);
    stats.duration = match stopped_at {
        Some(at) => at.clamp(clock.measure_start, clock.end) - clock.measure_start,
        None => cfg.duration,
    };
    // Seconds past the measured window only hold operations that were in flight at its end.
    let seconds = stats.duration.as_secs_f64().ceil() as usize;
    if stats.intervals.len() > seconds {
        let tail: Vec<_> = stats.intervals.drain(seconds.max(1)..).collect();
        if let Some(last) = stats.intervals.last_mut() {
            tail.iter().for_each(|t| last.add(t));
        }
    }
    Ok(stats)
}
