//! The human report of analyze-fetch-log: headline first, within 100 columns.

use std::fmt;

use super::model::{FetchLogReport, PartitionFetch};
use crate::vocab::report::{render_diagnosis, wrap_into};

impl fmt::Display for FetchLogReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        use std::fmt::Write as _;
        let _ = writeln!(
            out,
            "read {} lines: {} librdkafka records ({} fetch), {} lines skipped",
            self.lines_read, self.records_recognised, self.fetch_records, self.lines_skipped
        );
        match self.window {
            Some(w) if self.timestamps != "none" => {
                let _ = writeln!(
                    out,
                    "window: {:.3} s (timestamps: {})",
                    w.duration_s, self.timestamps
                );
            }
            _ => {
                let _ = writeln!(out, "window: unknown (timestamps: none)");
            }
        }
        if !self.partitions.is_empty() {
            let _ = writeln!(
                out,
                "\n{:<28} {:>8} {:>10} {:>11} {:>8} {:>10}",
                "partition", "backoffs", "queue-full", "backed-off", "fetches", "max-queued"
            );
            let mut rows: Vec<&PartitionFetch> = self.partitions.iter().collect();
            rows.sort_by(|a, b| {
                b.backoff_ms_total
                    .partial_cmp(&a.backoff_ms_total)
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
            for p in rows.iter().take(30) {
                let name = format!("{} [{}]", p.topic, p.partition);
                let name: String = if name.chars().count() > 28 {
                    let tail: String = name.chars().rev().take(27).collect();
                    format!("…{}", tail.chars().rev().collect::<String>())
                } else {
                    name
                };
                let share = match p.backoff_fraction {
                    Some(fr) => format!("{:.1}%", fr * 100.0),
                    None => format!("{:.0} ms", p.backoff_ms_total),
                };
                let _ = writeln!(
                    out,
                    "{:<28} {:>8} {:>10} {:>11} {:>8} {:>10}",
                    name,
                    p.backoffs,
                    p.queue_full_backoffs,
                    share,
                    p.fetches,
                    p.queued_msgs_max
                        .map(|q| q.to_string())
                        .unwrap_or_else(|| "-".into())
                );
            }
            if rows.len() > 30 {
                let _ = writeln!(
                    out,
                    "… and {} more partitions (see --json)",
                    rows.len() - 30
                );
            }
        }
        for fe in &self.fetchers {
            let _ = writeln!(
                out,
                "\nfetcher {}{}:",
                fe.broker,
                fe.client
                    .as_deref()
                    .map(|c| format!(" ({c})"))
                    .unwrap_or_default()
            );
            let _ = writeln!(
                out,
                "  {} FetchRequests, {} responses: {} empty, {} held to fetch.wait.max.ms",
                fe.fetch_requests, fe.responses, fe.empty_responses, fe.empty_held_to_wait_max
            );
            if let (Some(p50), Some(p99), Some(max)) = (fe.rtt_ms_p50, fe.rtt_ms_p99, fe.rtt_ms_max)
            {
                let _ = writeln!(
                    out,
                    "  fetch rtt p50 {p50:.2} ms, p99 {p99:.2} ms, max {max:.2} ms"
                );
            }
        }
        if self.diagnoses.is_empty() {
            let _ = writeln!(
                out,
                "\nno fetch gap found{}",
                if self.fetch_records == 0 {
                    ": the log has no fetch records (is debug=fetch set, and does the \
                     client log at debug level?)"
                } else {
                    ""
                }
            );
        } else {
            let _ = writeln!(out, "\ndiagnoses:");
            for d in &self.diagnoses {
                render_diagnosis(&mut out, d);
            }
        }
        for n in &self.not_computed {
            wrap_into(&mut out, "not computed: ", n);
        }
        for w in &self.warnings {
            wrap_into(&mut out, "warning: ", w);
        }
        f.write_str(&out)
    }
}
