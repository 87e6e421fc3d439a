//! Turning a flash detector's figures into a [`FlashReport`]: the verdict
//! sentence, the findings with their confidence, and the raw table shown
//! with `--verbose`.
//!
//! Why a module of its own: the detectors (`crate::flash`) measure and the
//! analysis (`crate::analysis::flash`) decides; the words a person reads
//! are written here, one file per test, so that a wording can change
//! without touching a measurement or a threshold. `crate::report::flash`
//! then lays the finished report out as text.

mod align;
mod cache;
mod capacity;
mod class;
mod open_au;

use crate::flash::session::{Figures, Measured};
use crate::flash::{Finding, FlashReport};
use crate::units::format_size;

/// The report of one measured test, with the AU it used as a last finding.
pub fn build(measured: &Measured) -> FlashReport {
    let mut r = match &measured.figures {
        Figures::Align { result, kernel_au } => align::report(result, *kernel_au),
        Figures::OpenAu(r) => open_au::report(r),
        Figures::Cache(r) => cache::report(r),
        Figures::Capacity(r) => capacity::report(r),
        Figures::Class {
            classes,
            figures,
            link_mb_s,
        } => class::report(classes, figures, *link_mb_s),
    };
    if let Some(au) = &measured.au {
        r.findings
            .push(Finding::new("AU used", format_size(au.au), None).with_note(au.source.clone()));
    }
    r
}

/// Nanoseconds as microseconds with one decimal.
fn ns_us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1000.0)
}

/// The report, with the detector's own figures as its JSON details.
fn assemble<T: serde::Serialize>(
    test: &str,
    verdict: String,
    findings: Vec<Finding>,
    table: Vec<Vec<String>>,
    failed: bool,
    details: &T,
) -> FlashReport {
    FlashReport {
        test: test.into(),
        verdict,
        findings,
        table,
        failed,
        details: serde_json::to_value(details).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanoseconds_print_as_microseconds_with_one_decimal() {
        assert_eq!(ns_us(1_250), "1.2");
        assert_eq!(ns_us(0), "0.0");
        assert_eq!(ns_us(123_456), "123.5");
    }

    #[test]
    fn the_details_are_the_serialised_figures() {
        let r = assemble("cache", "v".into(), Vec::new(), Vec::new(), true, &[1, 2]);
        assert_eq!(r.details, serde_json::json!([1, 2]));
        assert!(r.failed);
        assert_eq!(r.test, "cache");
    }
}
