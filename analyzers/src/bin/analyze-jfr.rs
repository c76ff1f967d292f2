//! analyze-jfr: a JDK Flight Recorder recording (or its `jfr print --json` export)
//! into a gap report, with no JDK needed.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use kgap_analyzers::jfr::{analyze_jfr, analyze_jfr_file, ReportOptions};
use kgap_analyzers::vocab::cli::{self, EXIT_ANALYZED, EXIT_UNUSABLE};

const EXAMPLES: &str = "\
examples:
  analyze-jfr producer.jfr                  # threads, socket I/O, hot methods, GC, diagnoses
  analyze-jfr --events broker.jfr           # event types with counts, like `jfr summary`
  analyze-jfr --json consumer.jfr | jq '.socket[]'   # the documented JSON report
  analyze-jfr --events --json app.jfr | jq .events   # event type -> count
  jfr print --json app.jfr | analyze-jfr    # an export works too (streamed)
  analyze-jfr --top 30 profile.jfr          # longer hot-method/allocation tables
  java -XX:StartFlightRecording:settings=socket-io.jfc,filename=app.jfr App   # every socket op";

/// Read a JFR recording natively (HotSpot, async-profiler or dd-trace; format
/// 1.x/2.x; several chunks; cut-short files read up to their last complete event)
/// or a `jfr print --json` export, and report: the recording's span and JVM;
/// per-thread CPU (jdk.ThreadCPULoad); socket reads and writes per thread and
/// remote address with bytes per operation (p50/p90/max) and ops/s; hot methods
/// and stacks (jdk.ExecutionSample, async-profiler's too); GC pauses and heap
/// after GC; allocation by class; lock contention. Then say, with evidence,
/// whether writes or reads pile up at a fixed socket buffer (send.buffer.bytes /
/// receive.buffer.bytes), a consumer thread runs at one core, GC takes a large
/// share, or deflate dominates a producer. Socket sizes need every read and write
/// recorded: layer fixtures/jfr/capture/socket-io.jfc over settings=profile. Exit
/// status: 0 analysed, 2 unusable input or usage.
#[derive(Parser, Debug)]
#[command(name = "analyze-jfr", version, after_help = EXAMPLES)]
struct Args {
    /// The recording (.jfr) or `jfr print --json` output; `-` or nothing reads stdin.
    file: Option<PathBuf>,
    /// Print JSON (the documented contract) instead of text.
    #[arg(long)]
    json: bool,
    /// List event types with their counts and sizes (like `jfr summary`) instead of the report.
    #[arg(long)]
    events: bool,
    /// Rows in the hot-method, allocation and lock tables.
    #[arg(long, value_name = "N", default_value_t = 15)]
    top: usize,
    /// Frames kept per top stack.
    #[arg(long, value_name = "N", default_value_t = 12)]
    stack_depth: usize,
    #[command(flatten)]
    common: kgap_analyzers::vocab::cli::CommonArgs,
}

fn main() -> ExitCode {
    let args: Args = kgap_analyzers::vocab::args::parse();
    args.common.apply();
    ExitCode::from(run(&args) as u8)
}

/// Below this size a recording is read in well under the 2 s after which a progress bar
/// appears (~0.1 s for 16 MB here; 0.6 s at 100 MB/s).
const NO_BAR_BELOW: u64 = 64 << 20;

/// The input as a regular file to map, when no progress bar would be drawn anyway: stderr
/// not a terminal, `-q`, or a file read in less time than a bar waits for. The bar counts
/// bytes as they are read, and mapped chunks are not read. Anything else (stdin, a FIFO, a
/// file that does not open) goes the read way, which also says what is wrong with it.
fn regular_file(args: &Args) -> Option<std::fs::File> {
    let path = args
        .file
        .as_deref()
        .filter(|p| *p != std::path::Path::new("-"))?;
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file()
        || (kgap_analyzers::engine::progress::enabled() && meta.len() >= NO_BAR_BELOW)
    {
        return None;
    }
    std::fs::File::open(path).ok()
}

fn run(args: &Args) -> i32 {
    const TOOL: &str = "analyze-jfr";
    let name = cli::input_name(args.file.as_deref());
    let opts = ReportOptions {
        top: args.top,
        stack_depth: args.stack_depth,
    };
    let analysed = match regular_file(args) {
        // Mapped where it lies: no progress bar to feed (see `regular_file`).
        Some(file) => analyze_jfr_file(file, &name, &opts),
        None => match cli::open_watched(TOOL, args.file.as_deref()) {
            Ok(input) => analyze_jfr(input, &name, &opts),
            Err(e) => {
                eprintln!("{TOOL}: {e}");
                return EXIT_UNUSABLE;
            }
        },
    };
    let report = match analysed {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{TOOL}: {name}: {e}");
            return EXIT_UNUSABLE;
        }
    };
    for p in &report.input.problems {
        eprintln!("{TOOL}: {name}: {p}");
    }
    let text = match (args.events, args.json) {
        (true, true) => {
            kgap_analyzers::vocab::json_doc::pretty_kind(TOOL, "events", &report.events_json())
        }
        (true, false) => report.render_events(),
        (false, true) => kgap_analyzers::vocab::json_doc::pretty(TOOL, &report),
        (false, false) => report.render_text(),
    };
    if !report.is_usable() {
        eprintln!("{TOOL}: {name}: no events could be read: nothing to analyse");
        eprintln!(
            "{TOOL}: hint: give a .jfr file (from -XX:StartFlightRecording, jcmd JFR.dump, \
             async-profiler -o jfr) or the output of `jfr print --json`"
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
