//! `compare`'s false-alarm rate on an unchanged device: a file on the
//! disk under the test's scratch directory, measured again and again while
//! the host's load changes between runs (every other run beside busy
//! loops on every CPU and a writer that syncs 8 MiB at a time to the same
//! file system), every pair of runs compared. Nothing about the file
//! changed, so every change called is a false alarm. The old verdict (the
//! bootstrap over the repetitions alone) is scored on the same pairs, to
//! show what the run-to-run noise changes. In the `alone` crate: it loads
//! the machine, and another test's load would be part of its noise.

use iocurve::analysis::compare::{compare, regressions, repetitions};
use iocurve::result::RunResult;
use iocurve::result::compare::Entry;
use iocurve::stats::bootstrap::{self, Change};
use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Runs measured, half of them under load: 24 give 276 pairs in about
/// half a minute.
const RUNS: usize = 24;

/// `compare`'s default noise threshold and a `--fail-above 5` gate.
const THRESHOLD: f64 = 0.05;

/// The most false alarms allowed (issue 25: at most 5% at the default
/// threshold).
const MAX_RATE: f64 = 0.05;

/// Busy loops on every CPU and a writer of 8 MiB synced chunks beside
/// `dir`, until the returned flag is set.
fn start_load(dir: &Path) -> (Arc<AtomicBool>, Vec<std::thread::JoinHandle<()>>) {
    let stop = Arc::new(AtomicBool::new(false));
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut threads = Vec::new();
    for _ in 0..cpus {
        let stop = stop.clone();
        threads.push(std::thread::spawn(move || {
            let mut x = 1u64;
            while !stop.load(Ordering::Relaxed) {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                std::hint::black_box(x);
            }
        }));
    }
    let path = dir.join("load");
    let writer_stop = stop.clone();
    threads.push(std::thread::spawn(move || {
        let chunk = vec![0x5au8; 8 << 20];
        while !writer_stop.load(Ordering::Relaxed) {
            let Ok(mut f) = std::fs::File::create(&path) else {
                return;
            };
            for _ in 0..4 {
                if f.write_all(&chunk).and_then(|_| f.sync_data()).is_err() {
                    return;
                }
            }
        }
    }));
    (stop, threads)
}

/// One short run of 4 KiB random reads, three repetitions, as JSON.
fn measure(file: &Path) -> RunResult {
    let out = crate::common::ok(crate::common::iocurve().args([
        "run",
        file.to_str().unwrap(),
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--time",
        "200ms",
        "--ramp",
        "50ms",
        "--repeat",
        "3",
        "--no-save",
        "--json",
    ]));
    RunResult::from_json(&String::from_utf8_lossy(&out.stdout)).expect("a result")
}

/// True when a verdict calls a change.
fn alarm(change: Option<Change>) -> bool {
    matches!(change, Some(Change::Slower | Change::Faster))
}

#[test]
fn pairs_of_an_unchanged_file_under_changing_load_rarely_alarm() {
    let _alone = crate::one_at_a_time();
    let dir = tempfile::Builder::new()
        .prefix("compare-noise")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let file = dir.path().join("target");
    let data: Vec<u8> = (0..64u32 << 20)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(&file, data).unwrap();
    let mut runs = Vec::new();
    for i in 0..RUNS {
        let load = (i % 2 == 1).then(|| start_load(dir.path()));
        runs.push(measure(&file));
        if let Some((stop, threads)) = load {
            stop.store(true, Ordering::Relaxed);
            threads.into_iter().for_each(|t| t.join().unwrap());
        }
    }
    if runs
        .iter()
        .all(|r| r.tests[0].repetitions[0].host.is_none())
    {
        crate::common::skipped("no host state recorded (no /proc?)");
        return;
    }
    let entry = |i: usize| Entry {
        source: format!("run {i}"),
        result: runs[i].clone(),
    };
    let (mut pairs, mut old, mut new, mut gate, mut with_history) = (0, 0, 0, 0, 0);
    let mut disturbed = 0;
    let mut alarms = Vec::new();
    for i in 0..RUNS {
        for j in i + 1..RUNS {
            pairs += 1;
            let (b, a) = (
                repetitions(&runs[i].tests[0]),
                repetitions(&runs[j].tests[0]),
            );
            old += alarm(bootstrap::judge(&b, &a, THRESHOLD).ok().map(|v| v.change)) as usize;
            let c = compare(&[entry(i), entry(j)], THRESHOLD, &[]).unwrap();
            let ch = &c.changes[0];
            if alarm(ch.verdict.as_ref().ok().map(|v| v.change)) {
                new += 1;
                let side = |h: Option<iocurve::result::compare::RunConditions>| match h {
                    Some(h) if h.disturbed => "disturbed",
                    Some(_) => "quiet",
                    None => "unrecorded",
                };
                alarms.push(format!(
                    "{i} ({:.0} MB/s, {}) vs {j} ({:.0} MB/s, {})",
                    bootstrap::mean(&b),
                    side(ch.host_before),
                    bootstrap::mean(&a),
                    side(ch.host_after)
                ));
            }
            gate += !regressions(&c, THRESHOLD).is_empty() as usize;
            disturbed += ch.host_before.is_some_and(|h| h.disturbed) as usize
                + ch.host_after.is_some_and(|h| h.disturbed) as usize;
            // The other runs as the device's history.
            let history: Vec<RunResult> = (0..RUNS)
                .filter(|&k| k != i && k != j)
                .map(|k| runs[k].clone())
                .collect();
            let c = compare(&[entry(i), entry(j)], THRESHOLD, &history).unwrap();
            with_history += alarm(c.changes[0].verdict.as_ref().ok().map(|v| v.change)) as usize;
        }
    }
    let rate = |n: usize| n as f64 / pairs as f64;
    let means: Vec<String> = runs
        .iter()
        .map(|r| format!("{:.0}", bootstrap::mean(&repetitions(&r.tests[0]))))
        .collect();
    eprintln!(
        "compare false alarms on {pairs} pairs of {RUNS} runs of one unchanged file (every other run under load; mean MB/s {}; {:.0}% of the sides disturbed): before (repetitions alone) {:.1}%, after (no history) {:.1}%, --fail-above 5 {:.1}%, after (the other runs as history) {:.1}%",
        means.join(" "),
        disturbed as f64 / (2 * pairs) as f64 * 100.0,
        rate(old) * 100.0,
        rate(new) * 100.0,
        rate(gate) * 100.0,
        rate(with_history) * 100.0,
    );
    eprintln!("alarms after: {}", alarms.join("; "));
    assert!(rate(new) <= MAX_RATE, "{new} alarms in {pairs} pairs");
    assert!(
        rate(gate) <= MAX_RATE,
        "{gate} gate failures in {pairs} pairs"
    );
    assert!(
        rate(with_history) <= MAX_RATE,
        "{with_history} alarms in {pairs} pairs with history"
    );
}
