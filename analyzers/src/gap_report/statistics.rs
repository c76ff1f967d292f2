//! A librdkafka statistics file, read by analyze-stats' library: each of its diagnoses is a
//! signal under the finding the catalogue maps it to (direct where the statistics show the
//! mechanism itself, indirect where another artifact must confirm it).

use std::path::Path;

use super::options::Options;
use super::outcome::{chart_name, open, signal, Outcome};
use super::report::{Chart, SignalWindow};
use crate::stats::{analyze_stats, StatsOptions};

pub(crate) fn stats_file(path: &Path, rel: &str, opts: &Options) -> Outcome {
    let unusable = |reason: String| Outcome {
        reason: Some(reason),
        ..Outcome::default()
    };
    let f = match open(path) {
        Ok(f) => f,
        Err(e) => return unusable(e),
    };
    let report = match analyze_stats(
        f,
        &StatsOptions {
            input_name: rel.to_string(),
            ..StatsOptions::default()
        },
    ) {
        Ok(r) => r,
        Err(e) => return unusable(e.to_string()),
    };
    let mut o = Outcome {
        analyzers: vec!["analyze-stats".into()],
        summary: format!(
            "{} statistics emits of {} client series; {}",
            report.input.statistics_objects,
            report.clients.len(),
            report.headline
        ),
        cut: match &report.input.gzip_cut {
            Some(c) => Some(format!(
                "cut at byte {} of its gzip stream ({c}: a truncated copy)",
                report.input.bytes_read
            )),
            None => (report.input.truncated_objects > 0).then(|| {
                format!(
                    "cut short: {} statistics object(s) end mid-object (a log still being \
                     written, or a truncated copy)",
                    report.input.truncated_objects
                )
            }),
        },
        ..Outcome::default()
    };
    for d in &report.diagnoses {
        let client = report
            .clients
            .iter()
            .find(|c| c.name == d.client && c.series == d.series);
        let window = client.map(|c| SignalWindow {
            clock: "epoch".into(),
            start_s: c.start_epoch_s.map(|s| s as f64),
            end_s: c.end_epoch_s.map(|s| s as f64),
            duration_s: Some(c.duration_s),
            shows_from_s: None,
        });
        o.signals
            .push(signal(rel, "analyze-stats", &d.to_diagnosis(), window));
    }
    if opts.charts {
        for (name, svg) in report.render_svgs() {
            o.charts.push(Chart {
                file: chart_name(&format!("{rel}.{}", name.trim_end_matches(".svg")), "stats"),
                title: format!("{name} — {rel}"),
                source: rel.to_string(),
                finding: None,
                svg,
            });
        }
    }
    o
}
