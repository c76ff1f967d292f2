//! The text tables and the two charts (msg/s and ratio against batch.size).

use super::evidence;
use super::figures::Figures;
use super::options::GzipBatch;
use crate::kit::{Measured, Sweep, Table};
use kgap_analyzers::findings::gzip_batch_semantics::JavaEquivalent;
use kgap_analyzers::findings::probe_result::Client;
use kgap_analyzers::findings::Reps;
use kgap_analyzers::vocab::report::wrap_into;
use kgap_analyzers::vocab::svg::{self, LineChart, Scale, Series};
use kgap_analyzers::vocab::units;

/// The post's gzip figures (1 KB text, 6 partitions), for the line beside the tables.
pub const POST_LINE: &str = "the post (1 KB text, gzip): librdkafka 16K → 46.4k msg/s at 4.70, \
    88K → 27.5k at 5.71; Java 16K (~43 KB input) → 33.9k at 5.39, 3000 B (~8 KB input) → \
    48.2k at 4.15";

fn level_name(level: i32) -> String {
    if level == -1 {
        "default".into()
    } else {
        level.to_string()
    }
}

fn opt(x: Option<f64>, f: impl Fn(f64) -> String) -> String {
    x.map_or_else(|| "-".to_string(), f)
}

fn median(m: &Measured<'_, GzipBatch>, f: impl Fn(&Figures) -> Option<f64>) -> Option<f64> {
    m.reps_of(f).median()
}

/// librdkafka's table, Java's table beside it, the post's figures and `--java-equivalent`.
pub fn render(probe: &GzipBatch, sweep: &Sweep<GzipBatch>) -> String {
    let mut s = String::new();
    let mut t = Table::new([
        "level",
        "batch.size",
        "msg/s (min–max)",
        "msgs/batch",
        "in B/batch",
        "wire B/batch",
        "ratio",
        "rdk:broker",
        "app",
    ]);
    for m in sweep.of(Client::Librdkafka) {
        let app = median(&m, |f| f.librdkafka.as_ref().map(|l| l.app_cores));
        t.row(vec![
            level_name(m.point.level),
            svg::bytes_label(m.point.batch_size as f64),
            m.reps(|f| f.msgs_per_s).show(units::si),
            opt(median(&m, |f| f.msgs_per_batch), |x| format!("{x:.0}")),
            opt(median(&m, |f| f.input_bytes_per_batch), |x| {
                format!("{x:.0}")
            }),
            opt(median(&m, |f| f.wire_bytes_per_batch), |x| {
                format!("{x:.0}")
            }),
            opt(median(&m, |f| f.compression_ratio), |x| format!("{x:.2}")),
            opt(median(&m, |f| f.compressing_thread_cores), |x| {
                format!("{x:.2}")
            }),
            opt(app, |x| format!("{x:.2}")),
        ]);
    }
    if !t.is_empty() {
        s.push_str("librdkafka:\n");
        s.push_str(&t.render());
        s.push('\n');
        wrap_into(
            &mut s,
            "",
            "medians over reps. in B/batch: messages per batch (statistics batchcnt) × payload \
             bytes; wire B/batch: the MessageSet after compression (statistics batchsize); \
             ratio: in over wire; rdk:broker: cores of the busiest librdkafka broker thread, \
             the one that compresses; app: the producing thread.",
        );
    }
    if sweep.of(Client::Java).next().is_some() {
        s.push('\n');
        s.push_str(&java_table(probe, sweep));
    }
    s.push('\n');
    wrap_into(&mut s, "", POST_LINE);
    if let Some(e) = evidence::librdkafka(probe, sweep).java_equivalent {
        wrap_into(&mut s, "java equivalent: ", &java_equivalent_line(&e));
    }
    s
}

/// The Java companion's rows, with librdkafka's rate at the same point.
fn java_table(probe: &GzipBatch, sweep: &Sweep<GzipBatch>) -> String {
    let rdk = |level: i32, b: u64| {
        sweep
            .of(Client::Librdkafka)
            .find(|m| m.point.level == level && m.point.batch_size == b)
            .map(|m| m.reps(|f| f.msgs_per_s))
    };
    let mut t = Table::new([
        "point",
        "msg/s (min–max)",
        "in B/batch",
        "wire B/batch",
        "ratio",
        "in/b.size",
        "send thread",
        "msg/s ÷ rdk",
    ]);
    for m in sweep.of(Client::Java) {
        let rate = m.reps(|f| f.msgs_per_s);
        let vs = rdk(m.point.level, m.point.batch_size).map(|r| ratio_cell(&rate, &r));
        t.row(vec![
            format!(
                "{} {}",
                level_name(m.point.level),
                svg::bytes_label(m.point.batch_size as f64)
            ),
            rate.show(units::si),
            opt(median(&m, |f| f.input_bytes_per_batch), |x| {
                format!("{x:.0}")
            }),
            opt(median(&m, |f| f.wire_bytes_per_batch), |x| {
                format!("{x:.0}")
            }),
            opt(median(&m, |f| f.compression_ratio), |x| format!("{x:.2}")),
            opt(median(&m, |f| f.input_over_batch_size), |x| {
                format!("{x:.2}x")
            }),
            opt(median(&m, |f| f.compressing_thread_cores), |x| {
                format!("{x:.2}")
            }),
            vs.unwrap_or_else(|| "-".into()),
        ]);
    }
    let mut s = String::new();
    wrap_into(
        &mut s,
        "",
        &format!(
            "Java (kafka-clients 4.3.1, the kgap companion, one KafkaProducer, acks=1, \
             linger.ms={}, idempotence off; same points, payloads, warmup and window; \
             {} partition(s)):",
            super::options::LINGER_MS,
            probe.opts.partitions
        ),
    );
    s.push_str(&t.render());
    s.push('\n');
    wrap_into(
        &mut s,
        "",
        "wire B/batch: kafka-clients' batch-size-avg (the closed, compressed batch, 1 s \
         samples over about the window); ratio: payload bytes over bytes sent in the window \
         (producer-topic-metrics); in B/batch: wire × ratio; in/b.size: input over batch.size \
         (librdkafka keeps it ≤ 1); send thread: cores of the thread calling send(), where \
         kafka-clients compresses; msg/s ÷ rdk: Java's median over librdkafka's at the point.",
    );
    s
}

/// Java's median msg/s over librdkafka's, or `-` when librdkafka's is zero or missing.
fn ratio_cell(java: &Reps, rdk: &Reps) -> String {
    match kgap_analyzers::findings::reps::ratio(java, rdk) {
        Ok(r) => units::times(r.value),
        Err(_) => "-".into(),
    }
}

/// `--java-equivalent`, measured or from the model.
pub fn java_equivalent_line(e: &JavaEquivalent) -> String {
    if e.measured {
        return format!(
            "at batch.size {} B the Java client was measured putting {} B of input in a batch \
             (ratio {:.2}) → librdkafka batch.size ≈ {}",
            e.java_batch_size, e.java_input_bytes, e.ratio, e.librdkafka_batch_size
        );
    }
    format!(
        "a Java batch.size of {} B, if it closes at ~{} B compressed, holds ≈ {} B of input at \
         the measured ratio {:.2}{} → librdkafka batch.size ≈ {} (an upper bound: a Java batch \
         that closes on linger.ms first holds less; --client both measures it)",
        e.java_batch_size,
        e.java_batch_size,
        e.java_input_bytes,
        e.ratio,
        if e.extrapolated {
            " (outside the measured batch.sizes: the nearest ratio is held)"
        } else {
            ""
        },
        e.librdkafka_batch_size,
    )
}

/// One line per (client, level): librdkafka's, then the Java companion's.
fn series_by_level(sweep: &Sweep<GzipBatch>, figure: fn(&Figures) -> Option<f64>) -> Vec<Series> {
    let mut lines: Vec<(Client, i32)> = sweep
        .measured()
        .map(|m| (m.client, m.point.level))
        .collect();
    lines.sort();
    lines.dedup();
    lines
        .iter()
        .map(|&(client, level)| {
            let at = || sweep.of(client).filter(|m| m.point.level == level);
            let mut points: Vec<(f64, f64)> = at()
                .filter_map(|m| Some((m.point.batch_size as f64, m.reps_of(figure).median()?)))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            let ranges: Vec<(f64, f64, f64)> = at()
                .filter_map(|m| {
                    let r = m.reps_of(figure);
                    Some((m.point.batch_size as f64, r.min()?, r.max()?))
                })
                .collect();
            Series {
                ranges,
                label: format!(
                    "{}level {}",
                    if client == Client::Java { "Java " } else { "" },
                    level_name(level)
                ),
                points,
            }
        })
        .filter(|s| !s.points.is_empty())
        .collect()
}

fn chart_title(probe: &GzipBatch, sweep: &Sweep<GzipBatch>, what: &str) -> String {
    let (size, kind) = sweep
        .result
        .payload
        .as_ref()
        .map_or((0, "?".to_string()), |p| (p.size_bytes, p.kind.clone()));
    format!(
        "{what} against batch.size, {}, {size} B {kind}, {}",
        probe.opts.codec.name(),
        if sweep.result.broker.is_mock() {
            "embedded mock broker"
        } else {
            "external broker"
        }
    )
}

/// msg/s and the compression ratio against batch.size, one line per client and level.
pub fn charts(probe: &GzipBatch, sweep: &Sweep<GzipBatch>) -> Vec<(String, LineChart)> {
    vec![
        (
            "gzip-batch-rate.svg".into(),
            LineChart {
                title: chart_title(probe, sweep, "msg/s"),
                x_label: "batch.size (bytes, log scale)".into(),
                y_label: "acknowledged msg/s (median, min–max)".into(),
                x_scale: Scale::Log(2.0),
                x_format: svg::bytes_label,
                y_format: svg::si_label,
                series: series_by_level(sweep, |f| Some(f.msgs_per_s)),
            },
        ),
        (
            "gzip-batch-ratio.svg".into(),
            LineChart {
                title: chart_title(probe, sweep, "compression ratio"),
                x_label: "batch.size (bytes, log scale)".into(),
                y_label: "payload bytes / wire bytes (median, min–max)".into(),
                x_scale: Scale::Log(2.0),
                x_format: svg::bytes_label,
                y_format: svg::plain_label,
                series: series_by_level(sweep, |f| f.compression_ratio),
            },
        ),
    ]
}
