//! How a capture runs: the options `capture` parses (clap) and library callers fill in.

use std::path::PathBuf;
use std::time::Duration;

/// How to capture.
#[derive(clap::Args, Debug, Clone)]
pub struct Options {
    /// The process to capture.
    #[arg(long, value_name = "PID")]
    pub pid: i32,
    /// How long: 30, 30s, 1m.
    #[arg(long, value_name = "SECS", default_value = "30s", value_parser = parse_seconds)]
    pub duration: Duration,
    /// Seconds between samples.
    #[arg(long, value_name = "SECS", default_value = "1", value_parser = parse_seconds)]
    pub interval: Duration,
    /// The bundle's folder (new or empty) [default: kgap-capture-PID-TIME].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// A librdkafka statistics file the process writes: what it appends is included.
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,
    /// A librdkafka debug log the process writes: what it appends is included, redacted.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Leave a JVM alone: no jcmd, so no recording, GC log or thread dumps.
    #[arg(long)]
    pub no_jvm: bool,
    /// Take no native stacks (each stops the target while it is read).
    #[arg(long)]
    pub no_stacks: bool,
    /// Start a JVM's local JMX agent when it is not running, to read kafka-clients' metrics
    /// (jcmd ManagementAgent.start_local: a local connector, no network port). The one change
    /// capture cannot undo: the agent stays until the JVM exits.
    #[arg(long)]
    pub jmx: bool,
    /// The jcmd to attach with [default: beside the target's java, then PATH].
    #[arg(long, value_name = "PATH")]
    pub jcmd: Option<PathBuf>,
}

impl Options {
    /// `pid` for `duration`, everything else at its default.
    pub fn new(pid: i32, duration: Duration) -> Options {
        Options {
            pid,
            duration,
            interval: Duration::from_secs(1),
            out: None,
            stats: None,
            log: None,
            no_jvm: false,
            no_stacks: false,
            jmx: false,
            jcmd: None,
        }
    }
}

/// `30`, `30s`, `2.5s`, `1m`: a positive duration (clap's value parser for `--duration`).
pub fn parse_seconds(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let (num, scale) = if let Some(m) = t.strip_suffix('m') {
        (m, 60.0)
    } else {
        (t.strip_suffix('s').unwrap_or(t), 1.0)
    };
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(Duration::from_secs_f64(v * scale)),
        _ => Err(format!("{s:?}: a positive number of seconds (30, 30s, 1m)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_with_or_without_a_unit() {
        assert_eq!(parse_seconds("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_seconds("2.5"), Ok(Duration::from_millis(2500)));
        assert_eq!(parse_seconds("1m"), Ok(Duration::from_secs(60)));
        for bad in ["0", "-1s", "x", "", "inf"] {
            assert!(parse_seconds(bad).is_err(), "{bad}");
        }
    }
}
