//! analyze-stats: librdkafka statistics JSON (statistics.interval.ms), into what limited the
//! client and what to change.

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use kgap_analyzers::stats::{analyze_stats_with_timeline, ClientConfig, StatsOptions};
use kgap_analyzers::vocab::cli::{self, EXIT_ANALYZED, EXIT_UNUSABLE};

const EXAMPLES: &str = "\
examples:
  analyze-stats stats.jsonl                        # per client, per broker, diagnoses
  analyze-stats --json stats.jsonl | jq .diagnoses # the JSON contract
  analyze-stats -X batch.size=16384 -X linger.ms=5 stats.jsonl   # settings stats lack
  grep STATS app.log | analyze-stats               # objects after any log prefix
  analyze-stats --csv timeline.csv --svg-dir charts/ stats.json.gz
exit status: 0 analysed (whether or not a gap was found), 2 no statistics in the input,
unreadable input, or bad usage.";

/// Read librdkafka statistics (the JSON a client emits every statistics.interval.ms) and
/// report, per client, per broker connection (with the aggregate beside) and per partition:
/// messages and bytes per second, ProduceRequests and Fetch requests per second, bytes and
/// batches per request, int_latency, outbuf_latency and rtt percentiles, requests in flight
/// (waitresp_cnt) and queued (outbuf_cnt), the producer queue against its limits, fetch queues,
/// consumer lag and its trend, throttling, retries, timeouts, broker state changes. Then
/// diagnose: per-request-ceiling, inflight-queueing, producer-backlog, linger-bound-latency,
/// broker-throttle, request-timeouts, broker-down/broker-flapping, fetch-queue-backoff,
/// fetch-queue-empty-lag-growing, consumer-lag-growing, consumer-rebalances, fatal-error;
/// each with its evidence, cause, fix, and what statistics cannot tell apart.
///
/// Input: one object a line, several a line, pretty-printed, after a log prefix, inside a
/// JSON logger's line, gzip, or stdin. Several clients (by name) are kept apart; a restart
/// starts a new series. librdkafka 1.x to 2.12 (fields a version lacks are absent, not 0).
#[derive(Parser, Debug)]
#[command(name = "analyze-stats", version, after_help = EXAMPLES)]
struct Args {
    /// The statistics (plain or gzip); `-` or nothing reads stdin.
    file: Option<PathBuf>,
    /// Print the report as JSON (the documented contract) instead of text.
    #[arg(long)]
    json: bool,
    /// Also write one CSV row per interval and broker (and `*`, all brokers) to FILE.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Also write throughput, latency and queue-depth charts (SVG) per client into DIR.
    #[arg(long, value_name = "DIR")]
    svg_dir: Option<PathBuf>,
    /// A client setting the statistics do not carry, as librdkafka names it (repeatable):
    /// batch.size, batch.num.messages, linger.ms, queued.min.messages,
    /// queued.max.messages.kbytes, fetch.queue.backoff.ms, max.in.flight. Unset ones take
    /// librdkafka's defaults, and the report says so.
    #[arg(short = 'X', value_name = "KEY=VALUE")]
    settings: Vec<String>,
    /// Objects longer than this are skipped and reported (a client with ~40,000 partitions
    /// writes ~32 MiB).
    #[arg(long, value_name = "MIB", default_value_t = 32)]
    max_object_mb: usize,
    #[command(flatten)]
    common: kgap_analyzers::vocab::cli::CommonArgs,
}

fn main() -> ExitCode {
    let args: Args = kgap_analyzers::vocab::args::parse();
    args.common.apply();
    ExitCode::from(run(&args) as u8)
}

fn run(args: &Args) -> i32 {
    const TOOL: &str = "analyze-stats";
    let mut config = ClientConfig::default();
    for kv in &args.settings {
        if let Err(e) = config.set(kv) {
            eprintln!("{TOOL}: -X {e}");
            return EXIT_UNUSABLE;
        }
    }
    if args.max_object_mb == 0 {
        eprintln!("{TOOL}: --max-object-mb must be at least 1");
        return EXIT_UNUSABLE;
    }
    let name = cli::input_name(args.file.as_deref());
    let input = match cli::open_watched(TOOL, args.file.as_deref()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{TOOL}: {e}");
            return EXIT_UNUSABLE;
        }
    };
    let mut csv = match &args.csv {
        Some(p) => match fs::File::create(p) {
            Ok(f) => Some(BufWriter::new(f)),
            Err(e) => {
                eprintln!("{TOOL}: {}: {e}", p.display());
                return EXIT_UNUSABLE;
            }
        },
        None => None,
    };
    let opts = StatsOptions {
        config,
        max_object_bytes: args.max_object_mb.saturating_mul(1024 * 1024),
        input_name: name.clone(),
        ..StatsOptions::default()
    };
    let report = match analyze_stats_with_timeline(
        input,
        &opts,
        csv.as_mut().map(|w| w as &mut dyn Write),
    ) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{TOOL}: {name}: {e}");
            return EXIT_UNUSABLE;
        }
    };
    for p in report.input.problems.iter().take(5) {
        eprintln!("{TOOL}: {name}:{}: {}", p.line, p.reason);
    }
    let text = if args.json {
        kgap_analyzers::vocab::json_doc::pretty("analyze-stats", &report)
    } else {
        report.render_text()
    };
    if let Some(reason) = report.unusable_reason() {
        eprintln!("{TOOL}: {name}: {reason}");
        if args.json {
            let _ = cli::print_stdout(&text);
        }
        return EXIT_UNUSABLE;
    }
    if let Some(dir) = &args.svg_dir {
        if let Err(e) = write_svgs(dir, &report.render_svgs()) {
            eprintln!("{TOOL}: {}: {e}", dir.display());
            return EXIT_UNUSABLE;
        }
    }
    if let Err(e) = cli::print_stdout(&text) {
        eprintln!("{TOOL}: writing the report: {e}");
        return EXIT_UNUSABLE;
    }
    EXIT_ANALYZED
}

fn write_svgs(dir: &std::path::Path, charts: &[(String, String)]) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    for (file, svg) in charts {
        fs::write(dir.join(file), svg)?;
    }
    Ok(())
}
