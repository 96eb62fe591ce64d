//! Running the workload: one measured run per fan-out mode against one set of masters.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use redlock_core::{FanOut, Redlock};
use tokio::sync::mpsc;

use crate::engine::checker::count_violations;
use crate::engine::config::{Load, RunConfig};
use crate::engine::cpu::CpuWindow;
use crate::engine::faults::client::{CrashPlan, PausePlan};
use crate::engine::hooks::FirstLock;
pub use crate::engine::hooks::{NoHooks, RunHooks};
use crate::engine::locks::baseline::Baseline;
use crate::engine::locks::setup::{self, LockSetup};
use crate::engine::progress::Progress;
use crate::engine::recorder::Recorder;
use crate::engine::storage::{Protected, Storage, TokenOrder};
use crate::engine::target::Target;
use crate::engine::worker::{run_task, Clock, Slots, WorkerSetup};
use crate::error::LoadgenError;
use crate::exporter::LiveFigures;
use crate::model::fencing::FencingStats;
use crate::model::header::{new_run_id, unix_now_s, Header, Kind};
use crate::model::interval::Interval;
use crate::model::lock::LockAlgorithm;
use crate::model::mode::ModeStats;
use crate::model::report::{ConfigInfo, MasterInfo, Report};
use crate::signals::Stop;

/// At most this many tasks run the workers (a worker is one concurrent acquire loop; a task
/// runs a share of them and keeps one set of histograms, so memory does not grow with workers).
const MAX_TASKS: u32 = 64;

/// How often the control loop wakes up (collects seconds, prints progress, calls hooks).
const TICK: Duration = Duration::from_millis(100);

/// How long operations still in flight at the end (or at a stop) may take to finish. Then
/// acquires are cancelled (their keys deleted on every master), holds are cut short and the
/// locks released (a release is bounded by the per-master timeout): a run ends within its
/// warm-up + duration + this grace + one release.
pub const GRACE: Duration = Duration::from_secs(1);

/// How long each mode waits for its Redlock client's connections before the warm-up starts.
const CONNECT_WAIT: Duration = Duration::from_secs(2);

/// The result of a run: its configuration, the masters, and each mode's measurements.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub config: RunConfig,
    /// Master URLs, passwords redacted.
    pub masters: Vec<String>,
    pub local_masters: bool,
    pub redis_versions: Vec<String>,
    pub started_unix_s: u64,
    /// Random id of this run (merge refuses the same run twice).
    pub run_id: String,
    /// The signal that ended the run early, if one did.
    pub interrupted: Option<crate::signals::Signal>,
    pub modes: Vec<ModeStats>,
}

impl Report {
    /// The result of a run as recorded and rendered.
    pub fn from_run(run: &RunResult) -> Report {
        let cfg = &run.config;
        let (load, rate_per_s) = match cfg.load {
            Load::Closed { .. } => ("closed", None),
            Load::Open { rate_per_s, .. } => ("open", Some(rate_per_s)),
        };
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        let mut header = Header::new(Kind::Run, run.run_id.clone(), run.started_unix_s);
        header.interrupt(run.interrupted);
        let mut report = Report {
            header,
            part_run_ids: vec![run.run_id.clone()],
            local_masters: run.local_masters,
            masters: run
                .masters
                .iter()
                .enumerate()
                .map(|(i, url)| MasterInfo {
                    url: url.clone(),
                    redis_version: run
                        .redis_versions
                        .get(i)
                        .cloned()
                        .unwrap_or_else(|| "unknown".into()),
                })
                .collect(),
            config: ConfigInfo {
                command_line: cfg.command_line.clone(),
                locks: cfg.locks.iter().map(|l| l.as_str().to_string()).collect(),
                fanouts: cfg.fanouts.iter().map(|f| f.as_str().to_string()).collect(),
                load: load.into(),
                clients: cfg.load.workers(),
                rate_per_s,
                resources: cfg.resources,
                key_dist: cfg.key_dist.to_string(),
                hold_min_us: cfg.hold.min.as_micros() as u64,
                hold_max_us: cfg.hold.max.as_micros() as u64,
                extends_per_hold: cfg.extends_per_hold,
                ttl_ms: cfg.ttl.as_millis() as u64,
                retry_count: cfg.retry_count,
                retry_delay_ms: ms(cfg.retry_delay),
                instance_timeout_ms: ms(cfg.instance_timeout),
                quorum: cfg.quorum.map(|q| q as u32),
                duration_s: cfg.duration.as_secs_f64(),
                warmup_s: cfg.warmup.as_secs_f64(),
                seed: cfg.seed,
                repeat: cfg.repeat,
            },
            modes: run.modes.clone(),
            comparison: None,
            against_redlock: Vec::new(),
            faults: Vec::new(),
            thresholds: Vec::new(),
        };
        report.derive();
        report
    }
}

impl RunResult {
    /// Lays `next` (the same run again, its modes in any order) after this one, mode by mode
    /// ([`crate::model::repeats::append`]); a mode `next` did not reach (a stop) is left as it
    /// was. An interruption of `next` is this run's.
    pub fn append_repeat(&mut self, next: RunResult) {
        for m in &mut self.modes {
            if let Some(again) = next
                .modes
                .iter()
                .find(|n| n.lock == m.lock && n.fanout == m.fanout)
            {
                crate::model::repeats::append(m, again);
            }
        }
        if next.interrupted.is_some() {
            self.interrupted = next.interrupted;
        }
    }

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
    stop: &crate::signals::Signals,
) -> Result<RunResult, LoadgenError> {
    run_modes(cfg, &cfg.modes(), target, hooks, stop).await
}

/// Runs every mode of `cfg` `cfg.repeat` times (`run --repeat`), the modes' order reversed
/// every second time and repeat r seeded with seed + r, and lays the repeats end to end
/// ([`RunResult::append_repeat`]). A stop ends it after the mode it cut short.
pub async fn run_repeated(
    cfg: &RunConfig,
    target: &Target,
    hooks: &mut dyn RunHooks,
    stop: &crate::signals::Signals,
) -> Result<RunResult, LoadgenError> {
    let mut whole: Option<RunResult> = None;
    for r in 0..cfg.repeat.max(1) {
        if stopped(whole.as_ref(), stop) {
            break;
        }
        let result = run_repeat(cfg, r, target, hooks, stop).await?;
        add_repeat(&mut whole, cfg, result);
    }
    // Stopped before the first repeat began: by a signal (exit 128 + n, as at any other
    // moment), or, without one, by something that is not the user's doing.
    whole.ok_or_else(|| match stop.received() {
        Some(signal) => LoadgenError::Interrupted(signal),
        None => LoadgenError::Failed("stopped before the run began".into()),
    })
}

/// Repeat `r` (from 0) of the `cfg.repeat` of `cfg`: seeded with seed + r, its modes in the
/// other order every second time, its progress lines saying "repeat r/N".
pub async fn run_repeat(
    cfg: &RunConfig,
    r: u32,
    target: &Target,
    hooks: &mut dyn RunHooks,
    stop: &crate::signals::Signals,
) -> Result<RunResult, LoadgenError> {
    let mut again = cfg.clone();
    again.seed = cfg.seed.wrapping_add(u64::from(r));
    if cfg.repeat > 1 {
        let repeat = format!("repeat {}/{}", r + 1, cfg.repeat);
        again.progress_label = Some(match &cfg.progress_label {
            Some(label) => format!("{label} {repeat}"),
            None => repeat,
        });
    }
    let mut order = cfg.modes();
    if r % 2 == 1 {
        order.reverse();
    }
    run_modes(&again, &order, target, hooks, stop).await
}

/// Lays a repeat of `cfg` after the ones in `whole` (the first one starts it).
pub fn add_repeat(whole: &mut Option<RunResult>, cfg: &RunConfig, result: RunResult) {
    match whole {
        None => {
            *whole = Some(RunResult {
                config: cfg.clone(),
                ..result
            })
        }
        Some(w) => w.append_repeat(result),
    }
}

/// Whether repeating should stop: a signal came, or the last repeat was cut short by one.
pub fn stopped(whole: Option<&RunResult>, stop: &crate::signals::Signals) -> bool {
    whole.is_some_and(|w| w.interrupted.is_some()) || stop.stop.is_set()
}

/// Runs the modes of `cfg` in the order given (a repeat of `run --repeat` takes them in the
/// other order every second time, so a slow drift of the machine falls on each alike).
pub async fn run_modes(
    cfg: &RunConfig,
    order: &[(LockAlgorithm, FanOut)],
    target: &Target,
    hooks: &mut dyn RunHooks,
    stop: &crate::signals::Signals,
) -> Result<RunResult, LoadgenError> {
    cfg.check_locks()?;
    let started_unix_s = unix_now_s();
    let cfg_shared = Arc::new(cfg.clone());
    let mut modes = Vec::with_capacity(order.len());
    for &(lock, fanout) in order {
        if stop.stop.is_set() {
            break;
        }
        modes.push(run_mode(&cfg_shared, lock, fanout, target, hooks, &stop.stop).await?);
    }
    Ok(RunResult {
        config: cfg.clone(),
        masters: target.display_urls(),
        local_masters: target.local.is_some(),
        redis_versions: target.redis_versions.clone(),
        started_unix_s,
        run_id: new_run_id(),
        interrupted: stop.received(),
        modes,
    })
}

/// Wall-clock ms since the Unix epoch of the monotonic instant `at`.
fn unix_ms(at: Instant) -> u64 {
    let now = Instant::now();
    let wall = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let wall = if at <= now {
        wall.saturating_sub(now - at)
    } else {
        wall + (at - now)
    };
    wall.as_millis() as u64
}

fn client(cfg: &RunConfig, fanout: FanOut, target: &Target) -> Result<Redlock, LoadgenError> {
    let mut builder = Redlock::builder(target.urls.iter().cloned())
        .fanout(fanout)
        .retry_count(cfg.retry_count)
        .retry_delay(cfg.retry_delay)
        .instance_timeout(cfg.instance_timeout)
        // The workers stand for separate clients competing for the locks: none may learn
        // from another's release in-process (the core's local hand-off), or the contention
        // measured would be that of one cooperating process, not of N clients.
        .local_handoff(false)
        .fencing(cfg.fencing);
    if let Some(q) = cfg.quorum {
        builder = builder.quorum(q);
    }
    let redlock = builder.build()?;
    // The core's TTL check, once up front, so a bad --ttl is a usage error (exit 2) rather
    // than a run of failed calls.
    redlock.check_ttl(cfg.ttl)?;
    Ok(redlock)
}

/// The protected resource and the token order of one mode (`None`: the run writes nowhere).
fn protected(cfg: &RunConfig, target: &Target) -> Result<Option<Arc<Protected>>, LoadgenError> {
    let Some(storage) = &target.storage else {
        return Ok(None);
    };
    let storage = Storage::new(&storage.url, cfg.fencing, cfg.instance_timeout)
        .map_err(LoadgenError::Usage)?;
    Ok(Some(Arc::new(Protected {
        storage,
        order: TokenOrder::new(cfg.resources),
    })))
}

/// The empty fencing figures of a mode that issues tokens or writes to a storage.
fn fencing_stats(cfg: &RunConfig) -> Option<FencingStats> {
    cfg.writes_storage().then(|| FencingStats {
        fenced: cfg.fencing,
        ..FencingStats::default()
    })
}

async fn run_mode(
    cfg: &Arc<RunConfig>,
    lock: LockAlgorithm,
    fanout: FanOut,
    target: &Target,
    hooks: &mut dyn RunHooks,
    stop: &Arc<Stop>,
) -> Result<ModeStats, LoadgenError> {
    target.reset()?;
    hooks.mode_start(fanout, target)?;
    // The Redlock client also checks the configuration for the baselines (TTL vs drift).
    let redlock = client(cfg, fanout, target)?;
    let baseline = match lock {
        LockAlgorithm::Redlock => {
            // Warm connections (bounded): the warm-up should not be spent connecting.
            redlock.wait_connected(CONNECT_WAIT).await;
            None
        }
        // The single-master locks use the first master.
        other => Some(Arc::new(
            Baseline::new(other, &target.urls[0], cfg.instance_timeout)
                .map_err(LoadgenError::Usage)?,
        )),
    };
    // Single-master locks are counted against their one master.
    let n_masters = if lock.votes() { target.urls.len() } else { 1 };
    let keys: Arc<[String]> = (0..cfg.resources).map(|i| setup::key(lock, i)).collect();
    let epoch = hooks
        .start_at(fanout, cfg.warmup)
        .await?
        .unwrap_or_else(Instant::now);
    let clock = Clock {
        epoch,
        measure_start: epoch + cfg.warmup,
        end: epoch + cfg.warmup + cfg.duration,
    };
    let slots = match cfg.load {
        Load::Open { rate_per_s, .. } => Some(Arc::new(Slots::new(&clock, rate_per_s))),
        Load::Closed { .. } => None,
    };
    let hard_stop = Stop::new();
    let first_lock = Arc::new(FirstLock::new(clock.measure_start));
    let setup = WorkerSetup {
        redlock,
        cfg: Arc::clone(cfg),
        keys,
        clock,
        slots: slots.clone(),
        stop: Arc::clone(stop),
        hard_stop: Arc::clone(&hard_stop),
        first_lock: Arc::clone(&first_lock),
        lock: LockSetup {
            baseline,
            crash: cfg
                .worker_faults
                .crash_at
                .map(|at| Arc::new(CrashPlan::new(clock.measure_start + at))),
            clock_offsets: cfg.worker_faults.clock_offsets.clone(),
            pauses: cfg
                .worker_faults
                .pauses
                .iter()
                .map(|&(client, length, at)| {
                    (
                        client,
                        Arc::new(PausePlan::new(clock.measure_start + at, length)),
                    )
                })
                .collect(),
        },
        protected: protected(cfg, target)?,
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let workers = cfg.load.workers();
    let tasks = workers.min(MAX_TASKS);
    let handles: Vec<_> = (0..tasks)
        .map(|task| {
            let members: Vec<u32> = (task..workers).step_by(tasks as usize).collect();
            let mut rec = Recorder::new(
                fanout,
                n_masters,
                members.len(),
                epoch,
                clock.measure_start,
                cfg.interval,
                tx.clone(),
            );
            rec.stats.lock = lock;
            rec.stats.fencing = fencing_stats(cfg);
            tokio::spawn(run_task(setup.clone(), members, rec))
        })
        .collect();
    drop(tx);
    if !cfg.quiet {
        eprintln!(
            "{}{}: load running ({:?} warm-up, then {:?} measured)",
            cfg.progress_label
                .as_ref()
                .map_or(String::new(), |label| format!("{label}: ")),
            if lock.votes() {
                format!("{} fan-out", fanout.as_str())
            } else {
                lock.as_str().to_string()
            },
            cfg.warmup,
            cfg.duration
        );
    }

    let mut stats = ModeStats::new(fanout, n_masters, cfg.interval);
    stats.lock = lock;
    stats.fencing = fencing_stats(cfg);
    let live = cfg.live.as_deref();
    if let Some(live) = live {
        live.mode_started(lock, fanout);
    }
    let mut progress = Progress::new(fanout, cfg.quiet, cfg.interval);
    let mut stopped_at = None;
    let mut cpu = CpuWindow::new();
    // Per measured interval, the longest the loop below woke late: the generator not running.
    let mut stalls: Vec<(usize, Duration)> = Vec::new();
    loop {
        // Wake at every tick, and exactly when the measurement starts and ends (CPU samples).
        let now = Instant::now();
        let mut wake = now + TICK;
        if !cpu.started() && clock.measure_start > now {
            wake = wake.min(clock.measure_start);
        } else if !cpu.done() && clock.end > now {
            wake = wake.min(clock.end);
        }
        tokio::time::sleep_until(wake.into()).await;
        note_stall(&mut stalls, &clock, cfg.interval, wake, Instant::now());
        while let Ok((second, interval)) = rx.try_recv() {
            progress.add(second, &interval);
            stats.add_intervals([(second, to_live(live, interval))]);
        }
        let now = Instant::now();
        if stopped_at.is_none() && stop.is_set() {
            stopped_at = Some(now);
        }
        let measuring_ended = now >= clock.end || stopped_at.is_some();
        cpu.observe(now >= clock.measure_start, measuring_ended);
        if let (Some(live), Some(so_far)) = (live, cpu.so_far()) {
            live.set_cpu(so_far);
        }
        // In-flight operations get the grace, then are cut short.
        let deadline = stopped_at.unwrap_or(clock.end).min(clock.end) + GRACE;
        if now >= deadline && !hard_stop.is_set() {
            hard_stop.set();
        }
        hooks.tick(
            fanout,
            now.saturating_duration_since(clock.measure_start),
            first_lock.at(),
            target,
        )?;
        let measured = (now >= clock.measure_start)
            .then(|| ((now - clock.measure_start).min(cfg.duration), cfg.duration));
        progress.tick(now, ((now - epoch).min(cfg.warmup), cfg.warmup), measured);
        if handles.iter().all(|w| w.is_finished()) {
            break;
        }
    }
    progress.finish();

    let mut windows = Vec::new();
    for task in handles {
        let rec = task
            .await
            .map_err(|e| LoadgenError::Failed(format!("a load worker failed: {e}")))?;
        stats.add(&rec.stats);
        windows.extend(rec.windows);
    }
    while let Some((second, interval)) = rx.recv().await {
        stats.add_intervals([(second, to_live(live, interval))]);
    }
    hooks.mode_done(fanout, target)?;
    hooks.windows(fanout, &windows);
    stats.generator.cpu = cpu.used();
    stats.counts.windows_checked = windows.len() as u64;
    stats.counts.violations = count_violations(&mut windows);
    if let Some(live) = live {
        live.set_violations(stats.counts.violations);
    }
    let measured_end = stopped_at.map_or(clock.end, |at| at.clamp(clock.measure_start, clock.end));
    stats.duration = measured_end - clock.measure_start;
    stats.measured_from_unix_ms = unix_ms(clock.measure_start);
    if let Some(slots) = &slots {
        count_slots(&mut stats, slots, measured_end);
    }
    stats.add_intervals(stalls.into_iter().map(|(index, late)| {
        let interval = Interval {
            index,
            generator_stall_ms: late.as_millis() as u64,
            ..Interval::default()
        };
        (index, interval)
    }));
    // Intervals past the measured window only hold operations that were in flight at its end.
    let n_intervals = (stats.duration.as_secs_f64() / cfg.interval.as_secs_f64()).ceil() as usize;
    if stats.intervals.len() > n_intervals {
        let tail: Vec<_> = stats.intervals.drain(n_intervals.max(1)..).collect();
        if let Some(last) = stats.intervals.last_mut() {
            tail.iter().for_each(|t| last.add(t));
        }
    }
    Ok(stats)
}

/// Woken at `woke` for `wake`: a wake-up 10 ms late or more (timer slack stays below) marks
/// every measured interval from `wake` to `woke` with that lateness (the longest per interval
/// is kept).
fn note_stall(
    stalls: &mut Vec<(usize, Duration)>,
    clock: &Clock,
    interval: Duration,
    wake: Instant,
    woke: Instant,
) {
    let late = woke.saturating_duration_since(wake);
    if late < Duration::from_millis(10) || woke <= clock.measure_start || wake >= clock.end {
        return;
    }
    let index = |t: Instant| {
        let into = t.clamp(clock.measure_start, clock.end) - clock.measure_start;
        (into.as_nanos() / interval.as_nanos().max(1)) as usize
    };
    for i in index(wake)..=index(woke.min(clock.end)) {
        match stalls.iter_mut().find(|(at, _)| *at == i) {
            Some((_, longest)) => *longest = (*longest).max(late),
            None => stalls.push((i, late)),
        }
    }
}

/// Hands a task's finished interval to the live figures, and returns it as the run's series
/// keeps it: without the split of its acquire histogram by outcome, which only the live
/// figures read (result files hold the sum).
fn to_live(live: Option<&LiveFigures>, mut interval: Interval) -> Interval {
    if let Some(live) = live {
        live.add(&interval);
    }
    interval.acquire_by_outcome.clear();
    interval
}

/// Open loop: the slots the measured window scheduled (up to its end, or the stop), those
/// never started, and the warm-up slots skipped when it began.
fn count_slots(stats: &mut ModeStats, slots: &Slots, measured_end: Instant) {
    let c = &mut stats.counts;
    let scheduled = slots
        .before(measured_end)
        .saturating_sub(slots.first_measured);
    let started = c.acquire_calls + c.cancelled_calls;
    c.scheduled_slots = scheduled;
    c.dropped_slots = scheduled.saturating_sub(started);
    if stats.duration > Duration::ZERO {
        c.warmup_slots_skipped = slots
            .first_measured
            .saturating_sub(slots.warmup_started.load(Ordering::Relaxed));
    }
}
