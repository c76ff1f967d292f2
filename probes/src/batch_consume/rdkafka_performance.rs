//! librdkafka's own `examples/rdkafka_performance` as a consumer: one run of it, and its
//! summary line parsed.
//!
//! In `-G` mode it subscribes with the group given, reads with `rd_kafka_consume_batch_queue(q,
//! 1000 ms, msgs, -B)` until `-c` messages came, and times from its first message to the end
//! of the call that brought the last one. When the topic holds exactly `-c` messages, that
//! last call finds fewer than a batch and waits its full 1000 ms timeout; the harness
//! therefore asks for fewer messages than the topic holds.

use crate::kit::broker::Broker;
use crate::kit::error::{ProbeError, Result};
use serde::Serialize;
use std::path::Path;

/// One consumer run: its own summary line, parsed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Run {
    pub messages: u64,
    /// Its "consumed in" time: from the first message to the last.
    pub window_s: f64,
    pub msgs_per_s: f64,
    pub mb_per_s: f64,
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Args<'a> {
    pub path: &'a Path,
    pub topic: &'a str,
    /// A fresh group id: it subscribes (`-G`), as a group member.
    pub group: &'a str,
    pub batch: usize,
    /// `-c`: stop after this many messages.
    pub messages: u64,
    /// Consumer properties (`-X`), the probe's side has the same.
    pub settings: &'a [(&'static str, String)],
}

/// Runs it to completion and parses its summary; an error if it did not read every message.
pub fn run(broker: &Broker, a: &Args) -> Result<Run> {
    let mut cmd = std::process::Command::new(a.path);
    cmd.args(["-C", "-G", a.group, "-t", a.topic, "-b", broker.bootstrap()])
        .args(["-B", &a.batch.to_string(), "-c", &a.messages.to_string()]);
    for (k, v) in a.settings {
        cmd.args(["-X", &format!("{k}={v}")]);
    }
    for (k, v) in broker.overrides() {
        cmd.args(["-X", &format!("{k}={v}")]);
    }
    let out = cmd
        .output()
        .map_err(|e| ProbeError::io(format!("running {}", a.path.display()), e))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    match parse(&stdout) {
        Some(run) if out.status.success() && run.messages >= a.messages => Ok(run),
        _ => Err(ProbeError::Kafka(format!(
            "{} did not consume the topic ({}): {}",
            a.path.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .chain(stdout.lines())
                .rfind(|l| !l.trim().is_empty())
                .unwrap_or("")
        ))),
    }
}

/// The last `% N messages (B bytes) consumed in T ms: R msgs/s (M MB/s)` line.
pub fn parse(stdout: &str) -> Option<Run> {
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with("% ") && l.contains(" consumed in ") && !l.contains("INTERVAL"))?;
    let num = |after: &str, before: &str| -> Option<f64> {
        let i = line.find(after)? + after.len();
        let rest = &line[i..];
        let j = rest.find(before)?;
        rest[..j].trim().parse().ok()
    };
    let messages = num("% ", " messages")?;
    let ms = num("consumed in ", "ms")?;
    // "(B bytes) … (M MB/s)": the last parenthesis.
    let mb: f64 = line[line.rfind('(')? + 1..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    // Its rate is computed from microseconds, its "consumed in" printed in whole ms: the
    // window from the rate is the finer one.
    let rate = num("ms: ", " msgs/s").filter(|r| *r > 0.0)?;
    let window_s = if ms > 0.0 { messages / rate } else { 0.0 };
    Some(Run {
        messages: messages as u64,
        window_s,
        msgs_per_s: rate,
        mb_per_s: mb,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_line_parses() {
        // The format of rdkafka_performance.c (librdkafka 2.12.1), consumer summary.
        let out = "% Waiting for group rebalance..\n\
                   % 2000000 messages (200000000 bytes) consumed in 1250ms: 1600000 msgs/s \
                   (160.00 MB/s)\n";
        let r = parse(out).unwrap();
        assert_eq!(r.messages, 2_000_000);
        assert!((r.msgs_per_s - 1.6e6).abs() < 1.0);
        assert!((r.mb_per_s - 160.0).abs() < 1e-9);
        assert!((r.window_s - 1.25).abs() < 1e-9);
        assert!(parse("% Waiting for group rebalance..\n").is_none());
        assert!(parse("% 12 messages (x bytes) consumed in ms\n").is_none());
    }
}
