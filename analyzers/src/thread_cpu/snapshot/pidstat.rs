//! `pidstat -t` (sysstat): one report per interval, each with a header, a row per process
//! (TGID, TID `-`) and a row per thread (TGID `-`, the name after `|__`), then an `Average:`
//! section (translated: `Durchschn.:` in German). The time of day leads every line, with
//! AM/PM in 12-hour locales; decimals follow the locale. %CPU covers the report's interval;
//! without an interval (one report whose rows carry the header's own time) it is CPU time
//! since boot, which says nothing of now.

use super::collect::Collector;
use super::format::{Figure, Format};
use super::table::{Row, Table};
use super::text::{clock, decimal, tid, tokens};

#[derive(Debug, Clone)]
struct Layout {
    labels: usize,
    tgid: usize,
    tid: usize,
    cpu: usize,
    /// The header's clock (None for the Average header).
    clock: Option<u32>,
    average: bool,
    /// `pidstat -h`'s `# Time` header: no clock of its own, so a single report cannot be
    /// told from one since boot.
    hash: bool,
}

#[derive(Debug, Default)]
pub struct PidstatReader {
    table: Option<(Layout, Table)>,
    /// The process row above the thread rows (its TGID is their pid).
    pid: Option<i32>,
    /// Inside a table of processes (pidstat without -t): its rows are skipped.
    skip_rows: bool,
}

/// The leading time (`07:10:52`, `07:10:52 PM`) or `Average:`-like word, and the number of
/// tokens it takes.
fn prefix(t: &[(usize, &str)]) -> Option<(Option<u32>, usize)> {
    let first = t.first()?.1;
    if let Some(mut s) = clock(first) {
        if let Some((_, ampm)) = t.get(1) {
            match *ampm {
                "AM" | "am" => return Some((Some(s % 43200), 2)),
                "PM" | "pm" => {
                    s = s % 43200 + 43200;
                    return Some((Some(s), 2));
                }
                _ => {}
            }
        }
        return Some((Some(s), 1));
    }
    // `pidstat -h`: `# Time` heads the columns and every row carries its time.
    if first == "#" && t.get(1).is_some_and(|(_, w)| *w == "Time") {
        return Some((None, 2));
    }
    (first.ends_with(':')
        && first.len() > 1
        && first
            .chars()
            .all(|c| c.is_alphabetic() || c == '.' || c == ':'))
    .then_some((None, 1))
}

impl Layout {
    fn from_header(line: &str) -> Option<Result<Layout, ()>> {
        let t = tokens(line);
        let (clock, skip) = prefix(&t)?;
        let hash = t[0].1 == "#";
        let labels: Vec<&str> = t[skip..].iter().map(|(_, w)| *w).collect();
        if !labels.contains(&"%CPU") || labels.last() != Some(&"Command") {
            return None;
        }
        let at = |n: &str| labels.iter().position(|l| *l == n);
        let Some(tid) = at("TID") else {
            // pidstat without -t: processes only.
            return at("PID").map(|_| Err(()));
        };
        Some(Ok(Layout {
            labels: labels.len(),
            tgid: at("TGID")?,
            tid,
            cpu: at("%CPU")?,
            clock,
            average: clock.is_none() && !hash,
            hash,
        }))
    }
}

impl PidstatReader {
    pub fn feed(&mut self, no: u64, line: &str, c: &mut Collector) -> bool {
        let t = tokens(line);
        // The banner: `Linux 6.1.0 (host)  01/12/26  _x86_64_  (2 CPU)`.
        if self.table.is_none() && line.starts_with("Linux ") && line.ends_with("CPU)") {
            return true;
        }
        if self.table.is_some() {
            if line.trim().is_empty() {
                self.end(c);
                return true;
            }
            if let Some((clock, skip)) = prefix(&t) {
                self.next_report(no, clock, c);
                let (layout, table) = self.table.as_mut().expect("inside a table");
                let f = &t[skip..];
                if f.len() >= layout.labels && (clock.is_some() != layout.average) {
                    let (tgid, tid_s) = (f[layout.tgid].1, f[layout.tid].1);
                    let cpu = decimal(f[layout.cpu].1);
                    let name = line[f[layout.labels - 1].0..].trim_end();
                    if let (Some(cpu), Some(pid), "-") = (cpu, tid(tgid), tid_s) {
                        // A process row: the pid of the thread rows under it.
                        self.pid = Some(pid);
                        *table.process_cores.get_or_insert(0.0) += cpu / 100.0;
                        table.last_line = no;
                        note_clock(layout, table, clock);
                        return true;
                    }
                    if let (Some(cpu), "-", Some(tid)) = (cpu, tgid, tid(tid_s)) {
                        table.rows.push(Row {
                            tid,
                            pid: self.pid,
                            name: Some(name.trim_start_matches("|__").to_string()),
                            cores: Some(cpu / 100.0),
                            line: no,
                            text: line.to_string(),
                            ..Row::default()
                        });
                        table.last_line = no;
                        note_clock(layout, table, clock);
                        return true;
                    }
                }
                if f.len() < layout.labels && f.first().is_some_and(|(_, w)| tid(w).is_some()) {
                    table.last_line = no;
                    c.warn(format!(
                        "line {no}: a cut pidstat row (fewer columns than the header): skipped"
                    ));
                    return true;
                }
            }
            self.end(c);
            return false;
        }
        if self.skip_rows {
            if prefix(&t).is_some() && Layout::from_header(line).is_none() {
                return true;
            }
            self.skip_rows = false;
        }
        match Layout::from_header(line) {
            Some(Ok(layout)) => {
                // One `-h` report is since boot unless a second one shows the interval.
                let figure = if layout.hash {
                    Figure::SinceBoot
                } else {
                    Figure::Interval
                };
                let mut table = Table::new(Format::Pidstat, no, figure);
                table.average = layout.average;
                self.table = Some((layout, table));
                true
            }
            Some(Err(())) => {
                c.unusable(
                    Format::Pidstat,
                    no,
                    "pidstat without -t lists processes, not threads: run `pidstat -t -p PID 1 5`",
                );
                self.skip_rows = true;
                true
            }
            None => false,
        }
    }

    /// One header serves every report of a run (`pidstat -t 1 3`): a row with a new time
    /// starts the next report.
    fn next_report(&mut self, no: u64, clock: Option<u32>, c: &mut Collector) {
        let Some((layout, table)) = self.table.as_mut() else {
            return;
        };
        if let (Some(now), Some(prev), false) = (clock, table.clock, layout.average) {
            if now != prev {
                table.figure = Figure::Interval;
                let mut next = Table::new(Format::Pidstat, no, Figure::Interval);
                next.clock = Some(now);
                next.over_s = Some(((now + 86400 - prev) % 86400) as f64);
                c.table(std::mem::replace(table, next));
            }
        }
    }

    pub fn end(&mut self, c: &mut Collector) {
        self.skip_rows = false;
        if let Some((_, table)) = self.table.take() {
            c.table(table);
        }
        self.pid = None;
    }
}

/// The report's interval is its rows' time minus its header's; none between them is a
/// report since boot (pidstat without an interval).
fn note_clock(layout: &Layout, table: &mut Table, row_clock: Option<u32>) {
    if table.clock.is_some() || layout.average {
        return;
    }
    table.clock = row_clock;
    if let (Some(h), Some(r)) = (layout.clock, row_clock) {
        let over = ((r + 86400 - h) % 86400) as f64;
        table.over_s = Some(over);
        if over == 0.0 {
            table.figure = Figure::SinceBoot;
        }
    }
}
