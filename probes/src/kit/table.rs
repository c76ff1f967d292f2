//! A plain-text table: the first column left-aligned, the rest right-aligned (numbers).

pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Table {
        Table {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub fn render(&self) -> String {
        let n = self.header.len();
        let mut width = vec![0; n];
        for r in std::iter::once(&self.header).chain(&self.rows) {
            for (i, c) in r.iter().enumerate().take(n) {
                width[i] = width[i].max(c.chars().count());
            }
        }
        let mut out = String::new();
        for (ri, r) in std::iter::once(&self.header).chain(&self.rows).enumerate() {
            let cells: Vec<String> = (0..n)
                .map(|i| {
                    let c = r.get(i).map(String::as_str).unwrap_or("");
                    if i == 0 {
                        format!("{c:<w$}", w = width[i])
                    } else {
                        format!("{c:>w$}", w = width[i])
                    }
                })
                .collect();
            out.push_str(cells.join("  ").trim_end());
            out.push('\n');
            if ri == 0 {
                out.push_str(&"-".repeat(width.iter().sum::<usize>() + 2 * (n - 1)));
                out.push('\n');
            }
        }
        // Every MB/s column is decimal: said under the table that prints one.
        if self.header.iter().any(|h| h.contains("MB/s")) {
            out.push_str(&format!(
                "({})\n",
                kgap_analyzers::vocab::units::MB_PER_S_NOTE
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_aligns_columns() {
        let mut t = Table::new(["setting", "msg/s"]);
        t.row(vec!["1000".into(), "389k".into()]);
        t.row(vec!["10".into(), "1.48M".into()]);
        let s = t.render();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "setting  msg/s");
        assert_eq!(lines[2], "1000      389k");
        assert_eq!(lines[3], "10       1.48M");
        assert_eq!(lines.len(), 4, "no unit note without an MB/s column");
    }

    #[test]
    fn a_table_with_mb_per_s_says_they_are_decimal() {
        let mut t = Table::new(["setting", "MB/s"]);
        t.row(vec!["1000".into(), "118".into()]);
        let s = t.render();
        let last = s.lines().last().unwrap();
        assert!(
            last.contains("10^6 bytes/s") && last.contains("MiB/s"),
            "{s}"
        );
    }
}
