//! `iocurve surface`: speed and access time against position over the whole
//! device, like a disk-surface scan, so that figures from the first
//! megabytes are not taken for the whole device.

use super::common;
use crate::analysis::surface as scan;
use crate::cli::SurfaceArgs;
use crate::cli::config::TargetConfig;
use crate::engine::EngineKind;
use crate::error::usage;
use crate::report::progress;
use crate::result::Payload;
use crate::result::config::SurfaceSettings;
use crate::result::device::{SurfaceReport, SurfaceSample};
use crate::target::{IoMode, OpenTarget, TargetKind};
use crate::workload::{MeasureSpec, Pattern, Rw, SpecError, SpecRequest, interrupt};
use anyhow::Result;
use indicatif::ProgressBar;
use std::sync::atomic::Ordering;

/// Size of the random reads that time access.
const ACCESS_BYTES: u64 = 4096;

/// A plain one-job, one-in-flight measurement of `size` bytes over a region,
/// with no warm-up: the form every step of surface, copy and endure takes.
pub(super) fn plain_spec(
    rw: Rw,
    bs: u64,
    region: (u64, u64),
    size: u64,
    seed: u64,
) -> Result<MeasureSpec, SpecError> {
    MeasureSpec::new(SpecRequest {
        rw,
        mix_read_percent: 0,
        block_size: bs,
        queue_depth: 1,
        threads: 1,
        engine: EngineKind::Sync,
        offset: region.0,
        span: region.1,
        align: if rw.is_random() { ACCESS_BYTES } else { bs },
        size: Some(size / bs * bs),
        time: None,
        ramp: None,
        pattern: Pattern::Random,
        seed,
        seed_given: true,
        verify: false,
        io: IoMode::Direct,
    })
}

/// What one scan needs once the target is open.
struct Plan {
    positions: Vec<u64>,
    sample: u64,
    bs: u64,
    /// Stretch around each position where access reads land.
    band: u64,
    writes: bool,
}

pub fn surface(args: &SurfaceArgs) -> Result<i32> {
    let started_at = common::now_rfc3339();
    let cfg = crate::cli::config::target_config_of(&args.target)?;
    if !(1.0..=100.0).contains(&args.threshold) {
        return Err(usage(
            "--threshold is a share of the median in percent: give 1 to 100, e.g. 50",
        ));
    }
    let writes = cfg.preserve || cfg.destructive;
    let mut target = common::open_target(&cfg, writes, 1 << 30)?;
    if target.info.kind == TargetKind::Directory {
        return Err(usage(format!(
            "surface scans a whole device or file; {} is a directory: give a device such as /dev/sdb or a file",
            cfg.path.display()
        )));
    }
    let plan = plan(args, &target, writes)?;
    if writes {
        // Exactly the samples the scan will write are journalled.
        let regions: Vec<(u64, u64)> = plan.positions.iter().map(|&o| (o, plan.sample)).collect();
        target.arm(&regions)?;
    }
    let config = SurfaceSettings {
        target: cfg.clone(),
        samples: args.samples,
        sample_bytes: plan.sample,
        block_size: plan.bs,
        access_reads: args.access_reads,
        threshold_percent: args.threshold,
    }
    .into();
    let (samples, error) = scan_all(args, &cfg, &mut target, &plan);
    let surface = report(args, &target, &plan, samples);
    let mut result = common::new_result(Payload::Surface { config, surface }, &target, started_at);
    result.error = error;
    if !writes {
        result
            .target
            .notes
            .push(common::writes_skipped_because(&target));
    }
    result.interrupted = interrupt::stop_flag().load(Ordering::Relaxed);
    common::restore(&mut target, &mut result);
    if let Some(path) = &args.svg {
        super::write_chart(path, &crate::report::SurfaceSvg, &result)?;
    }
    let code = common::finish(&result, cfg.json)?;
    drop(target);
    let unread = result
        .payload
        .surface()
        .into_iter()
        .flat_map(|s| &s.samples)
        .filter(|s| s.error.is_some())
        .count();
    if code == 0 && unread > 0 {
        eprintln!("Error: {unread} position(s) failed; see the table above");
        return Ok(crate::error::EXIT_IO);
    }
    Ok(code)
}

fn plan(args: &SurfaceArgs, target: &OpenTarget, writes: bool) -> Result<Plan> {
    let size = target.info.size_bytes;
    let lb = u64::from(target.info.logical_block_size).max(512);
    let sample = args.sample_size.min(size) / lb * lb;
    let bs = args.bs.min(sample) / lb * lb;
    if sample == 0 || bs == 0 {
        return Err(usage(format!(
            "--sample-size and --bs must hold at least one {lb}-byte block of {}",
            target.info.path
        )));
    }
    let positions = scan::positions(size, sample, args.samples, lb.max(ACCESS_BYTES));
    let band = (size / u64::from(args.samples)).clamp(sample, size);
    Ok(Plan {
        positions,
        sample,
        bs,
        band,
        writes,
    })
}

fn scan_all(
    args: &SurfaceArgs,
    cfg: &TargetConfig,
    target: &mut OpenTarget,
    plan: &Plan,
) -> (Vec<SurfaceSample>, Option<String>) {
    let bar = progress::bar(
        "surface",
        progress::Goal::Bytes(plan.positions.len() as u64),
    );
    let mut samples = Vec::with_capacity(plan.positions.len());
    let mut error = None;
    for (i, &offset) in plan.positions.iter().enumerate() {
        let s = scan_one(args, cfg, target, plan, offset, &bar);
        bar.set_position(i as u64 + 1);
        let failed = s.error.clone();
        samples.push(s);
        if interrupt::stop_flag().load(Ordering::Relaxed) {
            break;
        }
        if let Some(e) = failed.filter(|_| plan.writes) {
            // A failed write leaves the rest of the scan unsafe to go on.
            error = Some(e);
            break;
        }
    }
    bar.finish_and_clear();
    (samples, error)
}

/// Reads (and writes) one position; an I/O error marks the sample and the
/// scan goes on (a read error is a finding, not the end).
fn scan_one(
    args: &SurfaceArgs,
    cfg: &TargetConfig,
    target: &OpenTarget,
    plan: &Plan,
    offset: u64,
    bar: &ProgressBar,
) -> SurfaceSample {
    let size = target.info.size_bytes;
    let mut s = SurfaceSample {
        offset,
        percent: scan::percent(offset, size),
        read_mb_s: 0.0,
        access_ns: None,
        write_mb_s: None,
        error: None,
    };
    let region = (offset, plan.sample);
    let read = match plain_spec(Rw::Read, plan.bs, region, plan.sample, cfg.seed) {
        Ok(spec) => spec,
        Err(e) => {
            return SurfaceSample {
                error: Some(e.to_string()),
                ..s
            };
        }
    };
    match common::measure(target, &read, "surface read", Some(bar)) {
        Ok(m) => s.read_mb_s = m.mb_per_s,
        Err(f) => s.error = Some(common::io_failure_message(&f.error)),
    }
    let band = (offset, plan.band.min(size - offset));
    // A target smaller than one access read has no access time.
    if args.access_reads > 0 && s.error.is_none() && band.1 >= ACCESS_BYTES {
        let bytes = u64::from(args.access_reads) * ACCESS_BYTES;
        match plain_spec(Rw::RandRead, ACCESS_BYTES, band, bytes, cfg.seed ^ offset) {
            Ok(spec) => match common::measure(target, &spec, "surface access", Some(bar)) {
                Ok(m) => s.access_ns = m.latency.map(|l| l.p50_ns),
                Err(f) => s.error = Some(common::io_failure_message(&f.error)),
            },
            Err(e) => s.error = Some(e.to_string()),
        }
    }
    if plan.writes && s.error.is_none() {
        match plain_spec(Rw::Write, plan.bs, region, plan.sample, cfg.seed) {
            Ok(write) => match common::measure(target, &write, "surface write", Some(bar)) {
                Ok(m) => s.write_mb_s = Some(m.mb_per_s),
                Err(f) => s.error = Some(common::io_failure_message(&f.error)),
            },
            Err(e) => s.error = Some(e.to_string()),
        }
    }
    s
}

fn report(
    args: &SurfaceArgs,
    target: &OpenTarget,
    plan: &Plan,
    samples: Vec<SurfaceSample>,
) -> SurfaceReport {
    let size = target.info.size_bytes;
    let median = scan::median_read(&samples);
    SurfaceReport {
        device_bytes: size,
        sample_bytes: plan.sample,
        block_size: plan.bs,
        median_read_mb_s: median,
        threshold_percent: args.threshold,
        slow_regions: scan::slow_regions(&samples, plan.sample, size, median, args.threshold),
        outer_inner_ratio: scan::outer_inner_ratio(&samples),
        samples,
    }
}
