//! One interval of a measurement as it runs: what `--json-lines` prints
//! while `run`, `profile`, `curve`, `stream` and `sustain` measure, before
//! the whole result on the last line. Intervals are not stored; the result
//! holds the figures of the whole measurement.
//!
//! Every line is one [`JsonLine`], tagged by `type` as its first key
//! (`start`, `interval`, `result`), so a reader picks lines with
//! `jq 'select(.type=="result")'` and validates each against the one
//! schema of the lines (schema/iocurve-json-lines.schema.json).

use super::{RunResult, TargetInfo};
use crate::vocab::Rw;
use crate::vocab::options::StreamDirection;
use serde::Serialize;

/// One line of `--json-lines`: `{"type": "start" | "interval" | "result",
/// ...}`, the tag first and the object's own keys beside it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum JsonLine<'a> {
    /// The first line, printed before measuring: what is about to be
    /// measured.
    Start(StartLine<'a>),
    /// One interval of about a second while the measurement runs.
    Interval(&'a LiveInterval),
    /// The last line: the whole result, the same object `--json` prints.
    Result(&'a RunResult),
}

impl JsonLine<'_> {
    /// The line as one line of JSON text (no newline).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"error\":{:?}}}", e.to_string()))
    }
}

/// What the first line says: the command, its target and the plan.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct StartLine<'a> {
    /// The command as typed: `run`, `profile`, `files load`, `flash class`.
    pub command: String,
    /// The target about to be measured, as the result will record it.
    pub target: &'a TargetInfo,
    /// What will be measured, in the words of the text header's plan
    /// line (`4 rows × 5 s, 1 repetition`); null when the command has none.
    pub plan: Option<String>,
}

/// The figures of one interval. Times are on the measurement's clock (the
/// simulated card's own for `sim:`), from the start of the measured pass;
/// the warm-up is not reported.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct LiveInterval {
    /// The test measured, by its figures (the words are the progress
    /// line's, made from these).
    pub test: LiveTest,
    /// 0 for the first interval of the test.
    pub index: u64,
    /// Start of the interval, ns from the start of the measured pass.
    pub start_ns: u64,
    /// End of the interval, ns from the start of the measured pass.
    pub end_ns: u64,
    /// Bytes completed in the interval.
    pub bytes: u64,
    /// Requests completed in the interval.
    pub ops: u64,
    /// MB/s (10^6 B/s) over the interval.
    pub mb_per_s: f64,
    /// Requests completed per second over the interval.
    pub iops: f64,
    /// Median completion latency of the interval's requests, ns, within
    /// about 3%; null when none completed.
    pub p50_ns: Option<u64>,
    /// 99th percentile completion latency of the interval's requests, ns,
    /// within about 3%; null when none completed.
    pub p99_ns: Option<u64>,
    /// The longest request that completed in the interval, ns; null when
    /// none completed.
    pub max_ns: Option<u64>,
}

/// What an interval measures, by kind: a workload of the tests (`run`,
/// `profile`, `curve`), a stream at its rate, or a sustained write.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LiveTest {
    /// One workload of the tests.
    Workload {
        /// Access pattern and direction.
        rw: Rw,
        /// Bytes per request.
        block_size_bytes: u64,
        /// Requests in flight per job.
        queue_depth: u32,
        /// Jobs.
        threads: u32,
    },
    /// `stream`: requests on a schedule.
    Stream {
        /// `read` (a player) or `write` (a recorder).
        direction: StreamDirection,
        /// The rate the schedule asks, MB/s (10^6 bytes per second).
        rate_mb_per_s: f64,
        /// Bytes per request.
        chunk_bytes: u32,
    },
    /// `sustain`: the long sequential write.
    Sustain {
        /// Bytes per write.
        block_size_bytes: u32,
    },
}

impl LiveInterval {
    /// Rates of `bytes` and `ops` over `start_ns..end_ns`.
    pub fn rates(bytes: u64, ops: u64, (start_ns, end_ns): (u64, u64)) -> (f64, f64) {
        let ns = end_ns.saturating_sub(start_ns);
        if ns == 0 {
            return (0.0, 0.0);
        }
        (
            crate::units::mb_per_s(bytes, ns),
            ops as f64 * 1e9 / ns as f64,
        )
    }
}

/// p50 and p99 read from coarse buckets, never above the exact maximum:
/// a bucket's midpoint may pass the longest request in it.
pub fn capped_quantiles(
    (p50, p99): (Option<u64>, Option<u64>),
    max_ns: Option<u64>,
) -> (Option<u64>, Option<u64>) {
    let cap = |q: Option<u64>| match max_ns {
        Some(m) => q.map(|q| q.min(m)),
        None => q,
    };
    (cap(p50), cap(p99))
}
