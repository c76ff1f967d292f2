//! How far a long read has got, on stderr: a 1 GiB log takes an analyzer 5–15 s, and a tool
//! that prints nothing for that long looks hung. The bar (a file's bytes of its size, or a
//! spinner with the bytes and rate of a pipe) appears only when stderr is a terminal, only
//! once the read has taken [`SHOW_AFTER`], and never with `-q`; it is cleared at the end of
//! the input, before the report is printed. indicatif draws it (rate-limited redraws, terminal
//! width, cursor handling), so the hot path only adds a byte count.

use std::io::{self, IsTerminal, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Reads shorter than this show nothing: most inputs are done before a bar would help.
pub const SHOW_AFTER: Duration = Duration::from_secs(2);

/// [`SHOW_AFTER`], or `KGAP_PROGRESS_AFTER_MS` when set (0 shows the bar at once: the tests
/// use it on inputs that are read in well under 2 s).
fn show_after() -> Duration {
    std::env::var("KGAP_PROGRESS_AFTER_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(SHOW_AFTER, Duration::from_millis)
}

static QUIET: AtomicBool = AtomicBool::new(false);

/// `-q`: no progress for the rest of the process.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Whether a bar may be drawn at all: stderr a terminal and no `-q`.
pub fn enabled() -> bool {
    !QUIET.load(Ordering::Relaxed) && io::stderr().is_terminal()
}

/// A reader that counts what passes through it into a progress bar (hidden until
/// [`SHOW_AFTER`]). `total` is the input's size when known (a regular file, as stored: a
/// gzip file's compressed bytes, since those are what is read here).
pub struct Progress<R> {
    inner: R,
    bar: Option<ProgressBar>,
    shown: bool,
    start: Instant,
    after: Duration,
}

impl<R> Progress<R> {
    /// Wrap `inner`; `name` labels the bar. Without [`enabled`] the wrapper only passes bytes on.
    pub fn new(inner: R, name: &str, total: Option<u64>) -> Self {
        let bar = enabled().then(|| {
            let bar = match total {
                Some(n) => ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::hidden())
                    .with_style(
                        ProgressStyle::with_template(
                            "{prefix}: reading [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}, eta {eta})",
                        )
                        .expect("a valid template")
                        .progress_chars("=> "),
                    ),
                None => ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden())
                    .with_style(
                        ProgressStyle::with_template("{prefix}: reading {spinner} {bytes} ({bytes_per_sec})")
                            .expect("a valid template"),
                    ),
            };
            bar.with_prefix(short_name(name))
        });
        Progress {
            inner,
            bar,
            shown: false,
            start: Instant::now(),
            after: show_after(),
        }
    }

    /// Wrap `inner` without a bar (a library caller's input).
    pub fn hidden(inner: R) -> Self {
        Progress {
            inner,
            bar: None,
            shown: false,
            start: Instant::now(),
            after: show_after(),
        }
    }

    fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }

    /// `n` more bytes read (for a reader that does not read through this one: the block
    /// front end's parsing threads read a file themselves).
    pub fn advance(&mut self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(n);
            if !self.shown && self.start.elapsed() >= self.after {
                bar.set_draw_target(ProgressDrawTarget::stderr());
                // Drawn now, and kept moving while the input pauses (a pipe's writer).
                bar.tick();
                bar.enable_steady_tick(Duration::from_millis(250));
                self.shown = true;
            }
        }
    }

    /// The input is read: clear the bar.
    pub fn done(&mut self) {
        self.finish();
    }

    /// The reader wrapped.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }
}

impl<R: Read> Read for Progress<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let r = self.inner.read(buf);
        match &r {
            Ok(0) => self.finish(),
            Ok(n) => self.advance(*n as u64),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => self.finish(),
        }
        r
    }
}

impl<R> Drop for Progress<R> {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

/// A folder's files as they are read (gap-report): `gap-report: file 3/20 [====>   ]
/// run-1/debug.log`, hidden until [`SHOW_AFTER`], drawn only when [`enabled`], cleared when
/// dropped (before the report is printed).
pub struct Files {
    bar: Option<ProgressBar>,
    shown: bool,
    start: Instant,
    after: Duration,
}

impl Files {
    pub fn new(tool: &str, total: usize) -> Files {
        let bar = enabled().then(|| {
            ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::hidden())
                .with_style(
                    ProgressStyle::with_template(
                        "{prefix}: file {pos}/{len} [{bar:20}] {wide_msg} ({elapsed})",
                    )
                    .expect("a valid template")
                    .progress_chars("=> "),
                )
                .with_prefix(tool.to_string())
        });
        Files {
            bar,
            shown: false,
            start: Instant::now(),
            after: show_after(),
        }
    }

    /// The next file starts: `name` as the report will name it.
    pub fn next(&mut self, name: &str) {
        let Some(bar) = &self.bar else { return };
        bar.inc(1);
        bar.set_message(name.to_string());
        if !self.shown && self.start.elapsed() >= self.after {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            // Kept moving while one large file is read.
            bar.enable_steady_tick(Duration::from_millis(250));
            self.shown = true;
        }
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

/// The bar's label: the file's name, not its whole path (the bar has a line of its own).
fn short_name(name: &str) -> String {
    let base = std::path::Path::new(name)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| name.to_string());
    if base.chars().count() > 32 {
        let tail: String = base
            .chars()
            .rev()
            .take(31)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        format!("…{tail}")
    } else {
        base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_passes_through_and_a_pipe_has_no_bar() {
        // Under `cargo test` stderr is captured, not a terminal: no bar, the bytes unchanged.
        let data = vec![7u8; 100_000];
        let mut p = Progress::new(&data[..], "/var/log/app/gc.log", Some(100_000));
        let mut out = Vec::new();
        p.read_to_end(&mut out).unwrap();
        assert_eq!(out, data);
        assert!(p.bar.is_none() || !io::stderr().is_terminal());
    }

    #[test]
    fn a_folder_off_a_terminal_draws_nothing() {
        let mut f = Files::new("gap-report", 3);
        for n in ["a.log", "b.log", "c.log"] {
            f.next(n);
        }
        assert!(f.bar.is_none() || !io::stderr().is_terminal());
    }

    #[test]
    fn quiet_turns_it_off() {
        set_quiet(true);
        assert!(!enabled());
        set_quiet(false);
    }

    #[test]
    fn the_label_is_the_file_name_cut_to_32() {
        assert_eq!(short_name("/a/b/gc.log"), "gc.log");
        let long = format!("/x/{}.log", "n".repeat(40));
        assert_eq!(short_name(&long).chars().count(), 32);
        assert!(short_name(&long).starts_with('…'));
    }
}
