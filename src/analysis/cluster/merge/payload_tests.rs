//! The merge of the commands whose figures are not only tests: a curve
//! read again from the merged tests, and a sustained write whose ranks
//! sent their spans (rank rows filled, the job's aggregate in `whole`).

use super::tests::{Part, S, T0, clock, measurement, merged, mpi, rank, test};
use super::*;
use crate::result::apps::SustainReport;
use crate::result::cluster::RawCounts;
use crate::result::config::Recorded;
use crate::result::{CurvePoint, CurveReport, CurveSeries, Payload};

fn curve_point(size: u64, test: usize) -> CurvePoint {
    CurvePoint {
        size,
        buffered: false,
        reference: false,
        mb_per_s: None,
        iops: None,
        p50_ns: None,
        p99_ns: Some(1),
        model_ratio: Some(42.0),
        test,
    }
}

/// A read series of one point per size, point i measured by test i,
/// with figures the merge must replace.
fn read_series(sizes: &[u64]) -> CurveSeries {
    let points = sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| curve_point(n, i))
        .collect();
    CurveSeries::unread(
        "/scratch/{host}".into(),
        crate::vocab::Rw::Read,
        1,
        512,
        points,
    )
}

#[test]
fn a_curve_is_read_again_from_the_merged_tests() {
    // t(n) = 100 µs + n / (200 MB/s) per request on each rank; two ranks
    // at once double the throughput.
    let sizes = [4096u64, 16384, 65536, 262_144, 1 << 20, 4 << 20];
    let rank_tests = |offset: u64| -> Vec<TestResult> {
        sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                // 200 MB/s is 5 ns a byte.
                let per_request = 100_000 + 5 * n;
                let start = T0 + offset + i as u64 * 10 * S;
                let reps = (0..3)
                    .map(|j| {
                        let start = start + j * 2 * S;
                        let mut p = Part::reads(start, start + 100 * per_request, 100, n);
                        p.reads = vec![per_request; 100];
                        measurement(&p)
                    })
                    .collect();
                test(&format!("{n}"), reps)
            })
            .collect()
    };
    let series = read_series(&sizes);
    let curve = |tests| {
        let mut r = rank(0, "a", 0, tests);
        r.result.payload = Payload::Curve {
            config: Recorded::Stored(serde_json::json!({})),
            curve: CurveReport {
                targets: Vec::new(),
                series: vec![series.clone()],
                crossovers: Vec::new(),
            },
        };
        r
    };
    let a = curve(rank_tests(0));
    let mut b = curve(rank_tests(7 * S));
    b.rank = 1;
    b.host = "b".into();
    b.clock = clock(7 * S as i64);
    let out = merged(vec![a, b]);
    let Payload::Curve { curve, .. } = &out.payload else {
        panic!("still a curve")
    };
    let s = &curve.series[0];
    for p in &s.points {
        let t = &out.tests[p.test];
        assert_eq!(p.mb_per_s, t.mb_per_s);
        assert_eq!(p.iops, t.iops);
        assert_eq!(p.p50_ns, t.repetitions[0].latency.map(|l| l.p50_ns));
        assert!(p.p99_ns.is_some() && p.p99_ns != Some(1));
    }
    // Two ranks over the same spans: twice one rank's rate.
    let one = 4_194_304.0 * 1e3 / (100_000.0 + 5.0 * 4_194_304.0);
    let big = s.points.last().unwrap().mb_per_s.unwrap().median;
    assert!((big / one - 2.0).abs() < 1e-6, "{big} against {one}");
    let model = s.model.as_ref().expect("the line fits the merged points");
    assert!(s.fit_quality.is_some());
    // The aggregate serves a request every 50 µs + n / (400 MB/s).
    assert!((model.t0_us - 50.0).abs() < 0.5, "{model:?}");
    assert!((model.bandwidth_mb_s - 400.0).abs() < 4.0, "{model:?}");
    assert!(s.points.iter().all(|p| p.model_ratio != Some(42.0)));
}

/// A rank of a sustained write of `mb` MB over `secs` s of its time,
/// ending `end` s after T0 on its clock (`offset` s ahead of rank 0's).
fn sustain_rank(n: u32, mb: u64, secs: u64, end: u64, offset: i64) -> RankResult {
    let mut r = rank(n, &format!("h{n}"), offset * S as i64, Vec::new());
    let sustain = SustainReport {
        block_size: 1 << 20,
        bytes: mb * 1_000_000,
        elapsed_ns: secs * S,
        ..Default::default()
    };
    r.result.payload = Payload::Sustain {
        config: Recorded::Stored(serde_json::json!({})),
        sustain,
    };
    let end = (T0 as i64 + (end as i64 + offset) * S as i64) as u64;
    r.result.raw = Some(RawCounts {
        start_mono_ns: end - secs * S,
        end_mono_ns: end,
        ops: mb,
        ..Default::default()
    });
    r
}

#[test]
fn a_sustained_write_on_two_ranks_fills_their_rows_and_the_aggregate() {
    // Rank 0 writes 100 MB over 0..10 s; rank 1, its clock 500 s ahead,
    // 50 MB over 2..12 s of rank 0's time.
    let out = merged(vec![
        sustain_rank(0, 100, 10, 10, 0),
        sustain_rank(1, 50, 10, 12, 500),
    ]);
    let m = mpi(&out);
    let (a, b) = (&m.ranks[0], &m.ranks[1]);
    assert_eq!((a.start_ns, a.end_ns), (0, 10 * S as i64));
    assert_eq!((b.start_ns, b.end_ns), (2 * S as i64, 12 * S as i64));
    assert_eq!((a.ops, b.ops), (100, 50));
    assert_eq!((a.start_skew_ns, b.start_skew_ns), (0, 2 * S));
    assert_eq!(b.end_skew_ns, 2 * S);
    let whole = m.whole.as_ref().expect("the job's aggregate");
    // 150 MB over 12 s; by the first end (10 s) rank 1 had 8/10 of its 50.
    assert!((whole.aggregate_mb_per_s - 12.5).abs() < 1e-9, "{whole:?}");
    assert!((whole.stonewall_mb_per_s - 14.0).abs() < 1e-9, "{whole:?}");
    assert!(
        (whole.sum_of_rank_mb_per_s - 15.0).abs() < 1e-9,
        "{whole:?}"
    );
    assert!(out.raw.is_none(), "the spans are never printed");
}

#[test]
fn a_run_of_tests_has_no_whole() {
    let parts = [Part::reads(T0, T0 + S, 10, 1 << 20)];
    let out = merged(vec![rank(
        0,
        "h0",
        0,
        vec![test("SEQ", vec![measurement(&parts[0])])],
    )]);
    assert!(mpi(&out).whole.is_none());
    let _ = clock(0);
}
