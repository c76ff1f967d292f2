//! gap-report: a folder of captures (logs, statistics, GC logs, JFR, thread CPU, probe
//! results) into one report of the post's gaps.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use kgap_analyzers::findings::scope::JvmRole;
use kgap_analyzers::gap_report::{gap_report, relative_path, Options};
use kgap_analyzers::vocab::cli::{self, EXIT_ANALYZED, EXIT_UNUSABLE};

const TOOL: &str = "gap-report";

const EXAMPLES: &str = "\
examples:
  gap-report results/fb                 # a probe's --out folder: every run's log, stats, verdict
  gap-report ./captures                 # whatever a service left behind: logs, gc.log, app.jfr
  gap-report --json captures | jq '.gaps[].finding'   # the JSON contract
  gap-report --md report.md --svg-dir charts captures # Markdown for GitHub, SVG charts beside it
  gap-report --html report.html captures # one self-contained page: verdicts, evidence, charts
  gap-report fixtures                   # kgap's own captured fixtures";

/// Read every file under DIR (recursively, names in byte order), tell by content what
/// each holds — librdkafka debug logs in any wrapper (plain or gzip), librdkafka
/// statistics JSON, JVM GC logs, JFR recordings or `jfr print --json` exports, per-thread
/// CPU recordings (analyze-thread-cpu --save, a probe's threads.csv), probe result.json —
/// run the matching analyzers on it, and write one report: each of the post's findings
/// that shows, with its evidence (numbers, example lines, the window), cause, fix and how
/// sure the report is; then the findings looked for and not found (or not checked, with
/// the input that would show them); then the files that could not be used, and why.
///
/// Confidence: high when a probe reproduced it or two files agree, medium when one file
/// shows the finding's own mechanism, low on indirect signs only. The findings and their
/// rules: docs/findings.md. Exit status: 0 report written; 2 DIR missing or unreadable,
/// no file in it could be used (the report still says why each was not), or bad usage.
#[derive(Parser, Debug)]
#[command(name = "gap-report", version, after_help = EXAMPLES)]
struct Args {
    /// The folder to read (a single file works too).
    dir: PathBuf,
    /// Print the report as JSON (the documented contract) instead of text.
    #[arg(long)]
    json: bool,
    /// Also write the report as Markdown to FILE.
    #[arg(long, value_name = "FILE")]
    md: Option<PathBuf>,
    /// Also write the report as one self-contained HTML page to FILE: the gaps first, their
    /// evidence a click away, the charts inline beside them (nothing fetched; tables sort by
    /// a click on their header, and read the same without script).
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Write SVG charts (GC heap, rates, thread CPU) of the files that show a gap into
    /// DIR (created), linked from --md.
    #[arg(long, value_name = "DIR")]
    svg_dir: Option<PathBuf>,
    /// Threads per librdkafka log (default: one per core): it is read and parsed in
    /// chunks by all of them, the analysing one among them.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// What the folder's JVM artifacts (GC logs, JFR recordings, thread CPU) come from,
    /// when they do not show it themselves: `producer` or `consumer` (a Java application
    /// using kafka-clients) files their diagnoses under the post's Java findings; `other`
    /// files none. Without it, only artifacts that show a Kafka client (its threads or
    /// frames) are filed, and the rest are offered as questions.
    #[arg(long, value_enum, value_name = "ROLE")]
    jvm_role: Option<JvmRole>,
    #[command(flatten)]
    common: cli::CommonArgs,
}

fn main() -> ExitCode {
    let args: Args = kgap_analyzers::vocab::args::parse();
    ExitCode::from(run(&args) as u8)
}

fn run(args: &Args) -> i32 {
    args.common.apply();
    let opts = Options {
        charts: args.svg_dir.is_some() || args.html.is_some(),
        workers: args.threads,
        jvm_role: args.jvm_role,
    };
    let report = match gap_report(&args.dir, &opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{TOOL}: {e}");
            return EXIT_UNUSABLE;
        }
    };
    if let Some(dir) = &args.svg_dir {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("{TOOL}: {}: {e}", dir.display());
            return EXIT_UNUSABLE;
        }
        for c in &report.charts {
            let p = dir.join(&c.file);
            if let Err(e) = std::fs::write(&p, &c.svg) {
                eprintln!("{TOOL}: {}: {e}", p.display());
                return EXIT_UNUSABLE;
            }
        }
    }
    if let Some(md) = &args.md {
        let prefix = args.svg_dir.as_ref().map(|svg| {
            let from = md.parent().filter(|p| !p.as_os_str().is_empty());
            let rel = relative_path(from.unwrap_or(std::path::Path::new(".")), svg);
            let s = rel.to_string_lossy().replace('\\', "/");
            if s.is_empty() {
                String::new()
            } else {
                format!("{s}/")
            }
        });
        if let Err(e) = std::fs::write(md, report.render_markdown(prefix.as_deref())) {
            eprintln!("{TOOL}: {}: {e}", md.display());
            return EXIT_UNUSABLE;
        }
    }
    if let Some(html) = &args.html {
        if let Err(e) = std::fs::write(
            html,
            kgap_analyzers::html::gap_report(&report, &kgap_analyzers::vocab::host::Host::read()),
        ) {
            eprintln!("{TOOL}: {}: {e}", html.display());
            return EXIT_UNUSABLE;
        }
    }
    let text = if args.json {
        kgap_analyzers::vocab::json_doc::pretty("gap-report", &report)
    } else {
        report.render_text()
    };
    if let Err(e) = cli::print_stdout(&text) {
        eprintln!("{TOOL}: writing the report: {e}");
        return EXIT_UNUSABLE;
    }
    if !report.is_usable() {
        eprintln!(
            "{TOOL}: {}: {} files, none of them something gap-report reads: nothing to analyse",
            report.dir, report.files_seen
        );
        eprintln!(
            "{TOOL}: hint: give a folder with librdkafka debug logs (debug=protocol,fetch), \
             statistics JSON, GC logs, JFR recordings, thread-CPU recordings or a probe's --out"
        );
        return EXIT_UNUSABLE;
    }
    EXIT_ANALYZED
}
