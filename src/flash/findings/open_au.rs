//! The findings of `flash open-au`: how many AUs the card keeps open, or
//! why no count is given.

use super::assemble;
use crate::flash::open_au;
use crate::result::flash::FlashReport;
use crate::result::flash::{Cell, Column, Figure, Finding, Outcome, TypedTable};
use crate::vocab::options::FlashTest;

pub(super) fn report(r: &open_au::OpenAuResult) -> FlashReport {
    let findings = vec![Finding::sure(
        Figure::OpenAus { count: r.open_aus },
        r.confidence,
    )];
    let outcome = Outcome::OpenAus {
        count: r.open_aus,
        confidence: r.confidence,
        no_count: r.open_aus.is_none().then_some(r.why_none).flatten(),
        collapse: r.collapse,
        spread: r.spread,
        most_aus: r.plan.max_n,
    };
    assemble(FlashTest::OpenAu, outcome, findings, table(r))
}

/// Throughput by the number of AUs written in turn, and the check again.
fn table(r: &open_au::OpenAuResult) -> TypedTable {
    let mut rows: Vec<Vec<Cell>> = r
        .points
        .iter()
        .map(|p| vec![Cell::Count(p.aus.into()), Cell::MbS(p.mb_per_s)])
        .collect();
    for c in [r.check, r.past_check].into_iter().flatten() {
        rows.push(vec![Cell::CountAgain(c.aus.into()), Cell::MbS(c.mb_per_s)]);
    }
    TypedTable {
        columns: vec![Column::Aus, Column::MbS],
        rows,
    }
}
