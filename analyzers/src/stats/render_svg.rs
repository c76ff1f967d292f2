//! `--svg-dir`: per client, throughput, latencies and queue depths over time, three charts
//! on one shared time axis (seconds since the client's first emit).

use super::chart::{ChartPoint, ClientChart};
use super::report::StatsReport;
use crate::vocab::svg::{plain_label, si_label, LineChart, Scale, Series};

fn series(
    label: &str,
    pts: &[ChartPoint],
    f: impl Fn(&ChartPoint) -> Option<f64>,
) -> Option<Series> {
    let points: Vec<(f64, f64)> = pts
        .iter()
        .filter_map(|p| f(p).map(|v| (p.t_s, v)))
        .collect();
    (!points.is_empty()).then(|| Series {
        label: label.to_string(),
        points,
        ranges: Vec::new(),
    })
}

/// A file-name-safe form of a client name (`rdkafka#producer-1` → `rdkafka-producer-1`).
fn file_stem(label: &str) -> String {
    let s: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    s.trim_matches('-').to_string()
}

fn chart(title: String, y: &str, series: Vec<Option<Series>>) -> LineChart {
    LineChart {
        title,
        x_label: "seconds since the client's first emit".into(),
        y_label: y.into(),
        x_scale: Scale::Linear,
        x_format: plain_label,
        y_format: si_label,
        series: series.into_iter().flatten().collect(),
    }
}

fn client_charts(c: &ClientChart) -> Vec<(String, String)> {
    let pts = c.points();
    let (x0, x1) = pts
        .iter()
        .fold((0.0f64, 0.0f64), |(a, b), p| (a.min(p.t_s), b.max(p.t_s)));
    let stem = file_stem(&c.label);
    let throughput = chart(
        format!("{}: messages per second", c.label),
        "messages/s",
        vec![
            series("produced", &pts, |p| p.tx_msgs_per_s),
            series("received", &pts, |p| p.rx_msgs_per_s),
        ],
    );
    let latency = chart(
        format!("{}: latencies (interval percentiles)", c.label),
        "ms",
        vec![
            series("int_latency p50", &pts, |p| p.int_latency_p50_ms),
            series("int_latency p99", &pts, |p| p.int_latency_p99_ms),
            series("rtt p50", &pts, |p| p.rtt_p50_ms),
            series("rtt p99", &pts, |p| p.rtt_p99_ms),
        ],
    );
    let queues = chart(
        format!("{}: queue depths at each emit", c.label),
        "messages or requests",
        vec![
            series("msg_cnt (queue)", &pts, |p| p.msg_cnt),
            series("waitresp_cnt", &pts, |p| p.waitresp_cnt),
            series("outbuf_cnt", &pts, |p| p.outbuf_cnt),
            series("fetchq_cnt", &pts, |p| p.fetchq_cnt),
            series("lag", &pts, |p| p.lag),
        ],
    );
    vec![
        (
            format!("{stem}-throughput.svg"),
            throughput.render_on_x_range(x0, x1),
        ),
        (
            format!("{stem}-latency.svg"),
            latency.render_on_x_range(x0, x1),
        ),
        (
            format!("{stem}-queues.svg"),
            queues.render_on_x_range(x0, x1),
        ),
    ]
}

pub(crate) fn render(r: &StatsReport) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stems: Vec<String> = Vec::new();
    for c in &r.charts {
        for (mut name, svg) in client_charts(c) {
            // Two clients whose names differ only in unsafe characters stay apart.
            while stems.contains(&name) {
                name = format!("x{name}");
            }
            stems.push(name.clone());
            out.push((name, svg));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_safe() {
        assert_eq!(file_stem("rdkafka#producer-1"), "rdkafka-producer-1");
        assert_eq!(file_stem("../../etc/passwd"), "..-..-etc-passwd");
    }
}
