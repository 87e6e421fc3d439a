//! `--json-lines` while measuring: every command that offers it (found in
//! the clap definition) prints one object per interval, with the interval's
//! bytes, rate, IOPS and latency quantiles, then the whole result as the
//! last line. The intervals account for exactly the bytes the result
//! counts (the warm-up left out), and on a real file they arrive while the
//! run is still going.

use crate::common;

use clap::CommandFactory;
use common::{iocurve, text};
use iocurve::cli::Cli;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

const CARD: &str = "sim:size=256M,write=20MB/s,read=40MB/s,cmd=100us";

/// One command's case: its name, its arguments on a simulated card, and
/// the bytes its result says were measured.
type Case = (&'static str, Vec<&'static str>, fn(&Value) -> u64);

/// Each command that takes `--json-lines`.
fn cases() -> Vec<Case> {
    vec![
        (
            "run",
            vec![
                "run", CARD, "--rw", "randread", "--bs", "4k", "--time", "2s", "--repeat", "2",
            ],
            repetition_bytes,
        ),
        (
            "profile",
            vec!["profile", CARD, "--time", "1s"],
            repetition_bytes,
        ),
        ("curve", vec!["curve", CARD], repetition_bytes),
        (
            "stream",
            vec!["stream", CARD, "--rate", "5MB/s", "--time", "3s"],
            |doc| doc["stream"]["outcome"]["bytes"].as_u64().unwrap(),
        ),
        ("sustain", vec!["sustain", CARD, "--bytes", "40M"], |doc| {
            doc["sustain"]["bytes"].as_u64().unwrap()
        }),
    ]
}

/// Bytes of every repetition of every test (warm-ups are kept apart).
fn repetition_bytes(doc: &Value) -> u64 {
    doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["repetitions"].as_array().unwrap())
        .map(|r| r["bytes"].as_u64().unwrap())
        .sum()
}

/// The commands of the definition that offer `--json-lines`.
fn commands_with_json_lines() -> Vec<String> {
    let mut root = Cli::command();
    root.build();
    root.get_subcommands()
        .filter(|c| {
            c.get_arguments()
                .any(|a| a.get_long() == Some("json-lines"))
        })
        .map(|c| c.get_name().to_string())
        .collect()
}

fn lines(stdout: &[u8]) -> Vec<Value> {
    text(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// What every interval line holds, whatever the command.
fn check_interval(command: &str, i: &Value) {
    let field = |k: &str| {
        i[k].as_u64()
            .unwrap_or_else(|| panic!("{command}: {k} in {i}"))
    };
    let (start, end, bytes, ops) = (
        field("start_ns"),
        field("end_ns"),
        field("bytes"),
        field("ops"),
    );
    // The test as typed fields (its kind, and the workload's figures).
    assert!(
        i["test"]["kind"].as_str().is_some_and(|k| !k.is_empty()),
        "{i}"
    );
    assert!(end > start && bytes > 0 && ops > 0, "{command}: {i}");
    let seconds = (end - start) as f64 / 1e9;
    let mb_s = i["mb_per_s"].as_f64().unwrap();
    let iops = i["iops"].as_f64().unwrap();
    assert!(
        (mb_s - bytes as f64 / seconds / 1e6).abs() <= mb_s * 1e-9,
        "{command}: {i}"
    );
    assert!(
        (iops - ops as f64 / seconds).abs() <= iops * 1e-9,
        "{command}: {i}"
    );
    let (p50, p99, max) = (field("p50_ns"), field("p99_ns"), field("max_ns"));
    assert!(
        p50 <= p99 && p99 <= max,
        "{command}: quantiles out of order in {i}"
    );
}

#[test]
fn every_live_command_streams_intervals_that_add_up_to_its_result() {
    let mut listed: Vec<&str> = cases().iter().map(|(name, _, _)| *name).collect();
    listed.sort_unstable();
    let mut offered = commands_with_json_lines();
    offered.sort_unstable();
    assert_eq!(
        offered, listed,
        "a command offers --json-lines without a case here"
    );
    for (command, args, measured) in cases() {
        let out = common::run_ok(args.iter().copied().chain(["--json-lines", "--no-save"]));
        let all = lines(&out.stdout);
        let (start, rest) = all.split_first().unwrap();
        assert_eq!(start["type"], "start", "{command}: the plan comes first");
        let (last, intervals) = rest.split_last().unwrap();
        assert_eq!(last["command"], command, "the result is the last line");
        assert!(!intervals.is_empty(), "{command}: no interval line");
        for i in intervals {
            assert_eq!(i["type"], "interval", "{command}: {i}");
            check_interval(command, i);
        }
        let streamed: u64 = intervals.iter().map(|i| i["bytes"].as_u64().unwrap()).sum();
        assert_eq!(streamed, measured(last), "{command}: intervals vs result");
    }
}

#[test]
fn intervals_follow_a_real_run_second_by_second_without_its_warm_up() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = common::iocurve_std()
        .args(["run", dir.path().to_str().unwrap(), "--span", "16M"])
        .args([
            "--rw", "randread", "--bs", "4k", "--time", "3s", "--ramp", "1s",
        ])
        .args(["--json-lines", "--no-save"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    let start: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(start["type"], "start", "the plan comes first");
    let mut second = String::new();
    reader.read_line(&mut second).unwrap();
    let first_after = started.elapsed();
    assert!(
        child.try_wait().unwrap().is_none(),
        "the first interval came only when the run had ended"
    );
    let mut all = vec![serde_json::from_str::<Value>(&second).unwrap()];
    for line in reader.lines() {
        all.push(serde_json::from_str(&line.unwrap()).unwrap());
    }
    assert!(child.wait().unwrap().success());
    // The warm-up (1 s) is not an interval: the first ends about a second
    // after the counted pass began, at least two seconds after the start.
    assert!(
        first_after >= Duration::from_millis(1800),
        "{first_after:?}"
    );
    let (result, intervals) = all.split_last().unwrap();
    assert!(intervals.len() >= 3, "{} intervals in 3 s", intervals.len());
    assert_eq!(intervals[0]["start_ns"], 0);
    for pair in intervals.windows(2) {
        assert_eq!(
            pair[1]["start_ns"], pair[0]["end_ns"],
            "intervals are contiguous"
        );
        assert_eq!(
            pair[1]["index"].as_u64(),
            pair[0]["index"].as_u64().map(|n| n + 1)
        );
    }
    for i in &intervals[..intervals.len() - 1] {
        let length = i["end_ns"].as_u64().unwrap() - i["start_ns"].as_u64().unwrap();
        assert!(
            (700_000_000..1_500_000_000).contains(&length),
            "interval of {length} ns"
        );
        check_interval("run", i);
    }
    let rep = &result["tests"][0]["repetitions"][0];
    let streamed: u64 = intervals.iter().map(|i| i["bytes"].as_u64().unwrap()).sum();
    assert_eq!(streamed, rep["bytes"].as_u64().unwrap());
    assert!(
        rep["ramp"]["bytes"].as_u64().unwrap() > 0,
        "the warm-up ran"
    );
    let last_end = intervals.last().unwrap()["end_ns"].as_u64().unwrap();
    assert!(last_end <= rep["elapsed_ns"].as_u64().unwrap() + 1_000_000);
}

#[test]
fn quiet_prints_no_interval() {
    let out = iocurve()
        .args([
            "run",
            CARD,
            "--time",
            "1s",
            "--json-lines",
            "-q",
            "--no-save",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
}
