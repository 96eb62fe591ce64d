//! Fault specs as written on the command line: `KIND:WHO[:ARG]@WHEN`.
//!
//! | spec | effect |
//! |------|--------|
//! | `kill:N@T` | SIGKILL the masters at T; they stay down until the mode ends (then start again, empty) |
//! | `kill:N@T1-T2` | SIGKILL at T1, start again (empty) at T2 |
//! | `pause:N@T1-T2` | SIGSTOP at T1, SIGCONT at T2 (`pause:N@T`: until the mode ends) |
//! | `restart:N@T` | kill and start again at once, empty (a restart without persistence) |
//! | `restart-delayed:N@T` | kill at T, start again empty once the longest TTL has passed |
//! | `latency:N:D@T1-T2` | through the proxy: add D to each reply from T1 to T2 (`@T`: until the end) |
//! | `blackhole:N@T1-T2` | through the proxy: swallow every byte, answer nothing (`@T`: until the end) |
//! | `expire:N@T` | delete the lock keys on those masters at T (what a clock jump there does) |
//! | `clock:N:+D@T` | jump the wall clock of those masters by D (`-D`: back) at T, for the rest of the mode (masters under libfaketime) |
//!
//! `WHO` is a count `N` — the first N masters in configured order (masters 0, 1, …) — or an
//! explicit list `mI,mJ` of master indices (e.g. `m3,m4`), to hit chosen masters such as the
//! ones a holder owns. Times count from the start of each fan-out mode's measured window (after
//! its warm-up) and are durations like `500ms`, `3s`, `1m`; or from the mode's first lock
//! granted: `lock` or `lock+500ms` (`kill:m3,m4@0s-lock+500ms` keeps m3 and m4 down until half
//! a second after a holder got its lock from the others), so a schedule that needs a holder in
//! place waits for one however slow the machine is.

use std::fmt;
use std::time::Duration;

use crate::model::values::parse_duration;

/// What a fault does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    Kill,
    Pause,
    Restart,
    RestartDelayed,
    /// Added latency per reply (through the proxy).
    Latency(Duration),
    Blackhole,
    Expire,
    /// A wall-clock jump of the masters, in ms (negative: back).
    Clock(i64),
}

impl FaultKind {
    /// The word used in specs.
    pub fn name(&self) -> &'static str {
        match self {
            FaultKind::Kill => "kill",
            FaultKind::Pause => "pause",
            FaultKind::Restart => "restart",
            FaultKind::RestartDelayed => "restart-delayed",
            FaultKind::Latency(_) => "latency",
            FaultKind::Blackhole => "blackhole",
            FaultKind::Expire => "expire",
            FaultKind::Clock(_) => "clock",
        }
    }

    /// True when the fault acts on the network path, so the client must go through proxies.
    pub fn needs_proxy(&self) -> bool {
        matches!(self, FaultKind::Latency(_) | FaultKind::Blackhole)
    }

    /// True when the fault happens at one instant (no `T1-T2` window).
    pub(crate) fn is_instant(&self) -> bool {
        matches!(
            self,
            FaultKind::Restart
                | FaultKind::RestartDelayed
                | FaultKind::Expire
                | FaultKind::Clock(_)
        )
    }
}

const KINDS: &str = "kill, pause, restart, restart-delayed, latency, blackhole, expire, clock";

/// Which masters a fault hits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Masters {
    /// The first N masters in configured order.
    First(usize),
    /// These master indices.
    List(Vec<usize>),
}

impl Masters {
    /// The indices among `n` masters, or why they do not exist.
    pub fn resolve(&self, n: usize) -> Result<Vec<usize>, String> {
        match self {
            Masters::First(count) if *count > n => Err(format!(
                "{count} masters asked for, but the run has only {n}"
            )),
            Masters::First(count) => Ok((0..*count).collect()),
            Masters::List(list) => match list.iter().find(|&&i| i >= n) {
                Some(i) => Err(format!(
                    "master m{i} does not exist (the run has masters m0..m{})",
                    n.saturating_sub(1)
                )),
                None => Ok(list.clone()),
            },
        }
    }
}

impl fmt::Display for Masters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Masters::First(n) => write!(f, "{n}"),
            Masters::List(list) => f.write_str(&master_names(list, ",")),
        }
    }
}

/// When a fault step happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultTime {
    /// This long after the start of the mode's measured window.
    Start(Duration),
    /// This long after the mode's first lock was granted (`lock+D`).
    FirstLock(Duration),
}

impl FaultTime {
    /// When it is due on the measured window's clock: `None` while it waits for a first lock
    /// that has not come (`first_lock`: when it came).
    pub fn due(self, first_lock: Option<Duration>) -> Option<Duration> {
        match self {
            FaultTime::Start(d) => Some(d),
            FaultTime::FirstLock(d) => first_lock.map(|at| at + d),
        }
    }

    /// The same anchor, `d` later.
    pub fn plus(self, d: Duration) -> FaultTime {
        match self {
            FaultTime::Start(t) => FaultTime::Start(t + d),
            FaultTime::FirstLock(t) => FaultTime::FirstLock(t + d),
        }
    }
}

impl fmt::Display for FaultTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaultTime::Start(d) => f.write_str(&short_duration(*d)),
            FaultTime::FirstLock(d) if d.is_zero() => f.write_str("lock"),
            FaultTime::FirstLock(d) => write!(f, "lock+{}", short_duration(*d)),
        }
    }
}

/// One fault of a schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultSpec {
    pub kind: FaultKind,
    pub masters: Masters,
    /// When it starts.
    pub at: FaultTime,
    /// When it is lifted (`T1-T2`); `None`: at the end of the mode (instant faults: never).
    pub until: Option<FaultTime>,
}

impl FaultSpec {
    /// True for a clock jump (its masters must run under libfaketime).
    pub fn jumps_clocks(&self) -> bool {
        matches!(self.kind, FaultKind::Clock(_))
    }

    /// Parses `KIND:WHO[:ARG]@WHEN`; the error names the part at fault.
    pub fn parse(text: &str) -> Result<FaultSpec, String> {
        let bad = |part: &str, why: String| format!("fault {text:?}: {part}: {why}");
        let (what, when) = text.trim().rsplit_once('@').ok_or_else(|| {
            bad(
                "no time",
                "write KIND:WHO@TIME, e.g. kill:2@3s or pause:1@2s-6s".into(),
            )
        })?;
        let mut parts = what.split(':');
        let kind_text = parts.next().unwrap_or_default();
        let who_text = parts.next().ok_or_else(|| {
            bad(
                &format!("kind {kind_text:?}"),
                "no masters given (write e.g. kill:2@3s, or kill:m3,m4@3s)".into(),
            )
        })?;
        let arg = parts.next();
        if let Some(extra) = parts.next() {
            return Err(bad(&format!("{extra:?}"), "one part too many".into()));
        }
        let kind = parse_kind(kind_text, arg, &bad)?;
        let masters =
            parse_masters(who_text).map_err(|e| bad(&format!("masters {who_text:?}"), e))?;
        let (at, until) = parse_when(when, &bad)?;
        if until.is_some() && kind.is_instant() {
            return Err(bad(
                &format!("window {when:?}"),
                format!(
                    "{} happens at one instant: write {}:{who_text}@T",
                    kind.name(),
                    kind.name()
                ),
            ));
        }
        Ok(FaultSpec {
            kind,
            masters,
            at,
            until,
        })
    }
}

/// How a spec's error is worded: the part at fault, and why (see [`FaultSpec::parse`]).
type Bad<'a> = dyn Fn(&str, String) -> String + 'a;

/// The `KIND[:ARG]` of a spec.
fn parse_kind(kind_text: &str, arg: Option<&str>, bad: &Bad<'_>) -> Result<FaultKind, String> {
    Ok(match (kind_text, arg) {
        ("latency", Some(d)) => {
            FaultKind::Latency(parse_duration(d).map_err(|e| bad(&format!("latency {d:?}"), e))?)
        }
        ("clock", Some(d)) => {
            FaultKind::Clock(parse_jump(d).map_err(|e| bad(&format!("clock jump {d:?}"), e))?)
        }
        (kind @ ("clock" | "latency"), None) => {
            let needs = match kind {
                "clock" => "the jump, e.g. clock:m2:+2s@1500ms (or -2s)",
                _ => "the delay, e.g. latency:2:50ms@1s-5s",
            };
            return Err(bad(kind, format!("needs {needs}")));
        }
        (_, Some(a)) if KINDS.split(", ").any(|k| k == kind_text) => {
            return Err(bad(
                &format!("{a:?}"),
                format!("{kind_text} takes no argument"),
            ));
        }
        ("kill", None) => FaultKind::Kill,
        ("pause", None) => FaultKind::Pause,
        ("restart", None) => FaultKind::Restart,
        ("restart-delayed", None) => FaultKind::RestartDelayed,
        ("blackhole", None) => FaultKind::Blackhole,
        ("expire", None) => FaultKind::Expire,
        (other, _) => {
            return Err(bad(
                &format!("kind {other:?}"),
                format!("unknown; expected one of {KINDS}"),
            ));
        }
    })
}

/// The `WHEN` of a spec: `T`, or a window `T1-T2` that ends after it starts, on the same clock
/// (a window from the first lock ends at a time from it too).
fn parse_when(when: &str, bad: &Bad<'_>) -> Result<(FaultTime, Option<FaultTime>), String> {
    let Some((from, to)) = when.split_once('-') else {
        let at = parse_time(when).map_err(|e| bad(&format!("time {when:?}"), e))?;
        return Ok((at, None));
    };
    let at = parse_time(from).map_err(|e| bad(&format!("start {from:?}"), e))?;
    let until = parse_time(to).map_err(|e| bad(&format!("end {to:?}"), e))?;
    let window = |why: &str| Err(bad(&format!("window {when:?}"), why.into()));
    match (at, until) {
        (FaultTime::Start(a), FaultTime::Start(b))
        | (FaultTime::FirstLock(a), FaultTime::FirstLock(b))
            if b <= a =>
        {
            window("ends before it starts (write START-END)")
        }
        (FaultTime::FirstLock(_), FaultTime::Start(_)) => {
            window("starts at the first lock, so it must end at a time from it too (lock+D)")
        }
        _ => Ok((at, Some(until))),
    }
}

/// `N` (a count above zero) or `mI,mJ,...` (distinct master indices).
fn parse_masters(text: &str) -> Result<Masters, String> {
    if text.starts_with('m') {
        let mut list = Vec::new();
        for item in text.split(',') {
            let index = item
                .strip_prefix('m')
                .and_then(|i| i.parse::<usize>().ok())
                .ok_or_else(|| format!("{item:?} is not a master index (write m0, m1, ...)"))?;
            if list.contains(&index) {
                return Err(format!("m{index} is listed twice"));
            }
            list.push(index);
        }
        return Ok(Masters::List(list));
    }
    match text.parse::<usize>() {
        Ok(0) => Err("must hit at least one master".into()),
        Ok(n) => Ok(Masters::First(n)),
        Err(_) => Err("expected a number of masters (2) or master indices (m3,m4)".into()),
    }
}

/// `+D` or `-D`: a clock jump in ms.
fn parse_jump(text: &str) -> Result<i64, String> {
    let (sign, rest) = match text.chars().next() {
        Some('+') => (1, &text[1..]),
        Some('-') => (-1, &text[1..]),
        _ => return Err("write the jump with its sign: +2s or -2s".into()),
    };
    let d = parse_duration(rest)?;
    if d.is_zero() || d.subsec_nanos() % 1_000_000 != 0 {
        return Err("must be a whole number of ms above zero".into());
    }
    i64::try_from(d.as_millis())
        .map(|ms| sign * ms)
        .map_err(|_| "too large".into())
}

/// `3s` (from the measured start), `lock` or `lock+500ms` (from the first lock granted).
fn parse_time(text: &str) -> Result<FaultTime, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("empty; write a duration such as 500ms or 3s, or lock+500ms".into());
    }
    match text.strip_prefix("lock") {
        Some("") => Ok(FaultTime::FirstLock(Duration::ZERO)),
        Some(rest) => match rest.strip_prefix('+') {
            Some(d) => parse_duration(d).map(FaultTime::FirstLock),
            None => Err("write lock+D, e.g. lock+500ms".into()),
        },
        None => parse_duration(text).map(FaultTime::Start),
    }
}

/// `m0, m3`: masters by index, joined by `sep`.
pub fn master_names(masters: &[usize], sep: &str) -> String {
    let names: Vec<String> = masters.iter().map(|i| format!("m{i}")).collect();
    names.join(sep)
}

/// A clock jump of `ms` as written: `+5s`, `-250ms`.
pub fn signed_ms(ms: i64) -> String {
    let sign = if ms < 0 { '-' } else { '+' };
    format!(
        "{sign}{}",
        short_duration(Duration::from_millis(ms.unsigned_abs()))
    )
}

/// `3s`, `1500ms` or `250us`: the shortest exact form that parses back.
pub fn short_duration(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else if d.as_nanos() % 1_000_000 == 0 {
        format!("{}ms", d.as_millis())
    } else {
        format!("{}us", d.as_micros())
    }
}

impl fmt::Display for FaultSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.kind.name(), self.masters)?;
        if let FaultKind::Latency(d) = self.kind {
            write!(f, ":{}", short_duration(d))?;
        }
        if let FaultKind::Clock(ms) = self.kind {
            write!(f, ":{}", signed_ms(ms))?;
        }
        write!(f, "@{}", self.at)?;
        if let Some(until) = self.until {
            write!(f, "-{until}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn every_kind_parses_with_its_times() {
        let kill = FaultSpec::parse("kill:2@3s").unwrap();
        assert_eq!(
            kill,
            FaultSpec {
                kind: FaultKind::Kill,
                masters: Masters::First(2),
                at: FaultTime::Start(ms(3000)),
                until: None
            }
        );
        let pause = FaultSpec::parse("pause:1@2s-6s").unwrap();
        assert_eq!(
            (pause.kind, pause.at, pause.until),
            (
                FaultKind::Pause,
                FaultTime::Start(ms(2000)),
                Some(FaultTime::Start(ms(6000)))
            )
        );
        assert_eq!(
            FaultSpec::parse("restart:1@4s").unwrap().kind,
            FaultKind::Restart
        );
        assert_eq!(
            FaultSpec::parse("restart-delayed:1@4s").unwrap().kind,
            FaultKind::RestartDelayed
        );
        let latency = FaultSpec::parse("latency:2:50ms@1s-5s").unwrap();
        assert_eq!(latency.kind, FaultKind::Latency(ms(50)));
        assert!(latency.kind.needs_proxy());
        assert_eq!(
            FaultSpec::parse("blackhole:1@2s").unwrap().kind,
            FaultKind::Blackhole
        );
        assert_eq!(
            FaultSpec::parse("expire:2@3s").unwrap().kind,
            FaultKind::Expire
        );
        assert_eq!(
            FaultSpec::parse("kill:m3,m4@0s-500ms").unwrap().masters,
            Masters::List(vec![3, 4])
        );
    }

    #[test]
    fn clock_jumps_parse_with_their_sign_and_print_back() {
        let ahead = FaultSpec::parse("clock:m2:+2s@1500ms").unwrap();
        assert_eq!(
            (ahead.kind, ahead.at),
            (FaultKind::Clock(2000), FaultTime::Start(ms(1500)))
        );
        assert_eq!(ahead.to_string(), "clock:m2:+2s@1500ms");
        let back = FaultSpec::parse("clock:1:-250ms@1s").unwrap();
        assert_eq!(back.kind, FaultKind::Clock(-250));
        assert_eq!(back.to_string(), "clock:1:-250ms@1s");
        for (text, part) in [
            ("clock:m2:2s@1s", "with its sign"),
            ("clock:m2@1s", "needs the jump"),
            ("clock:m2:+0s@1s", "above zero"),
            ("clock:m2:+2s@1s-2s", "one instant"),
        ] {
            let err = FaultSpec::parse(text).unwrap_err();
            assert!(err.contains(part), "{text}: {err}");
        }
    }

    #[test]
    fn specs_print_back_as_they_parse() {
        for text in [
            "kill:2@3s",
            "pause:1@2s-6s",
            "latency:m1,m2:50ms@1s-5s",
            "expire:m0@1500ms",
            "kill:m3,m4@0s-lock+500ms",
            "expire:m0@lock+1s",
            "restart:1@lock",
            "pause:1@lock+1s-lock+2s",
        ] {
            let spec = FaultSpec::parse(text).unwrap();
            assert_eq!(FaultSpec::parse(&spec.to_string()).unwrap(), spec, "{text}");
        }
        assert_eq!(
            FaultSpec::parse("restart:m0@1s 500ms").unwrap().to_string(),
            "restart:m0@1500ms"
        );
    }

    /// Each bad spec must be refused with a message that quotes the part at fault.
    #[test]
    fn bad_specs_name_the_part_at_fault() {
        let cases = [
            ("kill:2", "no time"),
            ("explode:2@3s", "kind \"explode\""),
            ("kill@3s", "no masters"),
            ("kill:two@3s", "masters \"two\""),
            ("kill:0@3s", "at least one master"),
            ("kill:m3,m3@1s", "m3 is listed twice"),
            ("kill:m3,x@1s", "\"x\" is not a master index"),
            ("kill:2@soon", "time \"soon\""),
            ("kill:2@", "time \"\""),
            ("pause:1@6s-2s", "window \"6s-2s\""),
            ("pause:1@2s-", "end \"\""),
            ("pause:1@x-2s", "start \"x\""),
            ("restart:1@2s-4s", "one instant"),
            ("latency:2@1s", "needs the delay"),
            ("latency:2:fast@1s", "latency \"fast\""),
            ("kill:2:50ms@1s", "kill takes no argument"),
            ("latency:2:5ms:9@1s", "one part too many"),
            ("kill:1@lock-2s", "must end at a time from it too"),
            ("pause:1@lock+2s-lock+1s", "ends before it starts"),
            ("expire:1@lock2s", "write lock+D"),
            ("expire:1@lock+soon", "time \"lock+soon\""),
        ];
        for (text, part) in cases {
            let err = FaultSpec::parse(text).expect_err(text);
            assert!(err.contains(part), "{text}: {err:?} does not name {part:?}");
            assert!(
                err.contains(&format!("{text:?}")),
                "{text}: {err:?} does not quote the spec"
            );
        }
    }

    #[test]
    fn masters_resolve_against_the_run() {
        assert_eq!(Masters::First(2).resolve(5).unwrap(), vec![0, 1]);
        assert!(Masters::First(6).resolve(5).unwrap_err().contains("only 5"));
        assert_eq!(Masters::List(vec![4, 0]).resolve(5).unwrap(), vec![4, 0]);
        assert!(Masters::List(vec![5])
            .resolve(5)
            .unwrap_err()
            .contains("m5 does not exist"));
    }

    #[test]
    fn a_time_from_the_first_lock_waits_for_it() {
        let expire = FaultSpec::parse("expire:m0@lock+1s").unwrap();
        assert_eq!(expire.at, FaultTime::FirstLock(ms(1000)));
        assert_eq!(expire.at.due(None), None);
        assert_eq!(expire.at.due(Some(ms(2500))), Some(ms(3500)));
        assert_eq!(FaultTime::Start(ms(300)).due(None), Some(ms(300)));
        assert_eq!(
            FaultTime::FirstLock(ms(200)).plus(ms(50)),
            FaultTime::FirstLock(ms(250))
        );
    }
}
