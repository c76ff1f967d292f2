//! analyze-fetch-log: librdkafka `debug=fetch` logs from any client, into a gap report.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use kgap_analyzers::fetch_log::{analyze_fetch_log_parallel, FetchLogOptions};
use kgap_analyzers::vocab::cli;

const EXAMPLES: &str = "\
examples:
  analyze-fetch-log consumer.log                 # per-partition backoffs, diagnoses
  analyze-fetch-log --json app.log.gz | jq '.partitions[]'  # gzip is detected
  docker logs my-consumer 2>&1 | analyze-fetch-log   # any wrapper: JSON, .NET, syslog, ...
  analyze-fetch-log --timeline per-sec.csv consumer.log  # messages enqueued and backoffs per second
  analyze-fetch-log --fetch-wait-max-ms 100 consumer.log # the consumer's fetch.wait.max.ms";

/// Read a librdkafka debug log (debug=fetch, optionally protocol) written by any
/// client or wrapper, and report per partition how often and how long the fetcher
/// backed off and why (`Local: Queue full` vs fetch errors), its fetch-decide
/// transitions, and per broker the FetchRequests, their round trips and the empty
/// fetches the broker held for fetch.wait.max.ms. Then say whether the fetcher slept
/// on a full local queue (queued.min.messages / fetch.queue.backoff.ms). Exit
/// status: 0 analysed, 2 unusable input or usage.
#[derive(Parser, Debug)]
#[command(name = "analyze-fetch-log", version, after_help = EXAMPLES)]
struct Args {
    /// The log (plain or gzip); `-` or nothing reads stdin.
    file: Option<PathBuf>,
    /// Print the report as JSON (the documented contract) instead of text.
    #[arg(long)]
    json: bool,
    /// Also write one CSV row per second of the log to FILE.
    #[arg(long, value_name = "FILE")]
    timeline: Option<PathBuf>,
    /// Ignore records before this time (epoch seconds, as librdkafka prints them).
    #[arg(long, value_name = "SECS")]
    from: Option<f64>,
    /// Ignore records after this time (epoch seconds).
    #[arg(long, value_name = "SECS")]
    to: Option<f64>,
    /// The consumer's fetch.wait.max.ms: empty fetches this long were held by the broker.
    #[arg(long, value_name = "MS", default_value_t = 500)]
    fetch_wait_max_ms: u64,
    /// Threads (default: one per core). A plain file is read and parsed in chunks by all
    /// of them, the analysing one among them; gzip, a pipe or stdin is read by a thread of
    /// its own beside N parsers. 0 reads, parses and analyses on one thread.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Longest line analysed whole; longer lines are analysed by their head.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20)]
    max_line_bytes: usize,
    #[command(flatten)]
    common: kgap_analyzers::vocab::cli::CommonArgs,
}

fn main() -> ExitCode {
    let args: Args = kgap_analyzers::vocab::args::parse();
    args.common.apply();
    ExitCode::from(run(&args) as u8)
}

fn run(args: &Args) -> i32 {
    let tool = cli::LogTool {
        name: "analyze-fetch-log",
        wanted: "fetch records (Fetch backoff, fetch-decide, Fetch topic, MessageSet size)",
        how_to_enable: "set debug=fetch on the consumer and let it log at debug level \
                 (rust-rdkafka: set_log_level(RDKafkaLogLevel::Debug))",
    };
    let opts = FetchLogOptions {
        window_start: args.from,
        window_end: args.to,
        max_line_bytes: Some(args.max_line_bytes),
        fetch_wait_max_ms: Some(args.fetch_wait_max_ms),
    };
    cli::run_log_analyzer(
        &tool,
        args.file.as_deref(),
        args.json,
        args.timeline.as_deref(),
        |input, timeline| analyze_fetch_log_parallel(input, &opts, timeline, args.threads),
    )
}
