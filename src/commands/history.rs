//! `iocurve history [DEVICE]` and `iocurve list`: what the database holds.
//! The lines themselves are built in [`crate::report::history`].

use crate::analysis::compare::series;
use crate::cli::{HistoryArgs, ListArgs};
use crate::error::usage;
use crate::report::history::{self, HISTORY_FOOTER};
use crate::store::{Settings, select};
use anyhow::Result;

pub fn history(args: &HistoryArgs, store: &Settings) -> Result<i32> {
    // The parser refuses a blank name too; this keeps the command safe when
    // it is called with arguments built some other way.
    if args.device.as_deref().is_some_and(|d| d.trim().is_empty()) {
        return Err(usage(
            "an empty device name: give a device id, key or name from `iocurve list`, or none for every device",
        ));
    }
    let db = select::open_existing(store)?;
    let devices = match &args.device {
        Some(name) => vec![
            db.find_device(name)?
                .ok_or_else(|| usage(format!("no device matches {name:?}: see `iocurve list`")))?,
        ],
        None => db.devices()?,
    };
    let with_runs = devices
        .into_iter()
        .map(|d| Ok((db.runs(Some(d.id))?, d)))
        .collect::<Result<Vec<_>>>()?;
    if args.json {
        crate::output::print_json(&format!("{}\n", history::history_json(&with_runs)?));
        return Ok(0);
    }
    let mut out = String::new();
    for (runs, d) in &with_runs {
        out.push_str(&history::device_heading(d));
        for r in runs {
            out.push_str(&match outcome_of(&db, r.id) {
                Some(line) => history::outcome_line(r, &line),
                None => history::run_line(r),
            });
        }
        out.push_str(&history::change_lines(&newest_changes(&db, &d.key)));
    }
    out.push_str(HISTORY_FOOTER);
    crate::output::print_fitted(&out);
    Ok(0)
}

/// The newest change of each target of the device `key`, from its latest
/// stored runs of repeated tests: the statement `compare` and `report`
/// make of the same runs.
fn newest_changes(db: &crate::store::Store, key: &str) -> Vec<series::Newest> {
    let mut runs = select::device_runs(db, key, select::HISTORY_RUNS + 2, |_| true);
    runs.reverse();
    let refs: Vec<&crate::result::RunResult> = runs.iter().collect();
    series::newest(&refs, &[])
}

pub fn list(args: &ListArgs, store: &Settings) -> Result<i32> {
    let db = select::open_existing(store)?;
    let (devices, mut runs) = (db.devices()?, db.runs(None)?);
    // In the order they were saved, as their numbers are: an imported fio
    // run keeps fio's date, which would sort it among older runs.
    runs.sort_by_key(|r| r.id);
    match args.json {
        true => crate::output::print_json(&format!("{}\n", history::list_json(&devices, &runs)?)),
        false => crate::output::print_fitted(&history::list_with(&devices, &runs, |r| {
            let result = db.load(r.id).ok().flatten()?;
            let outcome = crate::report::outcome::headline(&result);
            outcome.or_else(|| crate::report::outcome::tests_line(&result))
        })),
    }
    Ok(0)
}

/// The one-line outcome of stored run `id` (see
/// [`crate::report::outcome::headline`]); none for a run whose figures
/// are its tests, or whose document this version cannot read (its line
/// then shows the stored figures).
fn outcome_of(db: &crate::store::Store, id: i64) -> Option<String> {
    db.load(id)
        .ok()
        .flatten()
        .and_then(|r| crate::report::outcome::headline(&r))
}
