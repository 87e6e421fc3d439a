//! The comparison's renderings, checked on stored-run fixtures.

use super::*;
use crate::analysis::compare::regressions;
use crate::stats::bootstrap::Change;
use crate::testdata;

#[test]
fn only_a_slowdown_judged_beyond_the_gate_is_a_regression() {
    let entries = entries();
    let c = compare(&entries[..2], 0.05, &[]).unwrap();
    let changes: Vec<f64> = c
        .changes
        .iter()
        .filter_map(|ch| ch.percent_change.as_ref().map(|p| p.estimate))
        .collect();
    let worst = changes.iter().copied().fold(0.0, f64::min);
    let slower = c.changes.iter().any(|ch| {
        ch.verdict
            .as_ref()
            .is_ok_and(|v| v.change == Change::Slower)
    });
    // Gates just inside and just outside the worst judged slowdown.
    let inside = regressions(&c, (-worst - 0.001).max(0.0));
    let outside = regressions(&c, -worst + 0.001);
    assert_eq!(inside.is_empty(), !slower, "{changes:?}");
    assert!(outside.is_empty(), "{changes:?}");
    for r in inside {
        let line = regression_line(&c, r, 0.05);
        assert!(
            line.contains("is slower than") && line.contains('%'),
            "{line}"
        );
    }
}

fn entries() -> Vec<Entry> {
    let a = testdata::sd_identity("SD02G", 3, "SD", "0x2083a7c8", "2007-09");
    let b = testdata::sd_identity("SD08G", 3, "SD", "0x6051fd1c", "2008-12");
    let c = testdata::sd_identity("00000", 0x1b, "SM", "0x2b060bfe", "2010-05");
    vec![
        run_entry(
            "run 1",
            Some(a),
            "2024-03-01T10:00:00Z",
            &[20.1, 19.9, 20.2],
            &[18.0, 17.8, 18.1],
        ),
        run_entry(
            "run 2",
            Some(b),
            "2024-03-01T11:00:00Z",
            &[20.0, 20.3, 19.7],
            &[12.2, 17.1, 15.0],
        ),
        run_entry(
            "run 3",
            Some(c),
            "2024-03-02T09:00:00Z",
            &[11.2, 15.3, 13.9],
            &[6.0, 6.1, 5.9],
        ),
    ]
}

#[test]
fn snapshot_side_by_side() {
    let opts = opts();
    // Pinned as laid out in 100 columns.
    let text = crate::report::width::with(100, || render(&entries(), &opts).unwrap());
    insta::assert_snapshot!(text);
}

#[test]
fn snapshot_markdown() {
    let opts = Options {
        markdown: true,
        ..opts()
    };
    insta::assert_snapshot!(render(&entries(), &opts).unwrap());
}

#[test]
fn snapshot_same_device_verdicts() {
    let card = || testdata::sd_identity("SD08G", 3, "SD", "0x6051fd1c", "2008-12");
    let runs = vec![
        run_entry(
            "run 4",
            Some(card()),
            "2024-01-10T08:00:00Z",
            &[20.0, 20.4, 19.8],
            &[17.1, 16.8, 17.3],
        ),
        run_entry(
            "run 9",
            Some(card()),
            "2025-01-12T08:00:00Z",
            &[20.2, 19.6, 20.1],
            &[13.6, 13.9, 13.4],
        ),
    ];
    // Four earlier runs of the card that agree with each other and with
    // run 4: run 9 is judged against the mean of the five, with the
    // noise between runs estimated from them, and small.
    let history: Vec<RunResult> = [17.1, 16.9, 17.2, 17.0]
        .iter()
        .enumerate()
        .map(|(i, w)| {
            testdata::run(
                Some(card()),
                &format!("2024-0{}-01T08:00:00Z", i + 2),
                &[20.1, 19.9, 20.0],
                &[w - 0.1, *w, w + 0.1],
            )
        })
        .collect();
    let mut opts = Options { history, ..opts() };
    let text = render(&runs, &opts).unwrap();
    assert!(
        text.contains("run 9, 1 MiB read QD1: no clear change (-0%, 95% CI -7% to +7%"),
        "{text}"
    );
    assert!(
        text.contains(
            "run 9, 1 MiB write QD1: slower by 20% (95% CI 14%–25%, 3 vs 3 repetitions; against the mean of 5 like runs before the later one, run-to-run noise ±2%)"
        ),
        "{text}"
    );
    insta::assert_snapshot!(text);
    // Without the history, two runs cannot tell 20% from the noise
    // between runs.
    opts.history.clear();
    let text = render(&runs, &opts).unwrap();
    assert!(
        text.contains("run 9, 1 MiB write QD1: no clear change (-20%, 95% CI")
            && text.contains("run-to-run noise ±15% assumed: under 3 earlier runs of this test"),
        "{text}"
    );
}

/// Back-to-back runs of one loop device, the later one on a busy host,
/// 45% apart with tight repetitions. The bootstrap alone called it
/// "slower by 45% (95% CI 34%–54%)" and `--fail-above 5` fired; with
/// the later run's recorded company it cannot tell, says why, names
/// the differences, and no gate fires (the gate cannot vouch instead).
#[test]
fn a_busy_host_is_named_and_fires_no_gate() {
    let host = |load: f64, other: u64| crate::result::host::HostConditions {
        start: crate::result::host::HostSample {
            load_1m: Some(load),
            cached_bytes: Some(1 << 30),
            dirty_bytes: Some(0),
            runnable_tasks: None,
            online_cpus: None,
        },
        end: crate::result::host::HostSample {
            load_1m: Some(load),
            cached_bytes: Some(1 << 30),
            dirty_bytes: Some(0),
            runnable_tasks: None,
            online_cpus: None,
        },
        cpu_busy_share: Some(0.5),
        cpu_steal_share: Some(0.0),
        cpu_pressure_share: None,
        other_read_bytes: Some(0),
        other_write_bytes: Some(other),
        target_resident_share: None,
        backing_resident_share: None,
    };
    let with = |reps: &[f64], load: f64, other: u64| {
        let mut r = random_run(reps);
        for m in &mut r.tests[0].repetitions {
            m.device_io = Some(testdata::device_io());
            m.host = Some(host(load, other));
        }
        r
    };
    let before = [100.0, 104.0, 96.0];
    let after = [55.0, 57.0, 53.0];
    let old = crate::stats::bootstrap::judge(&before, &after, 0.05).unwrap();
    assert_eq!(old.change, Change::Slower, "the old verdict: {old:?}");
    let runs = [
        entry("run 1", with(&before, 0.2, 0)),
        entry("run 2", with(&after, 3.9, 41_000_000 / 3)),
    ];
    let text = render(&runs, &opts()).unwrap();
    assert!(
        text.contains("run 2, 4 KiB randread QD32: cannot tell: the later run shared the device with other I/O (measured -45%); the runs differed in host load 0.2 vs 3.9, 39.1 MiB of other I/O on the device during the later run"),
        "{text}"
    );
    let c = compare(&runs, 0.05, &[]).unwrap();
    assert!(regressions(&c, 0.05).is_empty());
    assert_eq!(crate::analysis::compare::undecided(&c).len(), 1);
    let json: serde_json::Value =
        serde_json::from_str(&render_json(&runs, &opts()).unwrap()).unwrap();
    let ch = &json["changes"][0];
    assert_eq!(ch["host_after"]["disturbed"], true);
    assert_eq!(ch["host_differences"][0]["what"], "load");
    assert_eq!(ch["change"]["outcome"], "cannot_tell");
    assert_eq!(ch["change"]["why"]["reason"], "disturbed");
    assert_eq!(ch["change"]["why"]["sides"], "after");
    assert!(
        ch["verdict"]["verdict"]["within_runs"]["high"]
            .as_f64()
            .unwrap()
            < 0.6
    );
}

/// A pair of read-only runs is headed by its read test alone.
#[test]
fn the_heading_names_only_the_tests_compared() {
    let runs = [
        entry("run 1", random_run(&[0.6, 0.62])),
        entry("run 2", random_run(&[0.6, 0.61])),
    ];
    let text = render(&runs, &opts()).unwrap();
    let heading = text.lines().next().unwrap();
    assert_eq!(heading, "test: 4 KiB randread QD32, engine sync");
    // A profile has both directions: both are named.
    let text = render(&entries(), &opts()).unwrap();
    // (with the first run's name of the test, which says more).
    assert!(
        text.starts_with("test: SEQ 1MiB Q8 (1 MiB read/write QD1),"),
        "{text}"
    );
}

/// A `run` of 4 KiB QD32 random reads, with these repetitions.
fn random_run(reps: &[f64]) -> RunResult {
    let mut r = testdata::as_run(testdata::run(None, "2024-02-01T00:00:00Z", &[], &[]));
    let mut t = testdata::test("4KiB", "randread", reps);
    t.workload.queue_depth = 32;
    r.tests = vec![t];
    r
}

/// The entry `source` of a run of testdata's read and write figures.
fn run_entry(
    source: &str,
    card: Option<crate::probe::DeviceIdentity>,
    started_at: &str,
    read: &[f64],
    write: &[f64],
) -> Entry {
    entry(source, testdata::run(card, started_at, read, write))
}

fn entry(source: &str, result: RunResult) -> Entry {
    Entry {
        source: source.into(),
        result,
    }
}

fn opts() -> Options {
    Options {
        test: None,
        threshold: 0.05,
        markdown: false,
        history: Vec::new(),
    }
}

#[test]
fn a_profile_and_an_unlike_run_are_refused_with_the_reason() {
    let profile = testdata::run(None, "2024-01-01T00:00:00Z", &[20.0, 21.0], &[9.0, 9.5]);
    let runs = [
        entry("run 1", profile),
        entry("run 3", random_run(&[0.6, 0.62])),
    ];
    let err = render(&runs, &opts()).unwrap_err();
    assert!(err.contains("nothing to compare"), "{err}");
    assert!(
        err.contains("run 3's 4 KiB randread QD32: run 1 has no such test"),
        "{err}"
    );
    assert!(
        err.contains("access sequential vs random") && err.contains("queue depth 1 vs 32"),
        "{err}"
    );
}

#[test]
fn like_tests_get_verdicts_and_unlike_ones_are_listed_apart() {
    let mut profile = testdata::run(None, "2024-01-01T00:00:00Z", &[20.0, 21.0], &[9.0, 9.5]);
    let mut like = random_run(&[0.6, 0.62, 0.61]);
    profile.tests.push(like.tests[0].clone());
    like.tests[0].repetitions = like.tests[0]
        .repetitions
        .iter()
        .map(|m| testdata::measurement(m.mb_per_s / 2.0, 4096))
        .collect();
    let runs = [entry("run 1", profile), entry("run 3", like)];
    let text = render(&runs, &opts()).unwrap();
    assert!(
        text.contains("run 3, 4 KiB randread QD32: slower by 50% (95% CI")
            && text.contains("3 vs 3 repetitions; run-to-run noise ±15% assumed"),
        "{text}"
    );
    assert!(
        text.contains("run 1's 1 MiB read QD1; 1 MiB write QD1: run 3 has no such test"),
        "{text}"
    );
    // The table shows the first test's kind, which run 3 lacks: dashes,
    // never its 4 KiB figures.
    let row = text.lines().find(|l| l.contains("run 3 ")).unwrap();
    assert!(
        row.contains("no test of this kind") && !row.contains("0.3"),
        "{row}"
    );
    let json = render_json(&runs, &opts()).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let change = &v["changes"][0];
    assert_eq!(change["verdict"]["verdict"]["change"], "slower");
    assert_eq!(change["verdict"]["verdict"]["before_repetitions"], 3);
    assert!(change["change_ratio"]["low"].as_f64().unwrap() > -1.0);
    assert_eq!(v["not_compared"][0]["run"], "run 1");
}

#[test]
fn one_repetition_gets_no_verdict_and_says_why() {
    let runs = [
        entry("run 1", random_run(&[0.6, 0.62])),
        entry("run 2", random_run(&[0.3])),
    ];
    let text = render(&runs, &opts()).unwrap();
    assert!(
        text.contains(
            "cannot tell: 2 vs 1 repetition, and an interval needs at least 2 on each side"
        ),
        "{text}"
    );
}

#[test]
fn runs_spread_over_hosts_differently_are_compared_with_a_caveat() {
    let big = testdata::mpi_result();
    let mut small = testdata::mpi_result();
    let m = small.mpi.as_mut().unwrap();
    m.ranks.truncate(2);
    m.size = 2;
    let mut single = testdata::run(None, "2024-03-02T10:00:00Z", &[400.0], &[190.0]);
    for t in &mut single.tests {
        t.workload.queue_depth = 8;
    }
    let runs = [
        entry("run 12", big.clone()),
        entry("run 15", small),
        entry("run 16", single),
    ];
    // Laid out in 100 columns, so the notes stay on one line each.
    let text = crate::report::width::with(100, || render(&runs, &opts()).unwrap());
    assert!(
        text.contains("caveat: the runs were spread over hosts differently (run 12: 4 ranks on 2 hosts, run 15: 2 ranks on 1 host, run 16: one host)"),
        "{text}"
    );
    assert!(text.contains("merged: 4 ranks on 2 hosts"), "{text}");
    assert!(text.contains("run 16, 1 MiB read QD8"), "{text}");
    let json: serde_json::Value =
        serde_json::from_str(&render_json(&runs, &opts()).unwrap()).unwrap();
    assert_eq!(json["caveats"].as_array().unwrap().len(), 1);
    // Two runs spread alike: no caveat, and no key in the JSON.
    let alike = [entry("run 12", big.clone()), entry("run 13", big)];
    assert!(!render(&alike, &opts()).unwrap().contains("caveat"));
    let json: serde_json::Value =
        serde_json::from_str(&render_json(&alike, &opts()).unwrap()).unwrap();
    assert!(json.get("caveats").is_none());
}

#[test]
fn a_run_without_tests_is_listed_apart() {
    let other = testdata::run(None, "2024-01-01T00:00:00Z", &[20.0], &[9.0]);
    let other = testdata::other_command(other);
    let base = testdata::run(None, "2024-01-01T00:00:00Z", &[20.0, 21.0], &[9.0, 9.5]);
    let same = base.clone();
    let runs = [
        entry("run 1", base),
        entry("run 2", same),
        entry("run 7", other),
    ];
    let text = render(&runs, &opts()).unwrap();
    assert!(
        text.contains("run 7: a `copy` run, which measures something other than repeated tests"),
        "{text}"
    );
}
