//! `--svg`: heap after GC (% of the maximum) above, pause times below, on the log's
//! clock. Plain SVG text, no dependency; points are the bounded series of the report.

use std::fmt::Write as _;

use super::report::GcReport;
use super::series::Point;
use crate::vocab::svg::escape;

const W: f64 = 800.0;
const PANEL_H: f64 = 160.0;
const LEFT: f64 = 60.0;
const RIGHT: f64 = 20.0;
// Room above each panel for its label, so points at 100% never draw over it.
const TOP: f64 = 44.0;
const GAP: f64 = 50.0;
// Points sit this far inside the frame, so the first and last are drawn whole.
const INSET: f64 = 6.0;

/// Colours by point kind (`Point::kind`): young GC, full GC, concurrent cycle, degenerated.
const COLOURS: [&str; 4] = ["#1f77b4", "#d62728", "#7f7f7f", "#ff7f0e"];

impl GcReport {
    /// The SVG of heap after GC and pause times.
    pub fn render_svg(&self) -> String {
        render(self)
    }
}

pub fn render(r: &GcReport) -> String {
    let h = TOP + 2.0 * PANEL_H + GAP + 40.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h}" viewBox="0 0 {W} {h}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let title = format!(
        "{} — {}",
        escape(&r.files.join(", ")),
        escape(r.collector.as_deref().unwrap_or("GC"))
    );
    let _ = writeln!(
        s,
        r#"<text x="{LEFT}" y="18" font-size="13">{title}</text>"#
    );
    let all = r.heap_points.iter().chain(r.pause_points.iter());
    let (t0, t1) = all.fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.t), b.max(p.t)));
    if t0 > t1 {
        let _ = writeln!(
            s,
            r#"<text x="{LEFT}" y="60">no timed GC events to plot</text></svg>"#
        );
        return s;
    }
    let span = (t1 - t0).max(1e-3);
    let x = |t: f64| LEFT + INSET + (t - t0) / span * (W - LEFT - RIGHT - 2.0 * INSET);
    // Heap panel: 0..100 %, with the collapse line at 80 %.
    let y0 = TOP;
    panel(
        &mut s,
        y0,
        "heap after GC",
        100.0,
        &[0.0, 25.0, 50.0, 75.0, 100.0],
        "% of max",
    );
    let plot_h = PANEL_H - 2.0 * INSET;
    let hy = |v: f64| y0 + PANEL_H - INSET - v.clamp(0.0, 100.0) / 100.0 * plot_h;
    let _ = writeln!(
        s,
        r##"<line x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#d62728" stroke-dasharray="4 3"/>"##,
        W - RIGHT,
        y = hy(80.0)
    );
    for p in &r.heap_points {
        dot(&mut s, x(p.t), hy(p.v), p);
    }
    // Pause panel: 0..max ms, one stem per point.
    let py0 = TOP + PANEL_H + GAP;
    let longest = r.pause_points.iter().map(|p| p.v).fold(0.0, f64::max);
    let ticks = crate::vocab::svg::nice_ticks(longest.max(1e-3), 4);
    let pmax = ticks.last().copied().unwrap_or(1.0);
    panel(&mut s, py0, "pause", pmax, &ticks, "ms");
    let py = |v: f64| py0 + PANEL_H - INSET - v / pmax * plot_h;
    for p in &r.pause_points {
        let _ = writeln!(
            s,
            r#"<line x1="{x:.1}" x2="{x:.1}" y1="{b:.1}" y2="{y:.1}" stroke="{c}"/>"#,
            x = x(p.t),
            b = py0 + PANEL_H - INSET,
            y = py(p.v),
            c = COLOURS[p.kind as usize % COLOURS.len()]
        );
    }
    let axis_y = py0 + PANEL_H + 16.0;
    let _ = writeln!(
        s,
        r#"<text x="{LEFT}" y="{axis_y}">{t0:.1} s</text><text x="{}" y="{axis_y}" text-anchor="end">{t1:.1} s ({} clock)</text>"#,
        W - RIGHT,
        r.clock
    );
    let _ = writeln!(
        s,
        r##"<text x="{LEFT}" y="{}" xml:space="preserve"><tspan fill="{}">■ young GC</tspan>  <tspan fill="{}">■ full GC</tspan>  <tspan fill="{}">■ concurrent cycle</tspan>  <tspan fill="{}">■ degenerated</tspan>  <tspan fill="#d62728">- - 80% of max</tspan></text>"##,
        axis_y + 16.0,
        COLOURS[0],
        COLOURS[1],
        COLOURS[2],
        COLOURS[3]
    );
    s.push_str("</svg>\n");
    s
}

/// A panel's frame, its label above it, and labelled y ticks with light grid lines.
fn panel(s: &mut String, y0: f64, label: &str, max: f64, ticks: &[f64], unit: &str) {
    let _ = writeln!(
        s,
        r##"<rect x="{LEFT}" y="{y0}" width="{}" height="{PANEL_H}" fill="none" stroke="#999"/>"##,
        W - LEFT - RIGHT
    );
    let plot_h = PANEL_H - 2.0 * INSET;
    for &v in ticks {
        let y = y0 + PANEL_H - INSET - v / max * plot_h;
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#e5e5e5"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            W - RIGHT,
            LEFT - 4.0,
            y + 4.0,
            crate::vocab::svg::plain_label(v)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{LEFT}" y="{}">{} ({unit})</text>"#,
        y0 - 6.0,
        escape(label)
    );
}

fn dot(s: &mut String, x: f64, y: f64, p: &Point) {
    let _ = writeln!(
        s,
        r#"<circle cx="{x:.1}" cy="{y:.1}" r="2" fill="{}"/>"#,
        COLOURS[p.kind as usize % COLOURS.len()]
    );
}
