//! The report as text: the `--events` table and the human report (80 columns).

use std::fmt::Write as _;

use super::report::*;
use crate::vocab::report::{human_bytes, render_diagnosis, wrap_into};

impl JfrReport {
    /// `--events`: the table `jfr summary` prints (most events first).
    pub fn render_events(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{}: JFR {}, {} chunk(s), {} events, {:.1} s",
            self.input.name,
            self.input.version.as_deref().unwrap_or("?"),
            self.input.chunks,
            self.recording.events,
            self.recording.duration_s
        );
        let mut rows: Vec<(&String, &TypeCount)> = self.event_types.iter().collect();
        rows.sort_by(|a, b| {
            b.1.count
                .cmp(&a.1.count)
                .then(b.1.bytes.cmp(&a.1.bytes))
                .then(a.0.cmp(b.0))
        });
        let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(10).max(10);
        let _ = writeln!(
            out,
            "\n {:<w$} {:>10} {:>13}",
            "Event Type", "Count", "Size (bytes)"
        );
        let _ = writeln!(out, "{}", "=".repeat(w + 26));
        for (name, c) in rows {
            let _ = writeln!(out, " {name:<w$} {:>10} {:>13}", c.count, c.bytes);
        }
        for p in &self.input.problems {
            wrap_into(&mut out, "warning: ", p);
        }
        out
    }

    /// The human report (80 columns).
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let r = &self.recording;
        // What was read, in words: a recording names its chunks and format version; an
        // export has neither. gzip is said, not mistaken for an export.
        let gz = if self.input.format.ends_with("+gzip") {
            ", gzip"
        } else {
            ""
        };
        let what = if self.input.format.starts_with("jfr-json") {
            format!("jfr print --json export{gz}")
        } else {
            format!(
                "JFR recording{gz} ({}, format {})",
                crate::vocab::units::counted(self.input.chunks, "chunk"),
                self.input.version.as_deref().unwrap_or("unknown")
            )
        };
        let desc = format!(
            "{what}, {} over {:.1} s from {}",
            crate::vocab::units::counted(r.events, "event"),
            r.duration_s,
            r.start.as_deref().unwrap_or("an unknown start")
        );
        // The headline within 100 columns: a long path gets a line of its own.
        if self.input.name.chars().count() + 2 + desc.chars().count() <= 100 {
            let _ = writeln!(out, "{}: {desc}", self.input.name);
        } else {
            let _ = writeln!(out, "{}:", self.input.name);
            wrap_into(&mut out, "  ", &desc);
        }
        if let Some(j) = &self.jvm {
            wrap_into(
                &mut out,
                "JVM: ",
                // jvmVersion already starts with the VM's name.
                short_version(if j.version.is_empty() {
                    &j.name
                } else {
                    &j.version
                }),
            );
        }
        for p in &self.input.problems {
            wrap_into(&mut out, "warning: ", p);
        }

        if !self.threads.is_empty() {
            let _ = writeln!(
                out,
                "\nThread CPU (jdk.ThreadCPULoad, user+system{}):",
                if self.hw_threads.is_some() {
                    "; cores = load x hw threads"
                } else {
                    ""
                }
            );
            let _ = writeln!(
                out,
                "  {:<40} {:>7} {:>7} {:>7} {:>7}",
                "thread", "mean", "max", "cores", "samples"
            );
            for t in self.threads.iter().take(12) {
                let _ = writeln!(
                    out,
                    "  {:<40} {:>6.1}% {:>6.1}% {:>7} {:>7}",
                    cut(&t.name, 40),
                    t.cpu_mean * 100.0,
                    t.cpu_max * 100.0,
                    t.cores_mean.map_or("-".into(), |c| format!("{c:.2}")),
                    t.samples
                );
            }
            if self.threads.len() > 12 {
                let _ = writeln!(
                    out,
                    "  … {} more threads (--json has all)",
                    self.threads.len() - 12
                );
            }
        }

        if !self.socket.is_empty() {
            let _ = writeln!(out, "\nSocket I/O per thread (bytes per operation):");
            let _ = writeln!(
                out,
                "  {:<5} {:<26} {:>8} {:>9} {:>9} {:>9} {:>8}",
                "op", "thread", "ops", "p50", "p90", "max", "ops/s"
            );
            for s in &self.socket {
                let _ = writeln!(
                    out,
                    "  {:<5} {:<26} {:>8} {:>9} {:>9} {:>9} {:>8.0}",
                    s.op.as_str(),
                    cut(s.thread.as_deref().unwrap_or("?"), 26),
                    s.count,
                    human_bytes(s.bytes_p50 as f64),
                    human_bytes(s.bytes_p90 as f64),
                    human_bytes(s.bytes_max as f64),
                    s.ops_per_s
                );
            }
            let _ = writeln!(out, "  per remote address:");
            for s in self.socket_by_address.iter().take(10) {
                let _ = writeln!(
                    out,
                    "  {:<5} {:<26} {:>8} {:>9} {:>9} {:>9} {:>8.0}",
                    s.op.as_str(),
                    cut(s.address.as_deref().unwrap_or("?"), 26),
                    s.count,
                    human_bytes(s.bytes_p50 as f64),
                    human_bytes(s.bytes_p90 as f64),
                    human_bytes(s.bytes_max as f64),
                    s.ops_per_s
                );
            }
        }

        if self.samples > 0 {
            let _ = writeln!(
                out,
                "\nHot methods ({} execution samples; self = on top):",
                self.samples
            );
            let _ = writeln!(out, "  {:>6} {:>6} {:>6}  frame", "self", "self%", "total%");
            for h in self.hot_methods.iter().take(10) {
                let _ = writeln!(
                    out,
                    "  {:>6} {:>5.1}% {:>5.1}%  {}",
                    h.self_samples,
                    100.0 * h.self_samples as f64 / self.samples as f64,
                    100.0 * h.total_samples as f64 / self.samples as f64,
                    cut(&h.frame, 56)
                );
            }
            if let Some(s) = self.top_stacks.first() {
                let _ = writeln!(
                    out,
                    "  top stack ({} samples, {:.1}%):",
                    s.samples,
                    100.0 * s.samples as f64 / self.samples as f64
                );
                for f in s.frames.iter().take(6) {
                    let _ = writeln!(out, "    {}", cut(f, 74));
                }
            }
        }

        if let Some(gc) = &self.gc {
            let _ = writeln!(
                out,
                "\nGC: {} collections, pauses {:.1} ms total ({:.1}% of the recording), p50 {:.2} ms, max {:.2} ms",
                gc.collections,
                gc.pause_total_ms,
                gc.pause_share * 100.0,
                gc.pause_p50_ms,
                gc.pause_max_ms
            );
            if let (Some(p50), Some(max)) = (gc.heap_after_gc_p50_mb, gc.heap_after_gc_max_mb) {
                let _ = writeln!(
                    out,
                    "  heap after GC: p50 {p50:.1} MB, max {max:.1} MB{}",
                    gc.heap_committed_max_mb
                        .map(|c| format!(" of {c:.1} MB committed"))
                        .unwrap_or_default()
                );
            } else {
                let _ = writeln!(
                    out,
                    "  heap after GC: not recorded (no jdk.GCHeapSummary events)"
                );
            }
            for c in &gc.by_collector {
                let _ = writeln!(
                    out,
                    "  {:<24} {:>6} collections {:>10.1} ms, longest {:.2} ms",
                    c.name, c.count, c.pause_total_ms, c.longest_pause_ms
                );
            }
        }

        if !self.allocation.is_empty() {
            let _ = writeln!(
                out,
                "\nAllocation by class ({}):",
                self.allocation_source.unwrap_or("?")
            );
            for a in self.allocation.iter().take(8) {
                let _ = writeln!(
                    out,
                    "  {:>9} {:>5.1}%  {}",
                    human_bytes(a.weight_bytes as f64),
                    a.share * 100.0,
                    cut(&a.class, 60)
                );
            }
        }

        if !self.locks.is_empty() {
            let _ = writeln!(out, "\nLock contention (jdk.JavaMonitorEnter):");
            for l in self.locks.iter().take(8) {
                let _ = writeln!(
                    out,
                    "  {:>7} waits {:>10.1} ms, max {:>8.2} ms  {}",
                    l.count,
                    l.total_ms,
                    l.max_ms,
                    cut(&l.class, 36)
                );
            }
        }

        if self.diagnoses.is_empty() {
            let more = if let Some(at) = self.input.cut_at_byte {
                format!(
                    " But the recording is cut at byte {at}: the lost part may hold what was \
                     not found here, so this says nothing about it."
                )
            } else if self.socket.is_empty() {
                " No socket events: record with jdk.SocketRead/jdk.SocketWrite at threshold 0 \
                 ms (see fixtures/jfr/capture/socket-io.jfc)."
                    .to_string()
            } else {
                String::new()
            };
            out.push('\n');
            wrap_into(
                &mut out,
                "",
                &format!(
                    "No gap found (checked: fixed socket buffer, one consumer at one core, GC \
                     pressure, deflate dominating).{more}"
                ),
            );
        } else {
            let _ = writeln!(out, "\nDiagnoses:");
            for d in &self.diagnoses {
                render_diagnosis(&mut out, d);
            }
        }
        out
    }
}

fn short_version(v: &str) -> &str {
    // "OpenJDK 64-Bit Server VM (17.0.15+6-...) for linux-amd64 JRE (...), built on …"
    v.split(", built on").next().unwrap_or(v)
}

fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let tail: String = s.chars().skip(s.chars().count() - (n - 1)).collect();
        format!("…{tail}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_keeps_the_tail() {
        assert_eq!(cut("abcdef", 4), "…def");
        assert_eq!(cut("abc", 4), "abc");
    }
}
