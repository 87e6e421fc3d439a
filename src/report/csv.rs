//! CSV: one line per test, or for a curve one line per measured point,
//! for spreadsheets and scripts; units are in the column names.
//!
//! Text cells carry what a run or an imported fio file said (test names,
//! device labels, paths), and a spreadsheet runs a cell that begins with
//! `=`, `+`, `-` or `@` as a formula, even behind blanks or invisible
//! characters it skips. So every text cell is neutralised as OWASP's
//! CSV-injection rule says (see [`field`]); figures are written by [`num`]
//! and stay numbers. A text cell also has its control characters shown
//! escaped and is cut at [`NAME_COLUMNS`] (see [`escape::cell`]): a CSV is
//! read with `cat` as often as with a spreadsheet. The JSON export keeps
//! every name whole.
//!
//! A run on many hosts (`mpi` in the result) adds two columns, `rank` and
//! `host`, and after the merged rows one row per rank and test (or curve
//! point) with that rank's own figures; the merged rows leave both empty.
//! One block rather than a second table: a spreadsheet filters or pivots
//! one range by test and host at once, where a second header in the middle
//! of the file reads as a row of text. A run on one host keeps exactly the
//! columns it always had.
//!
//! Latency percentiles close each test row (`p50_ns` … `max_ns`) and each
//! curve point (`p50_ns`, `p99_ns`): integer nanoseconds, one fixed unit
//! named in the column, since a CSV is read by programs that compare and
//! sum cells (the text tables give each value its readable unit instead).
//! A test's latency is that of its median repetition (see
//! [`median_latency`](super::cells::median_latency)).

use super::Export;
use super::outcome::figure::{Figure, Value};
use crate::result::RunResult;
use crate::result::cluster::MpiSection;
use crate::stats::Spread;
use crate::units::escape::{self, NAME_COLUMNS};
use std::fmt::Write;

pub struct Csv;

const HEADER: &str = "started_at,device,device_key,command,test,rw,block_size,queue_depth,threads,repetitions,mb_per_s_median,mb_per_s_min,mb_per_s_max,iops_median,skipped,p50_ns,p90_ns,p99_ns,p99_9_ns,p99_99_ns,max_ns";

/// The latency cells of a test row, in [`HEADER`]'s order; empty when the
/// test has no latency (skipped, imported without one).
fn latency_cells(l: Option<&crate::stats::LatencySummary>) -> [String; 6] {
    let Some(l) = l else {
        return Default::default();
    };
    [
        l.p50_ns,
        l.p90_ns,
        l.p99_ns,
        l.p99_9_ns,
        l.p99_99_ns,
        l.max_ns,
    ]
    .map(|ns| ns.to_string())
}

/// An integer nanosecond cell, empty when there is none.
fn ns_cell(ns: Option<u64>) -> String {
    ns.map(|n| n.to_string()).unwrap_or_default()
}

/// A text cell: escaped and cut (see [`escape::cell`]); quoted when it
/// holds a comma, quote or line break (RFC 4180); and, when a spreadsheet
/// would read it as a formula, prefixed with a single quote and quoted
/// (OWASP), unless it is a plain number.
fn field(v: &str) -> String {
    let v = &escape::cell(v, NAME_COLUMNS);
    let formula = starts_formula(v) && !is_number(v);
    if formula {
        format!("\"'{}\"", v.replace('"', "\"\""))
    } else if v.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", v.replace('"', "\"\""))
    } else {
        v.to_string()
    }
}

/// Whether a spreadsheet may read `v` as a formula: its first character
/// that is not a blank or invisible ([`skipped_before_formula`]) is `=`,
/// `+`, `-`, `@`, a tab or a carriage return.
fn starts_formula(v: &str) -> bool {
    v.chars()
        .find(|&c| !skipped_before_formula(c))
        .is_some_and(|c| matches!(c, '=' | '+' | '-' | '@' | '\t' | '\r'))
}

/// The characters a spreadsheet may pass over before it decides a cell is
/// a formula: spaces of every width (ASCII, no-break, ogham, the
/// U+2000 block, narrow, mathematical, ideographic), line and paragraph
/// separators and line breaks, the byte-order mark, and the zero-width
/// characters.
fn skipped_before_formula(c: char) -> bool {
    matches!(
        c,
        ' ' | '\n' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200d}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{2060}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// A decimal number such as `-3.2` or `-1e-3`, which a spreadsheet reads
/// as a value, never a formula (`-inf`, `-nan` and `-1+2` are not).
fn is_number(v: &str) -> bool {
    v.bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'))
        && v.bytes().any(|b| b.is_ascii_digit())
        && v.parse::<f64>().is_ok_and(f64::is_finite)
}

/// A figure to [`SIGNIFICANT`] significant figures and never fewer than
/// [`DECIMALS`] decimals, trailing zeros cut (`0.00973`, `39.6985`,
/// `4940.711`): a spreadsheet that sums or compares cells keeps what was
/// measured, where a fixed 3 decimals turned 0.00973 MB/s into `0.010`,
/// and no figure has fewer decimals than earlier releases wrote. Empty
/// when there is none.
fn num(v: Option<f64>) -> String {
    v.map(significant).unwrap_or_default()
}

/// Significant figures a CSV number keeps.
const SIGNIFICANT: i32 = 6;
/// Decimals a CSV number keeps at least (what releases before schema 5
/// wrote for every figure).
const DECIMALS: i32 = 3;

fn significant(v: f64) -> String {
    if !v.is_finite() || v == 0.0 {
        return if v == 0.0 { "0".into() } else { v.to_string() };
    }
    let magnitude = v.abs().log10().floor() as i32;
    let decimals = (SIGNIFICANT - 1 - magnitude).clamp(DECIMALS, 17) as usize;
    let text = format!("{v:.decimals$}");
    match text.contains('.') {
        true => text.trim_end_matches('0').trim_end_matches('.').to_string(),
        false => text,
    }
}

impl Export for Csv {
    fn render(&self, r: &RunResult) -> String {
        Csv::rows(r, r.mpi.is_some())
    }
}

/// The columns a run on many hosts adds.
const RANK_COLUMNS: &str = ",rank,host";

impl Csv {
    /// The CSV of `r`, with the `rank` and `host` columns when
    /// `rank_columns` (always for a run on many hosts; `compare --csv`
    /// asks for them on every run when one of its runs has them, so that
    /// every row has the same columns).
    pub fn rows(r: &RunResult, rank_columns: bool) -> String {
        if let Some(flash) = super::flash_rows::csv(r, field) {
            return flash;
        }
        let rank_columns = rank_columns || r.mpi.is_some();
        // A run with an outcome of its own (copy's bottleneck beside the
        // two sides' speeds alone, which are its tests) is its outcome's
        // rows: one table, whose figures include what the tests measured.
        let figures = super::outcome::figures(r);
        if !figures.is_empty() {
            return outcome_rows(r, &figures, rank_columns);
        }
        let mut out = match r.payload.curve().is_some() {
            true => curve_rows(r, rank_columns),
            false => test_rows(r, rank_columns),
        };
        if let Some(m) = &r.mpi {
            rank_rows(&mut out, r, m);
        }
        out
    }
}

/// The merged rows' empty `rank` and `host` cells, when asked for.
fn blank_ranks(rank_columns: bool) -> &'static str {
    if rank_columns { ",," } else { "" }
}

/// The MB/s of each repetition of test `test` on rank `rank`, and its
/// IOPS, from the ranks' spans.
fn rank_reps(m: &MpiSection, test: usize, rank: u32) -> (Vec<f64>, Vec<f64>) {
    m.tests
        .get(test)
        .into_iter()
        .flat_map(|t| &t.repetitions)
        .filter_map(|rep| rep.ranks.iter().find(|s| s.rank == rank))
        .map(|s| {
            let ns = s.end_ns.saturating_sub(s.start_ns).max(1) as f64;
            (s.mb_per_s, s.ops as f64 * 1e9 / ns)
        })
        .unzip()
}

/// Per rank and test (or curve point): the rank's own figures, under the
/// merged rows.
fn rank_rows(out: &mut String, r: &RunResult, m: &MpiSection) {
    let (label, key) = device_cells(r);
    let mut ranks: Vec<_> = m.ranks.iter().collect();
    ranks.sort_by_key(|k| k.rank);
    let median = |v: &[f64]| Spread::of(v).map(|s| s.median);
    if let Some(curve) = r.payload.curve() {
        for s in &curve.series {
            for p in s.points.iter().chain(&s.unaligned) {
                for k in &ranks {
                    let (mbps, iops) = rank_reps(m, p.test, k.rank);
                    let spread = Spread::of(&mbps);
                    let _ = writeln!(
                        out,
                        "{},{},{},{},{},,,,{},{}",
                        point_cells(s, p),
                        num(spread.map(|s| s.median)),
                        num(spread.map(|s| s.min)),
                        num(spread.map(|s| s.max)),
                        num(median(&iops)),
                        k.rank,
                        field(&k.host)
                    );
                }
            }
        }
        return;
    }
    for (i, t) in r.tests.iter().enumerate() {
        if t.skipped.is_some() {
            continue;
        }
        for k in &ranks {
            let (mbps, iops) = rank_reps(m, i, k.rank);
            let spread = Spread::of(&mbps);
            let mut cells = test_cells(r, &label, &key, t).to_vec();
            cells.extend([
                mbps.len().to_string(),
                num(spread.map(|s| s.median)),
                num(spread.map(|s| s.min)),
                num(spread.map(|s| s.max)),
                num(median(&iops)),
                String::new(),
            ]);
            out.push_str(&cells.join(","));
            // A rank's figures per test hold no latency: the ranks' spans
            // carry bytes and times only.
            out.push_str(&",".repeat(latency_cells(None).len()));
            let cells = [String::new(), k.rank.to_string(), field(&k.host)];
            out.push_str(&cells.join(","));
            out.push('\n');
        }
    }
}

/// The header of a run whose figures are its outcome's, not tests.
const OUTCOME_HEADER: &str = "started_at,device,device_key,command,section,index,figure,value";

/// One row per figure of the outcome (see [`super::outcome`]): its
/// section, its row in a section of many, its name with its unit, its
/// value; then on many hosts each rank's own figures, in section `rank`.
fn outcome_rows(r: &RunResult, figures: &[Figure], rank_columns: bool) -> String {
    let (label, key) = device_cells(r);
    let lead = [r.started_at.as_str(), &label, &key, &r.command()].map(field);
    let mut out = format!("{OUTCOME_HEADER}{}\n", rank_header(rank_columns));
    let mut row = |section: &str, index: String, figure: &str, value: String, rank: &str| {
        let cells = [field(section), index, field(figure), value];
        let _ = writeln!(out, "{},{}{rank}", lead.join(","), cells.join(","));
    };
    let blank = blank_ranks(rank_columns);
    for f in figures {
        let index = f.index.map(|i| i.to_string()).unwrap_or_default();
        row(f.section, index, &f.column(), value_cell(&f.value), blank);
    }
    let Some(m) = &r.mpi else {
        return out;
    };
    let mut ranks: Vec<_> = m.ranks.iter().collect();
    ranks.sort_by_key(|k| k.rank);
    for k in ranks {
        let rank = format!(",{},{}", k.rank, field(&k.host));
        let index = k.rank.to_string();
        let figures = [
            ("moved_bytes", k.bytes.to_string()),
            ("ops", k.ops.to_string()),
            ("speed_mb_per_s", num(Some(k.mb_per_s))),
            ("start_ns", k.start_ns.to_string()),
            ("end_ns", k.end_ns.to_string()),
            ("start_skew_ns", k.start_skew_ns.to_string()),
            ("end_skew_ns", k.end_skew_ns.to_string()),
        ];
        for (name, value) in figures {
            row("rank", index.clone(), name, value, &rank);
        }
    }
    out
}

/// A figure's value as a cell: numbers as numbers, words as text cells.
fn value_cell(v: &Value) -> String {
    match v {
        Value::Real(x) => num(Some(*x)),
        Value::Count(n) => n.to_string(),
        Value::Word(w) => field(w),
    }
}

/// The device's label and key cells (empty when it is unknown).
fn device_cells(r: &RunResult) -> (String, String) {
    r.device_identity
        .as_ref()
        .map_or((String::new(), String::new()), |i| {
            (i.label.clone(), i.key.clone())
        })
}

/// One row per test.
fn test_rows(r: &RunResult, rank_columns: bool) -> String {
    let (label, key) = device_cells(r);
    let mut out = format!("{HEADER}{}\n", rank_header(rank_columns));
    for t in &r.tests {
        let mut cells = test_cells(r, &label, &key, t).to_vec();
        cells.extend([
            t.mb_per_s.map_or(0, |s| s.count).to_string(),
            num(t.mb_per_s.map(|s| s.median)),
            num(t.mb_per_s.map(|s| s.min)),
            num(t.mb_per_s.map(|s| s.max)),
            num(t.iops.map(|s| s.median)),
            field(
                &t.skipped
                    .as_ref()
                    .map_or(String::new(), super::caveats::skipped),
            ),
        ]);
        out.push_str(&cells.join(","));
        for cell in latency_cells(super::cells::test_latency(t)) {
            out.push(',');
            out.push_str(&cell);
        }
        out.push_str(blank_ranks(rank_columns));
        out.push('\n');
    }
    out
}

/// A test row's first cells, the same in a run's rows and a rank's: when,
/// which device, which command, which test with its workload.
fn test_cells(r: &RunResult, label: &str, key: &str, t: &crate::result::TestResult) -> [String; 9] {
    let w = &t.workload;
    [
        field(&r.started_at),
        field(label),
        field(key),
        field(&r.command()),
        field(&t.name),
        field(w.rw.as_str()),
        w.block_size.to_string(),
        w.queue_depth.to_string(),
        w.threads.to_string(),
    ]
}

/// A curve row's first cells, the same in a run's rows and a rank's:
/// which series, which size, and how it was measured.
fn point_cells(s: &crate::result::CurveSeries, p: &crate::result::CurvePoint) -> String {
    let (target, pattern) = (field(&s.target), s.pattern.name());
    format!(
        "{target},{pattern},{},{},{}",
        p.size, p.buffered, p.reference
    )
}

/// The header's `rank` and `host`, when asked for.
fn rank_header(rank_columns: bool) -> &'static str {
    if rank_columns { RANK_COLUMNS } else { "" }
}

fn curve_rows(r: &RunResult, rank_columns: bool) -> String {
    let mut out = format!(
        "target,pattern,size_bytes,buffered,reference,mb_per_s_median,mb_per_s_min,mb_per_s_max,iops_median,p50_ns,p99_ns,model_ratio{}\n",
        rank_header(rank_columns)
    );
    let Some(curve) = r.payload.curve() else {
        return out;
    };
    for s in &curve.series {
        // The unaligned section follows the series; `buffered` and
        // `reference` tell its rows apart.
        for p in s.points.iter().chain(&s.unaligned) {
            let (med, min, max) = p.mb_per_s.map_or((None, None, None), |m| {
                (Some(m.median), Some(m.min), Some(m.max))
            });
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{}{}",
                point_cells(s, p),
                num(med),
                num(min),
                num(max),
                num(p.iops.map(|i| i.median)),
                ns_cell(p.p50_ns),
                ns_cell(p.p99_ns),
                num(p.model_ratio),
                blank_ranks(rank_columns)
            );
        }
    }
    out
}

#[cfg(test)]
#[path = "csv_tests.rs"]
mod tests;
