//! `iocurve files load` and `iocurve files save`: whole files in a
//! directory, the way applications use them. The loops are in
//! [`crate::workload::files`], the reading of their times in
//! [`crate::analysis::files`].

mod load;
mod save;

use crate::cli::apps::{FilesAction, FilesArgs};
use crate::result::TargetInfo;
use crate::result::apps::CpuLoadInfo;
use crate::result::{Payload, RunResult};
use crate::store::Settings;
use crate::workload::record::new_result_for;
use anyhow::Result;
use std::sync::atomic::Ordering;

pub fn files(args: &FilesArgs, store: &Settings) -> Result<i32> {
    match &args.action {
        FilesAction::Load(a) => load::load(a, store),
        FilesAction::Save(a) => save::save(a, store),
    }
}

/// The result of either before measuring: the directory and the plan, for
/// the header printed before the files are made.
fn planned_result(payload: Payload, info: TargetInfo, started_at: String) -> RunResult {
    new_result_for(payload, info, started_at)
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
