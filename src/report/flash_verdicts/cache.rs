//! The words of `flash cache`: the write cache's size between its net and
//! gross estimate, with the burst and sustained speeds.

use super::{assemble, finding};
use crate::flash::{Confidence, FlashReport, cache};
use crate::result::flash::{Cell, Column, Figure, TypedTable};
use crate::units::{format_mbps, format_size};
use crate::vocab::options::FlashTest;

pub(super) fn report(r: &cache::CacheResult) -> FlashReport {
    let mut findings = vec![finding(Figure::Burst { mb_s: r.burst_mb_s }, None)];
    let verdict = match (r.cache_bytes, r.absorbed, r.sustained_mb_s) {
        (Some(c), Some(a), Some(s)) => {
            findings.push(finding(
                Figure::Cache { bytes: Some(c) },
                Some(r.confidence),
            ));
            findings.push(finding(Figure::Absorbed { bytes: a }, None));
            findings.push(finding(Figure::Sustained { mb_s: s }, None));
            // The net size assumes the cache drained at the sustained speed
            // while it filled; a cache that does not drain then holds all
            // that was absorbed. Both are named.
            format!(
                "write cache of {}–{} ({} if it drains while it fills): {} MB/s, then {} MB/s",
                format_size(c),
                format_size(a.max(c)),
                format_size(c),
                format_mbps(r.burst_mb_s),
                format_mbps(s)
            )
        }
        _ => {
            findings.push(finding(
                Figure::Cache { bytes: None },
                Some(Confidence::Low),
            ));
            format!(
                "no fall in speed within {}: no cache seen (or a larger one)",
                format_size(r.plan.max_bytes)
            )
        }
    };
    assemble(FlashTest::Cache, verdict, findings, table(r), false, r)
}

/// Speed of each chunk by the total written so far.
fn table(r: &cache::CacheResult) -> TypedTable {
    TypedTable {
        columns: vec![Column::Written, Column::MbS],
        rows: r
            .speeds
            .iter()
            .enumerate()
            .map(|(i, s)| vec![Cell::Bytes((i as u64 + 1) * r.plan.chunk), Cell::MbS(*s)])
            .collect(),
    }
}
