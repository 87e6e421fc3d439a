//! Markdown: a table ready to paste into a forum post or a README, with
//! the device named above it and the range rule of
//! [`cells`](super::cells) applied to every figure.
//!
//! Names in a result come from the device, the file system, the host or an
//! imported fio file, and a Markdown page is rendered as HTML wherever it
//! is pasted: every such text goes through [`escape`], so that it reads as
//! the text it is, not as markup or as another table cell.

use super::Export;
use super::cells::{figure_text, identity_text, rank_figures, spread_text};
use super::markdown_escape::escape;
use super::outcome::figure::{Figure, Unit, Value};
use super::table::Table;
use crate::analysis::ranks;
use crate::result::cluster::MpiSection;
use crate::result::{RunResult, TestResult};
use crate::units::escape::{self as outside, NAME_COLUMNS};
use crate::units::{format_iops, format_latency, format_mbps, format_size_figure, three_figures};
use crate::vocab::Rw;

pub struct Markdown;

/// One figure of a repetition: MB/s or IOPS.
#[derive(Clone, Copy)]
enum Quantity {
    MbPerS,
    Iops,
}

/// `quantity` of each complete repetition in one direction: the whole
/// figure of a pure read or write test, the direction's share of a mixed
/// one.
fn direction_reps(t: &TestResult, write: bool, quantity: Quantity) -> Vec<f64> {
    // Only iocurve's own directions: an imported word keeps a row of its own.
    let pure = t
        .workload
        .rw
        .ours()
        .filter(|rw| !rw.is_mixed())
        .map(Rw::writes);
    t.repetitions
        .iter()
        .filter(|m| !m.interrupted && m.ops > 0)
        .filter_map(|m| match pure {
            Some(w) if w == write => Some(match quantity {
                Quantity::MbPerS => m.mb_per_s,
                Quantity::Iops => m.iops,
            }),
            Some(_) => None,
            None => if write {
                m.write.as_ref()
            } else {
                m.read.as_ref()
            }
            .map(|d| match quantity {
                Quantity::MbPerS => d.mb_per_s,
                Quantity::Iops => d.iops,
            }),
        })
        .collect()
}

/// Row names in first-seen order: a read and a write test of one name
/// share a row; a mixed test has its own.
fn row_names(r: &RunResult) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for t in &r.tests {
        let name = row_name(t);
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

fn row_name(t: &TestResult) -> String {
    match t.workload.rw.ours() {
        Some(rw) if !rw.is_mixed() => t.name.clone(),
        _ => format!("{} ({})", t.name, t.workload.rw),
    }
}

/// The p50 and p99 cells of row `name` in one direction, each in the unit
/// that suits it: the median repetition of the first test of that row
/// that moved data that way (`-` when none did).
fn latency_cells(r: &RunResult, name: &str, write: bool) -> [String; 2] {
    let latency = r
        .tests
        .iter()
        .filter(|t| row_name(t) == name && t.skipped.is_none())
        .find_map(|t| super::cells::median_latency(t, write));
    match latency {
        Some(l) => [l.p50_ns, l.p99_ns].map(|ns| format_latency(ns as f64)),
        None => ["-".into(), "-".into()],
    }
}

fn cell(r: &RunResult, name: &str, write: bool, quantity: Quantity) -> String {
    let reps: Vec<f64> = r
        .tests
        .iter()
        .filter(|t| row_name(t) == name && t.skipped.is_none())
        .flat_map(|t| direction_reps(t, write, quantity))
        .collect();
    match quantity {
        Quantity::MbPerS => figure_text(&reps),
        Quantity::Iops => spread_text(&reps, format_iops),
    }
}

impl Export for Markdown {
    fn render(&self, r: &RunResult) -> String {
        let label = r
            .device_identity
            .as_ref()
            .map_or_else(|| r.target.path.clone(), |i| i.label.clone());
        let mut out = format!(
            "**{}** · iocurve {} {} · {}\n\n",
            escape(&outside::name(&label, NAME_COLUMNS)),
            escape(&outside::name(&r.iocurve_version, NAME_COLUMNS)),
            escape(&outside::name(&r.command(), NAME_COLUMNS)),
            escape(&outside::name(&r.started_at, NAME_COLUMNS))
        );
        let identity = outside::name(&identity_text(r.device_identity.as_ref()), NAME_COLUMNS);
        if !identity.is_empty() {
            out.push_str(&format!("{}\n\n", escape(&identity)));
        }
        if let Some(flash) = super::flash_rows::markdown(r, escape) {
            return out + &flash;
        }
        let figures = super::outcome::figures(r);
        if r.tests.is_empty() && !figures.is_empty() {
            outcome_tables(&mut out, r, &figures);
            if let Some(m) = &r.mpi {
                rank_tables(&mut out, r, m);
            }
            return out;
        }
        let mut table = Table::new(&[
            "Test",
            "Read MB/s",
            "Read IOPS",
            "Read p50",
            "Read p99",
            "Write MB/s",
            "Write IOPS",
            "Write p50",
            "Write p99",
        ]);
        for name in row_names(r) {
            let mut row = vec![name.clone()];
            for write in [false, true] {
                row.push(cell(r, &name, write, Quantity::MbPerS));
                row.push(cell(r, &name, write, Quantity::Iops));
                row.extend(latency_cells(r, &name, write));
            }
            table.add_row(row);
        }
        out.push_str(&table.markdown());
        out.push_str("\nMB/s = 10^6 bytes/s; IOPS = I/Os per second (k = 10^3).\n");
        out.push_str("Each figure is the median of the repetitions, with their range (min–max)\nwhere they spread by more than 10%. Latency (p50, p99) is that of the\nmedian repetition; each value names its unit (µs, ms, s).\n");
        if !figures.is_empty() {
            // A command with tests and an outcome of its own (copy).
            outcome_tables(&mut out, r, &figures);
        }
        if let Some(m) = &r.mpi {
            rank_tables(&mut out, r, m);
        }
        out
    }
}

/// Rows a Markdown table of a section of many shows; the CSV and JSON
/// hold every one.
const MAX_SECTION_ROWS: usize = 40;

/// The outcome of a run whose figures are not tests: its line, then one
/// table per section (a section of one row as figure and value, a section
/// of many with a column per figure).
fn outcome_tables(out: &mut String, r: &RunResult, figures: &[Figure]) {
    if let Some(line) = super::outcome::headline(r) {
        out.push_str(&format!("**Outcome**: {}\n", escape(&line)));
    }
    for (section, list) in super::outcome::sections(figures) {
        out.push_str(&format!("\n**{section}**\n\n"));
        if list.iter().all(|f| f.index.is_none()) {
            let mut table = Table::new(&["Figure", "Value"]);
            for f in list {
                table.add_row(vec![heading(f), escape(&value_text(f))]);
            }
            out.push_str(&table.markdown());
            continue;
        }
        pivot(out, &list);
    }
    out.push_str("\nMB/s = 10^6 bytes/s; KiB, MiB, GiB = 1024-based; each time names its unit.\n");
}

/// A section of many rows: one column per figure, one row per index.
fn pivot(out: &mut String, list: &[&Figure]) {
    let mut columns: Vec<String> = Vec::new();
    for f in list {
        if !columns.contains(&f.column()) {
            columns.push(f.column());
        }
    }
    let mut indexes: Vec<usize> = list.iter().filter_map(|f| f.index).collect();
    indexes.dedup();
    let mut header = vec!["#".to_string()];
    header.extend(columns.iter().map(|c| {
        list.iter()
            .find(|f| &f.column() == c)
            .map_or_else(|| c.clone(), |f| heading(f))
    }));
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut table = Table::new(&header);
    for &i in indexes.iter().take(MAX_SECTION_ROWS) {
        let mut row = vec![i.to_string()];
        for c in &columns {
            let cell = list.iter().find(|f| f.index == Some(i) && &f.column() == c);
            row.push(cell.map_or("-".into(), |f| escape(&value_text(f))));
        }
        table.add_row(row);
    }
    out.push_str(&table.markdown());
    if indexes.len() > MAX_SECTION_ROWS {
        out.push_str(&format!(
            "\n… {} more rows in the CSV and JSON exports.\n",
            indexes.len() - MAX_SECTION_ROWS
        ));
    }
}

/// A figure's name and unit as a column heading: `before (MB/s)`.
fn heading(f: &Figure) -> String {
    let unit = match f.unit {
        Unit::Bytes => "",
        Unit::Ns | Unit::S => " (time)",
        Unit::MbPerS => " (MB/s)",
        Unit::Pct => " (%)",
        Unit::Plain => "",
    };
    format!("{}{unit}", f.name.replace('_', " "))
}

/// A figure's value as a person reads it: sizes and times in the unit
/// that suits them, speeds to three figures.
fn value_text(f: &Figure) -> String {
    let n = match &f.value {
        Value::Word(w) => return outside::name(w, NAME_COLUMNS),
        Value::Count(n) => *n as f64,
        Value::Real(x) => *x,
    };
    match f.unit {
        Unit::Bytes => format_size_figure(n as u64),
        Unit::Ns => format_latency(n),
        Unit::S => format_latency(n * 1e9),
        Unit::MbPerS | Unit::Pct => three_figures(n),
        Unit::Plain => match f.value {
            Value::Count(c) => c.to_string(),
            _ => three_figures(n),
        },
    }
}

/// A run on many hosts: each test's figures across the ranks, then one
/// row per rank, then the stragglers by name.
fn rank_tables(out: &mut String, r: &RunResult, m: &MpiSection) {
    out.push_str(&format!(
        "\n**{}**: each test's median repetition across the ranks. Aggregate: total bytes over first start to last end; first done: when the first rank finished; sum of ranks: each rank's own rate, added.\n\n",
        escape(&ranks::shape_of(m))
    ));
    let tests = ranks::test_figures(r, m);
    let mut table = Table::new(&[
        "Test",
        "Aggregate MB/s",
        "First done MB/s",
        "Sum of ranks MB/s",
        "Start skew",
        "End skew",
    ]);
    let whole = m.whole.as_ref().filter(|_| tests.is_empty());
    let rows = tests
        .iter()
        .map(|(t, _, rep)| (format!("{} {}", t.name, t.workload.rw), *rep))
        .chain(whole.map(|w| (r.command(), w)));
    for (name, rep) in rows {
        table.add_row(vec![
            escape(&name),
            format_mbps(rep.aggregate_mb_per_s),
            format_mbps(rep.stonewall_mb_per_s),
            format_mbps(rep.sum_of_rank_mb_per_s),
            format_latency(rep.start_skew_ns() as f64),
            format_latency(rep.end_skew_ns() as f64),
        ]);
    }
    out.push_str(&table.markdown());
    let mut table = Table::new(&[
        "Rank",
        "Host",
        "MB/s",
        "p50",
        "p99",
        "Start skew",
        "End skew",
    ]);
    let mut rows: Vec<_> = m.ranks.iter().collect();
    rows.sort_by_key(|k| k.rank);
    for k in rows {
        let mut row = vec![k.rank.to_string(), k.host.clone()];
        row.extend(rank_figures(k));
        table.add_row(row);
    }
    out.push('\n');
    out.push_str(&table.markdown());
    let slow: Vec<String> = ranks::stragglers(m)
        .iter()
        .map(|k| {
            let host = outside::name(&k.host, NAME_COLUMNS);
            format!("rank {} on {}", k.rank, escape(&host))
        })
        .collect();
    if let (false, Some(median)) = (slow.is_empty(), ranks::median_rate(m)) {
        out.push_str(&format!(
            "\nStragglers (below {:.0}% of the median rank's {} MB/s): {}.\n",
            ranks::STRAGGLER_SHARE * 100.0,
            format_mbps(median),
            slow.join(", ")
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;

    #[test]
    fn snapshot_markdown_export() {
        let mut r = testdata::sd_card_run();
        r.tests
            .push(testdata::test("RND 4KiB Q1", "randread", &[4.1, 4.0, 4.2]));
        insta::assert_snapshot!(Markdown.render(&r));
    }

    #[test]
    fn snapshot_markdown_of_four_ranks() {
        let md = Markdown.render(&testdata::mpi_result());
        let rows = table_cells(&md);
        // The merged table (2 tests), the tests across ranks (2), the
        // ranks (4), each with its header and rule.
        assert_eq!(rows.len(), 3 + (2 + 2) + (2 + 4), "{md}");
        assert!(md.contains("| 3 | node-b |"), "{md}");
        assert!(
            md.contains("Stragglers (below 80% of the median rank's"),
            "{md}"
        );
        assert!(md.contains("rank 3 on node-b."), "{md}");
        insta::assert_snapshot!(md);
    }

    /// Lines of a Markdown export that are table rows, split into cells
    /// the way GitHub's renderer splits them (at a `|` not escaped).
    fn table_cells(md: &str) -> Vec<Vec<String>> {
        md.lines()
            .filter(|l| l.starts_with('|'))
            .map(|l| {
                let mut cells = vec![String::new()];
                let mut escaped = false;
                for c in l
                    .trim()
                    .trim_start_matches('|')
                    .trim_end_matches('|')
                    .chars()
                {
                    match (c, escaped) {
                        ('|', false) => cells.push(String::new()),
                        (c, _) => cells.last_mut().unwrap().push(c),
                    }
                    escaped = c == '\\' && !escaped;
                }
                cells
            })
            .collect()
    }

    #[test]
    fn hostile_names_stay_text_in_their_cell() {
        for hostile in [
            "<script>alert(1)</script>",
            "a|b",
            "x\ny",
            "x\r\ny",
            "=1+2",
            "@x",
            "\t-1",
            "a\\|b",
            "&lt;",
        ] {
            let mut id = testdata::sd_identity("SD08G", 3, "SD", "0x6051fd1c", "2008-12");
            id.label = hostile.to_string();
            let mut r = testdata::run(Some(id), hostile, &[20.1], &[12.2]);
            r.iocurve_version = hostile.to_string();
            r.tests[0].name = hostile.to_string();
            r.tests[1].name = hostile.to_string();
            let md = Markdown.render(&r);
            assert!(!md.contains('<'), "{hostile:?}: {md}");
            assert!(!md.contains("\r"), "{hostile:?}: {md}");
            let rows = table_cells(&md);
            assert_eq!(rows.len(), 3, "{hostile:?}: {md}");
            assert!(rows.iter().all(|r| r.len() == 9), "{hostile:?}: {md}");
            // The heading, the identity, the table, the two notes: a name
            // with a line break adds no line.
            assert_eq!(md.lines().count(), 12, "{hostile:?}: {md}");
        }
    }
}
