//! What the analyzer binaries share: opening the input, printing, exit codes.
//! (Binaries stay thin: parse flags, call one library function, print.)

use std::fs::File;
use std::io::{self, IsTerminal, Read, Write};
use std::path::Path;

use crate::input::InputSummary;

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
    if lines == 0 {
        msg.push_str(&format!("\n{tool}: {name}: the input is empty"));
    }
    msg.push_str(&format!("\n{tool}: hint: {hint}"));
    msg
}
