//! `iocurve report`: stored runs as one self-contained HTML page, and the
//! page `--report FILE` writes when a measuring command ends.

use super::select;
use crate::cli::ReportArgs;
use crate::error::usage;
use crate::report::html::{self, HistoryPoint, ReportInput};
use crate::result::RunResult;
use crate::store::{self, Store};
use anyhow::Result;
use std::path::Path;

pub fn report(args: &ReportArgs) -> Result<i32> {
    let db = select::open_existing()?;
    let ids = chosen_runs(&db, args)?;
    let mut runs = Vec::new();
    for id in ids {
        runs.push(
            db.load(id)?
                .ok_or_else(|| usage(format!("no run {id} in the database: see `iocurve list`")))?,
        );
    }
    let input = ReportInput {
        history: history_of(&db, &runs)?,
        runs,
    };
    write(&input, &args.output)?;
    println!(
        "wrote {} ({} run(s))",
        args.output.display(),
        input.runs.len()
    );
    Ok(0)
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

/// Every stored figure of the devices the runs were made on, oldest first.
fn history_of(db: &Store, runs: &[RunResult]) -> Result<Vec<HistoryPoint>> {
    let mut keys: Vec<&str> = runs
        .iter()
        .filter_map(|r| r.device_identity.as_ref().map(|i| i.key.as_str()))
        .collect();
    keys.dedup();
    let mut points = Vec::new();
    for key in keys {
        let Some(device) = db.find_device(key)? else {
            continue;
        };
        for run in db.runs(Some(device.id))? {
            points.extend(run.figures.iter().map(|f| HistoryPoint {
                run_id: run.id,
                started_at: run.started_at.clone(),
                test: f.test.clone(),
                rw: f.rw.clone(),
                median: f.median,
                min: f.min,
                max: f.max,
            }));
        }
    }
    Ok(points)
}

/// The page for a run that just ended, with its device's stored history
/// when the database has one.
pub fn write_for(result: &RunResult, path: &Path) -> Result<()> {
    let history = match store::configured_path() {
        Ok(db_path) if db_path.exists() => Store::open(&db_path)
            .and_then(|db| history_of(&db, std::slice::from_ref(result)))
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    write(
        &ReportInput {
            runs: vec![result.clone()],
            history,
        },
        path,
    )
}

fn write(input: &ReportInput, path: &Path) -> Result<()> {
    super::write_output(path, html::render(input).as_bytes(), "the report")
}
