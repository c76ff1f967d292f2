//! The slowest few lines of a kind, kept while reading (evidence of queueing).

use crate::vocab::report::{ExampleLine, EXAMPLE_CHARS};

/// The slowest few lines of a kind (for evidence of queueing).
#[derive(Debug, Default)]
pub(crate) struct Slowest {
    lines: Vec<(f64, ExampleLine)>,
}

impl Slowest {
    pub(crate) fn offer(&mut self, key: f64, line_no: u64, line: &[u8]) {
        if self.lines.len() < 3 || self.lines.iter().any(|(k, _)| *k < key) {
            let ex = ExampleLine {
                line: line_no,
                text: String::from_utf8_lossy(line)
                    .chars()
                    .take(EXAMPLE_CHARS)
                    .collect(),
            };
            if self.lines.len() >= 3 {
                let (i, _) = self
                    .lines
                    .iter()
                    .enumerate()
                    .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0))
                    .expect("non-empty");
                self.lines.remove(i);
            }
            self.lines.push((key, ex));
        }
    }

    /// The kept lines, slowest first.
    pub(crate) fn take(&self) -> Vec<ExampleLine> {
        let mut v = self.lines.clone();
        v.sort_by(|a, b| b.0.total_cmp(&a.0));
        v.into_iter().map(|(_, e)| e).collect()
    }
}
