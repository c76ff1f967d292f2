//! What the table readers (top, ps, pidstat) hand to the collector: one table of thread rows
//! (a top frame, one ps output, one pidstat report), and the check for a row that is the
//! whole process rather than its main thread.

use super::format::{Figure, Format};

/// One thread's row.
#[derive(Debug, Clone, Default)]
pub struct Row {
    pub tid: i32,
    pub pid: Option<i32>,
    /// The thread's name as the tool printed it (`comm`, at most 15 bytes).
    pub name: Option<String>,
    /// The tool cut the name to its column (top marks it with a trailing `+`).
    pub name_cut: bool,
    /// The process's command line (`ps -f`'s CMD), when that is all the row names.
    pub command: Option<String>,
    pub state: Option<String>,
    /// Cores (the %CPU column / 100), of the table's figure.
    pub cores: Option<f64>,
    /// Cumulative CPU seconds (TIME+, TIME).
    pub cpu_s: Option<f64>,
    /// Seconds since the thread started (ps ELAPSED).
    pub elapsed_s: Option<f64>,
    pub line: u64,
    pub text: String,
}

/// One table of rows.
#[derive(Debug, Clone)]
pub struct Table {
    pub format: Format,
    /// The column header's line.
    pub header_line: u64,
    pub last_line: u64,
    /// Time of day of the table, in seconds (top's `top - HH:MM:SS`, pidstat's row time).
    pub clock: Option<u32>,
    /// Seconds the %CPU figures cover, when the table says (pidstat's interval).
    pub over_s: Option<f64>,
    pub figure: Figure,
    pub rows: Vec<Row>,
    /// The process's own total, when the tool prints one (pidstat's TGID row).
    pub process_cores: Option<f64>,
    /// pidstat's `Average:` section: the mean of the reports before it.
    pub average: bool,
}

impl Table {
    pub fn new(format: Format, header_line: u64, figure: Figure) -> Self {
        Table {
            format,
            header_line,
            last_line: header_line,
            clock: None,
            over_s: None,
            figure,
            rows: Vec::new(),
            process_cores: None,
            average: false,
        }
    }
}

/// What the main thread's row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MainRow {
    /// The whole process's CPU, not the thread's.
    Total(usize),
    /// At least the sum of the others: maybe the process's total, maybe its own work.
    Maybe(usize),
}

/// The main thread's row, when it may carry the whole process's CPU instead of its own.
///
/// procps-ng's `top -H` and `ps -L` (4.0.2 here, Debian 12) show the main thread (TID = PID)
/// with the process's totals: the sleeping main thread of kgap-spin, whose other thread
/// spins, shows at 99.9% like the spinner (the kernel's /proc/PID/task/PID/stat says 0).
/// The row is the total when its %CPU or cumulative CPU time is the sum of the other rows'
/// (busy enough that this is no coincidence), or when it is above one core, which no thread
/// can be. It may be the total when it is at least the sum of the others (threads that
/// exited count in the total but have no row), and then only the reader can tell. When the
/// process id is known only that row is a candidate, else the lowest TID (the main thread's
/// TID is the process id).
pub fn main_row(rows: &[Row]) -> Option<MainRow> {
    if rows.len() < 2 {
        return None;
    }
    let candidate = match rows.iter().position(|r| r.pid == Some(r.tid)) {
        Some(i) => i,
        None if rows.iter().all(|r| r.pid.is_none()) => rows
            .iter()
            .enumerate()
            .min_by_key(|(_, r)| r.tid)
            .map(|(i, _)| i)?,
        None => return None,
    };
    let lead = &rows[candidate];
    let same_pid = |r: &Row| lead.pid.is_none() || r.pid == lead.pid;
    let (mut cpu, mut cpu_known, mut cores, mut cores_known, mut n) = (0.0, true, 0.0, true, 0);
    for r in rows
        .iter()
        .enumerate()
        .filter(|(i, r)| *i != candidate && same_pid(r))
        .map(|(_, r)| r)
    {
        n += 1;
        match r.cpu_s {
            Some(v) => cpu += v,
            None => cpu_known = false,
        }
        match r.cores {
            Some(v) => cores += v,
            None => cores_known = false,
        }
    }
    if n == 0 {
        return None;
    }
    // Time columns round to 1 s (ps) or 10 ms (top); %CPU to 0.1 per row.
    let whole_seconds = lead.cpu_s.is_some_and(|v| v.fract() == 0.0);
    let cpu_tol = 0.03 * cpu + if whole_seconds { 1.0 } else { 0.02 };
    let cores_tol = 0.01 + 0.001 * n as f64 + 0.03 * cores;
    let cpu_match =
        cpu_known && cpu >= 1.0 && lead.cpu_s.is_some_and(|v| (v - cpu).abs() <= cpu_tol);
    let cores_match =
        cores_known && cores >= 0.2 && lead.cores.is_some_and(|v| (v - cores).abs() <= cores_tol);
    let above_a_core = lead.cores.is_some_and(|v| v > 1.05);
    if cpu_match || cores_match || above_a_core {
        return Some(MainRow::Total(candidate));
    }
    let at_least = cores_known
        && cores >= 0.2
        && lead.cores.is_some_and(|v| v >= cores - cores_tol)
        && (!cpu_known || lead.cpu_s.is_none_or(|v| v >= cpu - cpu_tol));
    at_least.then_some(MainRow::Maybe(candidate))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(tid: i32, cores: f64, cpu_s: f64) -> Row {
        Row {
            tid,
            cores: Some(cores),
            cpu_s: Some(cpu_s),
            ..Row::default()
        }
    }

    #[test]
    fn the_main_thread_row_that_is_the_process_sum() {
        // kgap-spin under procps-ng 4.0.2: main sleeps, spinner spins, main shows 99.9%.
        let rows = vec![
            row(29247, 0.999, 2.21),
            row(29251, 0.999, 2.21),
            row(29252, 0.0, 0.0),
        ];
        assert_eq!(main_row(&rows), Some(MainRow::Total(0)));
        // A main thread that does all the work while the others idle is not a total.
        let rows = vec![row(10, 0.98, 50.0), row(11, 0.01, 0.1), row(12, 0.0, 0.0)];
        assert_eq!(main_row(&rows), None);
        // Two busy threads and a main thread busy on its own account.
        let rows = vec![row(10, 0.5, 9.0), row(11, 0.9, 30.0), row(12, 0.8, 20.0)];
        assert_eq!(main_row(&rows), None);
        // Above a core: no thread can be.
        let rows = vec![row(10, 1.55, 9.0), row(11, 0.9, 3.0), row(12, 0.6, 2.0)];
        assert_eq!(main_row(&rows), Some(MainRow::Total(0)));
        // At least the others' sum (the probe's main thread with exited threads' CPU): maybe.
        let rows = vec![row(10, 0.467, 55.14), row(11, 0.2, 6.6), row(12, 0.2, 3.96)];
        assert_eq!(main_row(&rows), Some(MainRow::Maybe(0)));
    }
}
