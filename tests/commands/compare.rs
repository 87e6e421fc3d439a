//! `iocurve compare` through the kernel: runs saved from loop devices over
//! the FUSE test device at two configured speeds, compared test by test.

use crate::common;

use common::faultdev::FaultDevice;
use common::{MIB, fails, iocurve, is_root, json, ok, skipped, text};
use std::path::Path;

/// `iocurve run` on `dev` with `args`, saved into `db`.
fn saved_run(dev: &Path, db: &Path, args: &[&str]) {
    let out = ok(iocurve()
        .arg("run")
        .arg(dev)
        .args(args)
        .args(["--ramp", "0", "--db"])
        .arg(db)
        .timeout(std::time::Duration::from_secs(120)));
    assert!(
        text(&out.stderr).contains("saved as run"),
        "{}",
        text(&out.stderr)
    );
}

fn median(v: &serde_json::Value) -> f64 {
    let mut x: Vec<f64> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_f64().unwrap())
        .collect();
    x.sort_by(f64::total_cmp);
    let n = x.len();
    (x[(n - 1) / 2] + x[n / 2]) / 2.0
}

/// 128 KiB sequential reads at 20 MB/s, then at 10 MB/s: compare calls
/// the second slower (or, on a busy host, no clear change), its ratio
/// interval holds what the two runs measured and the configured one half,
/// and a 4 KiB QD4 random-read run is set apart with its reason.
#[test]
fn half_the_speed_is_slower_by_half_and_an_unlike_run_is_set_apart() {
    if !is_root() {
        return skipped("needs root for loop devices");
    }
    let fast = match FaultDevice::with_speed(16 * MIB, 0, 20.0) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let slow = match FaultDevice::with_speed(16 * MIB, 0, 10.0) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let like = [
        "--rw", "read", "--bs", "128k", "--size", "3M", "--repeat", "4",
    ];
    saved_run(&fast.dev, &db, &like);
    saved_run(&slow.dev, &db, &like);
    let unlike = [
        "--rw", "randread", "--bs", "4k", "--qd", "4", "--size", "256k", "--repeat", "2",
    ];
    saved_run(&slow.dev, &db, &unlike);

    let out = ok(iocurve().args(["compare", "1", "2", "3", "--db"]).arg(&db));
    let cmp = text(&out.stdout);
    // Two devices, one run each and no history: the interval carries the
    // assumed noise between runs, so half the speed is called slower on a
    // quiet host, and may be "no clear change" on a busy one, where the
    // FUSE device falls short of its configured speed.
    // Lines wrapped to the terminal's width, joined again.
    let flat = cmp.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        (flat.contains("run 2, 128 KiB read QD1: slower by ")
            || flat.contains("run 2, 128 KiB read QD1: no clear change ("))
            && flat.contains("4 vs 4 repetitions; run-to-run noise ±15% assumed"),
        "{cmp}"
    );
    assert!(
        cmp.contains("run 3's 4 KiB randread QD4: run 1 has no such test"),
        "{cmp}"
    );

    let out = ok(iocurve()
        .args(["compare", "1", "2", "3", "--json", "--db"])
        .arg(&db));
    let doc = json(&out.stdout);
    let changes = doc["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{doc}");
    let verdict = &changes[0]["verdict"]["verdict"];
    let (low, high) = (
        verdict["ratio"]["low"].as_f64().unwrap(),
        verdict["ratio"]["high"].as_f64().unwrap(),
    );
    assert!(verdict["change"] == "slower" || high >= 0.95, "{doc}");
    // The repetitions' own interval lies inside the widened one.
    let within = &verdict["within_runs"];
    assert!(
        within["low"].as_f64().unwrap() >= low && within["high"].as_f64().unwrap() <= high,
        "{doc}"
    );
    let measured = median(&changes[0]["after_mb_s"]) / median(&changes[0]["before_mb_s"]);
    eprintln!(
        "before {} after {} measured ratio {measured:.3}, interval {low:.3}..{high:.3}",
        changes[0]["before_mb_s"], changes[0]["after_mb_s"]
    );
    assert!(low > 0.0 && low <= measured && measured <= high, "{doc}");
    // faultfs adds a small cost per request beyond the configured
    // bandwidth, which slows the faster device relatively more; the
    // configured 10/20 must lie within 10% of the interval.
    assert!(
        low * 0.9 <= 0.5 && 0.5 <= high * 1.1,
        "configured 10/20: {doc}"
    );

    let apart = doc["not_compared"].as_array().unwrap();
    let third = apart
        .iter()
        .find(|n| n["run"] == "run 3")
        .expect("run 3 set apart");
    let reason = third["reason"].as_str().unwrap();
    assert!(
        reason.contains("run 1 has no such test")
            && reason.contains("access sequential vs random")
            && reason.contains("queue depth 1 vs 4"),
        "{reason}"
    );

    // Alone with its unlike partner, run 3 is refused, not compared.
    let out = fails(iocurve().args(["compare", "1", "3", "--db"]).arg(&db), 2);
    assert!(
        text(&out.stderr).contains("nothing to compare"),
        "{}",
        text(&out.stderr)
    );
}
