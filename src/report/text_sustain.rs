//! The `sustain` part of the text report: totals, the drop, and a compact
//! bar per interval (at most [`MAX_ROWS`] rows, intervals merged to fit).

use crate::app_result::SustainReport;
use crate::units::{format_mbps, format_size};
use std::fmt::Write;

/// Rows of the terminal chart.
const MAX_ROWS: usize = 30;
const BAR_WIDTH: f64 = 40.0;

pub fn sustain_block(out: &mut String, r: &SustainReport) {
    let _ = writeln!(
        out,
        "written     {} in {:.1} s, {} MB/s on average, writes of {}; ended by {}",
        format_size(r.bytes),
        r.elapsed_ns as f64 / 1e9,
        format_mbps(r.mb_per_s),
        format_size(u64::from(r.block_size)),
        r.ended_by
    );
    match &r.drop {
        Some(d) => {
            let _ = writeln!(
                out,
                "DROP        after {} ({:.1} s): {} MB/s before, {} MB/s after ({:.0}% of before)",
                format_size(d.bytes_before_drop),
                d.seconds_before_drop,
                format_mbps(d.mb_per_s_before),
                format_mbps(d.mb_per_s_after),
                d.ratio * 100.0
            );
        }
        None => {
            let _ = writeln!(
                out,
                "drop        none found: the speed held over the whole write"
            );
        }
    }
    chart(out, r);
    for m in &r.marks {
        let _ = writeln!(
            out,
            "  up to {:>10}: {} MB/s",
            format_size(m.bytes_end),
            format_mbps(m.mb_per_s)
        );
    }
}

fn chart(out: &mut String, r: &SustainReport) {
    let n = r.intervals.len();
    if n == 0 {
        return;
    }
    let per_row = n.div_ceil(MAX_ROWS);
    let peak = r.intervals.iter().map(|i| i.mb_per_s).fold(0.0, f64::max);
    for group in r.intervals.chunks(per_row) {
        let bytes: u64 = group.iter().map(|i| i.bytes).sum();
        let ns = group.last().map_or(0, |i| i.end_ns) - group[0].start_ns;
        let mbps = crate::units::mb_per_s(bytes, ns);
        let width = if peak > 0.0 {
            (mbps / peak * BAR_WIDTH).round() as usize
        } else {
            0
        };
        let _ = writeln!(
            out,
            "  {:>7.1} s {:>10} {:>8} MB/s {}",
            group[0].start_ns as f64 / 1e9,
            format_size(group[0].bytes_before),
            format_mbps(mbps),
            "█".repeat(width)
        );
    }
}
