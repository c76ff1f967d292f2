//! The probe's part of the text report (librdkafka's throughput and threads, its requests,
//! Java's rows, what analyze-protocol-log read) and its chart.

use super::comparisons;
use super::evidence::evidence;
use super::figures::Figures;
use super::knob::Knob;
use super::librdkafka::ProtocolPass;
use super::options::RequestCeiling;
use super::point::Point;
use crate::kit::{Measured, Sweep, Table};
use kgap_analyzers::findings::probe_result::Client;
use kgap_analyzers::findings::Reps;
use kgap_analyzers::vocab::report::wrap_into;
use kgap_analyzers::vocab::svg::{self, LineChart, Scale, Series};
use kgap_analyzers::vocab::units;

type M<'a> = Measured<'a, RequestCeiling>;

fn batch(b: u64) -> String {
    svg::bytes_label(b as f64)
}

/// The batch.size column: `1M`, or `1M sndbuf=-1` for a fix or control point.
fn point_batch(p: &Point) -> String {
    match p.knob {
        None => batch(p.batch_size),
        Some(k) => format!("{} {}", batch(p.batch_size), k.short()),
    }
}

/// What the short knob names in a table stand for, when any is in it.
fn knob_note<'a>(points: impl Iterator<Item = &'a Point>) -> Option<String> {
    let mut knobs: Vec<Knob> = points.filter_map(|p| p.knob).collect();
    knobs.dedup();
    (!knobs.is_empty()).then(|| {
        knobs
            .iter()
            .map(|k| format!("{}: {}", k.short(), k.describe()))
            .collect::<Vec<_>>()
            .join("; ")
    })
}

/// The median of a figure some reps may not have, `-` when none did.
fn med(m: &M, f: impl Fn(&Figures) -> Option<f64>, show: impl Fn(f64) -> String) -> String {
    m.reps_of(f).median().map_or("-".into(), show)
}

pub fn headline(p: &RequestCeiling, sweep: &Sweep<RequestCeiling>) -> String {
    let (size, kind) = sweep
        .result
        .payload
        .as_ref()
        .map_or((p.opts.size as usize, p.opts.kind.to_string()), |x| {
            (x.size_bytes, x.kind.clone())
        });
    format!(
        "{size} B {kind} messages, a {:.1} s window per run after a warmup of {} \
         acknowledged",
        p.opts.duration.as_secs_f64(),
        p.opts.warmup_messages
    )
}

fn librdkafka_tables(sweep: &Sweep<RequestCeiling>) -> String {
    let mock = sweep.result.broker.is_mock();
    let mut head = vec![
        "partitions",
        "batch.size",
        "msg/s median (min–max)",
        "MB/s",
        "CPU s/M",
        "app",
        "rdk:broker",
    ];
    if mock {
        head.push("rdk:mock");
    }
    let mut rate = Table::new(head);
    let mut reqs = Table::new([
        "partitions",
        "batch.size",
        "requests/s",
        "B/request",
        "batches/req",
        "µs/req",
        "rtt p50/p99 ms",
    ]);
    for m in sweep.of(Client::Librdkafka) {
        let r = |f: &Figures| f.librdkafka().cloned();
        let cores = |x: f64| format!("{x:.2}");
        let mut row = vec![
            m.point.partitions.to_string(),
            point_batch(m.point),
            m.reps(Figures::msgs_per_s).show(units::si),
            med(&m, |f| Some(f.mb_per_s()), |x| format!("{x:.0}")),
            med(&m, |f| Some(f.cpu_s_per_million()), cores),
            med(&m, |f| r(f)?.app_cores, cores),
            med(&m, |f| r(f)?.busiest_broker_thread_cores, cores),
        ];
        if mock {
            row.push(med(&m, |f| Some(r(f)?.mock_cores), cores));
        }
        rate.row(row);
        let rps = m.reps_of(|f| r(f)?.produce_requests_per_s);
        reqs.row(vec![
            m.point.partitions.to_string(),
            point_batch(m.point),
            rps.median().map_or("-".into(), units::si),
            med(&m, |f| r(f)?.bytes_per_request, |x| format!("{x:.0}")),
            med(&m, |f| r(f)?.batches_per_request, |x| format!("{x:.2}")),
            rps.median()
                .filter(|&x| x > 0.0)
                .map_or("-".into(), |x| format!("{:.0}", 1e6 / x)),
            format!(
                "{}/{}",
                med(&m, |f| r(f)?.rtt_ms_p50, |x| format!("{x:.2}")),
                med(&m, |f| r(f)?.rtt_ms_p99, |x| format!("{x:.1}"))
            ),
        ]);
    }
    if rate.is_empty() {
        return String::new();
    }
    let per_broker: Vec<(
        Vec<String>,
        Vec<kgap_analyzers::findings::request_ceiling::Connection>,
    )> = evidence(sweep)
        .points
        .into_iter()
        .filter(|p| !p.connections.is_empty())
        .map(|p| {
            (
                vec![format!("{}p {}", p.partitions, batch(p.batch_size))],
                p.connections,
            )
        })
        .collect();
    let mut s = rate.render();
    s.push('\n');
    wrap_into(
        &mut s,
        "",
        "CPU s/M: process CPU seconds per million messages; app, rdk:broker: cores of the \
         producing thread and of librdkafka's busiest broker thread (medians over reps).",
    );
    if let Some(k) = knob_note(sweep.of(Client::Librdkafka).map(|m| m.point)) {
        wrap_into(
            &mut s,
            "",
            &format!("Controls (gap1-negative-controls): {k}."),
        );
    }
    s.push('\n');
    s.push_str(&reqs.render());
    s.push('\n');
    wrap_into(
        &mut s,
        "",
        "From librdkafka's statistics over each window: requests/s (req.Produce), bytes per \
         request (txbytes over requests), partition batches per request (topics[].batchsize.cnt \
         over req.Produce), µs/req (1 s over requests/s: the broker's time per request when \
         it is the limit), rtt (the median per-second p50 and the worst p99); summed over \
         the broker connections.",
    );
    if !per_broker.is_empty() {
        s.push('\n');
        s.push_str(&crate::kit::broker_figures::table(&["point"], &per_broker).render());
        s.push('\n');
        wrap_into(
            &mut s,
            "",
            &format!(
                "point: partitions and batch.size. {}",
                crate::kit::broker_figures::TABLE_NOTE
            ),
        );
        for (point, conns) in &per_broker {
            let silent: Vec<String> = conns
                .iter()
                .filter(|c| {
                    c.silent_s
                        .max()
                        .is_some_and(|x| x >= crate::kit::broker_figures::SILENT_MIN_S)
                })
                .map(|c| {
                    format!(
                        "{} answered nothing for {:.1} s",
                        c.broker,
                        c.silent_s.max().unwrap_or(0.0)
                    )
                })
                .collect();
            if !silent.is_empty() {
                wrap_into(
                    &mut s,
                    "",
                    &format!(
                        "a broker stopped answering at {}: {}",
                        point[0],
                        silent.join("; ")
                    ),
                );
            }
        }
    }
    s
}

fn java_table(sweep: &Sweep<RequestCeiling>) -> String {
    let rdk_rate = |p: &Point| {
        sweep
            .of(Client::Librdkafka)
            .find(|m| m.point == p)
            .and_then(|m| m.reps(Figures::msgs_per_s).median())
    };
    let mut t = Table::new([
        "partitions",
        "batch.size",
        "Java msg/s (min–max)",
        "CPU s/M",
        "rec/req",
        "user s/GB",
        "sys s/GB",
        "Java/rdk",
    ]);
    for m in sweep.of(Client::Java) {
        let j = m.reps(Figures::msgs_per_s);
        let gb = |x: f64| format!("{x:.2}");
        t.row(vec![
            m.point.partitions.to_string(),
            point_batch(m.point),
            j.show(units::si),
            med(&m, |f| Some(f.cpu_s_per_million()), |x| format!("{x:.2}")),
            med(
                &m,
                |f| f.java()?.records_per_request_avg,
                |x| format!("{x:.0}"),
            ),
            med(&m, |f| f.java()?.network_user_cpu_s_per_gb, gb),
            med(&m, |f| f.java()?.network_sys_cpu_s_per_gb, gb),
            match (j.median(), rdk_rate(m.point)) {
                (Some(j), Some(r)) if r > 0.0 => units::times(j / r),
                _ => "-".into(),
            },
        ]);
    }
    if t.is_empty() {
        return String::new();
    }
    let mut s = String::new();
    wrap_into(
        &mut s,
        "",
        "Java (kafka-clients 4.3.1, the kgap companion, one KafkaProducer, acks=1, idempotence \
         off, its other defaults) at the same points, same payloads, warmup and window:",
    );
    s.push_str(&t.render());
    s.push('\n');
    wrap_into(
        &mut s,
        "",
        "CPU s/M: the JVM's CPU seconds per million messages; rec/req: kafka-clients' \
         records-per-request-avg; user, sys s/GB: the producer network thread's user-space and \
         kernel CPU seconds per GB sent (the JDK's copies of heap buffers are user time); \
         Java/rdk: Java's median over librdkafka's at the same point. kafka-clients puts every \
         ready partition's batch in one ProduceRequest, so partitions help it where they do \
         not help librdkafka. Java's rows never enter request-ceiling's rule.",
    );
    if let Some(k) = knob_note(sweep.of(Client::Java).map(|m| m.point)) {
        wrap_into(&mut s, "", &format!("Fixes (java-large-batch-copy): {k}."));
    }
    s
}

/// The two comparisons of the post's rerun in one table: each client at its own defaults
/// and at its best batch.size (and at the same 16K, the request ceiling's question).
fn comparisons(sweep: &Sweep<RequestCeiling>) -> String {
    let d = comparisons::at_defaults(sweep);
    let b = comparisons::at_best(sweep);
    if b.java.is_empty() || b.librdkafka.is_empty() {
        return String::new();
    }
    let at = |c: &[kgap_analyzers::findings::each_at_best::CurvePoint], size: u64| {
        c.iter().find(|p| p.batch_size_bytes == size).cloned()
    };
    let best = |c: &[kgap_analyzers::findings::each_at_best::CurvePoint]| {
        kgap_analyzers::findings::each_at_best::best(c).cloned()
    };
    let mut t = Table::new([
        "comparison",
        "Java msg/s",
        "CPU s/M",
        "librdkafka msg/s",
        "CPU s/M",
        "Java/rdk",
    ]);
    let rows = [
        (
            "same batch.size".to_string(),
            at(&b.java, 16384),
            at(&b.librdkafka, 16384),
        ),
        (
            "each at its default".to_string(),
            at(&b.java, 16384),
            at(&b.librdkafka, d.librdkafka_batch_size),
        ),
        (
            "each at its best".to_string(),
            best(&b.java),
            best(&b.librdkafka),
        ),
    ];
    for (name, j, r) in rows {
        let (Some(j), Some(r)) = (j, r) else { continue };
        let cpu = |x: f64| format!("{x:.2}");
        let ratio = match (j.msgs_per_s.median(), r.msgs_per_s.median()) {
            (Some(a), Some(c)) if c > 0.0 => units::times(a / c),
            _ => "-".into(),
        };
        t.row(vec![
            name,
            format!(
                "{} @{}",
                units::si(j.msgs_per_s.median().unwrap_or(0.0)),
                batch(j.batch_size_bytes)
            ),
            j.cpu_s_per_million.median().map_or("-".into(), cpu),
            format!(
                "{} @{}",
                units::si(r.msgs_per_s.median().unwrap_or(0.0)),
                batch(r.batch_size_bytes)
            ),
            r.cpu_s_per_million.median().map_or("-".into(), cpu),
            ratio,
        ]);
    }
    if t.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "Java against librdkafka on {} partitions (medians):\n",
        b.partitions
    );
    s.push_str(&t.render());
    s.push('\n');
    wrap_into(
        &mut s,
        "",
        "Defaults: Java's batch.size 16K, librdkafka's 1M (the post: librdkafka 1.78x out of the \
         box); best: each at the batch.size where its median peaked in this sweep (the post: \
         1.05M at 128K against 1.00M at 1M). Verdicts each-at-defaults and each-at-best.",
    );
    s
}

fn protocol_pass(sweep: &Sweep<RequestCeiling>) -> String {
    let mut s = String::new();
    for p in sweep
        .result
        .diagnoses
        .iter()
        .filter_map(|d| serde_json::from_value::<ProtocolPass>(d.clone()).ok())
    {
        wrap_into(
            &mut s,
            "",
            &format!(
                "the debug=protocol,msg pass ({} partitions, batch.size {}): {} ProduceRequests, \
                 {} partition MessageSets{}",
                p.partitions,
                batch(p.batch_size),
                p.produce_requests,
                p.messagesets,
                p.batches_per_request
                    .map(|x| format!(" ({x:.2} per request)"))
                    .unwrap_or_default()
            ),
        );
        if p.diagnoses.is_empty() {
            s.push_str("analyze-protocol-log on it: no diagnosis\n");
        }
        for d in &p.diagnoses {
            wrap_into(
                &mut s,
                "  ",
                &format!(
                    "analyze-protocol-log ({}): {} Fix: {}",
                    d.id, d.cause, d.fix
                ),
            );
        }
    }
    s
}

pub fn body(sweep: &Sweep<RequestCeiling>) -> String {
    let parts = [
        librdkafka_tables(sweep),
        java_table(sweep),
        comparisons(sweep),
        protocol_pass(sweep),
    ];
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// msg/s against batch.size, one line per client and partition count.
pub fn chart(sweep: &Sweep<RequestCeiling>) -> LineChart {
    let mut series: Vec<Series> = Vec::new();
    for client in [Client::Librdkafka, Client::Java] {
        // The curves only: fix and control points are single points beside them.
        let plain = || sweep.of(client).filter(|m| m.point.knob.is_none());
        let mut parts: Vec<i32> = plain().map(|m| m.point.partitions).collect();
        parts.sort_unstable();
        parts.dedup();
        for p in parts {
            let mut points: Vec<(f64, f64)> = plain()
                .filter(|m| m.point.partitions == p)
                .filter_map(|m| {
                    let r: Reps = m.reps(Figures::msgs_per_s);
                    Some((m.point.batch_size as f64, r.median()?))
                })
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            let ranges: Vec<(f64, f64, f64)> = plain()
                .filter(|m| m.point.partitions == p)
                .filter_map(|m| {
                    let r: Reps = m.reps(Figures::msgs_per_s);
                    Some((m.point.batch_size as f64, r.min()?, r.max()?))
                })
                .collect();
            let who = match client {
                Client::Librdkafka => "librdkafka",
                Client::Java => "Java",
            };
            series.push(Series {
                label: format!("{who}, {p} partition{}", if p == 1 { "" } else { "s" }),
                points,
                ranges,
            });
        }
    }
    let size = sweep.result.payload.as_ref().map_or(0, |p| p.size_bytes);
    LineChart {
        title: format!(
            "msg/s against batch.size, {size} B messages, {}",
            if sweep.result.broker.is_mock() {
                "embedded mock broker"
            } else {
                "external broker"
            }
        ),
        x_label: "batch.size (bytes, log scale)".into(),
        y_label: "acknowledged msg/s (median, min–max)".into(),
        x_scale: Scale::Log(2.0),
        x_format: svg::bytes_label,
        y_format: svg::si_label,
        series,
    }
}
