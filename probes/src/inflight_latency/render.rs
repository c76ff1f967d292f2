//! The probe's tables (librdkafka's rows, then Java's), its progress line and its charts.

use super::figures::Figures;
use super::options::InflightLatency;
use super::point::window_label;
use crate::kit::{Measured, Sweep, Table};
use kgap_analyzers::findings::probe_result::Client;
use kgap_analyzers::vocab::report::wrap_into;
use kgap_analyzers::vocab::svg::{self, LineChart, Scale, Series};
use kgap_analyzers::vocab::units;

/// The progress line after a run.
pub fn describe(f: &Figures) -> String {
    let mut s = format!(
        "ack p50/p99 {}/{} ms, e2e p50/p99 {}/{} ms",
        ms(f.ack_ms_p50),
        ms(f.ack_ms_p99),
        ms(f.e2e_ms_p50),
        ms(f.e2e_ms_p99)
    );
    if let Some(r) = f.produce_requests_per_s {
        s.push_str(&format!(", {} ProduceRequests/s", units::si(r)));
    }
    if let Some(w) = f.requests_in_flight_mean {
        s.push_str(&format!(", {} waiting", units::count(w)));
    }
    if !f.sustained {
        s.push_str(&format!(
            " (rate NOT sustained: {})",
            units::msgs_per_s(f.rate_achieved_per_s)
        ));
    }
    s
}

/// End-to-end p50/p99 from the intended send time (the pacer's slot), medians over reps;
/// `-` where the messages could not carry that stamp.
fn intended_pair(m: &Measured<InflightLatency>) -> String {
    match (
        med_of(m, |f| f.e2e_intended_ms_p50),
        med_of(m, |f| f.e2e_intended_ms_p99),
    ) {
        (Some(a), Some(b)) => pair(a, b),
        _ => "-".into(),
    }
}

/// A latency in a table cell: two decimals below 100 ms, whole above.
fn ms(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

fn med(m: &Measured<'_, InflightLatency>, f: impl Fn(&Figures) -> f64) -> f64 {
    m.reps(f).median().unwrap_or(0.0)
}

fn med_of(m: &Measured<'_, InflightLatency>, f: impl Fn(&Figures) -> Option<f64>) -> Option<f64> {
    m.reps_of(f).median()
}

/// A row's first cells: rate, linger, window, the rate achieved and in how many reps it held.
fn point_cells(m: &Measured<'_, InflightLatency>) -> Vec<String> {
    let held = m.runs.iter().filter(|f| f.sustained).count();
    vec![
        units::si(m.point.rate_per_s as f64),
        m.point.linger_ms.to_string(),
        window_label(m.point.max_in_flight),
        units::si(med(m, |f| f.rate_achieved_per_s)),
        format!("{held}/{}", m.runs.len()),
    ]
}

fn pair(a: f64, b: f64) -> String {
    format!("{}/{}", ms(a), ms(b))
}

pub fn text(sweep: &Sweep<InflightLatency>) -> String {
    let mut s = String::new();
    let mut t = Table::new([
        "rate/s",
        "linger",
        "in-flight",
        "msg/s",
        "held",
        "ack p50/p99 ms",
        "e2e p50/p99 ms",
        "from intended",
        "req/s",
        "msgs/req",
        "waiting",
    ]);
    for m in sweep.of(Client::Librdkafka) {
        let opt = |x: Option<f64>, f: fn(f64) -> String| x.map_or("-".into(), f);
        t.row(
            [
                point_cells(&m),
                vec![
                    pair(med(&m, |f| f.ack_ms_p50), med(&m, |f| f.ack_ms_p99)),
                    pair(med(&m, |f| f.e2e_ms_p50), med(&m, |f| f.e2e_ms_p99)),
                    intended_pair(&m),
                    opt(med_of(&m, |f| f.produce_requests_per_s), units::si),
                    opt(med_of(&m, |f| f.msgs_per_batch_mean), |x| format!("{x:.1}")),
                    opt(med_of(&m, |f| f.requests_in_flight_mean), units::count),
                ],
            ]
            .concat(),
        );
    }
    if !t.is_empty() {
        s.push_str("librdkafka (medians over reps of each run's figure):\n");
        s.push_str(&t.render());
        s.push('\n');
        wrap_into(
            &mut s,
            "",
            "held: reps that sustained the rate (≥ 97% of it). ack: send-to-ack, librdkafka's \
             own latency per message (rd_kafka_message_latency) at a delivery report served \
             as it arrives; e2e: the payload's send stamp to the consumer in this process. \
             req/s, msgs/req: librdkafka's statistics (one partition per ProduceRequest); \
             waiting: requests awaiting a response on the connection (waitresp_cnt, mean of \
             the 1 s emits; a window of 5 caps it at 5).",
        );
        if let Some(serve) = serve_line(sweep) {
            wrap_into(&mut s, "", &serve);
        }
        let per_broker: Vec<(Vec<String>, Vec<crate::kit::broker_figures::Connection>)> = sweep
            .of(Client::Librdkafka)
            .map(|m| {
                let reps: Vec<&[crate::kit::broker_figures::BrokerFigures]> =
                    m.runs.iter().map(|f| f.brokers.as_slice()).collect();
                (
                    vec![format!(
                        "{}/{}/{}",
                        units::si(m.point.rate_per_s as f64),
                        m.point.linger_ms,
                        window_label(m.point.max_in_flight)
                    )],
                    crate::kit::broker_figures::connections(&reps),
                )
            })
            .filter(|(_, c)| !c.is_empty())
            .collect();
        if !per_broker.is_empty() {
            s.push('\n');
            s.push_str(
                &crate::kit::broker_figures::table(&["rate/linger/window"], &per_broker).render(),
            );
            s.push('\n');
            wrap_into(&mut s, "", crate::kit::broker_figures::TABLE_NOTE);
        }
    }
    let java = java_table(sweep);
    if !java.is_empty() {
        if !s.is_empty() {
            s.push('\n');
        }
        s.push_str(&java);
    }
    s
}

/// How promptly delivery reports were served, over every librdkafka run.
fn serve_line(sweep: &Sweep<InflightLatency>) -> Option<String> {
    let runs: Vec<&Figures> = sweep
        .of(Client::Librdkafka)
        .flat_map(|m| m.runs.iter())
        .collect();
    let p99: Vec<f64> = runs
        .iter()
        .filter_map(|f| f.delivery_serve_ms_p99)
        .collect();
    let worst = runs
        .iter()
        .filter_map(|f| f.delivery_serve_ms_max)
        .reduce(f64::max)?;
    let mut p99 = p99;
    Some(format!(
        "delivery reports: the pacer waits on their arrival, never in a plain sleep; from \
         landing in the empty queue to being served they took {} at p99 (median of the runs) \
         and {} at worst (time the thread was not running counts).",
        units::ms(crate::kit::measure::median(&mut p99)),
        units::ms(worst)
    ))
}

/// The Java companion's rows (its e2e mode) at the same points.
fn java_table(sweep: &Sweep<InflightLatency>) -> String {
    let mut t = Table::new([
        "rate/s",
        "linger",
        "in-flight",
        "msg/s",
        "held",
        "ack p50/p99 ms",
        "e2e p50/p99 ms",
        "from intended",
        "missing",
        "GC ms",
    ]);
    for m in sweep.of(Client::Java) {
        t.row(
            [
                point_cells(&m),
                vec![
                    pair(med(&m, |f| f.ack_ms_p50), med(&m, |f| f.ack_ms_p99)),
                    pair(med(&m, |f| f.e2e_ms_p50), med(&m, |f| f.e2e_ms_p99)),
                    intended_pair(&m),
                    format!("{:.0}", med(&m, |f| f.e2e_missing as f64)),
                    med_of(&m, |f| f.gc_time_ms.map(|x| x as f64))
                        .map_or("-".into(), |x| format!("{x:.0}")),
                ],
            ]
            .concat(),
        );
    }
    if t.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "Java (kafka-clients 4.3.1, the companion's e2e mode: a paced KafkaProducer and a \
         KafkaConsumer in one JVM, acks=1, idempotence off, the same pacing and stamped \
         payloads; its own default window is 5):\n",
    );
    let mut wrapped = String::new();
    wrap_into(&mut wrapped, "", &s);
    s = wrapped;
    s.push_str(&t.render());
    s.push('\n');
    wrap_into(
        &mut s,
        "",
        "ack: every message's send-to-ack (its send callback); e2e: stamp to the consumer; \
         missing: window messages not received within 15 s; GC ms: collection time in the \
         window.",
    );
    s
}

/// The send-to-ack and end-to-end CDFs of librdkafka's runs, one chart each per rate
/// (first rep of every configuration).
pub fn charts(sweep: &Sweep<InflightLatency>) -> Vec<(String, LineChart)> {
    let mut rates: Vec<u64> = sweep
        .of(Client::Librdkafka)
        .map(|m| m.point.rate_per_s)
        .collect();
    rates.sort_unstable();
    rates.dedup();
    let mut out = Vec::new();
    for rate in rates {
        for (file, what, cdf) in [
            (
                "ack-cdf",
                "send-to-ack",
                (|f: &Figures| &f.ack_cdf) as fn(&Figures) -> &Vec<[f64; 2]>,
            ),
            ("e2e-cdf", "end-to-end", |f: &Figures| &f.e2e_cdf),
        ] {
            let series: Vec<Series> = sweep
                .of(Client::Librdkafka)
                .filter(|m| m.point.rate_per_s == rate)
                .filter_map(|m| {
                    let first = m.runs.first()?;
                    Some(Series {
                        label: format!(
                            "linger {}, in-flight {}",
                            m.point.linger_ms,
                            window_label(m.point.max_in_flight)
                        ),
                        points: cdf(first).iter().map(|p| (p[0], p[1])).collect(),
                        ranges: Vec::new(),
                    })
                })
                .filter(|s| !s.points.is_empty())
                .collect();
            if series.is_empty() {
                continue;
            }
            out.push((
                format!("{file}-{rate}.svg"),
                LineChart {
                    title: format!(
                        "{what} latency CDF at {} msg/s (librdkafka, first rep)",
                        units::si(rate as f64)
                    ),
                    x_label: format!("{what} latency, ms (log scale)"),
                    y_label: "percentile".into(),
                    x_scale: Scale::Log(10.0),
                    x_format: svg::plain_label,
                    y_format: svg::plain_label,
                    series,
                },
            ));
        }
    }
    out
}
