//! A fault schedule in words, as an answer names what it was measured under.

use super::master::{
    master_names, short_duration, signed_ms, FaultKind, FaultSpec, FaultTime, Masters,
};

impl FaultSpec {
    /// The fault in words, as an answer names what it was measured under: "m4 killed at 1s",
    /// "m0's wall clock jumped +5s at lock+1s (after the first lock)".
    pub fn words(&self) -> String {
        let who = match &self.masters {
            Masters::First(1) => "m0".to_string(),
            Masters::First(n) => format!("the first {n} masters"),
            Masters::List(list) => master_names(list, ", "),
        };
        let when = match self.until {
            Some(until) => format!("from {} to {until}", self.at),
            None if self.kind.needs_proxy() => format!("from {}", self.at),
            None => format!("at {}", self.at),
        };
        let what = match self.kind {
            FaultKind::Kill => format!("{who} killed"),
            FaultKind::Pause => format!("{who} paused"),
            FaultKind::Restart => format!("{who} restarted empty"),
            FaultKind::RestartDelayed => format!("{who} restarted empty after the TTL"),
            FaultKind::Latency(d) => format!("{who} {} slower", short_duration(d)),
            FaultKind::Blackhole => format!("{who} unreachable"),
            FaultKind::Expire => format!("the lock keys on {who} deleted"),
            FaultKind::Clock(ms) => format!("{who}'s wall clock jumped {}", signed_ms(ms)),
        };
        format!("{what} {when}")
    }
}

/// A schedule in words ("m4 killed at 1s and m0 paused from 2s to 3s"); "no faults" when empty.
pub fn schedule_words(specs: &[FaultSpec]) -> String {
    match specs {
        [] => "no faults".into(),
        _ => {
            let words: Vec<String> = specs.iter().map(FaultSpec::words).collect();
            let from_lock = |t: Option<FaultTime>| matches!(t, Some(FaultTime::FirstLock(_)));
            let anchor = match specs
                .iter()
                .any(|s| from_lock(Some(s.at)) || from_lock(s.until))
            {
                true => " (lock: when the first lock was granted)",
                false => "",
            };
            format!("{}{anchor}", words.join(" and "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schedule_reads_as_words() {
        let words = |spec: &str| FaultSpec::parse(spec).unwrap().words();
        assert_eq!(words("kill:m4@1s"), "m4 killed at 1s");
        assert_eq!(words("pause:m0,m1@1s-2s"), "m0, m1 paused from 1s to 2s");
        assert_eq!(
            words("restart:2@500ms"),
            "the first 2 masters restarted empty at 500ms"
        );
        assert_eq!(
            words("clock:m0:+5s@lock+1s"),
            "m0's wall clock jumped +5s at lock+1s"
        );
        assert_eq!(words("latency:m3:2ms@0s-1s"), "m3 2ms slower from 0s to 1s");
        let both = [
            FaultSpec::parse("kill:m4@1s").unwrap(),
            FaultSpec::parse("expire:m0@2s").unwrap(),
        ];
        assert_eq!(
            schedule_words(&both),
            "m4 killed at 1s and the lock keys on m0 deleted at 2s"
        );
        assert_eq!(schedule_words(&[]), "no faults");
        let control = [
            FaultSpec::parse("kill:m3,m4@0s-lock+500ms").unwrap(),
            FaultSpec::parse("clock:m0:+5s@lock+1s").unwrap(),
        ];
        assert_eq!(
            schedule_words(&control),
            "m3, m4 killed from 0s to lock+500ms and m0's wall clock jumped +5s at lock+1s (lock: when the first lock was granted)"
        );
    }
}
