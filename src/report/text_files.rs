//! The `files load` and `files save` parts of the text report.

use super::table::{Table, fitted};
use crate::result::apps::{
    EvictionProblem, EvictionProof, FilesLoadReport, FilesSaveReport, LoadMethod, SavePoint,
    SaveSkip,
};
use crate::units::{
    format_latency, format_mbps, format_size_exact, format_size_figure, three_figures,
};
use crate::vocab::options::CopySync;
use std::fmt::Write;

/// Device bytes per file byte from which whole-block rewriting is named:
/// a journal and metadata add a little; twice the file is rewriting.
const RMW_SHARE: f64 = 2.0;

pub fn load_table(out: &mut String, r: &FilesLoadReport) {
    if let Some(method) = &r.method {
        let _ = writeln!(
            out,
            "method      each file opened, read whole by {}, closed",
            method_words(method)
        );
    }
    let mut headers = vec![
        "file size",
        "files",
        "time/file",
        "MB/s",
        "efficiency",
        "vs model",
    ];
    if r.fps.is_some() {
        headers.extend(["B/frame", "frames/file"]);
    }
    let mut table = Table::new(&headers);
    // Efficiency is over the fastest size (so never above 100%), computed
    // here too so that runs stored when it was over the largest read the same.
    let fastest = r.points.iter().map(|p| p.mb_per_s).fold(0.0, f64::max);
    for p in &r.points {
        let efficiency = if fastest > 0.0 {
            p.mb_per_s / fastest
        } else {
            0.0
        };
        let mut row = vec![
            format_size_figure(p.size),
            p.files.to_string(),
            format_latency(p.median_ns as f64),
            format_mbps(p.mb_per_s),
            format!("{:.0}%", efficiency * 100.0),
            p.model_ratio.map_or("-".into(), model_ratio),
        ];
        if r.fps.is_some() {
            row.push(p.bytes_per_frame.map_or("-".into(), |b| format!("{b:.0}")));
            row.push(p.frames_per_file.map_or("-".into(), three_figures));
        }
        table.add_row(row);
    }
    let _ = writeln!(out, "{table}");
    if let Some(m) = &r.model {
        let _ = writeln!(
            out,
            "model       t = t0 + n/B: {} per file, {} MB/s of data; a file of {} loads at half that speed (R² {:.3})",
            format_latency(m.t0_us * 1e3),
            format_mbps(m.bandwidth_mb_s),
            format_size_figure(m.n_half_bytes.round() as u64),
            m.r_squared
        );
    }
    if let Some(fps) = r.fps {
        let _ = writeln!(out, "frames      at {fps} frames per second");
    }
    for p in r.points.iter().filter(|p| !p.eviction.proved) {
        let why = eviction_problem(&p.eviction);
        let _ = writeln!(
            out,
            "CACHE: eviction of the {} files not proved ({why}); their figures may include memory speed",
            format_size_figure(p.size)
        );
    }
    if r.eviction_proved {
        let _ = writeln!(
            out,
            "eviction    proved by mincore for every file before it was read"
        );
    }
}

/// How the file was made durable, as the header line says it.
fn sync_words(sync: CopySync) -> &'static str {
    match sync {
        CopySync::None => "then close, no fsync (the data may still be in the page cache)",
        CopySync::End => "then fsync and close",
        CopySync::Each => "each call O_DSYNC (on the device before the next), then close",
        CopySync::Direct => "each call O_DIRECT, then fsync and close",
    }
}

/// Bytes that reached the device per byte of the file.
fn amplification(p: &SavePoint, file_size: u64) -> Option<f64> {
    let d = p.device.as_ref()?;
    (file_size > 0).then(|| d.write_bytes as f64 / file_size as f64)
}

pub fn save_table(out: &mut String, r: &FilesSaveReport) {
    let line = format!(
        "file        {} per write-call size, {}",
        format_size_figure(r.file_size),
        sync_words(r.sync)
    );
    let _ = writeln!(out, "{}", fitted(&line));
    // Compact columns, each time naming its own unit, so that a slow
    // device's times (seconds per size on a FUSE-backed disk) and many
    // sizes still fit 100 columns. The read-back column is shown only when
    // a size failed it: the `verify` line below says when all passed.
    let any_wrong = r.points.iter().any(|p| !p.check.ok());
    let read_back = if any_wrong { "read back" } else { "" };
    let headers = [
        "call", "calls", "total", "MB/s", "write", "fsync", "close", "reqs", "bytes", "× file",
        read_back,
    ];
    let mut table = Table::new(&headers);
    table.groups(&[("", 7), ("at the device", 3)]);
    let time = |ns: u64| format_latency(ns as f64);
    for p in &r.points {
        let (reqs, bytes) = p.device.as_ref().map_or(("-".into(), "-".into()), |d| {
            (
                d.write_requests.to_string(),
                format_size_figure(d.write_bytes),
            )
        });
        let verified = match (p.check.ok(), any_wrong) {
            (true, true) => "ok".to_string(),
            (true, false) => String::new(),
            (false, _) => format!("{} B WRONG", p.check.bytes_wrong),
        };
        let to_device = amplification(p, r.file_size).map_or("-".into(), |a| format!("{a:.2}×"));
        table.add_row(vec![
            format_size_exact(p.write_size),
            p.times.calls.to_string(),
            time(p.total_ns),
            format_mbps(p.mb_per_s),
            time(p.times.write_ns),
            time(p.times.fsync_ns),
            time(p.times.close_ns),
            reqs,
            bytes,
            to_device,
            verified,
        ]);
    }
    let _ = writeln!(out, "{table}");
    save_notes(out, r);
}

/// Below the save table: the sizes not measured, read-modify-write when
/// the calls caused it, and the read-back verdict.
fn save_notes(out: &mut String, r: &FilesSaveReport) {
    for s in &r.skipped {
        let line = format!(
            "{:<11} {}",
            format_size_exact(s.write_size),
            save_skip_words(&s.why)
        );
        let _ = writeln!(out, "{}", fitted(&line));
    }
    // Only when every call went to the device on its own do extra bytes
    // mean the calls themselves were rewritten; with one fsync at the end
    // they are the journal and metadata.
    let calls_reach_device = matches!(r.sync, CopySync::Each | CopySync::Direct);
    if let Some((p, a)) = r
        .points
        .iter()
        .filter_map(|p| Some((p, amplification(p, r.file_size)?)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .filter(|(_, a)| calls_reach_device && *a >= RMW_SHARE)
    {
        let line = format!(
            "device      {a:.1}× the file's bytes reached the device with {} calls: each call rewrote whole blocks (read-modify-write)",
            format_size_exact(p.write_size)
        );
        let _ = writeln!(out, "{}", fitted(&line));
    }
    let _ = writeln!(
        out,
        "verify      {}",
        if r.all_verified {
            "every byte of every file read back right (from an evicted cache)"
        } else {
            "BAD: some bytes read back differ from what was written"
        }
    );
}

/// Measured over modelled speed, as every table prints it: `1.02×`.
pub(super) fn model_ratio(ratio: f64) -> String {
    format!("{ratio:.2}×")
}
/// How `files load` read each file, in words.
pub fn method_words(m: &LoadMethod) -> String {
    match m {
        LoadMethod::Read => "read(2) into one buffer".into(),
        LoadMethod::Mmap => "mmap page faults".into(),
        LoadMethod::Stdio { call_bytes } => format!("stdio fread of {call_bytes} bytes per call"),
        LoadMethod::Stored(words) => words.clone(),
    }
}

/// Why a write-call size of `files save` was not measured.
pub fn save_skip_words(s: &SaveSkip) -> String {
    match s {
        SaveSkip::DirectUnaligned { align_bytes } => format!(
            "not measured: O_DIRECT needs write calls and a file size in whole {align_bytes}-byte blocks; `--sync each` measures this size"
        ),
        SaveSkip::Stored(words) => words.clone(),
    }
}

/// Why the eviction of a size's files was not shown.
pub fn eviction_problem(e: &EvictionProof) -> String {
    match &e.problem {
        None => "unknown".into(),
        Some(EvictionProblem::Failed { path, os_error }) => format!("{path}: {os_error}"),
        Some(EvictionProblem::PagesStayed) => format!(
            "{} of {} pages stayed in the page cache after eviction (tmpfs and some network file systems keep them)",
            e.resident_pages, e.total_pages
        ),
        Some(EvictionProblem::Stored(words)) => words.clone(),
    }
}
