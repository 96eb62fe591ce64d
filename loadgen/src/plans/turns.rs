//! Turns: configurations measured again and again, next to each other. One plan serves
//! `run --repeat` (one side, its modes in the other order every second turn) and
//! `compare --run` (every side takes a turn, the sides in the other order every second
//! round), so repeat r of every side and mode ran close in time and a slow drift of the
//! machine falls on each alike; turn r is seeded with seed + r.

use crate::engine::config::RunConfig;
use crate::engine::hooks::RunHooks;
use crate::engine::runner::{run_modes, RunResult};
use crate::engine::target::Target;
use crate::error::LoadgenError;
use crate::signals::Signals;

/// One configuration and the masters it runs against.
pub type Side<'a> = (&'a RunConfig, &'a Target);

/// Runs every mode of `cfg` `cfg.repeat` times (`run --repeat`) and lays the repeats end to
/// end ([`RunResult::append_repeat`]). A stop ends it after the mode it cut short.
pub async fn run_repeated(
    cfg: &RunConfig,
    target: &Target,
    hooks: &mut dyn RunHooks,
    signals: &Signals,
) -> Result<RunResult, LoadgenError> {
    let whole = in_turns(&[(cfg, target)], cfg.repeat.max(1), hooks, signals).await?;
    whole
        .into_iter()
        .next()
        .flatten()
        .ok_or_else(|| never_ran(signals, "stopped before the run began".into()))
}

/// `turns` rounds over `sides`: each side's turn r, the sides in order, the next round in the
/// other order. A signal stops it between or within turns; each side's turns so far are laid
/// end to end (`None`: a side that never ran).
pub async fn in_turns(
    sides: &[Side<'_>],
    turns: u32,
    hooks: &mut dyn RunHooks,
    signals: &Signals,
) -> Result<Vec<Option<RunResult>>, LoadgenError> {
    let mut wholes: Vec<Option<RunResult>> = sides.iter().map(|_| None).collect();
    for r in 0..turns {
        let mut order: Vec<usize> = (0..sides.len()).collect();
        if r % 2 == 1 {
            order.reverse();
        }
        for i in order {
            if stopped(wholes[i].as_ref(), signals) {
                return Ok(wholes);
            }
            let (cfg, target) = sides[i];
            let result = turn(cfg, r, target, hooks, signals).await?;
            match &mut wholes[i] {
                None => {
                    wholes[i] = Some(RunResult {
                        config: cfg.clone(),
                        ..result
                    })
                }
                Some(whole) => whole.append_repeat(result),
            }
        }
    }
    Ok(wholes)
}

/// Turn `r` (from 0) of the `cfg.repeat` of `cfg`: seeded with seed + r, its modes in the
/// other order every second time, its progress lines saying "repeat r/N".
pub async fn turn(
    cfg: &RunConfig,
    r: u32,
    target: &Target,
    hooks: &mut dyn RunHooks,
    signals: &Signals,
) -> Result<RunResult, LoadgenError> {
    let mut again = cfg.clone();
    again.seed = cfg.seed.wrapping_add(u64::from(r));
    if cfg.repeat > 1 {
        let repeat = format!("repeat {}/{}", r + 1, cfg.repeat);
        again.progress_label = Some(match &cfg.progress_label {
            Some(label) => format!("{label} {repeat}"),
            None => repeat,
        });
    }
    let mut order = cfg.modes();
    if r % 2 == 1 {
        order.reverse();
    }
    run_modes(&again, &order, target, hooks, signals).await
}

/// The error for a side stopped before its first turn: by a signal (exit 128 + n, as at any
/// other moment), or, without one, by something that is not the user's doing (`why`).
pub fn never_ran(signals: &Signals, why: String) -> LoadgenError {
    match signals.received() {
        Some(signal) => LoadgenError::Interrupted(signal),
        None => LoadgenError::Failed(why),
    }
}

/// Whether turns should stop: a signal came, or the last turn was cut short by one.
fn stopped(whole: Option<&RunResult>, signals: &Signals) -> bool {
    whole.is_some_and(|w| w.interrupted.is_some()) || signals.stop.is_set()
}
