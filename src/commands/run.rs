//! `iocurve run`: one workload, exactly as asked.

use crate::cli::RunArgs;
use crate::cli::config::{DEFAULT_AREA, RunConfig};
use crate::cli::options::ReadMethod;
use crate::output::Output;
use crate::report::progress;
use crate::result::Payload;
use crate::store::Settings;
use crate::workload::parallel;
use crate::workload::run_spec::{measure_by_method, prepare_region, spec_of};
use crate::workload::{cpuload, interrupt};
use anyhow::Result;
use std::sync::atomic::Ordering;

pub fn run(args: &RunArgs, store: &Settings) -> Result<i32> {
    let cfg = RunConfig::from_args(args)?;
    if cfg.parallel {
        return run_parallel(&cfg, store);
    }
    let started_at = crate::probe::record::now_rfc3339();
    let wants_write = cfg.rw.writes();
    let area = cfg
        .target
        .offset
        .unwrap_or(0)
        .checked_add(cfg.target.span.unwrap_or(DEFAULT_AREA))
        .ok_or_else(|| {
            crate::error::usage("--offset + --span is beyond any device: give smaller values")
        })?;
    let mut target = crate::target::open::open_target(&cfg.target, wants_write, area)?;
    let (blocks, offset, span) = prepare_region(&cfg, &mut target)?;
    let spec = spec_of(&cfg, blocks, offset, span)?;
    let config = cfg.with_blocks(blocks).into();
    let payload = Payload::Run {
        config,
        access: None,
        parallel: None,
    };
    let mut result = crate::probe::record::new_result(payload, &target, started_at);
    let name = crate::units::format_size(blocks.block_size);
    if wants_write {
        target.arm(&[(offset, span)])?;
    }
    let load = cpuload::start_if(args.load.cpu_load);
    let measured = measure_by_method(&cfg, &target, &spec, &name, &mut result);
    result.cpu_load = load.map(cpuload::CpuLoad::stop);
    let (test, error) = match measured {
        Ok(m) => m,
        Err(e) => return Err(crate::safety::restore::restore_after_error(&mut target, e)),
    };
    result.tests.push(test);
    result.interrupted = interrupt::stop_flag().load(Ordering::Relaxed);
    result.error = error;
    result.target = target.info.clone();
    crate::safety::restore::restore(&mut target, &mut result);
    let code = Output::for_target(store, &cfg.target).finish(&result);
    drop(target);
    code
}

/// `iocurve run A B ... --parallel`: the workload on every target, each
/// alone, then all at once (see [`crate::workload::parallel`]).
fn run_parallel(cfg: &RunConfig, store: &Settings) -> Result<i32> {
    if cfg.method != ReadMethod::Pread {
        return Err(crate::error::usage(
            "--method mmap or stdio measures one target at a time: leave out --parallel",
        ));
    }
    let started_at = crate::probe::record::now_rfc3339();
    let (members, specs) = parallel::open_run_members(cfg)?;
    let payload = Payload::Run {
        config: cfg.clone().into(),
        access: None,
        parallel: None,
    };
    let mut result = crate::probe::record::new_result(payload, &members[0].target, started_at);
    let bar = progress::bar("parallel", progress::Goal::Bytes(0));
    let name = crate::units::format_size(specs[0].block_size);
    let mut report = parallel::new_report(&members);
    let test = parallel::alone_and_together(&members, &specs, &name, cfg.repeat, &bar, &mut result);
    report.tests.push(test);
    bar.finish_and_clear();
    parallel::close(members, report, &mut result);
    Output::for_target(store, &cfg.target).finish(&result)
}
