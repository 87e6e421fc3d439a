//! Turning a flash detector's figures into a [`FlashReport`]: the outcome
//! with its figures and confidence, the findings as typed figures, and the
//! raw table shown with `--verbose`.
//!
//! Why a module of its own: the detectors (`crate::flash`) measure and the
//! analysis (`crate::analysis::flash`) decides; which figures a test
//! reports is chosen here, one file per test, before anything is worded.
//! The result is complete when it leaves: `crate::report` makes every
//! word, in every format, from it.

mod align;
mod cache;
mod capacity;
mod class;
mod open_au;

use super::session::{Figures, Measured};
use crate::result::flash::{
    Figure, Finding, FixOutcome, FlashReport, FlashTable, Outcome, TypedTable,
};
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
            claim,
            figures,
            link_mb_s,
            host,
        } => class::report(classes, *claim, figures, *link_mb_s, host),
    };
    if let Some(au) = &measured.au {
        r.findings.push(Finding {
            confidence: au.confidence,
            ..Finding::of(Figure::AuUsed {
                bytes: au.au,
                source: crate::result::flash::AuSource::Chosen(au.from),
            })
        });
    }
    r
}

/// The finding of what `flash capacity --fix` did.
pub fn fixed(outcome: FixOutcome) -> Finding {
    Finding::of(Figure::Fixed { outcome })
}

/// The report of `test`.
fn assemble(
    test: FlashTest,
    outcome: Outcome,
    findings: Vec<Finding>,
    table: TypedTable,
) -> FlashReport {
    FlashReport {
        test,
        outcome,
        findings,
        table: FlashTable::Typed(table),
    }
}
