//! The command lines `redlock-masters` reads on stdin: `<verb> <index>`, one answer line each.

use std::fmt;

use redlock_local::{LocalError, LocalMasters};

/// What a command line asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verb {
    Pause,
    Resume,
    Kill,
    Restart,
    Start,
}

const VERBS: &str = "pause, resume, kill, restart, start";

/// A command line that is not `<verb> <index>`.
#[derive(Debug, PartialEq, Eq)]
struct BadLine(String);

impl fmt::Display for BadLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} is not a command: say `<verb> <index>` with a verb of {VERBS}",
            self.0
        )
    }
}

fn parse(line: &str) -> Result<(Verb, usize), BadLine> {
    let bad = || BadLine(line.to_string());
    let mut words = line.split_whitespace();
    let verb = match words.next() {
        Some("pause") => Verb::Pause,
        Some("resume") => Verb::Resume,
        Some("kill") => Verb::Kill,
        Some("restart") => Verb::Restart,
        Some("start") => Verb::Start,
        _ => return Err(bad()),
    };
    let index = words.next().and_then(|w| w.parse().ok()).ok_or_else(bad)?;
    match words.next() {
        None => Ok((verb, index)),
        Some(_) => Err(bad()),
    }
}

fn apply(masters: &LocalMasters, verb: Verb, index: usize) -> Result<(), LocalError> {
    match verb {
        Verb::Pause => masters.pause(index),
        Verb::Resume => masters.resume(index),
        Verb::Kill => masters.kill(index),
        Verb::Restart => masters.restart(index),
        Verb::Start => masters.start_again(index),
    }
}

/// The one-line answer to a command line (`ok` or `error: ...`); `None` for a blank line.
pub fn answer(masters: &LocalMasters, line: &str) -> Option<String> {
    if line.trim().is_empty() {
        return None;
    }
    let answer = match parse(line) {
        Ok((verb, index)) => apply(masters, verb, index).map_err(|e| e.to_string()),
        Err(bad) => Err(bad.to_string()),
    };
    Some(match answer {
        Ok(()) => "ok".to_string(),
        // One line per answer, whatever the error says.
        Err(why) => format!("error: {}", why.replace('\n', " | ")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse_into_a_verb_and_an_index() {
        assert_eq!(parse("pause 2"), Ok((Verb::Pause, 2)));
        assert_eq!(parse("  resume   0 "), Ok((Verb::Resume, 0)));
        assert_eq!(parse("kill 4"), Ok((Verb::Kill, 4)));
        assert_eq!(parse("restart 1"), Ok((Verb::Restart, 1)));
        assert_eq!(parse("start 3"), Ok((Verb::Start, 3)));
        for bad in [
            "pause", "pause x", "pause -1", "stop 1", "kill 1 2", "PAUSE 1",
        ] {
            let error = parse(bad).unwrap_err().to_string();
            assert!(error.contains(&format!("{bad:?}")), "{error}");
            assert!(error.contains(VERBS), "{error}");
        }
    }
}
