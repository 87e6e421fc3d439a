//! `iocurve copy SRC DST`: the task people actually wait for, an image
//! written onto a card or disk, with the block size and sync behaviour of
//! imaging tools; each side measured alone too, so the report can say
//! whether the source or the destination held the copy back.

use crate::cli::CopyArgs;
use crate::cli::config::{MAX_BLOCK_SIZE, TargetConfig, target_config_of};
use crate::error::{EXIT_VERIFY, IoFailure, usage};
use crate::output::Output;
use crate::result::Payload;
use crate::result::config::CopySettings;
use crate::store::Settings;
use crate::target::{self, OpenTarget, TargetKind, TargetRequest};
use crate::workload::copy::{self as copier, CopyRequest};
use crate::workload::interrupt;
use anyhow::Result;
use std::fs::File;
use std::sync::atomic::Ordering;

pub fn copy(args: &CopyArgs, store: &Settings) -> Result<i32> {
    refuse_simulated(args)?;
    let started_at = crate::probe::record::now_rfc3339();
    let mut cfg = target_config_of(&args.target)?;
    if args.bs == 0 || args.bs > MAX_BLOCK_SIZE {
        return Err(usage("--bs must be 1 byte to 1 GiB, e.g. 4M (dd bs=4M)"));
    }
    interrupt::install();
    let source = open_source(args, &cfg)?;
    let bytes = source.info.size_bytes;
    create_destination(&mut cfg, bytes)?;
    let mut destination = crate::target::open::open_target(&cfg, true, 0)?;
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
    let mut result = crate::probe::record::new_result(payload, &destination, started_at);
    let request = CopyRequest {
        bs: args.bs,
        sync: args.sync,
        verify: args.verify,
        alone: !args.no_alone,
    };
    let run = match copier::run(&request, &source, &destination) {
        Ok(run) => run,
        Err(e) => {
            return Err(crate::safety::restore::restore_after_error(
                &mut destination,
                e,
            ));
        }
    };
    let mismatch = run.report.verify.as_ref();
    let mismatch = mismatch.is_some_and(|v| v.mismatched_bytes > 0);
    result.tests.extend(run.tests);
    result.error = run.error;
    if let Payload::Copy { copy, .. } = &mut result.payload {
        *copy = Some(run.report);
    }
    result.interrupted = interrupt::stop_flag().load(Ordering::Relaxed);
    crate::safety::restore::restore(&mut destination, &mut result);
    let code = Output::for_target(store, &cfg).finish(&result)?;
    if code == 0 && mismatch {
        eprintln!("Error: the destination differs from the source; see MISMATCH above");
        return Ok(EXIT_VERIFY);
    }
    Ok(code)
}

/// A `sim:` card has no bytes to read an image from nor to keep one in.
fn refuse_simulated(args: &CopyArgs) -> Result<()> {
    crate::target::open::refuse_simulated(&args.source, "copy (SRC)")?;
    crate::target::open::refuse_simulated(&args.target.target, "copy (DST)")
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
