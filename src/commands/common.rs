//! A bridge kept only while the measuring commands move to calling the
//! pipeline's modules directly: the names they used, and the output
//! options of this invocation that those names still need.

use crate::output::Output;
use crate::result::RunResult;
use crate::store::Settings;
use anyhow::Result;
use std::path::PathBuf;
use std::sync::OnceLock;

pub use crate::error::io_failure_message;
pub use crate::output::exit_code_unsaved;
pub use crate::probe::record::{new_result, new_result_for, now_rfc3339};
pub use crate::safety::restore::{restore, restore_after_error};
pub use crate::target::open::{refuse_simulated, writes_may_be_asked, writes_skipped_because};
pub use crate::workload::prepare::prepare;
pub use crate::workload::repeat::{measure, measure_repeated, measure_repeated_on, test_result};

static STORE: OnceLock<Settings> = OnceLock::new();
static REPORT: OnceLock<PathBuf> = OnceLock::new();

/// The database options of this invocation, for the bridge.
pub fn remember_store(settings: &Settings) {
    let _ = STORE.set(settings.clone());
}

fn output(json: bool) -> Output {
    Output {
        json,
        report: REPORT.get().cloned(),
        store: STORE.get().cloned().unwrap_or_default(),
    }
}

pub fn open_target(
    cfg: &crate::cli::config::TargetConfig,
    want_write: bool,
    scratch_size: u64,
) -> Result<crate::target::OpenTarget> {
    if let Some(path) = &cfg.report {
        let _ = REPORT.set(path.clone());
    }
    crate::target::open::open_target(cfg, want_write, scratch_size)
}

pub fn report_to(path: Option<&PathBuf>) {
    if let Some(path) = path {
        let _ = REPORT.set(path.clone());
    }
}

pub fn finish(result: &RunResult, json: bool) -> Result<i32> {
    output(json).finish(result)
}

pub fn exit_code_of(result: &RunResult) -> Result<i32> {
    output(false).exit_code_of(result)
}

pub fn settings() -> Settings {
    STORE.get().cloned().unwrap_or_default()
}
