//! Which results belong together: the same workload (fan-out, load kind and level, resources,
//! key distribution, hold, extends, TTL, retry and timeout settings, quorum, number of masters).
//! The generator's own settings (open-loop clients, seed, durations) may differ.

use crate::model::report::Report;

/// The workload fields in which `b` differs from `a`, each as `field: a vs b`.
pub fn differences(a: &Report, b: &Report) -> Vec<String> {
    let (x, y) = (&a.config, &b.config);
    let mut out = Vec::new();
    let mut check = |field: &str, left: String, right: String| {
        if left != right {
            out.push(format!("{field}: {left} vs {right}"));
        }
    };
    check("fanouts", x.fanouts.join("+"), y.fanouts.join("+"));
    check("load", x.load.clone(), y.load.clone());
    if x.load == "closed" && y.load == "closed" {
        check("clients", x.clients.to_string(), y.clients.to_string());
    }
    check("rate_per_s", opt(x.rate_per_s), opt(y.rate_per_s));
    check(
        "resources",
        x.resources.to_string(),
        y.resources.to_string(),
    );
    check("key_dist", x.key_dist.clone(), y.key_dist.clone());
    check(
        "hold_us",
        format!("{}..{}", x.hold_min_us, x.hold_max_us),
        format!("{}..{}", y.hold_min_us, y.hold_max_us),
    );
    check(
        "extends_per_hold",
        x.extends_per_hold.to_string(),
        y.extends_per_hold.to_string(),
    );
    check("ttl_ms", x.ttl_ms.to_string(), y.ttl_ms.to_string());
    check(
        "retry_count",
        x.retry_count.to_string(),
        y.retry_count.to_string(),
    );
    check(
        "retry_delay_ms",
        x.retry_delay_ms.to_string(),
        y.retry_delay_ms.to_string(),
    );
    check(
        "instance_timeout_ms",
        x.instance_timeout_ms.to_string(),
        y.instance_timeout_ms.to_string(),
    );
    check("quorum", opt(x.quorum), opt(y.quorum));
    // The network distance played (`--rtt`) is part of what was measured.
    let network = |r: &Report| {
        r.network
            .as_ref()
            .map_or("nothing added".into(), |n| n.profile.clone())
    };
    check("network", network(a), network(b));
    let interval_ms = |r: &Report| r.modes.first().map(|m| m.interval_ms);
    check("interval_ms", opt(interval_ms(a)), opt(interval_ms(b)));
    check(
        "masters",
        a.masters.len().to_string(),
        b.masters.len().to_string(),
    );
    out
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "none".to_string(), |v| v.to_string())
}
