//! Which results belong together: the same workload (fan-out, load kind and level, resources,
//! key distribution, hold, extends, TTL, retry and timeout settings, quorum, number of masters).
//! The generator's own settings (open-loop clients, seed, durations) may differ.

use crate::model::report::Report;

/// One workload field of a result, in words.
type Field = fn(&Report) -> String;

/// The workload fields in which `b` differs from `a`, each as `field: a vs b`.
pub fn differences(a: &Report, b: &Report) -> Vec<String> {
    let fields: [(&str, Field); 16] = [
        ("fanouts", |r| r.config.fanouts.join("+")),
        ("load", |r| r.config.load.clone()),
        ("clients", |r| r.config.clients.to_string()),
        ("rate_per_s", |r| opt(r.config.rate_per_s)),
        ("resources", |r| r.config.resources.to_string()),
        ("key_dist", |r| r.config.key_dist.clone()),
        ("hold_us", |r| {
            format!("{}..{}", r.config.hold_min_us, r.config.hold_max_us)
        }),
        ("extends_per_hold", |r| {
            r.config.extends_per_hold.to_string()
        }),
        ("ttl_ms", |r| r.config.ttl_ms.to_string()),
        ("retry_count", |r| r.config.retry_count.to_string()),
        ("retry_delay_ms", |r| r.config.retry_delay_ms.to_string()),
        ("instance_timeout_ms", |r| {
            r.config.instance_timeout_ms.to_string()
        }),
        ("quorum", |r| opt(r.config.quorum)),
        // The network distance played (`--rtt`) is part of what was measured.
        ("network", |r| {
            let network = r.network.as_ref();
            network.map_or("nothing added".into(), |n| n.profile.clone())
        }),
        ("interval_ms", |r| {
            opt(r.modes.first().map(|m| m.interval_ms))
        }),
        ("masters", |r| r.masters.len().to_string()),
    ];
    let closed = a.config.load == "closed" && b.config.load == "closed";
    fields
        .iter()
        .filter(|(field, _)| closed || *field != "clients")
        .filter_map(|(field, of)| {
            let (left, right) = (of(a), of(b));
            (left != right).then(|| format!("{field}: {left} vs {right}"))
        })
        .collect()
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "none".to_string(), |v| v.to_string())
}
