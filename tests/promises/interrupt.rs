//! Ctrl-C stops a run at once, prints the partial result marked as such, and
//! leaves no scratch file behind.

use crate::common;

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
    let child = common::iocurve_std()
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

#[test]
fn sigint_with_json_lines_ends_with_the_partial_result_after_its_intervals() {
    let dir = tempfile::tempdir().unwrap();
    let (out, _) = interrupted_run(dir.path(), &["--json-lines", "--no-save"]);
    assert_eq!(out.status.code(), Some(130));
    let stdout = common::text(&out.stdout);
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (start, rest) = lines.split_first().unwrap();
    assert_eq!(start["type"], "start", "{stdout}");
    let (result, intervals) = rest.split_last().unwrap();
    assert_eq!(result["interrupted"], true, "{stdout}");
    assert!(!intervals.is_empty(), "the interval cut short is printed");
    assert!(intervals.iter().all(|i| i["type"] == "interval"));
    let streamed: u64 = intervals.iter().map(|i| i["bytes"].as_u64().unwrap()).sum();
    let rep = &result["tests"][0]["repetitions"][0];
    assert_eq!(streamed, rep["bytes"].as_u64().unwrap());
    assert_eq!(
        stdout.matches("\"schema_version\"").count(),
        1,
        "result printed once"
    );
}

/// The pid of the process running `bin` with `dir` among its arguments.
fn pid_running(bin: &std::path::Path, dir: &std::path::Path) -> Option<i32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
        let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
        let is_bin = args.first()? == &bin.as_os_str().as_encoded_bytes();
        let on_dir = args.contains(&dir.as_os_str().as_encoded_bytes());
        (is_bin && on_dir).then_some(pid)
    })
}

#[test]
fn sigint_on_a_terminal_clears_the_bar_then_prints_the_partial_result_once() {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        return common::skipped("`script` (util-linux) is needed for a terminal");
    }
    let dir = tempfile::tempdir().unwrap();
    let typescript = dir.path().join("typescript");
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let mut bin = std::path::PathBuf::new();
    let mut script = common::iocurve_wrapped(|iocurve| {
        bin = iocurve.to_path_buf();
        let inner = format!(
            "stty cols 80; {} run {} --span 16M --rw randread --time 60s --ramp 0 --no-save",
            iocurve.display(),
            work.display()
        );
        let mut script = std::process::Command::new("script");
        script.args(["-q", "-e", "-c", &inner, typescript.to_str().unwrap()]);
        script
    })
    .stdin(std::process::Stdio::null())
    .stdout(std::process::Stdio::null())
    .spawn()
    .unwrap();
    let start = Instant::now();
    let pid = loop {
        if let (Some(pid), true) = (pid_running(&bin, &work), scratch_present(&work)) {
            break pid;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the run never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    // Long enough for the bar to show a rate (it needs half a second).
    std::thread::sleep(Duration::from_millis(1500));
    let pid = rustix::process::Pid::from_raw(pid).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    // `script -e` exits as the command did: the interrupted code.
    assert_eq!(script.wait().unwrap().code(), Some(130));
    let shown = common::text(&std::fs::read(&typescript).unwrap());
    assert_eq!(shown.matches("INTERRUPTED").count(), 1, "{shown}");
    // Every state of the bar fits the 80 columns, so none wraps.
    // The partial table: its header names MB/s, IOPS and the latency
    // percentiles (each latency cell names its own unit).
    let mut at = 0;
    let table = shown
        .split_inclusive('\n')
        .find_map(|line| {
            let start = at;
            at += line.len();
            (line.contains("MB/s") && line.contains("IOPS") && line.contains("p99"))
                .then_some(start)
        })
        .unwrap_or_else(|| panic!("the partial table is shown: {shown}"));
    let (live, report) = shown.split_at(table);
    // Its row holds what was measured before the signal: reads at a rate.
    let row = report
        .lines()
        .find(|l| l.starts_with("read "))
        .unwrap_or_else(|| panic!("no read row in the partial table: {report}"));
    let rate: f64 = row.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(rate > 0.0, "{row}");
    let draws: Vec<&str> = live
        .split(['\r', '\n'])
        .map(|d| d.trim_start_matches("\x1b[2K"))
        .filter(|d| d.contains("ETA"))
        .collect();
    assert!(
        draws
            .iter()
            .any(|d| d.contains("MB/s") && d.contains("IOPS")),
        "{live}"
    );
    for d in &draws {
        assert!(
            d.trim_end().chars().count() <= 80,
            "bar wider than the terminal: {d:?}"
        );
    }
    // The last bar was erased before the result, and none came after it.
    let last_draw = live.rfind("ETA").unwrap();
    assert!(
        live[last_draw..].contains("\r\x1b[2K"),
        "bar left on screen: {:?}",
        &live[last_draw..]
    );
    assert!(!report.contains("ETA"), "a bar drawn after the result");
}
