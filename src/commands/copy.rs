//! `iocurve copy SRC DST`: the task people actually wait for, an image
//! written onto a card or disk, with the block size and sync behaviour of
//! imaging tools; each side measured alone too, so the report can say
//! whether the source or the destination held the copy back.

use super::common;
use super::surface::plain_spec;
use crate::cli::CopyArgs;
use crate::cli::config::{MAX_BLOCK_SIZE, TargetConfig, target_config_of};
use crate::cli::options::CopySync;
use crate::engine::MonotonicClock;
use crate::engine::buffer::AlignedBuf;
use crate::error::{EXIT_VERIFY, IoFailure, usage};
use crate::report::progress;
use crate::result::Payload;
use crate::result::RunResult;
use crate::result::config::CopySettings;
use crate::result::device::{CopyReport, CopyVerify};
use crate::target::{self, IoMode, OpenTarget, TargetKind, TargetRequest};
use crate::workload::copy::{self as copier, CopyIo};
use crate::workload::job::PaddedCounter;
use crate::workload::{Rw, interrupt};
use anyhow::Result;
use std::fs::File;
use std::os::fd::AsFd;
use std::sync::atomic::Ordering;

pub fn copy(args: &CopyArgs) -> Result<i32> {
    refuse_simulated(args)?;
    let started_at = common::now_rfc3339();
    let mut cfg = target_config_of(&args.target)?;
    if args.bs == 0 || args.bs > MAX_BLOCK_SIZE {
        return Err(usage("--bs must be 1 byte to 1 GiB, e.g. 4M (dd bs=4M)"));
    }
    interrupt::install();
    let source = open_source(args, &cfg)?;
    let bytes = source.info.size_bytes;
    create_destination(&mut cfg, bytes)?;
    let mut destination = common::open_target(&cfg, true, 0)?;
    check_destination(&destination, bytes, args)?;
    destination.arm(&[(0, bytes)])?;
    let config = CopySettings {
        source: args.source.clone(),
        target: cfg.clone(),
        block_size: args.bs,
        sync: args.sync,
        verify: args.verify,
    }
    .into();
    let payload = Payload::Copy { config, copy: None };
    let mut result = common::new_result(payload, &destination, started_at);
    let report = run_copy(args, &source, &destination, &mut result);
    let mismatch = report
        .as_ref()
        .ok()
        .and_then(|r| r.verify.as_ref())
        .is_some_and(|v| v.mismatched_bytes > 0);
    match report {
        Ok(r) => {
            if let Payload::Copy { copy, .. } = &mut result.payload {
                *copy = Some(r);
            }
        }
        Err(e) => return Err(common::restore_after_error(&mut destination, e)),
    }
    result.interrupted = interrupt::stop_flag().load(Ordering::Relaxed);
    common::restore(&mut destination, &mut result);
    let code = common::finish(&result, cfg.json)?;
    if code == 0 && mismatch {
        eprintln!("Error: the destination differs from the source; see MISMATCH above");
        return Ok(EXIT_VERIFY);
    }
    Ok(code)
}

/// A `sim:` card has no bytes to read an image from nor to keep one in.
fn refuse_simulated(args: &CopyArgs) -> Result<()> {
    common::refuse_simulated(&args.source, "copy (SRC)")?;
    common::refuse_simulated(&args.target.target, "copy (DST)")
}

fn open_source(args: &CopyArgs, cfg: &TargetConfig) -> Result<OpenTarget> {
    let source = target::open(&TargetRequest {
        path: args.source.clone(),
        want_write: false,
        buffered: cfg.buffered(),
        destructive: false,
        preserve: false,
        journal_dir: None,
        scratch_size: 0,
    })?;
    if source.info.kind == TargetKind::Directory {
        return Err(usage(format!(
            "copy reads an image file or a device; {} is a directory",
            args.source.display()
        )));
    }
    Ok(source)
}

/// A destination file that does not exist yet is made, as large as the
/// image: nothing can be lost by writing it.
fn create_destination(cfg: &mut TargetConfig, bytes: u64) -> Result<()> {
    if cfg.path.exists() {
        return Ok(());
    }
    let file = File::create_new(&cfg.path).map_err(|e| {
        IoFailure::new(
            format!("cannot create {}: {e}", cfg.path.display()),
            Some(e),
        )
    })?;
    file.set_len(bytes)?;
    // iocurve made it: nothing to preserve, nothing to lose.
    cfg.destructive = true;
    cfg.preserve = false;
    Ok(())
}

fn check_destination(dst: &OpenTarget, bytes: u64, args: &CopyArgs) -> Result<()> {
    if dst.info.kind == TargetKind::Directory {
        return Err(usage(
            "the destination of copy is a file or a device, not a directory: name the file to write",
        ));
    }
    if dst.info.size_bytes < bytes {
        return Err(usage(format!(
            "{} ({} bytes) is smaller than the image {} ({bytes} bytes)",
            dst.info.path,
            dst.info.size_bytes,
            args.source.display()
        )));
    }
    Ok(())
}

/// The descriptor the copy writes through, as `--sync` asks: the page
/// cache (none, end), synchronous writes (each), or O_DIRECT (direct).
fn writer(args: &CopyArgs, dst: &OpenTarget) -> Result<Option<File>> {
    if args.sync == CopySync::Direct && dst.info.mode == IoMode::Direct {
        return Ok(None);
    }
    Ok(Some(dst.writer()?.reopen_cached(args.sync.open_flags())?))
}

fn run_copy(
    args: &CopyArgs,
    source: &OpenTarget,
    dst: &OpenTarget,
    result: &mut RunResult,
) -> Result<CopyReport> {
    let bytes = source.info.size_bytes;
    let lb = u64::from(
        source
            .info
            .logical_block_size
            .max(dst.info.logical_block_size),
    )
    .max(512);
    let bs = args.bs.max(lb).div_ceil(lb) * lb;
    let (read_alone, write_alone) = match args.no_alone {
        true => (None, None),
        false => measure_alone(source, dst, bytes, bs, result),
    };
    let tail_file = dst.reopen_buffered()?;
    let writer = writer(args, dst)?;
    let direct = writer.is_none();
    let io = CopyIo {
        source: source.fd(),
        destination: writer.as_ref().map_or(dst.fd(), |f| f.as_fd()),
        tail: direct.then(|| tail_file.as_fd()),
        logical_block: if direct { lb } else { 1 },
        read_block: lb,
        bytes,
        sync_at_end: args.sync.syncs_at_end(),
    };
    let mut buf = AlignedBuf::new(bs as usize, source.align.max(dst.align));
    let counter = PaddedCounter::default();
    let goal = progress::Goal::Bytes(bytes);
    let bar = progress::bar("copy", goal);
    let out = progress::track(&bar, goal, std::slice::from_ref(&counter), 0, || {
        copier::copy(
            &io,
            &mut buf,
            interrupt::stop_flag(),
            &counter,
            MonotonicClock::new(),
        )
    });
    bar.finish_and_clear();
    if let Some(e) = &out.error {
        result.error = Some(common::io_failure_message(e));
    }
    let verify = match args.verify && out.error.is_none() && out.bytes == bytes {
        true => Some(verify(source, dst, bytes, &mut buf, lb)?),
        false => None,
    };
    let bottleneck = match (read_alone, write_alone) {
        (Some(r), Some(w)) => Some(if r < w { "source" } else { "destination" }.to_string()),
        _ => None,
    };
    Ok(CopyReport {
        source: source.info.path.clone(),
        destination: dst.info.path.clone(),
        bytes: out.bytes,
        block_size: bs,
        sync: args.sync.as_str().to_string(),
        elapsed_ns: out.elapsed_ns,
        mb_per_s: crate::units::mb_per_s(out.bytes, out.elapsed_ns),
        sync_ns: out.sync_ns,
        source_read_mb_s: read_alone,
        destination_write_mb_s: write_alone,
        serial_estimate_mb_s: read_alone
            .zip(write_alone)
            .filter(|(r, w)| *r > 0.0 && *w > 0.0)
            .map(|(r, w)| 1.0 / (1.0 / r + 1.0 / w)),
        bottleneck,
        verify,
    })
}

/// Reads the source and writes the destination, each alone, over the
/// image's whole blocks (O_DIRECT where the target allows it); the tests
/// go into the result.
fn measure_alone(
    source: &OpenTarget,
    dst: &OpenTarget,
    bytes: u64,
    bs: u64,
    result: &mut RunResult,
) -> (Option<f64>, Option<f64>) {
    let whole = bytes / bs * bs;
    if whole == 0 {
        return (None, None);
    }
    let mut speeds = [None, None];
    for (i, (target, rw, name)) in [
        (source, Rw::Read, "source read alone"),
        (dst, Rw::Write, "destination write alone"),
    ]
    .into_iter()
    .enumerate()
    {
        let spec = match plain_spec(rw, bs, (0, whole), whole, 0x1ace) {
            Ok(spec) => spec,
            Err(e) => {
                result.error = Some(e.to_string());
                break;
            }
        };
        let (test, error) = common::measure_repeated(target, &spec, name, 1, None);
        speeds[i] = test.mb_per_s.map(|s| s.median).filter(|_| error.is_none());
        result.tests.push(test);
        if error.is_some() || interrupt::stop_flag().load(Ordering::Relaxed) {
            result.error = result.error.take().or(error);
            break;
        }
    }
    (speeds[0], speeds[1])
}

/// The destination read back past the page cache and compared byte by byte.
fn verify(
    source: &OpenTarget,
    dst: &OpenTarget,
    bytes: u64,
    buf: &mut AlignedBuf,
    lb: u64,
) -> Result<CopyVerify> {
    if dst.info.mode == IoMode::Buffered {
        let _ = rustix::fs::fdatasync(dst.fd());
        let _ = rustix::fs::fadvise(dst.fd(), 0, None, rustix::fs::Advice::DontNeed);
    }
    let mut other = AlignedBuf::new(buf.len(), source.align.max(dst.align));
    let (mismatched, first) = copier::compare(source.fd(), dst.fd(), bytes, (buf, &mut other), lb)
        .map_err(|e| IoFailure::new(format!("verify: {e}"), None))?;
    Ok(CopyVerify {
        compared_bytes: bytes,
        mismatched_bytes: mismatched,
        first_mismatch: first,
    })
}
