//! `iocurve copy SRC DST`: the task people actually wait for, an image
//! written onto a card or disk, with the block size and sync behaviour of
//! imaging tools; each side measured alone too, so the report can say
//! whether the source or the destination held the copy back.

use crate::cli::CopyArgs;
use crate::cli::copy::CopyConfig;
use crate::interrupt;
use crate::medium::copy_ends;
use crate::medium::restore::{restore, restore_after_error};
use crate::output::Output;
use crate::result::Payload;
use crate::store::Settings;
use crate::workload::copy as copier;
use anyhow::Result;
use std::sync::atomic::Ordering;

pub fn copy(args: &CopyArgs, store: &Settings) -> Result<i32> {
    let CopyConfig { target: mut cfg } = CopyConfig::from_args(args)?;
    let started_at = crate::workload::record::now_rfc3339();
    interrupt::install();
    let source = copy_ends::open_source(&args.source, cfg.buffered())?;
    let bytes = source.info.size_bytes;
    let created = copy_ends::create_destination(&mut cfg, bytes)?;
    let mut destination = crate::medium::open::open_target(&cfg, true, 0)?;
    copy_ends::check_destination(&destination, created.as_ref(), bytes, &args.source)?;
    destination.arm(&[(0, bytes)])?;
    // Recorded as used: a destination iocurve created is written freely.
    let config = CopyConfig {
        target: cfg.clone(),
    }
    .settings(args)
    .into();
    let payload = Payload::Copy { config, copy: None };
    let mut result = crate::workload::record::new_result(payload, &destination, started_at);
    let output = Output::for_target(store, &cfg);
    output.announce(&result);
    let run = copier::run(&CopyConfig::request(args), &source, &destination)
        .map_err(|e| restore_after_error(&mut destination, e))?;
    run.record(&mut result);
    result.interrupted = interrupt::stop_flag().load(Ordering::Relaxed);
    restore(&mut destination, &mut result);
    output.finish_copy(&result)
}
