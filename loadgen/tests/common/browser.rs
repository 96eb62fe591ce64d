//! The HTML reports checked in a real browser (headless Chromium) and the interval logs read
//! back by HdrHistogram's own Java `HistogramLogProcessor`. `make deps` installs both where
//! missing (`deps-chromium`, `deps-hdrhistogram`).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::text;

/// The SVG namespace: a name, not a reference to anything fetched.
const SVG_NAMESPACE: &str = "xmlns=\"http://www.w3.org/2000/svg\"";

/// Where the screenshots are kept (under target/, for people to look at).
pub fn screenshot_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn chromium() -> &'static str {
    let found = Command::new("chromium").arg("--version").output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "chromium is not installed: `make deps-chromium` installs it"
    );
    "chromium"
}

/// Asserts the page at `html` refers to nothing outside itself, renders in headless Chromium
/// without a console message, shows at least `min_charts` charts each with data drawn and no
/// NaN/undefined, and does not screenshot blank; returns the rendered DOM. The screenshot is
/// saved as `<name>.png` under [`screenshot_dir`].
pub fn check_in_browser(html: &Path, name: &str, min_charts: usize) -> String {
    let source = std::fs::read_to_string(html).unwrap();
    let bare = source.replace(SVG_NAMESPACE, "");
    for external in [
        "http:", "https:", "src=", "href=", "url(", "@import", "<script",
    ] {
        assert!(
            !bare.contains(external),
            "{name}: the page refers to something outside itself ({external})"
        );
    }
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}", html.canonicalize().unwrap().display());
    let run = |extra: &[&str]| {
        let out = Command::new(chromium())
            .args([
                "--headless",
                "--disable-gpu",
                "--no-sandbox",
                "--hide-scrollbars",
                "--enable-logging=stderr",
                "--v=0",
                "--window-size=1400,3000",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args(extra)
            .arg(&url)
            .output()
            .expect("chromium runs");
        assert!(
            out.status.success(),
            "{name}: chromium failed: {}",
            text(&out.stderr)
        );
        out
    };
    let dom = run(&["--dump-dom"]);
    let stderr = text(&dom.stderr);
    for line in stderr.lines() {
        assert!(
            !line.contains(":CONSOLE") && !line.contains("Uncaught"),
            "{name}: the page wrote to the console: {line}"
        );
    }
    let dom = text(&dom.stdout);
    for bad in ["NaN", "undefined"] {
        assert!(!dom.contains(bad), "{name}: the page shows {bad}");
    }
    let charts: Vec<&str> = dom.split("<div class=\"chart\">").skip(1).collect();
    assert!(
        charts.len() >= min_charts,
        "{name}: {} charts, expected at least {min_charts}",
        charts.len()
    );
    for (i, chart) in charts.iter().enumerate() {
        let svg = chart.split("</svg>").next().unwrap();
        assert!(
            svg.contains("<svg") && svg.contains("<polyline"),
            "{name}: chart {i} has no data drawn"
        );
    }
    // Taken into this test's own directory and checked there, then published by rename: copies
    // of the suite running at once never read one another's half-written picture.
    let own = profile.path().join(format!("{name}.png"));
    run(&[&format!("--screenshot={}", own.display())]);
    assert_not_blank(&own, name);
    let published = screenshot_dir().join(format!("{name}.png"));
    let staged = tempfile::NamedTempFile::new_in(screenshot_dir()).unwrap();
    std::fs::copy(&own, staged.path()).unwrap();
    staged.persist(&published).unwrap();
    dom
}

/// Fails when the screenshot is (nearly) one colour.
fn assert_not_blank(png: &Path, name: &str) {
    let decoder = png::Decoder::new(std::fs::File::open(png).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).unwrap();
    let channels = info.color_type.samples();
    let pixels = &pixels[..info.buffer_size()];
    let total = pixels.len() / channels;
    let inked = pixels
        .chunks(channels)
        .filter(|p| p.iter().take(3).any(|&c| c < 200))
        .count();
    assert!(
        inked * 100 > total,
        "{name}: the screenshot {} is blank ({inked} of {total} pixels not white)",
        png.display()
    );
}

/// HdrHistogram's jar (`HDRHISTOGRAM_JAR`, else where Maven puts version 2.2.2).
fn hdrhistogram_jar() -> PathBuf {
    let jar = std::env::var_os("HDRHISTOGRAM_JAR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(&std::env::var_os("HOME").unwrap_or_default())
                .join(".m2/repository/org/hdrhistogram/HdrHistogram/2.2.2/HdrHistogram-2.2.2.jar")
        });
    assert!(
        jar.is_file(),
        "{}: no HdrHistogram jar: `make deps-hdrhistogram` installs it",
        jar.display()
    );
    jar
}

/// The total count `HistogramLogProcessor -i log [-tag tag]` reports.
pub fn log_processor_total(log: &Path, tag: Option<&str>) -> u64 {
    let mut cmd = Command::new("java");
    cmd.arg("-cp")
        .arg(hdrhistogram_jar())
        .arg("org.HdrHistogram.HistogramLogProcessor")
        .arg("-i")
        .arg(log);
    if let Some(tag) = tag {
        cmd.args(["-tag", tag]);
    }
    let out = cmd.output().expect("java runs (`make deps-hdrhistogram`)");
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "HistogramLogProcessor failed: {stdout}{}",
        text(&out.stderr)
    );
    // "#[Max     =        0.564, Total count    =        16307]"
    let line = stdout
        .lines()
        .find(|l| l.contains("Total count"))
        .unwrap_or_else(|| panic!("no total in HistogramLogProcessor's output:\n{stdout}"));
    line.split('=')
        .next_back()
        .unwrap()
        .trim_end_matches(']')
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{line}: {e}"))
}
