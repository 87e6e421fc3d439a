//! `iocurve surface`: speed and access time against position over the whole
//! device, like a disk-surface scan, so that figures from the first
//! megabytes are not taken for the whole device.

use crate::analysis::surface as analysis;
use crate::cli::SurfaceArgs;
use crate::cli::surface::SurfaceConfig;
use crate::interrupt;
use crate::output::Output;
use crate::result::Payload;
use crate::store::Settings;
use crate::workload::surface::{self as scan, ScanPlan};
use anyhow::Result;
use std::sync::atomic::Ordering;

pub fn surface(args: &SurfaceArgs, store: &Settings) -> Result<i32> {
    let started_at = crate::workload::record::now_rfc3339();
    let cfg = SurfaceConfig::from_args(args)?;
    let mut target = crate::medium::open::open_target(&cfg.target, cfg.writes, 1 << 30)?;
    let plan = ScanPlan::for_target(cfg.ask(args), &target, &cfg.target.path)?;
    if cfg.writes {
        // Exactly the samples the scan will write are journalled.
        target.arm(&plan.regions())?;
    }
    let settings = cfg.settings(args, &plan);
    let planned = Payload::Surface {
        config: settings.clone().into(),
        surface: Default::default(),
    };
    let mut result = crate::workload::record::new_result(planned, &target, started_at);
    let output = Output::for_target(store, &cfg.target);
    output.announce(&result);
    let (samples, error) = scan::scan_all(&target, &plan);
    let size = target.info.size_bytes;
    let surface = analysis::report(samples, size, plan.sample, plan.bs, args.threshold);
    result.payload = Payload::Surface {
        config: settings.into(),
        surface,
    };
    result.target = target.info.clone();
    result.error = error;
    if !cfg.writes {
        let why = crate::medium::open::writes_skipped_because(&target);
        result.target.notes.push(why.caveat());
    }
    result.interrupted = interrupt::stop_flag().load(Ordering::Relaxed);
    crate::medium::restore::restore(&mut target, &mut result);
    if let Some(path) = &args.svg {
        crate::output::write_chart(path, &crate::report::SurfaceSvg, &result)?;
    }
    let code = output.finish(&result)?;
    drop(target);
    Ok(crate::output::surface_exit_code(code, &result))
}
