//! The findings of `flash cache`: the write cache's size between its net
//! and gross estimate, with the burst and sustained speeds.

use super::assemble;
use crate::flash::cache;
use crate::result::flash::{
    Cell, Column, Confidence, Figure, Finding, FlashReport, Outcome, TypedTable,
};
use crate::vocab::options::FlashTest;

pub(super) fn report(r: &cache::CacheResult) -> FlashReport {
    let mut findings = vec![Finding::of(Figure::Burst {
        mb_per_s: r.burst_mb_s,
    })];
    let seen = match (r.cache_bytes, r.absorbed, r.sustained_mb_s) {
        (Some(c), Some(a), Some(s)) => {
            findings.push(Finding::sure(
                Figure::Cache { bytes: Some(c) },
                r.confidence,
            ));
            findings.push(Finding::of(Figure::Absorbed { bytes: a }));
            findings.push(Finding::of(Figure::Sustained { mb_per_s: s }));
            true
        }
        _ => {
            let none = Figure::Cache { bytes: None };
            findings.push(Finding::sure(none, Confidence::Low));
            false
        }
    };
    let outcome = Outcome::Cache {
        cache_bytes: r.cache_bytes.filter(|_| seen),
        absorbed_bytes: r.absorbed.filter(|_| seen),
        burst_mb_per_s: r.burst_mb_s,
        sustained_mb_per_s: r.sustained_mb_s.filter(|_| seen),
        confidence: match seen {
            true => r.confidence,
            false => Confidence::Low,
        },
        most_bytes: r.plan.max_bytes,
    };
    assemble(FlashTest::Cache, outcome, findings, table(r))
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
