//! The three workloads of `make bench-peers`, run the same way by every Rust driver.
//!
//! A driver is one process measuring one library on one workload: it parses [`Args`] from its
//! command line, builds its client, then hands it to [`run_async`] or [`run_blocking`], which
//! warm up with one cycle, run the workload, and print one JSON line on stdout (the format
//! every driver shares, the C and Python ones included; see docs/src/benchmarks.md):
//!
//! - W1: one task, `cycles` serial acquire + release cycles on one key.
//! - W2: `tasks` tasks sharing the client, `cycles` cycles each on a key of its own.
//! - W3: `tasks` tasks on one key until `seconds` have passed; every acquire retries up to
//!   [`W3_RETRIES`] times with a delay drawn from [`W3_DELAY_MIN`, `W3_DELAY_MAX`].
//!
//! The CPU figure is the whole process's user + sys time ([`redlock_process_cpu`], every
//! thread) over the measured window only: start-up, connecting and the warm-up cycle are left
//! out, in every language alike.

use std::future::Future;
use std::sync::{Arc, Barrier, OnceLock};
use std::time::{Duration, Instant};

pub mod cli;

pub use redlock_process_cpu::{process_cpu, CpuTime};

pub use cli::{Args, Workload};

/// W3: retries after the first attempt.
pub const W3_RETRIES: u32 = 100;
/// W3: shortest delay between two attempts.
pub const W3_DELAY_MIN: Duration = Duration::from_millis(10);
/// W3: longest delay between two attempts.
pub const W3_DELAY_MAX: Duration = Duration::from_millis(20);

/// The key of task `task` in `workload` (W1 and W3 share one key between all tasks).
pub fn key(workload: Workload, task: usize) -> String {
    match workload {
        Workload::W1 => "peers:w1".to_string(),
        Workload::W2 => format!("peers:w2:{task}"),
        Workload::W3 => "peers:w3".to_string(),
    }
}

/// A W3 delay, uniform in [`W3_DELAY_MIN`, `W3_DELAY_MAX`].
pub fn w3_delay() -> Duration {
    use rand::Rng;
    rand::rng().random_range(W3_DELAY_MIN..=W3_DELAY_MAX)
}

/// For a library whose own retry cannot express W3's: one attempt, then up to
/// [`W3_RETRIES`] more after a [`w3_delay`] each.
pub async fn retry_async<T, F, Fut>(mut attempt: F) -> Result<T, String>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let mut result = attempt().await;
    for _ in 0..W3_RETRIES {
        if result.is_ok() {
            break;
        }
        tokio::time::sleep(w3_delay()).await;
        result = attempt().await;
    }
    result
}

/// The blocking twin of [`retry_async`].
pub fn retry_blocking<T>(mut attempt: impl FnMut() -> Result<T, String>) -> Result<T, String> {
    let mut result = attempt();
    for _ in 0..W3_RETRIES {
        if result.is_ok() {
            break;
        }
        std::thread::sleep(w3_delay());
        result = attempt();
    }
    result
}

/// A client driven from tokio tasks. Errors are the library's messages.
pub trait AsyncClient: Send + Sync + 'static {
    type Guard: Send + 'static;
    fn acquire(&self, key: &str) -> impl Future<Output = Result<Self::Guard, String>> + Send;
    fn release(&self, guard: Self::Guard) -> impl Future<Output = Result<(), String>> + Send;
}

/// A client driven from OS threads.
pub trait BlockingClient: Send + Sync + 'static {
    type Guard;
    fn acquire(&self, key: &str) -> Result<Self::Guard, String>;
    fn release(&self, guard: Self::Guard) -> Result<(), String>;
}

/// What one task measured.
#[derive(Debug, Default)]
struct Samples {
    acquire_ns: Vec<u64>,
    release_ns: Vec<u64>,
    acquire_failed: u64,
    release_failed: u64,
    errors: Vec<String>,
}

impl Samples {
    fn error(&mut self, message: String) {
        // A few distinct messages are enough to say what went wrong.
        if self.errors.len() < 5 && !self.errors.contains(&message) {
            self.errors.push(message);
        }
    }

    fn acquire_lost(&mut self, message: String) {
        self.acquire_failed += 1;
        self.error(message);
    }

    /// Records the acquire begun at `began` as done now; returns now.
    fn acquired(&mut self, began: Instant) -> Instant {
        let acquired = Instant::now();
        self.acquire_ns.push(nanos(acquired - began));
        acquired
    }

    /// Records the release that just returned `result`, timed from `acquired`.
    fn released(&mut self, acquired: Instant, result: Result<(), String>) {
        self.release_ns.push(nanos(acquired.elapsed()));
        if let Err(e) = result {
            self.release_failed += 1;
            self.error(e);
        }
    }

    fn merge(mut self, other: Samples) -> Samples {
        self.acquire_ns.extend(other.acquire_ns);
        self.release_ns.extend(other.release_ns);
        self.acquire_failed += other.acquire_failed;
        self.release_failed += other.release_failed;
        for e in other.errors {
            self.error(e);
        }
        self
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// When one task stops: after `cycles` cycles (W1, W2) or at the deadline (W3).
#[derive(Debug, Clone, Copy)]
enum Stop {
    Cycles(usize),
    Deadline(Instant),
}

impl Stop {
    fn more(self, done: usize) -> bool {
        match self {
            Stop::Cycles(n) => done < n,
            Stop::Deadline(at) => Instant::now() < at,
        }
    }
}

fn stop(args: &Args, start: Instant) -> Stop {
    match args.workload {
        Workload::W1 | Workload::W2 => Stop::Cycles(args.cycles),
        Workload::W3 => Stop::Deadline(start + Duration::from_secs_f64(args.seconds)),
    }
}

/// One task's cycles on `key` until `until`, awaited wherever the caller awaits it.
async fn task_cycles<C: AsyncClient>(client: &C, key: String, until: Stop) -> Samples {
    let mut samples = Samples::default();
    let mut done = 0;
    while until.more(done) {
        done += 1;
        let began = Instant::now();
        let guard = match client.acquire(&key).await {
            Ok(guard) => guard,
            Err(e) => {
                samples.acquire_lost(e);
                continue;
            }
        };
        let acquired = samples.acquired(began);
        samples.released(acquired, client.release(guard).await);
    }
    samples
}

/// The warm-up cycle every driver makes before its measured window.
fn warm_up_async<C: AsyncClient>(rt: &tokio::runtime::Runtime, args: &Args, client: &C) {
    let warm_up = rt.block_on(async {
        let guard = client.acquire("peers:warm-up").await?;
        client.release(guard).await
    });
    if let Err(e) = warm_up {
        fail(args, &format!("warm-up cycle failed: {e}"));
    }
}

/// Runs the workload of `args` on `client` from tokio tasks (the caller's multi-threaded
/// runtime) and prints the result line.
pub fn run_async<C: AsyncClient>(rt: &tokio::runtime::Runtime, args: &Args, client: C) {
    let client = Arc::new(client);
    warm_up_async(rt, args, client.as_ref());
    let tasks = args.task_count();
    let cpu_before = process_cpu();
    let start = Instant::now();
    let until = stop(args, start);
    let samples = rt.block_on(async {
        let handles: Vec<_> = (0..tasks)
            .map(|task| {
                let client = Arc::clone(&client);
                let key = key(args.workload, task);
                tokio::spawn(async move { task_cycles(client.as_ref(), key, until).await })
            })
            .collect();
        let mut all = Samples::default();
        for handle in handles {
            match handle.await {
                Ok(samples) => all = all.merge(samples),
                Err(e) => all.error(format!("task failed: {e}")),
            }
        }
        all
    });
    print_result(args, start.elapsed(), cpu_before, samples);
}

/// Runs the workload of `args` on `client` in the runtime's main future, as a
/// `#[tokio::main]` program awaits a lock where it stands: W1's cycles directly, W2's and
/// W3's tasks as futures joined in that one future (nothing spawned), so every call starts
/// and ends on the caller's thread.
pub fn run_in_main<C: AsyncClient>(rt: &tokio::runtime::Runtime, args: &Args, client: C) {
    warm_up_async(rt, args, &client);
    let tasks = args.task_count();
    let cpu_before = process_cpu();
    let start = Instant::now();
    let until = stop(args, start);
    let samples = rt.block_on(async {
        let futures = (0..tasks)
            .map(|task| Box::pin(task_cycles(&client, key(args.workload, task), until)))
            .collect();
        join_all(futures)
            .await
            .into_iter()
            .fold(Samples::default(), Samples::merge)
    });
    print_result(args, start.elapsed(), cpu_before, samples);
}

/// Awaits every future in the one task that awaits this (none is spawned): on each wake-up of
/// that task every unfinished one is polled again (16 at most here); their outputs in order.
async fn join_all<F: Future + Unpin>(mut futures: Vec<F>) -> Vec<F::Output> {
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match std::pin::Pin::new(&mut *future).poll(cx) {
                    std::task::Poll::Ready(value) => *output = Some(value),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

/// Runs the workload of `args` on `client` from OS threads and prints the result line.
pub fn run_blocking<C: BlockingClient>(args: &Args, client: C) {
    let warm_up = client
        .acquire("peers:warm-up")
        .and_then(|guard| client.release(guard));
    if let Err(e) = warm_up {
        fail(args, &format!("warm-up cycle failed: {e}"));
    }
    let tasks = args.task_count();
    let barrier = Barrier::new(tasks + 1);
    // Set by the main thread just before it opens the barrier; read by every driver thread.
    let start_cell = OnceLock::new();
    let mut cpu_before = process_cpu();
    let samples = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..tasks)
            .map(|task| {
                let (client, barrier, start_cell) = (&client, &barrier, &start_cell);
                let key = key(args.workload, task);
                scope.spawn(move || {
                    barrier.wait();
                    let until = stop(args, *start_cell.get().expect("set before the barrier"));
                    let mut samples = Samples::default();
                    let mut done = 0;
                    while until.more(done) {
                        done += 1;
                        let began = Instant::now();
                        let guard = match client.acquire(&key) {
                            Ok(guard) => guard,
                            Err(e) => {
                                samples.acquire_lost(e);
                                continue;
                            }
                        };
                        let acquired = samples.acquired(began);
                        samples.released(acquired, client.release(guard));
                    }
                    samples
                })
            })
            .collect();
        cpu_before = process_cpu();
        start_cell.get_or_init(Instant::now);
        barrier.wait();
        let mut all = Samples::default();
        for handle in handles {
            match handle.join() {
                Ok(samples) => all = all.merge(samples),
                Err(_) => all.error("a driver thread panicked".to_string()),
            }
        }
        all
    });
    let start = *start_cell.get().expect("set before the barrier");
    print_result(args, start.elapsed(), cpu_before, samples);
}

/// A client that serves every task of a round at once: one write of all their commands per
/// master, then all the replies (the W2 `floor`).
pub trait RoundClient {
    /// Acquires every key of `keys`; one result per key.
    fn acquire_all(&self, keys: &[String]) -> Result<Vec<Result<(), String>>, String>;
    /// Releases every key of `keys`.
    fn release_all(&self, keys: &[String]) -> Result<(), String>;
}

/// Runs W2 as rounds: in each, every task's acquire goes out together, then every release;
/// each task's cycle is timed as its round's. Prints the result line.
pub fn run_rounds<C: RoundClient>(args: &Args, client: C) {
    let warm_up = ["peers:warm-up".to_string()];
    if let Err(e) = client
        .acquire_all(&warm_up)
        .and_then(|_| client.release_all(&warm_up))
    {
        fail(args, &format!("warm-up round failed: {e}"));
    }
    let keys: Vec<String> = (0..args.task_count())
        .map(|task| key(args.workload, task))
        .collect();
    let cpu_before = process_cpu();
    let start = Instant::now();
    let mut samples = Samples::default();
    for _ in 0..args.cycles {
        let began = Instant::now();
        let granted: Vec<String> = match client.acquire_all(&keys) {
            Ok(results) => keys
                .iter()
                .zip(results)
                .filter_map(|(key, result)| match result {
                    Ok(()) => Some(key.clone()),
                    Err(e) => {
                        samples.acquire_failed += 1;
                        samples.error(e);
                        None
                    }
                })
                .collect(),
            Err(e) => {
                samples.acquire_failed += keys.len() as u64;
                samples.error(e);
                continue;
            }
        };
        let acquired = Instant::now();
        let acquire_ns = nanos(acquired - began);
        samples
            .acquire_ns
            .extend(granted.iter().map(|_| acquire_ns));
        let released = client.release_all(&granted);
        let release_ns = nanos(acquired.elapsed());
        samples
            .release_ns
            .extend(granted.iter().map(|_| release_ns));
        if let Err(e) = released {
            samples.release_failed += granted.len() as u64;
            samples.error(e);
        }
    }
    print_result(args, start.elapsed(), cpu_before, samples);
}

fn print_result(args: &Args, wall: Duration, cpu_before: CpuTime, s: Samples) {
    let used = process_cpu() - cpu_before;
    let line = serde_json::json!({
        "driver": args.driver,
        "library": args.library,
        "workload": args.workload.name(),
        "tasks": args.task_count(),
        "ok": s.acquire_ns.len(),
        "acquire_failed": s.acquire_failed,
        "release_failed": s.release_failed,
        "errors": s.errors,
        "wall_s": wall.as_secs_f64(),
        "cpu_user_s": used.user.as_secs_f64(),
        "cpu_sys_s": used.system.as_secs_f64(),
        "acquire_ns": s.acquire_ns,
        "release_ns": s.release_ns,
    });
    println!("{line}");
}

/// Prints a skip line (the harness reports the workload as skipped for this driver) and exits.
pub fn skip(args: &Args, reason: &str) -> ! {
    finish_without_result(args, "skipped", reason, 0)
}

/// Prints a failure line (the harness reports the driver as failed with this reason) and exits.
pub fn fail(args: &Args, reason: &str) -> ! {
    finish_without_result(args, "failed", reason, 2)
}

/// The one line of a driver that measured nothing: `{"driver", "workload", <outcome>: reason}`.
fn finish_without_result(args: &Args, outcome: &str, reason: &str, code: i32) -> ! {
    let mut line = serde_json::json!({
        "driver": args.driver,
        "workload": args.workload.name(),
    });
    line[outcome] = serde_json::Value::from(reason);
    println!("{line}");
    std::process::exit(code);
}
