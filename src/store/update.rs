//! Rewriting a stored run as it grows: a long run (endure) saves itself
//! after every step, so that a crash, a kill or a power cut keeps what it
//! had measured.

use super::{Settings, Store, figures, ranks};
use crate::result::RunResult;
use anyhow::Result;
use rusqlite::params;
use std::path::PathBuf;

impl Store {
    /// Replaces the document, figures and ranks of run `id`.
    pub fn update(&mut self, id: i64, result: &RunResult) -> Result<()> {
        let json = serde_json::to_string(result)?;
        self.write("update the run in", |tx| {
            tx.execute(
                "UPDATE runs SET result_json = ?1 WHERE id = ?2",
                params![json, id],
            )?;
            tx.execute("DELETE FROM figures WHERE run_id = ?1", [id])?;
            figures::insert(tx, id, result)?;
            tx.execute("DELETE FROM mpi_ranks WHERE run_id = ?1", [id])?;
            ranks::insert(tx, id, result)?;
            Ok(())
        })
    }
}

/// Saves a growing result: inserted the first time (`*id` is `None`), then
/// replaced in place. Does nothing under `--no-save`.
pub fn save_progress(
    settings: &Settings,
    result: &RunResult,
    id: &mut Option<i64>,
) -> Result<Option<PathBuf>> {
    if settings.no_save {
        return Ok(None);
    }
    let path = settings.path()?;
    let mut store = Store::open(&path)?;
    match *id {
        Some(run) => store.update(run, result)?,
        None => *id = Some(store.save(result, "iocurve")?),
    }
    Ok(Some(path))
}
