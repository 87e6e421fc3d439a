//! `iocurve run`: one workload, exactly as asked.

use super::common;
use crate::cli::RunArgs;
use crate::cli::config::{DEFAULT_AREA, RunConfig, check_layout, resolve_region};
use crate::target::IoMode;
use crate::target::scratch::FillPlan;
use crate::workload::{MeasureSpec, Pattern, cpuload, interrupt};
use anyhow::Result;
use std::sync::atomic::Ordering;

pub fn run(args: &RunArgs) -> Result<i32> {
    let cfg = RunConfig::from_args(args)?;
    let started_at = common::now_rfc3339();
    let wants_write = cfg.rw.writes();
    let area = cfg
        .target
        .offset
        .unwrap_or(0)
        .checked_add(cfg.target.span.unwrap_or(DEFAULT_AREA))
        .ok_or_else(|| {
            crate::error::usage("--offset + --span is beyond any device: give smaller values")
        })?;
    let mut target = common::open_target(&cfg.target, wants_write, area)?;
    let direct = target.info.mode == IoMode::Direct;
    let (offset, span) = resolve_region(
        cfg.target.offset,
        cfg.target.span,
        target.info.size_bytes,
        &target.info.path,
        cfg.block_size,
        u64::from(target.info.logical_block_size),
        direct,
    )?;
    check_layout(
        &cfg,
        span,
        u64::from(target.info.logical_block_size),
        direct,
    )?;
    let fill = FillPlan {
        offset: 0,
        bytes: offset + span,
        min_bytes: offset + span,
        time_limit: None,
        pattern: Pattern::Random,
        seed: cfg.target.seed ^ 0x5eed,
    };
    common::prepare(&mut target, fill, false)?;
    let spec = MeasureSpec {
        rw: cfg.rw,
        mix_read_percent: cfg.mix_read_percent,
        block_size: cfg.block_size,
        queue_depth: cfg.queue_depth,
        threads: cfg.target.threads,
        engine: cfg.engine,
        offset,
        span,
        align: cfg.align,
        // Without --size or --time, the span is moved once (within the time cap).
        size: cfg.size.or_else(|| {
            cfg.default_limits
                .then(|| span / cfg.block_size * cfg.block_size)
        }),
        time: cfg.time,
        ramp: Some(cfg.ramp),
        pattern: cfg.pattern,
        seed: cfg.target.seed,
        seed_given: cfg.target.seed_given,
        verify: cfg.verify,
        buffered: cfg.target.buffered,
    };
    let config = serde_json::to_value(&cfg)?;
    let mut result = common::new_result("run", config, &target, started_at);
    let name = crate::units::format_size(cfg.block_size);
    let preserved = match wants_write {
        true => common::preserve(&cfg.target, &target, offset, span)?,
        false => None,
    };
    let load = cpuload::start_if(args.load.cpu_load);
    let (test, error) = common::measure_repeated(&target, &spec, &name, cfg.repeat, None);
    result.cpu_load = load.map(cpuload::CpuLoad::stop);
    result.tests.push(test);
    result.interrupted = interrupt::stop_flag().load(Ordering::Relaxed);
    result.error = error;
    result.target = target.info.clone();
    common::restore(preserved, &target, &mut result);
    let code = common::finish(&result, cfg.target.json);
    drop(target);
    code
}
