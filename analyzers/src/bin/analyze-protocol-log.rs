//! analyze-protocol-log: librdkafka `debug=protocol` logs from any client, into a gap report.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use kgap_analyzers::protocol_log::{analyze_protocol_log_parallel, ProtocolLogOptions};
use kgap_analyzers::vocab::cli;

const EXAMPLES: &str = "\
examples:
  analyze-protocol-log rdkafka.log                # human report: requests, rtt, diagnoses
  analyze-protocol-log --json app.log.gz | jq .diagnoses   # gzip is detected
  kubectl logs my-pod | analyze-protocol-log      # any wrapper: JSON, .NET, syslog, ...
  analyze-protocol-log --timeline per-sec.csv rdkafka.log  # requests/s, rtt, in-flight per second
  analyze-protocol-log --from 1796017460 --to 1796017520 rdkafka.log  # one minute only";

/// Read a librdkafka debug log (debug=protocol, optionally msg) written by any
/// client or wrapper, and report its requests per broker and type: counts, sizes,
/// round trips, in-flight depth, retries and timeouts. Then say what bounded them:
/// the broker's per-request cost (small ProduceRequests at a flat rate), in-flight
/// queueing (tiny requests, deep window, rtt growing with depth), or timeouts with
/// head-of-line blocking. Exit status: 0 analysed, 2 unusable input or usage.
#[derive(Parser, Debug)]
#[command(name = "analyze-protocol-log", version, after_help = EXAMPLES)]
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
        name: "analyze-protocol-log",
        wanted: "protocol records (Sent/Received/Retrying/Timed out)",
        how_to_enable: "set debug=protocol on the client and let it log at debug level \
                 (rust-rdkafka: set_log_level(RDKafkaLogLevel::Debug))",
    };
    let opts = ProtocolLogOptions {
        window_start: args.from,
        window_end: args.to,
        max_line_bytes: Some(args.max_line_bytes),
    };
    cli::run_log_analyzer(
        &tool,
        args.file.as_deref(),
        args.json,
        args.timeline.as_deref(),
        |input, timeline| analyze_protocol_log_parallel(input, &opts, timeline, args.threads),
    )
}
