//! The outcomes of the commands that measure the device itself: `surface`
//! (its positions and slow regions), `copy` (the bottleneck), `endure` (the
//! cycles), and the one line `history` shows for them and for a curve and
//! a flash test.

use super::figure::{Rows, Unit};
use crate::result::CurveReport;
use crate::result::device::{CopyReport, EndureReport, SurfaceReport};
use crate::result::flash::FlashReport;
use crate::units::{format_latency, format_mbps, format_size_figure};

/// `surface`: the summary, each slow region and each position.
pub fn surface(r: &SurfaceReport, rows: &mut Rows) {
    let errors = r.samples.iter().filter(|s| s.error.is_some()).count();
    rows.section("surface")
        .word(
            "outcome",
            if r.slow_regions.is_empty() {
                "even"
            } else {
                "slow_regions"
            },
        )
        .count("positions", Unit::Plain, r.samples.len() as u64)
        .count("device", Unit::Bytes, r.device_bytes)
        .real("median_read", Unit::MbPerS, r.median_read_mb_s)
        .real("slow_below", Unit::Pct, r.threshold_percent)
        .count("slow_regions", Unit::Plain, r.slow_regions.len() as u64)
        .count("errors", Unit::Plain, errors as u64)
        .maybe("outer_over_inner", Unit::Plain, r.outer_inner_ratio);
    for (i, s) in r.slow_regions.iter().enumerate() {
        rows.row("slow_region", i)
            .count("start", Unit::Bytes, s.start)
            .count("end", Unit::Bytes, s.end)
            .real("start", Unit::Pct, s.start_percent)
            .real("end", Unit::Pct, s.end_percent)
            .count("positions", Unit::Plain, s.samples as u64)
            .real("slowest_read", Unit::MbPerS, s.min_mb_s);
    }
    for (i, s) in r.samples.iter().enumerate() {
        rows.row("position", i)
            .count("offset", Unit::Bytes, s.offset)
            .real("offset", Unit::Pct, s.percent)
            .real("read", Unit::MbPerS, s.read_mb_s)
            .maybe("access", Unit::Ns, s.access_ns.map(|n| n as f64))
            .maybe("write", Unit::MbPerS, s.write_mb_s);
        if let Some(e) = &s.error {
            rows.word("error", e.clone());
        }
    }
}

/// `64 positions, median read 20.0 MB/s; 2 slow regions: 30–32%, 80–81%`.
pub fn surface_line(r: &SurfaceReport) -> String {
    let mut line = format!(
        "{} positions, median read {} MB/s",
        r.samples.len(),
        format_mbps(r.median_read_mb_s)
    );
    match r.slow_regions.len() {
        0 => line.push_str("; no slow region"),
        n => {
            let at: Vec<String> = r
                .slow_regions
                .iter()
                .take(3)
                .map(|s| format!("{:.0}–{:.0}%", s.start_percent, s.end_percent))
                .collect();
            let more = if n > 3 { ", …" } else { "" };
            line.push_str(&format!("; {n} slow region(s): {}{more}", at.join(", ")));
        }
    }
    line
}

/// `copy`: its speed, each side alone, and the bottleneck.
pub fn copy(r: &CopyReport, rows: &mut Rows) {
    rows.section("copy")
        .word("bottleneck", r.bottleneck.map_or("unknown", |b| b.as_str()))
        .count("copied", Unit::Bytes, r.bytes)
        .seconds("elapsed", r.elapsed_ns)
        .real("speed", Unit::MbPerS, r.mb_per_s)
        .maybe("source_read_alone", Unit::MbPerS, r.source_read_mb_s)
        .maybe(
            "destination_write_alone",
            Unit::MbPerS,
            r.destination_write_mb_s,
        )
        .maybe("serial_estimate", Unit::MbPerS, r.serial_estimate_mb_s)
        .count("final_sync", Unit::Ns, r.sync_ns);
    if let Some(v) = &r.verify {
        rows.count("compared", Unit::Bytes, v.compared_bytes).count(
            "mismatched",
            Unit::Bytes,
            v.mismatched_bytes,
        );
    }
}

/// `40.0 MB/s; bottleneck destination (write alone 12.0 MB/s)`.
pub fn copy_line(r: &CopyReport) -> String {
    let mut line = format!(
        "copied {} at {} MB/s",
        format_size_figure(r.bytes),
        format_mbps(r.mb_per_s)
    );
    if let Some(b) = r.bottleneck {
        let alone = match b {
            crate::result::Bottleneck::Source => r.source_read_mb_s.map(|v| ("read", v)),
            crate::result::Bottleneck::Destination => {
                r.destination_write_mb_s.map(|v| ("write", v))
            }
        };
        line.push_str(&format!("; bottleneck {}", b.as_str()));
        if let Some((what, v)) = alone {
            line.push_str(&format!(" ({what} alone {} MB/s)", format_mbps(v)));
        }
    }
    if r.verify.as_ref().is_some_and(|v| v.mismatched_bytes > 0) {
        line.push_str("; MISMATCH");
    }
    line
}

/// `endure`: the totals and each cycle.
pub fn endure(r: &EndureReport, rows: &mut Rows) {
    let bad: u64 = r.cycles.iter().map(|c| c.verify.bad()).sum();
    rows.section("endure")
        .word(
            "outcome",
            if bad == 0 {
                "no_bad_blocks"
            } else {
                "bad_blocks"
            },
        )
        .count("cycles_asked", Unit::Plain, u64::from(r.cycles_asked))
        .count("cycles_run", Unit::Plain, r.cycles.len() as u64)
        .count("bad_blocks", Unit::Plain, bad)
        .count("span", Unit::Bytes, r.span)
        .word("stopped_at_error", r.stopped_at_error.to_string());
    for (i, c) in r.cycles.iter().enumerate() {
        rows.row("cycle", i)
            .count("cycle", Unit::Plain, u64::from(c.cycle))
            .real("write", Unit::MbPerS, c.write_mb_s)
            .maybe("read", Unit::MbPerS, c.read_mb_s)
            .count("bad_blocks", Unit::Plain, c.verify.bad())
            .word("complete", c.complete.to_string());
        if let Some(e) = &c.error {
            rows.word("error", e.clone());
        }
    }
}

/// `3 of 3 cycles, 0 bad blocks; write 10.0–10.1 MB/s`.
pub fn endure_line(r: &EndureReport) -> String {
    let bad: u64 = r.cycles.iter().map(|c| c.verify.bad()).sum();
    let writes = r.cycles.iter().map(|c| c.write_mb_s);
    let (low, high) = writes.fold((f64::INFINITY, 0f64), |(l, h), w| (l.min(w), h.max(w)));
    let mut line = format!(
        "{} of {} cycles, {bad} bad block(s)",
        r.cycles.len(),
        r.cycles_asked
    );
    if !r.cycles.is_empty() {
        line.push_str(&format!(
            "; write {}–{} MB/s",
            format_mbps(low),
            format_mbps(high)
        ));
    }
    line
}

/// Each series' bandwidth and fixed cost: `randread 45.0 MB/s t0 120 µs ·
/// write …`.
pub fn curve_line(r: &CurveReport) -> Option<String> {
    let parts: Vec<String> = r
        .series
        .iter()
        .filter_map(|s| {
            let m = s.model.as_ref()?;
            let mut part = format!(
                "{} {} MB/s t0 {}",
                s.pattern.name(),
                format_mbps(m.bandwidth_mb_s),
                format_latency(m.t0_us * 1e3)
            );
            if let Some(a) = &s.advice {
                part.push_str(&format!(", use ≥ {}", format_size_figure(a.size)));
            }
            Some(part)
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// A flash test's verdict: the report's one-line answer, made from the
/// typed outcome by the same words every format uses.
pub fn flash_line(r: &FlashReport) -> String {
    crate::report::flash_verdicts::outcome::headline(r)
}
