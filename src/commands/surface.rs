//! `iocurve surface`: speed and access time against position over the whole
//! device, like a disk-surface scan, so that figures from the first
//! megabytes are not taken for the whole device.

use crate::analysis::surface as analysis;
use crate::cli::SurfaceArgs;
use crate::output::Output;
use crate::result::Payload;
use crate::result::config::SurfaceSettings;
use crate::store::Settings;
use crate::workload::interrupt;
use crate::workload::surface::{self as scan, ScanAsk, ScanPlan};
use anyhow::Result;
use std::sync::atomic::Ordering;

pub fn surface(args: &SurfaceArgs, store: &Settings) -> Result<i32> {
    let started_at = crate::probe::record::now_rfc3339();
    let cfg = crate::cli::config::target_config_of(&args.target)?;
    crate::cli::more::check_threshold(args.threshold)?;
    let writes = cfg.preserve || cfg.destructive;
    let mut target = crate::target::open::open_target(&cfg, writes, 1 << 30)?;
    let ask = ScanAsk {
        samples: args.samples,
        sample_size: args.sample_size,
        bs: args.bs,
        access_reads: args.access_reads,
        seed: cfg.seed,
        writes,
    };
    let plan = ScanPlan::for_target(ask, &target, &cfg.path)?;
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
        result.target.notes.push(crate::result::Caveat::note(why));
    }
    result.interrupted = interrupt::stop_flag().load(Ordering::Relaxed);
    crate::safety::restore::restore(&mut target, &mut result);
    if let Some(path) = &args.svg {
        super::write_chart(path, &crate::report::SurfaceSvg, &result)?;
    }
    let code = Output::for_target(store, &cfg).finish(&result)?;
    drop(target);
    Ok(crate::output::surface_exit_code(code, &result))
}
