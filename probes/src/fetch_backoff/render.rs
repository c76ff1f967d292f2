//! The probe's progress line, the report's first line, and its part of the text report: the
//! table, the per-second timeline, each broker's connection, what analyze-fetch-log read.

use super::figures::Figures;
use super::options::FetchBackoff;
use crate::kit::broker_figures::{self, BrokerFigures};
use crate::kit::probe::Sweep;
use crate::kit::table::Table;
use kgap_analyzers::vocab::report::wrap_into;
use kgap_analyzers::vocab::units;

/// The progress line after a run.
pub fn describe(f: &Figures) -> String {
    format!(
        "{}, {} Queue-full backoffs, idle {} of {}",
        units::msgs_per_s(f.window.msgs_per_s),
        f.queue_full_backoffs,
        units::seconds(f.window.idle_s),
        units::seconds(f.window.window_s)
    )
}

/// What one run is, for the report's first line.
pub fn headline(sweep: &Sweep<FetchBackoff>) -> String {
    let messages = sweep
        .measured()
        .next()
        .and_then(|m| m.runs.first())
        .map(|f| f.window.messages.to_string())
        .unwrap_or_else(|| "no".into());
    let size = sweep.result.payload.as_ref().map_or(0, |p| p.size_bytes);
    format!("{messages} × {size} B messages measured per run (after a 10% warmup)")
}

/// The probe's part of the text report.
pub fn text(sweep: &Sweep<FetchBackoff>) -> String {
    let mut t = Table::new([
        "backoff ms",
        "msg/s median (min–max)",
        "MB/s",
        "cores",
        "busiest thread",
        "backoffs",
        "idle s",
        "window s",
    ]);
    for m in sweep.measured() {
        let med = |f: fn(&Figures) -> f64| m.reps(f).median().unwrap_or(0.0);
        let busiest = m
            .runs
            .iter()
            .max_by(|a, b| a.busiest_thread_cores.total_cmp(&b.busiest_thread_cores))
            .map(|f| format!("{} {:.2}", f.busiest_thread, f.busiest_thread_cores))
            .unwrap_or_default();
        t.row(vec![
            match m.point.queued_min_messages {
                Some(n) => format!("{} (qmm {n})", m.point.backoff_ms),
                None => m.point.backoff_ms.to_string(),
            },
            m.reps(|f| f.window.msgs_per_s).show(units::si),
            format!("{:.1}", med(|f| f.window.mb_per_s)),
            format!("{:.2}", med(|f| f.consumer_cores)),
            busiest,
            format!("{:.0}", med(|f| f.queue_full_backoffs as f64)),
            format!("{:.1}", med(|f| f.window.idle_s)),
            format!("{:.1}", med(|f| f.window.window_s)),
        ]);
    }
    let mut s = t.render();
    s.push_str("\nmsg/s per second, first rep (k msg/s; a nap shows as a low second):\n");
    for m in sweep.measured() {
        let Some(first) = m.runs.first() else {
            continue;
        };
        let mut line: Vec<String> = first
            .window
            .timeline
            .iter()
            .map(|v| format!("{:.0}", *v as f64 / 1000.0))
            .collect();
        if line.is_empty() {
            line.push("(window shorter than a second)".into());
        }
        s.push_str(&format!(
            "  {:>5} ms: {}\n",
            m.point.backoff_ms,
            line.join(" ")
        ));
    }
    s.push('\n');
    wrap_into(
        &mut s,
        "",
        "cores: the consumer process without the embedded broker's thread. busiest thread: \
         its busiest rep. backoffs: 'Fetch backoff … Local: Queue full' lines in the window \
         (debug=fetch). idle s: 100 ms slots in which no message arrived (naps).",
    );
    let per_broker: Vec<(Vec<String>, Vec<broker_figures::Connection>)> = sweep
        .measured()
        .map(|m| {
            let reps: Vec<&[BrokerFigures]> = m.runs.iter().map(|f| f.brokers.as_slice()).collect();
            (
                vec![m.point.backoff_ms.to_string()],
                broker_figures::connections(&reps),
            )
        })
        .filter(|(_, c)| !c.is_empty())
        .collect();
    if !per_broker.is_empty() {
        s.push('\n');
        s.push_str(&broker_figures::table(&["backoff ms"], &per_broker).render());
        s.push('\n');
        wrap_into(
            &mut s,
            "",
            &format!(
                "{} Here the requests are FetchRequests (a fetcher backs off per \
                 partition, on its leader's connection).",
                broker_figures::TABLE_NOTE
            ),
        );
    }
    if let Some(d) = sweep
        .measured()
        .flat_map(|m| m.runs.iter())
        .find_map(|f| f.analyzer_diagnosis.as_deref())
    {
        s.push('\n');
        s.push_str("analyze-fetch-log on the probe's own debug log:\n");
        wrap_into(&mut s, "  ", d);
    }
    s
}
