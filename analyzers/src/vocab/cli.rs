//! What the analyzer binaries share: opening the input, printing, exit codes.
//! (Binaries stay thin: parse flags, call one library function, print.)

use std::fs::File;
use std::io::{self, IsTerminal, Read, Write};
use std::path::Path;

use crate::engine::input::{InputSummary, Source};
use crate::engine::{progress, watch};

/// The options every analyzer shares beside its own (flattened into its arguments).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct CommonArgs {
    /// No progress bar on stderr (it shows only on a terminal, for reads longer than 2 s).
    #[arg(short = 'q', long)]
    pub quiet: bool,
}

impl CommonArgs {
    /// Applies the options to the process (call once, after parsing).
    pub fn apply(&self) {
        progress::set_quiet(self.quiet);
    }
}

/// The input was analysed (whether or not a gap was found).
pub const EXIT_ANALYZED: i32 = 0;
/// Unusable input (unreadable, or nothing this tool can analyse) or bad usage.
pub const EXIT_UNUSABLE: i32 = 2;

/// Open `path`, or stdin for `None` / `-`. Refuses an interactive stdin, where
/// the user most likely forgot the file name.
pub fn open_input(path: Option<&Path>) -> Result<Box<dyn Read + Send>, String> {
    match path {
        Some(p) if p != Path::new("-") => File::open(p)
            .map(|f| Box::new(f) as Box<dyn Read + Send>)
            .map_err(|e| format!("{}: {e}", p.display())),
        _ => {
            let stdin = io::stdin();
            if stdin.is_terminal() {
                return Err(
                    "no FILE given and stdin is a terminal: give a log file, or \
                            pipe one in (see --help)"
                        .to_string(),
                );
            }
            Ok(Box::new(stdin))
        }
    }
}

/// Open `path` (or stdin for `None` / `-`) as [`open_input`] does, watched: a FIFO or other
/// file that is not a regular one is read with a note on stderr (a FIFO is opened at the first
/// read, since opening one waits for a writer), a directory is refused, and when nothing has
/// been read for [`watch::QUIET_AFTER`] the user is told so once per quiet spell, instead of
/// a silent wait. `tool` names the binary in those messages.
pub fn open_watched(
    tool: &'static str,
    path: Option<&Path>,
) -> Result<Box<dyn Read + Send>, String> {
    let name = input_name(path);
    let input: Box<dyn Read + Send> = match path {
        Some(p) if p != Path::new("-") => {
            let meta = std::fs::metadata(p).map_err(|e| format!("{name}: {e}"))?;
            match watch::non_regular_kind(&meta) {
                None => Box::new(File::open(p).map_err(|e| format!("{name}: {e}"))?),
                Some("a directory") => {
                    return Err(format!(
                        "{name}: a directory, not a file: name a file in it (gap-report reads \
                         a whole folder)"
                    ))
                }
                Some(kind) => {
                    eprintln!("{tool}: reading {kind}: {name} (what is written to it, to its end)");
                    Box::new(watch::OpenOnRead::new(p))
                }
            }
        }
        _ => open_input(None)?,
    };
    // A regular file's size sizes the bar; a pipe or FIFO gets a spinner.
    let total = match path {
        Some(p) if p != Path::new("-") => std::fs::metadata(p)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len()),
        _ => None,
    };
    let input = progress::Progress::new(input, &name, total);
    let quiet_name = name;
    Ok(Box::new(watch::watch(
        input,
        watch::QUIET_AFTER,
        move |idle| {
            eprintln!(
                "{tool}: nothing read from {quiet_name} for {} s; waiting (Ctrl-C to stop)",
                idle.as_secs()
            );
        },
    )))
}

/// Open `path` (or stdin for `None` / `-`) for an analyzer that reads a regular file in
/// chunks on its parsing threads ([`Source::File`], with a progress bar of its size), and
/// anything else as [`open_watched`] does.
pub fn open_source(tool: &'static str, path: Option<&Path>) -> Result<Source<'static>, String> {
    if let Some(p) = path.filter(|p| *p != Path::new("-")) {
        let name = input_name(path);
        let meta = std::fs::metadata(p).map_err(|e| format!("{name}: {e}"))?;
        if meta.is_file() {
            let file = File::open(p).map_err(|e| format!("{name}: {e}"))?;
            return Ok(Source::File(progress::Progress::new(
                file,
                &name,
                Some(meta.len()),
            )));
        }
    }
    open_watched(tool, path).map(Source::Stream)
}

/// The name to show for the input.
pub fn input_name(path: Option<&Path>) -> String {
    match path {
        Some(p) if p != Path::new("-") => p.display().to_string(),
        _ => "<stdin>".to_string(),
    }
}

/// Print to stdout; a closed pipe (`| head`) is not an error.
pub fn print_stdout(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}

/// The sentence that says what was read and recognised, for an input with
/// nothing to analyse.
pub fn unusable_message(
    tool: &str,
    name: &str,
    input: &InputSummary,
    lines: u64,
    records: u64,
    wanted: &str,
    hint: &str,
) -> String {
    let mut msg = format!(
        "{tool}: {name}: read {lines} lines ({} bytes{}), recognised {records} librdkafka \
         records, 0 {wanted}: nothing to analyse",
        input.bytes_read,
        if input.gzip { " after gunzip" } else { "" }
    );
    if let Some(off) = input.binary_at_offset {
        if records == 0 {
            msg.push_str(&format!(
                "\n{tool}: {name}: this looks like a binary file (found \"\\0\" byte around \
                 offset {off})"
            ));
        }
    }
    if let Some(c) = &input.gzip_cut {
        msg.push_str(&format!(
            "\n{tool}: {name}: {}",
            crate::engine::input::gzip_cut_warning(c, input.bytes_read)
        ));
    } else if lines == 0 {
        msg.push_str(&format!("\n{tool}: {name}: the input is empty"));
    }
    msg.push_str(&format!("\n{tool}: hint: {hint}"));
    msg
}

/// What the two librdkafka log analyzers' binaries need of their reports.
pub trait LogReport: serde::Serialize {
    fn render_text(&self) -> String;
    fn is_usable(&self) -> bool;
    fn input(&self) -> &InputSummary;
    fn lines_read(&self) -> u64;
    fn records_recognised(&self) -> u64;
}

impl LogReport for crate::fetch_log::FetchLogReport {
    fn render_text(&self) -> String {
        crate::fetch_log::FetchLogReport::render_text(self)
    }
    fn is_usable(&self) -> bool {
        crate::fetch_log::FetchLogReport::is_usable(self)
    }
    fn input(&self) -> &InputSummary {
        &self.input
    }
    fn lines_read(&self) -> u64 {
        self.lines_read
    }
    fn records_recognised(&self) -> u64 {
        self.records_recognised
    }
}

impl LogReport for crate::protocol_log::ProtocolLogReport {
    fn render_text(&self) -> String {
        crate::protocol_log::ProtocolLogReport::render_text(self)
    }
    fn is_usable(&self) -> bool {
        crate::protocol_log::ProtocolLogReport::is_usable(self)
    }
    fn input(&self) -> &InputSummary {
        &self.input
    }
    fn lines_read(&self) -> u64 {
        self.lines_read
    }
    fn records_recognised(&self) -> u64 {
        self.records_recognised
    }
}

/// A log analyzer binary's name and what it needs from the log, for its messages.
pub struct LogTool {
    pub name: &'static str,
    /// The records it looks for, e.g. "fetch records (Fetch backoff, …)".
    pub wanted: &'static str,
    /// How the user makes their client log them.
    pub how_to_enable: &'static str,
}

/// The whole life of a log analyzer binary: open the input (file, stdin, gzip), open the
/// timeline CSV, analyze, print text or JSON, and say plainly when the input had nothing to
/// analyze. Returns the exit status.
pub fn run_log_analyzer<R: LogReport>(
    tool: &LogTool,
    file: Option<&Path>,
    json: bool,
    timeline: Option<&Path>,
    analyze: impl FnOnce(
        Source<'static>,
        Option<&mut dyn Write>,
    ) -> Result<R, crate::vocab::error::AnalyzeError>,
) -> i32 {
    let name = input_name(file);
    let input = match open_source(tool.name, file) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{}: {e}", tool.name);
            return EXIT_UNUSABLE;
        }
    };
    let mut timeline_file = match timeline {
        Some(path) => match File::create(path) {
            Ok(f) => Some(io::BufWriter::new(f)),
            Err(e) => {
                eprintln!("{}: {}: {e}", tool.name, path.display());
                return EXIT_UNUSABLE;
            }
        },
        None => None,
    };
    let report = match analyze(input, timeline_file.as_mut().map(|w| w as &mut dyn Write)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{}: {name}: {e}", tool.name);
            return EXIT_UNUSABLE;
        }
    };
    let text = if json {
        crate::vocab::json_doc::pretty(tool.name, &report)
    } else {
        report.render_text()
    };
    if !report.is_usable() {
        eprintln!(
            "{}",
            unusable_message(
                tool.name,
                &name,
                report.input(),
                report.lines_read(),
                report.records_recognised(),
                tool.wanted,
                tool.how_to_enable,
            )
        );
        if json {
            let _ = print_stdout(&text);
        }
        return EXIT_UNUSABLE;
    }
    if let Err(e) = print_stdout(&text) {
        eprintln!("{}: writing the report: {e}", tool.name);
        return EXIT_UNUSABLE;
    }
    EXIT_ANALYZED
}
