//! `iocurve run`: one workload, exactly as asked.

use super::common;
use crate::cli::RunArgs;
use crate::cli::config::{DEFAULT_AREA, RunBlocks, RunConfig, check_layout, resolve_region};
use crate::cli::options::{BlockSize, ReadMethod};
use crate::result::device::AccessInfo;
use crate::result::{Payload, RunResult, TestResult};
use crate::target::scratch::FillPlan;
use crate::target::{IoMode, OpenTarget};
use crate::workload::runner::MeasureTarget;
use crate::workload::{MeasureSpec, Pattern, SpecError, SpecRequest, cpuload, interrupt};
use anyhow::Result;
use std::os::fd::AsFd;
use std::sync::atomic::Ordering;

pub fn run(args: &RunArgs) -> Result<i32> {
    let cfg = RunConfig::from_args(args)?;
    if cfg.parallel {
        return super::parallel::run(&cfg);
    }
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
    let blocks = resolve_blocks(&cfg, &target)?;
    let direct = target.info.mode == IoMode::Direct;
    let (offset, span) = resolve_region(
        cfg.target.offset,
        cfg.target.span,
        target.info.size_bytes,
        &target.info.path,
        blocks.block_size,
        u64::from(target.info.logical_block_size),
        direct,
    )?;
    check_layout(
        &cfg,
        blocks,
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
    let spec = spec_of(&cfg, blocks, offset, span)?;
    let config = cfg.with_blocks(blocks).into();
    let payload = Payload::Run {
        config,
        access: None,
        parallel: None,
    };
    let mut result = common::new_result(payload, &target, started_at);
    let name = crate::units::format_size(blocks.block_size);
    if wants_write {
        target.arm(&[(offset, span)])?;
    }
    let load = cpuload::start_if(args.load.cpu_load);
    let measured = measure_by_method(&cfg, &target, &spec, &name, &mut result);
    result.cpu_load = load.map(cpuload::CpuLoad::stop);
    let (test, error) = match measured {
        Ok(m) => m,
        Err(e) => return Err(common::restore_after_error(&mut target, e)),
    };
    result.tests.push(test);
    result.interrupted = interrupt::stop_flag().load(Ordering::Relaxed);
    result.error = error;
    result.target = target.info.clone();
    common::restore(&mut target, &mut result);
    let code = common::finish(&result, cfg.target.json);
    drop(target);
    code
}

/// The request sizes of the run on this target: `--bs max` asks the device
/// beneath it for its largest request.
pub(super) fn resolve_blocks(cfg: &RunConfig, target: &OpenTarget) -> Result<RunBlocks> {
    let device_max = target
        .info
        .device
        .as_ref()
        .and_then(|d| d.max_transfer_bytes());
    cfg.resolve_blocks(device_max, &target.info.path)
}

/// Measures with pread (the engines) on the target's own descriptor, or
/// with mmap or stdio on a second descriptor through the page cache (both
/// need it), which is evicted before each read pass; records the method.
fn measure_by_method(
    cfg: &RunConfig,
    target: &OpenTarget,
    spec: &MeasureSpec,
    name: &str,
    result: &mut RunResult,
) -> Result<(TestResult, Option<String>)> {
    let mut access = AccessInfo {
        method: cfg.method.as_str().to_string(),
        call_bytes: None,
        library_buffer_bytes: None,
        block_size: spec.block_size,
        block_size_from: match cfg.bs {
            BlockSize::DeviceMax => "max_sectors_kb".into(),
            BlockSize::Bytes(_) => "--bs".into(),
        },
    };
    let method = cfg.method.as_str();
    if cfg.method != ReadMethod::Pread {
        common::refuse_simulated(&cfg.target.path, &format!("--method {method}"))?;
    }
    if cfg.method == ReadMethod::Pread {
        result.payload.set_access(access);
        return Ok(common::measure_repeated(
            target, spec, name, cfg.repeat, None,
        ));
    }
    let file = target.reopen_buffered()?;
    if cfg.method == ReadMethod::Stdio {
        access.call_bytes = Some(cfg.stdio_bs);
        access.library_buffer_bytes = Some(crate::engine::access::stdio_buffer_bytes(file.as_fd()));
    }
    result.payload.set_access(access);
    let mt = MeasureTarget {
        fd: file.as_fd(),
        align: target.align,
        device: target.info.device.as_ref(),
        sim: None,
    };
    let spec = MeasureSpec::new(SpecRequest {
        io: IoMode::Buffered,
        ..spec.request()
    })?;
    let name = format!("{name} {method}");
    Ok(common::measure_repeated_on(
        &mt, &spec, &name, cfg.repeat, None,
    ))
}

/// The measurement `run` asks for over a region.
pub(super) fn spec_of(
    cfg: &RunConfig,
    blocks: RunBlocks,
    offset: u64,
    span: u64,
) -> Result<MeasureSpec, SpecError> {
    MeasureSpec::new(SpecRequest {
        rw: cfg.rw,
        mix_read_percent: cfg.mix_read_percent,
        block_size: blocks.block_size,
        queue_depth: cfg.queue_depth,
        threads: cfg.target.threads,
        engine: cfg.engine,
        offset,
        span,
        align: blocks.align,
        // Without --size or --time, the span is moved once (within the time cap).
        size: blocks.size.or_else(|| {
            cfg.default_limits
                .then(|| span / blocks.block_size * blocks.block_size)
        }),
        time: cfg.time,
        ramp: Some(cfg.ramp),
        pattern: cfg.pattern,
        seed: cfg.target.seed,
        seed_given: cfg.target.seed_given,
        verify: cfg.verify,
        io: cfg.target.io_mode,
    })
}
