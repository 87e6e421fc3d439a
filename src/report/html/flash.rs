//! The flash commands in the report: each run's verdicts as typed items
//! (FAKE or GENUINE, PASS/FAIL per class, the AU, the cache, the open
//! AUs) for the summary, the device's card and the run's row, and the
//! run's findings and raw table as HTML tables.
//!
//! Why typed: the issue-28 report pasted the text verdict into a `<pre>`,
//! so the summary said "none yet" about a fake card and the lines ran off
//! a phone. Here every verdict is read from the finding's figures
//! (`crate::result::flash::Figure`), so a failure is marked by a badge
//! holding a word (FAKE, FAIL), never by colour alone, and the words are
//! those of [`crate::report::flash_verdicts::words`] wherever a figure
//! needs no unit of its own.

use super::esc;
use crate::report::flash_verdicts::words;
use crate::result::RunResult;
use crate::result::flash::{
    Cell, Column, Confidence, Figure, Finding, FlashReport, FlashTable, Need, Status,
};
use crate::units::{format_latency, format_mbps, format_size};
use crate::vocab::options::FlashTest;
use std::fmt::Write;

/// How a verdict reads at a glance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// A fake card or a failed requirement: it must not be missed.
    Fail,
    Pass,
    /// The link caps a requirement's figure: the card cannot be told.
    Link,
    /// A figure found (AU, cache, open AUs): no judgement.
    Found,
}

impl Mark {
    fn class(self) -> &'static str {
        match self {
            Mark::Fail => "fail",
            Mark::Pass => "pass",
            Mark::Link => "link",
            Mark::Found => "found",
        }
    }
}

/// Which verdicts a newer run replaces: one of each kind per device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Capacity,
    /// One class claim (empty: a class run stored without figures).
    Class(String),
    Au,
    /// The AU a test worked in, shown only when no `align` found one.
    AuUsed,
    Page,
    Cache,
    OpenAus,
}

/// One verdict of a flash run: its badge word and what it says.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub kind: Kind,
    pub mark: Mark,
    /// The badge's word: FAKE, GENUINE, PASS, FAIL, LINK, AU, cache ...
    pub word: String,
    pub text: String,
}

impl Verdict {
    fn new(kind: Kind, mark: Mark, word: &str, text: String) -> Verdict {
        Verdict {
            kind,
            mark,
            word: word.into(),
            text,
        }
    }

    /// One line: the badge, then the words.
    pub fn html(&self) -> String {
        format!("{} {}", badge(self.mark, &self.word), esc(&self.text))
    }
}

/// A badge: the word in a box, coloured by its mark.
pub fn badge(mark: Mark, word: &str) -> String {
    format!(
        "<span class=\"badge {}\" data-verdict=\"{}\">{}</span>",
        mark.class(),
        esc(word),
        esc(word)
    )
}

/// The verdicts of one run (none for a run that is not `flash`).
pub fn of_run(run: &RunResult) -> Vec<Verdict> {
    let Some(f) = run.payload.flash() else {
        return Vec::new();
    };
    let mut out = match f.test {
        FlashTest::Capacity => vec![capacity(run, f)],
        FlashTest::Class => classes(f),
        _ => Vec::new(),
    };
    out.extend(f.findings.iter().filter_map(found));
    if out.is_empty() {
        // A result stored before its findings had figures.
        let mark = if f.failed { Mark::Fail } else { Mark::Found };
        out.push(Verdict::new(
            Kind::Capacity,
            mark,
            &f.test.to_string(),
            f.verdict.clone(),
        ));
    }
    out
}

/// A device's verdicts: the newest of each kind over its runs (given
/// oldest first), failures first; the AU a test used only when no
/// `align` run found one.
pub fn of_device(runs: &[&RunResult]) -> Vec<Verdict> {
    let mut out: Vec<Verdict> = Vec::new();
    for run in runs.iter().rev() {
        for v in of_run(run) {
            if !out.iter().any(|w| w.kind == v.kind) {
                out.push(v);
            }
        }
    }
    if out.iter().any(|v| v.kind == Kind::Au) {
        out.retain(|v| v.kind != Kind::AuUsed);
    }
    out.sort_by_key(|v| v.mark != Mark::Fail);
    out
}

fn capacity(run: &RunResult, f: &FlashReport) -> Verdict {
    let usable = f.findings.iter().find_map(|x| match x.figure {
        Some(Figure::UsableCapacity { bytes, at_most }) => Some((bytes, at_most)),
        _ => None,
    });
    let claimed = f
        .details
        .get("claimed")
        .and_then(|c| c.as_u64())
        .unwrap_or(run.target.size_bytes);
    let confidence = f.findings.iter().find_map(|x| x.confidence);
    match (f.failed, usable) {
        (true, Some((real, at_most))) => Verdict::new(
            Kind::Capacity,
            Mark::Fail,
            "FAKE",
            format!(
                "claims {}, really holds {}",
                format_size(claimed),
                crate::report::flash_verdicts::holds_text(real, at_most)
            ),
        ),
        (true, None) => Verdict::new(
            Kind::Capacity,
            Mark::Fail,
            "FAKE",
            f.verdict.trim_start_matches("FAKE: ").to_string(),
        ),
        (false, _) => Verdict::new(
            Kind::Capacity,
            Mark::Pass,
            "GENUINE",
            format!(
                "holds the {} it claims{}",
                format_size(claimed),
                confidence
                    .filter(|c| *c < Confidence::High)
                    .map(|c| format!(" ({} confidence)", c.name()))
                    .unwrap_or_default()
            ),
        ),
    }
}

/// One verdict per class claimed: FAIL when a requirement failed (naming
/// each), LINK when the link capped one, else PASS.
fn classes(f: &FlashReport) -> Vec<Verdict> {
    let mut names: Vec<&str> = Vec::new();
    for x in &f.findings {
        if let Some(Figure::Requirement { class, .. }) = &x.figure
            && !names.contains(&class.as_str())
        {
            names.push(class);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let of_class: Vec<(&Finding, Need, f64, f64)> = f
                .findings
                .iter()
                .filter_map(|x| match &x.figure {
                    Some(Figure::Requirement {
                        class,
                        need,
                        measured,
                        limit,
                    }) if class == name => Some((x, *need, *measured, *limit)),
                    _ => None,
                })
                .collect();
            let with = |s: Status| {
                of_class
                    .iter()
                    .filter(|(x, ..)| x.status == Some(s))
                    .map(|(_, need, measured, limit)| requirement_text(*need, *measured, *limit))
                    .collect::<Vec<_>>()
            };
            let (fails, links) = (with(Status::Fail), with(Status::Link));
            let kind = Kind::Class(name.to_string());
            if !fails.is_empty() {
                Verdict::new(
                    kind,
                    Mark::Fail,
                    "FAIL",
                    format!("{name}: {}", fails.join("; ")),
                )
            } else if !links.is_empty() {
                Verdict::new(
                    kind,
                    Mark::Link,
                    "LINK",
                    format!("{name}: cannot tell, the link caps {}", links.join("; ")),
                )
            } else {
                Verdict::new(
                    kind,
                    Mark::Pass,
                    "PASS",
                    format!("{name}: all {} requirements met", of_class.len()),
                )
            }
        })
        .collect()
}

/// A figure found (no judgement): the AU, the page, the cache, open AUs.
fn found(x: &Finding) -> Option<Verdict> {
    let confidence = x
        .confidence
        .map(|c| format!(" ({} confidence)", c.name()))
        .unwrap_or_default();
    let size = |b: Option<u64>| b.map_or("not seen".to_string(), format_size);
    let (kind, word, text) = match x.figure.as_ref()? {
        Figure::Au { bytes, .. } => (Kind::Au, "AU", size(*bytes)),
        Figure::Page { bytes } => (Kind::Page, "page", size(*bytes)),
        Figure::Cache { bytes } => (Kind::Cache, "cache", size(*bytes)),
        Figure::OpenAus { count } => (
            Kind::OpenAus,
            "open AUs",
            count.map_or("not seen".into(), |n| n.to_string()),
        ),
        Figure::AuUsed { bytes, source } => (
            Kind::AuUsed,
            "AU",
            format!("{} ({source})", format_size(*bytes)),
        ),
        _ => return None,
    };
    Some(Verdict::new(
        kind,
        Mark::Found,
        word,
        format!("{text}{confidence}"),
    ))
}

/// A requirement's figure beside its limit, each in its own unit:
/// `Pw 9.96 MB/s, needs ≥ 10 MB/s`, `T_FW max 1.80 ms, limit ≤ 750 ms`.
fn requirement_text(need: Need, measured: f64, limit: f64) -> String {
    let (what, value): (&str, fn(f64) -> String) = match need {
        Need::SeqWrite(_) => ("Pw", |v| format!("{} MB/s", format_mbps(v))),
        Need::RuRead(_) => ("Pr", |v| format!("{} MB/s", format_mbps(v))),
        Need::Sustained(_) => ("sustained write", |v| format!("{} MB/s", format_mbps(v))),
        Need::FatMean(_) => ("T_FW mean of 8", |v| format_latency(v * 1e6)),
        Need::FatMax(_) => ("T_FW max", |v| format_latency(v * 1e6)),
        Need::RandomReadIops(_) => ("4 KiB read", |v| format!("{v:.0} IOPS")),
        Need::RandomWriteIops(_) => ("4 KiB write", |v| format!("{v:.0} IOPS")),
    };
    let bound = if need.limit().1 {
        "needs ≥"
    } else {
        "limit ≤"
    };
    format!("{what} {}, {bound} {}", value(measured), value(limit))
}

/// Rows of a raw table shown open; a longer one starts folded.
const OPEN_ROWS: usize = 12;

/// A flash run's analysis: the verdict with its badge, the findings as a
/// table, and the raw table (folded when long), all HTML that wraps or
/// scrolls within its box at any width.
pub fn section(out: &mut String, run: &RunResult) {
    let Some(f) = run.payload.flash() else {
        return;
    };
    let _ = writeln!(
        out,
        "<section data-section=\"flash\"><h4>Flash analysis: {}</h4>",
        esc(&f.test.to_string())
    );
    let _ = writeln!(
        out,
        "<ul class=\"verdicts\">{}</ul>",
        of_run(run)
            .iter()
            .map(|v| format!("<li>{}</li>", v.html()))
            .collect::<String>()
    );
    let _ = writeln!(out, "<p class=\"verdict-line\">{}</p>", esc(&f.verdict));
    findings(out, &f.findings);
    raw_table(out, &f.table);
    let _ = writeln!(out, "</section>");
}

fn findings(out: &mut String, list: &[Finding]) {
    if list.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<table class=\"stack findings\"><thead><tr><th>status</th><th>finding</th><th>value</th><th>confidence</th><th>note</th></tr></thead><tbody>"
    );
    for x in list {
        let w = words::of_finding(x);
        let status = x.status.map_or(String::new(), |s| {
            let mark = match s {
                Status::Pass => Mark::Pass,
                Status::Fail => Mark::Fail,
                Status::Link => Mark::Link,
            };
            badge(mark, s.name())
        });
        let value = match &x.figure {
            Some(Figure::Requirement {
                need,
                measured,
                limit,
                ..
            }) => requirement_text(*need, *measured, *limit),
            Some(Figure::FatWrites {
                worst_mean8_ms,
                max_ms,
                median_ms,
                writes,
            }) => format!(
                "worst mean of 8 {}, max {}, median {} over {writes} writes",
                format_latency(worst_mean8_ms * 1e6),
                format_latency(max_ms * 1e6),
                format_latency(median_ms * 1e6)
            ),
            _ => w.value,
        };
        let _ = writeln!(
            out,
            "<tr><td data-label=\"status\">{status}</td><td data-label=\"finding\">{}</td><td data-label=\"value\">{}</td><td data-label=\"confidence\">{}</td><td data-label=\"note\">{}</td></tr>",
            esc(&w.name),
            esc(&value),
            x.confidence.map_or("", |c| c.name()),
            esc(w.note.as_deref().unwrap_or(""))
        );
    }
    let _ = writeln!(out, "</tbody></table>");
}

/// A column's heading in the page: times carry their unit in each cell.
fn heading(c: Column) -> &'static str {
    match c {
        Column::BeforeUs => "before",
        Column::OnUs => "on",
        Column::AfterUs => "after",
        Column::DiffUs => "on − around",
        other => words::heading(other),
    }
}

fn cell(c: &Cell, column: Column) -> String {
    match c {
        Cell::Nanoseconds(ns) => format_latency(*ns as f64),
        other => words::cell(other, column),
    }
}

/// The raw table as an HTML table in a scrolling box, folded when long.
fn raw_table(out: &mut String, table: &FlashTable) {
    let (head, rows): (Vec<String>, Vec<Vec<String>>) = match table {
        FlashTable::Typed(t) if !t.columns.is_empty() => (
            t.columns.iter().map(|c| heading(*c).to_string()).collect(),
            t.rows
                .iter()
                .map(|r| r.iter().zip(&t.columns).map(|(c, k)| cell(c, *k)).collect())
                .collect(),
        ),
        FlashTable::Words(w) if !w.is_empty() => (w[0].clone(), w[1..].to_vec()),
        _ => return,
    };
    let _ = writeln!(
        out,
        "<details class=\"raw\"{}><summary>The raw table ({} rows)</summary>\n<div class=\"scroll\"><table class=\"raw\"><thead><tr>{}</tr></thead><tbody>",
        if rows.len() <= OPEN_ROWS { " open" } else { "" },
        rows.len(),
        head.iter()
            .map(|h| format!("<th>{}</th>", esc(h)))
            .collect::<String>()
    );
    for row in &rows {
        let _ = writeln!(
            out,
            "<tr>{}</tr>",
            row.iter()
                .map(|c| format!("<td>{}</td>", esc(c)))
                .collect::<String>()
        );
    }
    let _ = writeln!(out, "</tbody></table></div></details>");
}
