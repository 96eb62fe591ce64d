//! The `redlock-loadgen run` command that reproduces one capacity step: the same masters
//! (local ones started afresh), rate, clients, resources, fan-out, timing, client settings and
//! seed, so a planner can check an answer, or watch it with `--json` and `--plot`.

use crate::model::report::Report;

/// Defaults of `run` that the command leaves out.
const DEFAULT_SPAWN: usize = 5;

/// A duration in µs as the shortest flag value that says it exactly.
fn duration_us(us: u64) -> String {
    if us % 1_000_000 == 0 {
        format!("{}s", us / 1_000_000)
    } else if us % 1000 == 0 {
        format!("{}ms", us / 1000)
    } else {
        format!("{us}us")
    }
}

/// The `--server` value that starts the server a master reported (`valkey 9.1.2 (…)`,
/// `redis 8.6.3 (…)`, `redis 7.0.15 (…)`); `None` for one no name starts (a path given).
fn server_flag(server: &str) -> Option<&'static str> {
    let flags = [
        ("valkey ", "valkey"),
        ("redis 8.", "redis8"),
        ("redis ", "redis"),
    ];
    let flag = flags
        .into_iter()
        .find(|(prefix, _)| server.starts_with(prefix));
    flag.map(|(_, flag)| flag)
}

fn duration_ms(ms: f64) -> String {
    duration_us((ms * 1000.0).round() as u64)
}

/// The command for the step that ran `report` in `fanout` at `rate` (masters with any
/// password redacted: set REDLOCK_LOADGEN_MASTERS to pass real ones).
pub fn run_command(report: &Report, fanout: &str, rate: f64) -> String {
    let c = &report.config;
    let mut flags = vec!["redlock-loadgen run".to_string()];
    if report.local_masters {
        if report.masters.len() != DEFAULT_SPAWN {
            flags.push(format!("--spawn {}", report.masters.len()));
        }
        // The server the masters ran: without it the command starts $REDLOCK_SERVER's, or
        // Redis (a Valkey search would be confirmed against Redis).
        let server = report
            .masters
            .first()
            .and_then(|m| server_flag(&m.server()));
        flags.extend(server.map(|server| format!("--server {server}")));
        // The network distance the step played: without it the command measures loopback.
        if let Some(network) = &report.network {
            flags.push(format!("--rtt {}", network.profile));
        }
    } else {
        let urls: Vec<&str> = report.masters.iter().map(|m| m.url.as_str()).collect();
        flags.push(format!("--masters {}", urls.join(",")));
    }
    let lock = c.locks.first().map_or("redlock", String::as_str);
    flags.push(match lock {
        "redlock" => format!("--fanout {fanout}"),
        _ => format!("--lock {lock}"),
    });
    let (rate, clients, resources) = (c.rate_per_s.unwrap_or(rate), c.clients, c.resources);
    flags.push(format!(
        "--rate {rate} --clients {clients} --resources {resources}"
    ));
    if c.key_dist != "uniform" {
        flags.push(format!("--key-dist {}", c.key_dist));
    }
    let (min, max) = (duration_us(c.hold_min_us), duration_us(c.hold_max_us));
    if c.hold_max_us > 0 {
        flags.push(if min == max {
            format!("--hold {min}")
        } else {
            format!("--hold {min}..{max}")
        });
    }
    if c.extends_per_hold > 0 {
        flags.push(format!("--extend {}", c.extends_per_hold));
    }
    flags.push(format!("--ttl {}", duration_us(c.ttl_ms * 1000)));
    flags.push(format!(
        "--retry-count {} --retry-delay {} --instance-timeout {}",
        c.retry_count,
        duration_ms(c.retry_delay_ms),
        duration_ms(c.instance_timeout_ms)
    ));
    flags.extend(c.quorum.map(|q| format!("--quorum {q}")));
    if report.modes.first().is_some_and(|m| m.fencing.is_some()) {
        flags.push("--fencing".into());
    }
    // A step searched under a fault schedule is reproduced under it.
    flags.extend(c.faults.iter().map(|f| format!("--fault {f}")));
    // Capacity cuts short steps into shorter intervals (for their 95 % intervals).
    let interval = report.modes.first().filter(|m| m.interval_ms != 1000);
    flags.extend(interval.map(|m| format!("--interval {}", duration_us(m.interval_ms * 1000))));
    flags.push(format!(
        "--warmup {} --duration {} --seed {}",
        duration_ms(c.warmup_s * 1000.0),
        duration_ms(c.duration_s * 1000.0),
        c.seed
    ));
    flags.join(" ")
}

#[cfg(test)]
mod tests {
    use super::{duration_us, server_flag};

    #[test]
    fn the_server_the_masters_ran_is_named() {
        assert_eq!(
            server_flag("valkey 9.1.2 (release delifeq, extend set)"),
            Some("valkey")
        );
        assert_eq!(
            server_flag("redis 8.6.3 (release delex, extend set)"),
            Some("redis8")
        );
        assert_eq!(server_flag("redis 7.0.15 (release evalsha)"), Some("redis"));
        assert_eq!(server_flag("unknown"), None);
    }

    #[test]
    fn durations_are_written_in_the_largest_exact_unit() {
        assert_eq!(duration_us(3_000_000), "3s");
        assert_eq!(duration_us(200_000), "200ms");
        assert_eq!(duration_us(1_500), "1500us");
    }
}
