//! The HTML report's markup: the page around the sections, its style, a chart's frame, text
//! escaping and number formatting (never `NaN` on a page).

use std::fmt::Write as _;

const STYLE: &str = "body{font-family:sans-serif;max-width:1180px;margin:1em auto;padding:0 1em;color:#222}\
h1{font-size:1.5em}h2{margin-top:1.6em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}\
th{background:#f2f2f2}td:first-child,th:first-child{text-align:left}\
.answer{font-size:1.15em;background:#f4f8ff;border:1px solid #b8cff0;padding:.6em 1em}\
.warn{background:#fff0e0;border:1px solid #e0a060;padding:.6em 1em;font-weight:bold}\
.ok{color:#1a7f37}.bad{color:#b42318;font-weight:bold}\
.chart svg{width:100%;height:auto;border:1px solid #eee}\
.config td{text-align:left}.bar{display:inline-block;height:.8em;background:#1f77b4;vertical-align:middle}\
pre{white-space:pre-wrap;background:#f7f7f7;padding:.6em}";

/// Text with `<`, `>`, `&` and quotes escaped.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A finished page around `body`.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\
         <style>{STYLE}</style></head><body>\n<h1>{}</h1>\n{body}</body></html>\n",
        escape(title),
        escape(title)
    )
}

/// A chart in its figure (an SVG drawn by [`charts`]).
pub fn chart(out: &mut String, svg: &str) {
    let svg = svg.trim_start();
    // The SVG backend writes no XML declaration; strip one if it ever does.
    let svg = match svg.strip_prefix("<?xml") {
        Some(rest) => rest.split_once("?>").map_or(rest, |(_, s)| s),
        None => svg,
    };
    let _ = writeln!(out, "<div class=\"chart\">{svg}</div>");
}

/// `x` with `digits` decimals ("–" when not a finite number).
pub fn num(x: f64, digits: usize) -> String {
    if x.is_finite() {
        format!("{x:.digits$}")
    } else {
        "–".into()
    }
}

/// A share as a percentage.
pub fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:.2}%", 100.0 * x)
    } else {
        "–".into()
    }
}
