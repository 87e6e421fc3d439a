//! The ranks of a run on many hosts, one row each in `mpi_ranks`: who ran
//! where, how its clock was known, and its own totals.
//!
//! Why a table beside the stored document (which holds the same rows): a
//! question across runs ("which host is slow in every run?", "how far were
//! node-b's clocks off last month?") is one SQL query over this table, not
//! a parse of every document; and `history` counts ranks and hosts without
//! reading documents, as it reads `figures`. The rows are written in the
//! run's own transaction and go with it (`delete`, `update`).

use super::Store;
use crate::result::RunResult;
use crate::result::cluster::RankRow;
use crate::result::stored::RankCount;
use anyhow::Result;
use rusqlite::{Connection, Transaction, params};

/// Migration 3: the table, filled from the runs stored before it.
pub const MIGRATION: &str = "CREATE TABLE mpi_ranks (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    rank INTEGER NOT NULL,
    host TEXT NOT NULL,
    local_rank INTEGER NOT NULL,
    target TEXT NOT NULL,
    clock_offset_ns INTEGER NOT NULL,
    clock_offset_bound_ns INTEGER NOT NULL,
    clock_drift_ns_per_s REAL NOT NULL,
    start_ns INTEGER NOT NULL,
    end_ns INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    ops INTEGER NOT NULL,
    mb_per_s REAL NOT NULL,
    p50_ns INTEGER,
    p99_ns INTEGER,
    start_skew_ns INTEGER NOT NULL,
    end_skew_ns INTEGER NOT NULL,
    PRIMARY KEY (run_id, rank)
  );";

/// SQLite's integers are signed 64-bit; no count or span of a run comes
/// near 2^63, and one that did would be clamped rather than wrapped.
fn int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// Writes the rank rows of run `run_id` (none for a run on one host).
pub fn insert(tx: &Transaction, run_id: i64, result: &RunResult) -> rusqlite::Result<()> {
    let Some(m) = &result.mpi else {
        return Ok(());
    };
    let mut stmt = tx.prepare_cached(
        "INSERT INTO mpi_ranks (run_id, rank, host, local_rank, target, clock_offset_ns,
           clock_offset_bound_ns, clock_drift_ns_per_s, start_ns, end_ns, bytes, ops,
           mb_per_s, p50_ns, p99_ns, start_skew_ns, end_skew_ns)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
    )?;
    for r in &m.ranks {
        stmt.execute(params![
            run_id,
            r.rank,
            r.host,
            r.local_rank,
            r.target,
            r.clock_offset_ns,
            int(r.clock_offset_bound_ns),
            r.clock_drift_ns_per_s,
            r.start_ns,
            r.end_ns,
            int(r.bytes),
            int(r.ops),
            r.mb_per_s,
            r.p50_ns.map(int),
            r.p99_ns.map(int),
            int(r.start_skew_ns),
            int(r.end_skew_ns),
        ])?;
    }
    Ok(())
}

/// Migration 3: rank rows for the runs saved before the table existed.
pub fn backfill(tx: &Transaction) -> Result<()> {
    super::backfill_runs(
        tx,
        "SELECT id, result_json FROM runs WHERE json_extract(result_json, '$.mpi') IS NOT NULL",
        insert,
    )
}

/// How many ranks and hosts run `run_id` had; `None` for a run on one host.
pub fn count(conn: &Connection, run_id: i64) -> rusqlite::Result<Option<RankCount>> {
    let mut stmt = conn
        .prepare_cached("SELECT count(*), count(DISTINCT host) FROM mpi_ranks WHERE run_id = ?1")?;
    let (ranks, hosts): (u32, u32) = stmt.query_row([run_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok((ranks > 0).then_some(RankCount { ranks, hosts }))
}

impl Store {
    /// The rank rows of run `run_id`, by rank; empty for a run on one host
    /// (or one not stored).
    pub fn rank_rows(&self, run_id: i64) -> Result<Vec<RankRow>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT rank, host, local_rank, target, clock_offset_ns, clock_offset_bound_ns,
                        clock_drift_ns_per_s, start_ns, end_ns, bytes, ops, mb_per_s,
                        p50_ns, p99_ns, start_skew_ns, end_skew_ns
                 FROM mpi_ranks WHERE run_id = ?1 ORDER BY rank",
            )?;
            let unsigned = |v: i64| v.max(0) as u64;
            let rows = stmt.query_map([run_id], |r| {
                Ok(RankRow {
                    rank: r.get(0)?,
                    host: r.get(1)?,
                    local_rank: r.get(2)?,
                    target: r.get(3)?,
                    clock_offset_ns: r.get(4)?,
                    clock_offset_bound_ns: unsigned(r.get(5)?),
                    clock_drift_ns_per_s: r.get(6)?,
                    // Not kept in the table: the stored document has it.
                    clock_drift_uncertainty_ns_per_s: 0.0,
                    start_ns: r.get(7)?,
                    end_ns: r.get(8)?,
                    bytes: unsigned(r.get(9)?),
                    ops: unsigned(r.get(10)?),
                    mb_per_s: r.get(11)?,
                    p50_ns: r.get::<_, Option<i64>>(12)?.map(unsigned),
                    p99_ns: r.get::<_, Option<i64>>(13)?.map(unsigned),
                    start_skew_ns: unsigned(r.get(14)?),
                    end_skew_ns: unsigned(r.get(15)?),
                })
            })?;
            rows.collect()
        })
    }
}
