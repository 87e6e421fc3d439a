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
