//! Runs side by side, in the style people post in forums, and what changed
//! between them, test by test.
//!
//! The table has one row per run: read and write MB/s of one kind of test,
//! the device's identity, notes. Which test is named above the table (the
//! first test of the first run, or `--test`), and every other run shows the
//! figures of its test *of the same kind* (see [`matching`]: pattern, size,
//! queue depth, threads, mode, engine, method, company), or `-` when it has
//! none: a profile's `SEQ1M Q8T1` is never set beside a 4 KiB QD32 `run`.
//! Every figure is the median of the repetitions; one whose repetitions
//! spread by more than 10% carries its range too (`15 (12–17)`), so the
//! table never claims more precision than the device gave.
//!
//! Below the table, every later run is set against the first test by test:
//! each pair of like tests gets a verdict from a bootstrap interval on the
//! ratio of mean MB/s (after / before; see [`crate::stats::bootstrap`]), so
//! a percentage change is ratio − 1 and cannot pass −100%, and the verdict
//! names the repetitions it rests on. Tests without a like partner are
//! listed apart with the reason and the nearest test the other run has.
//! When no later run shares a single kind of test with the first, there is
//! nothing to compare, and the comparison is refused with that reason
//! rather than printed as a table of unlike figures.
//!
//! Runs of different devices are compared too (a new card against an old
//! one is a fair question), and the heading says that the verdicts are
//! differences between devices, not changes of one.

pub mod matching;

use crate::probe::DeviceIdentity;
use crate::result::{RunResult, TestResult};
use crate::stats::Spread;
use crate::stats::bootstrap::{self, Change, Interval, NoVerdict, Verdict};
use matching::{Direction, Keyed, TestKey};
use serde::Serialize;

/// Above this relative spread ((max - min) / median) a figure is a range.
pub const RANGE_SPREAD: f64 = 0.10;

/// One run to compare, with the name it was asked for by.
#[derive(Debug, Clone)]
pub struct Entry {
    /// `run 12`, or a file name.
    pub source: String,
    pub result: RunResult,
}

/// How to lay the table out.
#[derive(Debug, Clone)]
pub struct Options {
    /// The name of the first run's test the table shows.
    pub test: Option<String>,
    /// Noise threshold as a share (0.05).
    pub threshold: f64,
    pub markdown: bool,
}

/// MB/s as every table writes it: three significant figures
/// ([`crate::units::format_mbps`]).
pub fn format_mb(v: f64) -> String {
    crate::units::format_mbps(v)
}

/// The range rule: the median, with `(min–max)` after it when the
/// repetitions spread by more than 10% of it; `-` without figures.
pub fn figure_text(reps: &[f64]) -> String {
    spread_text(reps, format_mb)
}

/// [`figure_text`] with any formatter (MB/s, IOPS).
pub fn spread_text(reps: &[f64], format: impl Fn(f64) -> String) -> String {
    let Some(s) = Spread::of(reps) else {
        return "-".into();
    };
    if s.median > 0.0 && (s.max - s.min) / s.median > RANGE_SPREAD {
        format!("{} ({}–{})", format(s.median), format(s.min), format(s.max))
    } else {
        format(s.median)
    }
}

/// MB/s of the complete repetitions of a test.
pub fn repetitions(t: &TestResult) -> Vec<f64> {
    t.repetitions
        .iter()
        .filter(|m| !m.interrupted && m.ops > 0)
        .map(|m| m.mb_per_s)
        .collect()
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

/// The test of `r` whose key is `key`.
fn find<'a>(r: &'a RunResult, key: Option<&TestKey>) -> Option<&'a TestResult> {
    let key = key?;
    matching::tests_of(r)
        .ok()?
        .into_iter()
        .find(|k| &k.key == key)
        .map(|k| k.test)
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

/// The table's heading: which kind of test its figures are.
fn table_heading(key: &TestKey) -> String {
    let shown = match key.direction {
        Direction::Mixed { .. } => matching::describe(key),
        _ => matching::describe(&TestKey {
            direction: Direction::Read,
            ..key.clone()
        })
        .replacen(" read ", " read/write ", 1)
        .replacen(" randread ", " randread/randwrite ", 1),
    };
    format!("test: {shown}, engine {}\n", key.engine)
}

/// `Mfg ID: 0x03 (SanDisk) OEM ID: SD Name: SD08G Rev: 8.0 Date: 2008-12
/// SN: 0x6051fd1c` for a card; vendor ids, model and serial otherwise.
pub fn identity_text(id: Option<&DeviceIdentity>) -> String {
    let Some(id) = id else {
        return String::new();
    };
    let d = &id.device;
    let mut parts: Vec<String> = Vec::new();
    let mut put = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            parts.push(format!("{k}: {v}"));
        }
    };
    if let Some(m) = &d.mmc {
        let mfg = m.manfid.map(|id| match &m.manufacturer {
            Some(n) => format!("0x{id:02x} ({n})"),
            None => format!("0x{id:02x}"),
        });
        put("Mfg ID", mfg);
        put("OEM ID", m.oem.clone().or(m.oemid.clone()));
        put("Name", m.name.clone());
        put("Rev", m.revision.clone());
        put("Date", m.date.clone());
        put("SN", m.serial.clone());
    } else if let Some(n) = &d.nvme {
        put("Model", n.model.clone());
        put("FW", n.firmware.clone());
        put("SN", n.serial.clone());
    } else {
        if let Some(u) = &d.usb {
            put(
                "USB ID",
                u.vendor_id
                    .clone()
                    .zip(u.product_id.clone())
                    .map(|(v, p)| format!("{v}:{p}")),
            );
        }
        let b = d.block.as_ref();
        put("Model", b.and_then(|b| b.model.clone()));
        put("Rev", b.and_then(|b| b.revision.clone()));
        put(
            "SN",
            b.and_then(|b| b.serial.clone())
                .or_else(|| d.usb.as_ref().and_then(|u| u.serial.clone())),
        );
    }
    parts.join(" ")
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
                    format_mb(cap)
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
    if read.is_none() && write.is_none() {
        let none = "no test of this kind".to_string();
        notes = if notes.is_empty() {
            none
        } else {
            format!("{none}; {notes}")
        };
    }
    vec![
        label,
        format!("{} {}", e.source, date),
        read.map_or("-".into(), |t| figure_text(&repetitions(t))),
        write.map_or("-".into(), |t| figure_text(&repetitions(t))),
        identity_text(r.device_identity.as_ref()),
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

/// The table as text: with the identity in its column when that fits the
/// terminal width, else without it and each device's identity listed once
/// under the table (long card identities would wrap every row).
fn text_table(rows: &[Vec<String>]) -> String {
    let whole = aligned(rows);
    if whole
        .lines()
        .all(|l| super::table::columns(l) <= super::table::WIDTH)
    {
        return whole;
    }
    let without: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.remove(IDENTITY);
            r
        })
        .collect();
    let mut out = aligned(&without);
    let mut listed: Vec<(&str, &str)> = Vec::new();
    for r in &rows[1..] {
        let (device, identity) = (r[0].as_str(), r[IDENTITY].as_str());
        if !identity.is_empty() && !listed.contains(&(device, identity)) {
            listed.push((device, identity));
        }
    }
    out.push_str("identity\n");
    for (device, identity) in listed {
        out.push_str(&format!("  {device}\n    {identity}\n"));
    }
    out
}

/// Pads cells into aligned columns (the last column unpadded), with a rule
/// under the header as every text table has.
fn aligned(rows: &[Vec<String>]) -> String {
    let cols = rows[0].len();
    let widths: Vec<usize> = (0..cols)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in rows {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, v)| {
                if c + 1 == cols {
                    v.clone()
                } else {
                    format!("{v:<w$}", w = widths[c])
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    let rule = "-".repeat(out.lines().map(super::table::columns).max().unwrap_or(0));
    let header_end = out.find('\n').map_or(out.len(), |i| i + 1);
    out.insert_str(header_end, &format!("{rule}\n"));
    out
}

/// A Markdown table; every cell is escaped (see
/// [`escape`](super::markdown::escape)).
pub fn markdown_table(rows: &[Vec<String>]) -> String {
    let line = |r: &[String]| {
        format!(
            "| {} |\n",
            r.iter()
                .map(|c| super::markdown::escape(c))
                .collect::<Vec<_>>()
                .join(" | ")
        )
    };
    let mut out = line(&rows[0]);
    out.push_str(&format!("|{}\n", "---|".repeat(rows[0].len())));
    for r in &rows[1..] {
        out.push_str(&line(r));
    }
    out
}

/// One pair of like tests and what changed.
#[derive(Debug, Clone, Serialize)]
pub struct TestChange {
    /// The later run.
    pub run: String,
    /// What the tests are, e.g. `4 KiB randread QD32`.
    pub test: String,
    pub key: TestKey,
    /// MB/s of the complete repetitions of each side.
    pub before_mb_s: Vec<f64>,
    pub after_mb_s: Vec<f64>,
    /// The verdict, or why there is none.
    #[serde(serialize_with = "verdict_json")]
    pub verdict: Result<Verdict, NoVerdict>,
    /// The verdict's ratio − 1 (−0.2: 20% slower), never at or below −1.
    pub percent_change: Option<Interval>,
}

/// `{"verdict": ...}` or `{"no_verdict": ...}` rather than serde's
/// `Ok`/`Err`.
fn verdict_json<S: serde::Serializer>(
    v: &Result<Verdict, NoVerdict>,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(1))?;
    match v {
        Ok(v) => map.serialize_entry("verdict", v)?,
        Err(why) => map.serialize_entry("no_verdict", why)?,
    }
    map.end()
}

/// A test (or a run) set apart, and why.
#[derive(Debug, Clone, Serialize)]
pub struct NotCompared {
    pub run: String,
    /// The test, when one test is meant (`None`: the whole run).
    pub test: Option<String>,
    pub reason: String,
}

/// Every later run against the first, test by test.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub baseline: String,
    /// True when every run is of one device (its key).
    pub same_device: bool,
    /// Noise threshold, as a share.
    pub threshold: f64,
    pub level: f64,
    pub changes: Vec<TestChange>,
    pub not_compared: Vec<NotCompared>,
}

/// The key shared by every entry, when there is one.
fn same_device(entries: &[Entry]) -> Option<&str> {
    let key = entries
        .first()?
        .result
        .device_identity
        .as_ref()?
        .key
        .as_str();
    entries
        .iter()
        .all(|e| {
            e.result
                .device_identity
                .as_ref()
                .is_some_and(|i| i.key == key)
        })
        .then_some(key)
}

/// The verdict on one pair of like tests.
fn change(run: &str, before: &Keyed<'_>, after: &Keyed<'_>, threshold: f64) -> TestChange {
    let (b, a) = (repetitions(before.test), repetitions(after.test));
    let verdict = bootstrap::judge(&b, &a, threshold);
    TestChange {
        run: run.to_string(),
        test: matching::describe(&before.key),
        key: before.key.clone(),
        percent_change: verdict.as_ref().ok().map(Verdict::percent_change),
        verdict,
        before_mb_s: b,
        after_mb_s: a,
    }
}

/// "run 1 has no such test (nearest: 1 MiB read QD8, which differs in
/// size 1 MiB vs 4 KiB)".
fn unmatched_reason(t: &Keyed<'_>, base: &Entry, base_tests: &[Keyed<'_>]) -> String {
    let mut reason = format!("{} has no such test", base.source);
    if let Some((near, diff)) = matching::nearest(&t.key, base_tests) {
        reason.push_str(&format!(
            " (nearest: {}, which differs in {})",
            matching::describe(&near.key),
            diff.join(", ")
        ));
    }
    reason
}

/// One later run set against the base's tests.
fn against_base(
    e: &Entry,
    base: &Entry,
    base_tests: &[Keyed<'_>],
    threshold: f64,
    out: &mut Comparison,
) {
    let tests = match matching::tests_of(&e.result) {
        Ok(t) => t,
        Err(why) => {
            out.not_compared.push(NotCompared {
                run: e.source.clone(),
                test: None,
                reason: why.text(),
            });
            return;
        }
    };
    let pairing = matching::pair(base_tests, &tests);
    for (b, a) in &pairing.pairs {
        out.changes.push(change(&e.source, b, a, threshold));
    }
    for t in &pairing.other_only {
        out.not_compared.push(NotCompared {
            run: e.source.clone(),
            test: Some(matching::describe(&t.key)),
            reason: unmatched_reason(t, base, base_tests),
        });
    }
    if !pairing.base_only.is_empty() {
        let missing: Vec<String> = pairing
            .base_only
            .iter()
            .map(|k| matching::describe(&k.key))
            .collect();
        out.not_compared.push(NotCompared {
            run: base.source.clone(),
            test: Some(missing.join("; ")),
            reason: format!("{} has no such test", e.source),
        });
    }
}

/// Every later run against the first; `Err` with the reason when there
/// are two runs or more and not one pair of like tests among them.
pub fn compare(entries: &[Entry], threshold: f64) -> Result<Comparison, String> {
    let base = entries.first().ok_or("no runs to compare")?;
    let base_tests = matching::tests_of(&base.result)
        .map_err(|why| format!("{} has nothing to compare: {}", base.source, why.text()))?;
    let mut out = Comparison {
        baseline: base.source.clone(),
        same_device: same_device(entries).is_some(),
        threshold,
        level: bootstrap::LEVEL,
        changes: Vec::new(),
        not_compared: Vec::new(),
    };
    for e in &entries[1..] {
        against_base(e, base, &base_tests, threshold, &mut out);
    }
    if entries.len() > 1 && out.changes.is_empty() {
        let reasons: Vec<String> = out.not_compared.iter().map(not_compared_text).collect();
        return Err(format!(
            "nothing to compare: no later run has a test like one of {}'s\n{}",
            base.source,
            reasons.join("\n")
        ));
    }
    Ok(out)
}

/// The changes that break a `--fail-above` gate: judged slower (beyond the
/// noise threshold, at the verdict's confidence) with an estimated change
/// below −`fail_above` (a share: 0.05 for 5%).
pub fn regressions(c: &Comparison, fail_above: f64) -> Vec<&TestChange> {
    c.changes
        .iter()
        .filter(|ch| match &ch.verdict {
            Ok(v) => v.change == Change::Slower && v.percent_change().estimate < -fail_above,
            Err(_) => false,
        })
        .collect()
}

/// One line per regression: which run, which test, by how much.
pub fn regression_line(c: &Comparison, ch: &TestChange, fail_above: f64) -> String {
    let p = ch.percent_change.as_ref();
    let pct = |x: f64| format!("{:.1}%", x * 100.0);
    format!(
        "{} is slower than {} by more than {}: {} {} ({} to {})",
        ch.run,
        c.baseline,
        pct(fail_above),
        ch.test,
        p.map_or("?".into(), |p| pct(p.estimate)),
        p.map_or("?".into(), |p| pct(p.low)),
        p.map_or("?".into(), |p| pct(p.high)),
    )
}

/// The whole comparison as text or Markdown: table, then verdicts and the
/// tests set apart. `Err` when nothing is alike (see [`compare`]).
pub fn render(entries: &[Entry], opts: &Options) -> Result<String, String> {
    let key = table_key(entries, opts.test.as_deref())?;
    let comparison = compare(entries, opts.threshold)?;
    let mut rows = vec![HEADER.iter().map(|h| h.to_string()).collect::<Vec<_>>()];
    rows.extend(entries.iter().map(|e| row(e, &key)));
    let mut out = match opts.markdown {
        true => format!(
            "{}\n\n",
            super::markdown::escape(table_heading(&key).trim_end())
        ),
        false => table_heading(&key),
    };
    out.push_str(&if opts.markdown {
        markdown_table(&rows)
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
    if !comparison.changes.is_empty() {
        out.push('\n');
        out.push_str(&verdict_lines(&comparison, opts.markdown));
    }
    if !comparison.not_compared.is_empty() {
        out.push('\n');
        out.push_str(&not_compared_lines(&comparison, opts.markdown));
    }
    Ok(out)
}

/// The comparison as JSON (the table's figures are in the runs).
pub fn render_json(entries: &[Entry], opts: &Options) -> Result<String, String> {
    let comparison = compare(entries, opts.threshold)?;
    serde_json::to_string_pretty(&comparison).map_err(|e| e.to_string())
}

/// A list item: indented text, or a Markdown bullet.
fn item(markdown: bool, text: &str) -> String {
    match markdown {
        true => format!("- {}\n", super::markdown::escape(text)),
        false => format!("  {text}\n"),
    }
}

fn verdict_lines(c: &Comparison, markdown: bool) -> String {
    let whose = match c.same_device {
        true => "same device",
        false => "different devices, so a difference between devices, not a change of one",
    };
    let mut out = format!(
        "{whose}: each run against {}, test by test ({:.0}% bootstrap interval of the ratio of mean MB/s, after/before; changes within ±{:.0}% are noise)\n",
        match markdown {
            true => super::markdown::escape(&c.baseline),
            false => c.baseline.clone(),
        },
        c.level * 100.0,
        c.threshold * 100.0
    );
    for ch in &c.changes {
        out.push_str(&item(
            markdown,
            &format!("{}, {}: {}", ch.run, ch.test, verdict_text(&ch.verdict)),
        ));
    }
    out
}

fn not_compared_text(n: &NotCompared) -> String {
    match &n.test {
        Some(t) => format!("{}'s {t}: {}", n.run, n.reason),
        None => format!("{}: {}", n.run, n.reason),
    }
}

fn not_compared_lines(c: &Comparison, markdown: bool) -> String {
    let mut out = "not compared (no like test on the other side):\n".to_string();
    for n in &c.not_compared {
        out.push_str(&item(markdown, &not_compared_text(n)));
    }
    out
}

/// `n` repetitions, spelt for a reader.
fn repetitions_word(n: usize) -> &'static str {
    if n == 1 { "repetition" } else { "repetitions" }
}

/// "no change" when the whole interval lies within the noise threshold;
/// "no clear change" when it reaches past the threshold on one side but
/// not wholly (the data neither show a change nor rule one out).
fn no_change_words(v: &Verdict) -> &'static str {
    let within = |r: f64| (r - 1.0).abs() <= v.threshold;
    match within(v.ratio.low) && within(v.ratio.high) {
        true => "no change",
        false => "no clear change",
    }
}

/// "slower by 20% (95% CI 15%–25%, 5 vs 5 repetitions)", or why there is
/// no verdict.
pub fn verdict_text(v: &Result<Verdict, NoVerdict>) -> String {
    let v = match v {
        Ok(v) => v,
        Err(NoVerdict::TooFewRepetitions { before, after }) => {
            return format!(
                "no verdict: {before} vs {after} {}, and an interval needs at least {} on each side",
                repetitions_word(*after),
                bootstrap::MIN_REPETITIONS
            );
        }
        Err(NoVerdict::NotPositive) => {
            return "no verdict: a repetition moved no data".into();
        }
    };
    let pc = v.percent_change();
    let level = pc.level * 100.0;
    let reps = format!(
        "{} vs {} {}",
        v.before_repetitions,
        v.after_repetitions,
        repetitions_word(v.after_repetitions)
    );
    let signed = |x: f64| format!("{:+.0}%", x * 100.0);
    match v.change {
        bootstrap::Change::NoChange => format!(
            "{} ({}, {level:.0}% CI {} to {}, {reps})",
            no_change_words(v),
            signed(pc.estimate),
            signed(pc.low),
            signed(pc.high)
        ),
        c => {
            let (a, b) = (pc.low.abs() * 100.0, pc.high.abs() * 100.0);
            format!(
                "{} by {:.0}% ({level:.0}% CI {:.0}%–{:.0}%, {reps})",
                c.word(),
                pc.estimate.abs() * 100.0,
                a.min(b),
                a.max(b)
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;

    #[test]
    fn only_a_slowdown_judged_beyond_the_gate_is_a_regression() {
        let entries = entries();
        let c = compare(&entries[..2], 0.05).unwrap();
        let changes: Vec<f64> = c
            .changes
            .iter()
            .filter_map(|ch| ch.percent_change.as_ref().map(|p| p.estimate))
            .collect();
        let worst = changes.iter().copied().fold(0.0, f64::min);
        let slower = c.changes.iter().any(|ch| {
            ch.verdict
                .as_ref()
                .is_ok_and(|v| v.change == Change::Slower)
        });
        // Gates just inside and just outside the worst judged slowdown.
        let inside = regressions(&c, (-worst - 0.001).max(0.0));
        let outside = regressions(&c, -worst + 0.001);
        assert_eq!(inside.is_empty(), !slower, "{changes:?}");
        assert!(outside.is_empty(), "{changes:?}");
        for r in inside {
            let line = regression_line(&c, r, 0.05);
            assert!(
                line.contains("is slower than") && line.contains('%'),
                "{line}"
            );
        }
    }

    #[test]
    fn range_rule() {
        assert_eq!(figure_text(&[20.1, 19.8, 20.3]), "20.1");
        assert_eq!(figure_text(&[12.0, 17.0, 15.0]), "15.0 (12.0–17.0)");
        assert_eq!(figure_text(&[0.8, 1.4, 1.1]), "1.10 (0.800–1.40)");
        assert_eq!(figure_text(&[7.2]), "7.20");
        assert_eq!(figure_text(&[0.02, 0.021]), "0.0205");
        assert_eq!(figure_text(&[]), "-");
        // 10% exactly is still tight; just above is a range.
        assert_eq!(figure_text(&[100.0, 110.0]), "105");
        assert_eq!(figure_text(&[100.0, 111.0]), "106 (100–111)");
    }

    fn entries() -> Vec<Entry> {
        let a = testdata::sd_identity("SD02G", 3, "SD", "0x2083a7c8", "2007-09");
        let b = testdata::sd_identity("SD08G", 3, "SD", "0x6051fd1c", "2008-12");
        let c = testdata::sd_identity("00000", 0x1b, "SM", "0x2b060bfe", "2010-05");
        vec![
            Entry {
                source: "run 1".into(),
                result: testdata::run(
                    Some(a),
                    "2024-03-01T10:00:00Z",
                    &[20.1, 19.9, 20.2],
                    &[18.0, 17.8, 18.1],
                ),
            },
            Entry {
                source: "run 2".into(),
                result: testdata::run(
                    Some(b),
                    "2024-03-01T11:00:00Z",
                    &[20.0, 20.3, 19.7],
                    &[12.2, 17.1, 15.0],
                ),
            },
            Entry {
                source: "run 3".into(),
                result: testdata::run(
                    Some(c),
                    "2024-03-02T09:00:00Z",
                    &[11.2, 15.3, 13.9],
                    &[6.0, 6.1, 5.9],
                ),
            },
        ]
    }

    #[test]
    fn snapshot_side_by_side() {
        let opts = Options {
            test: None,
            threshold: 0.05,
            markdown: false,
        };
        insta::assert_snapshot!(render(&entries(), &opts).unwrap());
    }

    #[test]
    fn snapshot_markdown() {
        let opts = Options {
            test: None,
            threshold: 0.05,
            markdown: true,
        };
        insta::assert_snapshot!(render(&entries(), &opts).unwrap());
    }

    #[test]
    fn snapshot_same_device_verdicts() {
        let card = || testdata::sd_identity("SD08G", 3, "SD", "0x6051fd1c", "2008-12");
        let runs = vec![
            Entry {
                source: "run 4".into(),
                result: testdata::run(
                    Some(card()),
                    "2024-01-10T08:00:00Z",
                    &[20.0, 20.4, 19.8],
                    &[17.1, 16.8, 17.3],
                ),
            },
            Entry {
                source: "run 9".into(),
                result: testdata::run(
                    Some(card()),
                    "2025-01-12T08:00:00Z",
                    &[20.2, 19.6, 20.1],
                    &[13.6, 13.9, 13.4],
                ),
            },
        ];
        let opts = Options {
            test: None,
            threshold: 0.05,
            markdown: false,
        };
        let text = render(&runs, &opts).unwrap();
        assert!(text.contains("run 9, 1 MiB read QD1: no change"), "{text}");
        assert!(
            text.contains(
                "run 9, 1 MiB write QD1: slower by 20% (95% CI 18%–22%, 3 vs 3 repetitions)"
            ),
            "{text}"
        );
        insta::assert_snapshot!(text);
    }

    /// A `run` of 4 KiB QD32 random reads, with these repetitions.
    fn random_run(reps: &[f64]) -> RunResult {
        let mut r = testdata::as_run(testdata::run(None, "2024-02-01T00:00:00Z", &[], &[]));
        let mut t = testdata::test("4KiB", "randread", reps);
        t.workload.queue_depth = 32;
        r.tests = vec![t];
        r
    }

    fn entry(source: &str, result: RunResult) -> Entry {
        Entry {
            source: source.into(),
            result,
        }
    }

    fn opts() -> Options {
        Options {
            test: None,
            threshold: 0.05,
            markdown: false,
        }
    }

    #[test]
    fn a_profile_and_an_unlike_run_are_refused_with_the_reason() {
        let profile = testdata::run(None, "2024-01-01T00:00:00Z", &[20.0, 21.0], &[9.0, 9.5]);
        let runs = [
            entry("run 1", profile),
            entry("run 3", random_run(&[0.6, 0.62])),
        ];
        let err = render(&runs, &opts()).unwrap_err();
        assert!(err.contains("nothing to compare"), "{err}");
        assert!(
            err.contains("run 3's 4 KiB randread QD32: run 1 has no such test"),
            "{err}"
        );
        assert!(
            err.contains("access sequential vs random") && err.contains("queue depth 1 vs 32"),
            "{err}"
        );
    }

    #[test]
    fn like_tests_get_verdicts_and_unlike_ones_are_listed_apart() {
        let mut profile = testdata::run(None, "2024-01-01T00:00:00Z", &[20.0, 21.0], &[9.0, 9.5]);
        let mut like = random_run(&[0.6, 0.62, 0.61]);
        profile.tests.push(like.tests[0].clone());
        like.tests[0].repetitions = like.tests[0]
            .repetitions
            .iter()
            .map(|m| testdata::measurement(m.mb_per_s / 2.0, 4096))
            .collect();
        let runs = [entry("run 1", profile), entry("run 3", like)];
        let text = render(&runs, &opts()).unwrap();
        assert!(
            text.contains(
                "run 3, 4 KiB randread QD32: slower by 50% (95% CI 49%–51%, 3 vs 3 repetitions)"
            ),
            "{text}"
        );
        assert!(
            text.contains("run 1's 1 MiB read QD1; 1 MiB write QD1: run 3 has no such test"),
            "{text}"
        );
        // The table shows the first test's kind, which run 3 lacks: dashes,
        // never its 4 KiB figures.
        let row = text.lines().find(|l| l.contains("run 3 ")).unwrap();
        assert!(
            row.contains("no test of this kind") && !row.contains("0.3"),
            "{row}"
        );
        let json = render_json(&runs, &opts()).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let change = &v["changes"][0];
        assert_eq!(change["verdict"]["verdict"]["change"], "slower");
        assert_eq!(change["verdict"]["verdict"]["before_repetitions"], 3);
        assert!(change["percent_change"]["low"].as_f64().unwrap() > -1.0);
        assert_eq!(v["not_compared"][0]["run"], "run 1");
    }

    #[test]
    fn one_repetition_gets_no_verdict_and_says_why() {
        let runs = [
            entry("run 1", random_run(&[0.6, 0.62])),
            entry("run 2", random_run(&[0.3])),
        ];
        let text = render(&runs, &opts()).unwrap();
        assert!(
            text.contains(
                "no verdict: 2 vs 1 repetition, and an interval needs at least 2 on each side"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_run_without_tests_is_listed_apart() {
        let other = testdata::run(None, "2024-01-01T00:00:00Z", &[20.0], &[9.0]);
        let other = testdata::other_command(other);
        let base = testdata::run(None, "2024-01-01T00:00:00Z", &[20.0, 21.0], &[9.0, 9.5]);
        let same = base.clone();
        let runs = [
            entry("run 1", base),
            entry("run 2", same),
            entry("run 7", other),
        ];
        let text = render(&runs, &opts()).unwrap();
        assert!(
            text.contains(
                "run 7: a `copy` run, which measures something other than repeated tests"
            ),
            "{text}"
        );
    }
}
