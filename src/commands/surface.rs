//! `iocurve surface`: speed and access time against position over the whole
//! device, like a disk-surface scan, so that figures from the first
//! megabytes are not taken for the whole device.

use crate::analysis::surface as analysis;
use crate::cli::SurfaceArgs;
use crate::error::usage;
use crate::output::Output;
use crate::result::config::SurfaceSettings;
use crate::result::{Payload, RunResult};
use crate::store::Settings;
use crate::target::TargetKind;
use crate::workload::interrupt;
use crate::workload::surface::{self as scan, ScanAsk, ScanPlan};
use anyhow::Result;
use std::sync::atomic::Ordering;

pub fn surface(args: &SurfaceArgs, store: &Settings) -> Result<i32> {
    let started_at = crate::probe::record::now_rfc3339();
    let cfg = crate::cli::config::target_config_of(&args.target)?;
    if !(1.0..=100.0).contains(&args.threshold) {
        return Err(usage(
            "--threshold is a share of the median in percent: give 1 to 100, e.g. 50",
        ));
    }
    let writes = cfg.preserve || cfg.destructive;
    let mut target = crate::target::open::open_target(&cfg, writes, 1 << 30)?;
    if target.info.kind == TargetKind::Directory {
        return Err(usage(format!(
            "surface scans a whole device or file; {} is a directory: give a device such as /dev/sdb or a file",
            cfg.path.display()
        )));
    }
    let ask = ScanAsk {
        samples: args.samples,
        sample_size: args.sample_size,
        bs: args.bs,
        access_reads: args.access_reads,
        seed: cfg.seed,
        writes,
    };
    let info = &target.info;
    let plan = ScanPlan::new(
        ask,
        info.size_bytes,
        info.logical_block_size.into(),
        &info.path,
    )?;
    if writes {
        // Exactly the samples the scan will write are journalled.
        target.arm(&plan.regions())?;
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
    let (samples, error) = scan::scan_all(&target, &plan);
    let size = target.info.size_bytes;
    let surface = analysis::report(samples, size, plan.sample, plan.bs, args.threshold);
    let mut result =
        crate::probe::record::new_result(Payload::Surface { config, surface }, &target, started_at);
    result.error = error;
    if !writes {
        let why = crate::target::open::writes_skipped_because(&target);
        result.target.notes.push(why);
    }
    result.interrupted = interrupt::stop_flag().load(Ordering::Relaxed);
    crate::safety::restore::restore(&mut target, &mut result);
    if let Some(path) = &args.svg {
        super::write_chart(path, &crate::report::SurfaceSvg, &result)?;
    }
    let code = Output::for_target(store, &cfg).finish(&result)?;
    drop(target);
    Ok(exit_code(code, &result))
}

/// The run's exit code, or 3 when a position failed.
fn exit_code(code: i32, result: &RunResult) -> i32 {
    let surface = result.payload.surface();
    let unread = surface.map_or(0, |s| analysis::failed_positions(&s.samples));
    if code == 0 && unread > 0 {
        eprintln!("Error: {unread} position(s) failed; see the table above");
        return crate::error::EXIT_IO;
    }
    code
}
