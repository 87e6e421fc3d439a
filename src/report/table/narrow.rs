//! A table wider than the terminal, laid out within it without breaking a
//! word or a figure.
//!
//! First the text columns give way: their cells (and every header) wrap at
//! spaces onto more lines, the widest column first, never narrower than its
//! longest word; figures (right-aligned cells) never wrap, since `20.2` on
//! one line and `MB/s` on the next reads as two values. When even that is
//! too wide, each row is printed as a block: its label, then one line per
//! cell with its header (`  read MB/s  39.8`), which fits any width a
//! figure fits.
//!
//! The caller hands over plain columns; nothing here knows the table type,
//! so the two files do not import each other.

/// One column as shown.
pub struct Column<'a> {
    pub header: &'a str,
    pub cells: Vec<&'a str>,
    /// Right-aligned: a figure, which is never wrapped.
    pub right: bool,
    /// The label over this column's run of columns, with the run's index
    /// (two runs may carry the same label).
    pub group: Option<(usize, &'a str)>,
}

/// The space between two columns.
const GAP: &str = "  ";

/// `columns` laid out in at most `width` columns; the lines have no
/// trailing spaces.
pub fn lay_out(columns: &[Column<'_>], width: usize) -> Vec<String> {
    match shrunk(columns, width) {
        Some(widths) => wrapped(columns, &widths),
        None => stacked(columns, width),
    }
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

fn longest_word(s: &str) -> usize {
    s.split(' ').map(chars).max().unwrap_or(0)
}

fn total(widths: &[usize]) -> usize {
    widths.iter().sum::<usize>() + GAP.len() * widths.len().saturating_sub(1)
}

/// Column widths within `width`, each text column taken down from its
/// natural width (the widest first) to no less than its longest word;
/// `None` when the narrowest such layout is still too wide.
fn shrunk(columns: &[Column<'_>], width: usize) -> Option<Vec<usize>> {
    let natural: Vec<usize> = columns
        .iter()
        .map(|c| {
            c.cells
                .iter()
                .map(|s| chars(s))
                .chain([chars(c.header)])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let least: Vec<usize> = columns
        .iter()
        .map(|c| {
            let cells = c.cells.iter().map(|s| match c.right {
                true => chars(s),
                false => longest_word(s),
            });
            cells.chain([longest_word(c.header)]).max().unwrap_or(0)
        })
        .collect();
    if total(&least) > width {
        return None;
    }
    let mut widths = natural;
    while total(&widths) > width {
        // The column with the most room to give gives one column.
        let (at, _) = widths
            .iter()
            .zip(&least)
            .enumerate()
            .filter(|(_, (w, l))| w > l)
            .max_by_key(|(_, (w, _))| **w)?;
        widths[at] -= 1;
    }
    Some(widths)
}

/// `text` in lines of at most `width` columns, broken at spaces. A word
/// wider than that (a name from outside, in a block) is broken after one
/// of its separators (`/`, `,`, `:`, `=`), else cut.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        if !line.is_empty() && chars(&line) + 1 + chars(word) > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        let mut word: Vec<char> = word.chars().collect();
        while line.is_empty() && word.len() > width.max(1) {
            let at = (1..=width.max(1))
                .rev()
                .find(|&i| ['/', ',', ':', '='].contains(&word[i - 1]))
                .unwrap_or(width.max(1));
            lines.push(word.drain(..at).collect());
        }
        line.extend(word);
    }
    lines.push(line);
    lines
}

fn pad(s: &str, width: usize, right: bool) -> String {
    let fill = " ".repeat(width.saturating_sub(chars(s)));
    match right {
        true => format!("{fill}{s}"),
        false => format!("{s}{fill}"),
    }
}

/// One table row as lines: each cell wrapped to its column (a figure is
/// one line), the cells side by side, the shorter ones blank below (or,
/// for the header, above: a wrapped header stands on its rule).
fn row_lines(
    cells: &[&str],
    columns: &[Column<'_>],
    widths: &[usize],
    header: bool,
) -> Vec<String> {
    let pieces: Vec<Vec<String>> = cells
        .iter()
        .zip(columns)
        .zip(widths)
        .map(|((cell, column), &w)| match column.right && !header {
            true => vec![cell.to_string()],
            false => wrap(cell, w),
        })
        .collect();
    let height = pieces.iter().map(Vec::len).max().unwrap_or(1);
    (0..height)
        .map(|line| {
            let parts: Vec<String> = pieces
                .iter()
                .zip(columns)
                .zip(widths)
                .map(|((p, column), &w)| {
                    let skip = if header { height - p.len() } else { 0 };
                    let text = line.checked_sub(skip).and_then(|i| p.get(i));
                    pad(text.map_or("", String::as_str), w, column.right)
                })
                .collect();
            parts.join(GAP).trim_end().to_string()
        })
        .collect()
}

/// The labels over runs of columns, each right-aligned over its run.
fn group_line(columns: &[Column<'_>], widths: &[usize]) -> Option<String> {
    columns.iter().any(|c| c.group.is_some()).then_some(())?;
    let mut parts: Vec<String> = Vec::new();
    let mut at = 0;
    while at < columns.len() {
        let group = columns[at].group;
        let end = (at..columns.len())
            .find(|&i| columns[i].group.map(|g| g.0) != group.map(|g| g.0))
            .unwrap_or(columns.len());
        let label = group.map_or("", |g| g.1);
        parts.push(pad(label, total(&widths[at..end]), true));
        at = end;
    }
    Some(parts.join(GAP).trim_end().to_string())
}

fn wrapped(columns: &[Column<'_>], widths: &[usize]) -> Vec<String> {
    let mut lines: Vec<String> = group_line(columns, widths).into_iter().collect();
    let headers: Vec<&str> = columns.iter().map(|c| c.header).collect();
    lines.extend(row_lines(&headers, columns, widths, true));
    lines.push("-".repeat(total(widths)));
    let rows = columns.first().map_or(0, |c| c.cells.len());
    for r in 0..rows {
        let cells: Vec<&str> = columns.iter().map(|c| c.cells[r]).collect();
        lines.extend(row_lines(&cells, columns, widths, false));
    }
    lines
}

/// Each row as a block: its label, then `  header  value` per cell, the
/// headers (with their group's label) padded to one width.
fn stacked(columns: &[Column<'_>], width: usize) -> Vec<String> {
    let name = |c: &Column<'_>| match c.group {
        Some((_, g)) if !g.is_empty() => format!("{g} {}", c.header),
        _ => c.header.to_string(),
    };
    let names: Vec<String> = columns.iter().skip(1).map(name).collect();
    let room = names.iter().map(|n| chars(n)).max().unwrap_or(0);
    let mut lines = Vec::new();
    let rows = columns.first().map_or(0, |c| c.cells.len());
    for r in 0..rows {
        lines.extend(wrap(columns[0].cells[r], width));
        for (c, n) in columns.iter().skip(1).zip(&names) {
            let cell = c.cells[r];
            if cell.is_empty() {
                continue;
            }
            let line = format!("  {}  {cell}", pad(n, room, false));
            match chars(&line) <= width {
                true => lines.push(line),
                false => {
                    lines.push(format!("  {n}"));
                    lines.extend(wrap(cell, width - 4).iter().map(|l| format!("    {l}")));
                }
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns<'a>(rows: &'a [[&'a str; 3]], headers: [&'a str; 3]) -> Vec<Column<'a>> {
        (0..3)
            .map(|c| Column {
                header: headers[c],
                cells: rows.iter().map(|r| r[c]).collect(),
                right: c == 1,
                group: None,
            })
            .collect()
    }

    #[test]
    fn text_wraps_at_spaces_and_figures_stay_whole() {
        let rows = [["SEQ1M Q8T1", "39.8", "a note of several words that is long"]];
        let cols = columns(&rows, ["test", "MB/s", "note"]);
        let lines = lay_out(&cols, 30);
        assert!(lines.iter().all(|l| chars(l) <= 30), "{lines:#?}");
        assert!(lines.iter().any(|l| l.contains("39.8")));
        let words: Vec<&str> = lines.iter().flat_map(|l| l.split_whitespace()).collect();
        for w in ["SEQ1M", "Q8T1", "several", "words", "long"] {
            assert!(words.contains(&w), "{w}: {lines:#?}");
        }
    }

    #[test]
    fn too_narrow_for_columns_prints_blocks() {
        let rows = [["RND4K", "1234.5678", "somewhere far off"]];
        let cols = columns(&rows, ["test", "MB/s", "where"]);
        let lines = lay_out(&cols, 24);
        assert_eq!(lines[0], "RND4K");
        assert!(lines.iter().all(|l| chars(l) <= 24), "{lines:#?}");
        assert!(lines.iter().any(|l| l.trim_start().starts_with("MB/s")));
    }
}
