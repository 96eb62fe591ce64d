//! The answer for one fan-out mode, as a planner reads it: the rate, its status first
//! (confirmed, not confirmed with its bracket, or a floor and what set it), the objective,
//! whether noise decided it, and the commands that reproduce and narrow it.

use serde::{Deserialize, Serialize};

use super::reproduce;
use super::search::{Limit, Plan};
use super::slo::{unsafe_because, Objective};
use super::step::Step;
use crate::model::mode::ModeStats;
pub use crate::model::values::grouped;

named! {
    /// What the answer's rate is (its name: JSON `status`, the CSV answer row's `verdict`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub enum Status {
        /// A repeat of the rate met the objective too, and the next rate up missed it.
        Confirmed = "confirmed",
        /// No repeat confirmed the rate (the step budget ran out, or the search was stopped;
        /// also what a file written before the status was recorded reads as).
        #[default]
        Unconfirmed = "unconfirmed",
        /// The next rate up missed only because the load generator was the bottleneck: the
        /// masters may sustain more than this machine can ask of them.
        MachineFloor = "machine-floor",
        /// The rate is `--max-rate`: the masters may sustain more.
        MaxRateFloor = "max-rate-floor",
        /// No rate met the objective.
        NotMet = "not-met",
        /// This machine decided every step that could have given an answer (the generator
        /// waited for a core too much of the time): no rate is claimed.
        NoAnswer = "no-answer",
    }
}

impl Status {
    /// Its name in result files.
    pub fn key(self) -> &'static str {
        self.as_str()
    }

    /// The status in the words the answer opens with.
    pub fn words(self) -> &'static str {
        match self {
            Status::Confirmed => "confirmed",
            Status::Unconfirmed => "NOT confirmed",
            Status::MachineFloor => "a floor set by this machine",
            Status::MaxRateFloor => "a floor set by --max-rate",
            Status::NotMet => "not met",
            Status::NoAnswer => "no answer on this machine",
        }
    }
}

/// The answer for one fan-out mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub fanout: String,
    /// The highest rate asked for that met the objective (null: none did).
    pub rate_per_s: Option<f64>,
    /// A repeat of that rate met it too.
    pub confirmed: bool,
    pub limit: Limit,
    /// The step above the answer missed the objective only because the generator was the
    /// bottleneck: the masters may sustain more than the answer.
    pub generator_limited: bool,
    /// What the rate is, and why (`status_reason`: the bracket, or what set the floor).
    #[serde(default)]
    pub status: Status,
    #[serde(default)]
    pub status_reason: String,
    /// How and why this machine decided the failing step above the answer, in words:
    /// "generator-bound at 6/s: …" or "on a busy machine at 2,188/s: …" (empty: it did not).
    #[serde(default)]
    pub generator_reason: String,
    /// The answer's opening line: the mode, the status in words, the rate.
    pub statement: String,
    /// The objective, and what the answer's step measured against it.
    #[serde(default)]
    pub objective: String,
    /// Where noise decided a verdict the answer rests on (the answer's rate or the failing
    /// rate above it), in words.
    #[serde(default)]
    pub noise: Vec<String>,
    /// What the search knows: the highest rate that passed (the answer) and the lowest above
    /// it that failed (null: none did); the capacity lies between them.
    pub highest_passed_per_s: Option<f64>,
    pub lowest_failed_per_s: Option<f64>,
    /// Flags to add to the same `capacity` command to narrow an unconfirmed or budget-limited
    /// answer (empty: nothing to narrow).
    #[serde(default)]
    pub narrow_with: String,
    /// The `redlock-loadgen run` command that reproduces the answer's step (with no answer:
    /// the lowest step tried).
    #[serde(default)]
    pub reproduce: String,
    /// The spread across every step run at the answer's rate (its confirmation and the
    /// `--repeat` runs included; null: it ran once).
    pub spread: Option<Spread>,
}

impl Answer {
    /// The answer's block: the statement, then the objective, the noise, the spread, the
    /// narrowing advice and the `reproduce:` command, one line each.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = vec![self.statement.clone()];
        // A no-answer's statement already names what decided it.
        if !self.generator_reason.is_empty() && self.status != Status::NoAnswer {
            lines.push(self.generator_reason.clone());
        }
        if !self.objective.is_empty() {
            lines.push(format!("objective: {}", self.objective));
        }
        lines.extend(self.noise.iter().cloned());
        if let Some(s) = &self.spread {
            let (p99, success) = (s.acquire_p99_ms, s.success_rate.scaled(100.0));
            lines.push(format!(
                "spread: {} runs at that rate ({} passed): p99 {p99} ms, success {success}% (min/median/max)",
                s.runs, s.passed,
            ));
        }
        let bracket = self.rate_per_s.zip(self.lowest_failed_per_s);
        if let Some((lo, hi)) = bracket.filter(|_| !self.narrow_with.is_empty()) {
            let (lo, hi, flags) = (grouped(lo), grouped(hi), &self.narrow_with);
            lines.push(format!("narrow: {lo}/s passed, {hi}/s failed, so the capacity lies between them: add {flags} to the same command"));
        }
        if !self.reproduce.is_empty() {
            lines.push(format!("reproduce: {}", self.reproduce));
        }
        lines
    }

    /// Words an answer searched under a fault schedule (`words`): a safe capacity, named by
    /// its faults, or "no safe rate" when every step of its mode was unsafe.
    pub fn under_faults(&mut self, words: &str, steps: &[Step]) {
        let fanout = &self.fanout;
        let mine: Vec<&Step> = steps.iter().filter(|s| s.fanout == *fanout).collect();
        let unsafe_mode = |m: &ModeStats| !unsafe_because(m).is_empty();
        let unsafe_step = |s: &&Step| s.mode().is_some_and(unsafe_mode);
        let statement = &self.statement;
        let prefix = format!("{fanout}: ");
        let rest = statement.strip_prefix(&prefix).unwrap_or(statement);
        let no_safe_rate = self.rate_per_s.is_none() && !mine.is_empty();
        self.statement = if no_safe_rate && mine.iter().all(unsafe_step) {
            let rates = mine.iter().map(|s| s.rate);
            let low = grouped(rates.clone().fold(f64::MAX, f64::min));
            let tried = match mine.len() {
                1 => format!("1 step, at {low}/s"),
                n => format!("{n} steps, {low}–{}/s", grouped(rates.fold(0.0, f64::max))),
            };
            format!("{fanout}: no safe rate with {words}: safety violations at every rate tried ({tried})")
        } else {
            format!("{fanout}: safe capacity with {words}: {rest}")
        };
    }
}

/// Minimum, median and maximum of a figure across runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Range {
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

/// `min/median/max`, each with 3 decimals.
impl std::fmt::Display for Range {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.3}/{:.3}/{:.3}", self.min, self.median, self.max)
    }
}

impl Range {
    fn scaled(self, by: f64) -> Range {
        let (min, median, max) = (by * self.min, by * self.median, by * self.max);
        Range { min, median, max }
    }

    fn of(mut values: Vec<f64>) -> Option<Range> {
        values.sort_by(f64::total_cmp);
        let n = values.len();
        let median = match n {
            0 => return None,
            _ if n % 2 == 1 => values[n / 2],
            _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
        };
        Some(Range {
            min: values[0],
            median,
            max: values[n - 1],
        })
    }
}

/// How much the answer's step moved from run to run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Steps run at the answer's rate, and how many of them met the objective.
    pub runs: u32,
    pub passed: u32,
    pub acquire_p99_ms: Range,
    /// Acquire success rate (acquired ÷ acquire calls).
    pub success_rate: Range,
}

/// The spread of `steps` (one rate's runs), when there are at least two.
fn spread(steps: &[&Step]) -> Option<Spread> {
    let modes: Vec<&ModeStats> = steps.iter().filter_map(|s| s.mode()).collect();
    if modes.len() < 2 {
        return None;
    }
    // Rounded to `unit`, as the report writes it.
    let range = |figure: fn(&ModeStats) -> f64, unit: f64| {
        let rounded = modes.iter().map(|m| (figure(m) / unit).round() * unit);
        Range::of(rounded.collect())
    };
    Some(Spread {
        runs: modes.len() as u32,
        passed: steps.iter().filter(|s| s.passed).count() as u32,
        acquire_p99_ms: range(|m| m.latency.acquire.quantile(0.99) as f64 / 1000.0, 0.001)?,
        success_rate: range(ModeStats::acquire_success_rate, 1e-6)?,
    })
}

/// Flags that narrow the bracket `lo..hi` to `precision`: start at the passing rate, cap at
/// the failing one, and enough steps to bisect between them and confirm.
fn narrowing_flags(lo: f64, hi: f64, precision: f64) -> String {
    let doublings = ((hi - lo) / lo / precision.max(0.001)).log2();
    let halvings = doublings.ceil().max(0.0) as u32;
    // lo, hi, the bisection, the confirmation.
    let steps = (halvings + 3).min(50);
    format!("--start-rate {lo:.0} --max-rate {hi:.0} --max-steps {steps}")
}

/// The noise sentence of the step at `rate` that the search counted (`None`: its verdict did
/// not hinge on an interval).
fn noise_words(mine: &[&Step], rate: f64) -> Option<String> {
    let straddling =
        |s: &&&Step| s.rate == rate && s.counted().is_some() && !s.straddled.is_empty();
    let step = mine.iter().rev().find(straddling)?;
    let at = format!("at {}/s {}", grouped(rate), step.straddled.join(", "));
    Some(match step.noise {
        Some(n) if n.runs > 1 => format!(
            "decided by noise: {at}; passed {} of {} runs, so it counted as {}",
            n.passed,
            n.runs,
            if n.counted_passed { "a pass" } else { "a failure" }
        ),
        Some(n) => format!(
            "noise may have decided it: {at}; it ran once and counted as {} (no repeat could change that: raise --noise-repeats)",
            if n.counted_passed { "a pass" } else { "a failure" }
        ),
        None => format!("noise may have decided it: {at}"),
    })
}

/// How this machine decided step `s` ("on a busy machine", "generator-bound") and why, in
/// words (`None`: the masters did): the machine was busy
/// ([`crate::model::generator::machine_bound`]), or the generator judged itself the
/// bottleneck (its own CPU, its clients, its late starts).
fn machine_reason(s: &Step) -> Option<(&'static str, String)> {
    let m = s.mode()?;
    if let Some(busy) = crate::model::generator::machine_bound(m) {
        return Some(("on a busy machine", busy));
    }
    if !m.generator.judgement.generator_bound {
        return None;
    }
    // The reason that says why it was the generator, else the first one.
    let reasons = &m.generator.judgement.reasons;
    let why = reasons
        .iter()
        .find_map(|r| r.strip_prefix("generator-bound: "));
    let why = why.or(reasons.first().map(String::as_str)).unwrap_or("");
    Some(("generator-bound", why.to_string()))
}

/// What the search found for one mode: its answer, the lowest failing rate above it, and why
/// this machine decided that failing step (if it did).
struct Outcome {
    rate: Option<f64>,
    confirmed: bool,
    limit: Limit,
    lowest_failed: Option<f64>,
    machine: Option<(&'static str, String)>,
    /// The confirmation ran the answer's `reproduce:` command itself (and met the objective).
    by_reproducer: bool,
}

/// The answer's status and the words in brackets after it.
fn status_of(o: &Outcome, objective: &Objective, plan: &Plan) -> (Status, String) {
    let repeat_words = match (o.confirmed, o.by_reproducer) {
        (true, true) => "confirmed by its reproduce: command",
        (true, false) => "confirmed by a repeat",
        (false, _) => "NOT confirmed by a repeat",
    };
    let lowest_failed = grouped(o.lowest_failed.unwrap_or_default());
    match (o.rate, &o.machine) {
        (None, Some((_, why))) => (Status::NoAnswer, format!("at {lowest_failed}/s {why}")),
        (None, None) if plan.min_rate_from_calls => {
            let (calls, term) = objective.calls_needed();
            let (rate, calls) = (grouped(plan.min_rate), grouped(calls as f64));
            let why = format!("not even {rate}/s, the lowest rate whose step holds the {calls} calls a {term} needs");
            (Status::NotMet, why)
        }
        (None, None) => {
            let why = format!("not even --min-rate {}/s", grouped(plan.min_rate));
            (Status::NotMet, why)
        }
        (Some(_), Some((how, _))) => (
            Status::MachineFloor,
            format!("the next rate up, {lowest_failed}/s, was {how}; {repeat_words}"),
        ),
        (Some(_), None) if o.limit == Limit::MaxRate => (
            Status::MaxRateFloor,
            format!("it passed at the highest rate allowed, so the masters may sustain more; {repeat_words}"),
        ),
        (Some(_), None) if o.confirmed => (
            Status::Confirmed,
            match (o.lowest_failed, o.by_reproducer) {
                (Some(_), true) => format!("{repeat_words}; the next rate up, {lowest_failed}/s, failed"),
                (Some(_), false) => format!("the next rate up, {lowest_failed}/s, failed"),
                (None, true) => repeat_words.to_string(),
                (None, false) => String::new(),
            },
        ),
        (Some(r), None) => {
            let bracket = match o.lowest_failed {
                Some(_) => format!("bracket {}–{lowest_failed}/s", grouped(r)),
                None => format!("at least {}/s: nothing above it failed yet", grouped(r)),
            };
            let budget = o.limit == Limit::Steps;
            let why = if budget { "the step budget ran out" } else { "the search was stopped" };
            (Status::Unconfirmed, format!("{bracket}; {why}"))
        }
    }
}

/// The answer's opening line.
fn statement_of(
    fanout: &str,
    (status, reason): (Status, &str),
    rate: Option<f64>,
    objective: &Objective,
) -> String {
    let words = status.words();
    let reason = if reason.is_empty() {
        String::new()
    } else {
        format!(" ({reason})")
    };
    let opening = format!("{fanout}: {words}{reason}");
    match (rate, status) {
        (_, Status::NoAnswer) if reason.contains("waited for a core") => {
            format!("{opening} — no rate is claimed; measure on a quieter machine")
        }
        (_, Status::NoAnswer) => format!("{opening} — no rate is claimed; the generator was its own bottleneck: give it more --clients, a release build, or more machines (--agents)"),
        (Some(r), _) => format!("{opening} — {} acquires/s", grouped(r)),
        (None, _) => format!("{fanout}: {words} — no rate met {}{reason}", objective.describe()),
    }
}

/// The objective, and what the answer's step at `rate` measured against it.
fn objective_words(objective: &Objective, rate: Option<f64>, at: Option<&ModeStats>) -> String {
    let (Some(r), Some(m)) = (rate, at) else {
        return objective.describe();
    };
    let estimate = |e| crate::model::catalog::estimate(e, "acquire.p99")?.interval();
    let interval =
        |(lo, hi): (f64, f64)| format!(" (95 % interval {:.3}–{:.3} ms)", lo / 1000.0, hi / 1000.0);
    let p99 = m.estimates.as_ref().and_then(estimate);
    let p99 = p99.map_or(String::new(), interval);
    let ms = |q| m.latency.acquire.quantile(q) as f64 / 1000.0;
    let (rate, reached) = (grouped(r), grouped(m.acquires_per_s()));
    format!(
        "{}; the step at {rate}/s reached {reached} acquires/s, acquire p50 {:.3} ms, p99 {:.3} ms{p99}, success {:.3}%",
        objective.describe(),
        ms(0.5),
        ms(0.99),
        100.0 * m.acquire_success_rate(),
    )
}

/// Flags that narrow an unconfirmed or budget-limited answer of `fanout` (empty: nothing to
/// narrow).
fn narrow_with(fanout: &str, o: &Outcome, plan: &Plan) -> String {
    match (o.rate, o.lowest_failed) {
        (Some(lo), Some(hi)) if !o.confirmed || o.limit == Limit::Steps => {
            // Only this mode: without it, the narrower search would run every mode again.
            let redlock = matches!(fanout, "sequential" | "concurrent");
            let mode = if redlock { "--fanout" } else { "--lock" };
            let flags = narrowing_flags(lo, hi, plan.precision);
            format!("{flags} {mode} {fanout}")
        }
        _ => String::new(),
    }
}

/// The answer for `fanout` from its steps and the search's outcome.
pub fn answer(
    fanout: &str,
    steps: &[Step],
    (rate, confirmed, limit): (Option<f64>, bool, Limit),
    objective: &Objective,
    plan: &Plan,
) -> Answer {
    let mine: Vec<&Step> = steps.iter().filter(|s| s.fanout == fanout).collect();
    // The lowest failing step above the answer: did this machine decide it?
    let failed_above = |s: &&&Step| s.counted() == Some(false) && rate.is_none_or(|r| s.rate > r);
    let by_rate = |a: &&&Step, b: &&&Step| a.rate.total_cmp(&b.rate);
    let above = mine.iter().filter(failed_above).min_by(by_rate);
    let reproduced_it = |s: &&Step| Some(s.rate) == rate && s.passed && s.reproducer.is_some();
    let outcome = Outcome {
        rate,
        confirmed,
        limit,
        lowest_failed: above.map(|s| s.rate),
        machine: above.and_then(|s| machine_reason(s)),
        by_reproducer: mine.iter().any(reproduced_it),
    };
    let answer_step = rate.and_then(|r| mine.iter().rev().find(|s| s.rate == r && s.passed));
    let lowest = || mine.iter().min_by(by_rate).copied();
    let reproduced = answer_step.copied().or_else(lowest);
    let same_rate: Vec<&Step> = rate.map_or_else(Vec::new, |r| {
        mine.iter().copied().filter(|s| s.rate == r).collect()
    });
    let (status, status_reason) = status_of(&outcome, objective, plan);
    let decided = rate.into_iter().chain(outcome.lowest_failed);
    let noise = decided.filter_map(|r| noise_words(&mine, r)).collect();
    Answer {
        fanout: fanout.to_string(),
        rate_per_s: rate,
        confirmed,
        limit,
        generator_limited: outcome.machine.is_some(),
        statement: statement_of(fanout, (status, &status_reason), rate, objective),
        status,
        status_reason,
        generator_reason: match (&outcome.machine, outcome.lowest_failed) {
            (Some((how, why)), Some(hi)) if !why.is_empty() => {
                format!("{how} at {}/s: {why}", grouped(hi))
            }
            _ => String::new(),
        },
        objective: objective_words(objective, rate, answer_step.and_then(|s| s.mode())),
        noise,
        highest_passed_per_s: rate,
        lowest_failed_per_s: outcome.lowest_failed,
        narrow_with: narrow_with(fanout, &outcome, plan),
        reproduce: reproduced.map_or(String::new(), |s| {
            reproduce::run_command(&s.report, &s.fanout, s.rate)
        }),
        spread: spread(&same_rate),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_key_is_its_name_in_the_json() {
        for status in [
            Status::Confirmed,
            Status::Unconfirmed,
            Status::MachineFloor,
            Status::MaxRateFloor,
            Status::NotMet,
        ] {
            assert_eq!(serde_json::to_value(status).unwrap(), status.key());
        }
    }

    #[test]
    fn the_narrowing_flags_budget_the_bisection_and_the_confirmation() {
        // 8000..12000 is 50% apart: 4 halvings reach 5%, plus the two ends and a repeat.
        assert_eq!(
            narrowing_flags(8000.0, 12000.0, 0.05),
            "--start-rate 8000 --max-rate 12000 --max-steps 7"
        );
    }

    #[test]
    fn a_range_has_the_median_of_an_even_count() {
        let r = Range::of(vec![3.0, 1.0, 2.0, 10.0]).unwrap();
        assert_eq!((r.min, r.median, r.max), (1.0, 2.5, 10.0));
        assert!(Range::of(Vec::new()).is_none());
    }

    #[test]
    fn rates_are_grouped_by_thousands() {
        assert_eq!(grouped(3875.4), "3,875");
        assert_eq!(grouped(200_000.0), "200,000");
        assert_eq!(grouped(999.6), "1,000");
        assert_eq!(grouped(6.0), "6");
    }
}
