//! `ps -L` / `-T`, with or without `-o`, and `ps -eLf`: ps's column names are not translated,
//! so its columns are found by name (LWP/TID/SPID, PID, %CPU or C, TIME, ELAPSED, the
//! command). %CPU and C are shares over each thread's life (CPU time / time alive); two
//! outputs with TIME and ELAPSED give the rate between them.

use super::collect::Collector;
use super::format::{Figure, Format};
use super::table::{Row, Table};
use super::text::{decimal, duration, tid, tokens};

/// ps's column labels (procps-ng): a header is made of these.
const LABELS: &[&str] = &[
    "PID", "TID", "LWP", "SPID", "TGID", "PPID", "PGID", "SID", "UID", "USER", "RUSER", "GID",
    "GROUP", "%CPU", "C", "CP", "%MEM", "TIME", "ELAPSED", "STIME", "START", "STARTED", "TTY",
    "TT", "STAT", "S", "NLWP", "PSR", "PRI", "PR", "NI", "CLS", "POL", "RTPRIO", "RSS", "RSZ",
    "VSZ", "SZ", "WCHAN", "F", "ADDR", "CMD", "COMMAND", "COMM", "CPU", "THCNT", "LABEL",
];

#[derive(Debug, Clone)]
struct Layout {
    labels: Vec<String>,
    tid: usize,
    pid: Option<usize>,
    cpu: Option<(usize, bool)>,
    time: Option<usize>,
    elapsed: Option<usize>,
    state: Option<usize>,
    name: Option<usize>,
    /// `-f`: the command column is the process's command line, not the thread's name.
    full: bool,
}

#[derive(Debug, Default)]
pub struct PsReader {
    table: Option<(Layout, Table)>,
    /// Inside a process table (no thread column): its rows are skipped.
    skip_rows: bool,
    /// The columns a `ps` command in the paste asked for, and its line: rows under it whose
    /// header a `grep` dropped are read by them.
    asked: Option<(Layout, u64)>,
}

/// ps's header label of a format specifier (`-o`), for the ones a thread table needs or
/// that hold spaces; None for one this reader does not know (the command is then not used).
fn label_of(spec: &str) -> Option<&'static str> {
    let spec = spec.split('=').next().unwrap_or(spec);
    Some(match spec {
        "pid" | "tgid" => "PID",
        "tid" | "lwp" | "spid" => "TID",
        "ppid" => "PPID",
        "user" | "euser" | "uname" => "USER",
        "uid" | "euid" => "UID",
        "%cpu" | "pcpu" => "%CPU",
        "c" => "C",
        "%mem" | "pmem" => "%MEM",
        "time" | "cputime" | "bsdtime" => "TIME",
        "etime" | "etimes" => "ELAPSED",
        "stime" | "start_time" => "STIME",
        "start" => "START",
        "tty" | "tt" => "TT",
        "stat" => "STAT",
        "s" | "state" => "S",
        "nlwp" | "thcount" => "NLWP",
        "psr" => "PSR",
        "pri" => "PRI",
        "ni" | "nice" => "NI",
        "rss" | "rssize" => "RSS",
        "vsz" => "VSZ",
        "cmd" | "args" | "command" => "CMD",
        "comm" | "ucmd" | "ucomm" | "fname" => "COMM",
        _ => return None,
    })
}

/// The columns of a `ps` command line (`$ ps H -eo user,pid,tid,%cpu,comm | grep x`,
/// `# ps -eLf | grep 9698`): its `-o` lists, or `-f` with `-L`'s fixed columns.
fn asked_columns(line: &str) -> Option<Vec<&'static str>> {
    let at = line.find("ps ")?;
    let before = line[..at].trim_end();
    if !(before.is_empty() || before.ends_with(['$', '#', '>', '%'])) {
        return None;
    }
    let args: Vec<&str> = line[at + 3..]
        .split('|')
        .next()?
        .split_whitespace()
        .collect();
    let mut labels = Vec::new();
    let mut lists = 0;
    for (i, a) in args.iter().enumerate() {
        let letters = a.trim_start_matches('-');
        if letters.ends_with('o') && letters.chars().all(|c| c.is_ascii_alphabetic()) {
            for spec in args.get(i + 1)?.split(',') {
                labels.push(label_of(spec)?);
            }
            lists += 1;
        }
    }
    if lists > 0 {
        return Some(labels);
    }
    let flags: String = args
        .iter()
        .filter(|a| a.starts_with('-'))
        .flat_map(|a| a.chars())
        .collect();
    (flags.contains('L') && flags.contains('f') && !flags.contains('F')).then(|| {
        vec![
            "UID", "PID", "PPID", "LWP", "C", "NLWP", "STIME", "TTY", "TIME", "CMD",
        ]
    })
}

impl Layout {
    fn from_header(line: &str) -> Option<Result<Layout, ()>> {
        let t = tokens(line);
        if t.len() < 2 {
            return None;
        }
        let labels: Vec<String> = t.iter().map(|(_, w)| w.to_string()).collect();
        if !labels.iter().all(|l| LABELS.contains(&l.as_str())) {
            return None;
        }
        let find = |names: &[&str]| labels.iter().position(|l| names.contains(&l.as_str()));
        let Some(tid) = find(&["LWP", "TID", "SPID"]) else {
            // A table of processes (`ps aux`, `ps -ef`) when it has a PID column.
            return find(&["PID"]).map(|_| Err(()));
        };
        let cpu = find(&["%CPU"])
            .map(|i| (i, true))
            .or_else(|| find(&["C"]).map(|i| (i, false)));
        let name = find(&["COMMAND", "CMD", "COMM"]);
        Some(Ok(Layout {
            tid,
            pid: find(&["PID", "TGID"]),
            cpu,
            time: find(&["TIME"]),
            elapsed: find(&["ELAPSED"]),
            state: find(&["STAT", "S"]),
            full: labels.iter().any(|l| l == "STIME") && labels.iter().any(|l| l == "C"),
            name,
            labels,
        }))
    }

    /// The layout of the columns a ps command asked for (see [`asked_columns`]): the name is
    /// `comm` when asked for (the thread's name), else the command line.
    fn from_asked(labels: &[&str]) -> Option<Layout> {
        let joined = labels.join(" ");
        let mut l = match Layout::from_header(&joined.replace("COMM", "COMMAND"))? {
            Ok(l) => l,
            Err(()) => return None,
        };
        if let Some(j) = labels.iter().position(|x| *x == "COMM") {
            l.name = Some(j);
            l.full = false;
        }
        Some(l)
    }

    /// The layout of one ps thread row pasted without its header or its command: PID and
    /// LWP (two leading integers, the thread's id not below its process's, as Linux gives
    /// them), %CPU (the first number with a decimal point), TIME after it (`[[dd-]hh:]mm:ss`)
    /// and the command line after that; the other columns are skipped. None for any other row.
    fn guess(line: &str) -> Option<Layout> {
        let t = tokens(line);
        let (pid, lwp) = (tid(t.first()?.1)?, tid(t.get(1)?.1)?);
        if lwp < pid {
            return None;
        }
        let is_cpu = |w: &str| w.contains(['.', ',']) && decimal(w).is_some_and(|v| v >= 0.0);
        let cpu = 2 + t[2..].iter().position(|(_, w)| is_cpu(w))?;
        let is_time = |w: &str| w.contains(':') && duration(w).is_some();
        let time = cpu + 1 + t[cpu + 1..].iter().position(|(_, w)| is_time(w))?;
        if time + 1 >= t.len() {
            return None;
        }
        let mut labels = vec!["F"; time + 2];
        (labels[0], labels[1], labels[cpu]) = ("PID", "TID", "%CPU");
        (labels[time], labels[time + 1]) = ("TIME", "CMD");
        let mut l = Layout::from_asked(&labels)?;
        l.full = true;
        Some(l)
    }

    /// The row's fields: the name column may hold spaces (`GC Thread#0`), so fields left of
    /// it are taken from the left and fields right of it from the right.
    fn row(&self, no: u64, line: &str) -> Option<Row> {
        let t = tokens(line);
        let k = self.labels.len();
        if t.len() < k {
            return None;
        }
        let mut fields: Vec<&str> = Vec::with_capacity(k);
        let mut name = None;
        match self.name {
            Some(j) => {
                let right = k - 1 - j;
                fields.extend(t[..j].iter().map(|(_, w)| *w));
                let end = if right == 0 {
                    line.len()
                } else {
                    let first_right = t.len() - right;
                    t[first_right].0
                };
                name = Some(line[t[j].0..end].trim_end().to_string());
                fields.push("");
                fields.extend(t[t.len() - right..].iter().map(|(_, w)| *w));
            }
            None => {
                if t.len() != k {
                    return None;
                }
                fields.extend(t.iter().map(|(_, w)| *w));
            }
        }
        let tid = tid(fields[self.tid])?;
        let cores = match self.cpu {
            Some((i, _)) => Some(decimal(fields[i])? / 100.0),
            None => None,
        };
        let (name, command) = if self.full {
            (None, name)
        } else {
            (name, None)
        };
        Some(Row {
            tid,
            pid: self.pid.and_then(|i| tid_or_none(fields[i])),
            name,
            name_cut: false,
            command,
            state: self.state.map(|i| fields[i].to_string()),
            cores,
            cpu_s: self.time.and_then(|i| duration(fields[i])),
            elapsed_s: self.elapsed.and_then(|i| duration(fields[i])),
            line: no,
            text: line.to_string(),
        })
    }
}

fn tid_or_none(s: &str) -> Option<i32> {
    tid(s)
}

impl PsReader {
    pub fn feed(&mut self, no: u64, line: &str, c: &mut Collector) -> bool {
        if let Some((layout, table)) = self.table.as_mut() {
            if let Some(r) = layout.row(no, line) {
                table.rows.push(r);
                table.last_line = no;
                return true;
            }
            let t = tokens(line);
            if t.first().is_some_and(|(_, w)| tid(w).is_some()) && t.len() < layout.labels.len() {
                table.last_line = no;
                c.warn(format!(
                    "line {no}: a cut ps row (fewer columns than the header): skipped"
                ));
                return true;
            }
            self.end(c);
            return false;
        }
        if self.skip_rows {
            if tokens(line).first().is_some_and(|(_, w)| tid(w).is_some()) {
                return true;
            }
            self.skip_rows = false;
        }
        if let Some(labels) = asked_columns(line) {
            self.asked = Layout::from_asked(&labels).map(|l| (l, no));
            return self.asked.is_some();
        }
        match Layout::from_header(line) {
            Some(Ok(layout)) => {
                self.asked = None;
                let figure = Figure::Lifetime;
                self.table = Some((layout, Table::new(Format::Ps, no, figure)));
                true
            }
            Some(Err(())) => {
                c.unusable(
                    Format::Ps,
                    no,
                    "ps without -L or -T lists processes, not threads (no LWP, TID or SPID \
                     column): run `ps -L -o tid,pcpu,time,etime,comm -p PID`",
                );
                self.skip_rows = true;
                true
            }
            None => {
                let Some((layout, asked_at)) = &self.asked else {
                    return self.guessed(no, line, c);
                };
                let Some(r) = layout.row(no, line) else {
                    return false;
                };
                c.warn(format!(
                    "line {no}: ps rows without their header: read by the columns the command \
                     at line {asked_at} asked for ({})",
                    layout.labels.join(" ")
                ));
                let mut table = Table::new(Format::Ps, no, Figure::Lifetime);
                table.rows.push(r);
                table.last_line = no;
                self.table = Some((layout.clone(), table));
                true
            }
        }
    }

    /// A row with neither header nor command above it, read by [`Layout::guess`].
    fn guessed(&mut self, no: u64, line: &str, c: &mut Collector) -> bool {
        let Some(layout) = Layout::guess(line) else {
            return false;
        };
        let Some(r) = layout.row(no, line) else {
            return false;
        };
        c.warn(format!(
            "line {no}: a ps row without its header: read as PID, LWP, %CPU ({}), TIME and \
             the command by their values; its other columns are not read",
            tokens(line)[layout.cpu.map_or(0, |(i, _)| i)].1
        ));
        let mut table = Table::new(Format::Ps, no, Figure::Lifetime);
        table.rows.push(r);
        table.last_line = no;
        self.table = Some((layout, table));
        true
    }

    pub fn end(&mut self, c: &mut Collector) {
        self.skip_rows = false;
        let Some((layout, mut table)) = self.table.take() else {
            return;
        };
        // `-o args` (or `-o cmd`) names every thread after the process's command line: when
        // all rows of a multi-row table share one command with an argument, it is that.
        if !layout.full && table.rows.len() >= 3 {
            let first = table.rows[0].name.clone();
            if first
                .as_deref()
                .is_some_and(|n| n.contains(" -") || n.starts_with('/'))
                && table.rows.iter().all(|r| r.name == first)
            {
                for r in &mut table.rows {
                    r.command = r.name.take();
                }
            }
        }
        if layout.cpu.is_none() && layout.time.is_none() {
            c.warn(format!(
                "line {}: this ps table has neither %CPU, C nor TIME: only names are read",
                table.header_line
            ));
        }
        c.table(table);
    }
}
