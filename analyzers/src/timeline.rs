//! `--timeline FILE`: one CSV row per second of the log, written as the log is read
//! (constant memory). Lines whose time is earlier than the current second (logs
//! reordered by a wrapper) are folded into the current second and counted.

use std::io::Write;

use serde::Serialize;

use crate::error::AnalyzeError;

/// A row of a per-second timeline.
pub(crate) trait Row: Serialize + Default {
    fn set_second(&mut self, second: i64);
    /// Derive the row's computed columns (means) just before it is written.
    fn finalize(&mut self) {}
}

pub(crate) struct Timeline<'w, R: Row> {
    writer: Option<csv::Writer<Box<dyn Write + 'w>>>,
    current: Option<(i64, R)>,
    /// Records folded into a later second than their own.
    pub late: u64,
    /// Rows written.
    pub rows: u64,
    error: Option<csv::Error>,
}

impl<'w, R: Row> Timeline<'w, R> {
    pub fn disabled() -> Self {
        Timeline {
            writer: None,
            current: None,
            late: 0,
            rows: 0,
            error: None,
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
        self.writer.as_ref()?;
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
        if let (Some((_, mut row)), Some(w)) = (self.current.take(), self.writer.as_mut()) {
            row.finalize();
            if self.error.is_none() {
                match w.serialize(&row) {
                    Ok(()) => self.rows += 1,
                    Err(e) => self.error = Some(e),
                }
            }
        }
    }

    /// Write the last row and flush.
    pub fn finish(mut self) -> Result<(u64, u64), AnalyzeError> {
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
