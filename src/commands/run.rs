//! `iocurve run`: one workload, exactly as asked.

use crate::cli::RunArgs;
use crate::cli::run::{area, check_parallel};
use crate::interrupt;
use crate::output::Output;
use crate::result::Payload;
use crate::store::Settings;
use crate::vocab::config::RunConfig;
use crate::workload::cpuload;
use crate::workload::parallel;
use crate::workload::run_spec::{measure_by_method, prepare_region, spec_of};
use anyhow::Result;
use std::sync::atomic::Ordering;

pub fn run(args: &RunArgs, store: &Settings) -> Result<i32> {
    let cfg = RunConfig::from_args(args)?;
    if cfg.parallel {
        return run_parallel(&cfg, store);
    }
    let started_at = crate::workload::record::now_rfc3339();
    let wants_write = cfg.rw.writes();
    let mut target = crate::medium::open::open_target(&cfg.target, wants_write, area(&cfg)?)?;
    let (blocks, offset, span) = prepare_region(&cfg, &mut target)?;
    let spec = spec_of(&cfg, blocks, offset, span)?;
    let config = cfg.with_blocks(blocks).into();
    let payload = Payload::Run {
        config,
        access: None,
        parallel: None,
    };
    let mut result = crate::workload::record::new_result(payload, &target, started_at);
    let name = crate::units::format_size(blocks.block_size);
    if wants_write {
        target.arm(&[(offset, span)])?;
    }
    let output = Output::for_target(store, &cfg.target);
    output.announce(&result);
    // Under MPI with --read-other-host: another host's rank wrote what
    // this one reads.
    let partner = crate::cluster::partner_target(&cfg, area(&cfg)?)?;
    let load = cpuload::start_if(args.load.cpu_load);
    let measured = measure_by_method(
        &cfg,
        partner.as_ref().unwrap_or(&target),
        &spec,
        &name,
        &mut result,
    );
    result.cpu_load = load.map(cpuload::CpuLoad::stop);
    let (test, error) = match measured {
        Ok(m) => m,
        Err(e) => return Err(crate::medium::restore::restore_after_error(&mut target, e)),
    };
    result.tests.push(test);
    result.interrupted = interrupt::stop_flag().load(Ordering::Relaxed);
    result.error = error;
    result.target = target.info.clone();
    crate::medium::restore::restore(&mut target, &mut result);
    let code = output.finish(&result);
    drop(target);
    code
}

/// `iocurve run A B ... --parallel`: the workload on every target, each
/// alone, then all at once (see [`crate::workload::parallel`]).
fn run_parallel(cfg: &RunConfig, store: &Settings) -> Result<i32> {
    check_parallel(cfg)?;
    let started_at = crate::workload::record::now_rfc3339();
    let output = Output::for_target(store, &cfg.target);
    let result = parallel::run_all(cfg, started_at, &|r| output.announce(r))?;
    output.finish(&result)
}
