//! Plain-text tables for the CLI's human-readable output.

/// A table with a header row; columns are sized to their widest cell.
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    /// Columns aligned right (numbers).
    right: Vec<bool>,
}

impl Table {
    /// A table with these column names; names starting with `>` are right-aligned.
    pub fn new(columns: &[&str]) -> Table {
        Table {
            header: columns
                .iter()
                .map(|c| c.strip_prefix('>').unwrap_or(c).to_string())
                .collect(),
            right: columns.iter().map(|c| c.starts_with('>')).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Renders the table.
    pub fn render(&self) -> String {
        let n = self.header.len();
        let mut width: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate().take(n) {
                width[i] = width[i].max(c.chars().count());
            }
        }
        let line = |cells: &[String]| {
            let mut s = String::new();
            for (i, c) in cells.iter().enumerate().take(n) {
                let pad = width[i].saturating_sub(c.chars().count());
                if i > 0 {
                    s.push_str("  ");
                }
                if self.right[i] {
                    s.push_str(&" ".repeat(pad));
                    s.push_str(c);
                } else {
                    s.push_str(c);
                    if i + 1 < n {
                        s.push_str(&" ".repeat(pad));
                    }
                }
            }
            s.trim_end().to_string()
        };
        let mut out = line(&self.header);
        out.push('\n');
        out.push_str(
            &width
                .iter()
                .map(|w| "-".repeat(*w))
                .collect::<Vec<_>>()
                .join("  "),
        );
        out.push('\n');
        for r in &self.rows {
            out.push_str(&line(r));
            out.push('\n');
        }
        out
    }
}

/// Formats a byte count as `12.3 KiB`.
pub fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}
