//! Ctrl-C stops a run at once, prints the partial result marked as such, and
//! leaves no scratch file behind.

mod common;

use std::time::{Duration, Instant};

fn scratch_present(dir: &std::path::Path) -> bool {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .any(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(".iocurve-scratch")
        })
}

/// A 60 s random-read run in a scratch file of `dir` (with `extra`
/// arguments), sent SIGINT 0.7 s after its scratch file appeared; its
/// output, and when the signal was sent.
fn interrupted_run(dir: &std::path::Path, extra: &[&str]) -> (std::process::Output, Instant) {
    let bin = assert_cmd::cargo::cargo_bin("iocurve");
    let child = std::process::Command::new(bin)
        .args([
            "run",
            dir.to_str().unwrap(),
            "--span",
            "16M",
            "--rw",
            "randread",
        ])
        .args(["--time", "60s", "--ramp", "0"])
        .args(extra)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !scratch_present(dir) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "scratch file never appeared"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Let the measurement begin, then interrupt it.
    std::thread::sleep(Duration::from_millis(700));
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let stopped_at = Instant::now();
    (child.wait_with_output().unwrap(), stopped_at)
}

#[test]
fn sigint_stops_the_run_and_removes_the_scratch_file() {
    let dir = tempfile::tempdir().unwrap();
    let (out, stopped_at) = interrupted_run(dir.path(), &["--json"]);
    assert!(
        stopped_at.elapsed() < Duration::from_secs(5),
        "did not stop promptly"
    );
    assert_eq!(out.status.code(), Some(130));
    let doc = common::json(&out.stdout);
    assert_eq!(doc["interrupted"], true);
    assert_eq!(doc["tests"][0]["repetitions"][0]["interrupted"], true);
    assert!(
        doc["tests"][0]["repetitions"][0]["ops"].as_u64().unwrap() > 0,
        "partial figures kept"
    );
    assert!(
        !scratch_present(dir.path()),
        "scratch file left after SIGINT"
    );
}

#[test]
fn sigint_says_interrupted_once_in_the_text_report() {
    let dir = tempfile::tempdir().unwrap();
    let (out, _) = interrupted_run(dir.path(), &["--no-save"]);
    assert_eq!(out.status.code(), Some(130));
    let text = common::text(&out.stdout);
    assert_eq!(text.matches("INTERRUPTED").count(), 1, "{text}");
    assert!(text.contains("the figures above are partial"), "{text}");
}
