//! The `mpi` section: each rank's totals, each repetition's spans on the
//! common clock, and the three bandwidths a reader of IOR and elbencho
//! expects (aggregate, stonewall, sum of rank rates).
//!
//! Every instant counts from the job's epoch, the first measured start of
//! any rank on rank 0's clock, so the first start is 0 and a rank whose
//! clock disagrees by thousands of seconds reads the same as an aligned
//! one once mapped.

use super::{MergeOptions, RankResult, common_span};
use crate::result::TestResult;
use crate::result::cluster::{
    MergeNote, MergeNoteKind, MpiRepetition, MpiSection, MpiTest, RankRow, RankSpan,
};
use crate::stats::LatencyHistogram;
use crate::units::mb_per_s;

/// The section for ranks sorted by rank and their merged tests.
pub(super) fn build(
    ranks: &[RankResult],
    tests: &[TestResult],
    options: MergeOptions,
) -> MpiSection {
    let epoch = epoch(ranks);
    let mpi_tests: Vec<MpiTest> = tests
        .iter()
        .enumerate()
        .map(|(i, test)| MpiTest {
            name: test.name.clone(),
            repetitions: (0..test.repetitions.len())
                .map(|j| repetition(ranks, i, j, test.repetitions[j].bytes, epoch))
                .collect(),
        })
        .collect();
    let whole = whole(ranks, epoch);
    MpiSection {
        size: u32::try_from(ranks.len()).expect("an MPI job has fewer than 2^32 ranks"),
        ranks: ranks
            .iter()
            .map(|r| rank_row(r, &mpi_tests, whole.as_ref(), epoch))
            .collect(),
        tests: mpi_tests,
        stonewall: options.stonewall,
        shared_file: options.shared_file,
        read_other_host: options.read_other_host,
        note: detail_of_rank_zero(ranks),
        whole,
        lost: Vec::new(),
    }
}

/// A rank's whole span on the common clock, for a command whose figures
/// are not tests (see [`RunResult::raw`](crate::result::RunResult)).
fn whole_span(rank: &RankResult) -> Option<(i64, i64)> {
    if !rank.result.tests.is_empty() {
        return None;
    }
    let raw = rank.result.raw.as_ref()?;
    Some((
        rank.clock.to_common(raw.start_mono_ns),
        rank.clock.to_common(raw.end_mono_ns),
    ))
}

/// The first start of any rank's whole span.
fn whole_epoch(ranks: &[RankResult]) -> Option<i64> {
    ranks.iter().filter_map(whole_span).map(|(s, _)| s).min()
}

/// Every rank's whole span as one repetition: the command's aggregate,
/// first-done and sum-of-ranks figures for `sustain` and `files`.
fn whole(ranks: &[RankResult], epoch: i64) -> Option<MpiRepetition> {
    let spans: Vec<RankSpan> = ranks
        .iter()
        .filter_map(|r| {
            let (start, end) = whole_span(r)?;
            let (bytes, took) = r.result.payload.moved()?;
            Some(RankSpan {
                rank: r.rank,
                start_ns: since(start, epoch),
                end_ns: since(end, epoch),
                bytes,
                ops: r.result.raw.as_ref().map_or(0, |raw| raw.ops),
                mb_per_s: mb_per_s(bytes, took),
                bytes_at_first_done: 0,
            })
        })
        .collect();
    let first_start = spans.iter().map(|s| s.start_ns).min()?;
    let first_end = spans.iter().map(|s| s.end_ns).min()?;
    let spans: Vec<RankSpan> = spans
        .into_iter()
        .map(|s| RankSpan {
            bytes_at_first_done: even_share(&s, first_end),
            ..s
        })
        .collect();
    let bytes = spans.iter().map(|s| s.bytes).sum();
    Some(from_spans(spans, bytes, first_start))
}

/// The bytes a rank had moved by `at` if it moved them at an even rate
/// over its span (its whole total when its span ended by then).
fn even_share(s: &RankSpan, at: i64) -> u64 {
    let length = duration(s.start_ns, s.end_ns);
    if length == 0 || at >= s.end_ns {
        return s.bytes;
    }
    let share = duration(s.start_ns, at) as f64 / length as f64;
    (s.bytes as f64 * share) as u64
}

/// For commands whose detail is not tests (sustain's intervals, files'
/// sizes), the detail shown is rank 0's; the rank rows hold every rank's
/// totals. Said in the result so that no one reads it as the merge.
fn detail_of_rank_zero(ranks: &[RankResult]) -> Option<MergeNote> {
    let first = ranks.first()?;
    (ranks.len() > 1 && first.result.tests.is_empty() && first.result.payload.moved().is_some())
        .then_some(MergeNote::Typed(MergeNoteKind::DetailOfRankZero))
}

/// The first measured start of any rank on the common clock (0 when no
/// rank sent times).
fn epoch(ranks: &[RankResult]) -> i64 {
    ranks
        .iter()
        .flat_map(|r| {
            r.result
                .tests
                .iter()
                .flat_map(|t| &t.repetitions)
                .filter_map(move |m| common_span(r, m))
        })
        .map(|(start, _)| start)
        .chain(whole_epoch(ranks))
        .min()
        .unwrap_or(0)
}

/// `a − b` for instants on one clock, saturated.
fn since(instant: i64, epoch: i64) -> i64 {
    instant.saturating_sub(epoch)
}

/// How long from `from` to `to`, 0 when `to` is not later.
fn duration(from: i64, to: i64) -> u64 {
    u64::try_from(i128::from(to) - i128::from(from)).unwrap_or(0)
}

/// Repetition `j` of test `i` over every rank that sent its times;
/// `bytes` is the merged repetition's (every rank's, timed or not).
fn repetition(ranks: &[RankResult], i: usize, j: usize, bytes: u64, epoch: i64) -> MpiRepetition {
    let spans: Vec<RankSpan> = ranks
        .iter()
        .filter_map(|r| {
            let m = r.result.tests.get(i)?.repetitions.get(j)?;
            let (start, end) = common_span(r, m)?;
            Some(RankSpan {
                rank: r.rank,
                start_ns: since(start, epoch),
                end_ns: since(end, epoch),
                bytes: m.bytes,
                ops: m.ops,
                mb_per_s: m.mb_per_s,
                bytes_at_first_done: m.raw.as_ref().map_or(0, |raw| raw.bytes_at_first_done),
            })
        })
        .collect();
    let Some(first_start) = spans.iter().map(|s| s.start_ns).min() else {
        return MpiRepetition::default();
    };
    from_spans(spans, bytes, first_start)
}

/// The figures of one repetition from its ranks' spans; `bytes` is the
/// merged repetition's.
pub(crate) fn from_spans(spans: Vec<RankSpan>, bytes: u64, first_start: i64) -> MpiRepetition {
    let starts = spans.iter().map(|s| s.start_ns);
    let ends = spans.iter().map(|s| s.end_ns);
    let (last_start, first_end, last_end) = (
        starts.max().unwrap_or(first_start),
        ends.clone().min().unwrap_or(first_start),
        ends.max().unwrap_or(first_start),
    );
    let at_first_done = spans.iter().map(|s| s.bytes_at_first_done).sum();
    MpiRepetition {
        aggregate_mb_per_s: mb_per_s(bytes, duration(first_start, last_end)),
        stonewall_mb_per_s: mb_per_s(at_first_done, duration(first_start, first_end)),
        sum_of_rank_mb_per_s: spans.iter().map(|s| s.mb_per_s).sum(),
        first_start_ns: first_start,
        last_start_ns: last_start,
        first_end_ns: first_end,
        last_end_ns: last_end,
        ranks: spans,
    }
}

/// One rank's totals over the whole command, its clock, and how late it
/// was at worst.
fn rank_row(
    rank: &RankResult,
    tests: &[MpiTest],
    whole: Option<&MpiRepetition>,
    epoch: i64,
) -> RankRow {
    let measurements = || rank.result.tests.iter().flat_map(|t| &t.repetitions);
    let mut bytes: u64 = measurements().map(|m| m.bytes).sum();
    let mut elapsed: u64 = measurements().map(|m| m.elapsed_ns).sum();
    if measurements().next().is_none()
        && let Some((moved, took)) = rank.result.payload.moved()
    {
        // sustain and files keep their figures outside tests.
        (bytes, elapsed) = (moved, took);
    }
    let mut requests = LatencyHistogram::new();
    for raw in measurements().filter_map(|m| m.raw.as_ref()) {
        requests.add_buckets(&raw.read_buckets);
        requests.add_buckets(&raw.write_buckets);
    }
    let latency = requests.summary();
    let spans = || {
        measurements()
            .filter_map(|m| common_span(rank, m))
            .chain(whole_span(rank))
            .map(|(s, e)| (since(s, epoch), since(e, epoch)))
    };
    let (start_skew_ns, end_skew_ns) = lateness(rank.rank, tests, whole);
    let whole_ops = whole_span(rank)
        .and(rank.result.raw.as_ref())
        .map_or(0, |raw| raw.ops);
    RankRow {
        rank: rank.rank,
        host: rank.host.clone(),
        local_rank: rank.local_rank,
        target: rank.target.clone(),
        clock_offset_ns: rank.clock.before.offset_ns,
        clock_offset_bound_ns: rank.clock.bound_ns(),
        clock_drift_ns_per_s: rank.clock.drift_ns_per_s(),
        clock_drift_uncertainty_ns_per_s: rank.clock.drift_uncertainty_ns_per_s(),
        start_ns: spans().map(|s| s.0).min().unwrap_or(0),
        end_ns: spans().map(|s| s.1).max().unwrap_or(0),
        bytes,
        ops: measurements().map(|m| m.ops).sum::<u64>() + whole_ops,
        mb_per_s: mb_per_s(bytes, elapsed),
        p50_ns: latency.map(|l| l.p50_ns),
        p99_ns: latency.map(|l| l.p99_ns),
        start_skew_ns,
        end_skew_ns,
    }
}

/// The rank's largest lateness behind the first start and behind the
/// first end, over every repetition it took part in.
fn lateness(rank: u32, tests: &[MpiTest], whole: Option<&MpiRepetition>) -> (u64, u64) {
    tests
        .iter()
        .flat_map(|t| &t.repetitions)
        .chain(whole)
        .filter_map(|rep| {
            let span = rep.ranks.iter().find(|s| s.rank == rank)?;
            Some((
                duration(rep.first_start_ns, span.start_ns),
                duration(rep.first_end_ns, span.end_ns),
            ))
        })
        .fold((0, 0), |(s, e), (ds, de)| (s.max(ds), e.max(de)))
}
