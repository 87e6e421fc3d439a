//! The headline figures of a run: each test's median MB/s and range, as
//! kept in the `figures` table for history and list.

use crate::result::RunResult;
use crate::result::stored::Figure;
use anyhow::Result;
use rusqlite::Transaction;

/// The measured tests of a result (skipped ones have no figure).
pub fn of(result: &RunResult) -> Vec<Figure> {
    result
        .tests
        .iter()
        .filter_map(|t| {
            let s = t.mb_per_s?;
            Some(Figure {
                test: t.name.clone(),
                rw: t.workload.rw.clone(),
                median: s.median,
                min: s.min,
                max: s.max,
                repetitions: s.count,
            })
        })
        .collect()
}

/// Writes the figures of run `run_id`.
pub fn insert(tx: &Transaction, run_id: i64, result: &RunResult) -> rusqlite::Result<()> {
    let mut stmt = tx.prepare_cached(
        "INSERT INTO figures (run_id, test, rw, median_mb_s, min_mb_s, max_mb_s, repetitions)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    for f in of(result) {
        stmt.execute(rusqlite::params![
            run_id,
            f.test,
            f.rw.as_str(),
            f.median,
            f.min,
            f.max,
            f.repetitions as i64
        ])?;
    }
    Ok(())
}

/// Migration 2: figures for the runs saved before the table existed.
pub fn backfill(tx: &Transaction) -> Result<()> {
    super::backfill_runs(tx, "SELECT id, result_json FROM runs", insert)
}
