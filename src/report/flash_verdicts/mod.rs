//! Turning a flash detector's figures into a [`FlashReport`]: the verdict
//! sentence, the findings with their figures and confidence, and the raw
//! table shown with `--verbose`.
//!
//! Why a module of its own: the detectors (`crate::flash`) measure and the
//! analysis (`crate::analysis::flash`) decides; which figures a test
//! reports, and the words a person reads, are chosen here, one file per
//! test and [`words`] for each figure, so that a wording can change without
//! touching a measurement or a threshold. `crate::report::flash` then lays
//! the finished report out as text.

mod align;
mod cache;
mod capacity;
mod class;
mod open_au;
pub mod words;

use crate::analysis::flash::Confidence;
use crate::flash::session::{Figures, Measured};
use crate::result::flash::{Figure, Finding, FlashReport, FlashTable, Status, TypedTable};
use crate::vocab::options::FlashTest;

/// The report of one measured test of `target` (as the user named it),
/// with the AU it used as a last finding.
pub fn build(measured: &Measured, target: &str) -> FlashReport {
    let mut r = match &measured.figures {
        Figures::Align { result, kernel_au } => align::report(result, *kernel_au),
        Figures::OpenAu(r) => open_au::report(r),
        Figures::Cache(r) => cache::report(r),
        Figures::Capacity { result, kernel_au } => capacity::report(result, target, *kernel_au),
        Figures::Class {
            classes,
            figures,
            link_mb_s,
        } => class::report(classes, figures, *link_mb_s),
    };
    if let Some(au) = &measured.au {
        r.findings.push(finding(
            Figure::AuUsed {
                bytes: au.au,
                source: au.source.clone(),
            },
            None,
        ));
    }
    r
}

/// The finding of what `flash capacity --fix` did.
pub fn fixed(outcome: crate::result::flash::FixOutcome) -> Finding {
    finding(Figure::Fixed { outcome }, None)
}

/// A finding of `figure`, with its words as written now.
fn finding(figure: Figure, confidence: Option<Confidence>) -> Finding {
    checked(figure, confidence, None, None)
}

/// A finding with the status of a class requirement and its own note.
fn checked(
    figure: Figure,
    confidence: Option<Confidence>,
    status: Option<Status>,
    note: Option<String>,
) -> Finding {
    let w = words::words(&figure, status);
    Finding {
        name: w.name,
        value: w.value,
        confidence,
        status,
        note: w.note.or(note),
        figure: Some(figure),
    }
}

/// Nanoseconds as microseconds with one decimal.
/// A time of the raw table in the unit that suits it (`1.25 µs`,
/// `123 µs`, `1.20 ms`; a negative difference keeps its sign).
fn ns_us(ns: i64) -> String {
    crate::units::format_latency(ns as f64)
}

/// The report, with the detector's own figures as its JSON details.
fn assemble<T: serde::Serialize>(
    test: FlashTest,
    verdict: String,
    findings: Vec<Finding>,
    table: TypedTable,
    failed: bool,
    details: &T,
) -> FlashReport {
    FlashReport {
        test,
        verdict,
        findings,
        table: FlashTable::Typed(table),
        failed,
        details: serde_json::to_value(details).unwrap_or_default(),
    }
}

/// What a card really holds: a size, or the interval a search left (one
/// narrower than a hundredth of its size would read "between 2 GiB and
/// 2.00 GiB", so it is written to the byte).
pub fn holds_text(at_least: u64, at_most: Option<u64>) -> String {
    use crate::units::format_size;
    match at_most.filter(|m| *m > at_least) {
        None => format_size(at_least),
        Some(m) if m - at_least <= at_least / 100 => {
            format!(
                "{} (between {at_least} and {m} bytes)",
                format_size(at_least)
            )
        }
        Some(m) => format!("between {} and {}", format_size(at_least), format_size(m)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_time_of_the_table_names_its_unit() {
        assert_eq!(ns_us(1_250), "1.25 µs");
        assert_eq!(ns_us(0), "0 µs");
        assert_eq!(ns_us(123_456), "123 µs");
        assert_eq!(ns_us(1_204_000), "1.20 ms");
        assert_eq!(ns_us(-3_200), "-3.20 µs");
    }

    #[test]
    fn the_details_are_the_serialised_figures() {
        let r = assemble(
            FlashTest::Cache,
            "v".into(),
            Vec::new(),
            TypedTable::default(),
            true,
            &[1, 2],
        );
        assert_eq!(r.details, serde_json::json!([1, 2]));
        assert!(r.failed);
        assert_eq!(r.test, FlashTest::Cache);
    }
}
