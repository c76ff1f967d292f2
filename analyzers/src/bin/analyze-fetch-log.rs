//! analyze-fetch-log: librdkafka `debug=fetch` logs from any client, into a gap report.

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use kgap_analyzers::cli::{self, EXIT_ANALYZED, EXIT_UNUSABLE};
use kgap_analyzers::fetch_log::{analyze_fetch_log_parallel, FetchLogOptions};

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
    /// Parser threads beside the reading and analysing ones (default: one per core
    /// but one; 0 reads and analyses on one thread).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Longest line analysed whole; longer lines are analysed by their head.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20)]
    max_line_bytes: usize,
}

fn main() -> ExitCode {
    let args = Args::parse();
    ExitCode::from(run(&args) as u8)
}

fn run(args: &Args) -> i32 {
    const TOOL: &str = "analyze-fetch-log";
    let name = cli::input_name(args.file.as_deref());
    let input = match cli::open_input(args.file.as_deref()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{TOOL}: {e}");
            return EXIT_UNUSABLE;
        }
    };
    let opts = FetchLogOptions {
        window_start: args.from,
        window_end: args.to,
        max_line_bytes: Some(args.max_line_bytes),
        fetch_wait_max_ms: Some(args.fetch_wait_max_ms),
    };
    let mut timeline_file = match &args.timeline {
        Some(path) => match File::create(path) {
            Ok(f) => Some(BufWriter::new(f)),
            Err(e) => {
                eprintln!("{TOOL}: {}: {e}", path.display());
                return EXIT_UNUSABLE;
            }
        },
        None => None,
    };
    let result = analyze_fetch_log_parallel(
        input,
        &opts,
        timeline_file.as_mut().map(|w| w as &mut dyn std::io::Write),
        args.threads,
    );
    let report = match result {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{TOOL}: {name}: {e}");
            return EXIT_UNUSABLE;
        }
    };
    let text = if args.json {
        serde_json::to_string_pretty(&report).expect("report serializes") + "\n"
    } else {
        report.render_text()
    };
    if !report.is_usable() {
        eprintln!(
            "{}",
            cli::unusable_message(
                TOOL,
                &name,
                &report.input,
                report.lines_read,
                report.records_recognised,
                "fetch records (Fetch backoff, fetch-decide, Fetch topic, MessageSet size)",
                "set debug=fetch on the consumer and let it log at debug level \
                 (rust-rdkafka: set_log_level(RDKafkaLogLevel::Debug))",
            )
        );
        if args.json {
            let _ = cli::print_stdout(&text);
        }
        return EXIT_UNUSABLE;
    }
    if let Err(e) = cli::print_stdout(&text) {
        eprintln!("{TOOL}: writing the report: {e}");
        return EXIT_UNUSABLE;
    }
    EXIT_ANALYZED
}
