//! reproduce-summary: a `scripts/reproduce` folder (summary.json and every run's
//! result.json) into one self-contained HTML page, `summary.html`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use kgap_analyzers::findings::reproduce::Reproduction;
use kgap_analyzers::vocab::cli::{EXIT_ANALYZED, EXIT_UNUSABLE};

const TOOL: &str = "reproduce-summary";

/// Read a scripts/reproduce results folder (its summary.json, each run's result.json) and
/// write one HTML page: each finding's verdict first (HOLDS, DOES NOT HOLD, CANNOT TELL,
/// with the checks that decided it and the post's figure beside it), the command that
/// reproduces it, a link to its run's report.html, and where it all ran. scripts/reproduce
/// runs it; exit 2 when the folder has no readable summary.json.
#[derive(Parser, Debug)]
#[command(name = "reproduce-summary", version)]
struct Args {
    /// The results folder (results/<time>/).
    dir: PathBuf,
    /// Where to write the page (default: DIR/summary.html).
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args: Args = kgap_analyzers::vocab::args::parse();
    let rep = match Reproduction::read(&args.dir) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{TOOL}: {e}");
            return ExitCode::from(EXIT_UNUSABLE as u8);
        }
    };
    let out = args.html.unwrap_or_else(|| args.dir.join("summary.html"));
    if let Err(e) = std::fs::write(&out, kgap_analyzers::html::reproduce_summary(&rep)) {
        eprintln!("{TOOL}: {}: {e}", out.display());
        return ExitCode::from(EXIT_UNUSABLE as u8);
    }
    ExitCode::from(EXIT_ANALYZED as u8)
}
