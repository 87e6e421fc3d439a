//! The text of a flash verdict: the answer first, then each finding with
//! its confidence (requirements met at high confidence counted on one
//! line; `--verbose` lists them and the raw table), then the notes. The
//! words come from each finding's figures ([`words`]).

use super::flash_verdicts::{self, words};
use crate::result::RunResult;
use std::fmt::Write;

/// Renders the flash section of `result` (empty when there is none).
pub fn render(result: &RunResult, verbose: bool) -> String {
    let Some(f) = result.payload.flash() else {
        return String::new();
    };
    let mut out = String::new();
    let _ = writeln!(out, "iocurve flash {} · {}", f.test, result.target.path);
    let _ = writeln!(out, "verdict     {}", flash_verdicts::headline(f));
    if let Some(host) = flash_verdicts::host_of(f) {
        let _ = writeln!(out, "host        {host}");
    }
    let mut folded = 0;
    for x in &f.findings {
        if !verbose && sure_pass(x) {
            folded += 1;
            continue;
        }
        let status = x
            .status
            .map(|s| format!("{:<4} ", flash_verdicts::outcome::status_word(f, s)))
            .unwrap_or_default();
        let conf = x
            .confidence
            .map(|c| format!(" (confidence {})", c.name()))
            .unwrap_or_default();
        let words = words::of_finding(x);
        let note = words
            .note
            .as_deref()
            .map(|n| format!("; {n}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  {status}{:<22} {}{conf}{note}",
            words.name, words.value
        );
    }
    if folded > 0 {
        let _ = writeln!(
            out,
            "  PASS {folded} more requirement(s), each at high confidence (--verbose lists them)"
        );
    }
    let commands = words::repair_commands(&f.findings);
    if !commands.is_empty() {
        let _ = writeln!(out, "to use the card at its real size, one of:");
        for c in &commands {
            let _ = writeln!(out, "  {c}");
        }
    }
    if verbose && !f.table.is_empty() {
        out.push('\n');
        for row in &words::table_text(&f.table) {
            let cells: Vec<String> = row.iter().map(|c| format!("{c:>12}")).collect();
            let _ = writeln!(out, "{}", cells.join(""));
        }
    }
    for note in &result.target.notes {
        let _ = writeln!(out, "note        {}", super::caveats::line(note));
    }
    if let Some(e) = &result.error {
        let _ = writeln!(out, "error       {e}");
    }
    out
}

/// [`render`] for a terminal: long findings wrapped to the width every
/// text output keeps (the HTML report keeps the lines whole).
pub fn render_text(result: &RunResult, verbose: bool) -> String {
    super::table::fitted(&render(result, verbose))
}

/// A requirement met at high confidence: what the verdict's "meets"
/// already says, listed one by one only with `--verbose` (a class run
/// checks some 40 of them).
fn sure_pass(x: &crate::result::flash::Finding) -> bool {
    use crate::result::flash::{Confidence, Figure, Status};
    matches!(x.figure, Figure::Requirement { .. })
        && x.status == Some(Status::Pass)
        && x.confidence == Some(Confidence::High)
}
