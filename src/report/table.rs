//! Plain text tables and the prose lines around them, within the width of
//! the terminal ([`super::width::current`]).
//!
//! A table is a header line, one dashed rule under it, then one line per
//! row: no rule between rows (a table twice as tall wraps twice as badly in
//! a narrow terminal), no box-drawing characters (the same bytes go to a
//! terminal, a pipe or a file, and `grep`, `diff` and `column` read them),
//! no trailing spaces. Labels are left-aligned, figures right-aligned, and
//! a unit lives in its column's header, never in the cells. A table wider
//! than the terminal wraps its text cells at spaces, and when even that
//! does not fit prints each row as a block (see [`narrow`]): no word and no
//! figure is ever broken.
//!
//! The same [`Table`] also renders as Markdown ([`Table::markdown`]), so a
//! table built once prints in either form with the same cells.
//!
//! Why the tables are our own and not a table crate's: comfy-table, the
//! well-kept one that arranges columns to a width, was weighed against the
//! width rule and these tables' needs. It has no label spanning columns
//! (`read` over MB/s and IOPS), it pads every cell so its borderless lines
//! end in spaces, and its dynamic arrangement splits a word longer than
//! its column, where the rule here is that words and figures stay whole
//! (a table that cannot fit as columns becomes blocks of `header value`
//! lines instead). Keeping the rule takes some 200 lines here; the crate
//! would need about as many around it to undo what it does.
//!
//! Prose lines ("model  …", notes, warnings) are wrapped by [`fit`] so that
//! no line of a report is wider than the width it is given (for a report,
//! [`super::width::current`]; see [`fitted`]).

use crate::units::escape;
use std::fmt;

mod narrow;

/// The space between two columns.
const GAP: &str = "  ";

/// How a column's cells sit in their width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A table: the first column (the row's label) left-aligned, the others
/// right-aligned unless set otherwise.
#[derive(Debug, Clone)]
pub struct Table {
    headers: Vec<String>,
    align: Vec<Align>,
    /// Labels over runs of columns (`read` over MB/s and IOPS), each with
    /// the number of columns it spans; empty when there is none.
    groups: Vec<(String, usize)>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new<S: AsRef<str>>(headers: &[S]) -> Table {
        let headers: Vec<String> = headers.iter().map(|h| h.as_ref().to_string()).collect();
        let align = (0..headers.len())
            .map(|i| if i == 0 { Align::Left } else { Align::Right })
            .collect();
        Table {
            headers,
            align,
            groups: Vec::new(),
            rows: Vec::new(),
        }
    }

    /// Sets how column `column` is aligned.
    pub fn align(&mut self, column: usize, align: Align) -> &mut Table {
        if let Some(a) = self.align.get_mut(column) {
            *a = align;
        }
        self
    }

    /// A line above the header naming runs of columns, left to right; each
    /// label sits right-aligned over the columns it spans.
    pub fn groups(&mut self, groups: &[(&str, usize)]) -> &mut Table {
        self.groups = groups.iter().map(|(l, n)| (l.to_string(), *n)).collect();
        self
    }

    /// Adds a row. Every cell is shown through [`cut`]: a cell may hold a
    /// name from outside (a job name from an imported fio file, a path, a
    /// host), and no table may carry a terminal's control characters or be
    /// widened past [`escape::NAME_COLUMNS`] by one cell.
    pub fn add_row(&mut self, row: Vec<String>) -> &mut Table {
        self.rows
            .push(row.iter().map(|c| cut(c, escape::NAME_COLUMNS)).collect());
        self
    }

    /// The columns worth printing: a column with no header and no cell
    /// (an error column when nothing failed) is left out.
    fn shown(&self) -> Vec<usize> {
        (0..self.headers.len())
            .filter(|&c| {
                !self.headers[c].is_empty()
                    || self
                        .rows
                        .iter()
                        .any(|r| r.get(c).is_some_and(|x| !x.is_empty()))
            })
            .collect()
    }

    fn widths(&self) -> Vec<usize> {
        (0..self.headers.len())
            .map(|c| {
                self.rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .chain(std::iter::once(&self.headers[c]))
                    .map(|s| columns(s))
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }

    fn line(&self, cells: &[String], widths: &[usize], shown: &[usize]) -> String {
        let parts: Vec<String> = shown
            .iter()
            .map(|&c| {
                let cell = cells.get(c).map_or("", String::as_str);
                pad(cell, widths[c], self.align[c])
            })
            .collect();
        parts.join(GAP).trim_end().to_string()
    }

    fn group_line(&self, widths: &[usize], shown: &[usize]) -> String {
        let mut line = String::new();
        let mut column = 0;
        for (label, span) in &self.groups {
            let covered: Vec<usize> = shown
                .iter()
                .copied()
                .filter(|c| (column..column + span).contains(c))
                .collect();
            column += span;
            if covered.is_empty() {
                continue;
            }
            let width =
                covered.iter().map(|&c| widths[c]).sum::<usize>() + GAP.len() * (covered.len() - 1);
            if !line.is_empty() {
                line.push_str(GAP);
            }
            line.push_str(&pad(label, width, Align::Right));
        }
        line.trim_end().to_string()
    }

    /// The table as Markdown: the header, the `|---|` rule, one line per
    /// row, every cell escaped (see [`escape`](super::markdown_escape::escape)) so
    /// that text from a device reads as text. Every column is kept, and
    /// Markdown aligns them itself.
    pub fn markdown(&self) -> String {
        let line = |r: &[String]| {
            let cells: Vec<String> = r
                .iter()
                .map(|c| super::markdown_escape::escape(c))
                .collect();
            format!("| {} |\n", cells.join(" | "))
        };
        let mut out = line(&self.headers);
        out.push_str(&format!("|{}\n", "---|".repeat(self.headers.len())));
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out
    }
}

impl fmt::Display for Table {
    /// The table without a final newline, within the terminal's width.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.lines(super::width::current()).join("\n"))
    }
}

impl Table {
    /// The table's lines, none wider than `width` while a figure fits:
    /// as laid out for its cells when it fits, else narrowed (see
    /// [`narrow`]).
    pub fn lines(&self, width: usize) -> Vec<String> {
        let shown = self.shown();
        let widths = self.widths();
        let full: usize = shown.iter().map(|&c| widths[c]).sum::<usize>()
            + GAP.len() * shown.len().saturating_sub(1);
        if full > width {
            return narrow::lay_out(&self.columns(&shown), width);
        }
        let mut lines = Vec::new();
        if !self.groups.is_empty() {
            lines.push(self.group_line(&widths, &shown));
        }
        lines.push(self.line(&self.headers, &widths, &shown));
        lines.push("-".repeat(full));
        for row in &self.rows {
            lines.push(self.line(row, &widths, &shown));
        }
        lines
    }

    /// The shown columns as [`narrow`] takes them.
    fn columns(&self, shown: &[usize]) -> Vec<narrow::Column<'_>> {
        let mut group_of = Vec::new();
        for (i, (label, span)) in self.groups.iter().enumerate() {
            group_of.extend(std::iter::repeat_n(Some((i, label.as_str())), *span));
        }
        shown
            .iter()
            .map(|&c| narrow::Column {
                header: &self.headers[c],
                cells: self
                    .rows
                    .iter()
                    .map(|r| r.get(c).map_or("", String::as_str))
                    .collect(),
                right: self.align[c] == Align::Right,
                group: group_of.get(c).copied().flatten(),
            })
            .collect()
    }
}

/// The terminal columns `s` takes: one per character (every character these
/// tables print, µ, –, × and the block bars included, is one column wide).
pub fn columns(s: &str) -> usize {
    s.chars().count()
}

/// `name` as a terminal may show it: every control or bidirectional
/// character escaped, and cut to `width` columns with an ellipsis as the
/// last (a host name, a kernel release, a job name: text from outside that
/// must neither command the terminal nor widen a line). See
/// [`escape::name`].
pub fn cut(name: &str, width: usize) -> String {
    escape::name(name, width)
}

fn pad(s: &str, width: usize, align: Align) -> String {
    let fill = " ".repeat(width.saturating_sub(columns(s)));
    match align {
        Align::Left => format!("{s}{fill}"),
        Align::Right => format!("{fill}{s}"),
    }
}

/// `text` with every line wider than `width` wrapped at spaces, and no line
/// ending in a space. A continued line is indented under the text of a
/// labelled line (`model       t(n) = …` continues at column 12), else two
/// past the line's own indent. A word wider than the room left (a path, a
/// list, a simulated card's parameters) is broken after one of its
/// separators (`/`, `,`, `;`, `:`, `=`), and cut only where it has none.
/// Control characters are shown escaped (see [`escape::line`]). The work is
/// linear in the length of `text`.
pub fn fit(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, newline) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        // Prose may quote text from outside; its control characters are
        // shown escaped, whatever line they came in on.
        let body = escape::line(body.trim_end());
        let body = body.as_ref();
        if columns(body) <= width {
            out.push_str(body);
        } else {
            out.push_str(&wrap(body, width, continuation_indent(body, width)).join("\n"));
        }
        out.push_str(newline);
    }
    out
}

/// Where a wrapped line continues: under a label's text (a word or two at
/// the start, padded to column 12 as the reports print them), else two
/// columns past the line's indent.
fn continuation_indent(line: &str, width: usize) -> usize {
    const LABEL: usize = 12;
    // An indent never takes more than a third of the width.
    let guard = width / 3;
    // Only the start of the line decides (its label, or its indent up to
    // the guard), so only that much is read.
    let chars: Vec<char> = line.chars().take(LABEL.max(guard) + 1).collect();
    let labelled = chars.len() > LABEL
        && chars[0] != ' '
        && chars[LABEL - 1] == ' '
        && chars[LABEL] != ' '
        && chars[..LABEL].windows(2).any(|w| w == [' ', ' ']);
    if labelled {
        LABEL
    } else {
        (chars.iter().take_while(|c| **c == ' ').count() + 2).min(guard)
    }
}

/// Whether the space at `i` joins a number to its unit (`256 MiB`,
/// `13.1 ms`) or a sign to its figure, which a wrapped line keeps together.
fn binds_unit(chars: &[char], i: usize) -> bool {
    const UNIT_READ: usize = 12;
    const UNITS: [&str; 9] = ["B", "KiB", "MiB", "GiB", "TiB", "MB/s", "µs", "ms", "s"];
    // Nor is a sign cut from what it joins (`t0 ± 1.3 µs`, `B = 20`).
    let sign = |c: Option<&char>| c.is_some_and(|c| ['±', '=', '≈'].contains(c));
    if i > 0 && (sign(chars.get(i - 1)) || sign(chars.get(i + 1))) {
        return true;
    }
    if i == 0 || !chars[i - 1].is_ascii_digit() {
        return false;
    }
    // A unit with its punctuation is a few characters: no more is read
    // (a word of megabytes after a figure is no unit).
    let word: String = chars[i + 1..]
        .iter()
        .take_while(|c| !c.is_whitespace())
        .take(UNIT_READ)
        .collect();
    if word.chars().count() == UNIT_READ {
        return false;
    }
    let word = word.trim_end_matches([',', ';', ')', '.', ':']);
    UNITS.contains(&word)
}

/// Where a word too long for its line may be broken: after its last
/// separator within `room` (not at its first character).
fn after_separator(room: &[char]) -> Option<usize> {
    let start = room.iter().take_while(|c| **c == ' ').count();
    (start + 1..=room.len())
        .rev()
        .find(|&i| ['/', ',', ';', ':', '='].contains(&room[i - 1]))
}

/// The length of the word after the spaces at `at`, counted within the
/// next `2 × most + 2` characters (only whether it exceeds `most` matters,
/// and a word or a gap of megabytes is not read whole).
fn word_after(chars: &[char], at: usize, most: usize) -> usize {
    let rest = &chars[at..chars.len().min(at + 2 * most + 2)];
    let spaces = rest.iter().take_while(|c| **c == ' ').count();
    rest[spaces..].iter().take_while(|c| **c != ' ').count()
}

/// `text` as [`fit`] wraps it to the terminal's width
/// ([`super::width::current`]): what every text report prints.
pub fn fitted(text: &str) -> String {
    fit(text, super::width::current())
}

/// Breaks `line` at the last space that keeps each piece within `width`,
/// keeping the spacing inside each piece as it was (a label's padding);
/// every piece after the first is indented by `indent`.
///
/// One pass: the characters are collected once and a position walks them;
/// each piece looks back over at most its own room for a space, so the
/// work is linear in the length of `line` (a name of megabytes included).
fn wrap(line: &str, width: usize, indent: usize) -> Vec<String> {
    let prefix = " ".repeat(indent);
    let chars: Vec<char> = line.chars().collect();
    let mut lines = Vec::new();
    let mut at = 0;
    let mut lead = "";
    while at < chars.len() {
        let rest = &chars[at..];
        let room = width.saturating_sub(columns(lead)).max(1);
        if rest.len() <= room {
            lines.push(format!("{lead}{}", rest.iter().collect::<String>()));
            break;
        }
        // The last space within the room that has text before it.
        let start = rest[..room].iter().take_while(|c| **c == ' ').count();
        let cut = (start + 1..=room)
            .rev()
            .find(|&i| rest[i] == ' ' && rest[i - 1] != ' ' && !binds_unit(rest, i));
        // When the word after that space is too long for any line (a
        // long name after a label), it is broken here, after a separator,
        // rather than leaving the label alone on its line.
        let room_after = width.saturating_sub(indent);
        let cut = match cut {
            Some(c) if word_after(rest, c, room_after) > room_after => {
                after_separator(&rest[..room]).filter(|&s| s > c).or(cut)
            }
            _ => cut,
        };
        // A word longer than the room is broken after a separator in it,
        // else cut.
        let next = cut
            .or_else(|| after_separator(&rest[..room]))
            .unwrap_or(room);
        let piece: String = rest[..next].iter().collect();
        lines.push(format!("{lead}{}", piece.trim_end()));
        let skip = rest[next..].iter().take_while(|c| **c == ' ').count();
        at += next + skip;
        lead = &prefix;
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_align_right_under_one_rule_and_nothing_trails() {
        let mut t = Table::new(&["size", "MB/s", ""]);
        t.add_row(vec!["4 KiB".into(), "20.2".into(), String::new()]);
        t.add_row(vec!["256 KiB".into(), "139".into(), String::new()]);
        assert_eq!(
            t.to_string(),
            "size     MB/s\n-------------\n4 KiB    20.2\n256 KiB   139"
        );
    }

    #[test]
    fn group_labels_sit_over_their_columns() {
        let mut t = Table::new(&["test", "MB/s", "IOPS", "MB/s", "IOPS"]);
        t.groups(&[("", 1), ("read", 2), ("write", 2)]);
        t.add_row(
            ["SEQ", "39.8", "38.0", "20.0", "19.0"]
                .map(String::from)
                .to_vec(),
        );
        let text = t.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "            read       write");
        assert_eq!(lines[1], "test  MB/s  IOPS  MB/s  IOPS");
    }

    #[test]
    fn long_lines_wrap_under_their_label() {
        let line = format!("model       {}", "word ".repeat(30));
        let text = fit(&format!("{line}\nshort \n"), 40);
        for l in text.lines() {
            assert!(columns(l) <= 40 && !l.ends_with(' '), "{l:?}");
        }
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].starts_with("            word"), "{text}");
        assert_eq!(*lines.last().unwrap(), "short");
        assert!(text.ends_with('\n'));
        let units = fit("target      a card of 256 MiB", 27);
        assert_eq!(
            units, "target      a card of\n            256 MiB",
            "{units}"
        );
        let named = fit(
            "target      sim:size=64M,au=1M,page=16k,write=20MB/s (simulated)",
            40,
        );
        assert_eq!(
            named,
            "target      sim:size=64M,au=1M,page=16k,\n            write=20MB/s (simulated)"
        );
        let cut = fit(&"x".repeat(90), 40);
        assert!(cut.lines().all(|l| columns(l) <= 40), "{cut}");
    }

    #[test]
    fn a_50_mb_cell_is_cut_and_its_table_stays_narrow() {
        let mut t = Table::new(&["test", "MB/s"]);
        t.add_row(vec!["w".repeat(50_000_000), "1.0".into()]);
        t.add_row(vec!["a\u{1b}[2J\rb\u{202e}".into(), "2.0".into()]);
        let text = t.to_string();
        assert!(
            text.lines()
                .all(|l| columns(l) <= escape::NAME_COLUMNS + 2 + 4),
            "{text}"
        );
        assert!(text.contains('…') && text.contains("a\\e[2J\\rb\\u{202e}"));
        assert!(!text.contains(['\u{1b}', '\r', '\u{202e}']));
        let md = t.markdown();
        assert!(
            md.len() < 1024 && !md.contains(['\u{1b}', '\r', '\u{202e}']),
            "{md}"
        );
    }

    #[test]
    fn megabytes_of_prose_wrap_in_one_pass_and_lose_nothing() {
        // Words, one word, and spaces: each wraps by walking it once (the
        // wrapper never re-reads what it has placed), so this is quick
        // at any length; what is checked is the result.
        let words = "ab 12 MiB ".repeat(400_000);
        let word = "x".repeat(4 << 20);
        let spaced = format!("a{}b", " ".repeat(4 << 20));
        for text in [words, word, spaced] {
            let out = fit(&format!("model       {text}"), 80);
            assert!(out.lines().all(|l| columns(l) <= 80));
            let kept = |s: &str| s.chars().filter(|c| !c.is_whitespace()).count();
            assert_eq!(kept(&out), kept(&text) + "model".len());
        }
        let hostile = fit("note        a\u{1b}]0;t\u{7} b\r\n", 80);
        assert_eq!(hostile, "note        a\\e]0;t\\u{7} b\n");
    }
}
