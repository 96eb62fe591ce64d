//! Release and extend without Lua against the scripts: the masters' CPU per cycle and the
//! cycles/s, on the same 5 local Valkey masters in one run (a client that uses `DELIFEQ` /
//! `SET … IFEQ` and one forced onto `EVALSHA` with `native_commands(false)`, taking turns),
//! and on 5 local Redis 7 masters (scripts: it has no such command) under the same workload.
//!
//! Workloads (concurrent fan-out): W1, one task, serial acquire + release of one key; W2, 16
//! tasks on distinct keys, acquire + release; W2x, the same with one extend per cycle. The
//! masters' CPU is their processes' on-CPU time (every thread, `/proc/PID/task/*/schedstat`)
//! and the usec their `INFO commandstats` counted, both summed over the 5 masters and divided
//! by the cycles of the turn. Prints each turn, then the medians and the ratios.
//!
//! `cargo run --release -p redlock-bench --bin lua-free-cost [-- CYCLES_PER_TASK TURNS]`
//! (defaults 400 and 3; about a minute). Needs `make deps-valkey`.

use std::time::{Duration, Instant};

use redlock_bench::peers::masters::Masters;
use redlock_core::{FanOut, Redlock};
use redlock_local::{LocalMasters, ServerKind};

const TTL: Duration = Duration::from_secs(10);
const W2_TASKS: usize = 16;

#[derive(Clone, Copy, PartialEq)]
enum Workload {
    W1,
    W2,
    W2x,
}

impl Workload {
    fn name(self) -> &'static str {
        match self {
            Workload::W1 => "W1",
            Workload::W2 => "W2",
            Workload::W2x => "W2x",
        }
    }
}

/// One task's cycles on its own key.
async fn cycles(redlock: Redlock, key: String, n: usize, extend: bool) -> Result<(), String> {
    for _ in 0..n {
        let mut lock = redlock
            .acquire(&key, TTL)
            .await
            .map_err(|e| e.to_string())?;
        if extend {
            redlock
                .extend(&mut lock, TTL)
                .await
                .map_err(|e| e.to_string())?;
        }
        redlock.release(&lock).await.map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Sum over every master of the usec `INFO commandstats` counted.
fn command_usec(masters: &LocalMasters) -> u64 {
    (0..masters.len())
        .filter_map(|i| masters.command(i, &["INFO", "commandstats"]).ok())
        .map(|reply| {
            let text = reply.as_text().unwrap_or_default().to_string();
            text.lines()
                .filter_map(|line| line.split(",usec=").nth(1))
                .filter_map(|rest| rest.split(',').next()?.parse::<u64>().ok())
                .sum::<u64>()
        })
        .sum()
}

struct Turn {
    cycles_per_s: f64,
    /// On-CPU µs of the masters per cycle.
    cpu_us: f64,
    /// Command-execution µs of the masters per cycle (`INFO commandstats`).
    command_us: f64,
}

async fn turn(
    redlock: &Redlock,
    masters: &Masters<'_>,
    local: &LocalMasters,
    workload: Workload,
    per_task: usize,
    tag: &str,
) -> Result<Turn, String> {
    let tasks = if workload == Workload::W1 {
        1
    } else {
        W2_TASKS
    };
    let cpu_before = masters.cpu_used().unwrap_or_default();
    let usec_before = command_usec(local);
    let started = Instant::now();
    let handles: Vec<_> = (0..tasks)
        .map(|t| {
            let key = format!("lua-free:{tag}:{}:{t}", workload.name());
            tokio::spawn(cycles(
                redlock.clone(),
                key,
                per_task,
                workload == Workload::W2x,
            ))
        })
        .collect();
    for handle in handles {
        handle.await.map_err(|e| e.to_string())??;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let total = (tasks * per_task) as f64;
    let cpu = masters.cpu_used().unwrap_or_default() - cpu_before;
    // INFO's own cost is in the figure too: the same for every path.
    let usec = command_usec(local) - usec_before;
    Ok(Turn {
        cycles_per_s: total / elapsed,
        cpu_us: cpu.as_secs_f64() * 1e6 / total,
        command_us: usec as f64 / total,
    })
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

async fn client(urls: Vec<String>, native: bool) -> Result<Redlock, redlock_core::Error> {
    let redlock = Redlock::builder(urls)
        .fanout(FanOut::Concurrent)
        // A shared, busy machine: a slow master must not end the measurement.
        .instance_timeout(Duration::from_millis(500))
        .native_commands(native)
        .build()?;
    redlock.wait_connected(Duration::from_secs(5)).await;
    Ok(redlock)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let per_task: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(400);
    let turns: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(3);
    let valkey = Masters::Local(Box::new(LocalMasters::of(ServerKind::Valkey).start(5)?));
    let redis = Masters::Local(Box::new(LocalMasters::of(ServerKind::Redis).start(5)?));
    let (valkey_local, redis_local) = (
        valkey.local().ok_or("local masters")?,
        redis.local().ok_or("local masters")?,
    );
    let native = client(valkey.urls(), true).await?;
    let scripted = client(valkey.urls(), false).await?;
    let redis_client = client(redis.urls(), true).await?;
    for (name, c) in [
        ("valkey lua-free", &native),
        ("valkey evalsha", &scripted),
        ("redis", &redis_client),
    ] {
        let servers: Vec<String> = c
            .master_servers()
            .iter()
            .map(|s| {
                s.as_ref()
                    .map_or("not connected".into(), ToString::to_string)
            })
            .collect();
        println!("{name:>16}: {}", servers[0]);
    }
    println!("{per_task} cycles per task, {turns} turns, concurrent fan-out, 5 masters each");
    for workload in [Workload::W1, Workload::W2, Workload::W2x] {
        let per_task = if workload == Workload::W1 {
            per_task * 4
        } else {
            per_task
        };
        let mut results: [Vec<Turn>; 3] = Default::default();
        for n in 1..=turns {
            let paths = [
                (&native, &valkey, valkey_local, "valkey lua-free"),
                (&scripted, &valkey, valkey_local, "valkey evalsha"),
                (&redis_client, &redis, redis_local, "redis evalsha"),
            ];
            for (i, (c, m, l, name)) in paths.into_iter().enumerate() {
                let t = turn(c, m, l, workload, per_task, &format!("{i}:{n}")).await?;
                println!(
                    "{:>3} turn {n} {name:>16}: {:>8.0} cycles/s, masters {:>6.1} µs CPU/cycle, {:>6.1} µs in commands/cycle",
                    workload.name(),
                    t.cycles_per_s,
                    t.cpu_us,
                    t.command_us
                );
                results[i].push(t);
            }
        }
        let med = |i: usize, f: fn(&Turn) -> f64| median(results[i].iter().map(f).collect());
        let names = ["valkey lua-free", "valkey evalsha", "redis evalsha"];
        for (i, name) in names.iter().enumerate() {
            println!(
                "{:>3} median {name:>16}: {:>8.0} cycles/s, masters {:>6.1} µs CPU/cycle, {:>6.1} µs in commands/cycle",
                workload.name(),
                med(i, |t| t.cycles_per_s),
                med(i, |t| t.cpu_us),
                med(i, |t| t.command_us)
            );
        }
        println!(
            "{:>3} lua-free / evalsha on valkey: cycles/s {:.2}x, masters CPU/cycle {:.2}x, command µs/cycle {:.2}x; valkey evalsha / redis: masters CPU/cycle {:.2}x",
            workload.name(),
            med(0, |t| t.cycles_per_s) / med(1, |t| t.cycles_per_s),
            med(0, |t| t.cpu_us) / med(1, |t| t.cpu_us),
            med(0, |t| t.command_us) / med(1, |t| t.command_us),
            med(1, |t| t.cpu_us) / med(2, |t| t.cpu_us),
        );
    }
    Ok(())
}
