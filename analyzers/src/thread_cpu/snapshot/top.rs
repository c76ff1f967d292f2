//! `top -H`: batch (`-b`) or the interactive screen, with or without the summary block, in
//! any locale. Column names are translated (`ZEIT+ BEFEHL` in German, `TEMPS+ COM.` in
//! French) and decimals may have commas, so the columns are found by the shape of the first
//! row: the thread id is the first whole number, the state is the one-letter column, %CPU
//! the first decimal after it, TIME+ the first `M:SS.hh` after that, the name the rest of
//! the line. Each `top - HH:MM:SS` line (or, without the summary block, each column header)
//! starts a frame; %CPU covers top's refresh interval (100 = one core).

use super::collect::Collector;
use super::format::{Figure, Format};
use super::table::{Row, Table};
use super::text::{clock, decimal, duration, tid, tokens};

/// State letters top prints (`ps` has more, top these).
const STATES: &str = "RSDZTtIXWPKN";

#[derive(Debug, Default)]
pub struct TopReader {
    frame: Option<Frame>,
    pending: Option<Header>,
    table: Option<(Layout, Table)>,
    /// Inside a process table (top without -H): its rows are skipped.
    skip_rows: bool,
    /// A table under `Tasks:` read on trial: threads only if every row has one memory.
    trial: Option<Trial>,
}

/// Rows under `Tasks:` are processes, unless every row shows the same VIRT, RES and SHR: one
/// process's memory, so its threads (an older top keeps `Tasks:` with `H`).
#[derive(Debug, Clone)]
struct Trial {
    line: u64,
    columns: [usize; 3],
    first: Option<String>,
    same: bool,
}

impl Trial {
    fn observe(&mut self, line: &str) {
        let t = tokens(line);
        let sizes: Option<Vec<&str>> = self
            .columns
            .iter()
            .map(|&i| t.get(i).map(|x| x.1))
            .collect();
        let sizes = sizes.map(|v| v.join(" ")).unwrap_or_default();
        match &self.first {
            None => self.first = Some(sizes),
            Some(f) => self.same &= *f == sizes,
        }
    }
}

const PROCESSES: &str =
    "top without -H lists processes, not threads (`Tasks:`): run `top -H -p PID`";

#[derive(Debug, Clone)]
struct Frame {
    line: u64,
    clock: Option<u32>,
    /// `Tasks:` (processes) rather than `Threads:` in the summary.
    processes: bool,
}

#[derive(Debug, Clone)]
struct Header {
    line: u64,
    labels: usize,
    /// The labels, for a column found by name when the shape cannot tell.
    names: Vec<String>,
}

#[derive(Debug, Clone, Copy)]
struct Layout {
    labels: usize,
    tid: usize,
    state: Option<usize>,
    cpu: usize,
    time: Option<usize>,
}

/// A column header: words only (no number), one of them a percentage.
fn is_header(line: &str) -> Option<Vec<String>> {
    let t = tokens(line);
    if t.len() < 4 {
        return None;
    }
    let words = t.iter().all(|(_, w)| {
        !w.ends_with(':') && !w.ends_with(',') && decimal(w).is_none() && !w.contains("=")
    });
    let percent = t.iter().any(|(_, w)| w.starts_with('%') && w.len() > 1);
    (words && percent).then(|| t.iter().map(|(_, w)| w.to_string()).collect())
}

/// top's columns unless told otherwise (procps-ng 3.3 and 4).
const DEFAULT_COLUMNS: [&str; 12] = [
    "PID", "USER", "PR", "NI", "VIRT", "RES", "SHR", "S", "%CPU", "%MEM", "TIME+", "COMMAND",
];

/// A header for a row of top's default columns pasted without one: the id, a user, a
/// priority (or `rt`), a nice value, three sizes, a state letter, two decimals (commas too),
/// a `M:SS.hh` time and a name. None for anything else.
fn headerless(no: u64, line: &str) -> Option<Header> {
    let t = tokens(line);
    if t.len() < DEFAULT_COLUMNS.len() {
        return None;
    }
    let w = |i: usize| t[i].1;
    let int = |s: &str| {
        s.trim_start_matches('-')
            .chars()
            .all(|c| c.is_ascii_digit())
            && !s.is_empty()
    };
    let size = |s: &str| {
        let n = s.trim_end_matches(|c: char| "kmgtpe".contains(c.to_ascii_lowercase()));
        decimal(n).is_some()
    };
    let shaped = tid(w(0)).is_some()
        && !int(w(1))
        && (int(w(2)) || w(2) == "rt")
        && int(w(3))
        && size(w(4))
        && size(w(5))
        && size(w(6))
        && w(7).len() == 1
        && STATES.contains(w(7))
        && decimal(w(8)).is_some()
        && decimal(w(9)).is_some()
        && w(10).contains(':')
        && duration(w(10)).is_some();
    shaped.then(|| Header {
        line: no,
        labels: DEFAULT_COLUMNS.len(),
        names: DEFAULT_COLUMNS.iter().map(|n| n.to_string()).collect(),
    })
}

/// top's header, told from ps's without a summary block: TIME+ (in any language) ends with
/// `+`, and PR/NI are top's.
fn is_top_header(names: &[String]) -> bool {
    names.iter().any(|n| n.len() > 1 && n.ends_with('+'))
        || (names.iter().any(|n| n == "PR")
            && names.iter().any(|n| n == "NI")
            && names.iter().any(|n| n == "VIRT"))
}

impl Layout {
    /// The columns, from the header and the first row's shape.
    fn infer(h: &Header, line: &str) -> Option<Layout> {
        let t = tokens(line);
        if t.len() < h.labels {
            return None;
        }
        let value = |i: usize| t[i].1;
        let tid_col = (0..h.labels - 1).find(|&i| tid(value(i)).is_some())?;
        let state = (tid_col + 1..h.labels - 1).find(|&i| {
            let v = value(i);
            v.len() == 1 && STATES.contains(v) && h.names[i].chars().count() <= 2
        });
        let after = state.map_or(tid_col + 1, |s| s + 1);
        let cpu = match state {
            Some(_) => (after..h.labels - 1).find(|&i| decimal(value(i)).is_some())?,
            None => (after..h.labels - 1)
                .find(|&i| h.names[i].starts_with('%') && decimal(value(i)).is_some())?,
        };
        let time = (cpu + 1..h.labels - 1)
            .find(|&i| value(i).contains(':') && duration(value(i)).is_some());
        Some(Layout {
            labels: h.labels,
            tid: tid_col,
            state,
            cpu,
            time,
        })
    }

    fn row(&self, no: u64, line: &str) -> Result<Row, RowError> {
        let t = tokens(line);
        if t.is_empty() || tid(t[0].1).is_none() && self.tid == 0 {
            return Err(RowError::NotARow);
        }
        if t.len() < self.labels {
            return Err(RowError::Cut);
        }
        let tid = tid(t[self.tid].1).ok_or(RowError::NotARow)?;
        let cpu = decimal(t[self.cpu].1).ok_or(RowError::NotARow)?;
        let state = match self.state {
            Some(i) if t[i].1.len() == 1 && STATES.contains(t[i].1) => Some(t[i].1.to_string()),
            Some(_) => return Err(RowError::NotARow),
            None => None,
        };
        let name = line[t[self.labels - 1].0..].trim_end();
        let cut = name.len() > 1 && name.ends_with('+');
        Ok(Row {
            tid,
            pid: None,
            name: Some(name.to_string()),
            name_cut: cut,
            command: None,
            state,
            cores: Some(cpu / 100.0),
            cpu_s: self.time.and_then(|i| duration(t[i].1)),
            elapsed_s: None,
            line: no,
            text: line.to_string(),
        })
    }
}

enum RowError {
    NotARow,
    Cut,
}

impl TopReader {
    pub fn feed(&mut self, no: u64, line: &str, c: &mut Collector) -> bool {
        let trimmed = line.trim_start();
        if trimmed.starts_with("top - ") {
            self.end(c);
            let t = tokens(trimmed);
            self.frame = Some(Frame {
                line: no,
                clock: t.get(2).and_then(|(_, w)| clock(w)),
                processes: false,
            });
            return true;
        }
        if let Some((layout, table)) = self.table.as_mut() {
            if line.trim().is_empty() {
                self.end(c);
                return true;
            }
            return match layout.row(no, line) {
                Ok(r) => {
                    table.last_line = no;
                    table.rows.push(r);
                    if let Some(trial) = self.trial.as_mut() {
                        trial.observe(line);
                    }
                    true
                }
                Err(RowError::Cut) => {
                    table.last_line = no;
                    c.warn(format!(
                        "line {no}: a cut top row (fewer columns than the header): skipped"
                    ));
                    true
                }
                Err(RowError::NotARow) => false,
            };
        }
        if let Some(h) = self.pending.take() {
            if let Some(layout) = Layout::infer(&h, line) {
                let mut table = Table::new(Format::Top, h.line, Figure::Interval);
                table.clock = self.frame.as_ref().and_then(|f| f.clock);
                if let Ok(r) = layout.row(no, line) {
                    table.rows.push(r);
                    table.last_line = no;
                    if let Some(trial) = self.trial.as_mut() {
                        trial.observe(line);
                    }
                }
                self.table = Some((layout, table));
                return true;
            }
            // A header with no row under it.
            c.header_without_rows(Format::Top, h.line);
            self.frame = None;
            if line.trim().is_empty() {
                return true;
            }
        }
        if let Some(names) = is_header(line) {
            let in_frame = self.frame.is_some();
            if in_frame || is_top_header(&names) {
                if self.frame.as_ref().is_some_and(|f| f.processes) {
                    let at = |n: &str| names.iter().position(|x| x == n);
                    match (at("VIRT"), at("RES"), at("SHR")) {
                        (Some(v), Some(r), Some(sh)) => {
                            self.trial = Some(Trial {
                                line: no,
                                columns: [v, r, sh],
                                first: None,
                                same: true,
                            })
                        }
                        _ => {
                            c.unusable(Format::Top, no, PROCESSES);
                            self.frame = None;
                            self.pending = None;
                            self.skip_rows = true;
                            return true;
                        }
                    }
                }
                self.pending = Some(Header {
                    line: no,
                    labels: names.len(),
                    names,
                });
                return true;
            }
            return false;
        }
        // Rows pasted without their header (cut off, or left out): top's default columns,
        // when every one of them has the shape it must have.
        if self.table.is_none() && !self.skip_rows {
            if let Some(h) = headerless(no, line) {
                c.warn(format!(
                    "line {no}: top rows without their header: read by top's default columns \
                     ({})",
                    DEFAULT_COLUMNS.join(" ")
                ));
                self.pending = Some(h);
                return self.feed(no, line, c);
            }
        }
        if self.skip_rows {
            if tokens(line).first().is_some_and(|(_, w)| tid(w).is_some()) {
                return true;
            }
            self.skip_rows = false;
        }
        // The summary block between `top - …` and the column header.
        if let Some(f) = self.frame.as_mut() {
            if trimmed.starts_with("Tasks:") {
                f.processes = true;
            }
            if no - f.line <= 8 {
                return true;
            }
            self.frame = None;
        }
        false
    }

    pub fn end(&mut self, c: &mut Collector) {
        if let Some(h) = self.pending.take() {
            c.header_without_rows(Format::Top, h.line);
        }
        self.skip_rows = false;
        let trial = self.trial.take();
        if let Some((_, table)) = self.table.take() {
            match trial {
                Some(t) if !(t.same && table.rows.len() >= 2) => {
                    c.unusable(Format::Top, t.line, PROCESSES);
                }
                Some(t) => {
                    c.warn(format!(
                        "line {}: top says `Tasks:`, but its {} rows share one VIRT, RES and SHR \
                         ({}): one process's threads, read as such",
                        t.line,
                        table.rows.len(),
                        t.first.unwrap_or_default()
                    ));
                    c.table(table);
                }
                None => c.table(table),
            }
        } else if let Some(t) = trial {
            c.unusable(Format::Top, t.line, PROCESSES);
        }
        self.frame = None;
    }
}
