//! Hostile or damaged result files: `report` (with `--hlog`) and `merge` answer each with exit
//! 2 naming the field at fault, never by exhausting memory or CPU, never by a panic. The cases
//! are the red team's: an interval index of 10^9, a 56-character histogram declaring a 4 GiB
//! payload, a 2.7 MB zlib bomb, 5-significant-digit histograms, a 100 MB file, times that
//! overflow the interval log, counters summing past 2^64. A property test feeds mutated
//! results to the reader in-process (a bounded number of cases).
//!
//! Time and memory are measured in the report (`/usr/bin/time -v`), not asserted here.

use crate::common;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use base64::Engine as _;
use common::*;
use proptest::prelude::*;
use redlock_loadgen::model::document;
use redlock_loadgen::model::limits::{MAX_FILE_BYTES, MAX_HISTOGRAM_COUNTERS, MAX_INTERVAL_SLOTS};
use serde_json::{json, Value};

/// A short real run's result, shared by every test.
fn base() -> &'static Value {
    static BASE: OnceLock<Value> = OnceLock::new();
    BASE.get_or_init(|| short_run_json(&["--fanout", "concurrent", "--spawn", "3"]))
}

/// An uncompressed HdrHistogram V2 encoding with the header given and `payload` after it.
fn v2(digits: u32, high: u64, declared: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend(0x1c84_9313u32.to_be_bytes());
    out.extend(declared.to_be_bytes());
    out.extend(0u32.to_be_bytes());
    out.extend(digits.to_be_bytes());
    out.extend(1u64.to_be_bytes());
    out.extend(high.to_be_bytes());
    out.extend(1.0f64.to_be_bytes());
    out.extend(payload);
    out
}

/// The compressed form of `inner`.
fn compressed(inner: &[u8]) -> Vec<u8> {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(inner).unwrap();
    let z = z.finish().unwrap();
    let mut out = Vec::new();
    out.extend(0x1c84_9314u32.to_be_bytes());
    out.extend((z.len() as u32).to_be_bytes());
    out.extend(z);
    out
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn write(dir: &Path, name: &str, value: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(value).unwrap()).unwrap();
    path
}

/// `report FILE --hlog OUT` exits 2 with every one of `needles` in its message.
fn refused(file: &Path, needles: &[&str]) {
    let hlog = file.with_extension("hlog");
    let (_, stderr) = exits(2, &["report", s(file), "--hlog", s(&hlog)]);
    for needle in needles {
        assert!(stderr.contains(needle), "{needle:?} not in: {stderr}");
    }
}

/// The base result with `edit` applied to its first interval.
fn with_first_interval(edit: impl FnOnce(&mut Value)) -> Value {
    let mut v = base().clone();
    edit(&mut v["modes"][0]["intervals"][0]);
    v
}

#[test]
fn an_interval_index_of_a_billion_or_2_64_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    // 2^64 - 1: one past it does not fit the reader's own arithmetic (the repeats' check).
    for index in [1_000_000_000u64, u64::MAX] {
        let v = with_first_interval(|i| i["index"] = json!(index));
        let file = write(dir.path(), "index.json", &v);
        refused(
            &file,
            &[
                "modes[0].intervals[0].index",
                &index.to_string(),
                &MAX_INTERVAL_SLOTS.to_string(),
            ],
        );
    }
}

#[test]
fn a_56_character_histogram_declaring_4_gib_is_refused_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let hist = b64(&v2(3, 1 << 20, u32::MAX, &[]));
    assert_eq!(hist.len(), 56);
    let v = with_first_interval(|i| i["acquire_hdr"] = json!(hist));
    let file = write(dir.path(), "hist56.json", &v);
    refused(
        &file,
        &[
            "modes[0].intervals[0].acquire_hdr",
            "4294967295-byte payload",
        ],
    );
}

#[test]
fn a_zlib_bomb_is_refused_once_it_inflated_past_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    // 256 MiB of zeros compress to about 256 KB (the red team's 2.7 MB bomb, 2.7 GB
    // inflated, is refused the same way: the inflater stops at the limit, whatever follows).
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(&v2(3, 1 << 20, 0, &[])).unwrap();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..256 {
        z.write_all(&zeros).unwrap();
    }
    let z = z.finish().unwrap();
    assert!(z.len() > 100_000, "{}", z.len());
    let mut bomb = Vec::new();
    bomb.extend(0x1c84_9314u32.to_be_bytes());
    bomb.extend((z.len() as u32).to_be_bytes());
    bomb.extend(z);
    let v = with_first_interval(|i| i["attempt_hdr"] = json!(b64(&bomb)));
    let file = write(dir.path(), "bomb.json", &v);
    refused(
        &file,
        &["modes[0].intervals[0].attempt_hdr", "inflates to more than"],
    );
}

#[test]
fn five_significant_digit_histograms_are_refused_naming_the_digits() {
    let dir = tempfile::tempdir().unwrap();
    let wide = b64(&compressed(&v2(5, 1 << 62, 0, &[])));
    let mut v = base().clone();
    let first = v["modes"][0]["intervals"][0].clone();
    // About 50 KB of them.
    let intervals: Vec<Value> = (0..100)
        .map(|n| {
            let mut i = first.clone();
            i["index"] = json!(n % 2);
            for field in ["acquire_hdr", "attempt_hdr", "release_hdr"] {
                i[field] = json!(wide);
            }
            i
        })
        .collect();
    v["modes"][0]["intervals"] = json!(intervals);
    let file = write(dir.path(), "digits.json", &v);
    refused(
        &file,
        &["modes[0].intervals[0].acquire_hdr", "5 significant digits"],
    );
}

#[test]
fn many_wide_histograms_stop_at_the_files_counter_budget() {
    let dir = tempfile::tempdir().unwrap();
    // Each declares the widest range at 3 digits: about 55,000 counters for 60 characters.
    let wide = b64(&compressed(&v2(3, 1 << 62, 0, &[])));
    let mut v = base().clone();
    let first = v["modes"][0]["intervals"][0].clone();
    let needed = MAX_HISTOGRAM_COUNTERS / 50_000 + 1;
    let intervals: Vec<Value> = (0..needed / 3 + 1)
        .map(|n| {
            let mut i = first.clone();
            i["index"] = json!(n % 2);
            for field in ["acquire_hdr", "attempt_hdr", "release_hdr"] {
                i[field] = json!(wide);
            }
            i["round_trip_hdr"] = json!([]);
            i
        })
        .collect();
    v["modes"][0]["intervals"] = json!(intervals);
    let file = write(dir.path(), "wide.json", &v);
    refused(
        &file,
        &[
            "_hdr",
            &format!("more than {MAX_HISTOGRAM_COUNTERS} counters"),
        ],
    );
}

#[test]
fn a_file_above_the_size_limit_is_refused_with_both_figures_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.json");
    // Sparse: 100 MB long, nothing written.
    std::fs::File::create(&file)
        .unwrap()
        .set_len(100_000_000)
        .unwrap();
    refused(&file, &["100000000 bytes", &MAX_FILE_BYTES.to_string()]);
}

#[test]
fn times_that_would_overflow_the_interval_log_are_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let mut v = base().clone();
    v["modes"][0]["interval_ms"] = json!(1u64 << 63);
    refused(
        &write(dir.path(), "interval.json", &v),
        &["modes[0].interval_ms", "9223372036854775808"],
    );
    let mut v = base().clone();
    v["modes"][0]["measured_from_unix_ms"] = json!(u64::MAX);
    refused(
        &write(dir.path(), "from.json", &v),
        &["modes[0].measured_from_unix_ms", "year 9999"],
    );
}

#[test]
fn repeat_spans_past_the_intervals_or_out_of_order_are_refused_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let n = base()["modes"][0]["intervals"].as_array().unwrap().len();
    let spans = |spans: Value| {
        let mut v = base().clone();
        v["modes"][0]["repeats"] = spans;
        v
    };
    let span = |first: usize, intervals: usize, duration_s: f64| json!({"first_interval": first, "intervals": intervals, "duration_s": duration_s, "measured_from_unix_ms": 0});
    let past = spans(json!([span(0, 1, 0.1), span(1, n + 500, 0.1)]));
    refused(
        &write(dir.path(), "past.json", &past),
        &["modes[0].repeats[1].intervals", &(n + 500).to_string()],
    );
    let gap = spans(json!([span(0, 1, 0.1), span(2, 1, 0.1)]));
    refused(
        &write(dir.path(), "gap.json", &gap),
        &["modes[0].repeats[1].first_interval", "2"],
    );
    let negative = spans(json!([span(0, 1, -1.0), span(1, 1, 0.1)]));
    refused(
        &write(dir.path(), "negative.json", &negative),
        &["modes[0].repeats[0].duration_s", "-1"],
    );
    // `compare` reads the same way: refused, not a panic.
    let (_, stderr) = exits(
        2,
        &[
            "compare",
            s(&write(dir.path(), "c.json", &past)),
            s(&write(dir.path(), "d.json", base())),
        ],
    );
    assert!(stderr.contains("repeats[1].intervals"), "{stderr}");
}

#[test]
fn counters_that_sum_past_2_64_saturate_instead_of_panicking() {
    let dir = tempfile::tempdir().unwrap();
    let mut v = base().clone();
    let mut first = v["modes"][0]["intervals"][0].clone();
    first["index"] = json!(0);
    first["acquired"] = json!(u64::MAX);
    // Twice at the same index: the counts add.
    v["modes"][0]["intervals"] = json!([first.clone(), first]);
    // Calls started = finished + cancelled, both at the top of their range.
    v["modes"][0]["counts"]["acquire_calls"] = json!(u64::MAX);
    v["modes"][0]["counts"]["cancelled_calls"] = json!(u64::MAX);
    let file = write(dir.path(), "sum.json", &v);
    let hlog = dir.path().join("sum.hlog");
    succeed(&["report", s(&file), "--hlog", s(&hlog)]);
}

#[test]
fn merging_parts_measured_years_apart_is_refused_naming_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.json", base());
    let mut later = base().clone();
    // Another run (the same run twice is refused for another reason).
    later["run_id"] = json!("feedfeedfeedfeedfeedfeedfeedfeed");
    later["part_run_ids"] = json!(["feedfeedfeedfeedfeedfeedfeedfeed"]);
    for m in later["modes"].as_array_mut().unwrap() {
        let from = m["measured_from_unix_ms"].as_u64().unwrap();
        m["measured_from_unix_ms"] = json!(from + 10 * 365 * 86_400_000);
    }
    let b = write(dir.path(), "b.json", &later);
    let (_, stderr) = exits(
        2,
        &["merge", s(&a), s(&b), "--allow-disjoint", "--json", "-"],
    );
    assert!(
        stderr.contains("measured_from_unix_ms") && stderr.contains("slots"),
        "{stderr}"
    );
}

/// A mutation of a result's text.
#[derive(Debug, Clone)]
enum Mutation {
    /// Overwrite one byte.
    Byte(usize, u8),
    /// Cut the text here.
    Cut(usize),
    /// Replace the n-th number with this one.
    Number(usize, String),
    /// Replace the n-th histogram with this encoding.
    Histogram(usize, Vec<u8>),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let numbers = prop_oneof![
        Just("0".to_string()),
        Just("-1".to_string()),
        Just(u64::MAX.to_string()),
        Just("18446744073709551616".to_string()),
        Just("1e308".to_string()),
        Just("4294967295".to_string()),
        (0u64..=u64::MAX).prop_map(|n| n.to_string()),
    ];
    let histograms = (
        0u32..8,
        0u64..=u64::MAX,
        prop_oneof![Just(u32::MAX), 0u32..64],
        proptest::collection::vec(any::<u8>(), 0..32),
        any::<bool>(),
    )
        .prop_map(|(digits, high, declared, payload, compress)| {
            let raw = v2(digits, high, declared, &payload);
            if compress {
                compressed(&raw)
            } else {
                raw
            }
        });
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Mutation::Byte(at, b)),
        any::<usize>().prop_map(Mutation::Cut),
        (any::<usize>(), numbers).prop_map(|(n, x)| Mutation::Number(n, x)),
        (any::<usize>(), histograms).prop_map(|(n, h)| Mutation::Histogram(n, h)),
    ]
}

fn apply(text: &str, mutations: &[Mutation]) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for m in mutations {
        match m {
            Mutation::Byte(at, b) => {
                let at = at % bytes.len().max(1);
                if let Some(slot) = bytes.get_mut(at) {
                    *slot = *b;
                }
            }
            Mutation::Cut(at) => {
                let at = at % (bytes.len() + 1);
                bytes.truncate(at);
            }
            Mutation::Number(n, x) => bytes = replace_nth(&bytes, n, x, is_number_start),
            Mutation::Histogram(n, h) => {
                bytes = replace_nth(&bytes, n, &b64(h), |b: &[u8], i| {
                    b[i..].starts_with(b"HISTF") || b[i..].starts_with(b"HISTi")
                })
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

fn is_number_start(b: &[u8], i: usize) -> bool {
    b[i].is_ascii_digit() && i > 0 && matches!(b[i - 1], b' ' | b':' | b'[' | b',')
}

/// Replaces the n-th (modulo their count) token starting where `starts` says, up to the next
/// delimiter, with `with`.
fn replace_nth(b: &[u8], n: &usize, with: &str, starts: impl Fn(&[u8], usize) -> bool) -> Vec<u8> {
    let starts_at: Vec<usize> = (0..b.len()).filter(|&i| starts(b, i)).collect();
    if starts_at.is_empty() {
        return b.to_vec();
    }
    let from = starts_at[n % starts_at.len()];
    let to = (from..b.len())
        .find(|&i| matches!(b[i], b',' | b'}' | b']' | b'"' | b'\n' | b' '))
        .unwrap_or(b.len());
    [&b[..from], with.as_bytes(), &b[to..]].concat()
}

proptest! {
    // Bounded by count, not time: each case reads one mutated result.
    #![proptest_config(ProptestConfig { cases: 1024, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_results_read_or_are_refused_never_panic(
        mutations in proptest::collection::vec(mutation(), 1..4)
    ) {
        let text = apply(&serde_json::to_string_pretty(base()).unwrap(), &mutations);
        match document::parse(&text) {
            Ok(doc) => {
                // What reads also renders, the interval log included.
                if let Some(report) = doc.into_run() {
                    let _ = redlock_loadgen::render::hlog::render(&report);
                }
            }
            Err(e) => prop_assert!(!e.is_empty()),
        }
    }
}

/// The most a reader may hold per byte of the result file it reads (the book's results page).
const READ_AMPLIFICATION: u64 = 10;

/// Forks the command given as arguments (its output to /dev/null), waits for it, and prints
/// its peak resident memory (KiB) and exit code.
const MEASURE: &str = r#"
import os, sys
pid = os.fork()
if pid == 0:
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(usage.ru_maxrss, os.waitstatus_to_exitcode(status))
"#;

/// The peak resident memory (bytes) of `redlock-loadgen ARGS`, which must exit `code`. Measured
/// by a small Python parent that forks it: a child spawned from this test process would count
/// this process's own peak as its own (vfork shares the memory until exec, whose high-water
/// mark the child keeps), and the suite's other tests move that peak.
fn peak_memory(args: &[&str], code: i32) -> u64 {
    let out = std::process::Command::new("python3")
        .args(["-c", MEASURE, env!("CARGO_BIN_EXE_redlock-loadgen")])
        .args(args)
        .output()
        .expect("python3 runs");
    let said = text(&out.stdout);
    let mut words = said.split_whitespace();
    let (kib, exit) = (words.next(), words.next());
    let exit: i32 = exit
        .and_then(|e| e.parse().ok())
        .unwrap_or_else(|| panic!("{args:?}: no measurement: {said} {}", text(&out.stderr)));
    assert_eq!(exit, code, "{args:?}");
    kib.and_then(|k| k.parse::<u64>().ok()).expect("KiB") * 1024
}

/// A run of 400 intervals (the base's first interval repeated; about 1 MB) and a second run
/// like it.
fn long_runs(dir: &Path) -> (PathBuf, PathBuf) {
    let mut v = base().clone();
    let mode = &mut v["modes"][0];
    let first = mode["intervals"][0].clone();
    let intervals: Vec<Value> = (0..400)
        .map(|i| {
            let mut interval = first.clone();
            interval["index"] = json!(i);
            interval
        })
        .collect();
    mode["intervals"] = json!(intervals);
    mode["duration_s"] = json!(400.0 * mode["interval_ms"].as_f64().unwrap() / 1000.0);
    v["modes"] = json!([mode.clone()]);
    let a = write(dir, "a.json", &v);
    v["run_id"] = json!("another-run");
    v["part_run_ids"] = json!(["another-run"]);
    (a, write(dir, "b.json", &v))
}

/// `report`, `report --html` and `merge` hold at most 10 bytes per byte of what they read,
/// above what reading a tiny result costs (each interval's histogram was decoded to a dense
/// array, all at once: 41× to 81× before).
#[test]
fn readers_hold_at_most_ten_times_the_files_they_read() {
    let dir = tempfile::tempdir().unwrap();
    let small = write(dir.path(), "small.json", base());
    let (a, b) = long_runs(dir.path());
    let html = dir.path().join("page.html");
    let merged = dir.path().join("merged.json");
    let long_bytes = std::fs::metadata(&a).unwrap().len();
    let floor = peak_memory(&["report", s(&small)], 0);
    for (args, reads) in [
        (vec!["report", s(&a)], long_bytes),
        (vec!["report", s(&a), "--html", s(&html)], long_bytes),
        (
            vec!["merge", s(&a), s(&b), "--json", s(&merged)],
            2 * long_bytes,
        ),
    ] {
        let held = peak_memory(&args, 0).saturating_sub(floor);
        assert!(
            held <= READ_AMPLIFICATION * reads,
            "{args:?}: {held} bytes above a tiny file's {floor} for {reads} bytes read"
        );
    }
}
