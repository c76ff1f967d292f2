//! The human report: the headline first, then per client its figures (per broker with the
//! aggregate beside), then the diagnoses. Lines stay within 100 columns.

use std::fmt::Write as _;

use super::report::{BrokerReport, ClientReport, StatsDiagnosis, StatsReport, Summary};
use crate::vocab::report::wrap_into;

/// 1234567 → "1.23M", 15600 → "15.6k", 12 → "12".
fn si(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.2}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else if a >= 10.0 || a == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// Bytes: "15.6 KB", "1.00 MB" (decimal, as the post writes request sizes).
fn bytes(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2} MB", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1} KB", v / 1e3)
    } else {
        format!("{v:.0} B")
    }
}

fn msf(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn p50(s: &Option<Summary>) -> Option<f64> {
    s.map(|s| s.p50)
}

fn or_dash(v: Option<String>) -> String {
    v.unwrap_or_else(|| "-".into())
}

/// The one-line summary, within 100 columns: who, what was found, then (when it fits) the
/// client's type and emits.
pub(crate) fn headline(r: &StatsReport) -> String {
    const WIDTH: usize = 100;
    if !r.is_usable() {
        return format!("{}: no librdkafka statistics found", r.input_name);
    }
    let emits: u64 = r.clients.iter().map(|c| c.emits).sum();
    let (who, about) = if r.clients.len() == 1 {
        let c = &r.clients[0];
        (
            c.name.clone(),
            format!(
                " ({}, {} emits over {:.1} s)",
                c.client_type.as_deref().unwrap_or("?"),
                c.emits,
                c.duration_s
            ),
        )
    } else {
        (
            format!("{} client series", r.clients.len()),
            format!(" ({emits} emits)"),
        )
    };
    let mut ids: Vec<&str> = Vec::new();
    for d in &r.diagnoses {
        if !ids.contains(&d.id) {
            ids.push(d.id);
        }
    }
    let width = |s: &str| s.chars().count();
    let found = if ids.is_empty() {
        "no gap found in the statistics".to_string()
    } else {
        let all = ids.join(", ");
        if width(&who) + 2 + width(&all) <= WIDTH {
            all
        } else {
            // Keep the first ids whole and count the rest.
            let mut shown = String::new();
            for (i, id) in ids.iter().enumerate() {
                let next = if shown.is_empty() {
                    id.to_string()
                } else {
                    format!("{shown}, {id}")
                };
                let more = format!(" and {} more", ids.len() - i - 1);
                if width(&who) + 2 + width(&next) + width(&more) > WIDTH && !shown.is_empty() {
                    shown = format!("{shown} and {} more", ids.len() - i);
                    break;
                }
                shown = next;
            }
            shown
        }
    };
    let line = format!("{who}: {found}");
    if width(&line) + width(&about) <= WIDTH {
        format!("{line}{about}")
    } else {
        line
    }
}

fn when(c: &ClientReport) -> String {
    match c.start_epoch_s {
        Some(t) => format!(" from epoch {t} s"),
        None => String::new(),
    }
}

fn broker_table(out: &mut String, c: &ClientReport) {
    let _ = writeln!(
        out,
        "  {:<22} {:>8} {:>7} {:>7} {:>7} {:>6} {:>6} {:>13} {:>6} {:>4}",
        "broker",
        "state",
        "req/s",
        "Prod/s",
        "B/Prod",
        "wait",
        "outbuf",
        "rtt p50/p99 ms",
        "thr ms",
        "disc"
    );
    let row = |out: &mut String, b: &BrokerReport, state: String| {
        let name: String = if b.name.chars().count() > 22 {
            let n = b.name.chars().count();
            format!("…{}", b.name.chars().skip(n - 21).collect::<String>())
        } else {
            b.name.clone()
        };
        let rtt = match (&b.rtt_p50_ms, &b.rtt_p99_ms) {
            (Some(a), Some(z)) => format!("{}/{}", msf(a.summary.p50), msf(z.p50)),
            _ => "-".into(),
        };
        let _ = writeln!(
            out,
            "  {:<22} {:>8} {:>7} {:>7} {:>7} {:>6} {:>6} {:>13} {:>6} {:>4}",
            name,
            state,
            or_dash(p50(&b.requests_per_s).map(crate::vocab::units::per_s)),
            or_dash(p50(&b.produce_requests_per_s).filter(|v| *v > 0.0).map(si)),
            or_dash(p50(&b.bytes_per_produce_request).map(si)),
            or_dash(b.waitresp_cnt.map(|s| si(s.summary.p50))),
            or_dash(p50(&b.outbuf_cnt).map(si)),
            rtt,
            or_dash(b.throttle_max_ms.map(|s| si(s.max))),
            format!("{:.0}", b.disconnects),
        );
    };
    row(out, &c.total, String::new());
    for b in &c.brokers {
        // The last state, cut to 7 characters (APIVERSION_QUERY).
        let state: String = b
            .state_change_list
            .last()
            .map(|c| c.to.clone())
            .or_else(|| b.states.first().cloned())
            .unwrap_or_default()
            .chars()
            .take(7)
            .collect();
        let state = if b.states.len() > 1 {
            format!("{state}*")
        } else {
            state
        };
        row(out, b, state);
    }
    if c.brokers.iter().any(|b| b.states.len() > 1) {
        let _ = writeln!(
            out,
            "  (* the state changed during the capture; see --json brokers[].states)"
        );
    }
}

/// Most partitions listed in the text (by lag, then traffic); --json has them all.
const PARTITION_ROWS: usize = 8;

fn partition_table(out: &mut String, c: &ClientReport) {
    let producer = c.producer.is_some();
    let mut rows: Vec<(String, &super::report::PartitionReport)> = c
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(move |p| (format!("{} [{}]", t.topic, p.partition), p))
        })
        .filter(|(_, p)| {
            p.produced_messages_per_s.is_some_and(|s| s.max > 0.0)
                || p.received_messages_per_s.is_some_and(|s| s.max > 0.0)
                || p.lag_messages.is_some_and(|l| l.summary.max > 0.0)
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    let key = |p: &super::report::PartitionReport| {
        (
            p.lag_messages.map_or(0.0, |l| l.summary.last),
            p.produced_messages_per_s.map_or(0.0, |s| s.p50)
                + p.received_messages_per_s.map_or(0.0, |s| s.p50),
        )
    };
    rows.sort_by(|a, b| {
        let (ka, kb) = (key(a.1), key(b.1));
        kb.0.total_cmp(&ka.0).then(kb.1.total_cmp(&ka.1))
    });
    let _ = writeln!(
        out,
        "  {:<31} {:>6} {:>8} {:>7} {:>8} {:>14} {:>18}",
        "partition", "leader", "out/s", "msgq", "in/s avg", "fetchq p50/max", "lag last (trend/s)"
    );
    let n = rows.len();
    for (label, p) in rows.iter().take(PARTITION_ROWS) {
        let label: String = if label.chars().count() > 31 {
            let k = label.chars().count();
            format!("…{}", label.chars().skip(k - 30).collect::<String>())
        } else {
            label.clone()
        };
        let fq = match &p.fetch_queue_messages {
            Some(s) if s.max > 0.0 => format!("{}/{}", si(s.p50), si(s.max)),
            _ => "-".into(),
        };
        let lag = match &p.lag_messages {
            Some(l) => format!(
                "{} ({})",
                si(l.summary.last),
                l.trend_per_s.map_or("-".into(), |t| format!(
                    "{}{}",
                    if t > 0.0 { "+" } else { "" },
                    si(t)
                ))
            ),
            None => "-".into(),
        };
        let _ = writeln!(
            out,
            "  {:<31} {:>6} {:>8} {:>7} {:>8} {:>14} {:>18}",
            label,
            p.leader.map_or("-".into(), |l| l.to_string()),
            or_dash(p50(&p.produced_messages_per_s).filter(|v| *v > 0.0).map(si)),
            or_dash(p50(&p.queue_messages).filter(|_| producer).map(si)),
            or_dash(
                p.received_messages_per_s
                    .map(|s| s.mean)
                    .filter(|v| *v > 0.0)
                    .map(si)
            ),
            fq,
            lag
        );
    }
    if n > PARTITION_ROWS {
        let _ = writeln!(
            out,
            "  … {} more partitions (--json has them all)",
            n - PARTITION_ROWS
        );
    }
}

fn client(out: &mut String, c: &ClientReport) {
    let _ = writeln!(out);
    let kind = c.client_type.as_deref().unwrap_or("client");
    let series = if c.series > 1 {
        format!(
            ", series {} ({})",
            c.series,
            c.started_because.as_deref().unwrap_or("restart")
        )
    } else {
        String::new()
    };
    wrap_into(
        out,
        "",
        &format!(
            "{} ({kind}{}{series}); librdkafka {}",
            c.name,
            c.client_id
                .as_deref()
                .map(|i| format!(", client.id {i}"))
                .unwrap_or_default(),
            c.version_hint
        ),
    );
    let every = c
        .interval_s
        .map(|s| format!(", every {:.2} s", s.p50))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "  emits {} (lines {}..{}){every}, {:.1} s{}",
        c.emits,
        c.first_line,
        c.last_line,
        c.duration_s,
        when(c)
    );
    if let Some(p) = &c.producer {
        let mut s = format!(
            "produced {} msg/s p50 (max {}), {}/s",
            or_dash(p50(&p.messages_per_s).map(si)),
            or_dash(p.messages_per_s.map(|s| si(s.max))),
            or_dash(p50(&p.bytes_per_s).map(bytes))
        );
        if let Some(r) = p50(&p.produce_requests_per_s) {
            let _ = write!(
                s,
                "; {} ProduceRequests/s of {}, {} msg and {} batch(es) each",
                si(r),
                or_dash(p50(&p.bytes_per_produce_request).map(bytes)),
                or_dash(p50(&p.messages_per_produce_request).map(si)),
                or_dash(p50(&p.batches_per_produce_request).map(|v| format!("{v:.2}")))
            );
        }
        if let (Some(b), Some(n)) = (p50(&p.batch_bytes_p50), p50(&p.batch_messages_p50)) {
            let _ = write!(s, "; batches p50 {} / {} msg", bytes(b), si(n));
        }
        wrap_into(out, "  ", &s);
        let mut q = String::new();
        if let Some(m) = &p.queue_messages {
            let _ = write!(
                q,
                "queue {} msg p50 (max {}) of {}",
                si(m.summary.p50),
                si(m.summary.max),
                or_dash(p.queue_max_messages.map(si))
            );
            if let Some(s) = &p.queue_share {
                let _ = write!(q, ", up to {:.0}% full", s.max * 100.0);
            }
        }
        if let Some(l) = &p.int_latency_p50_ms {
            let _ = write!(
                q,
                "; int_latency p50 {} ms (p99 {}, max {}){}",
                msf(l.summary.p50),
                or_dash(p50(&p.int_latency_p99_ms).map(msf)),
                or_dash(p.int_latency_max_ms.map(|s| msf(s.max))),
                if p.int_latency_outofrange > 0.0 {
                    format!(", {} beyond its histogram", si(p.int_latency_outofrange))
                } else {
                    String::new()
                }
            );
        }
        if !q.is_empty() {
            wrap_into(out, "  ", &q);
        }
    }
    if let Some(k) = &c.consumer {
        let mut s = format!(
            "received {} msg/s mean (p50 {}, max {}, cv {}, {} idle intervals), {}/s",
            or_dash(k.messages_per_s.map(|s| si(s.mean))),
            or_dash(p50(&k.messages_per_s).map(si)),
            or_dash(k.messages_per_s.map(|s| si(s.max))),
            or_dash(k.receive_rate_cv.map(|v| format!("{v:.2}"))),
            k.idle_intervals,
            or_dash(k.bytes_per_s.map(|s| bytes(s.mean)))
        );
        if let Some(f) = k.fetch_requests_per_s.map(|s| s.mean) {
            let _ = write!(s, "; {} Fetch requests/s", si(f));
        }
        wrap_into(out, "  ", &s);
        let mut q = String::new();
        if let Some(f) = &k.fetch_queue_messages {
            let _ = write!(
                q,
                "fetch queues {} msg p50 (max {})",
                si(f.summary.p50),
                si(f.summary.max)
            );
        }
        if let Some(l) = &k.lag_messages {
            let _ = write!(
                q,
                "; lag ({}) {} → {} msg{}",
                k.lag_field,
                si(l.first),
                si(l.summary.last),
                l.trend_per_s
                    .map(|t| format!(" ({}{}/s)", if t >= 0.0 { "+" } else { "" }, si(t)))
                    .unwrap_or_default()
            );
        }
        if k.rebalances > 0.0 {
            let _ = write!(q, "; {} rebalance(s)", k.rebalances);
        }
        if !q.is_empty() {
            wrap_into(out, "  ", &q);
        }
    }
    broker_table(out, c);
    if let Some(k) = &c.connections {
        wrap_into(out, "  ", &super::connections::line(k));
    }
    partition_table(out, c);
    let parts: usize = c.topics.iter().map(|t| t.partitions.len()).sum();
    let _ = writeln!(
        out,
        "  topics {}: {} partitions{}",
        c.topics.len(),
        parts,
        if c.not_followed > 0 {
            format!(
                " ({} brokers/partitions beyond the caps not followed)",
                c.not_followed
            )
        } else {
            String::new()
        }
    );
    if let Some(f) = &c.fatal {
        let _ = writeln!(out, "  FATAL: {f}");
    }
}

fn diagnosis(out: &mut String, d: &StatsDiagnosis) {
    let _ = writeln!(out);
    let finding = match (d.finding, d.strength) {
        (Some(f), Some(s)) => format!(
            " (finding {f}, {})",
            serde_json::to_value(s)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default()
        ),
        _ => String::new(),
    };
    wrap_into(
        out,
        "* ",
        &format!("{}: {} [{}]{finding}", d.client, d.title, d.id),
    );
    let mut at = format!(
        "{} of {} intervals",
        d.intervals_held, d.intervals_considered
    );
    if let Some(e) = d.episodes.first() {
        let _ = write!(
            at,
            ", first at {:.1}–{:.1} s (lines {}–{})",
            e.from_t_s, e.to_t_s, e.from_line, e.to_line
        );
    }
    if !d.brokers.is_empty() {
        let _ = write!(at, "; brokers {}", d.brokers.join(", "));
    }
    if !d.partitions.is_empty() {
        let shown: Vec<&str> = d.partitions.iter().take(6).map(String::as_str).collect();
        let more = d.partitions.len().saturating_sub(shown.len());
        let _ = write!(
            at,
            "; partitions {}{}",
            shown.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        );
    }
    wrap_into(out, "  where: ", &at);
    wrap_into(out, "  cause: ", &d.cause);
    wrap_into(out, "  fix:   ", &d.fix);
    if let Some(obj) = d.evidence.as_object() {
        let parts: Vec<String> = obj
            .iter()
            .filter(|(_, v)| !(v.is_object() || v.is_array() || v.is_null()))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if !parts.is_empty() {
            wrap_into(out, "  evidence: ", &parts.join(", "));
        }
    }
    if let Some(c) = &d.cannot_tell {
        wrap_into(out, "  cannot tell: ", c);
    }
}

pub(crate) fn render(r: &StatsReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", r.headline);
    let i = &r.input;
    let mut s = format!(
        "input: {}: {} lines, {} bytes{}, {} statistics objects",
        r.input_name,
        i.lines,
        i.bytes_read,
        if i.gzip { " (gzip)" } else { "" },
        i.statistics_objects
    );
    if i.wrapped_objects > 0 {
        let _ = write!(s, " ({} inside JSON log lines)", i.wrapped_objects);
    }
    let skipped = i.invalid_objects + i.truncated_objects + i.oversized_objects;
    if skipped > 0 {
        let _ = write!(
            s,
            "; skipped {} invalid, {} truncated, {} oversized",
            i.invalid_objects, i.truncated_objects, i.oversized_objects
        );
    }
    if i.duplicate_emits > 0 {
        let _ = write!(s, "; {} duplicate emits", i.duplicate_emits);
    }
    if i.other_objects > 0 {
        let _ = write!(s, "; {} other JSON objects ignored", i.other_objects);
    }
    wrap_into(&mut out, "", &s);
    for p in i.problems.iter().take(5) {
        wrap_into(&mut out, "  ", &format!("line {}: {}", p.line, p.reason));
    }
    for c in &r.clients {
        client(&mut out, c);
    }
    if !r.diagnoses.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(out, "diagnoses ({}):", r.diagnoses.len());
        for d in &r.diagnoses {
            diagnosis(&mut out, d);
        }
    }
    for w in &r.warnings {
        let _ = writeln!(out);
        wrap_into(&mut out, "warning: ", w);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_like_the_post() {
        assert_eq!(si(15_400.0), "15k");
        assert_eq!(si(1_480_000.0), "1.48M");
        assert_eq!(si(4.5), "4.50");
        assert_eq!(bytes(15_621.0), "15.6 KB");
        assert_eq!(msf(0.391), "0.39");
    }
}
