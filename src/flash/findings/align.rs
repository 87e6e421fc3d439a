//! The findings of `flash align`: the AU and page found by boundary
//! timing, beside the kernel's erase size.

use super::assemble;
use crate::analysis::flash::align::AlignResult;
use crate::result::flash::FlashReport;
use crate::result::flash::{Cell, Column, Figure, Finding, Outcome, TypedTable};
use crate::vocab::options::FlashTest;

pub(super) fn report(r: &AlignResult, kernel: Option<u64>) -> FlashReport {
    let au = Finding::sure(
        Figure::Au {
            bytes: r.au,
            kernel_bytes: kernel,
        },
        r.au_confidence,
    );
    let page = Finding::sure(Figure::Page { bytes: r.page }, r.page_confidence);
    let outcome = Outcome::Geometry {
        au_bytes: r.au,
        au_confidence: r.au_confidence,
        page_bytes: r.page,
        page_confidence: r.page_confidence,
    };
    assemble(FlashTest::Align, outcome, vec![au, page], table(r))
}

/// Read times before, on and after each candidate boundary.
fn table(r: &AlignResult) -> TypedTable {
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
