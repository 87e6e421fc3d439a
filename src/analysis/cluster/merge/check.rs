//! Whether the ranks' results can be merged: one result per rank, the same
//! command, and the same tests in the same order. Differences a run cut
//! short explains (fewer tests or repetitions on a rank that was
//! interrupted or failed, or a test it skipped) are not differences.

use super::{MergeError, RankResult};
use crate::result::{TestResult, WorkloadInfo};

/// No rank appears twice (`ranks` sorted by rank) and there is one at all.
pub(super) fn one_result_per_rank(ranks: &[RankResult]) -> Result<(), MergeError> {
    if ranks.is_empty() {
        return Err(MergeError::NoRanks);
    }
    match ranks.windows(2).find(|w| w[0].rank == w[1].rank) {
        Some(w) => Err(MergeError::DuplicateRank {
            rank: w[0].rank,
            first: w[0].host.clone(),
            second: w[1].host.clone(),
        }),
        None => Ok(()),
    }
}

/// Every rank ran rank 0's command and tests (`ranks` sorted by rank, not
/// empty); else one line naming the ranks that differ, their hosts, and
/// the first difference.
pub(super) fn same_tests(ranks: &[RankResult]) -> Result<(), MergeError> {
    let base = &ranks[0];
    let differing: Vec<(&RankResult, String)> = ranks[1..]
        .iter()
        .filter_map(|r| Some((r, first_difference(base, r)?)))
        .collect();
    let Some((first, what)) = differing.first() else {
        return Ok(());
    };
    let named: Vec<String> = differing
        .iter()
        .map(|(r, _)| format!("rank {} ({})", r.rank, r.host))
        .collect();
    Err(MergeError::Differ(format!(
        "ranks ran different tests: {} differ from rank {} ({}); first difference, rank {}: {what}",
        named.join(", "),
        base.rank,
        base.host,
        first.rank
    )))
}

/// How `other` differs from `base`, first thing first.
fn first_difference(base: &RankResult, other: &RankResult) -> Option<String> {
    let (a, b) = (&base.result, &other.result);
    if a.command() != b.command() {
        return Some(format!(
            "ran `{}` where rank {} ran `{}`",
            b.command(),
            base.rank,
            a.command()
        ));
    }
    for (i, (ta, tb)) in a.tests.iter().zip(&b.tests).enumerate() {
        if let Some(what) = test_difference(ta, tb) {
            return Some(format!("test {} {what}", i + 1));
        }
        let (na, nb) = (ta.repetitions.len(), tb.repetitions.len());
        let short_explained = if na < nb {
            cut_short(base) || ta.skipped.is_some()
        } else {
            cut_short(other) || tb.skipped.is_some()
        };
        if na != nb && !short_explained {
            return Some(format!(
                "test {} (`{}`) has {nb} repetitions against {na}",
                i + 1,
                tb.name
            ));
        }
    }
    let (na, nb) = (a.tests.len(), b.tests.len());
    let shorter = if na < nb { base } else { other };
    (na != nb && !cut_short(shorter)).then(|| format!("ran {nb} tests against {na}"))
}

/// What differs between two tests in the same place, if anything: their
/// workloads, never their names (a name may carry the rank's own target,
/// `/dev/zr1 read 4k`, which `{rank}` makes differ by design).
fn test_difference(a: &TestResult, b: &TestResult) -> Option<String> {
    let (x, y) = (&a.workload, &b.workload);
    workload_difference(x, y).map(|what| format!("(`{}`) has {what}", a.name))
}

/// The first field of the workload that differs. The offset, span and
/// seed may differ by design (a shared file gives each rank its own
/// segment; a rank may seed its own data).
fn workload_difference(x: &WorkloadInfo, y: &WorkloadInfo) -> Option<String> {
    let fields = [
        ("direction", x.rw.to_string(), y.rw.to_string()),
        (
            "block size",
            x.block_size.to_string(),
            y.block_size.to_string(),
        ),
        (
            "queue depth",
            x.queue_depth.to_string(),
            y.queue_depth.to_string(),
        ),
        ("threads", x.threads.to_string(), y.threads.to_string()),
        ("engine", x.engine.to_string(), y.engine.to_string()),
        (
            "read share",
            format!("{:?}", x.mix_read_percent),
            format!("{:?}", y.mix_read_percent),
        ),
    ];
    fields
        .into_iter()
        .find(|(_, a, b)| a != b)
        .map(|(name, a, b)| format!("{name} {b} against {a}"))
}

/// A run that stopped early may have fewer tests or repetitions.
fn cut_short(rank: &RankResult) -> bool {
    rank.result.interrupted || rank.result.error.is_some()
}
