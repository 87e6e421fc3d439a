//! The self-contained HTML report: one file with its CSS and charts inline,
//! no script and nothing fetched, readable on a phone and in print.
//!
//! The page is organised by device: a summary of every device first, its
//! flash verdicts (FAKE, class PASS/FAIL, AU, cache) leading, then
//! per device its identity card, its runs as compact rows, its history as
//! one small chart per test, and each run in full (collapsed but the
//! newest), so six runs of one card do not make six device cards.
//!
//! Every chart sits beside a table of the same numbers, so nothing is only
//! in a picture. Headline figures carry `data-figure` attributes naming the
//! test, which the browser test reads back and compares with the JSON.

mod apps;
mod charts;
mod devices;
mod flash;
mod overview;
mod ranks;
mod sections;
mod sustain;

use crate::result::RunResult;
use crate::result::stored::HistoryPoint;

/// What one report shows.
#[derive(Debug, Clone, Default)]
pub struct ReportInput {
    /// The runs, newest last; the first names the report.
    pub runs: Vec<RunResult>,
    /// Every stored run of the same device(s), oldest first.
    pub history: Vec<HistoryPoint>,
    /// Stored runs of the same device(s) that set the noise between runs
    /// of the statements of change (the runs `compare` would read); empty
    /// without a database.
    pub earlier: Vec<RunResult>,
}

const STYLE: &str = include_str!("style.css");

/// The whole page.
pub fn render(input: &ReportInput) -> String {
    let mut body = String::new();
    sections::title(&mut body, input);
    let groups = devices::group_by_device(&input.runs);
    overview::summary(&mut body, &groups, &input.earlier);
    for (i, group) in groups.iter().enumerate() {
        overview::device(&mut body, i, group, &input.history);
    }
    sections::footer(&mut body, input);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n<main>\n{body}</main>\n</body>\n</html>\n",
        esc(&sections::title_text(input))
    )
}

/// Escapes text for HTML content and attribute values; a control or
/// bidirectional character other than a line break or tab is shown escaped
/// as a terminal shows it (see [`crate::units::escape`]), so that a name
/// reads the same in both. A text longer than [`TEXT_MAX`] characters (a
/// name of megabytes from an imported file) is cut with an ellipsis, so
/// that the page stays a page.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(TEXT_MAX));
    let mut chars = text.chars();
    for c in chars.by_ref().take(TEXT_MAX) {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c => crate::units::escape::push_escaped(&mut out, c),
        }
    }
    if chars.next().is_some() {
        out.push(crate::units::escape::ELLIPSIS);
    }
    out
}

/// The longest text [`esc`] writes whole: far beyond any sentence or name
/// the page shows of its own.
const TEXT_MAX: usize = 64 * 1024;

#[cfg(test)]
mod tests;
