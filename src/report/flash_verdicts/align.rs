//! The words of `flash align`: the AU and page found by boundary timing,
//! compared with the kernel's erase size.

use super::{assemble, ns_us};
use crate::flash::{Finding, FlashReport, align};
use crate::units::format_size;

pub(super) fn report(r: &align::AlignResult, kernel: Option<u64>) -> FlashReport {
    let size_or = |v: Option<u64>| v.map_or("not seen".to_string(), format_size);
    let mut au = Finding::new("AU (erase block)", size_or(r.au), Some(r.au_confidence));
    if let Some(k) = kernel {
        let agrees = if r.au == Some(k) { "agrees" } else { "differs" };
        au = au.with_note(format!(
            "kernel preferred_erase_size {} {agrees}",
            format_size(k)
        ));
    }
    let page = Finding::new("page", size_or(r.page), Some(r.page_confidence));
    let verdict = match (r.au, r.page) {
        (Some(a), Some(p)) => format!("AU {}, page {}", format_size(a), format_size(p)),
        (Some(a), None) => format!("AU {}, no page step seen", format_size(a)),
        _ => "no boundary pattern: the geometry cannot be read from timing here".into(),
    };
    assemble("align", verdict, vec![au, page], table(r), false, r)
}

/// Read times before, on and after each candidate boundary.
fn table(r: &align::AlignResult) -> Vec<Vec<String>> {
    let mut table = vec![vec![
        "align".into(),
        "pre µs".into(),
        "on µs".into(),
        "post µs".into(),
        "diff µs".into(),
    ]];
    for row in &r.rows {
        table.push(vec![
            format_size(row.align),
            ns_us(row.before_ns),
            ns_us(row.on_ns),
            ns_us(row.after_ns),
            format!("{:.1}", row.diff_ns as f64 / 1000.0),
        ]);
    }
    table
}
