//! The text report of a snapshot (80 columns).

use std::fmt::Write as _;

use super::format::{Figure, Format};
use super::report::{SnapshotReport, SnapshotThread};
use crate::thread_cpu::roles::ProcessKind;
use crate::vocab::report::{render_diagnosis, Diagnosis};

/// Busiest threads shown as columns of the per-frame table.
const TABLE_THREADS: usize = 4;
/// Frames shown in the per-frame table.
const TABLE_ROWS: usize = 30;

fn short(name: &str, n: usize) -> String {
    if name.chars().count() <= n {
        name.to_string()
    } else {
        let mut s: String = name.chars().take(n - 1).collect();
        s.push('…');
        s
    }
}

fn figure_meaning(f: Figure) -> &'static str {
    match f {
        Figure::Interval => "top's or pidstat's %CPU over its refresh interval: a share now",
        Figure::BetweenSnapshots => "CPU time gained between two snapshots over the time between",
        Figure::Lifetime => "CPU time over the thread's whole life: not the share now",
        Figure::SinceBoot => "pidstat without an interval: CPU time over the time since boot",
    }
}

fn cores(v: Option<f64>) -> String {
    v.map_or("-".into(), |c| format!("{c:.2}"))
}

impl SnapshotReport {
    /// The human report.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "analyze-thread-cpu: {}", self.source);
        for s in &self.sections {
            let what = match s.format {
                Format::Top => format!("{} frame(s), {} thread rows", s.parts, s.threads),
                Format::Ps => format!("{} output(s), {} thread rows", s.parts, s.threads),
                Format::Pidstat => format!("{} report(s), {} thread rows", s.parts, s.threads),
                Format::Gdb => format!("{} thread backtrace(s)", s.parts),
                Format::JvmDump => format!("{} dump(s), {} threads", s.parts, s.threads),
            };
            let _ = writeln!(
                out,
                "read: {} at lines {}-{}: {what}",
                s.format.as_str(),
                s.first_line,
                s.last_line
            );
        }
        let kind = match self.process_kind {
            ProcessKind::Librdkafka => "a librdkafka client (rdk:* threads)",
            ProcessKind::Jvm => "a JVM",
            ProcessKind::Other => "no librdkafka or JVM threads",
        };
        let pids = if self.pids.is_empty() {
            "the paste does not say".to_string()
        } else {
            self.pids
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(out, "process: {kind}; pid: {pids}");
        let mut figures: Vec<Figure> = self.threads.iter().filter_map(|t| t.figure).collect();
        figures.sort();
        figures.dedup();
        for f in &figures {
            let _ = writeln!(out, "figure {}: {}", f.as_str(), figure_meaning(*f));
        }
        for w in &self.warnings {
            crate::vocab::report::wrap_into(&mut out, "warning: ", w);
        }
        self.render_iterations(&mut out);

        let _ = writeln!(
            out,
            "\nthreads (busiest first; --json for all {}):",
            self.threads.len()
        );
        let _ = writeln!(
            out,
            "  {:>7}  {:<15}  {:<21}  {:>5}  {:>5}  {:<9}  state",
            "tid", "thread", "role", "cores", "max", "figure"
        );
        for t in self.threads.iter().take(self.top) {
            let _ = writeln!(
                out,
                "  {:>7}  {:<15}  {:<21}  {:>5}  {:>5}  {:<9}  {}",
                t.tid,
                short(&t.name, 15),
                t.role.as_str(),
                cores(t.cores_mean),
                cores(t.cores_max),
                t.figure.map_or("-", |f| short_figure(f)),
                short(t.state.as_deref().unwrap_or("-"), 12)
            );
        }
        let _ = writeln!(
            out,
            "\nat a full core (≥ {} cores): {}",
            self.saturated_cores,
            if self.saturated.is_empty() {
                "none".to_string()
            } else {
                self.saturated.len().to_string()
            }
        );
        for t in self.saturated.iter().take(self.top) {
            let _ = writeln!(
                out,
                "  {} ({}, {}): {} cores, {}{}",
                t.name,
                t.tid,
                t.role.as_str(),
                cores(t.cores_mean),
                t.figure.map_or("-", |f| f.as_str()),
                if t.iterations > 1 {
                    format!(
                        " ({} of {} frames at the threshold)",
                        t.iterations_at_threshold, t.iterations
                    )
                } else {
                    String::new()
                }
            );
            if let Some(j) = &t.java {
                if let Some(f) = j.frames.first() {
                    let _ = writeln!(out, "    at {}", short(f, 72));
                }
            } else if let Some(b) = &t.backtrace {
                if let Some(f) = b.frames.first() {
                    let _ = writeln!(out, "    in {}", short(f, 72));
                }
            }
        }
        let _ = writeln!(out, "\ndiagnoses:");
        for d in &self.diagnoses {
            render_with_lines(&mut out, d);
        }
        out
    }

    fn render_iterations(&self, out: &mut String) {
        if self.iterations.len() < 2 {
            return;
        }
        let top: Vec<&SnapshotThread> = self
            .threads
            .iter()
            .filter(|t| !t.per_iteration.is_empty() && t.rate().is_some_and(|c| c > 0.0))
            .take(TABLE_THREADS)
            .collect();
        if top.is_empty() {
            // No thread used CPU between the frames: a table of zeros says nothing.
            let _ = writeln!(
                out,
                "\ncores per frame: no thread used CPU between the {} frames",
                self.iterations.len()
            );
            return;
        }
        let _ = writeln!(
            out,
            "\ncores per frame ({}; --json has every thread):",
            crate::vocab::report::the_busiest(top.len())
        );
        let mut h1 = format!(
            "  {:>5}  {:>8}  {:>6}  {:>7}",
            "frame", "clock", "over_s", "process"
        );
        let mut h2 = format!("  {:>5}  {:>8}  {:>6}  {:>7}", "", "", "", "");
        for t in &top {
            let _ = write!(h1, "  {:>11}", short(&t.name, 11));
            let _ = write!(h2, "  {:>11}", t.tid);
        }
        let _ = writeln!(out, "{h1}");
        let _ = writeln!(out, "{h2}");
        for (i, it) in self.iterations.iter().enumerate().take(TABLE_ROWS) {
            let mut line = format!(
                "  {:>5}  {:>8}  {:>6}  {:>7.2}",
                format!(
                    "{}{}",
                    if it.format == Format::Pidstat {
                        "p"
                    } else {
                        ""
                    },
                    i + 1
                ),
                it.clock.as_deref().unwrap_or("-"),
                it.over_s.map_or("-".into(), |s| format!("{s:.0}")),
                it.process_cores
            );
            for t in &top {
                let _ = write!(
                    line,
                    "  {:>11}",
                    t.per_iteration
                        .get(i)
                        .copied()
                        .flatten()
                        .map_or("-".into(), |c| format!("{c:.2}"))
                );
            }
            let _ = writeln!(out, "{line}");
        }
        if self.iterations.len() > TABLE_ROWS {
            let _ = writeln!(
                out,
                "  … {} more (--json has them)",
                self.iterations.len() - TABLE_ROWS
            );
        }
    }
}

fn short_figure(f: Figure) -> &'static str {
    match f {
        Figure::Interval => "interval",
        Figure::BetweenSnapshots => "between",
        Figure::Lifetime => "lifetime",
        Figure::SinceBoot => "boot",
    }
}

/// A diagnosis with its evidence lines shown head first (a snapshot's line begins with the
/// thread id; a log's message is at its end, which is how render_diagnosis shows them).
fn render_with_lines(out: &mut String, d: &Diagnosis) {
    let mut bare = d.clone();
    bare.examples.clear();
    render_diagnosis(out, &bare);
    for e in &d.examples {
        let label = format!("    line {}: ", e.line);
        let room = 79usize.saturating_sub(label.chars().count()).max(20);
        let text = e.text.trim();
        let _ = writeln!(out, "{label}{}", short(text, room));
    }
}
