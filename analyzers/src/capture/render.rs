//! The capture's text: what was captured (80 columns), gap-report's report of the bundle,
//! and what the capture could not see.

use crate::vocab::report::wrap_into;

use super::outcome::Capture;
use super::target::ClientKind;

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// One labelled line, wrapped under its text.
fn line(o: &mut String, label: &str, text: &str) {
    wrap_into(o, &format!("  {label:<10}"), text);
}

pub(crate) fn text(c: &Capture) -> String {
    let m = &c.manifest;
    let t = &m.target;
    let mut o = String::new();
    let kind = match t.kind {
        ClientKind::Librdkafka => "a librdkafka client",
        ClientKind::Jvm => "a JVM",
    };
    wrap_into(
        &mut o,
        "capture: ",
        &format!("pid {} ({}), {kind}, user {}", t.pid, t.name, t.user),
    );
    line(&mut o, "command", &t.command);
    line(
        &mut o,
        "captured",
        &format!("{:.0} of {:.0} s ({})", m.captured_s, m.duration_s, m.ended),
    );
    line(
        &mut o,
        "bundle",
        &format!(
            "{} ({} files; manifest.json says what each holds)",
            c.dir.display(),
            m.files.len() + 1
        ),
    );
    if let Some(k) = &m.kafka_client {
        let by = m.kafka_client_shown_by.as_deref().unwrap_or("its threads");
        line(&mut o, "client", &format!("{k}, shown by {by}"));
    }
    if !m.client_threads.is_empty() {
        let mut names: Vec<String> = m
            .client_threads
            .iter()
            .map(|th| format!("{} ({})", th.name, th.role))
            .collect();
        let more = names.len().saturating_sub(6);
        names.truncate(6);
        if more > 0 {
            names.push(format!("and {more} more"));
        }
        line(&mut o, "threads", &names.join(", "));
    }
    if let Some(mem) = &m.memory {
        line(
            &mut o,
            "memory",
            &format!(
                "RSS {} -> {} (min {}, max {}; {} drop(s) of a tenth of the peak), {:.0} \
                 minor faults/s, {} major",
                mb(mem.rss_first_bytes),
                mb(mem.rss_last_bytes),
                mb(mem.rss_min_bytes),
                mb(mem.rss_max_bytes),
                mem.rss_drops,
                mem.minor_faults_per_s,
                mem.major_faults
            ),
        );
    }
    let rtt = |v: Option<f64>| v.map_or("?".into(), |v| format!("{v:.2}"));
    for conn in m.connections.iter().take(8) {
        line(
            &mut o,
            "tcp",
            &format!(
                "{} -> {}: rtt {} ms (max {}), send-q max {} B, not sent max {} B, {} \
                 retransmits, {} out, {} in",
                conn.local,
                conn.peer,
                rtt(conn.rtt_ms_last),
                rtt(conn.rtt_ms_max),
                conn.send_q_max_bytes,
                conn.notsent_max_bytes,
                conn.retransmits,
                mb(conn.bytes_sent),
                mb(conn.bytes_received)
            ),
        );
    }
    if m.connections.len() > 8 {
        let more = m.connections.len() - 8;
        line(&mut o, "tcp", &format!("and {more} more (sockets.csv)"));
    }
    for ch in &m.changes {
        line(&mut o, "changed", ch);
    }
    match &m.jvm_restored {
        Some(r) if r.as_before => line(
            &mut o,
            "restored",
            "the JVM's log outputs and JFR recordings are as before the capture (read again \
             after it)",
        ),
        Some(r) => {
            for d in &r.differences {
                line(&mut o, "NOT AS BEFORE", d);
            }
        }
        None => {}
    }
    for p in &m.stacks {
        let threads: Vec<String> = p
            .threads
            .iter()
            .map(|t| format!("{} (tid {}, {:.2} cores)", t.name, t.tid, t.cores))
            .collect();
        let text = match &p.file {
            Some(f) => format!(
                "at {:.0} s, {}: {} ({}; {} stopped {} for at most {} ms)",
                p.at_s,
                threads.join(", "),
                p.why,
                f,
                p.tool,
                if p.tool == "gdb" {
                    "the process"
                } else {
                    "each thread"
                },
                p.stopped_ms
            ),
            None => format!("at {:.0} s: {}", p.at_s, p.why),
        };
        line(&mut o, "stacks", &text);
    }
    if let Some(j) = &m.jmx {
        let text = if j.reachable {
            let beans: Vec<String> = j.mbeans.iter().map(|(d, n)| format!("{n} {d}")).collect();
            let mut t = format!("{}; MBeans read: {}", j.how, beans.join(", "));
            if j.skipped_mbeans + j.skipped_attributes > 0 {
                t.push_str(&format!(
                    " (not read: {} MBean(s) gone before their reading, {} attribute(s) whose \
                     getter failed)",
                    j.skipped_mbeans, j.skipped_attributes
                ));
            }
            for (bean, attr, value) in j.headline.iter().take(8) {
                let client = bean
                    .split(',')
                    .find_map(|k| k.strip_prefix("client-id="))
                    .unwrap_or("?");
                t.push_str(&format!("; {client} {attr} {value}"));
            }
            t
        } else {
            format!("not reachable: {}", j.how)
        };
        line(&mut o, "jmx", &text);
    }
    for p in &m.problems {
        line(&mut o, "problem", p);
    }
    o.push('\n');
    o.push_str(&c.report.render_text());
    o.push_str("\nWHAT THE CAPTURE COULD NOT SEE, AND THE ARTIFACT THAT WOULD SHOW IT\n");
    for l in &c.cannot_see {
        wrap_into(&mut o, "  - ", l);
    }
    o
}
