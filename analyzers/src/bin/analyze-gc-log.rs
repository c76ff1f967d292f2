//! analyze-gc-log: a JVM GC log into pauses, GC time per window, heap after young GC,
//! and what to change (the post's "producer that collapsed at K=16").

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use kgap_analyzers::gc::{self, analyze_gc_logs, files, GcInput, GcLogOptions};
use kgap_analyzers::vocab::cli::{self, EXIT_ANALYZED, EXIT_UNUSABLE};

const EXAMPLES: &str = "\
examples:
  analyze-gc-log gc.log                       # pauses, GC time per window, diagnoses
  analyze-gc-log --json gc.log | jq .diagnoses   # the JSON contract
  analyze-gc-log gc.log gc.log.0 gc.log.1     # rotated files of one JVM, any order
  analyze-gc-log --timeline gc.csv --svg gc.svg gc.log  # per-window CSV and a plot
  analyze-gc-log --window 5 --long-pause-ms 100 gc.log  # 5 s windows, 100 ms pauses count
  zcat gc.log.gz | analyze-gc-log             # stdin; gzip files are detected too";

/// Read a JVM GC log and report stop-the-world pauses by type (count, total, p50,
/// p99, max), GC time as a share of each window of wall time and the worst window,
/// full GCs, evacuation failures, the heap left after young GCs as a share of the
/// maximum and its trend, humongous allocations, ZGC allocation stalls and concurrent
/// cycles that fell behind. Then diagnose: gc-collapse (a window ≥ 20% in GC while the
/// heap stays ≥ 80% full after young GC: a live backlog; bound buffer.memory or the
/// queue), long-pauses, premature-promotion, or no GC problem.
///
/// Formats: JDK 9+ -Xlog:gc or -Xlog:gc* with any decorations (G1, Parallel, Serial,
/// ZGC, generational ZGC, Shenandoah) and JDK 8 -XX:+PrintGCDetails (G1, Parallel,
/// CMS). Exit status: 0 analysed, 2 unsupported input or usage.
#[derive(Parser, Debug)]
#[command(name = "analyze-gc-log", version, after_help = EXAMPLES)]
struct Args {
    /// GC log files (plain or gzip), oldest first or in any order (sorted by their
    /// first timestamp); `-` or nothing reads stdin.
    files: Vec<PathBuf>,
    /// Print the report as JSON (the documented contract) instead of text.
    #[arg(long)]
    json: bool,
    /// Also write one CSV row per window (GC ms, share, heap after GC) to FILE.
    #[arg(long, value_name = "FILE")]
    timeline: Option<PathBuf>,
    /// Also write an SVG of heap after GC and pause times to FILE.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Window for GC time as a share of wall time, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 1.0)]
    window: f64,
    /// Pauses at least this long are reported as long.
    #[arg(long, value_name = "MS", default_value_t = kgap_analyzers::findings::diagnoses::gc::LONG_PAUSE_MS)]
    long_pause_ms: f64,
    /// The JVM's maximum heap in MB (-Xmx), for logs that do not print it: a maximum the log
    /// states itself wins, and the report says the option was not used.
    #[arg(long, value_name = "MB", value_parser = positive_mb)]
    max_heap_mb: Option<f64>,
    /// Threads (default: one per core). A plain file is read and parsed in chunks by all
    /// of them, the analysing one among them; gzip, a pipe or stdin is read by a thread of
    /// its own beside N parsers. 0 reads, parses and analyses on one thread.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    #[command(flatten)]
    common: kgap_analyzers::vocab::cli::CommonArgs,
}

/// A heap size in MB: a positive, finite number (0 would silently drop the heap analysis).
fn positive_mb(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(mb) if mb > 0.0 && mb.is_finite() => Ok(mb),
        _ => Err(format!(
            "the heap in MB must be a positive number, got {s:?}"
        )),
    }
}

fn main() -> ExitCode {
    let args: Args = kgap_analyzers::vocab::args::parse();
    args.common.apply();
    ExitCode::from(run(&args) as u8)
}

fn run(args: &Args) -> i32 {
    const TOOL: &str = "analyze-gc-log";
    if !(args.window > 0.0 && args.window.is_finite()) {
        eprintln!("{TOOL}: --window must be a positive number of seconds");
        return EXIT_UNUSABLE;
    }
    // Ordering peeks at each file's first timestamp: a FIFO or stdin would block there and
    // lose what it read, so a set with one is read in the order given.
    let all_regular = args
        .files
        .iter()
        .all(|p| p != std::path::Path::new("-") && std::fs::metadata(p).is_ok_and(|m| m.is_file()));
    let paths: Vec<PathBuf> = if args.files.len() > 1 && all_regular {
        let (ordered, changed) = files::order_by_first_timestamp(&args.files);
        if changed {
            let names: Vec<String> = ordered.iter().map(|p| p.display().to_string()).collect();
            eprintln!("{TOOL}: reading oldest first: {}", names.join(", "));
        }
        ordered
    } else {
        args.files.clone()
    };
    let mut inputs = Vec::new();
    if paths.is_empty() {
        match cli::open_source(TOOL, None) {
            Ok(r) => inputs.push(GcInput {
                name: cli::input_name(None),
                reader: r,
            }),
            Err(e) => {
                eprintln!("{TOOL}: {e}");
                return EXIT_UNUSABLE;
            }
        }
    }
    for p in &paths {
        match cli::open_source(TOOL, Some(p)) {
            Ok(r) => inputs.push(GcInput {
                name: cli::input_name(Some(p)),
                reader: r,
            }),
            Err(e) => {
                eprintln!("{TOOL}: {e}");
                return EXIT_UNUSABLE;
            }
        }
    }
    let opts = GcLogOptions {
        window_s: args.window,
        long_pause_ms: args.long_pause_ms,
        max_heap_bytes: args.max_heap_mb.map(|mb| mb * 1048576.0),
        threads: Some(args.threads.unwrap_or_else(gc::default_threads)),
        ..GcLogOptions::default()
    };
    let timeline: Option<Box<dyn Write>> = match &args.timeline {
        Some(path) => match File::create(path) {
            Ok(f) => Some(Box::new(BufWriter::new(f))),
            Err(e) => {
                eprintln!("{TOOL}: {}: {e}", path.display());
                return EXIT_UNUSABLE;
            }
        },
        None => None,
    };
    let report = match analyze_gc_logs(inputs, &opts, timeline) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{TOOL}: {e}");
            return EXIT_UNUSABLE;
        }
    };
    let text = if args.json {
        kgap_analyzers::vocab::json_doc::pretty("analyze-gc-log", &report)
    } else {
        report.render_text()
    };
    if let Some(reason) = &report.unsupported {
        eprintln!("{TOOL}: {}: unsupported: {reason}", report.files.join(", "));
        if args.json {
            let _ = cli::print_stdout(&text);
        }
        return EXIT_UNUSABLE;
    }
    if let Some(path) = &args.svg {
        if let Err(e) = std::fs::write(path, report.render_svg()) {
            eprintln!("{TOOL}: {}: {e}", path.display());
            return EXIT_UNUSABLE;
        }
    }
    if let Err(e) = cli::print_stdout(&text) {
        eprintln!("{TOOL}: writing the report: {e}");
        return EXIT_UNUSABLE;
    }
    EXIT_ANALYZED
}
