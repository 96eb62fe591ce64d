//! Masters whose wall clock can jump: each runs under Debian's libfaketime (`LD_PRELOAD` of
//! `libfaketime.so.1`) reading its offset from a file of its own (`FAKETIME_TIMESTAMP_FILE`,
//! read at every call: `FAKETIME_NO_CACHE=1`), with the monotonic clock left real
//! (`FAKETIME_DONT_FAKE_MONOTONIC=1`). Writing a new offset into a master's file jumps that
//! master's wall clock, and nothing else: Redis and Valkey expire keys by the wall clock.
//! libfaketime may answer a call or two after the write with the old offset, so the caller
//! confirms the jump with the master's `TIME` (see `LocalMasters::shift_clock`).
//!
//! jemalloc builds (Debian's redis-server) hang under libfaketime (jemalloc's
//! `clock_gettime` recursion, libfaketime issues #130 and #478), so they are refused.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::LocalError;
use crate::resp::Reply;

/// Names the libfaketime library to preload (default: Debian's, found under /usr/lib).
pub const FAKETIME_LIB_ENV: &str = "REDLOCK_FAKETIME_LIB";

const INSTALL_HINT: &str = "install it with `sudo apt-get install libfaketime` (`make deps` does), or point REDLOCK_FAKETIME_LIB at libfaketime.so.1";

/// The libfaketime library to preload.
pub(super) fn library() -> Result<PathBuf, LocalError> {
    if let Some(path) = std::env::var_os(FAKETIME_LIB_ENV) {
        return Ok(PathBuf::from(path));
    }
    let mut candidates = vec![
        PathBuf::from("/usr/lib/faketime/libfaketime.so.1"),
        PathBuf::from("/usr/local/lib/faketime/libfaketime.so.1"),
    ];
    // Debian puts it under the multiarch directory (x86_64-linux-gnu, aarch64-linux-gnu, ...).
    if let Ok(entries) = std::fs::read_dir("/usr/lib") {
        for entry in entries.flatten() {
            candidates.push(entry.path().join("faketime/libfaketime.so.1"));
        }
    }
    candidates
        .into_iter()
        .find(|p| p.is_file())
        .ok_or_else(|| LocalError::NotInstalled {
            server: "libfaketime".into(),
            binary: "libfaketime.so.1".into(),
            hint: INSTALL_HINT,
        })
}

/// Refuses a server built with jemalloc (its `--version` says `malloc=jemalloc`).
pub(super) fn check_server(binary: &Path) -> Result<(), LocalError> {
    let out = Command::new(binary)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()?;
    let version = String::from_utf8_lossy(&out.stdout);
    if version.contains("malloc=jemalloc") {
        return Err(LocalError::NoFakeClock {
            binary: binary.display().to_string(),
            reason: format!(
                "it is built with jemalloc ({}), which hangs under libfaketime (jemalloc's clock_gettime recursion); use a libc-allocator build: `--server valkey` after `make deps-valkey`",
                version.trim()
            ),
        });
    }
    Ok(())
}

/// The file master `index`'s offset is read from.
pub(super) fn offset_file(dir: &Path, index: usize) -> PathBuf {
    dir.join(format!("clock-{index}"))
}

/// Writes `offset_ms` (from the real wall clock) for a master to read at its next clock call;
/// written beside and renamed, so the master never reads half a file.
pub(super) fn write_offset(dir: &Path, index: usize, offset_ms: i64) -> Result<(), LocalError> {
    let file = offset_file(dir, index);
    let staged = dir.join(format!("clock-{index}.new"));
    let sign = if offset_ms < 0 { '-' } else { '+' };
    let ms = offset_ms.unsigned_abs();
    std::fs::write(&staged, format!("{sign}{}.{:03}\n", ms / 1000, ms % 1000))?;
    std::fs::rename(&staged, &file)?;
    Ok(())
}

/// The real wall clock, in ms since the epoch.
pub(super) fn real_now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// A `TIME` reply (seconds and microseconds, as bulk strings) in ms since the epoch.
pub(super) fn time_reply_ms(reply: &Reply) -> Option<i64> {
    let Reply::Array(parts) = reply else {
        return None;
    };
    let number = |part: &Reply| match part {
        Reply::Bulk(bytes) => std::str::from_utf8(bytes).ok()?.parse::<i64>().ok(),
        _ => None,
    };
    match parts.as_slice() {
        [secs, micros] => Some(number(secs)? * 1000 + number(micros)? / 1000),
        _ => None,
    }
}

/// True when a clock seen `shown_ms` off the real one is nearer the `new` offset than the
/// `old` one.
pub(super) fn nearer_new(shown_ms: i64, old: i64, new: i64) -> bool {
    (shown_ms - new).abs() < (shown_ms - old).abs()
}

/// The environment of a master under libfaketime.
pub(super) fn add_env(command: &mut Command, library: &Path, file: &Path) {
    command
        .env("LD_PRELOAD", library)
        .env("FAKETIME_TIMESTAMP_FILE", file)
        .env("FAKETIME_NO_CACHE", "1")
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_written_in_seconds_with_their_sign() {
        let dir = tempfile::tempdir().unwrap();
        write_offset(dir.path(), 2, 120_000).unwrap();
        let read = || std::fs::read_to_string(offset_file(dir.path(), 2)).unwrap();
        assert_eq!(read(), "+120.000\n");
        write_offset(dir.path(), 2, -1_500).unwrap();
        assert_eq!(read(), "-1.500\n");
        write_offset(dir.path(), 2, 0).unwrap();
        assert_eq!(read(), "+0.000\n");
    }

    #[test]
    fn a_time_reply_reads_in_ms_and_a_clock_is_placed_by_its_nearer_offset() {
        let bulk = |s: &str| Reply::Bulk(s.as_bytes().to_vec());
        let reply = Reply::Array(vec![bulk("1795816130"), bulk("141497")]);
        assert_eq!(time_reply_ms(&reply), Some(1_795_816_130_141));
        assert_eq!(
            time_reply_ms(&Reply::Array(vec![bulk("x"), bulk("1")])),
            None
        );
        assert_eq!(time_reply_ms(&Reply::Integer(1)), None);
        assert!(nearer_new(119_990, 0, 120_000));
        assert!(!nearer_new(3, 0, 120_000));
        assert!(nearer_new(2, 120_000, 0));
        assert!(!nearer_new(-400, -500, 500));
    }
}
