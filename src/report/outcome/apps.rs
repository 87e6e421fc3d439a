//! The outcomes of the application workloads: `sustain` (the drop and the
//! speed on each side of it), `stream` (the deadlines missed) and `files`
//! (the time per file, or per write-call size), as figures and as the one
//! line `history` shows.

use super::figure::{Rows, Unit};
use crate::result::apps::{
    FilesLoadReport, FilesSaveReport, StreamOutcome, StreamReport, SustainReport,
};
use crate::units::{format_latency, format_mbps, format_size_figure};

/// `sustain`: the write, the drop (or that there was none), the levels
/// and every interval.
pub fn sustain(r: &SustainReport, rows: &mut Rows) {
    rows.section("write")
        .word("outcome", if r.drop.is_some() { "drop" } else { "no_drop" })
        .count("written", Unit::Bytes, r.bytes)
        .seconds("elapsed", r.elapsed_ns)
        .real("average", Unit::MbPerS, r.mb_per_s)
        .count("block_size", Unit::Bytes, u64::from(r.block_size))
        .word("ended_by", r.ended_by.as_str());
    if let Some(d) = &r.drop {
        rows.section("drop")
            .count("at", Unit::Bytes, d.bytes_before_drop)
            .count("at_least", Unit::Bytes, d.bytes_low)
            .count("at_most", Unit::Bytes, d.bytes_high)
            .real("at", Unit::S, d.seconds_before_drop)
            .real("before", Unit::MbPerS, d.mb_per_s_before)
            .real("after", Unit::MbPerS, d.mb_per_s_after)
            .real("after_over_before", Unit::Plain, d.ratio)
            .count("at_request", Unit::Plain, d.at_request)
            .count("requests", Unit::Plain, d.requests);
        let sides = [
            ("before_slowest", "before_fastest", d.before_spread),
            ("after_slowest", "after_fastest", d.after_spread),
        ];
        for (slowest, fastest, spread) in sides {
            if let Some(s) = spread {
                rows.section("drop")
                    .real(slowest, Unit::MbPerS, s.min)
                    .real(fastest, Unit::MbPerS, s.max);
            }
        }
        if let Some(c) = d.confidence {
            rows.section("drop").word("confidence", c.name());
        }
    }
    for (i, l) in r.levels.iter().enumerate() {
        rows.row("level", i)
            .count("start", Unit::Bytes, l.bytes_before)
            .count("length", Unit::Bytes, l.bytes)
            .seconds("start", l.start_ns)
            .real("speed", Unit::MbPerS, l.mb_per_s);
    }
    for (i, s) in r.intervals.iter().enumerate() {
        rows.row("interval", i)
            .seconds("start", s.start_ns)
            .count("written_before", Unit::Bytes, s.bytes_before)
            .real("speed", Unit::MbPerS, s.mb_per_s)
            .count("slowest_write", Unit::Ns, s.max_write_ns);
    }
}

/// `drop at 21.2 MiB (0.56 s): 39.7 → 10.0 MB/s`, or the average when
/// the speed held.
pub fn sustain_line(r: &SustainReport) -> String {
    match &r.drop {
        Some(d) => format!(
            "drop at {} ({:.2} s): {} → {} MB/s",
            format_size_figure(d.bytes_before_drop),
            d.seconds_before_drop,
            format_mbps(d.mb_per_s_before),
            format_mbps(d.mb_per_s_after)
        ),
        None => format!(
            "no drop: {} MB/s over {}",
            format_mbps(r.mb_per_s),
            format_size_figure(r.bytes)
        ),
    }
}

/// The figures of one run of a schedule.
fn stream_run(o: &StreamOutcome, rows: &mut Rows) {
    rows.word("outcome", if o.misses == 0 { "kept" } else { "missed" })
        .real("asked", Unit::MbPerS, o.rate_mb_s)
        .real("achieved", Unit::MbPerS, o.achieved_mb_s)
        .count("requests_planned", Unit::Plain, o.requests_planned)
        .count("requests_done", Unit::Plain, o.requests_done)
        .count("misses", Unit::Plain, o.misses)
        .real("missed", Unit::Pct, o.miss_share * 100.0)
        .count("late_starts", Unit::Plain, o.late_starts)
        .count("longest_stall", Unit::Ns, o.longest_stall_ns)
        .count("longest_gap", Unit::Ns, o.longest_gap_ns);
    if let Some(l) = &o.latency {
        rows.count("p99_latency", Unit::Ns, l.p99_ns)
            .count("max_latency", Unit::Ns, l.max_ns);
    }
}

/// `stream`: the run at the asked rate, and the search for the highest.
pub fn stream(r: &StreamReport, rows: &mut Rows) {
    rows.section("stream")
        .word("direction", r.direction.as_str());
    stream_run(&r.outcome, rows);
    if let Some(f) = &r.find_max {
        rows.section("find_max")
            .real("highest_kept", Unit::MbPerS, f.max_rate_mb_s);
        for (i, t) in f.trials.iter().enumerate() {
            rows.row("trial", i);
            stream_run(t, rows);
        }
    }
}

/// `0 of 500 deadlines missed at 10.0 MB/s`, with the longest stall when
/// some were.
pub fn stream_line(r: &StreamReport) -> String {
    let o = &r.outcome;
    let mut line = format!(
        "{} {} of {} deadlines missed at {} MB/s",
        r.direction.as_str(),
        o.misses,
        o.requests_done,
        format_mbps(o.rate_mb_s)
    );
    if o.misses > 0 {
        line.push_str(&format!(
            ", longest stall {}",
            format_latency(o.longest_stall_ns as f64)
        ));
    }
    if let Some(f) = &r.find_max {
        line.push_str(&format!(
            "; highest kept {} MB/s",
            format_mbps(f.max_rate_mb_s)
        ));
    }
    line
}

/// `files load`: the time per file at each size, and the model's fixed
/// cost and bandwidth.
pub fn files_load(r: &FilesLoadReport, rows: &mut Rows) {
    rows.section("load")
        .word("eviction_proved", r.eviction_proved.to_string());
    if let Some(m) = &r.model {
        rows.real("per_file_cost", Unit::S, m.t0_us / 1e6).real(
            "bandwidth",
            Unit::MbPerS,
            m.bandwidth_mb_s,
        );
    }
    for (i, p) in r.points.iter().enumerate() {
        rows.row("size", i)
            .count("file_size", Unit::Bytes, p.size)
            .count("files", Unit::Plain, p.files)
            .count("median_time", Unit::Ns, p.median_ns)
            .count("slowest_time", Unit::Ns, p.max_ns)
            .real("speed", Unit::MbPerS, p.mb_per_s)
            .real("efficiency", Unit::Plain, p.efficiency)
            .maybe("frames_per_file", Unit::Plain, p.frames_per_file);
    }
}

/// `load 4 KiB in 120 µs … 1 MiB in 8.2 ms; 130 MB/s`.
pub fn files_load_line(r: &FilesLoadReport) -> Option<String> {
    let (first, last) = (r.points.first()?, r.points.last()?);
    let time = |ns: u64| format_latency(ns as f64);
    let mut line = format!(
        "load {} in {}",
        format_size_figure(first.size),
        time(first.median_ns)
    );
    if r.points.len() > 1 {
        line.push_str(&format!(
            " … {} in {}",
            format_size_figure(last.size),
            time(last.median_ns)
        ));
    }
    if let Some(m) = &r.model {
        line.push_str(&format!(
            "; per file {}, {} MB/s",
            format_latency(m.t0_us * 1e3),
            format_mbps(m.bandwidth_mb_s)
        ));
    }
    Some(line)
}

/// `files save`: the time of the save at each write-call size.
pub fn files_save(r: &FilesSaveReport, rows: &mut Rows) {
    rows.section("save")
        .count("file_size", Unit::Bytes, r.file_size)
        .word("sync", r.sync.as_str())
        .word("all_verified", r.all_verified.to_string());
    for (i, p) in r.points.iter().enumerate() {
        rows.row("write_size", i)
            .count("write_size", Unit::Bytes, p.write_size)
            .count("total_time", Unit::Ns, p.total_ns)
            .count("write_time", Unit::Ns, p.times.write_ns)
            .count("fsync_time", Unit::Ns, p.times.fsync_ns)
            .real("speed", Unit::MbPerS, p.mb_per_s)
            .count("wrong", Unit::Bytes, p.check.bytes_wrong);
    }
}

/// `save 16 MiB: fastest 64 KiB calls, 20.1 MB/s (slowest 4 KiB, 3.2
/// MB/s)`.
pub fn files_save_line(r: &FilesSaveReport) -> Option<String> {
    let by_speed = |a: &&crate::result::apps::SavePoint, b: &&crate::result::apps::SavePoint| {
        a.mb_per_s.total_cmp(&b.mb_per_s)
    };
    let best = r.points.iter().max_by(by_speed)?;
    let worst = r.points.iter().min_by(by_speed)?;
    let mut line = format!(
        "save {}: fastest {} calls, {} MB/s",
        format_size_figure(r.file_size),
        format_size_figure(best.write_size),
        format_mbps(best.mb_per_s)
    );
    if worst.write_size != best.write_size {
        line.push_str(&format!(
            " (slowest {}, {} MB/s)",
            format_size_figure(worst.write_size),
            format_mbps(worst.mb_per_s)
        ));
    }
    if !r.all_verified {
        line.push_str("; READ-BACK WRONG");
    }
    Some(line)
}
