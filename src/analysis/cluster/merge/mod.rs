//! Many ranks' results into one, exactly.
//!
//! Every rank ran the same command on its own target and hands rank 0 its
//! [`RunResult`] with, beside each measurement, the raw counts an exact
//! merge needs ([`RawCounts`](crate::result::cluster::RawCounts)): its
//! latency histograms bucket by bucket and its start and end on its own
//! clock. The merge then does what fio's "All clients" sum and IOR get
//! wrong (fio #1918, #610; IOR #431, #495):
//!
//! - counts add as integers: bytes, operations and every histogram bucket,
//!   so a merged percentile is the percentile of all requests together,
//!   never a mean of percentiles;
//! - time is one clock: each rank's start and end are mapped onto rank 0's
//!   clock through its measured offset ([`ClockMap`]) before they are
//!   compared, and a merged repetition lasts from the first rank's start
//!   to the last rank's end, so its MB/s is the aggregate bandwidth the
//!   storage delivered (IOR's definition), not a sum of per-rank rates;
//! - what a merge hides is kept beside it in the
//!   [`MpiSection`](crate::result::cluster::MpiSection): each
//!   rank's totals and spans, the stonewall figure (bytes moved when the
//!   first rank finished, elbencho's "first done") and the sum of per-rank
//!   rates.
//!
//! Rank 0's result is the base: its command, configuration, host and
//! target stay; its tests' figures are replaced by the merged ones.

use super::clock::ClockMap;
use crate::result::cluster::ReadOtherHost;
use crate::result::{Measurement, RunResult, TestResult};

mod check;
mod curve;
mod measurement;
#[cfg(test)]
mod payload_tests;
mod section;
#[cfg(test)]
mod tests;

pub use curve::refresh_curve;
/// The synthetic results of the renderers' tests make their repetitions as
/// the merge does.
#[cfg(test)]
pub(crate) use section::from_spans;

/// One rank's result as rank 0 received it, with who sent it and how its
/// clock maps onto rank 0's.
#[derive(Debug, Clone)]
pub struct RankResult {
    pub rank: u32,
    pub host: String,
    pub local_rank: u32,
    /// The rank's target after its placeholders were filled in.
    pub target: String,
    pub clock: ClockMap,
    pub result: RunResult,
}

/// What the job was asked to do, recorded in the
/// [`MpiSection`](crate::result::cluster::MpiSection).
#[derive(Debug, Clone, Default)]
pub struct MergeOptions {
    pub stonewall: bool,
    pub shared_file: bool,
    pub read_other_host: Option<ReadOtherHost>,
}

/// Why the ranks' results cannot be one result.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("no rank sent a result to merge")]
    NoRanks,
    #[error("rank {rank} sent two results (from {first} and {second})")]
    DuplicateRank {
        rank: u32,
        first: String,
        second: String,
    },
    /// The ranks ran different commands or tests: one line naming the
    /// ranks and hosts and the first difference.
    #[error("{0}")]
    Differ(String),
}

/// Merges every rank's result of one command into rank 0's (see the
/// module doc), with an `mpi` section. One rank merges to itself, plus
/// the section.
pub fn merge(mut ranks: Vec<RankResult>, options: MergeOptions) -> Result<RunResult, MergeError> {
    ranks.sort_by_key(|r| r.rank);
    check::one_result_per_rank(&ranks)?;
    check::same_tests(&ranks)?;
    let single = ranks.len() == 1;
    let mut out = ranks[0].result.clone();
    out.tests = (0..test_count(&ranks))
        .map(|i| merge_test(&ranks, i))
        .collect();
    out.interrupted = ranks.iter().any(|r| r.result.interrupted);
    out.error = first_error(&ranks);
    if !single {
        // The kernel's largest transfer is not in the result (it is read
        // from sysfs); the spine may call `refresh_curve` again with it.
        refresh_curve(&mut out, &|_| None);
    }
    out.mpi = Some(section::build(&ranks, &out.tests, options));
    // Each rank's span went into the rank rows; it is never printed.
    out.raw = None;
    Ok(out)
}

/// The most tests any rank ran (a rank cut short ran fewer).
fn test_count(ranks: &[RankResult]) -> usize {
    ranks
        .iter()
        .map(|r| r.result.tests.len())
        .max()
        .unwrap_or(0)
}

/// Test `i` over every rank that ran it: rank 0's description (or the
/// first rank's that has it), each repetition merged, spreads recomputed.
fn merge_test(ranks: &[RankResult], i: usize) -> TestResult {
    let having: Vec<(&RankResult, &TestResult)> = ranks
        .iter()
        .filter_map(|r| Some((r, r.result.tests.get(i)?)))
        .collect();
    let (_, base) = having[0];
    let repetitions = having
        .iter()
        .map(|(_, t)| t.repetitions.len())
        .max()
        .unwrap_or(0);
    let single = ranks.len() == 1;
    let mut test = TestResult {
        repetitions: (0..repetitions)
            .map(|j| {
                let parts: Vec<(&RankResult, &Measurement)> = having
                    .iter()
                    .filter_map(|(r, t)| Some((*r, t.repetitions.get(j)?)))
                    .collect();
                measurement::merge_repetition(&parts, single)
            })
            .collect(),
        skipped: first_skip(&having, single),
        ..base.clone()
    };
    test.refresh_spreads();
    test
}

/// The first rank's reason to skip the test, naming the rank when there
/// are several.
fn first_skip(
    having: &[(&RankResult, &TestResult)],
    single: bool,
) -> Option<crate::result::SkipReason> {
    having.iter().find_map(|(r, t)| {
        let reason = t.skipped.clone()?;
        Some(match single {
            true => reason,
            false => crate::result::SkipReason::OnRank {
                rank: r.rank,
                host: r.host.clone(),
                reason: Box::new(reason),
            },
        })
    })
}

/// The first rank's error, naming the rank when there are several.
fn first_error(ranks: &[RankResult]) -> Option<String> {
    let single = ranks.len() == 1;
    ranks.iter().find_map(|r| {
        let error = r.result.error.as_deref()?;
        Some(attributed(r, error, single))
    })
}

/// `rank R (HOST): text`, or the text alone for a job of one rank.
fn attributed(rank: &RankResult, text: &str, single: bool) -> String {
    if single {
        text.to_string()
    } else {
        format!("rank {} ({}): {text}", rank.rank, rank.host)
    }
}

/// A measurement's first start and last end on the common clock (rank 0's,
/// not yet counted from the job's first start); `None` without raw counts.
fn common_span(rank: &RankResult, m: &Measurement) -> Option<(i64, i64)> {
    let raw = m.raw.as_ref()?;
    Some((
        rank.clock.to_common(raw.start_mono_ns),
        rank.clock.to_common(raw.end_mono_ns),
    ))
}
