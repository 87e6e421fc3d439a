//! The header comes before the measuring: every measuring command that
//! announces (run, run --parallel, profile, profile --parallel, curve,
//! stream, sustain, files load, files save, surface, copy, endure) prints
//! its header and `plan` line on stdout while it is still running, and the
//! whole of its stdout is still exactly the report it prints without
//! announcing (as with `-o FILE`, which never announces). With
//! `--json-lines` the first line is a `start` object and the last the whole
//! result.
//!
//! The live half runs on real scratch files and directories (a simulated
//! card's virtual clock ends too fast to watch), each asked for far longer
//! than the test waits, then stopped with SIGINT once the plan is read.

use crate::common;

use common::{MIB, iocurve, run_ok, text};
use iocurve::report::{Export, Text};
use iocurve::result::RunResult;
use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

/// How long a command may take to open its target and print its plan.
const PLAN_WITHIN: Duration = Duration::from_secs(60);

/// A command running with its stdout piped; its lines arrive on a channel
/// as it prints them.
struct Live {
    child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Live {
    fn spawn(args: &[String]) -> Live {
        let mut child = common::iocurve_std()
            .args(args)
            .arg("--no-save")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("iocurve starts");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Live {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Reads lines until the `plan` line has been printed and the line
    /// after it has begun (a wrapped plan continues on indented lines);
    /// the header so far.
    fn header(&mut self) -> Vec<String> {
        let deadline = Instant::now() + PLAN_WITHIN;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(RecvTimeoutError::Timeout) => {
                    panic!("no plan line within {PLAN_WITHIN:?}: {:?}", self.seen)
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("stdout closed before a plan line: {:?}", self.seen)
                }
            }
            if self.seen.iter().any(|l| l.starts_with("plan ")) {
                return self.seen.clone();
            }
        }
    }

    /// Stops the command with SIGINT; its exit code and all it printed.
    fn interrupt(mut self) -> (Option<i32>, Vec<String>) {
        let pid = rustix::process::Pid::from_child(&self.child);
        rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
        let status = self.child.wait().expect("iocurve ends");
        self.seen.extend(self.lines.iter());
        (status.code(), self.seen)
    }
}

/// Runs `args` (the command's name first), checks the header and plan
/// arrive while it still runs, then interrupts it and checks its stdout
/// holds that header once, at its start.
fn header_arrives_while_running(args: &[String]) {
    let command = command_of(args);
    let mut live = Live::spawn(args);
    let header = live.header();
    let running = live.child.try_wait().expect("the child can be asked");
    assert!(
        running.is_none(),
        "{command}: exited ({running:?}) before the test read its plan; it must still be measuring"
    );
    assert!(
        header[0].starts_with("iocurve ") && header[0].contains(&format!(" · {command} · ")),
        "{command}: the header line comes first: {header:?}"
    );
    for label in ["target ", "device ", "mode ", "plan "] {
        assert!(
            header.iter().any(|l| l.starts_with(label)),
            "{command}: no `{label}` line before measuring: {header:?}"
        );
    }
    let (code, all) = live.interrupt();
    assert_eq!(
        code,
        Some(130),
        "{command}: a stopped run exits 130: {all:?}"
    );
    assert_eq!(
        &all[..header.len()],
        &header[..],
        "{command}: the report starts with the header printed before"
    );
    for label in ["iocurve ", "plan ", "target "] {
        let count = all.iter().filter(|l| l.starts_with(label)).count();
        assert_eq!(
            count, 1,
            "{command}: `{label}` printed {count} times: {all:?}"
        );
    }
}

/// `files load` for `["files", "load", ...]`, else the first word.
fn command_of(args: &[String]) -> String {
    match args[0].as_str() {
        "files" => format!("files {}", args[1]),
        name => name.to_string(),
    }
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

fn path(p: &Path) -> &str {
    p.to_str().expect("temp paths are UTF-8")
}

/// A file of `bytes` random bytes in `dir`.
fn random_file(dir: &Path, name: &str, bytes: u64) -> std::path::PathBuf {
    use std::io::Read;
    let mut data = Vec::new();
    std::fs::File::open("/dev/urandom")
        .unwrap()
        .take(bytes)
        .read_to_end(&mut data)
        .unwrap();
    let file = dir.join(name);
    std::fs::write(&file, data).unwrap();
    file
}

#[test]
fn run_prints_its_header_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let d = path(dir.path());
    header_arrives_while_running(&strings(&[
        "run", d, "--span", "16M", "--rw", "randread", "--time", "60s", "--ramp", "0",
    ]));
}

#[test]
fn run_parallel_prints_its_header_before_measuring() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    header_arrives_while_running(&strings(&[
        "run",
        path(a.path()),
        path(b.path()),
        "--parallel",
        "--span",
        "16M",
        "--rw",
        "randread",
        "--time",
        "60s",
        "--ramp",
        "0",
    ]));
}

#[test]
fn profile_prints_its_header_before_preparing_and_measuring() {
    let dir = tempfile::tempdir().unwrap();
    header_arrives_while_running(&strings(&[
        "profile",
        path(dir.path()),
        "--size",
        "16M",
        "--time",
        "20s",
    ]));
}

#[test]
fn profile_parallel_prints_its_header_before_measuring() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    header_arrives_while_running(&strings(&[
        "profile",
        path(a.path()),
        path(b.path()),
        "--parallel",
        "--size",
        "16M",
        "--time",
        "20s",
    ]));
}

#[test]
fn curve_prints_its_header_before_sweeping() {
    // A file read as it is: no preparation pass, whose cut-short area
    // would change the header's target line.
    let dir = tempfile::tempdir().unwrap();
    let file = random_file(dir.path(), "data.img", 64 * MIB);
    header_arrives_while_running(&strings(&[
        "curve",
        path(&file),
        "--span",
        "16M",
        "--rw",
        "read",
        "--time",
        "10s",
    ]));
}

#[test]
fn stream_prints_its_header_before_streaming() {
    let dir = tempfile::tempdir().unwrap();
    header_arrives_while_running(&strings(&["stream", path(dir.path()), "--time", "60s"]));
}

#[test]
fn sustain_prints_its_header_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    header_arrives_while_running(&strings(&[
        "sustain",
        path(dir.path()),
        "--bytes",
        "4G",
        "--time",
        "60s",
    ]));
}

#[test]
fn files_load_prints_its_header_before_making_and_loading_files() {
    let dir = tempfile::tempdir().unwrap();
    header_arrives_while_running(&strings(&[
        "files",
        "load",
        path(dir.path()),
        "--sizes",
        "16M",
        "--count",
        "200",
    ]));
}

#[test]
fn files_save_prints_its_header_before_saving() {
    let dir = tempfile::tempdir().unwrap();
    header_arrives_while_running(&strings(&[
        "files",
        "save",
        path(dir.path()),
        "--size",
        "64M",
        "--sizes",
        "512",
        "--sync",
        "each",
    ]));
}

#[test]
fn surface_prints_its_header_before_scanning() {
    let dir = tempfile::tempdir().unwrap();
    let file = random_file(dir.path(), "disk.img", 64 * MIB);
    header_arrives_while_running(&strings(&[
        "surface",
        path(&file),
        "--samples",
        "100000",
        "--sample-size",
        "64k",
        "--bs",
        "64k",
    ]));
}

#[test]
fn copy_prints_its_header_before_copying() {
    let dir = tempfile::tempdir().unwrap();
    let image = random_file(dir.path(), "image.img", 64 * MIB);
    let destination = dir.path().join("out");
    std::fs::create_dir(&destination).unwrap();
    header_arrives_while_running(&strings(&[
        "copy",
        path(&image),
        path(&destination.join("copy.img")),
        "--bs",
        "4k",
        "--sync",
        "each",
    ]));
}

#[test]
fn endure_prints_its_header_before_the_first_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let file = random_file(dir.path(), "worn.img", 64 * MIB);
    header_arrives_while_running(&strings(&[
        "endure",
        path(&file),
        "--destructive",
        "--cycles",
        "10000",
    ]));
}

/// The text with the facts of the moment replaced: the header line's
/// start time (two runs start in different seconds) and the CPU seconds.
fn normalised(out: &str) -> String {
    out.lines()
        .map(|line| {
            if line.starts_with("iocurve ") && line.matches(" · ").count() == 2 {
                let command = line.split(" · ").nth(1).unwrap_or("?");
                format!("iocurve · {command} · [time]")
            } else if line.starts_with("cpu ") {
                "cpu [seconds]".to_string()
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// On a simulated card (seeded data, virtual clock: the same figures every
/// run) the stdout of `args`, announced, is the text `-o FILE` writes.
fn announced_bytes_equal_the_file(args: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.txt");
    let mut all = args.to_vec();
    all.extend(["--seed", "1", "--no-save"]);
    let stdout = text(&run_ok(&all).stdout);
    assert!(
        stdout.lines().any(|l| l.starts_with("plan ")),
        "{args:?}: no plan line: {stdout}"
    );
    all.extend(["-o", path(&file)]);
    let quiet = run_ok(&all);
    assert!(
        quiet.stdout.is_empty(),
        "{args:?} -o FILE printed on stdout"
    );
    let written = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        normalised(&stdout),
        normalised(&written),
        "{args:?}: announcing changed the output"
    );
}

/// Two cards of different speeds (the second for `--parallel`).
const CARD: &str = "sim:size=256M,write=20MB/s,read=40MB/s,cmd=100us";
const CARD_B: &str = "sim:size=128M,write=10MB/s,read=30MB/s,cmd=200us";

#[test]
fn announcing_leaves_the_text_of_every_simulated_command_unchanged() {
    announced_bytes_equal_the_file(&["run", CARD, "--time", "500ms", "--repeat", "2"]);
    announced_bytes_equal_the_file(&["run", CARD, "--rw", "write", "--size", "8M"]);
    announced_bytes_equal_the_file(&["run", CARD, CARD_B, "--parallel", "--time", "300ms"]);
    announced_bytes_equal_the_file(&["profile", CARD, "--time", "200ms", "--destructive"]);
    announced_bytes_equal_the_file(&["profile", CARD, CARD_B, "--parallel", "--time", "200ms"]);
    announced_bytes_equal_the_file(&["curve", CARD, "--rw", "read,write", "--time", "100ms"]);
    announced_bytes_equal_the_file(&["stream", CARD, "--time", "2s"]);
    announced_bytes_equal_the_file(&["sustain", CARD, "--bytes", "32M", "--destructive"]);
    announced_bytes_equal_the_file(&["surface", CARD, "--samples", "16"]);
    announced_bytes_equal_the_file(&["endure", "sim:size=16M", "--cycles", "2", "--destructive"]);
}

/// Where no card can stand in (files, copy): the stdout of `args`,
/// announced, is exactly the text of the result it saved, rendered as a
/// run that never announced.
fn announced_bytes_equal_the_saved_result(args: &[&str], dir: &Path) {
    let db = dir.join("results.db");
    let mut all = args.to_vec();
    all.extend(["--db", path(&db)]);
    let out = common::ok(iocurve().args(&all));
    let stdout = text(&out.stdout);
    assert!(
        stdout.lines().any(|l| l.starts_with("plan ")),
        "{args:?}: no plan line: {stdout}"
    );
    let exported = run_ok(["export", "--db", path(&db), "--json"]);
    let result = RunResult::from_json(&text(&exported.stdout)).expect("a result document");
    assert_eq!(
        stdout,
        Text.render(&result),
        "{args:?}: announcing changed the output"
    );
}

#[test]
fn announcing_leaves_the_text_of_files_and_copy_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let w = path(&work);
    announced_bytes_equal_the_saved_result(
        &["files", "load", w, "--sizes", "8k,1M", "--count", "4"],
        dir.path(),
    );
    announced_bytes_equal_the_saved_result(
        &["files", "save", w, "--size", "1M", "--sizes", "512,4k"],
        dir.path(),
    );
    let image = random_file(dir.path(), "image.img", 8 * MIB);
    let copy = work.join("copy.img");
    announced_bytes_equal_the_saved_result(&["copy", path(&image), path(&copy)], dir.path());
}

#[test]
fn json_lines_start_with_the_plan_and_end_with_the_whole_result() {
    let runs: [&[&str]; 5] = [
        &["run", CARD, "--time", "300ms"],
        &["profile", CARD, "--time", "100ms", "--repeat", "1"],
        &["curve", CARD, "--rw", "read", "--time", "100ms"],
        &["stream", CARD, "--time", "1s"],
        &["sustain", CARD, "--bytes", "16M", "--destructive"],
    ];
    for args in runs {
        let mut all = args.to_vec();
        all.extend(["--json-lines", "--seed", "1", "--no-save"]);
        let out = text(&run_ok(&all).stdout);
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{args:?}: {e}: {l}")))
            .collect();
        assert!(lines.len() >= 2, "{args:?}: {out}");
        let (start, last) = (&lines[0], &lines[lines.len() - 1]);
        assert_eq!(start["type"], "start", "{args:?}: first line {start}");
        assert_eq!(start["command"], args[0], "{args:?}");
        assert_eq!(start["target"]["path"], CARD, "{args:?}");
        let plan = start["plan"].as_str().expect("a plan");
        let result = RunResult::from_json(&lines.last().unwrap().to_string())
            .unwrap_or_else(|e| panic!("{args:?}: the last line is no result: {e}"));
        assert_eq!(result.command(), args[0], "{args:?}: {last}");
        assert_eq!(
            iocurve::report::text_plan::plan(&result).as_deref(),
            Some(plan),
            "{args:?}: the start line's plan is the result's"
        );
        for middle in &lines[1..lines.len() - 1] {
            assert_eq!(middle["type"], "interval", "{args:?}: {middle}");
        }
    }
}
