//! The `stream` part of the text report.

use crate::app_result::StreamReport;
use crate::units::{format_latency_ns, format_mbps, format_size};
use crate::workload::stream::StreamOutcome;
use std::fmt::Write;

pub fn stream_block(out: &mut String, r: &StreamReport) {
    let o = &r.outcome;
    let schedule = match r.fps {
        Some(fps) => format!("{fps} frames/s of {}", format_size(u64::from(o.chunk))),
        None => format!(
            "{} MB/s in {} requests",
            format_mbps(o.rate_mb_s),
            format_size(u64::from(o.chunk))
        ),
    };
    let _ = writeln!(
        out,
        "schedule    {} {schedule}, one every {} µs, deadline {} µs after the scheduled start",
        r.direction,
        format_latency_ns(o.period_ns as f64),
        format_latency_ns(o.deadline_ns as f64)
    );
    outcome_lines(out, o);
    if let Some(f) = &r.find_max {
        let _ = writeln!(
            out,
            "find-max    highest rate with no miss: {} MB/s ({} trials)",
            format_mbps(f.max_rate_mb_s),
            f.trials.len()
        );
        for t in &f.trials {
            let _ = writeln!(
                out,
                "  trial     {:>8} MB/s: {} misses of {}, longest stall {} µs",
                format_mbps(t.rate_mb_s),
                t.misses,
                t.requests_done,
                format_latency_ns(t.longest_stall_ns as f64)
            );
        }
    }
}

fn outcome_lines(out: &mut String, o: &StreamOutcome) {
    let _ = writeln!(
        out,
        "requests    {} of {} done, {} MB/s delivered",
        o.requests_done,
        o.requests_planned,
        format_mbps(o.achieved_mb_s)
    );
    let verdict = if o.misses == 0 { "none" } else { "MISSED" };
    let _ = writeln!(
        out,
        "deadlines   {} missed ({:.2}%) {verdict}; longest stall {} µs; longest gap between completions {} µs",
        o.misses,
        o.miss_share * 100.0,
        format_latency_ns(o.longest_stall_ns as f64),
        format_latency_ns(o.longest_gap_ns as f64)
    );
    if let Some(l) = &o.latency {
        let _ = writeln!(
            out,
            "latency     from the scheduled start (µs): p50 {}  p90 {}  p99 {}  p99.9 {}  max {}",
            format_latency_ns(l.p50_ns as f64),
            format_latency_ns(l.p90_ns as f64),
            format_latency_ns(l.p99_ns as f64),
            format_latency_ns(l.p99_9_ns as f64),
            format_latency_ns(l.max_ns as f64)
        );
    }
    let _ = writeln!(
        out,
        "jitter      {} µs (standard deviation of that latency); {} requests started late, behind a slow one",
        format_latency_ns(o.jitter_ns),
        o.late_starts
    );
}
