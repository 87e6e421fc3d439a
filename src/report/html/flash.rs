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
use crate::report::flash_verdicts::{self, words};
use crate::result::RunResult;
use crate::result::flash::{
    Cell, ClaimSource, Column, Confidence, Figure, Finding, FlashTable, NeedKind, Outcome, Status,
};
use crate::units::{format_latency, format_mbps, format_size};
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
    let mut out = match &f.outcome {
        Outcome::Genuine { .. } | Outcome::Fake { .. } => vec![capacity(&f.outcome)],
        Outcome::Classes { .. } => classes(&f.outcome),
        _ => Vec::new(),
    };
    out.extend(f.findings.iter().filter_map(found));
    if out.is_empty() {
        // A result stored before its findings had figures: its words.
        let mark = if f.failed() { Mark::Fail } else { Mark::Found };
        out.push(Verdict::new(
            Kind::Capacity,
            mark,
            &f.test.to_string(),
            flash_verdicts::headline(f),
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

/// FAKE with the claimed and real size, or GENUINE.
fn capacity(o: &Outcome) -> Verdict {
    match *o {
        Outcome::Fake {
            claimed_bytes,
            real_bytes,
            at_most_bytes,
            ..
        } => Verdict::new(
            Kind::Capacity,
            Mark::Fail,
            "FAKE",
            format!(
                "claims {}, really holds {}",
                format_size(claimed_bytes),
                flash_verdicts::holds_text(real_bytes, at_most_bytes)
            ),
        ),
        Outcome::Genuine {
            claimed_bytes,
            confidence,
            ..
        } => Verdict::new(
            Kind::Capacity,
            Mark::Pass,
            "GENUINE",
            format!(
                "holds the {} it claims{}",
                format_size(claimed_bytes),
                Some(confidence)
                    .filter(|c| *c < Confidence::High)
                    .map(|c| format!(" ({} confidence)", c.name()))
                    .unwrap_or_default()
            ),
        ),
        _ => unreachable!("capacity outcomes only"),
    }
}

/// The classes met (the highest of each family), then what binds: FAIL
/// only when a claimed class is not met; a class above those met, with
/// no claim, is named without alarm.
fn classes(o: &Outcome) -> Vec<Verdict> {
    let Outcome::Classes { binding, claim, .. } = o else {
        return Vec::new();
    };
    let met = flash_verdicts::class_met(o);
    let mut out = Vec::new();
    // Under a claim only the claimed classes were checked: "meets none"
    // would read as "meets no class at all"; the FAIL below says it.
    if met != "none" || *claim == ClaimSource::None {
        let mark = if met == "none" {
            Mark::Found
        } else {
            Mark::Pass
        };
        out.push(Verdict::new(Kind::Class("met".into()), mark, "MEETS", met));
    }
    if let Some(b) = binding.as_ref().filter(|b| b.status != Status::Pass) {
        let text = format!(
            "{}: {}",
            b.class,
            requirement_text(b.need, b.measured, b.limit)
        );
        let (mark, word) = match (b.status, *claim != ClaimSource::None && o.failed()) {
            (Status::Link, _) => (Mark::Link, "LINK"),
            (_, true) => (Mark::Fail, "FAIL"),
            _ => (Mark::Found, "NOT"),
        };
        out.push(Verdict::new(
            Kind::Class("binding".into()),
            mark,
            word,
            text,
        ));
    }
    out
}

/// A figure found (no judgement): the AU, the page, the cache, open AUs.
fn found(x: &Finding) -> Option<Verdict> {
    let confidence = x
        .confidence
        .map(|c| format!(" ({} confidence)", c.name()))
        .unwrap_or_default();
    let size = |b: Option<u64>| b.map_or("not seen".to_string(), format_size);
    let (kind, word, text) = match &x.figure {
        Figure::Au { bytes, .. } => (Kind::Au, "AU", size(*bytes)),
        Figure::Page { bytes } => (Kind::Page, "page", size(*bytes)),
        Figure::Cache { bytes } => (Kind::Cache, "cache", size(*bytes)),
        Figure::OpenAus { count } => (
            Kind::OpenAus,
            "open AUs",
            count.map_or("not seen".into(), |n| n.to_string()),
        ),
        Figure::AuUsed { bytes, .. } => (
            Kind::AuUsed,
            "AU",
            format!(
                "{} ({})",
                format_size(*bytes),
                words::words(&x.figure).note.unwrap_or_default()
            ),
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
fn requirement_text(need: NeedKind, measured: f64, limit: f64) -> String {
    let value: fn(f64) -> String = match need {
        NeedKind::SeqWrite | NeedKind::RuRead | NeedKind::Sustained => {
            |v| format!("{} MB/s", format_mbps(v))
        }
        NeedKind::FatMean | NeedKind::FatMax => |v| format_latency(v * 1e6),
        NeedKind::RandomReadIops | NeedKind::RandomWriteIops => |v| format!("{v:.0} IOPS"),
    };
    let bound = if need.at_least() {
        "needs ≥"
    } else {
        "limit ≤"
    };
    format!(
        "{} {}, {bound} {}",
        flash_verdicts::need_name(need),
        value(measured),
        value(limit)
    )
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
    let _ = writeln!(
        out,
        "<p class=\"verdict-line\">{}</p>",
        esc(&flash_verdicts::headline(f))
    );
    if let Some(host) = flash_verdicts::host_of(f) {
        let _ = writeln!(out, "<p class=\"host-line\">Host: {}</p>", esc(&host));
    }
    findings(out, f);
    repair(out, &f.findings);
    raw_table(out, &f.table);
    let _ = writeln!(out, "</section>");
}

fn findings(out: &mut String, f: &crate::result::flash::FlashReport) {
    let list = &f.findings;
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
            let word = flash_verdicts::outcome::status_word(f, s);
            let mark = match s {
                Status::Pass => Mark::Pass,
                // A class above those met, with no claim: no alarm.
                Status::Fail if word != s.name() => Mark::Found,
                Status::Fail => Mark::Fail,
                Status::Link => Mark::Link,
            };
            badge(mark, word)
        });
        let value = match &x.figure {
            Figure::Requirement {
                need,
                measured,
                limit,
                ..
            } => requirement_text(*need, *measured, *limit),
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

/// The commands that make a fake card usable at its real size (none
/// once `--fix` wrote the table).
fn repair(out: &mut String, list: &[Finding]) {
    let commands = words::repair_commands(list);
    if commands.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<p>To use the card at its real size, one of:</p><pre class=\"commands\">{}</pre>",
        esc(&commands.join("\n"))
    );
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
        FlashTable::Typed(t) if !t.rows.is_empty() => (
            t.columns.iter().map(|c| heading(*c).to_string()).collect(),
            t.rows
                .iter()
                .map(|r| r.iter().zip(&t.columns).map(|(c, k)| cell(c, *k)).collect())
                .collect(),
        ),
        FlashTable::Words(w) if w.len() > 1 => (w[0].clone(), w[1..].to_vec()),
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
