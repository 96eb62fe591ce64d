//! One mode of a run ([`run_mode`]): its workers are set up and spawned, a loop watches them
//! (progress, hooks, the stop and its grace, the generator's CPU and stalls), then their
//! figures are added up into the mode's [`ModeStats`].

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use redlock_core::{FanOut, Redlock};
use tokio::sync::mpsc::{self, UnboundedReceiver};
use tokio::task::JoinHandle;

use crate::engine::checker::count_violations;
use crate::engine::config::{Load, RunConfig};
use crate::engine::cpu::CpuWindow;
use crate::engine::faults::client::{CrashPlan, PausePlan};
use crate::engine::hooks::{FirstLock, RunHooks};
use crate::engine::locks::baseline::Baseline;
use crate::engine::locks::setup::{self, LockSetup};
use crate::engine::progress::Progress;
use crate::engine::recorder::{IntervalReport, Recorder};
use crate::engine::storage::{Protected, Storage, TokenOrder, STORAGE_WRITE_TIMEOUT_FLOOR};
use crate::engine::target::Target;
use crate::engine::worker::{run_task, Clock, Slots, WorkerSetup};
use crate::error::LoadgenError;
use crate::exporter::LiveFigures;
use crate::model::fencing::FencingStats;
use crate::model::interval::Interval;
use crate::model::lock::LockAlgorithm;
use crate::model::mode::{GeneratorCpu, ModeStats};
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
    let timeout = cfg.instance_timeout.max(STORAGE_WRITE_TIMEOUT_FLOOR);
    let storage = Storage::new(&storage.url, cfg.fencing, timeout).map_err(LoadgenError::Usage)?;
    Ok(Some(Arc::new(Protected {
        storage,
        order: TokenOrder::new(cfg.resources),
    })))
}

/// The empty figures of a mode, or of a task's share of it (fencing figures when it issues
/// tokens or writes to a storage).
fn mode_stats(cfg: &RunConfig, lock: LockAlgorithm, fanout: FanOut, n_masters: usize) -> ModeStats {
    let mut stats = ModeStats::new(fanout, n_masters, cfg.interval);
    stats.lock = lock;
    stats.fencing = cfg.writes_storage().then(|| FencingStats {
        fenced: cfg.fencing,
        ..FencingStats::default()
    });
    stats
}

/// One mode: its workers run the load while [`watch`] follows them; then their figures are
/// added up.
pub(crate) async fn run_mode(
    cfg: &Arc<RunConfig>,
    lock: LockAlgorithm,
    fanout: FanOut,
    target: &Target,
    hooks: &mut dyn RunHooks,
    stop: &Arc<Stop>,
) -> Result<ModeStats, LoadgenError> {
    target.reset()?;
    if let Some(history) = &cfg.history {
        history.begin_mode(lock.mode_label(fanout));
    }
    hooks.mode_start(fanout, target)?;
    let setup = worker_setup(cfg, lock, fanout, target, hooks, stop).await?;
    // Single-master locks are counted against their one master.
    let n_masters = if lock.votes() { target.urls.len() } else { 1 };
    let (handles, mut rx) = spawn_workers(&setup, lock, fanout, n_masters);
    announce(cfg, lock, fanout);
    let mut stats = mode_stats(cfg, lock, fanout, n_masters);
    let live = cfg.live.as_deref();
    if let Some(live) = live {
        live.mode_started(lock, fanout);
    }
    let watched = watch(&setup, fanout, target, hooks, &mut rx, &mut stats, &handles).await?;
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
    stats.counts.windows_checked = windows.len() as u64;
    stats.counts.violations = count_violations(&mut windows);
    if let Some(live) = live {
        live.set_violations(stats.counts.violations);
    }
    tally(&mut stats, &setup, watched);
    Ok(stats)
}

/// The mode's client, lock, keys, clock and open-loop schedule, as every worker shares them.
async fn worker_setup(
    cfg: &Arc<RunConfig>,
    lock: LockAlgorithm,
    fanout: FanOut,
    target: &Target,
    hooks: &mut dyn RunHooks,
    stop: &Arc<Stop>,
) -> Result<WorkerSetup, LoadgenError> {
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
    Ok(WorkerSetup {
        redlock,
        cfg: Arc::clone(cfg),
        keys,
        clock,
        slots,
        stop: Arc::clone(stop),
        hard_stop: Stop::new(),
        first_lock: Arc::new(FirstLock::new(clock.measure_start)),
        lock: lock_setup(cfg, baseline, &clock),
        protected: protected(cfg, target)?,
    })
}

/// The lock a worker takes when it is not Redlock, and the client-side faults on the clock.
fn lock_setup(cfg: &RunConfig, baseline: Option<Arc<Baseline>>, clock: &Clock) -> LockSetup {
    let faults = &cfg.worker_faults;
    LockSetup {
        baseline,
        crash: faults
            .crash_at
            .map(|at| Arc::new(CrashPlan::new(clock.measure_start + at, ()))),
        clock_offsets: faults.clock_offsets.clone(),
        pauses: faults
            .pauses
            .iter()
            .map(|&(client, length, at)| {
                let plan = PausePlan::new(clock.measure_start + at, length);
                (client, Arc::new(plan))
            })
            .collect(),
    }
}

/// The workers, spread over at most [`MAX_TASKS`] tasks, each with its own recorder sending
/// its finished intervals.
fn spawn_workers(
    setup: &WorkerSetup,
    lock: LockAlgorithm,
    fanout: FanOut,
    n_masters: usize,
) -> (Vec<JoinHandle<Recorder>>, UnboundedReceiver<IntervalReport>) {
    let cfg = &setup.cfg;
    let (tx, rx) = mpsc::unbounded_channel();
    let workers = cfg.load.workers();
    let tasks = workers.min(MAX_TASKS);
    let handles = (0..tasks)
        .map(|task| {
            let members: Vec<u32> = (task..workers).step_by(tasks as usize).collect();
            let rec = Recorder::new(
                mode_stats(cfg, lock, fanout, n_masters),
                members.len(),
                (setup.clock.epoch, setup.clock.measure_start),
                cfg.interval,
                tx.clone(),
            );
            tokio::spawn(run_task(setup.clone(), members, rec))
        })
        .collect();
    (handles, rx)
}

/// The line that says the load is running (unless quiet).
fn announce(cfg: &RunConfig, lock: LockAlgorithm, fanout: FanOut) {
    if cfg.quiet {
        return;
    }
    let label = cfg
        .progress_label
        .as_ref()
        .map_or(String::new(), |label| format!("{label}: "));
    let what = if lock.votes() {
        format!("{} fan-out", fanout.as_str())
    } else {
        lock.as_str().to_string()
    };
    eprintln!(
        "{label}{what}: load running ({:?} warm-up, then {:?} measured)",
        cfg.warmup, cfg.duration
    );
}

/// What [`watch`] saw: when a stop came, the generator's CPU over the measured window, and
/// the intervals in which it woke late.
struct Watched {
    stopped_at: Option<Instant>,
    cpu: GeneratorCpu,
    stalls: Vec<(usize, Duration)>,
}

/// Follows the workers until all have ended: collects their intervals, prints progress, calls
/// the hooks, samples the CPU at the window's edges, and after a stop (or the end) and its
/// grace cuts what is still in flight short.
async fn watch(
    setup: &WorkerSetup,
    fanout: FanOut,
    target: &Target,
    hooks: &mut dyn RunHooks,
    rx: &mut UnboundedReceiver<IntervalReport>,
    stats: &mut ModeStats,
    handles: &[JoinHandle<Recorder>],
) -> Result<Watched, LoadgenError> {
    let (cfg, clock) = (&setup.cfg, setup.clock);
    let live = cfg.live.as_deref();
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
        if stopped_at.is_none() && setup.stop.is_set() {
            stopped_at = Some(now);
        }
        let measuring_ended = now >= clock.end || stopped_at.is_some();
        cpu.observe(now >= clock.measure_start, measuring_ended);
        if let (Some(live), Some(so_far)) = (live, cpu.so_far()) {
            live.set_cpu(so_far);
        }
        // In-flight operations get the grace, then are cut short.
        let deadline = stopped_at.unwrap_or(clock.end).min(clock.end) + GRACE;
        if now >= deadline && !setup.hard_stop.is_set() {
            setup.hard_stop.set();
        }
        let since_start = now.saturating_duration_since(clock.measure_start);
        hooks.tick(fanout, since_start, setup.first_lock.at(), target)?;
        let measured = (now >= clock.measure_start)
            .then(|| ((now - clock.measure_start).min(cfg.duration), cfg.duration));
        progress.tick(
            now,
            ((now - clock.epoch).min(cfg.warmup), cfg.warmup),
            measured,
        );
        if handles.iter().all(|w| w.is_finished()) {
            // Open-loop workers end once the window's last slot is done, which a late tick
            // may see before the window's end: the work ended, so the CPU window ends here
            // (it was left unmeasured, its figures 0, on a loaded machine).
            cpu.observe(now >= clock.measure_start, true);
            break;
        }
    }
    progress.finish();
    Ok(Watched {
        stopped_at,
        cpu: cpu.used(),
        stalls,
    })
}

/// The mode's whole-window figures: CPU, measured duration, slots, stalls, and the intervals
/// past the window folded into its last.
fn tally(stats: &mut ModeStats, setup: &WorkerSetup, watched: Watched) {
    let (cfg, clock) = (&setup.cfg, setup.clock);
    stats.generator.cpu = watched.cpu;
    let measured_end = watched
        .stopped_at
        .map_or(clock.end, |at| at.clamp(clock.measure_start, clock.end));
    stats.duration = measured_end - clock.measure_start;
    stats.measured_from_unix_ms = unix_ms(clock.measure_start);
    if let Some(slots) = &setup.slots {
        count_slots(stats, slots, measured_end);
    }
    stats.add_intervals(watched.stalls.into_iter().map(|(index, late)| {
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
