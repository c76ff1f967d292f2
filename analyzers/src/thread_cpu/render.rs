//! The text report and the SVG chart of a recording or a live run.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::analyzer::EPS;
use super::report::{CommandOutcome, ThreadCpuReport, ThreadSummary, TimelineRow};
use super::roles::ProcessKind;
use crate::vocab::report::render_diagnosis;
use crate::vocab::svg::{plain_label, LineChart, Scale, Series};

fn short(name: &str, n: usize) -> String {
    if name.chars().count() <= n {
        name.to_string()
    } else {
        let mut s: String = name.chars().take(n - 1).collect();
        s.push('…');
        s
    }
}

impl ThreadCpuReport {
    /// Columns of the timeline table (the busiest threads).
    const TABLE_THREADS: usize = 4;
    /// Rows of the timeline table (buckets are merged to fit).
    const TABLE_ROWS: usize = 30;

    /// The human report (80 columns).
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "analyze-thread-cpu: {}\n{} samples over {:.1} s (every {} ms), {} threads seen; \
             ended: {}",
            self.source,
            self.intervals + 1,
            self.duration_s,
            self.interval_ms,
            self.threads.len(),
            self.ended
        );
        if let Some(c) = &self.command {
            let _ = writeln!(out, "command: {}", describe_outcome(c));
        }
        if let Some(p) = self.process_cores_mean {
            let _ = writeln!(
                out,
                "process: {p:.2} cores mean ({}{})",
                self.process_kind_label(),
                if self.process_cores_from_threads {
                    ", sum of the listed threads"
                } else {
                    ""
                }
            );
        }
        if let Some(ms) = self.sampling_ms_per_sample {
            let _ = writeln!(
                out,
                "sampling: {ms:.2} ms per sample reading /proc (the tool's own cost)"
            );
        }
        for w in &self.warnings {
            let _ = writeln!(out, "warning: {w}");
        }
        self.render_timeline(&mut out);

        let _ = writeln!(
            out,
            "\ntop threads (cores over each thread's lifetime; --json for all {}):",
            self.threads.len()
        );
        let _ = writeln!(
            out,
            "  {:>7}  {:<15}  {:<21}  {:>5}  {:>5}  {:>7}  {:>5}",
            "tid", "thread", "role", "mean", "max", "cpu_s", "sat_s"
        );
        for t in self.threads.iter().take(self.top) {
            let _ = writeln!(
                out,
                "  {:>7}  {:<15}  {:<21}  {:>5.2}  {:>5.2}  {:>7.1}  {:>5.0}",
                t.tid,
                short(&t.name, 15),
                t.role.as_str(),
                t.cores_mean,
                t.cores_max,
                t.cpu_s,
                t.longest_saturated_s
            );
        }
        let _ = writeln!(
            out,
            "\nby role (numbers collapsed; cores over the whole run):"
        );
        let _ = writeln!(
            out,
            "  {:<22}  {:<21}  {:>7}  {:>5}  {:>8}",
            "group", "role", "threads", "cores", "max_one"
        );
        for g in self.groups.iter().take(self.top) {
            let _ = writeln!(
                out,
                "  {:<22}  {:<21}  {:>7}  {:>5.2}  {:>8.2}",
                short(&g.group, 22),
                g.role.as_str(),
                g.threads,
                g.cores_mean,
                g.cores_max_one_thread
            );
        }
        let _ = writeln!(
            out,
            "\nsaturated threads (≥ {} cores for ≥ {} s): {}",
            self.saturated_cores,
            self.saturated_seconds,
            if self.saturated.is_empty() {
                "none".to_string()
            } else {
                self.saturated.len().to_string()
            }
        );
        for s in self.saturated.iter().take(self.top) {
            let _ = writeln!(
                out,
                "  {} ({}, {}): {:.2} cores for {:.0} s from {:.0} s",
                s.name,
                s.tid,
                s.role.as_str(),
                s.cores_mean,
                s.seconds,
                s.from_s
            );
        }
        let _ = writeln!(out, "\ndiagnoses:");
        for d in &self.diagnoses {
            render_diagnosis(&mut out, d);
        }
        out
    }

    fn process_kind_label(&self) -> &'static str {
        match self.process_kind {
            ProcessKind::Librdkafka => "a librdkafka client: rdk:* threads",
            ProcessKind::Jvm => "a JVM: GC/JIT threads",
            ProcessKind::Other => "no librdkafka or JVM threads",
        }
    }

    /// The busiest threads, for the table and the chart.
    fn top_tids(&self, n: usize) -> Vec<&ThreadSummary> {
        self.threads
            .iter()
            .filter(|t| t.cpu_s > 0.0)
            .take(n)
            .collect()
    }

    /// Timeline rows merged to at most `max` rows.
    fn display_rows(&self, max: usize) -> Vec<TimelineRow> {
        let per = self.timeline.len().div_ceil(max.max(1)).max(1);
        self.timeline
            .chunks(per)
            .map(|chunk| {
                let start_s = chunk[0].start_s;
                let end_s = chunk[chunk.len() - 1].end_s;
                let span = (end_s - start_s).max(EPS);
                let mut cores: HashMap<i32, f64> = HashMap::new();
                let mut process = 0.0;
                for r in chunk {
                    let w = r.end_s - r.start_s;
                    process += r.process_cores * w;
                    for (&tid, &c) in &r.cores {
                        *cores.entry(tid).or_insert(0.0) += c * w;
                    }
                }
                cores.values_mut().for_each(|c| *c /= span);
                TimelineRow {
                    start_s,
                    end_s,
                    process_cores: process / span,
                    cores,
                }
            })
            .collect()
    }

    fn render_timeline(&self, out: &mut String) {
        let top = self.top_tids(Self::TABLE_THREADS);
        let rows = self.display_rows(Self::TABLE_ROWS);
        if rows.is_empty() {
            return;
        }
        let _ = writeln!(
            out,
            "\ncores per thread over time ({}; --timeline FILE has all):",
            crate::vocab::report::the_busiest(top.len())
        );
        let mut h1 = format!("  {:>13}  {:>7}", "seconds", "process");
        let mut h2 = format!("  {:>13}  {:>7}", "", "");
        for t in &top {
            let _ = write!(h1, "  {:>11}", short(&t.name, 11));
            let _ = write!(h2, "  {:>11}", t.tid);
        }
        let _ = writeln!(out, "{h1}");
        let _ = writeln!(out, "{h2}");
        for r in &rows {
            let mut line = format!(
                "  {:>13}  {:>7.2}",
                format!("{:.1}-{:.1}", r.start_s, r.end_s),
                r.process_cores
            );
            for t in &top {
                let _ = write!(
                    line,
                    "  {:>11.2}",
                    r.cores.get(&t.tid).copied().unwrap_or(0.0)
                );
            }
            let _ = writeln!(out, "{line}");
        }
    }

    /// An SVG chart of the busiest threads' cores over time.
    pub fn render_svg(&self, threads: usize) -> String {
        let top = self.top_tids(threads);
        let rows = self.display_rows(self.timeline.len().max(1));
        let series = top
            .iter()
            .map(|t| Series {
                label: format!("{} ({})", short(&t.name, 15), t.tid),
                points: rows
                    .iter()
                    .map(|r| {
                        (
                            (r.start_s + r.end_s) / 2.0,
                            r.cores.get(&t.tid).copied().unwrap_or(0.0),
                        )
                    })
                    .collect(),
                ranges: Vec::new(),
            })
            .collect();
        LineChart {
            title: format!("Cores per thread: {}", self.source),
            x_label: "seconds".into(),
            y_label: "cores".into(),
            x_scale: Scale::Linear,
            x_format: plain_label,
            y_format: plain_label,
            series,
        }
        .render()
    }
}

fn describe_outcome(c: &CommandOutcome) -> String {
    let base = match (c.exit_code, c.signal) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        (None, None) => "ended".into(),
    };
    if c.killed_at_duration {
        format!("{base} (killed by analyze-thread-cpu at --duration)")
    } else {
        base
    }
}
