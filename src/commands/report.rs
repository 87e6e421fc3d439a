//! `iocurve report`: stored runs as one self-contained HTML page, and the
//! page `--report FILE` writes when a measuring command ends.

use crate::cli::ReportArgs;
use crate::error::usage;
use crate::report::html::{self, ReportInput};
use crate::store::{self, Settings, Store, select};
use anyhow::Result;
use std::path::Path;

pub fn report(args: &ReportArgs, settings: &Settings) -> Result<i32> {
    let db = select::open_existing(settings)?;
    let ids = chosen_runs(&db, args)?;
    let mut runs = Vec::new();
    for id in ids {
        runs.push(
            db.load(id)?
                .ok_or_else(|| usage(format!("no run {id} in the database: see `iocurve list`")))?,
        );
    }
    let input = ReportInput {
        history: store::history::points(&db, &runs)?,
        earlier: earlier_runs(&db, &runs),
        runs,
    };
    write(&input, &args.output)?;
    crate::output::print_fitted(&format!(
        "wrote {} ({} run(s))\n",
        crate::units::escape::line(&args.output.display().to_string()),
        input.runs.len()
    ));
    Ok(0)
}

/// The stored runs of the report's devices that set the noise between
/// runs of the report's statements of change: as many as `compare` reads
/// (and the two a statement compares, which it leaves out), so the report
/// and `compare` of the same two runs say the same.
fn earlier_runs(db: &Store, runs: &[crate::result::RunResult]) -> Vec<crate::result::RunResult> {
    crate::store::history::device_keys(runs)
        .into_iter()
        .flat_map(|k| select::device_runs(db, k, select::HISTORY_RUNS + 2, |_| true))
        .collect()
}

/// Run ids given, else the latest `--last` runs (of `--device`, or of all).
fn chosen_runs(db: &Store, args: &ReportArgs) -> Result<Vec<i64>> {
    if !args.runs.is_empty() {
        return Ok(args.runs.clone());
    }
    let device = match &args.device {
        Some(name) => Some(
            db.find_device(name)?
                .ok_or_else(|| usage(format!("no device matches {name:?}: see `iocurve list`")))?
                .id,
        ),
        None => None,
    };
    let all = db.runs(device)?;
    if all.is_empty() {
        return Err(usage(
            "the database holds no runs yet: measure something first (iocurve profile)",
        ));
    }
    let skip = all.len().saturating_sub(args.last as usize);
    Ok(all[skip..].iter().map(|r| r.id).collect())
}

fn write(input: &ReportInput, path: &Path) -> Result<()> {
    crate::output::write_output(path, html::render(input).as_bytes(), "the report")
}
