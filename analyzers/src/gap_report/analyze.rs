//! One file through its analyzer, as a library call, into signals.

use std::io::BufReader;
use std::path::Path;

use super::options::Options;
use super::outcome::{chart_name, open, signal, Outcome};
use super::report::{Chart, SignalWindow};
use super::sniff::{self, Kind};
use crate::engine::input::{Input, Source, DEFAULT_MAX_LINE_BYTES};
use crate::fetch_log::{FetchLogAnalyzer, FetchLogOptions};
use crate::gc::{analyze_gc_logs, GcInput, GcLogOptions};
use crate::jfr::{analyze_jfr, ReportOptions};
use crate::librdkafka::pipeline::{self, Timed};
use crate::librdkafka::RecordFinder;
use crate::protocol_log::{ProtocolLogAnalyzer, ProtocolLogOptions};
use crate::thread_cpu;
use crate::thread_cpu::threads;
use crate::vocab::report::{round3, Window};
use crate::vocab::svg::{self, LineChart, Scale, Series};
use crate::vocab::timeline::Collected;

/// Read one file. Never fails: what goes wrong becomes the outcome's reason.
pub(crate) fn file(path: &Path, rel: &str, finder: &RecordFinder, opts: &Options) -> Outcome {
    let (head, gzip) = match sniff::head(path) {
        Ok(h) => h,
        Err(reason) => {
            return Outcome {
                kind: "unusable",
                reason: Some(reason),
                ..Outcome::default()
            }
        }
    };
    let kind = sniff::sniff(&head, finder);
    drop(head);
    let mut o = match &kind {
        Kind::LibrdkafkaLog => librdkafka_log(path, rel, opts),
        Kind::Stats => super::statistics::stats_file(path, rel, opts),
        Kind::GcLog => gc_log(path, rel, opts),
        Kind::Jfr | Kind::JfrJson => jfr(path, rel),
        Kind::ThreadCpu => thread_cpu_file(path, rel, opts),
        Kind::ProbeResult => super::probe::probe_result(path, rel),
        Kind::ProbeRuns => Outcome {
            reason: Some("a probe's runs.csv: the same runs are read from its result.json".into()),
            ..Outcome::default()
        },
        Kind::Unusable(why) => Outcome {
            reason: Some(why.clone()),
            ..Outcome::default()
        },
    };
    o.kind = kind.label();
    o.gzip = gzip;
    o
}

fn unusable(reason: impl Into<String>) -> Outcome {
    Outcome {
        reason: Some(reason.into()),
        ..Outcome::default()
    }
}

fn log_window(w: Option<&Window>, timestamps: &str) -> Option<SignalWindow> {
    w.map(|w| SignalWindow {
        clock: if timestamps == "librdkafka" {
            "epoch".into()
        } else {
            timestamps.to_string()
        },
        start_s: Some(w.start_s),
        end_s: Some(w.end_s),
        duration_s: Some(round3(w.duration_s)),
        shows_from_s: None,
    })
}

/// The per-second columns gap-report charts from each log analyzer.
const PROTOCOL_SERIES: &[&str] = &["produce_requests"];
const FETCH_SERIES: &[&str] = &["messages_enqueued", "queue_full_backoffs"];

/// A per-second timeline kept in memory, as (seconds into the log, per-second rate) series.
/// The log starts and ends inside its first and last seconds: drawn as whole seconds their
/// counts look like a ramp and a crash. So each second's count is divided by the part of it
/// the log covers (from the log's window), a second covered less than half is left out, and
/// each point sits at the middle of what was covered. Without a window only the seconds
/// between the first and the last are drawn. A series of fewer than 3 points is dropped: it
/// draws no curve worth reading.
fn collected_series(c: Option<&Collected>, window: Option<&Window>) -> Vec<Series> {
    let Some(c) = c else {
        return Vec::new();
    };
    let mut series: Vec<Series> = c
        .columns
        .iter()
        .map(|name| Series {
            label: name.replace('_', " "),
            points: Vec::new(),
            ranges: Vec::new(),
        })
        .collect();
    let (first, last) = match (c.rows.first(), c.rows.last()) {
        (Some(f), Some(l)) => (f.0 as f64, l.0 as f64),
        _ => return Vec::new(),
    };
    let (start, end) = window.map_or((first + 1.0, last), |w| (w.start_s, w.end_s));
    for (second, values) in &c.rows {
        let s = *second as f64;
        let (from, to) = (s.max(start), (s + 1.0).min(end));
        let covered = to - from;
        if covered < 0.5 {
            continue;
        }
        let t = (from + to) / 2.0 - start;
        for (series, v) in series.iter_mut().zip(values) {
            if let Some(v) = v {
                series.points.push((t, v / covered));
            }
        }
    }
    series.retain(|s| s.points.len() >= 3);
    series
}

/// Fewest librdkafka records that make a file a log worth analysing.
const MIN_RECORDS: u64 = 3;

fn librdkafka_log(path: &Path, rel: &str, opts: &Options) -> Outcome {
    let mut o = Outcome::default();
    let mut parts = Vec::new();

    // One read feeds both analyzers; their per-second series stay in memory.
    let mut pa = ProtocolLogAnalyzer::new(&ProtocolLogOptions::default());
    let mut fa = FetchLogAnalyzer::new(&FetchLogOptions::default());
    if opts.charts {
        pa = pa.with_series(PROTOCOL_SERIES);
        fa = fa.with_series(FETCH_SERIES);
    }
    let workers = opts.workers.unwrap_or_else(pipeline::default_workers);
    let read = open(path).and_then(|f| {
        pipeline::drive_source(
            Source::file(f),
            DEFAULT_MAX_LINE_BYTES,
            workers,
            &mut (&mut pa, &mut fa),
        )
        .map_err(|e| e.to_string())
    });
    let input = match read {
        Ok(s) => s,
        Err(e) => return unusable(e),
    };
    o.cut = input.gzip_cut.as_ref().map(|c| {
        format!(
            "cut at byte {} of its gzip stream ({c}: a truncated copy)",
            input.bytes_read
        )
    });
    let (records, lines);
    let protocol = pa
        .finish_with_series(input.clone())
        .map_err(|e| e.to_string());
    match protocol {
        Ok((r, tl)) => {
            (records, lines) = (r.records_recognised, r.lines_read);
            if r.is_usable() {
                o.analyzers.push("analyze-protocol-log".into());
                let produce: u64 = r
                    .requests
                    .iter()
                    .filter(|q| q.request == "Produce")
                    .map(|q| q.count)
                    .sum();
                parts.push(format!(
                    "{} protocol records ({produce} ProduceRequests)",
                    r.protocol_records
                ));
                let w = log_window(r.window.as_ref(), &r.timestamps);
                for d in &r.diagnoses {
                    o.signals
                        .push(signal(rel, "analyze-protocol-log", d, w.clone()));
                }
                if opts.charts && produce > 0 {
                    let series = collected_series(tl.as_ref(), r.window.as_ref());
                    if !series.is_empty() {
                        o.charts.push(Chart {
                            file: chart_name(rel, "produce-requests"),
                            title: format!("ProduceRequests per second — {rel}"),
                            source: rel.to_string(),
                            finding: Some("request-ceiling"),
                            svg: LineChart {
                                title: format!("ProduceRequests per second — {rel}"),
                                x_label: "seconds into the log".into(),
                                y_label: "requests/s".into(),
                                x_scale: Scale::Linear,
                                x_format: svg::plain_label,
                                y_format: svg::si_label,
                                series,
                            }
                            .render(),
                        });
                    }
                }
            }
        }
        Err(e) => return unusable(e),
    }

    let fetch = fa.finish_with_series(input).map_err(|e| e.to_string());
    match fetch {
        Ok((r, tl)) => {
            if r.is_usable() {
                o.analyzers.push("analyze-fetch-log".into());
                parts.push(format!(
                    "{} fetch records ({} partitions)",
                    r.fetch_records,
                    r.partitions.len()
                ));
                let w = log_window(r.window.as_ref(), &r.timestamps);
                for d in &r.diagnoses {
                    o.signals
                        .push(signal(rel, "analyze-fetch-log", d, w.clone()));
                }
                if opts.charts {
                    let series = collected_series(tl.as_ref(), r.window.as_ref());
                    if let Some(msgs) = series.into_iter().next() {
                        o.charts.push(Chart {
                            file: chart_name(rel, "messages-enqueued"),
                            title: format!("messages fetched per second — {rel}"),
                            source: rel.to_string(),
                            finding: Some("fetch-backoff"),
                            svg: LineChart {
                                title: format!("messages fetched per second — {rel}"),
                                x_label: "seconds into the log".into(),
                                y_label: "messages/s".into(),
                                x_scale: Scale::Linear,
                                x_format: svg::plain_label,
                                y_format: svg::si_label,
                                series: vec![msgs],
                            }
                            .render(),
                        });
                    }
                }
            }
        }
        Err(e) => return unusable(e),
    }

    // A document that quotes a log line or two (a README, an issue) is not a capture.
    if records < MIN_RECORDS {
        return unusable(format!(
            "{lines} lines with only {records} librdkafka record(s): too few to be a capture \
             (a document quoting a log line?)"
        ));
    }
    if o.analyzers.is_empty() {
        return unusable(format!(
            "{lines} lines, {records} librdkafka records the analyzers know, but no protocol or \
             fetch records: set debug=protocol (producers) or debug=fetch (consumers) and let \
             the client log at debug level"
        ));
    }
    o.summary = format!("{lines} lines: {}", parts.join(", "));
    o
}

fn gc_log(path: &Path, rel: &str, opts: &Options) -> Outcome {
    let f = match open(path) {
        Ok(f) => f,
        Err(e) => return unusable(e),
    };
    let report = match analyze_gc_logs(
        vec![GcInput {
            name: rel.to_string(),
            reader: Source::file(f),
        }],
        &GcLogOptions::default(),
        None,
    ) {
        Ok(r) => r,
        Err(e) => return unusable(e.to_string()),
    };
    if let Some(why) = &report.unsupported {
        return unusable(format!("GC log not supported: {why}"));
    }
    let w = report.duration_s.map(|d| SignalWindow {
        clock: report.clock.to_string(),
        start_s: report.start_s,
        end_s: report.end_s,
        duration_s: Some(round3(d)),
        shows_from_s: None,
    });
    let mut o = Outcome {
        analyzers: vec!["analyze-gc-log".into()],
        summary: format!(
            "{}{}, {}, {}, worst window {}",
            report.collector.as_deref().unwrap_or("unknown collector"),
            report
                .jdk
                .as_deref()
                .map(|j| format!(" JDK {j}"))
                .unwrap_or_default(),
            crate::vocab::units::counted(report.pauses.count, "pause"),
            crate::vocab::units::counted(report.full_gcs, "full GC"),
            report
                .gc_fraction_max_window
                .map(|f| format!("{:.0}% in GC", f * 100.0))
                .unwrap_or_else(|| "-".into())
        ),
        cut: match &report.input.gzip_cut {
            Some(c) => Some(format!(
                "cut at byte {} of its gzip stream ({c}: a truncated copy)",
                report.input.bytes
            )),
            None => report.input.unterminated_last_line.then(|| {
                format!(
                    "cut at byte {} (its last line has no newline: a running JVM, or a truncated copy)",
                    report.input.bytes
                )
            }),
        },
        ..Outcome::default()
    };
    for d in &report.diagnoses {
        o.signals.push(signal(rel, "analyze-gc-log", d, w.clone()));
    }
    if opts.charts {
        o.charts.push(Chart {
            file: chart_name(rel, "heap"),
            title: format!("heap after GC and pauses — {rel}"),
            source: rel.to_string(),
            finding: Some("java-gc-collapse"),
            svg: report.render_svg(),
        });
    }
    o
}

fn jfr(path: &Path, rel: &str) -> Outcome {
    let f = match open(path) {
        Ok(f) => f,
        Err(e) => return unusable(e),
    };
    let report = match analyze_jfr(f, rel, &ReportOptions::default()) {
        Ok(r) => r,
        Err(e) => return unusable(e.to_string()),
    };
    if !report.is_usable() {
        return unusable(format!(
            "no JFR events could be read: {}",
            report.input.problems.join("; ")
        ));
    }
    let w = SignalWindow {
        clock: if report.recording.start_epoch_s.is_some() {
            "epoch".into()
        } else {
            "recording".into()
        },
        start_s: report.recording.start_epoch_s,
        end_s: report
            .recording
            .start_epoch_s
            .map(|s| s + report.recording.duration_s),
        duration_s: Some(round3(report.recording.duration_s)),
        shows_from_s: None,
    };
    let mut o = Outcome {
        analyzers: vec!["analyze-jfr".into()],
        summary: format!(
            "{} ({}), {:.1} s, {} events, {} socket rows",
            report.input.format,
            report
                .jvm
                .as_ref()
                .map(|j| short_jvm(&j.version))
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| "JVM unknown".into()),
            report.recording.duration_s,
            report.recording.events,
            report.socket.len()
        ),
        cut: report.input.cut_at_byte.map(|at| {
            format!("cut at byte {at} (a recording copied while the JVM wrote it, or truncated)")
        }),
        ..Outcome::default()
    };
    if !report.input.problems.is_empty() {
        o.summary
            .push_str(&format!("; {} read problems", report.input.problems.len()));
    }
    for d in &report.diagnoses {
        o.signals
            .push(signal(rel, "analyze-jfr", d, Some(w.clone())));
    }
    o
}

/// `OpenJDK 64-Bit Server VM (25.0.3+9-LTS) for linux-amd64 …` → `JDK 25.0.3+9-LTS`.
fn short_jvm(version: &str) -> String {
    match version.split_once('(').and_then(|(_, r)| r.split_once(')')) {
        Some((v, _)) => format!("JDK {v}"),
        None => version.chars().take(40).collect(),
    }
}

fn thread_cpu_file(path: &Path, rel: &str, opts: &Options) -> Outcome {
    let f = match open(path).and_then(|f| Input::detect(f).map_err(|e| e.to_string())) {
        Ok(f) => f,
        Err(e) => return unusable(e),
    };
    let mut analyzer = thread_cpu::Analyzer::new(thread_cpu::Options::default());
    let info = match thread_cpu::read_recording(
        BufReader::new(f),
        &mut analyzer,
        threads::ticks_per_second(),
    ) {
        Ok(i) => i,
        Err(e) => return unusable(format!("not a usable thread-CPU recording: {e}")),
    };
    if analyzer.intervals() == 0 {
        return unusable("thread-CPU recording with fewer than two samples: no interval");
    }
    let ticks = info
        .header
        .as_ref()
        .map_or(threads::ticks_per_second(), |h| h.ticks_per_s);
    let report = analyzer.finish(thread_cpu::Source::Recording(rel.to_string()), ticks);
    let w = SignalWindow {
        clock: "recording".into(),
        start_s: Some(0.0),
        end_s: Some(report.duration_s),
        duration_s: Some(round3(report.duration_s)),
        shows_from_s: None,
    };
    let top = report
        .threads
        .first()
        .map(|t| format!(", busiest {} at {:.2} cores", t.name, t.cores_mean))
        .unwrap_or_default();
    let mut o = Outcome {
        analyzers: vec!["analyze-thread-cpu".into()],
        summary: format!(
            "{} intervals over {:.1} s, {} threads{top}",
            report.intervals,
            report.duration_s,
            report.threads.len()
        ),
        ..Outcome::default()
    };
    for d in &report.diagnoses {
        o.signals
            .push(signal(rel, "analyze-thread-cpu", d, Some(w.clone())));
    }
    if opts.charts {
        o.charts.push(Chart {
            file: chart_name(rel, "threads"),
            title: format!("cores per thread — {rel}"),
            source: rel.to_string(),
            finding: None,
            svg: report.render_svg(6),
        });
    }
    o
}
