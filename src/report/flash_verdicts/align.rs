//! The words of `flash align`: the AU and page found by boundary timing,
//! compared with the kernel's erase size.

use super::{assemble, finding};
use crate::flash::{FlashReport, align};
use crate::result::flash::{Cell, Column, Figure, TypedTable};
use crate::units::format_size;
use crate::vocab::options::FlashTest;

pub(super) fn report(r: &align::AlignResult, kernel: Option<u64>) -> FlashReport {
    let au = finding(
        Figure::Au {
            bytes: r.au,
            kernel,
        },
        Some(r.au_confidence),
    );
    let page = finding(Figure::Page { bytes: r.page }, Some(r.page_confidence));
    let verdict = match (r.au, r.page) {
        (Some(a), Some(p)) => format!("AU {}, page {}", format_size(a), format_size(p)),
        (Some(a), None) => format!("AU {}, no page step seen", format_size(a)),
        _ => "no boundary pattern: the geometry cannot be read from timing here".into(),
    };
    assemble(
        FlashTest::Align,
        verdict,
        vec![au, page],
        table(r),
        false,
        r,
    )
}

/// Read times before, on and after each candidate boundary.
fn table(r: &align::AlignResult) -> TypedTable {
    let ns = |v: u64| Cell::Nanoseconds(v as i64);
    TypedTable {
        columns: vec![
            Column::Boundary,
            Column::BeforeUs,
            Column::OnUs,
            Column::AfterUs,
            Column::DiffUs,
        ],
        rows: r
            .rows
            .iter()
            .map(|row| {
                vec![
                    Cell::Bytes(row.align),
                    ns(row.before_ns),
                    ns(row.on_ns),
                    ns(row.after_ns),
                    Cell::Nanoseconds(row.diff_ns),
                ]
            })
            .collect(),
    }
}
