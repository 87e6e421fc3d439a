//! The measurement `iocurve run` asks for: its request sizes on the opened
//! target (`--bs max` needs the device), its [`MeasureSpec`] over a region,
//! and the read method it goes through (pread on the target's own
//! descriptor; mmap or stdio through the page cache). `run --parallel`
//! measures the same spec on every device, so it lives here rather than in
//! either command.

use crate::medium::MeasureTarget;
use crate::medium::OpenTarget;
use crate::result::device::AccessInfo;
use crate::result::{RunResult, TestResult};
use crate::vocab::config::{RunBlocks, RunConfig, check_layout, resolve_region};
use crate::vocab::options::IoMode;
use crate::vocab::options::{BlockSize, ReadMethod};
use crate::workload::{MeasureSpec, SpecError, SpecRequest};
use anyhow::Result;
use std::os::fd::AsFd;

/// The request sizes of the run on this target: `--bs max` asks the device
/// beneath it for its largest request.
pub fn resolve_blocks(cfg: &RunConfig, target: &OpenTarget) -> Result<RunBlocks> {
    let device_max = target
        .info
        .device
        .as_ref()
        .and_then(|d| d.max_transfer_bytes());
    cfg.resolve_blocks(device_max, &target.info.path)
}

/// The steps of `run` that need the opened target: the request sizes, the
/// region checked against the device and the layout, and the preparation
/// pass over it (scratch files only). Returns the sizes and the region.
pub fn prepare_region(cfg: &RunConfig, target: &mut OpenTarget) -> Result<(RunBlocks, u64, u64)> {
    let blocks = resolve_blocks(cfg, target)?;
    let direct = target.info.mode == IoMode::Direct;
    let lb = u64::from(target.info.logical_block_size);
    let (offset, span) = resolve_region(
        cfg.target.offset,
        cfg.target.span,
        target.info.size_bytes,
        &target.info.path,
        blocks.block_size,
        lb,
        direct,
    )?;
    check_layout(cfg, blocks, span, lb, direct)?;
    let fill = crate::workload::prepare::whole_fill(0, offset + span, cfg.target.seed);
    crate::workload::prepare::prepare(target, fill, false)?;
    Ok((blocks, offset, span))
}

/// The measurement `run` asks for over a region.
pub fn spec_of(
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
        sqpoll: cfg.target.sqpoll,
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

/// What the result records about the read method before anything is read.
fn access_info(cfg: &RunConfig, spec: &MeasureSpec) -> AccessInfo {
    AccessInfo {
        method: cfg.method,
        call_bytes: None,
        library_buffer_bytes: None,
        block_size: spec.block_size,
        block_size_from: match cfg.bs {
            BlockSize::DeviceMax => crate::result::device::BlockSizeFrom::MaxSectorsKb,
            BlockSize::Bytes(_) => crate::result::device::BlockSizeFrom::Bs,
        },
    }
}

/// Measures with pread (the engines) on the target's own descriptor, or
/// with mmap or stdio on a second descriptor through the page cache (both
/// need it), which is evicted before each read pass; records the method.
pub fn measure_by_method(
    cfg: &RunConfig,
    target: &OpenTarget,
    spec: &MeasureSpec,
    name: &str,
    result: &mut RunResult,
) -> Result<(TestResult, Option<String>)> {
    let mut access = access_info(cfg, spec);
    let method = cfg.method.as_str();
    if cfg.method != ReadMethod::Pread {
        crate::medium::open::refuse_simulated(&cfg.target.path, &format!("--method {method}"))?;
    }
    if cfg.method == ReadMethod::Pread {
        result.payload.set_access(access);
        return Ok(crate::workload::repeat::measure_repeated(
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
    Ok(crate::workload::repeat::measure_repeated_on(
        &mt, &spec, &name, cfg.repeat, None,
    ))
}
