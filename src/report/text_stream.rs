//! The `stream` part of the text report.

use crate::result::apps::StreamOutcome;
use crate::result::apps::StreamReport;
use crate::units::{format_latency, format_mbps, format_size_figure};

/// A time with its unit, three significant figures: `0 µs`, `13.1 ms`.
fn with_unit(ns: f64) -> String {
    format_latency(ns)
}
use std::fmt::Write;

pub fn stream_block(out: &mut String, r: &StreamReport) {
    let o = &r.outcome;
    let schedule = match r.fps {
        Some(fps) => format!(
            "{fps} frames/s of {}",
            format_size_figure(u64::from(o.chunk))
        ),
        None => format!(
            "{} MB/s in {} requests",
            format_mbps(o.rate_mb_s),
            format_size_figure(u64::from(o.chunk))
        ),
    };
    let _ = writeln!(
        out,
        "schedule    {} {schedule}, one every {}, deadline {} after the scheduled start",
        r.direction.as_str(),
        with_unit(o.period_ns as f64),
        with_unit(o.deadline_ns as f64)
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
                "  trial     {:>8} MB/s: {} misses of {}, longest stall {}",
                format_mbps(t.rate_mb_s),
                t.misses,
                t.requests_done,
                with_unit(t.longest_stall_ns as f64)
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
        "deadlines   {} missed ({}%) {verdict}; longest stall {}; longest gap between completions {}",
        o.misses,
        crate::units::three_figures(o.miss_share * 100.0),
        with_unit(o.longest_stall_ns as f64),
        with_unit(o.longest_gap_ns as f64)
    );
    if let Some(l) = &o.latency {
        // Each figure names its unit, so a sub-millisecond p50 beside a
        // stalled max stays readable.
        let _ = writeln!(
            out,
            "latency     p50 {}  p90 {}  p99 {}  p99.9 {}  max {}\n            (each from its request's scheduled start)",
            with_unit(l.p50_ns as f64),
            with_unit(l.p90_ns as f64),
            with_unit(l.p99_ns as f64),
            with_unit(l.p99_9_ns as f64),
            with_unit(l.max_ns as f64)
        );
    }
    let _ = writeln!(
        out,
        "jitter      {} (standard deviation of that latency); {} requests started late, behind a slow one",
        with_unit(o.jitter_ns),
        o.late_starts
    );
    for w in &o.warnings {
        let _ = writeln!(out, "warning: {}", super::caveats::line(w));
    }
}
