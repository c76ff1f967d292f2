//! Small, dependency-free SVG line charts for reports: where a curve says more than a table.
//!
//! One chart type is enough for kgap's findings (throughput against batch.size, latency
//! CDFs, heap after GC over time): lines with markers, a linear or log₂/log₁₀ x axis, a
//! linear y axis from zero, "nice" ticks, and a legend. The output is plain SVG 1.1 text that
//! renders on GitHub.

use std::fmt::Write;

/// How values map onto the x axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    Linear,
    /// Logarithmic with ticks at powers of the base (2 for sizes, 10 for latencies).
    Log(f64),
}

#[derive(Debug, Clone, Default)]
pub struct Series {
    pub label: String,
    /// The line: (x, y), a sweep's median at each x.
    pub points: Vec<(f64, f64)>,
    /// The spread behind each point, as `(x, min, max)` over its reps: drawn as a whisker
    /// through the point, since a verdict reads a difference against these ranges. Empty
    /// when the line is not a summary of reps (a CDF, a timeline).
    pub ranges: Vec<(f64, f64, f64)>,
}

#[derive(Debug, Clone)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_scale: Scale,
    /// Formats x tick values (e.g. bytes as 16K, 1M).
    pub x_format: fn(f64) -> String,
    pub y_format: fn(f64) -> String,
    pub series: Vec<Series>,
}

/// The plot area's size; the canvas grows around it to fit the title, the tick labels and
/// the legend, measured (see [`text_width`]), so no label is ever clipped.
const PLOT_W: f64 = 470.0;
const PLOT_H: f64 = 320.0;
const MIN_LEFT: f64 = 80.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;
/// Markers are drawn this far inside the plot's x edges, so a point at the first or last x
/// is a whole circle beside the axis, not half of one on it.
const INSET: f64 = 12.0;
/// One legend entry's height; the swatch and the gap before the label.
const LEGEND_ROW: f64 = 20.0;
const LEGEND_LEAD: f64 = 25.0;
const FONT: f64 = 12.0;
/// The legend's last entry when a series carries ranges.
const WHISKER_NOTE: &str = "min–max over reps";
const TITLE_FONT: f64 = 14.0;
/// Colour-blind-safe palette (Okabe–Ito).
const COLOURS: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000",
];

/// 16384 → "16K", 1048576 → "1M": sizes as the post writes them.
pub fn bytes_label(x: f64) -> String {
    if x >= 1048576.0 && (x / 1048576.0).fract() == 0.0 {
        format!("{}M", x / 1048576.0)
    } else if x >= 1024.0 && (x / 1024.0).fract() == 0.0 {
        format!("{}K", x / 1024.0)
    } else {
        format!("{x:.0}")
    }
}

/// 1234567 → "1.2M", 45000 → "45k".
pub fn si_label(y: f64) -> String {
    let a = y.abs();
    if a >= 1e6 {
        format!("{:.1}M", y / 1e6)
    } else if a >= 1e3 {
        format!("{:.0}k", y / 1e3)
    } else if a >= 1.0 || a == 0.0 {
        format!("{y:.0}")
    } else {
        format!("{y:.2}")
    }
}

pub fn plain_label(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// The width in px of `text` set in sans-serif at `size` px: DejaVu Sans's advances (the
/// widest common sans-serif, the fonts of most Linux desktops), rounded up per class of
/// character, so a box sized by it holds the text in any common sans-serif.
pub fn text_width(text: &str, size: f64) -> f64 {
    let em: f64 = text
        .chars()
        .map(|c| match c {
            'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' | 'I' => 0.30,
            ' ' | 'f' | 't' | 'r' | '(' | ')' | '[' | ']' | '-' | '/' => 0.42,
            'm' | 'w' | 'M' | 'W' | '%' | '@' => 0.98,
            '0'..='9' | 'a'..='z' => 0.64,
            'A'..='Z' | '&' | '#' => 0.78,
            c if c.is_ascii() => 0.64,
            // Arrows, µ, ≥, CJK: a full em (CJK is wider than Latin in every font).
            c if (c as u32) >= 0x2E80 => 1.0,
            _ => 0.8,
        })
        .sum();
    em * size
}

/// Text for SVG drawn inline in an HTML page or as a file: `&`, `<`, `>` and `"` as entities,
/// so a label (a topic, a client, a file name) is text in a <text> or an attribute, never
/// markup. Every SVG kgap draws passes its labels through here.
pub(crate) fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// "Nice" linear ticks from 0 to at least `max`: steps of 1, 2 or 5 × 10^k.
pub fn nice_ticks(max: f64, want: usize) -> Vec<f64> {
    if !(max > 0.0) || !max.is_finite() {
        return vec![0.0, 1.0];
    }
    let raw = max / want.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let n = (max / step).ceil() as usize;
    (0..=n).map(|i| i as f64 * step).collect()
}

impl LineChart {
    /// Renders the chart. Points with non-finite or (on a log axis) non-positive x are
    /// skipped; an empty chart still renders, with "no data".
    pub fn render(&self) -> String {
        self.render_on(None)
    }

    /// Renders the chart over a given x range (charts sharing a time axis), whatever the
    /// range of its own points.
    pub fn render_on_x_range(&self, xmin: f64, xmax: f64) -> String {
        self.render_on(Some((xmin, xmax)))
    }

    fn render_on(&self, x_range: Option<(f64, f64)>) -> String {
        let pts: Vec<(f64, f64)> = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().copied())
            .filter(|&(x, y)| self.x_ok(x) && y.is_finite())
            .collect();
        // The canvas around the plot: wide enough for the y tick labels, the legend's
        // longest label and the title; tall enough for every legend entry.
        let range_top = self
            .series
            .iter()
            .flat_map(|s| s.ranges.iter())
            .filter(|r| self.x_ok(r.0) && r.2.is_finite())
            .map(|r| r.2)
            .fold(0.0, f64::max);
        let yticks = nice_ticks(pts.iter().map(|p| p.1).fold(range_top, f64::max), 5);
        let widest_tick = yticks
            .iter()
            .map(|t| text_width(&(self.y_format)(*t), FONT))
            .fold(0.0, f64::max);
        let left = MIN_LEFT.max(widest_tick + 40.0);
        let whiskers = self.series.iter().any(|s| !s.ranges.is_empty());
        let widest_label = self
            .series
            .iter()
            .map(|s| text_width(&s.label, FONT))
            .chain(whiskers.then(|| text_width(WHISKER_NOTE, FONT)))
            .fold(0.0, f64::max);
        let right = if self.series.is_empty() {
            30.0
        } else {
            15.0 + LEGEND_LEAD + widest_label + 15.0
        };
        let w = (left + PLOT_W + right)
            .max(20.0 + text_width(&self.title, TITLE_FONT) * 1.1)
            .max(left + PLOT_W / 2.0 + text_width(&self.x_label, FONT) / 2.0 + 10.0)
            .ceil();
        let legend_h = 10.0 + (self.series.len() + whiskers as usize) as f64 * LEGEND_ROW;
        let h = (TOP + PLOT_H.max(legend_h) + BOTTOM).ceil();
        let right = w - left - PLOT_W;
        let mut svg = String::new();
        let _ = write!(
            svg,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="{FONT}">"#
        );
        let _ = write!(svg, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
        let _ = write!(
            svg,
            r#"<text x="10" y="22" font-size="14" font-weight="bold">{}</text>"#,
            escape(&self.title)
        );
        if pts.is_empty() {
            let _ = write!(
                svg,
                r#"<text x="{}" y="{}" text-anchor="middle">no data</text></svg>"#,
                w / 2.0,
                h / 2.0
            );
            svg.push('\n');
            return svg;
        }
        let (xmin, xmax) = x_range.unwrap_or_else(|| {
            pts.iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
                    (a.min(p.0), b.max(p.0))
                })
        });
        // A shared time axis shows only its own range: points outside it are not drawn.
        let in_range = |x: f64| {
            let slack = (xmax - xmin).abs() * 1e-9;
            x >= xmin - slack && x <= xmax + slack
        };
        let pts: Vec<(f64, f64)> = pts.into_iter().filter(|p| in_range(p.0)).collect();
        let ytop = *yticks.last().expect("ticks");
        let (fx0, fx1) = (self.fx(xmin), self.fx(xmax));
        let span = if fx1 > fx0 { fx1 - fx0 } else { 1.0 };
        // One x value alone sits in the middle, not on the axis.
        let px = |x: f64| {
            if fx1 > fx0 {
                left + INSET + (self.fx(x) - fx0) / span * (PLOT_W - 2.0 * INSET)
            } else {
                left + PLOT_W / 2.0
            }
        };
        let py = |y: f64| h - BOTTOM - y / ytop * (h - TOP - BOTTOM);

        // Grid and y ticks.
        for t in &yticks {
            let y = py(*t);
            let _ = write!(
                svg,
                r##"<line x1="{left}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e0e0e0"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                w - right,
                left - 6.0,
                y + 4.0,
                escape(&(self.y_format)(*t))
            );
        }
        // x ticks: powers of the base on a log axis, the data's own x values when few.
        for t in self.x_ticks(xmin, xmax, &pts) {
            let x = px(t);
            let _ = write!(
                svg,
                r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#999"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                h - BOTTOM,
                h - BOTTOM + 5.0,
                h - BOTTOM + 18.0,
                escape(&(self.x_format)(t))
            );
        }
        // Axes and labels.
        let _ = write!(
            svg,
            r##"<line x1="{left}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#333"/><line x1="{left}" y1="{TOP}" x2="{left}" y2="{:.1}" stroke="#333"/>"##,
            h - BOTTOM,
            w - right,
            h - BOTTOM,
            h - BOTTOM
        );
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            (left + w - right) / 2.0,
            h - 16.0,
            escape(&self.x_label)
        );
        let _ = write!(
            svg,
            r#"<text transform="translate(18 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
            (TOP + h - BOTTOM) / 2.0,
            escape(&self.y_label)
        );
        // Series.
        for (i, s) in self.series.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let mut p: Vec<(f64, f64)> = s
                .points
                .iter()
                .copied()
                .filter(|&(x, y)| self.x_ok(x) && y.is_finite() && in_range(x))
                .collect();
            p.sort_by(|a, b| a.0.total_cmp(&b.0));
            for &(x, lo, hi) in s
                .ranges
                .iter()
                .filter(|r| self.x_ok(r.0) && r.1.is_finite() && r.2.is_finite() && in_range(r.0))
            {
                let (cx, y0, y1) = (px(x), py(lo), py(hi));
                let _ = write!(
                    svg,
                    r#"<path d="M{cx:.1},{y0:.1}V{y1:.1}M{:.1},{y0:.1}H{:.1}M{:.1},{y1:.1}H{:.1}" fill="none" stroke="{colour}" stroke-width="1.5" opacity="0.7"><title>{}: {} → {} to {} (min to max over reps)</title></path>"#,
                    cx - 4.0,
                    cx + 4.0,
                    cx - 4.0,
                    cx + 4.0,
                    escape(&s.label),
                    escape(&(self.x_format)(x)),
                    escape(&(self.y_format)(lo)),
                    escape(&(self.y_format)(hi))
                );
            }
            let path: Vec<String> = p
                .iter()
                .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
                .collect();
            let _ = write!(
                svg,
                r#"<polyline fill="none" stroke="{colour}" stroke-width="2" points="{}"/>"#,
                path.join(" ")
            );
            for &(x, y) in &p {
                let _ = write!(
                    svg,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{colour}"><title>{}: {} → {}</title></circle>"#,
                    px(x),
                    py(y),
                    escape(&s.label),
                    escape(&(self.x_format)(x)),
                    escape(&(self.y_format)(y))
                );
            }
            let ly = TOP + 10.0 + i as f64 * LEGEND_ROW;
            let _ = write!(
                svg,
                r#"<line x1="{:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{colour}" stroke-width="3"/><text x="{:.1}" y="{:.1}">{}</text>"#,
                w - right + 15.0,
                w - right + 35.0,
                w - right + 15.0 + LEGEND_LEAD,
                ly + 4.0,
                escape(&s.label)
            );
        }
        if whiskers {
            let ly = TOP + 10.0 + self.series.len() as f64 * LEGEND_ROW;
            let x0 = w - right + 25.0;
            let _ = write!(
                svg,
                r##"<path d="M{x0:.1},{:.1}V{:.1}M{:.1},{:.1}H{:.1}M{:.1},{:.1}H{:.1}" fill="none" stroke="#555" stroke-width="1.5"/><text x="{:.1}" y="{:.1}">{WHISKER_NOTE}</text>"##,
                ly - 7.0,
                ly + 7.0,
                x0 - 4.0,
                ly - 7.0,
                x0 + 4.0,
                x0 - 4.0,
                ly + 7.0,
                x0 + 4.0,
                w - right + 15.0 + LEGEND_LEAD,
                ly + 4.0
            );
        }
        svg.push_str("</svg>\n");
        svg
    }

    fn x_ok(&self, x: f64) -> bool {
        x.is_finite() && (self.x_scale == Scale::Linear || x > 0.0)
    }

    fn fx(&self, x: f64) -> f64 {
        match self.x_scale {
            Scale::Linear => x,
            Scale::Log(_) => x.ln(),
        }
    }

    fn x_ticks(&self, xmin: f64, xmax: f64, pts: &[(f64, f64)]) -> Vec<f64> {
        let mut xs: Vec<f64> = pts.iter().map(|p| p.0).collect();
        xs.sort_by(|a, b| a.total_cmp(b));
        xs.dedup();
        if xs.len() <= 8 {
            return xs;
        }
        match self.x_scale {
            Scale::Log(base) => {
                let mut t = base.powf(xmin.log(base).floor());
                let mut v = Vec::new();
                while t <= xmax * 1.0001 {
                    if t >= xmin * 0.9999 {
                        v.push(t);
                    }
                    t *= base;
                }
                v
            }
            // Only ticks on the axis: nice_ticks rounds up past the last x.
            Scale::Linear => nice_ticks(xmax, 6)
                .into_iter()
                .filter(|t| *t >= xmin && *t <= xmax * 1.0001)
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(series: Vec<Series>) -> LineChart {
        LineChart {
            title: "msg/s against batch.size".into(),
            x_label: "batch.size".into(),
            y_label: "msg/s".into(),
            x_scale: Scale::Log(2.0),
            x_format: bytes_label,
            y_format: si_label,
            series,
        }
    }

    #[test]
    fn renders_every_point_and_a_legend_entry_per_series() {
        let svg = chart(vec![
            Series {
                label: "1 partition".into(),
                points: vec![(16384.0, 233e3), (65536.0, 577e3), (1048576.0, 991e3)],
                ranges: vec![],
            },
            Series {
                label: "6 <partitions>".into(),
                points: vec![(16384.0, 240e3), (1048576.0, 995e3)],
                ranges: vec![],
            },
        ])
        .render();
        assert!(svg.starts_with("<svg"));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<circle").count(), 5);
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains(">16K<") && svg.contains(">1M<"));
        // Labels are escaped.
        assert!(svg.contains("6 &lt;partitions&gt;"));
    }

    #[test]
    fn empty_and_degenerate_data_still_render() {
        assert!(chart(vec![]).render().contains("no data"));
        let svg = chart(vec![Series {
            label: "x".into(),
            points: vec![(0.0, 1.0), (f64::NAN, 2.0), (1024.0, 5.0)],
            ranges: vec![],
        }])
        .render();
        assert_eq!(svg.matches("<circle").count(), 1);
        assert!(!svg.contains("NaN"));
    }

    #[test]
    fn a_sweep_draws_each_points_min_max_beside_its_median() {
        let c = chart(vec![Series {
            label: "librdkafka".into(),
            points: vec![(16384.0, 200e3), (1048576.0, 900e3)],
            ranges: vec![(16384.0, 150e3, 260e3), (1048576.0, 880e3, 1_300e3)],
        }]);
        let svg = c.render();
        // One whisker per point, and the y axis reaches the highest max, not the median.
        assert_eq!(svg.matches("(min to max over reps)").count(), 2);
        assert!(svg.contains(">1.5M<"), "{svg}");
        assert!(svg.contains(WHISKER_NOTE));
        // Without ranges, no whisker and no legend entry for them.
        let plain = chart(vec![Series {
            label: "x".into(),
            points: vec![(1024.0, 5.0)],
            ranges: vec![],
        }])
        .render();
        assert!(!plain.contains(WHISKER_NOTE));
    }

    #[test]
    fn ticks_and_labels() {
        assert_eq!(
            nice_ticks(990e3, 5),
            vec![0.0, 200e3, 400e3, 600e3, 800e3, 1e6]
        );
        assert_eq!(nice_ticks(0.0, 5), vec![0.0, 1.0]);
        assert_eq!(bytes_label(16384.0), "16K");
        assert_eq!(bytes_label(1048576.0), "1M");
        assert_eq!(bytes_label(3000.0), "3000");
        assert_eq!(si_label(1_480_000.0), "1.5M");
        assert_eq!(si_label(389_000.0), "389k");
    }
}
