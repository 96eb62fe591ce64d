//! The generator's judgement of itself: did the open-loop schedule run as asked, and were the
//! figures limited by this machine (or by too few clients) rather than by the masters?

pub use crate::model::mode::Judgement;
use crate::model::mode::ModeStats;

/// Share of the machine's cores above which the generator's CPU counts as saturated.
pub const CPU_SATURATED: f64 = 0.8;
/// Share of its ready time the generator waited for a core from which the machine counts as
/// busy: its figures then move with the machine's other work, which the run's intervals do
/// not see coming and going between runs. Measured on a quiet 2-core machine, a debug build
/// with 3 local masters waits about a third of its ready time for its own threads and masters
/// (0.31–0.34, 2 to 16 clients); with four busy loops beside it, 0.58–0.71.
pub const CPU_CONTENDED: f64 = 0.5;

/// The share of its ready time the generator of `m` waited for a core, when it is above
/// [`CPU_CONTENDED`].
pub fn contended(m: &ModeStats) -> Option<f64> {
    let share = m.generator.cpu.wait_share();
    share.filter(|&share| share >= CPU_CONTENDED)
}

/// The generator's share of the machine's cores below which its wait share is not judged: a
/// nearly idle generator's few wake-ups make the share of two tiny numbers (a 3/s step that
/// used 1 % of the cores read 51 % beside another test suite).
pub const JUDGED_FROM_CORE_SHARE: f64 = 0.05;

/// Why this machine, not the masters, decided a capacity step (`None`: it did not): the
/// generator, using at least [`JUDGED_FROM_CORE_SHARE`] of the cores, waited for a core at
/// least [`CPU_CONTENDED`] of its ready time. That wait is the machine's other work, which
/// comes and goes: a step that passed in a calm moment of a busy machine says nothing about
/// the next run at that rate, so such a step never counts as meeting the objective.
pub fn machine_bound(m: &ModeStats) -> Option<String> {
    if m.generator.cpu.core_share() < JUDGED_FROM_CORE_SHARE {
        return None;
    }
    let share = contended(m)?;
    Some(format!(
        "the generator waited for a core {:.0} % of its ready time (a busy machine from {:.0} % on: what else runs on it — local masters included — moves the figures)",
        100.0 * share,
        100.0 * CPU_CONTENDED
    ))
}

/// Dropped slots above this share of the scheduled ones: the target rate was missed; late
/// starts above it are reported.
pub const MISSED_SHARE: f64 = 0.01;

/// Clients an open-loop schedule at `rate_per_s` keeps busy (Little's law): the rate times
/// the mean time a client spends on one cycle once started (acquire − start lag, hold,
/// release), µs.
pub fn clients_needed(m: &ModeStats, rate_per_s: f64, hold_mean_us: f64) -> f64 {
    let service_us = (m.latency.acquire.mean() - m.latency.start_lag.mean()).max(0.0)
        + hold_mean_us
        + m.latency.release.mean();
    rate_per_s * service_us / 1e6
}

/// Judges `m`; `rate_per_s` is the open-loop target (`None`: closed loop) run by `clients`;
/// `hold_mean_us` the mean hold asked for.
pub fn judge(m: &ModeStats, rate_per_s: Option<f64>, clients: u32, hold_mean_us: f64) -> Judgement {
    let c = &m.counts;
    let share = m.generator.cpu.core_share();
    let cpu_saturated = share >= CPU_SATURATED;
    let cpu_words = format!(
        "the generator used {:.0}% of {} core(s)",
        100.0 * share,
        m.generator.cpu.cores
    );
    let mut reasons = Vec::new();
    let mut bound = false;
    let mut missed = false;
    match rate_per_s {
        Some(rate) if c.scheduled_slots > 0 => {
            let share = |n: u64| n as f64 > MISSED_SHARE * c.scheduled_slots as f64;
            missed = share(c.dropped_slots);
            if missed {
                reasons.push(format!(
                    "target rate missed: {rate} acquires/s asked, {:.0}/s started ({} of {} slots never started)",
                    m.started_per_s(),
                    c.dropped_slots,
                    c.scheduled_slots
                ));
            }
            if share(c.late_starts) {
                reasons.push(format!(
                    "{} of {} slots started more than 1 ms late ({} with no client free); latency counts from the intended start, so it includes the delay",
                    c.late_starts, c.scheduled_slots, c.late_no_free_client
                ));
            }
            let behind = c.late_no_free_client + c.dropped_slots;
            let needed = clients_needed(m, rate, hold_mean_us);
            if (missed || share(c.late_starts)) && cpu_saturated {
                bound = true;
                reasons.push(format!("generator-bound: {cpu_words}"));
            } else if share(behind) && needed > f64::from(clients) {
                bound = true;
                reasons.push(format!(
                    "generator-bound: all {clients} clients were busy when slots came due, and the rate needs about {needed:.0} (rate × time per cycle); raise --clients"
                ));
            } else if share(behind) {
                reasons.push(format!(
                    "all {clients} clients were busy when slots came due although about {needed:.0} would do at the measured cycle time: the masters (or this machine) did not keep up with the rate"
                ));
            }
            let late_with_free_client = c.late_starts - c.late_no_free_client;
            if share(late_with_free_client) {
                bound = true;
                reasons.push(format!(
                    "generator-bound: {late_with_free_client} slots started more than 1 ms late although a client was free ({cpu_words}; start lag p99 of those a client waited for: {:.3} ms)",
                    m.latency.pacing_lag.quantile(0.99) as f64 / 1000.0
                ));
            }
        }
        Some(_) => {}
        None => {
            if cpu_saturated {
                bound = true;
                reasons.push(format!("generator-bound: {cpu_words}"));
            }
        }
    }
    if bound {
        reasons.push("these figures measure this machine, not the masters".into());
    }
    Judgement {
        target_missed: missed,
        generator_bound: bound,
        reasons,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::mode::GeneratorCpu;
    use redlock_core::FanOut;

    fn open(scheduled: u64, late: u64, no_client: u64, dropped: u64, share: f64) -> ModeStats {
        let mut m = ModeStats::new(FanOut::Concurrent, 3, std::time::Duration::from_secs(1));
        m.duration = std::time::Duration::from_secs(1);
        m.counts.scheduled_slots = scheduled;
        m.counts.acquire_calls = scheduled - dropped;
        m.counts.late_starts = late;
        m.counts.late_no_free_client = no_client;
        m.counts.dropped_slots = dropped;
        // Each cycle takes 1 ms: 10000/s needs about 10 clients.
        m.latency.acquire.record(1000);
        m.generator.cpu = GeneratorCpu {
            user_s: share * 2.0,
            sys_s: 0.0,
            core_s: 2.0,
            cores: 2,
            wait_s: None,
        };
        m
    }

    #[test]
    fn a_schedule_run_on_time_is_neither_missed_nor_bound() {
        let j = judge(&open(10_000, 50, 0, 0, 0.3), Some(10_000.0), 64, 0.0);
        assert!(!j.target_missed && !j.generator_bound, "{j:?}");
        assert!(j.reasons.is_empty());
    }

    #[test]
    fn too_few_clients_or_a_saturated_cpu_make_it_generator_bound() {
        let j = judge(
            &open(10_000, 6_000, 6_000, 3_000, 0.3),
            Some(10_000.0),
            1,
            0.0,
        );
        assert!(j.target_missed && j.generator_bound, "{j:?}");
        assert!(j.reasons.iter().any(|r| r.contains("raise --clients")));
        assert!(j.reasons.iter().any(|r| r.contains("not the masters")));
        let j = judge(
            &open(10_000, 6_000, 100, 3_000, 0.95),
            Some(10_000.0),
            64,
            0.0,
        );
        assert!(j.generator_bound && j.reasons.iter().any(|r| r.contains("95% of 2")));
        // Enough clients for the cycle time, all busy anyway: the masters did not keep up.
        let j = judge(
            &open(10_000, 6_000, 6_000, 3_000, 0.3),
            Some(10_000.0),
            64,
            0.0,
        );
        assert!(j.target_missed && !j.generator_bound, "{j:?}");
        assert!(j.reasons.iter().any(|r| r.contains("did not keep up")));
        // Late with free clients: the pacing itself could not keep up.
        let j = judge(&open(10_000, 500, 0, 0, 0.2), Some(10_000.0), 64, 0.0);
        assert!(j.generator_bound && j.reasons.iter().any(|r| r.contains("client was free")));
    }

    #[test]
    fn closed_loop_is_bound_only_by_a_saturated_cpu() {
        let mut m = open(0, 0, 0, 0, 0.5);
        assert!(!judge(&m, None, 16, 0.0).generator_bound);
        m.generator.cpu.user_s = 1.9;
        assert!(judge(&m, None, 16, 0.0).generator_bound);
    }
}
