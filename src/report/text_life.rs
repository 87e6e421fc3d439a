//! The text of the optional sections: surface scans, parallel runs, image
//! copies, endurance cycles and the access method of a run.

use super::table::Table;
use crate::result::Payload;
use crate::result::device::{AccessInfo, CopyReport, EndureReport, ParallelReport, SurfaceReport};
use crate::units::{format_latency, format_mbps, format_size_figure};
use crate::vocab::options::ReadMethod;
use std::fmt::Write;

/// What a run does to its target, which names the call its access method
/// makes: `pread` reads, `pwrite` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Reads,
    Writes,
    Both,
}

/// Appends every section present (the access method named as for reads).
pub fn sections(out: &mut String, p: &Payload) {
    sections_of_run(out, p, Direction::Reads);
}

/// Appends every section present, the access method named for what the
/// run did (`pwrite` on a write run, not `pread`).
pub fn sections_of_run(out: &mut String, p: &Payload, direction: Direction) {
    match p {
        Payload::Run {
            access, parallel, ..
        } => {
            if let Some(a) = access {
                access_line(out, a, direction);
            }
            if let Some(x) = parallel {
                self::parallel(out, x);
            }
        }
        Payload::Profile {
            parallel: Some(x), ..
        } => parallel(out, x),
        Payload::Surface { surface: x, .. } => surface(out, x),
        Payload::Copy { copy: Some(c), .. } => copy(out, c),
        Payload::Endure { endure: e, .. } => endure(out, e),
        _ => {}
    }
}

/// The call an access method makes in this direction: the engines' `pread`
/// writes with `pwrite`; mmap and stdio keep their names.
fn method_name(method: ReadMethod, direction: Direction) -> String {
    match (method, direction) {
        (ReadMethod::Pread, Direction::Writes) => "pwrite".into(),
        (ReadMethod::Pread, Direction::Both) => "pread and pwrite".into(),
        (other, _) => other.as_str().to_string(),
    }
}

fn access_line(out: &mut String, a: &AccessInfo, direction: Direction) {
    let buffer = match (a.call_bytes, a.library_buffer_bytes) {
        (Some(call), Some(lib)) => format!(
            ", fread calls of {} into the C library's {} buffer",
            format_size_figure(call),
            format_size_figure(lib)
        ),
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "method      {} · {} per request (from {}){buffer}",
        method_name(a.method, direction),
        format_size_figure(a.block_size),
        a.block_size_from
    );
}

/// A time with its own unit, `-` when there is none.
fn opt_time(ns: Option<u64>) -> String {
    ns.map_or("-".into(), |n| format_latency(n as f64))
}

fn surface(out: &mut String, s: &SurfaceReport) {
    let _ = writeln!(
        out,
        "surface     {} positions over {}, {} read at each in {} requests; median {} MB/s",
        s.samples.len(),
        format_size_figure(s.device_bytes),
        format_size_figure(s.sample_bytes),
        format_size_figure(s.block_size),
        format_mbps(s.median_read_mb_s)
    );
    let mut table = Table::new(&[
        "position",
        "offset",
        "read MB/s",
        "access",
        "write MB/s",
        "",
    ]);
    table.align(5, super::table::Align::Left);
    for p in &s.samples {
        table.add_row(vec![
            format!("{:.1}%", p.percent),
            format_size_figure(p.offset),
            format_mbps(p.read_mb_s),
            opt_time(p.access_ns),
            p.write_mb_s.map_or("-".into(), format_mbps),
            p.error.clone().unwrap_or_default(),
        ]);
    }
    let _ = writeln!(out, "{table}");
    if let Some(r) = s.outer_inner_ratio {
        let _ = writeln!(
            out,
            "outer/inner {r:.2} (first tenth of the device over the last tenth)"
        );
    }
    if s.slow_regions.is_empty() {
        let _ = writeln!(
            out,
            "slow        none below {:.0}% of the median",
            s.threshold_percent
        );
    }
    for r in &s.slow_regions {
        let _ = writeln!(
            out,
            "SLOW        {:.1}%–{:.1}% ({}..{}): {} position(s) below {:.0}% of the median, down to {} MB/s",
            r.start_percent,
            r.end_percent,
            format_size_figure(r.start),
            format_size_figure(r.end),
            r.samples,
            s.threshold_percent,
            format_mbps(r.min_mb_s)
        );
    }
}

fn parallel(out: &mut String, p: &ParallelReport) {
    let _ = writeln!(out, "parallel    {} targets at once", p.targets.len());
    let mut table = Table::new(&["test", "target", "alone MB/s", "together MB/s"]);
    table.align(1, super::table::Align::Left);
    for t in &p.tests {
        for d in &t.devices {
            table.add_row(vec![
                format!("{} {}", t.name, t.rw.name()),
                d.target.clone(),
                d.alone_mb_s.map_or("-".into(), format_mbps),
                d.together_mb_s.map_or("-".into(), format_mbps),
            ]);
        }
        let efficiency = t
            .efficiency
            .map_or("-".into(), |e| format!("{:.0}% of the sum", e * 100.0));
        table.add_row(vec![
            format!("{} {}", t.name, t.rw.name()),
            "aggregate".into(),
            format_mbps(t.sum_alone_mb_s),
            format!("{} ({efficiency})", format_mbps(t.aggregate_mb_s)),
        ]);
    }
    let _ = writeln!(out, "{table}");
}

fn copy(out: &mut String, c: &CopyReport) {
    let _ = writeln!(
        out,
        "copy        {} → {}: {} in {:.2} s = {} MB/s ({} blocks, sync {}; final sync {:.2} s)",
        c.source,
        c.destination,
        format_size_figure(c.bytes),
        c.elapsed_ns as f64 / 1e9,
        format_mbps(c.mb_per_s),
        format_size_figure(c.block_size),
        c.sync.as_str(),
        c.sync_ns as f64 / 1e9
    );
    let alone = |v: Option<f64>| {
        v.map_or("not measured".into(), |m| {
            format!("{} MB/s", format_mbps(m))
        })
    };
    let _ = writeln!(out, "source      read alone {}", alone(c.source_read_mb_s));
    let _ = writeln!(
        out,
        "destination write alone {}",
        alone(c.destination_write_mb_s)
    );
    if let Some(s) = c.serial_estimate_mb_s {
        let _ = writeln!(
            out,
            "serial      a copy that reads, then writes each block would reach {} MB/s",
            format_mbps(s)
        );
    }
    if let Some(b) = &c.bottleneck {
        let _ = writeln!(out, "BOTTLENECK  the {b} (the slower side alone)");
    }
    if let Some(v) = &c.verify {
        match v.first_mismatch {
            None => {
                let _ = writeln!(
                    out,
                    "verified    {} read back, identical to the source",
                    format_size_figure(v.compared_bytes)
                );
            }
            Some(at) => {
                let _ = writeln!(
                    out,
                    "MISMATCH    {} of {} bytes differ from the source, the first at offset {at}",
                    v.mismatched_bytes, v.compared_bytes
                );
            }
        }
    }
}

fn endure(out: &mut String, e: &EndureReport) {
    let _ = writeln!(
        out,
        "endure      {} of {} cycles over {} at offset {} in {} blocks",
        e.cycles.iter().filter(|c| c.complete).count(),
        e.cycles_asked,
        format_size_figure(e.span),
        format_size_figure(e.offset),
        format_size_figure(e.block_size)
    );
    let headers = [
        "cycle",
        "MB/s",
        "p50",
        "p99",
        "MB/s",
        "p50",
        "p99",
        "ok",
        "changed",
        "aliased",
        "corrupted",
    ];
    let mut table = Table::new(&headers);
    table.groups(&[("", 1), ("write", 3), ("read", 3), ("blocks read back", 4)]);
    for c in &e.cycles {
        let pct = |l: &Option<crate::stats::LatencySummary>, p99: bool| {
            opt_time(l.as_ref().map(|l| if p99 { l.p99_ns } else { l.p50_ns }))
        };
        table.add_row(vec![
            format!("{}{}", c.cycle, if c.complete { "" } else { " (cut)" }),
            format_mbps(c.write_mb_s),
            pct(&c.write_latency, false),
            pct(&c.write_latency, true),
            c.read_mb_s.map_or("-".into(), format_mbps),
            pct(&c.read_latency, false),
            pct(&c.read_latency, true),
            c.verify.ok.to_string(),
            c.verify.changed.to_string(),
            c.verify.aliased.to_string(),
            c.verify.corrupted.to_string(),
        ]);
    }
    let _ = writeln!(out, "{table}");
    bad_cycles(out, e);
}

/// A line for each cycle that read back bad blocks or failed, and whether
/// the run stopped there.
fn bad_cycles(out: &mut String, e: &EndureReport) {
    for c in e
        .cycles
        .iter()
        .filter(|c| c.verify.bad() > 0 || c.error.is_some())
    {
        let first: Vec<String> = c
            .verify
            .first_bad
            .iter()
            .map(|b| format!("{} ({:?})", b.offset, b.verdict))
            .collect();
        let _ = writeln!(
            out,
            "BAD         cycle {}: {} bad block(s){}{}",
            c.cycle,
            c.verify.bad(),
            if first.is_empty() {
                String::new()
            } else {
                format!(", first at {}", first.join(", "))
            },
            c.error.as_ref().map_or(String::new(), |e| format!("; {e}"))
        );
    }
    if e.stopped_at_error {
        let _ = writeln!(out, "STOPPED     at the first bad cycle (--stop-on-error)");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::config::Recorded;
    use crate::result::device::{CopyVerify, SlowRegion, SurfaceSample};
    use crate::vocab::options::CopySync;

    #[test]
    fn a_surface_names_its_slow_region_and_ratio() {
        let sample = |offset, mb| SurfaceSample {
            offset,
            percent: offset as f64,
            read_mb_s: mb,
            access_ns: Some(1_500_000),
            write_mb_s: None,
            error: None,
        };
        let s = Payload::Surface {
            config: Recorded::Stored(serde_json::Value::Null),
            surface: SurfaceReport {
                device_bytes: 100,
                sample_bytes: 1,
                block_size: 1,
                samples: vec![sample(0, 90.0), sample(50, 10.0), sample(99, 45.0)],
                median_read_mb_s: 45.0,
                threshold_percent: 50.0,
                slow_regions: vec![SlowRegion {
                    start: 50,
                    end: 51,
                    start_percent: 50.0,
                    end_percent: 51.0,
                    samples: 1,
                    min_mb_s: 10.0,
                }],
                outer_inner_ratio: Some(2.0),
            },
        };
        let mut out = String::new();
        sections(&mut out, &s);
        assert!(out.contains("SLOW        50.0%–51.0%"), "{out}");
        assert!(out.contains("outer/inner 2.00"), "{out}");
        assert!(out.contains("1.50 ms") || out.contains("1500"), "{out}");
    }

    #[test]
    fn a_copy_names_its_bottleneck_and_verdict() {
        let s = Payload::Copy {
            config: Recorded::Stored(serde_json::Value::Null),
            copy: Some(CopyReport {
                source: "a.img".into(),
                destination: "/dev/sdz".into(),
                bytes: 4 << 20,
                block_size: 4 << 20,
                sync: CopySync::End,
                elapsed_ns: 2_000_000_000,
                mb_per_s: 2.1,
                sync_ns: 500_000_000,
                source_read_mb_s: Some(100.0),
                destination_write_mb_s: Some(2.5),
                serial_estimate_mb_s: Some(2.44),
                bottleneck: Some(crate::result::Bottleneck::Destination),
                verify: Some(CopyVerify {
                    compared_bytes: 4 << 20,
                    mismatched_bytes: 0,
                    first_mismatch: None,
                }),
            }),
        };
        let mut out = String::new();
        sections(&mut out, &s);
        assert!(out.contains("BOTTLENECK  the destination"), "{out}");
        assert!(out.contains("identical to the source"), "{out}");
    }
}
