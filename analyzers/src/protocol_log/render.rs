//! The human report of analyze-protocol-log: headline first, within 100 columns.

use std::fmt;

use super::model::ProtocolLogReport;
use crate::vocab::report::{human_bytes, render_diagnosis, wrap_into};

impl fmt::Display for ProtocolLogReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use std::fmt::Write as _;
        let mut out = String::new();
        let errors = if self.error_records > 0 {
            format!(", {} request or connection errors", self.error_records)
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "read {} lines: {} librdkafka records ({} protocol{errors}), {} lines skipped",
            self.lines_read, self.records_recognised, self.protocol_records, self.lines_skipped
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
        let mut last_conn: Option<(&Option<String>, &str)> = None;
        for r in &self.requests {
            if last_conn != Some((&r.client, r.broker.as_str())) {
                let _ = writeln!(
                    out,
                    "\n{}{}",
                    r.broker,
                    r.client
                        .as_deref()
                        .map(|c| format!(" ({c})"))
                        .unwrap_or_default()
                );
                let _ = writeln!(
                    out,
                    "  {:<18} {:>8} {:>10} {:>10} {:>9} {:>9} {:>8}",
                    "request", "count", "bytes p50", "bytes p99", "rtt p50", "rtt p99", "req/s"
                );
                last_conn = Some((&r.client, r.broker.as_str()));
            }
            let ms = |v: Option<f64>| v.map(|v| format!("{v:.2}ms")).unwrap_or_else(|| "-".into());
            let b = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_else(|| "-".into());
            let name: String = r.request.chars().take(18).collect();
            let _ = writeln!(
                out,
                "  {:<18} {:>8} {:>10} {:>10} {:>9} {:>9} {:>8}",
                name,
                r.count,
                b(r.bytes_p50),
                b(r.bytes_p99),
                ms(r.rtt_ms_p50),
                ms(r.rtt_ms_p99),
                r.rate
                    .as_ref()
                    .map(|s| crate::vocab::units::per_s(s.per_s_mean))
                    .unwrap_or_else(|| "-".into())
            );
        }
        for c in &self.connections {
            if c.inflight_max > 1 {
                let _ = writeln!(
                    out,
                    "\nin flight on {}: max {}, mean at send {}",
                    c.broker,
                    c.inflight_max,
                    c.inflight_at_send_mean
                        .map(|m| format!("{m:.1}"))
                        .unwrap_or_else(|| "-".into())
                );
            }
        }
        for p in &self.produce {
            let _ = writeln!(
                out,
                "\nProduceRequest bytes on {} ({} requests):",
                p.broker, p.requests
            );
            let max = p.bytes_histogram.iter().map(|b| b.count).max().unwrap_or(1);
            for b in &p.bytes_histogram {
                let stars = ((b.count as f64 / max as f64) * 30.0).ceil() as usize;
                let _ = writeln!(
                    out,
                    "  {:>10} -> {:<10} : {:<8} |{:<30}|",
                    human_bytes(b.low as f64),
                    human_bytes(b.high as f64),
                    b.count,
                    "*".repeat(stars.min(30))
                );
            }
        }
        if let Some(m) = &self.messages_per_request {
            let _ = writeln!(
                out,
                "\nmessages per ProduceRequest: p50 {}, mean {:.1}, max {} ({} MessageSets)",
                m.p50, m.mean, m.max, m.messagesets
            );
        }
        if !self.connect_failures.is_empty() {
            let failed: Vec<String> = self
                .connect_failures
                .iter()
                .map(|n| format!("{} ×{}", n.name, n.count))
                .collect();
            out.push('\n');
            wrap_into(&mut out, "connects that failed: ", &failed.join(", "));
        }
        if self.diagnoses.is_empty() {
            let _ = writeln!(
                out,
                "\nno protocol gap found{}",
                if self.protocol_records > 0 {
                    ""
                } else if self.error_records > 0 || self.messages_per_request.is_some() {
                    ": no request timed out in what was read; without Sent/Received lines \
                     (debug=protocol) round trips and in-flight depth were not read"
                } else {
                    ": the log has no protocol records (is debug=protocol set, and does \
                     the client log at debug level?)"
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
