//! `iocurve files load` and `iocurve files save`: whole files in a
//! directory, the way applications use them. The loops are in
//! [`crate::workload::files`], the reading of their times in
//! [`crate::analysis::files`].

mod load;
mod save;

use crate::cli::apps::{FilesAction, FilesArgs, FilesOutputArgs};
use crate::output::Output;
use crate::probe::sysfs::BlockDevice;
use crate::result::apps::CpuLoadInfo;
use crate::result::{Payload, RunResult};
use crate::store::Settings;
use crate::workload::files::WorkDir;
use crate::workload::record::new_result_for;
use anyhow::Result;
use std::path::Path;
use std::sync::atomic::Ordering;

pub fn files(args: &FilesArgs, store: &Settings) -> Result<i32> {
    match &args.action {
        FilesAction::Load(a) => load::load(a, store),
        FilesAction::Save(a) => save::save(a, store),
    }
}

/// The start of either: a simulated card refused, the directory opened,
/// and the result of the plan announced (the header printed before the
/// files are made).
fn started(
    dir: &Path,
    out: &FilesOutputArgs,
    store: &Settings,
    planned: Payload,
) -> Result<(WorkDir, Option<BlockDevice>, Output, RunResult)> {
    let started_at = crate::workload::record::now_rfc3339();
    crate::medium::open::refuse_simulated(dir, "files")?;
    let (work, device, info) = crate::workload::files::open_dir(dir)?;
    let output = Output::new(store, &out.output.choice(), out.report.as_ref());
    let result = new_result_for(planned, info, started_at);
    output.announce(&result);
    Ok((work, device, output, result))
}

/// The result of either once measured: what it found, the CPU load beside
/// it, and whether Ctrl-C cut it short.
fn files_result(
    mut result: RunResult,
    payload: Payload,
    cpu_load: Option<CpuLoadInfo>,
) -> RunResult {
    result.payload = payload;
    result.cpu_load = cpu_load;
    result.interrupted = crate::interrupt::stop_flag().load(Ordering::Relaxed);
    result.raw = super::ranks::span_for_merge(&result);
    result
}
