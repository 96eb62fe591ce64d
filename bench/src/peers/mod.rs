//! `make bench-peers`: this project's surfaces and other Redlock libraries, side by side.
//!
//! The harness (bin `bench-peers`) starts the masters once per run, outside every measured
//! process (or uses masters given by URL, see [`masters`]), then runs each driver — one
//! process per (driver, workload), so the CPU it reports is its own — interleaved on the
//! same masters, and prints per workload and driver the medians and ranges over runs
//! ([`summary`]), then the performance targets it can judge ([`targets`]; all of them are listed in
//! `docs/src/design.md#performance-targets`). A driver is a
//! program that takes the shared command line of `redlock_peers_workload::Args` and prints
//! one JSON line: a result, or `{"skipped": reason}`, or `{"failed": reason}`.

pub mod driver;
pub mod floor;
pub mod masters;
pub mod summary;
pub mod targets;

pub use driver::{Driver, Kind, Outcome, Sample};

/// The three workloads, in the order they run.
pub const WORKLOADS: [&str; 3] = ["w1", "w2", "w3"];

/// Run lengths and sizes (the same for every driver).
#[derive(Debug, Clone)]
pub struct Plan {
    pub runs: usize,
    pub masters: usize,
    pub w1_cycles: usize,
    pub w2_cycles: usize,
    pub tasks: usize,
    pub w3_seconds: f64,
    pub ttl_seconds: f64,
}

impl Plan {
    /// The driver flags for `workload` (masters are added by the caller).
    pub fn flags(&self, workload: &str) -> Vec<String> {
        let cycles = if workload == "w1" {
            self.w1_cycles
        } else {
            self.w2_cycles
        };
        [
            ("--workload", workload.to_string()),
            ("--cycles", cycles.to_string()),
            ("--tasks", self.tasks.to_string()),
            ("--seconds", self.w3_seconds.to_string()),
            ("--ttl", self.ttl_seconds.to_string()),
        ]
        .into_iter()
        .flat_map(|(flag, value)| [flag.to_string(), value])
        .collect()
    }

    /// One line describing a workload, for the table headings.
    pub fn describe(&self, workload: &str) -> String {
        match workload {
            "w1" => format!(
                "W1: 1 client, {} serial acquire + release cycles (cycles/s)",
                self.w1_cycles
            ),
            "w2" => format!(
                "W2: {} tasks on one shared client, {} cycles each on its own key (cycles/s)",
                self.tasks, self.w2_cycles
            ),
            _ => format!(
                "W3: {} tasks on one key, 100 retries of 10–20 ms, {} s (acquisitions/s)",
                self.tasks, self.w3_seconds
            ),
        }
    }
}
