//! The merge of a curve run: the curve read again from the merged tests
//! (points, model and advice), not kept from one rank.

use super::*;

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

/// The sizes of the curve both ranks measure.
const SIZES: [u64; 6] = [4096, 16384, 65536, 262_144, 1 << 20, 4 << 20];

/// One rank's tests of `sizes`, started `offset` after the others: each
/// request takes 100 µs + n / (200 MB/s).
fn rank_tests(sizes: &[u64], offset: u64) -> Vec<TestResult> {
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
}

/// The curve series a rank stored, before the merge reads it again.
fn series(sizes: &[u64]) -> CurveSeries {
    CurveSeries {
        target: "/scratch/{host}".into(),
        pattern: crate::vocab::Rw::Read,
        queue_depth: 1,
        logical_block_size: 512,
        points: sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| curve_point(n, i))
            .collect(),
        model: None,
        fit_quality: None,
        advice: None,
        deviations: Vec::new(),
        alignment_penalties: Vec::new(),
        recommendation: None,
        interface: None,
        ceiling: None,
        skipped: None,
        warnings: Vec::new(),
        unaligned: Vec::new(),
    }
}

#[test]
fn a_curve_is_read_again_from_the_merged_tests() {
    // t(n) = 100 µs + n / (200 MB/s) per request on each rank; two ranks
    // at once double the throughput.
    let series = series(&SIZES);
    let rank_tests = |offset: u64| rank_tests(&SIZES, offset);
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
    assert!(s.recommendation.is_some() && s.fit_quality.is_some());
    // The aggregate serves a request every 50 µs + n / (400 MB/s).
    assert!((model.t0_us - 50.0).abs() < 0.5, "{model:?}");
    assert!((model.bandwidth_mb_s - 400.0).abs() < 4.0, "{model:?}");
    assert!(s.points.iter().all(|p| p.model_ratio != Some(42.0)));
}
