//! Runs side by side, in the style people post in forums, and what changed
//! between them, test by test, as text, Markdown or JSON.
//!
//! The table has one row per run: read and write MB/s of one kind of test,
//! the device's identity, notes. Which test is named above the table (the
//! first test of the first run, or `--test`), and every other run shows the
//! figures of its test *of the same kind* (see
//! [`matching`](crate::analysis::compare::matching): pattern, size, queue
//! depth, threads, mode, engine, method, company), or `-` when it has none:
//! a profile's `SEQ1M Q8T1` is never set beside a 4 KiB QD32 `run`. Every
//! figure is the median of the repetitions; one whose repetitions spread by
//! more than 10% carries its range too (`15 (12–17)`, see
//! [`cells`](super::cells)), so the table never claims more precision than
//! the device gave.
//!
//! Below the table come the verdicts [`crate::analysis::compare`] reached,
//! every later run against the first, and the tests it set apart with the
//! reason. Runs of different devices are compared too (a new card against
//! an old one is a fair question), and the heading says that the verdicts
//! are differences between devices, not changes of one.

mod verdicts;

pub use verdicts::{condition_text, regression_line, statement, undecided_line};

use super::cells::{RANGE_SPREAD, figure_text, identity_text};
use super::table::{self, Align, Table};
use crate::analysis::compare::matching;
use crate::analysis::compare::{compare, repetitions};
use crate::result::compare::{Comparison, Direction, Entry, TestKey};
use crate::result::{RunResult, TestResult};
use crate::units::format_mbps;

/// How to lay the table out.
#[derive(Debug, Clone)]
pub struct Options {
    /// The name of the first run's test the table shows.
    pub test: Option<String>,
    /// Noise threshold as a share (0.05).
    pub threshold: f64,
    pub markdown: bool,
    /// The device's earlier runs, none of those compared: their spread
    /// sets the run-to-run noise of the verdicts (empty: a floor).
    pub history: Vec<RunResult>,
}

/// The kind of test the table shows: the first run's test named `name`
/// (any direction), else its first test.
fn table_key(entries: &[Entry], name: Option<&str>) -> Result<TestKey, String> {
    let first = entries.first().ok_or("no runs to compare")?;
    let tests = matching::tests_of(&first.result)
        .map_err(|why| format!("{} has nothing to compare: {}", first.source, why.text()))?;
    let chosen = match name {
        Some(n) => tests.iter().find(|k| k.test.name == n).ok_or_else(|| {
            let names: Vec<&str> = tests.iter().map(|k| k.test.name.as_str()).collect();
            format!(
                "{} has no test named {n:?} (its tests: {})",
                first.source,
                names.join(", ")
            )
        })?,
        None => &tests[0],
    };
    Ok(chosen.key.clone())
}

/// `key` turned to `direction`, when it is a read or a write.
fn with_direction(key: &TestKey, direction: Direction) -> Option<TestKey> {
    if matches!(key.direction, Direction::Mixed { .. }) {
        return None;
    }
    Some(TestKey {
        direction,
        ..key.clone()
    })
}

/// The test of `r` whose key is `key`, else one that differs from it in
/// engine alone (an imported fio job beside an iocurve run; the row's
/// notes name its engine).
fn find<'a>(r: &'a RunResult, key: Option<&TestKey>) -> Option<&'a TestResult> {
    let key = key?;
    let tests = matching::tests_of(r).ok()?;
    tests
        .iter()
        .find(|k| &k.key == key)
        .or_else(|| {
            tests
                .iter()
                .find(|k| matching::alike_but_engine(&k.key, key))
        })
        .map(|k| k.test)
}

/// "engine fio:io_uring" when `r` ran the table's kind of test with
/// another engine than the table's heading names.
fn other_engine(r: &RunResult, key: &TestKey) -> Option<String> {
    let tests = matching::tests_of(r).ok()?;
    if tests.iter().any(|k| &k.key == key) {
        return None;
    }
    let mut alike = [Direction::Read, Direction::Write]
        .into_iter()
        .filter_map(|d| with_direction(key, d))
        .chain(std::iter::once(key.clone()));
    alike.find_map(|want| {
        tests
            .iter()
            .find(|k| matching::alike_but_engine(&k.key, &want))
            .map(|k| format!("engine {}", k.key.engine))
    })
}

/// The read and the write test of `r` like `key` (a mixed test stands in
/// the read column: it is the one figure the run has of that kind).
fn read_write<'a>(
    r: &'a RunResult,
    key: &TestKey,
) -> (Option<&'a TestResult>, Option<&'a TestResult>) {
    if matches!(key.direction, Direction::Mixed { .. }) {
        return (find(r, Some(key)), None);
    }
    (
        find(r, with_direction(key, Direction::Read).as_ref()),
        find(r, with_direction(key, Direction::Write).as_ref()),
    )
}

/// The table's heading: which kind of test its figures are, naming only
/// the directions some run has (a read-only pair is not "read/write").
fn table_heading(key: &TestKey, entries: &[Entry]) -> String {
    let has = |d: Direction| {
        entries
            .iter()
            .any(|e| find(&e.result, with_direction(key, d).as_ref()).is_some())
    };
    let shown = match key.direction {
        Direction::Mixed { .. } => matching::describe(key),
        _ => {
            let (read, write) = (has(Direction::Read), has(Direction::Write));
            let one = |d: Direction| {
                matching::describe(&TestKey {
                    direction: d,
                    ..key.clone()
                })
            };
            match (read, write) {
                (true, false) => one(Direction::Read),
                (false, true) => one(Direction::Write),
                _ => one(Direction::Read)
                    .replacen(" read ", " read/write ", 1)
                    .replacen(" randread ", " randread/randwrite ", 1),
            }
        }
    };
    // The first run's name of the test (a profile row's `SEQ1M Q8T1`),
    // when it says something the description does not.
    let named = entries
        .first()
        .and_then(|e| find(&e.result, Some(key)))
        .map(|t| table::cut(&t.name, crate::units::escape::NAME_COLUMNS))
        .filter(|name| {
            let bare = |t: &str| t.replace(' ', "");
            !bare(&shown).starts_with(&bare(name))
        });
    let shown = table::cut(&shown, crate::units::escape::NAME_COLUMNS);
    let shown = match named {
        Some(name) => format!("{name} ({shown})"),
        None => shown,
    };
    format!(
        "test: {shown}, engine {}\n",
        table::cut(&key.engine.to_string(), crate::units::escape::NAME_COLUMNS)
    )
}

/// Remarks a reader must see beside the figures.
fn notes(r: &RunResult, read: Option<&TestResult>) -> String {
    let mut notes = Vec::new();
    if matches!(r.payload, crate::result::Payload::Imported { .. }) {
        notes.push("fio import".to_string());
    }
    if r.interrupted {
        notes.push("interrupted".into());
    }
    if r.error.is_some() {
        notes.push("ended by an I/O error".into());
    }
    let link = r
        .device_identity
        .as_ref()
        .and_then(|i| i.device.interface.as_ref());
    if let (Some(l), Some(t)) = (link, read) {
        let cap = l.practical_limit_mb_s;
        if let (Some(cap), Some(s)) = (cap, t.mb_per_s) {
            if s.median >= 0.9 * cap {
                notes.push(format!(
                    "at the {} ceiling (~{} MB/s)",
                    l.description,
                    format_mbps(cap)
                ));
            }
        }
    }
    let cached = r.tests.iter().flat_map(|t| &t.repetitions).any(|m| {
        m.device_io
            .as_ref()
            .is_some_and(|d| d.cache_served_fraction > 0.1)
    });
    if cached {
        notes.push("partly served by a cache".into());
    }
    if let Some(m) = &r.mpi {
        notes.push(format!("merged: {}", crate::analysis::ranks::shape_of(m)));
    }
    notes.join("; ")
}

/// The cells of one row.
fn row(e: &Entry, key: &TestKey) -> Vec<String> {
    let r = &e.result;
    let (read, write) = read_write(r, key);
    let label = r
        .device_identity
        .as_ref()
        .map_or_else(|| r.target.path.clone(), |i| i.label.clone());
    let date = r.started_at.get(..10).unwrap_or(&r.started_at).to_string();
    let mut notes = notes(r, read);
    if let Some(engine) = other_engine(r, key) {
        notes = if notes.is_empty() {
            engine
        } else {
            format!("{engine}; {notes}")
        };
    }
    if read.is_none() && write.is_none() {
        let none = "no test of this kind".to_string();
        notes = if notes.is_empty() {
            none
        } else {
            format!("{none}; {notes}")
        };
    }
    // Escaped and cut here, not only by the table: the identity list under
    // a narrow table prints the label and identity itself.
    let shown = |text: &str| table::cut(text, crate::units::escape::NAME_COLUMNS);
    vec![
        shown(&label),
        format!("{} {}", shown(&e.source), shown(&date)),
        read.map_or("-".into(), |t| figure_text(&repetitions(t))),
        write.map_or("-".into(), |t| figure_text(&repetitions(t))),
        shown(&identity_text(r.device_identity.as_ref())),
        notes,
    ]
}

const HEADER: [&str; 6] = [
    "Device",
    "Run",
    "Read MB/s",
    "Write MB/s",
    "Identity",
    "Notes",
];

/// Column of the identity in [`HEADER`].
const IDENTITY: usize = 4;

/// The runs' rows under `header`, every column left-aligned (names, dates
/// and figures with their ranges read best from the left).
fn table_of(header: &[&str], rows: &[Vec<String>]) -> Table {
    let mut t = Table::new(header);
    for c in 1..header.len() {
        t.align(c, Align::Left);
    }
    for r in rows {
        t.add_row(r.clone());
    }
    t
}

/// The table as text: with the identity in its column when that fits the
/// terminal width, else without it and each device's identity listed once
/// under the table (long card identities would wrap every row).
fn text_table(rows: &[Vec<String>]) -> String {
    let whole = table_of(&HEADER, rows);
    // As laid out for its cells, not narrowed: does the identity fit?
    let natural = whole.lines(usize::MAX);
    if natural
        .iter()
        .all(|l| table::columns(l) <= super::width::current())
    {
        return format!("{whole}\n");
    }
    let mut header = HEADER.to_vec();
    header.remove(IDENTITY);
    let without: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.remove(IDENTITY);
            r
        })
        .collect();
    let mut out = format!("{}\n", table_of(&header, &without));
    let mut listed: Vec<(&str, &str)> = Vec::new();
    for r in rows {
        let (device, identity) = (r[0].as_str(), r[IDENTITY].as_str());
        if !identity.is_empty() && !listed.contains(&(device, identity)) {
            listed.push((device, identity));
        }
    }
    if listed.is_empty() {
        return out;
    }
    out.push_str("identity\n");
    for (device, identity) in listed {
        out.push_str(&format!("  {device}\n    {identity}\n"));
    }
    out
}

/// The whole comparison as text or Markdown: table, then verdicts and the
/// tests set apart. `Err` when nothing is alike (see [`compare`]).
pub fn render(entries: &[Entry], opts: &Options) -> Result<String, String> {
    let comparison = compare(entries, opts.threshold, &opts.history)?;
    if comparison.changes.is_empty() && comparison.outcomes.len() == entries.len() {
        return Ok(outcomes_only(&comparison, opts.markdown));
    }
    let key = table_key(entries, opts.test.as_deref())?;
    let rows: Vec<Vec<String>> = entries.iter().map(|e| row(e, &key)).collect();
    let heading = table_heading(&key, entries);
    let mut out = match opts.markdown {
        true => format!("{}\n\n", super::markdown_escape::escape(heading.trim_end())),
        false => heading,
    };
    out.push_str(&if opts.markdown {
        table_of(&HEADER, &rows).markdown()
    } else {
        text_table(&rows)
    });
    if opts.markdown {
        // Else Markdown reads the next line as one more row of the table.
        out.push('\n');
    }
    out.push_str(&format!(
        "figures: median of the repetitions, with their range (min–max) where they spread by more than {:.0}%\n",
        RANGE_SPREAD * 100.0
    ));
    for caveat in &comparison.caveats {
        // A caveat may name hosts: cut once, whole.
        let caveat = table::cut(caveat, 3 * crate::units::escape::NAME_COLUMNS);
        let caveat = match opts.markdown {
            true => super::markdown_escape::escape(&caveat),
            false => caveat,
        };
        out.push_str(&format!("caveat: {caveat}\n"));
    }
    out.push('\n');
    out.push_str(&verdicts::target_lines(&comparison, opts.markdown));
    if !comparison.changes.is_empty() {
        out.push('\n');
        out.push_str(&verdicts::verdict_lines(&comparison, opts.markdown));
    }
    if !comparison.not_compared.is_empty() {
        out.push('\n');
        out.push_str(&verdicts::not_compared_lines(&comparison, opts.markdown));
    }
    out.push_str(&outcome_lines(&comparison, opts.markdown));
    // The last net: whatever a line above quoted from outside reaches the
    // terminal escaped (see `crate::units::escape`).
    Ok(crate::units::escape::text(&out).into_owned())
}

/// Runs with no repeated tests (sustain, surface, flash, ...): which run
/// measured what, then each run's outcome; no verdict of change.
fn outcomes_only(c: &Comparison, markdown: bool) -> String {
    let mut out =
        String::from("runs without repeated tests: outcomes side by side, no test of change\n\n");
    out.push_str(&verdicts::target_lines(c, markdown));
    out.push_str(&outcome_lines(c, markdown));
    crate::units::escape::text(&out).into_owned()
}

/// Each run's own outcome (see [`super::outcome::headline`]), one item a
/// run; nothing when no run has one.
fn outcome_lines(c: &Comparison, markdown: bool) -> String {
    let lines: Vec<String> = c
        .outcomes
        .iter()
        .filter_map(|o| {
            let headline = super::outcome::headline_of(&o.result)?;
            let line = format!("{} ({}): {headline}", o.run, o.result.command());
            Some(match markdown {
                true => format!("- {}\n", super::markdown_escape::escape(&line)),
                false => format!("  {line}\n"),
            })
        })
        .collect();
    match lines.is_empty() {
        true => String::new(),
        false => format!("\noutcomes:\n{}", lines.concat()),
    }
}

/// The comparison as JSON (the table's figures are in the runs).
pub fn render_json(entries: &[Entry], opts: &Options) -> Result<String, String> {
    let comparison = compare(entries, opts.threshold, &opts.history)?;
    serde_json::to_string_pretty(&comparison).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests;
