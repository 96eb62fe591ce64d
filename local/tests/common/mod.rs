//! Helpers shared by the integration tests of redlock-local.
#![allow(dead_code)] // each test binary uses a different subset

use std::io::{BufRead, BufReader};
use std::process::Child;
use std::sync::mpsc;

/// The lines `process` writes to its (piped) stdout, read by a thread so that every wait for
/// one can be bounded (`recv_timeout`).
pub fn stdout_lines(process: &mut Child) -> mpsc::Receiver<String> {
    let stdout = process.stdout.take().expect("piped stdout");
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    lines
}

/// The lines `process` writes to its (piped) stderr, like [`stdout_lines`].
pub fn stderr_lines(process: &mut Child) -> mpsc::Receiver<String> {
    let stderr = process.stderr.take().expect("piped stderr");
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    lines
}
