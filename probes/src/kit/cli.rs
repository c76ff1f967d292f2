//! Command-line options every probe shares (flattened into each probe's clap parser).

use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// Options shared by every probe.
#[derive(Debug, Clone, Args)]
pub struct CommonArgs {
    /// Bootstrap servers of a real cluster (host:port[,…]; -b as kcat, --bootstrap-server as
    /// Kafka's tools). Without it the probe starts librdkafka's mock cluster in-process and
    /// says so in every output.
    #[arg(long, short = 'b', visible_alias = "bootstrap-server", value_name = "HOST:PORT[,…]",
          value_parser = parse_brokers)]
    pub brokers: Option<String>,

    /// librdkafka property for the probe's clients, applied last (repeatable): -X linger.ms=5.
    /// An unknown key is librdkafka's error (exit 2).
    #[arg(short = 'X', value_name = "KEY=VALUE", value_parser = parse_property)]
    pub property: Vec<(String, String)>,

    /// Repetitions of every setting; the report gives the median with min and max.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub reps: u32,

    /// Print the result document (JSON) on stdout instead of the table.
    #[arg(long)]
    pub json: bool,

    /// Keep the run's artifacts here: result.json, runs.csv, and per run the librdkafka debug
    /// log (librdkafka's stderr format), statistics JSON lines and per-thread CPU.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Also write the report as one self-contained HTML page to FILE: the verdicts first,
    /// the charts beside the points' numbers, nothing fetched (the --out folder always has
    /// it as report.html).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// No progress lines on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,

    /// Seed of the run order: within each rep the points run in an order shuffled from it,
    /// and the client that goes first alternates. Printed in every result; give it again to
    /// replay an order. Default: drawn from the clock.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Pin the probe, and every thread it starts (librdkafka's, the embedded mock's), to
    /// these cpus (e.g. 1, 0-1, 1,3), as the post pinned client and broker apart. Every
    /// output says whether the client shared cores with a broker on this machine.
    #[arg(long, value_name = "LIST", value_parser = parse_cpu_list)]
    pub cpus: Option<CpuList>,

    /// Replicas of every partition of the probe's topics (1-16; more than the cluster's
    /// brokers is refused). The partitions are spread over the brokers, leaders round robin.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(i32).range(1..=16))]
    pub replication_factor: i32,
}

/// A `--cpus` list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(pub Vec<usize>);

fn parse_cpu_list(s: &str) -> std::result::Result<CpuList, String> {
    crate::kit::placement::parse_cpus(s).map(CpuList)
}

/// A bootstrap list: `host:port` items (an optional `proto://` prefix, `[v6]:port`), each
/// port 1–65535. Checked before anything starts, so a typo is a usage error, not an 8 s
/// wait for a broker that cannot answer.
pub fn parse_brokers(s: &str) -> std::result::Result<String, String> {
    if s.trim().is_empty() {
        return Err("empty: give HOST:PORT[,…] (e.g. 127.0.0.1:9092)".into());
    }
    for item in s.split(',') {
        let item = item.trim();
        let bare = item.split_once("://").map_or(item, |(_, rest)| rest);
        let Some((host, port)) = bare.rsplit_once(':') else {
            return Err(format!(
                "{item:?} has no port: give HOST:PORT (e.g. 127.0.0.1:9092)"
            ));
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err(format!("{item:?} has no host"));
        }
        match port.parse::<u32>() {
            Ok(p) if (1..=65535).contains(&p) => {}
            _ => return Err(format!("{item:?}: the port must be 1–65535, got {port:?}")),
        }
    }
    Ok(s.split(',').map(str::trim).collect::<Vec<_>>().join(","))
}

/// `KEY=VALUE` of -X (and the Java probes' -J): the key trimmed, the value as given.
pub fn parse_property(s: &str) -> std::result::Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(format!("expected KEY=VALUE, got {s:?}")),
    }
}

/// Parses `--duration` values such as `10`, `10s`, `500ms`, `2m`.
pub fn parse_duration(s: &str) -> std::result::Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| !(c.is_ascii_digit() || c == '.')) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, "s"),
    };
    let n: f64 = num
        .parse()
        .map_err(|_| format!("bad duration {s:?} (e.g. 10s, 500ms, 2m)"))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        _ => return Err(format!("bad duration unit in {s:?} (ms, s or m)")),
    };
    if !(secs > 0.0 && secs.is_finite()) {
        return Err(format!("duration must be positive, got {s:?}"));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert!(parse_duration("0").is_err());
        assert!(parse_duration("ten").is_err());
        assert!(parse_duration("5h").is_err());
    }

    #[test]
    fn broker_lists_are_checked_before_anything_starts() {
        assert_eq!(parse_brokers("127.0.0.1:9092").unwrap(), "127.0.0.1:9092");
        assert_eq!(parse_brokers("a:1, b:2").unwrap(), "a:1,b:2");
        assert!(parse_brokers("SASL_SSL://kafka-1:9093,[::1]:9092").is_ok());
        assert!(parse_brokers("").unwrap_err().contains("empty"));
        assert!(parse_brokers("127.0.0.1:99999")
            .unwrap_err()
            .contains("1–65535"));
        assert!(parse_brokers("127.0.0.1:0").is_err());
        assert!(parse_brokers("kafka-1").unwrap_err().contains("no port"));
        assert!(parse_brokers(":9092").unwrap_err().contains("no host"));
        assert!(parse_brokers("a:1,,b:2").is_err());
    }

    #[test]
    fn properties() {
        assert_eq!(
            parse_property("linger.ms=5").unwrap(),
            ("linger.ms".to_string(), "5".to_string())
        );
        assert_eq!(parse_property("a=b=c").unwrap().1, "b=c");
        assert!(parse_property("novalue").is_err());
        assert!(parse_property("=x").is_err());
    }
}
