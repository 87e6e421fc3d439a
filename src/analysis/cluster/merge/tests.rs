//! The merge against hand-made numbers and synthetic populations: counts
//! add exactly, a merged percentile is the percentile of every request,
//! the aggregate is total bytes over last end − first start, and clocks
//! thousands of seconds apart change nothing once mapped.

use super::*;
use crate::analysis::cluster::clock::OffsetEstimate;
use crate::result::cluster::RawCounts;
use crate::result::verify::{Verdict, VerifyTally};
use crate::result::{Caveat, CpuUsage, DirectionResult, RampInfo};
use crate::stats::LatencyHistogram;
use crate::units::mb_per_s;
use proptest::prelude::*;

pub(super) const S: u64 = 1_000_000_000;
const MB: u64 = 1_000_000;

/// One rank's repetition: its span on its own clock and every request's
/// latency, each request moving `block` bytes.
#[derive(Debug, Clone)]
pub(super) struct Part {
    pub(super) start: u64,
    pub(super) end: u64,
    pub(super) reads: Vec<u64>,
    pub(super) writes: Vec<u64>,
    pub(super) block: u64,
    pub(super) at_first_done: u64,
}

impl Part {
    pub(super) fn reads(start: u64, end: u64, requests: usize, block: u64) -> Part {
        Part {
            start,
            end,
            reads: (0..requests as u64).map(|i| 50_000 + i * 7).collect(),
            writes: Vec::new(),
            block,
            at_first_done: requests as u64 * block,
        }
    }

    /// The same requests, timed `shift` later on the rank's clock.
    fn shifted(&self, shift: u64) -> Part {
        Part {
            start: self.start + shift,
            end: self.end + shift,
            ..self.clone()
        }
    }
}

fn histogram(values: &[u64]) -> LatencyHistogram {
    let mut h = LatencyHistogram::new();
    values.iter().for_each(|&v| h.record(v));
    h
}

fn direction(values: &[u64], block: u64, elapsed: u64) -> Option<DirectionResult> {
    let n = values.len() as u64;
    Some(DirectionResult {
        bytes: n * block,
        ops: n,
        mb_per_s: mb_per_s(n * block, elapsed),
        iops: n as f64 * 1e9 / elapsed as f64,
        latency: histogram(values).summary()?,
    })
}

/// The measurement a rank would send for `p`, as the runner summarises it.
pub(super) fn measurement(p: &Part) -> Measurement {
    let ops = (p.reads.len() + p.writes.len()) as u64;
    let bytes = ops * p.block;
    let elapsed = p.end - p.start;
    let mut all = histogram(&p.reads);
    all.merge(&histogram(&p.writes));
    Measurement {
        bytes,
        ops,
        elapsed_ns: elapsed,
        mb_per_s: mb_per_s(bytes, elapsed),
        mib_per_s: mb_per_s(bytes, elapsed) * 1e6 / 1_048_576.0,
        iops: ops as f64 * 1e9 / elapsed as f64,
        read: direction(&p.reads, p.block, elapsed),
        write: direction(&p.writes, p.block, elapsed),
        latency: all.summary(),
        cpu: CpuUsage {
            user_s: 0.25,
            system_s: 0.5,
            cpu_s_per_gb: 0.75 / (bytes as f64 / 1e9),
        },
        device_io: None,
        host: None,
        ramp: RampInfo {
            ops: 2,
            bytes: 2 * p.block,
            elapsed_ns: 1_000,
        },
        sync_ns: 0,
        verify: None,
        warnings: Vec::new(),
        interrupted: false,
        raw: Some(RawCounts {
            read_buckets: histogram(&p.reads).buckets(),
            write_buckets: histogram(&p.writes).buckets(),
            start_mono_ns: p.start,
            end_mono_ns: p.end,
            bytes_at_first_done: p.at_first_done,
            ops: 0,
        }),
    }
}

/// A test of the given repetitions, its spreads as the runner gives them.
pub(super) fn test(name: &str, reps: Vec<Measurement>) -> TestResult {
    let mut t = crate::testdata::test(name, "read", &[]);
    t.repetitions = reps;
    t.refresh_spreads();
    t
}

/// A clock `offset` ahead of rank 0's, known exactly.
pub(super) fn clock(offset: i64) -> ClockMap {
    ClockMap {
        before: OffsetEstimate {
            offset_ns: offset,
            bound_ns: 0,
            at_ns: 0,
        },
        after: None,
    }
}

pub(super) fn rank(n: u32, host: &str, offset: i64, tests: Vec<TestResult>) -> RankResult {
    let mut result = crate::testdata::run(None, "2025-01-01T00:00:00Z", &[], &[]);
    result.tests = tests;
    result.host.hostname = host.into();
    RankResult {
        rank: n,
        host: host.into(),
        local_rank: 0,
        target: format!("/scratch/{host}"),
        clock: clock(offset),
        result,
    }
}

/// One test of one repetition per rank, rank r's part `parts[r]`, rank r's
/// clock `offsets[r]` ahead (its part's times shifted by it).
fn job(parts: &[Part], offsets: &[i64]) -> Vec<RankResult> {
    parts
        .iter()
        .zip(offsets)
        .enumerate()
        .map(|(r, (p, &offset))| {
            let shifted = Part {
                start: (p.start as i64 + offset) as u64,
                end: (p.end as i64 + offset) as u64,
                ..p.clone()
            };
            let t = test("SEQ 1MB read", vec![measurement(&shifted)]);
            rank(r as u32, &format!("h{r}"), offset, vec![t])
        })
        .collect()
}

pub(super) fn merged(ranks: Vec<RankResult>) -> RunResult {
    merge(ranks, MergeOptions::default()).expect("the ranks ran alike")
}

pub(super) fn mpi(r: &RunResult) -> &crate::result::cluster::MpiSection {
    r.mpi.as_ref().expect("a merged result has an mpi section")
}

/// Rank-0 times far from zero, so clocks thousands of seconds behind stay
/// positive.
pub(super) const T0: u64 = 100_000 * S;

#[test]
fn aggregate_is_total_bytes_over_last_end_minus_first_start() {
    // Rank A 0–10 s, 100 MB; rank B 2–12 s, 100 MB, 80 of them moved by
    // the time A finished.
    let a = Part::reads(T0, T0 + 10 * S, 100, MB);
    let mut b = Part::reads(T0 + 2 * S, T0 + 12 * S, 100, MB);
    b.at_first_done = 80 * MB;
    let out = merged(job(&[a, b], &[0, 0]));
    let m = &out.tests[0].repetitions[0];
    assert_eq!((m.bytes, m.ops, m.elapsed_ns), (200 * MB, 200, 12 * S));
    assert!((m.mb_per_s - 200.0 / 12.0).abs() < 1e-9, "{}", m.mb_per_s);
    assert!((m.iops - 200.0 / 12.0).abs() < 1e-9);
    let rep = &mpi(&out).tests[0].repetitions[0];
    assert!((rep.aggregate_mb_per_s - 200.0 / 12.0).abs() < 1e-9);
    // When A finished (10 s in): 100 + 80 MB over 10 s.
    assert!((rep.stonewall_mb_per_s - 18.0).abs() < 1e-9);
    // Each moved 100 MB in its own 10 s.
    assert!((rep.sum_of_rank_mb_per_s - 20.0).abs() < 1e-9);
    assert_eq!(
        (
            rep.first_start_ns,
            rep.last_start_ns,
            rep.first_end_ns,
            rep.last_end_ns
        ),
        (0, 2 * S as i64, 10 * S as i64, 12 * S as i64)
    );
    assert_eq!((rep.start_skew_ns(), rep.end_skew_ns()), (2 * S, 2 * S));
    let rows = &mpi(&out).ranks;
    assert_eq!((rows[0].start_ns, rows[0].end_ns), (0, 10 * S as i64));
    assert_eq!(
        (rows[1].start_ns, rows[1].end_ns),
        (2 * S as i64, 12 * S as i64)
    );
    assert_eq!((rows[0].start_skew_ns, rows[0].end_skew_ns), (0, 0));
    assert_eq!((rows[1].start_skew_ns, rows[1].end_skew_ns), (2 * S, 2 * S));
    assert!((rows[1].mb_per_s - 10.0).abs() < 1e-9);
    // Counts summed, CPU and warm-ups added, the device counters dropped.
    assert!((m.cpu.user_s - 0.5).abs() < 1e-12 && (m.cpu.system_s - 1.0).abs() < 1e-12);
    assert!((m.cpu.cpu_s_per_gb - 1.5 / 0.2).abs() < 1e-9);
    assert_eq!((m.ramp.ops, m.ramp.bytes), (4, 4 * MB));
    assert!(m.raw.is_none() && m.device_io.is_none());
    let read = m.read.as_ref().unwrap();
    assert_eq!(
        (read.bytes, read.ops, read.latency.count),
        (200 * MB, 200, 200)
    );
    assert!(m.write.is_none());
}

#[test]
fn a_single_rank_merges_to_itself_plus_the_section() {
    let reps = |shift: u64| {
        [3, 5, 4]
            .iter()
            .enumerate()
            .map(|(j, &n)| {
                let start = T0 + shift + j as u64 * 20 * S;
                let mut p = Part::reads(start, start + n * S, 50 * n as usize, MB);
                p.writes = (0..n * 3).map(|i| 90_000 + i * 11).collect();
                measurement(&p)
            })
            .collect::<Vec<_>>()
    };
    let mut alone = rank(
        0,
        "solo",
        0,
        vec![test("a", reps(0)), test("b", reps(100 * S))],
    );
    alone.result.tests[1].repetitions[2].device_io = Some(device_io());
    alone.result.error = Some("disk full".into());
    alone.result.tests[0].skipped = Some(crate::result::SkipReason::ReadOnly);
    let out = merged(vec![alone.clone()]);
    let mut expected = alone.result.clone();
    for m in expected.tests.iter_mut().flat_map(|t| &mut t.repetitions) {
        m.raw = None;
    }
    let json = |r: &RunResult| serde_json::to_value(&r.tests).unwrap();
    assert_eq!(json(&out), json(&expected));
    assert_eq!(out.error.as_deref(), Some("disk full"));
    let section = mpi(&out);
    assert_eq!(section.size, 1);
    assert_eq!(section.ranks[0].host, "solo");
    assert_eq!(section.ranks[0].start_ns, 0);
    assert_eq!(section.tests.len(), 2);
    assert_eq!(
        section.tests[1].repetitions[0].first_start_ns,
        100 * S as i64
    );
}

fn device_io() -> crate::result::DeviceIo {
    crate::result::DeviceIo {
        device: "sda".into(),
        read_requests: 1,
        write_requests: 0,
        read_merges: 0,
        write_merges: 0,
        read_bytes: 4096,
        write_bytes: 0,
        busy_ms: 1,
        avg_read_request_bytes: Some(4096.0),
        avg_write_request_bytes: None,
        iocurve_read_bytes: 4096,
        iocurve_write_bytes: 0,
        cache_served_fraction: 0.0,
    }
}

#[test]
fn skips_errors_warnings_and_tallies_name_or_keep_every_rank() {
    let part = Part::reads(T0, T0 + S, 10, MB);
    let mut ranks = job(&[part.clone(), part.clone(), part], &[0, 0, 0]);
    ranks[1].result.tests[0].skipped = Some(crate::result::SkipReason::ReadOnly);
    ranks[2].result.error = Some("I/O error".into());
    ranks[1].result.error = Some("out of space".into());
    ranks[2].result.interrupted = true;
    let cache = Caveat::PagesResident {
        resident_pages: 1,
        total_pages: 2,
    };
    ranks[0].result.tests[0].repetitions[0].warnings = vec![cache.clone()];
    ranks[2].result.tests[0].repetitions[0].warnings = vec![cache.clone(), Caveat::FioNoRuntime];
    ranks[0].result.tests[0].repetitions[0].device_io = Some(device_io());
    ranks[1].result.tests[0].repetitions[0].sync_ns = 7;
    ranks[2].result.tests[0].repetitions[0].sync_ns = 3;
    let mut tally = VerifyTally::default();
    tally.record(4096, Verdict::Corrupted);
    tally.record(0, Verdict::Ok);
    ranks[0].result.tests[0].repetitions[0].verify = Some(tally.clone());
    ranks[2].result.tests[0].repetitions[0].verify = Some(tally);
    ranks[2].result.tests[0].repetitions[0].interrupted = true;
    let out = merged(ranks);
    let t = &out.tests[0];
    assert_eq!(
        t.skipped,
        Some(crate::result::SkipReason::OnRank {
            rank: 1,
            host: "h1".into(),
            reason: Box::new(crate::result::SkipReason::ReadOnly),
        })
    );
    assert_eq!(out.error.as_deref(), Some("rank 1 (h1): out of space"));
    assert!(out.interrupted);
    let m = &t.repetitions[0];
    assert_eq!(m.warnings, vec![cache, Caveat::FioNoRuntime]);
    assert!(m.device_io.is_none());
    assert_eq!(m.sync_ns, 7);
    let v = m.verify.as_ref().unwrap();
    assert_eq!((v.ok, v.corrupted, v.first_bad.len()), (2, 2, 2));
    // One repetition, cut short: no spread to give.
    assert!(m.interrupted && t.mb_per_s.is_none());
}

#[test]
fn a_rank_cut_short_contributes_what_it_measured() {
    let part = Part::reads(T0, T0 + S, 10, MB);
    let two = |r: u32, host: &str| {
        let tests = vec![
            test(
                "a",
                vec![measurement(&part), measurement(&part.shifted(2 * S))],
            ),
            test("b", vec![measurement(&part.shifted(4 * S))]),
        ];
        rank(r, host, 0, tests)
    };
    let mut short = two(1, "b");
    short.result.tests.truncate(1);
    short.result.tests[0].repetitions.truncate(1);
    short.result.interrupted = true;
    let out = merged(vec![two(0, "a"), short]);
    assert_eq!(out.tests.len(), 2);
    assert_eq!(out.tests[0].repetitions[0].bytes, 20 * MB);
    assert_eq!(out.tests[0].repetitions[1].bytes, 10 * MB);
    assert_eq!(out.tests[1].repetitions[0].bytes, 10 * MB);
    let section = mpi(&out);
    assert_eq!(section.tests[0].repetitions[1].ranks.len(), 1);
    let total: u64 = section.ranks.iter().map(|r| r.bytes).sum();
    assert_eq!(total, 40 * MB);
}

#[test]
fn ranks_that_ran_different_tests_are_named_in_one_line() {
    let part = Part::reads(T0, T0 + S, 10, MB);
    let mut ranks = job(&[part.clone(), part.clone(), part.clone(), part], &[0; 4]);
    // Names may carry each rank's own target (`curve /dev/zr{rank}`):
    // never a difference by themselves.
    ranks[1].result.tests[0].name = "/dev/zr1 read 1MiB".into();
    ranks[2].result.tests[0].workload.block_size = 4096;
    ranks[3].result.tests[0].workload.queue_depth = 32;
    // The one line a merge of these ranks is refused with.
    let refusal = |ranks: &[RankResult]| {
        merge(ranks.to_vec(), MergeOptions::default())
            .unwrap_err()
            .to_string()
    };
    let line = refusal(&ranks);
    assert!(
        line.starts_with(
            "ranks ran different tests: rank 2 (h2), rank 3 (h3) differ from rank 0 (h0); \
             first difference, rank 2: test 1 (`SEQ 1MB read`) has block size 4096 against"
        ),
        "{line}"
    );
    ranks[2].result.tests[0].workload.block_size = ranks[0].result.tests[0].workload.block_size;
    let line = refusal(&ranks);
    assert!(
        line.ends_with("test 1 (`SEQ 1MB read`) has queue depth 32 against 1"),
        "{line}"
    );
    // A different command, and a test missing without a reason.
    ranks[3].result.tests[0].workload.queue_depth = 1;
    ranks[1].result = crate::testdata::as_run(ranks[1].result.clone());
    let line = refusal(&ranks);
    assert!(
        line.contains("rank 1: ran `run` where rank 0 ran `profile`"),
        "{line}"
    );
    ranks[1].result = ranks[0].result.clone();
    ranks[1].result.tests.clear();
    let line = refusal(&ranks);
    assert!(line.contains("rank 1: ran 0 tests against 1"), "{line}");
    assert!(!line.contains('\n'));
}

#[test]
fn no_ranks_or_a_rank_twice_is_refused() {
    assert!(matches!(
        merge(Vec::new(), MergeOptions::default()),
        Err(MergeError::NoRanks)
    ));
    let part = Part::reads(T0, T0 + S, 10, MB);
    let mut ranks = job(&[part.clone(), part], &[0, 0]);
    ranks[1].rank = 0;
    assert!(matches!(
        merge(ranks, MergeOptions::default()),
        Err(MergeError::DuplicateRank { rank: 0, .. })
    ));
}

#[test]
fn options_and_clocks_are_recorded() {
    let part = Part::reads(T0, T0 + S, 10, MB);
    let mut ranks = job(&[part.clone(), part], &[0, 0]);
    ranks[1].clock = ClockMap {
        before: OffsetEstimate {
            offset_ns: -3_000 * S as i64,
            bound_ns: 40_000,
            at_ns: T0 - 10 * S,
        },
        after: Some(OffsetEstimate {
            offset_ns: -3_000 * S as i64 + 200,
            bound_ns: 60_000,
            at_ns: T0 + 30 * S,
        }),
    };
    let read_other_host =
        crate::analysis::cluster::placement::read_partners(&["h0".to_string(), "h1".to_string()]);
    let options = MergeOptions {
        stonewall: true,
        shared_file: true,
        read_other_host: Some(read_other_host.clone()),
    };
    let out = merge(ranks, options).unwrap();
    let s = mpi(&out);
    assert!(s.stonewall && s.shared_file);
    assert_eq!(s.read_other_host, Some(read_other_host));
    let row = &s.ranks[1];
    assert_eq!(row.clock_offset_ns, -3_000 * S as i64);
    assert_eq!(row.clock_offset_bound_ns, 60_000);
    assert!((row.clock_drift_ns_per_s - 5.0).abs() < 1e-9);
    assert_eq!(
        (row.host.as_str(), row.target.as_str()),
        ("h1", "/scratch/h1")
    );
}

/// Splits `values` over `ranks` ranks by the given choices.
fn split(values: &[u64], choice: &[usize], ranks: usize) -> Vec<Vec<u64>> {
    let mut out = vec![Vec::new(); ranks];
    for (v, c) in values.iter().zip(choice.iter().cycle()) {
        out[c % ranks].push(*v);
    }
    out
}

proptest! {
    #[test]
    fn a_merged_percentile_is_the_percentile_of_every_request(
        reads in prop::collection::vec(1u64..10_000_000_000, 1..300),
        writes in prop::collection::vec(1u64..10_000_000_000, 0..300),
        choice in prop::collection::vec(0usize..8, 1..50),
        ranks in 2usize..6,
    ) {
        let read_parts = split(&reads, &choice, ranks);
        let write_parts = split(&writes, &choice, ranks);
        let parts: Vec<Part> = (0..ranks)
            .map(|r| Part {
                start: T0 + r as u64 * 1_000,
                end: T0 + S + r as u64 * 3_000,
                reads: read_parts[r].clone(),
                writes: write_parts[r].clone(),
                block: 4096,
                at_first_done: 0,
            })
            .collect();
        let out = merged(job(&parts, &vec![0; ranks]));
        let m = &out.tests[0].repetitions[0];
        let mut every = histogram(&reads);
        every.merge(&histogram(&writes));
        prop_assert_eq!(m.latency, every.summary());
        prop_assert_eq!(m.read.as_ref().map(|d| d.latency), histogram(&reads).summary());
        prop_assert_eq!(m.write.as_ref().map(|d| d.latency), histogram(&writes).summary());
        prop_assert_eq!(m.ops, (reads.len() + writes.len()) as u64);
        // The ranks' rows add up to the merged test exactly.
        let section = out.mpi.as_ref().unwrap();
        let bytes: u64 = section.ranks.iter().map(|r| r.bytes).sum();
        let ops: u64 = section.ranks.iter().map(|r| r.ops).sum();
        prop_assert_eq!(bytes, m.bytes);
        prop_assert_eq!(ops, m.ops);
        prop_assert_eq!(m.elapsed_ns, S + (ranks as u64 - 1) * 3_000);
    }

    #[test]
    fn ranks_rows_add_up_to_the_merged_tests(
        shape in prop::collection::vec(prop::collection::vec(1usize..40, 1..4), 1..4),
        ranks in 1usize..5,
    ) {
        let job: Vec<RankResult> = (0..ranks)
            .map(|r| {
                let tests = shape
                    .iter()
                    .enumerate()
                    .map(|(i, reps)| {
                        let reps = reps
                            .iter()
                            .enumerate()
                            .map(|(j, &n)| {
                                let start = T0 + (i * 10 + j) as u64 * S + r as u64 * 1_000;
                                measurement(&Part::reads(start, start + S, n + r, 4096))
                            })
                            .collect();
                        test(&format!("t{i}"), reps)
                    })
                    .collect();
                rank(r as u32, &format!("h{}", r % 2), 0, tests)
            })
            .collect();
        let out = merged(job);
        let section = out.mpi.as_ref().unwrap();
        let tests = || out.tests.iter().flat_map(|t| &t.repetitions);
        prop_assert_eq!(
            section.ranks.iter().map(|r| r.bytes).sum::<u64>(),
            tests().map(|m| m.bytes).sum::<u64>()
        );
        prop_assert_eq!(
            section.ranks.iter().map(|r| r.ops).sum::<u64>(),
            tests().map(|m| m.ops).sum::<u64>()
        );
        prop_assert_eq!(section.size as usize, ranks);
        prop_assert_eq!(section.ranks.iter().map(|r| r.start_ns).min(), Some(0));
    }

    #[test]
    fn clocks_thousands_of_seconds_apart_merge_as_aligned_ones(
        offsets in prop::collection::vec(-50_000i64..50_000, 2..5),
        starts in prop::collection::vec(0u64..5_000_000_000, 5),
        lengths in prop::collection::vec(1u64..20_000_000_000, 5),
    ) {
        let n = offsets.len();
        let parts: Vec<Part> = (0..n)
            .map(|r| {
                let start = T0 + starts[r];
                Part::reads(start, start + lengths[r], 20 + r, MB)
            })
            .collect();
        let aligned = merged(job(&parts, &vec![0; n]));
        let offsets: Vec<i64> = offsets.iter().map(|s| s * S as i64).collect();
        let apart = merged(job(&parts, &offsets));
        let json = |r: &RunResult| serde_json::to_value(&r.tests).unwrap();
        prop_assert_eq!(json(&aligned), json(&apart));
        let (a, b) = (aligned.mpi.unwrap(), apart.mpi.unwrap());
        prop_assert_eq!(&a.tests, &b.tests);
        for (x, y) in a.ranks.iter().zip(&b.ranks) {
            prop_assert_eq!(
                (x.start_ns, x.end_ns, x.bytes, x.start_skew_ns, x.end_skew_ns),
                (y.start_ns, y.end_ns, y.bytes, y.start_skew_ns, y.end_skew_ns)
            );
        }
    }
}
