//! A device's stored figures over time: what the report's history charts
//! draw beside the runs it shows.

use super::Store;
use crate::result::RunResult;
use crate::result::stored::HistoryPoint;
use anyhow::Result;

/// The identity keys of the devices the runs were made on, each once
/// (runs of several devices may interleave), sorted.
pub fn device_keys(runs: &[RunResult]) -> Vec<&str> {
    let mut keys: Vec<&str> = runs
        .iter()
        .filter_map(|r| r.device_identity.as_ref().map(|i| i.key.as_str()))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// Every stored figure of the devices the runs were made on, oldest first.
pub fn points(db: &Store, runs: &[RunResult]) -> Result<Vec<HistoryPoint>> {
    let mut points = Vec::new();
    for key in device_keys(runs) {
        let Some(device) = db.find_device(key)? else {
            continue;
        };
        for run in db.runs(Some(device.id))? {
            points.extend(run.figures.iter().map(|f| HistoryPoint {
                device: key.to_string(),
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
