//! `--timeline FILE`: one CSV row per second of the log, written as the log is read
//! (constant memory). Lines whose time is earlier than the current second (logs
//! reordered by a wrapper) are folded into the current second and counted.

use std::io::Write;

use serde::Serialize;

use crate::vocab::error::AnalyzeError;

/// A row of a per-second timeline.
pub(crate) trait Row: Serialize + Default {
    fn set_second(&mut self, second: i64);
    /// Derive the row's computed columns (means) just before it is written.
    fn finalize(&mut self) {}
    /// A column's value, for series kept in memory ([`Timeline::collecting`]).
    fn column(&self, _name: &str) -> Option<f64> {
        None
    }
}

/// Rows kept in memory instead of written: (second, the asked columns' values).
/// gap-report charts these without writing a CSV and reading it back.
#[derive(Debug, Default)]
pub(crate) struct Collected {
    pub columns: &'static [&'static str],
    pub rows: Vec<(i64, Vec<Option<f64>>)>,
}

pub(crate) struct Timeline<'w, R: Row> {
    writer: Option<csv::Writer<Box<dyn Write + 'w>>>,
    current: Option<(i64, R)>,
    /// Records folded into a later second than their own.
    pub late: u64,
    /// Rows written.
    pub rows: u64,
    error: Option<csv::Error>,
    /// Rows kept in memory (one per second of the log, as a CSV would hold).
    pub collected: Option<Collected>,
}

impl<'w, R: Row> Timeline<'w, R> {
    pub fn disabled() -> Self {
        Timeline {
            writer: None,
            current: None,
            late: 0,
            rows: 0,
            error: None,
            collected: None,
        }
    }

    /// Keep `columns` of every row in memory instead of writing a CSV.
    pub fn collecting(columns: &'static [&'static str]) -> Self {
        Timeline {
            collected: Some(Collected {
                columns,
                rows: Vec::new(),
            }),
            ..Self::disabled()
        }
    }

    pub fn to_writer(w: impl Write + 'w) -> Self {
        let w: Box<dyn Write + 'w> = Box::new(w);
        Timeline {
            writer: Some(csv::Writer::from_writer(w)),
            ..Self::disabled()
        }
    }

    /// The row of the second holding `t`; earlier rows are written out first.
    pub fn row(&mut self, t: f64) -> Option<&mut R> {
        if self.writer.is_none() && self.collected.is_none() {
            return None;
        }
        let s = t.floor() as i64;
        match &self.current {
            Some((c, _)) if s < *c => self.late += 1,
            Some((c, _)) if s == *c => {}
            _ => {
                self.flush_current();
                let mut r = R::default();
                r.set_second(s);
                self.current = Some((s, r));
            }
        }
        self.current.as_mut().map(|(_, r)| r)
    }

    fn flush_current(&mut self) {
        let Some((second, mut row)) = self.current.take() else {
            return;
        };
        row.finalize();
        if let Some(c) = self.collected.as_mut() {
            let values = c.columns.iter().map(|name| row.column(name)).collect();
            c.rows.push((second, values));
        }
        if let Some(w) = self.writer.as_mut() {
            if self.error.is_none() {
                match w.serialize(&row) {
                    Ok(()) => self.rows += 1,
                    Err(e) => self.error = Some(e),
                }
            }
        }
    }

    /// Write the last row and flush; (rows written, records folded into a later second).
    /// What was collected stays in [`collected`](Self::collected).
    pub fn finish(&mut self) -> Result<(u64, u64), AnalyzeError> {
        self.flush_current();
        if let Some(e) = self.error.take() {
            return Err(AnalyzeError::Timeline(std::io::Error::other(e)));
        }
        if let Some(mut w) = self.writer.take() {
            w.flush().map_err(AnalyzeError::Timeline)?;
        }
        Ok((self.rows, self.late))
    }
}
