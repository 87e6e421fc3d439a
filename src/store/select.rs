//! Turning what the user typed (a run id, a device name, a JSON file) into
//! stored results.

use super::{Settings, Store};
use crate::error::usage;
use crate::result::RunResult;
use crate::result::compare::Entry;
use anyhow::{Context, Result};
use std::path::Path;

/// Opens the configured database for reading; a missing file is a usage
/// error that says how results get there.
pub fn open_existing(settings: &Settings) -> Result<Store> {
    let path = settings.path()?;
    if !path.exists() {
        return Err(usage(format!(
            "no results database at {}: measure something first (iocurve profile), or pass --db PATH",
            path.display()
        )));
    }
    Store::open_to_read(&path)
}

/// A result file written by `iocurve ... --json`.
pub fn read_file(path: &Path) -> Result<RunResult> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    RunResult::from_json(&text)
        .with_context(|| format!("{}: not an iocurve JSON result", path.display()))
}

/// One run from `spec`: an existing file, a run id, or a device (its latest
/// run).
pub fn entry(spec: &str, settings: &Settings, store: &mut Option<Store>) -> Result<Entry> {
    let path = Path::new(spec);
    if path.is_file() {
        let result = read_file(path)?;
        let source = path
            .file_name()
            .map_or(spec.to_string(), |n| n.to_string_lossy().into_owned());
        return Ok(Entry { source, result });
    }
    if store.is_none() {
        *store = Some(open_existing(settings)?);
    }
    let db = store.as_ref().expect("opened above");
    let id = match spec.parse::<i64>() {
        Ok(id) => id,
        Err(_) => {
            let device = db.find_device(spec)?.ok_or_else(|| {
                usage(format!(
                    "{spec:?} is not a file, a run id or a known device: see `iocurve list`"
                ))
            })?;
            db.latest_run(device.id)?
                .context("the device has no runs")?
        }
    };
    let result = db.load(id)?.ok_or_else(|| {
        usage(format!(
            "no run {id} in the results database: see `iocurve list`"
        ))
    })?;
    Ok(Entry {
        source: format!("run {id}"),
        result,
    })
}

/// Earlier runs of a device at most that `compare` reads to estimate the
/// noise between its runs: the latest ones, enough for a spread, few
/// enough to load quickly.
pub const HISTORY_RUNS: usize = 30;

/// The stored runs of the device all `entries` measured (by its key),
/// latest [`HISTORY_RUNS`] first, leaving out the runs compared (by id, or
/// by start time for a result file also stored). Empty when the runs are
/// of different devices, when there is no database, or when it cannot be
/// read: the comparison then falls back to a floor for the noise, and
/// says so.
pub fn history(
    entries: &[Entry],
    settings: &Settings,
    store: &mut Option<Store>,
) -> Vec<RunResult> {
    let Some(key) = crate::analysis::compare::same_device(entries).map(str::to_owned) else {
        return Vec::new();
    };
    if store.is_none() {
        let exists = settings.path().is_ok_and(|p| p.exists());
        *store = exists.then(|| open_existing(settings).ok()).flatten();
    }
    let Some(db) = store.as_ref() else {
        return Vec::new();
    };
    let compared: Vec<i64> = entries
        .iter()
        .filter_map(|e| e.source.strip_prefix("run ")?.parse().ok())
        .collect();
    let started: Vec<&str> = entries
        .iter()
        .map(|e| e.result.started_at.as_str())
        .collect();
    device_runs(db, &key, HISTORY_RUNS, |r| {
        !compared.contains(&r.id) && !started.contains(&r.started_at.as_str())
    })
}

/// The latest `limit` stored runs of repeated tests of the device `key`
/// that `keep` keeps, latest first; empty when it cannot be read (the
/// noise between runs then falls back to a floor, and says so).
pub fn device_runs(
    db: &Store,
    key: &str,
    limit: usize,
    keep: impl Fn(&crate::result::stored::RunRow) -> bool,
) -> Vec<RunResult> {
    let Ok(Some(device)) = db.find_device(key) else {
        return Vec::new();
    };
    let Ok(rows) = db.runs(Some(device.id)) else {
        return Vec::new();
    };
    rows.iter()
        .rev()
        .filter(|r| keep(r))
        // Repeated tests only: a stored flash or sustain run has none to match.
        .filter(|r| {
            r.source != "iocurve" || matches!(r.command.as_str(), "profile" | "run" | "curve")
        })
        .take(limit)
        .filter_map(|r| db.load(r.id).ok().flatten())
        .collect()
}
