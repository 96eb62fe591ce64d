//! The command line every driver shares (the harness passes the same flags to the C and
//! Python drivers): `--driver NAME --library TEXT --workload w1|w2|w3 --masters URL,URL,...
//! --cycles N --tasks N --seconds S --ttl S`.

use std::time::Duration;

/// One of the three workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    W1,
    W2,
    W3,
}

impl Workload {
    pub fn name(self) -> &'static str {
        match self {
            Workload::W1 => "w1",
            Workload::W2 => "w2",
            Workload::W3 => "w3",
        }
    }

    fn parse(text: &str) -> Result<Self, String> {
        match text {
            "w1" => Ok(Workload::W1),
            "w2" => Ok(Workload::W2),
            "w3" => Ok(Workload::W3),
            other => Err(format!("--workload {other:?}: expected w1, w2 or w3")),
        }
    }
}

/// What the harness asked this driver process to do.
#[derive(Debug, Clone)]
pub struct Args {
    /// The driver's name in the harness's tables.
    pub driver: String,
    /// The library and version it measures (reported as is).
    pub library: String,
    pub workload: Workload,
    pub masters: Vec<String>,
    /// Cycles per task (W1, W2).
    pub cycles: usize,
    /// Tasks (W2, W3; W1 always runs one).
    pub tasks: usize,
    /// Duration of W3 in seconds.
    pub seconds: f64,
    /// Lock TTL.
    pub ttl: Duration,
}

impl Args {
    /// Parses the process's arguments; exits with a message naming the bad value.
    pub fn from_env(driver: &str, library: &str) -> Args {
        match Self::parse(driver, library, std::env::args().skip(1)) {
            Ok(args) => args,
            Err(e) => {
                eprintln!("{driver}: {e}");
                std::process::exit(64);
            }
        }
    }

    pub fn parse(
        driver: &str,
        library: &str,
        mut argv: impl Iterator<Item = String>,
    ) -> Result<Args, String> {
        let mut args = Args {
            driver: driver.to_string(),
            library: library.to_string(),
            workload: Workload::W1,
            masters: Vec::new(),
            cycles: 2000,
            tasks: 16,
            seconds: 10.0,
            ttl: Duration::from_secs(10),
        };
        while let Some(flag) = argv.next() {
            let value = argv
                .next()
                .ok_or_else(|| format!("{flag}: missing value"))?;
            let number = |v: &str| -> Result<f64, String> {
                v.parse::<f64>()
                    .ok()
                    .filter(|n| n.is_finite() && *n > 0.0)
                    .ok_or_else(|| format!("{flag} {v:?}: expected a positive number"))
            };
            match flag.as_str() {
                "--driver" => args.driver = value,
                "--library" => args.library = value,
                "--workload" => args.workload = Workload::parse(&value)?,
                "--masters" => args.masters = value.split(',').map(str::to_string).collect(),
                "--cycles" => args.cycles = number(&value)? as usize,
                "--tasks" => args.tasks = number(&value)? as usize,
                "--seconds" => args.seconds = number(&value)?,
                "--ttl" => args.ttl = Duration::from_secs_f64(number(&value)?),
                other => return Err(format!("unknown flag {other:?}")),
            }
        }
        if args.masters.is_empty() {
            return Err("--masters: at least one URL is needed".to_string());
        }
        Ok(args)
    }

    /// Tasks this workload runs (W1 is serial).
    pub fn task_count(&self) -> usize {
        match self.workload {
            Workload::W1 => 1,
            Workload::W2 | Workload::W3 => self.tasks.max(1),
        }
    }

    /// The TTL in whole milliseconds (what most libraries take).
    pub fn ttl_ms(&self) -> u64 {
        u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Args, String> {
        Args::parse("d", "lib", line.split_whitespace().map(str::to_string))
    }

    #[test]
    fn reads_every_flag() {
        let args = parse("--workload w3 --masters redis://a:1,redis://b:2 --cycles 7 --tasks 4 --seconds 1.5 --ttl 2")
            .expect("valid");
        assert_eq!(args.workload, Workload::W3);
        assert_eq!(args.masters, ["redis://a:1", "redis://b:2"]);
        assert_eq!((args.cycles, args.tasks, args.seconds), (7, 4, 1.5));
        assert_eq!(args.ttl_ms(), 2000);
        assert_eq!(args.task_count(), 4);
    }

    #[test]
    fn w1_is_serial_whatever_the_tasks() {
        let args = parse("--workload w1 --masters redis://a:1 --tasks 16").expect("valid");
        assert_eq!(args.task_count(), 1);
    }

    #[test]
    fn bad_values_are_named() {
        let e = parse("--masters redis://a:1 --cycles -3").unwrap_err();
        assert!(e.contains("--cycles") && e.contains("-3"), "{e}");
        let e = parse("--masters redis://a:1 --workload w9").unwrap_err();
        assert!(e.contains("w9"), "{e}");
        let e = parse("--workload w1").unwrap_err();
        assert!(e.contains("--masters"), "{e}");
        let e = parse("--masters redis://a:1 --bogus 1").unwrap_err();
        assert!(e.contains("--bogus"), "{e}");
    }
}
