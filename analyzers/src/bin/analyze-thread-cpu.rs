//! analyze-thread-cpu: cores per thread over time, and which thread is the limit.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use kgap_analyzers::thread_cpu::snapshot::PasteOptions;
use kgap_analyzers::thread_cpu::threads;
use kgap_analyzers::thread_cpu::{
    analyze_from, sample, Analyzer, FromReport, Options, RecordingHeader, RecordingWriter,
    SampleOptions, Source, Target,
};
use kgap_analyzers::vocab::cli::{self, EXIT_ANALYZED, EXIT_UNUSABLE};

const TOOL: &str = "analyze-thread-cpu";

const EXAMPLES: &str = "\
examples:
  analyze-thread-cpu --pid 4242 --duration 30      # sample a running client for 30 s
  analyze-thread-cpu -- ./my-consumer --topic t    # run a command, sample it until it exits
  analyze-thread-cpu --pid 4242 --save rec.jsonl   # record on the production host...
  analyze-thread-cpu --from rec.jsonl --json       # ...and analyse it elsewhere
  analyze-thread-cpu --from runs/x/threads.csv     # a kgap probe's per-second threads.csv
  top -b -H -n 3 -d 1 -p 4242 | analyze-thread-cpu --from -   # a snapshot, from stdin
  analyze-thread-cpu --from paste.txt              # top/ps/pidstat rows + gdb or jstack
  analyze-thread-cpu --pid 4242 --timeline t.csv --svg t.svg  # every thread, and a chart";

/// Which thread is the limit? Cores per thread, with each thread's role.
///
/// Sample /proc/<pid>/task/*/stat of a running process (--pid) or of a command it
/// runs (-- cmd args…), or read a saved recording (--from), and report cores per thread
/// over time, the top threads, the threads that stayed saturated, and what that means
/// for each thread's role (librdkafka rdk:broker*/rdk:main, the Java client's network
/// and consumer threads, JVM GC and JIT threads, the application's own). --from also
/// reads the snapshots users already have, alone or mixed in one paste and joined by
/// thread id: top -H (batch or interactive, any locale), ps -L/-T/-eLf, pidstat -t,
/// gdb/pstack backtraces, jstack/jcmd Thread.print/kill -3 dumps; the report says what
/// kind of figure each thread's cores are (now, between two snapshots, or over its
/// life). Exit status: 0 analysed, 2 unusable input or usage (the command's own exit
/// status is reported, not returned).
#[derive(Parser, Debug)]
#[command(name = "analyze-thread-cpu", version, after_help = EXAMPLES)]
struct Args {
    /// Sample this running process.
    #[arg(long, value_name = "PID", conflicts_with_all = ["from", "command"])]
    pid: Option<i32>,
    /// Analyse a recording made with --save (or a probe's threads.csv), or a paste of
    /// thread snapshots (top, ps, pidstat, gdb, jstack), instead of sampling; plain or gzip,
    /// `-` reads stdin.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["command", "save"])]
    from: Option<PathBuf>,
    /// Seconds between samples.
    #[arg(long, value_name = "SECS", default_value_t = 1.0)]
    interval: f64,
    /// Stop after this many seconds (a command still running is then killed).
    #[arg(long, value_name = "SECS")]
    duration: Option<f64>,
    /// Record every raw sample to FILE (JSON lines, flushed per sample) for --from.
    #[arg(long, value_name = "FILE")]
    save: Option<PathBuf>,
    /// Print the report as JSON (the documented contract) instead of text.
    #[arg(long)]
    json: bool,
    /// Also write every thread's cores per interval as CSV to FILE.
    #[arg(long, value_name = "FILE")]
    timeline: Option<PathBuf>,
    /// Also write an SVG chart of the busiest threads over time to FILE.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// A thread at or above this many cores (in a snapshot: "at a full core") ...
    #[arg(long, value_name = "CORES", default_value_t = 0.9)]
    saturated_cores: f64,
    /// ... for at least this many consecutive seconds is saturated (recordings and live
    /// runs).
    #[arg(long, value_name = "SECS", default_value_t = 3.0)]
    saturated_seconds: f64,
    /// Threads and groups listed in the text report.
    #[arg(long, value_name = "N", default_value_t = 10)]
    top: usize,
    /// The command to run and sample (after `--`).
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
    #[command(flatten)]
    common: kgap_analyzers::vocab::cli::CommonArgs,
}

fn main() -> ExitCode {
    let args: Args = kgap_analyzers::vocab::args::parse();
    args.common.apply();
    ExitCode::from(run(&args) as u8)
}

fn create(path: &PathBuf) -> Result<BufWriter<File>, i32> {
    File::create(path).map(BufWriter::new).map_err(|e| {
        eprintln!("{TOOL}: {}: {e}", path.display());
        EXIT_UNUSABLE
    })
}

fn run(args: &Args) -> i32 {
    let positive = |v: f64| v.is_finite() && v > 0.0;
    if !positive(args.interval) || args.duration.is_some_and(|d| !positive(d)) {
        eprintln!("{TOOL}: --interval and --duration must be positive seconds");
        return EXIT_UNUSABLE;
    }
    if !args.saturated_cores.is_finite() || !args.saturated_seconds.is_finite() {
        eprintln!("{TOOL}: --saturated-cores and --saturated-seconds must be numbers");
        return EXIT_UNUSABLE;
    }
    let opts = Options {
        saturated_cores: args.saturated_cores,
        saturated_seconds: args.saturated_seconds,
        top: args.top,
        ..Options::default()
    };
    let mut analyzer = Analyzer::new(opts);
    if let Some(path) = &args.timeline {
        match create(path) {
            Ok(w) => match analyzer.with_timeline_csv(Box::new(w)) {
                Ok(a) => analyzer = a,
                Err(e) => {
                    eprintln!("{TOOL}: {}: {e}", path.display());
                    return EXIT_UNUSABLE;
                }
            },
            Err(code) => return code,
        }
    }

    if let Some(path) = &args.from {
        return from(args, path, analyzer);
    }
    let report = {
        let (target, source) = match (args.pid, args.command.is_empty()) {
            (Some(pid), true) => (Target::Pid(pid), Source::Pid(pid)),
            (None, false) => (
                Target::Command(args.command.clone()),
                Source::Command(args.command.clone()),
            ),
            _ => {
                eprintln!(
                    "{TOOL}: give --pid PID, a command after `--`, or --from FILE (see --help)"
                );
                return EXIT_UNUSABLE;
            }
        };
        let sopts = SampleOptions {
            interval: Duration::from_secs_f64(args.interval),
            duration: args.duration.map(Duration::from_secs_f64),
        };
        let mut recorder = match &args.save {
            Some(path) => {
                let header = RecordingHeader {
                    recording: "kgap-thread-cpu".into(),
                    version: 1,
                    ticks_per_s: threads::ticks_per_second(),
                    interval_ms: (args.interval * 1000.0).round() as u64,
                    pid: args.pid,
                    command: (!args.command.is_empty()).then(|| args.command.clone()),
                };
                match create(path).map(|w| RecordingWriter::new(w, &header)) {
                    Ok(Ok(w)) => Some(w),
                    Ok(Err(e)) => {
                        eprintln!("{TOOL}: {}: {e}", path.display());
                        return EXIT_UNUSABLE;
                    }
                    Err(code) => return code,
                }
            }
            None => None,
        };
        eprintln!(
            "{TOOL}: sampling {source} every {} s{}...",
            args.interval,
            match args.duration {
                Some(d) => format!(" for {d} s"),
                None => " until it exits".into(),
            }
        );
        let mut on_snapshot = |s: &threads::Snapshot| match recorder.as_mut() {
            Some(w) => w.write(s),
            None => Ok(()),
        };
        let info = match sample(&target, &sopts, &mut analyzer, &mut on_snapshot) {
            Ok(i) => i,
            Err(e) => {
                eprintln!("{TOOL}: {e}");
                return EXIT_UNUSABLE;
            }
        };
        if analyzer.intervals() == 0 {
            eprintln!(
                "{TOOL}: {source}: {} sample(s) before it ended ({}): at least two are \
                 needed for one interval (a shorter --interval helps)",
                info.samples, info.ended
            );
            if let Some(c) = &info.command {
                eprintln!("{TOOL}: the command {}", describe(c));
            }
            return EXIT_UNUSABLE;
        }
        let mut r = analyzer.finish(source, threads::ticks_per_second());
        r.ended = info.ended;
        r.command = info.command;
        r.sampling_ms_per_sample = Some(
            (info.sampling_cost.as_secs_f64() * 1000.0 / info.samples as f64 * 1000.0).round()
                / 1000.0,
        );
        r
    };

    if let Some(path) = &args.svg {
        if let Err(code) = write_svg(path, &report.render_svg(6)) {
            return code;
        }
    }
    let text = if args.json {
        kgap_analyzers::vocab::json_doc::pretty("analyze-thread-cpu", &report)
    } else {
        report.render_text()
    };
    if let Err(e) = cli::print_stdout(&text) {
        eprintln!("{TOOL}: stdout: {e}");
        return EXIT_UNUSABLE;
    }
    EXIT_ANALYZED
}

/// --from: a recording or a snapshot paste, from a file, a FIFO or stdin, plain or gzip.
fn from(args: &Args, path: &std::path::Path, analyzer: Analyzer) -> i32 {
    let name = cli::input_name(Some(path));
    let input = match cli::open_watched(TOOL, Some(path)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{TOOL}: {e}");
            return EXIT_UNUSABLE;
        }
    };
    let paste = PasteOptions {
        saturated_cores: args.saturated_cores,
        top: args.top,
    };
    let report = match analyze_from(input, &name, analyzer, threads::ticks_per_second(), &paste) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{TOOL}: {name}: {e}");
            return EXIT_UNUSABLE;
        }
    };
    if let FromReport::Recording(r) = &report {
        if let Some(path) = &args.svg {
            if let Err(code) = write_svg(path, &r.render_svg(6)) {
                return code;
            }
        }
    } else if args.svg.is_some() || args.timeline.is_some() {
        // The --timeline file was opened before the input said what it is: not left empty.
        if let Some(t) = &args.timeline {
            let _ = std::fs::remove_file(t);
        }
        eprintln!(
            "{TOOL}: {name}: a snapshot has no timeline: --timeline and --svg are for \
             recordings and live runs"
        );
    }
    let text = if args.json {
        report.to_json()
    } else {
        report.render_text()
    };
    if let Err(e) = cli::print_stdout(&text) {
        eprintln!("{TOOL}: stdout: {e}");
        return EXIT_UNUSABLE;
    }
    EXIT_ANALYZED
}

fn write_svg(path: &PathBuf, svg: &str) -> Result<(), i32> {
    create(path).and_then(|mut w| {
        w.write_all(svg.as_bytes())
            .and_then(|_| w.flush())
            .map_err(|e| {
                eprintln!("{TOOL}: {}: {e}", path.display());
                EXIT_UNUSABLE
            })
    })
}

fn describe(c: &kgap_analyzers::thread_cpu::CommandOutcome) -> String {
    match (c.exit_code, c.signal) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(sig)) => format!("was killed by signal {sig}"),
        _ => "ended".into(),
    }
}
