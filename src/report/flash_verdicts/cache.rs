//! The words of `flash cache`: the write cache's size between its net and
//! gross estimate, with the burst and sustained speeds.

use super::assemble;
use crate::flash::{Confidence, Finding, FlashReport, cache};
use crate::units::{format_mbps, format_size};

pub(super) fn report(r: &cache::CacheResult) -> FlashReport {
    let mut findings = vec![Finding::new(
        "burst",
        format!("{} MB/s", format_mbps(r.burst_mb_s)),
        None,
    )];
    let verdict = match (r.cache_bytes, r.absorbed, r.sustained_mb_s) {
        (Some(c), Some(a), Some(s)) => {
            findings.push(Finding::new("cache", format_size(c), Some(r.confidence)));
            findings.push(Finding::new("absorbed", format_size(a), None));
            findings.push(Finding::new(
                "sustained",
                format!("{} MB/s", format_mbps(s)),
                None,
            ));
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
            findings.push(Finding::new(
                "cache",
                "not seen".into(),
                Some(Confidence::Low),
            ));
            format!(
                "no fall in speed within {}: no cache seen (or a larger one)",
                format_size(r.plan.max_bytes)
            )
        }
    };
    assemble("cache", verdict, findings, table(r), false, r)
}

/// Speed of each chunk by the total written so far.
fn table(r: &cache::CacheResult) -> Vec<Vec<String>> {
    let mut table = vec![vec!["written".into(), "MB/s".into()]];
    for (i, s) in r.speeds.iter().enumerate() {
        table.push(vec![
            format_size((i as u64 + 1) * r.plan.chunk),
            format_mbps(*s),
        ]);
    }
    table
}
