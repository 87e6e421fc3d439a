//! The words of `flash open-au`: how many AUs the card keeps open, or why
//! no count is given.

use super::{assemble, finding};
use crate::flash::{FlashReport, open_au};
use crate::result::flash::{Cell, Column, Figure, TypedTable};
use crate::vocab::options::FlashTest;

pub(super) fn report(r: &open_au::OpenAuResult) -> FlashReport {
    let findings = vec![finding(
        Figure::OpenAus { count: r.open_aus },
        Some(r.confidence),
    )];
    assemble(FlashTest::OpenAu, verdict(r), findings, table(r), false, r)
}

fn verdict(r: &open_au::OpenAuResult) -> String {
    match (r.open_aus, r.why_none) {
        (Some(n), _) => format!(
            "{n} open AU(s): writing to more in turn collapses throughput {:.1}× (noise {:.2}×)",
            r.collapse, r.spread
        ),
        (None, Some(open_au::NoCount::NotFromTheCount)) => {
            "throughput fell but stayed low with fewer AUs again: not the open-AU limit (a write cache filling?)".into()
        }
        (None, Some(open_au::NoCount::InTheNoise)) => format!(
            "a collapse of {:.2}× is within the noise ({:.2}×): no count",
            r.collapse, r.spread
        ),
        (None, _) => format!(
            "no collapse up to {} AUs: no open-AU limit seen (none, more than {}, or hidden by a write cache)",
            r.plan.max_n,
            r.plan.max_n.saturating_sub(2)
        ),
    }
}

/// Throughput by the number of AUs written in turn, and the check again.
fn table(r: &open_au::OpenAuResult) -> TypedTable {
    let mut rows: Vec<Vec<Cell>> = r
        .points
        .iter()
        .map(|p| vec![Cell::Count(p.aus.into()), Cell::MbS(p.mb_per_s)])
        .collect();
    if let Some(c) = r.check {
        rows.push(vec![Cell::CountAgain(c.aus.into()), Cell::MbS(c.mb_per_s)]);
    }
    TypedTable {
        columns: vec![Column::Aus, Column::MbS],
        rows,
    }
}
