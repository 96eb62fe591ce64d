//! The HTML report's markup: the page around the sections, its style, a chart's frame and
//! number formatting (never `NaN` on a page). Pages are built with `maud`, whose `html!`
//! escapes every spliced value: text reaches a page only escaped, except the charts' SVG
//! ([`chart`]).

use maud::{html, Markup, PreEscaped, DOCTYPE};

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

/// A finished page around `body`.
pub fn page(title: &str, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head { meta charset="utf-8"; title { (title) } style { (PreEscaped(STYLE)) } }
            body { h1 { (title) } (body) }
        }
    }
    .into_string()
}

/// A chart in its figure (an SVG drawn by [`super::charts`]).
pub fn chart(svg: &str) -> Markup {
    let svg = svg.trim_start();
    // The SVG backend writes no XML declaration; strip one if it ever does.
    let svg = match svg.strip_prefix("<?xml") {
        Some(rest) => rest.split_once("?>").map_or(rest, |(_, s)| s),
        None => svg,
    };
    // Safe unescaped: plotters' SVG backend escapes `<`, `>`, `&` and quotes in every text
    // and attribute it writes (titles, legends, fault labels; the test below and
    // loadgen/tests/html_escaping.rs check it), so a label cannot close the `<svg>`.
    html! { div.chart { (PreEscaped(svg)) } }
}

/// A table: its header row, then `rows` (each a `tr`).
pub fn table(headers: &[&str], rows: impl IntoIterator<Item = Markup>) -> Markup {
    html! {
        table {
            tr { @for h in headers { th { (h) } } }
            @for r in rows { (r) }
        }
    }
}

/// A body row of `cells` (escaped as they are spliced).
pub fn row<T: maud::Render>(cells: impl IntoIterator<Item = T>) -> Markup {
    html! { tr { @for c in cells { td { (c) } } } }
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

#[cfg(test)]
mod tests {
    use crate::render::chart::{self, Axes, PALETTE, PLOT_SIZE};

    /// What makes [`super::chart`]'s unescaped SVG safe: plotters escapes the text it draws
    /// (title, axis description, legend).
    #[test]
    fn plotters_escapes_the_text_it_draws() {
        let label = "</svg><script>alert(1)</script>\"'&";
        let axes = Axes {
            x: label,
            y: "y",
            x_labels: None,
            margin_right: 30,
        };
        let line = vec![(0.0, 0.0), (1.0, 1.0)];
        let svg = chart::svg(PLOT_SIZE, label, axes, 0f64..1.0, 0f64..1.0, |c| {
            chart::line(c, line, PALETTE[0], 2, label.to_string())
        })
        .unwrap();
        assert!(!svg.contains("<script") && svg.matches("</svg>").count() == 1);
        assert_eq!(
            svg.matches("&lt;/svg&gt;&lt;script&gt;").count(),
            3,
            "{svg}"
        );
    }
}
