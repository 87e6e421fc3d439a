//! The results database through the built binary: saving every run,
//! history, list, compare, export, fio import, and two processes saving at
//! once.

use crate::common;

use common::{LoopDevice, fails, iocurve, json, ok, run_fail, skipped, text};
use std::path::{Path, PathBuf};
use std::process::Command as Std;

const FIO_FIXTURE: &str = "tests/fixtures/fio-3.33-seqread-randwrite.json";

/// `iocurve run` writing 4 MiB in a scratch file of `dir`, three times.
fn write_run(dir: &Path, db: &Path) -> serde_json::Value {
    let out = ok(iocurve()
        .args([
            "run",
            dir.to_str().unwrap(),
            "--rw",
            "write",
            "--bs",
            "256k",
            "--span",
            "4M",
            "--size",
            "4M",
            "--ramp",
            "0",
            "--repeat",
            "3",
            "--buffered",
            "--json",
            "--db",
        ])
        .arg(db));
    assert!(
        text(&out.stderr).contains("saved as run"),
        "{}",
        text(&out.stderr)
    );
    json(&out.stdout)
}

/// The number of runs `iocurve list` printed.
fn runs_listed(list: &str) -> usize {
    list.lines().filter(|l| l.starts_with("  run ")).count()
}

fn db_in(dir: &Path) -> PathBuf {
    dir.join("results.db")
}

#[test]
fn every_run_is_saved_with_its_identity_and_listed() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(dir.path());
    let first = write_run(dir.path(), &db);
    let second = write_run(dir.path(), &db);
    let key = first["device_identity"]["key"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!key.is_empty());
    assert_eq!(
        second["device_identity"]["key"],
        first["device_identity"]["key"]
    );
    assert!(first["device_identity"]["host"]["iocurve_version"].is_string());
    let out = ok(iocurve().args(["list", "--db"]).arg(&db));
    let list = text(&out.stdout);
    // `list` names the device and each run's target, never the store key.
    assert!(!list.contains(&key), "{list}");
    assert!(list.contains("2 run(s)"), "{list}");
    let target = dir.path().to_str().unwrap();
    assert_eq!(list.matches(target).count(), 2, "{list}");
    assert_eq!(runs_listed(&list), 2, "{list}");
    let out = iocurve()
        .args(["history", &key, "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let history = text(&out.stdout);
    assert!(history.contains("2 run(s)"), "{history}");
    let median = first["tests"][0]["mb_per_s"]["median"].as_f64().unwrap();
    let shown = if median >= 10.0 {
        format!("{median:.0}")
    } else {
        format!("{median:.1}")
    };
    assert!(
        history.contains(&format!("write {shown}")),
        "{history} lacks {shown}"
    );
    // --no-save leaves the database as it was.
    ok(iocurve()
        .args([
            "run",
            dir.path().to_str().unwrap(),
            "--rw",
            "write",
            "--bs",
            "256k",
            "--span",
            "4M",
            "--size",
            "4M",
            "--ramp",
            "0",
            "--buffered",
            "--no-save",
            "--db",
        ])
        .arg(&db));
    let out = iocurve().args(["list", "--db"]).arg(&db).output().unwrap();
    assert_eq!(runs_listed(&text(&out.stdout)), 2);
}

#[test]
fn compare_two_runs_of_one_device_gives_a_verdict_and_export_renders() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(dir.path());
    write_run(dir.path(), &db);
    write_run(dir.path(), &db);
    let out = ok(iocurve().args(["compare", "1", "2", "--db"]).arg(&db));
    let cmp = text(&out.stdout);
    assert!(cmp.contains("Write MB/s"), "{cmp}");
    assert!(cmp.contains("same device: each run against run 1"), "{cmp}");
    assert!(cmp.contains("run 2, 256 KiB write QD1 buffered: "), "{cmp}");
    for (format, needle) in [
        (
            "markdown",
            "| Test | Read MB/s | Read IOPS | Read p50 | Read p99 | Write MB/s | Write IOPS | Write p50 | Write p99 |",
        ),
        ("csv", "started_at,device"),
        ("json", "\"device_identity\""),
    ] {
        let out = ok(iocurve()
            .args(["export", "2", "--format", format, "--db"])
            .arg(&db));
        assert!(
            text(&out.stdout).contains(needle),
            "{format}: {}",
            text(&out.stdout)
        );
    }
    // A JSON result file compares like a stored run.
    let file = dir.path().join("run2.json");
    iocurve()
        .args(["export", "2", "--format", "json", "-o"])
        .arg(&file)
        .arg("--db")
        .arg(&db)
        .assert()
        .success();
    let out = iocurve()
        .args(["compare", "1"])
        .arg(&file)
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        text(&out.stdout).contains("run2.json"),
        "{}",
        text(&out.stdout)
    );
    fails(iocurve().args(["compare", "99", "--db"]).arg(&db), 2);
}

#[test]
fn a_save_failure_keeps_the_result_and_the_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("not-a-dir");
    std::fs::write(&blocker, "x").unwrap();
    let out = ok(iocurve()
        .args([
            "run",
            dir.path().to_str().unwrap(),
            "--rw",
            "write",
            "--bs",
            "256k",
            "--span",
            "4M",
            "--size",
            "4M",
            "--ramp",
            "0",
            "--buffered",
            "--json",
            "--db",
        ])
        .arg(blocker.join("results.db")));
    assert!(
        text(&out.stderr).contains("warning: the result was not saved"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        json(&out.stdout)["tests"][0]["repetitions"][0]["bytes"],
        4 << 20
    );
}

#[test]
fn two_processes_saving_at_once_both_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(dir.path());
    let children: Vec<_> = (0..4)
        .map(|_| {
            common::iocurve_std()
                .args(["import", FIO_FIXTURE, "--db"])
                .arg(&db)
                .output()
        })
        .map(|r| r.unwrap())
        .collect();
    // The above ran one after another; now truly at once.
    let spawned: Vec<_> = (0..6)
        .map(|_| {
            common::iocurve_std()
                .args(["import", FIO_FIXTURE, "--db"])
                .arg(&db)
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        assert!(c.status.success(), "{}", text(&c.stderr));
    }
    for mut c in spawned {
        assert!(c.wait().unwrap().success());
    }
    let out = iocurve().args(["list", "--db"]).arg(&db).output().unwrap();
    assert_eq!(runs_listed(&text(&out.stdout)), 10, "{}", text(&out.stdout));
}

#[test]
fn a_real_fio_run_is_imported_beside_iocurves() {
    if Std::new("fio").arg("--version").output().is_err() {
        return skipped("fio is not installed (apt-get install fio)");
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("fio.dat");
    let out = Std::new("fio")
        .args([
            "--output-format=json",
            "--name=seq",
            "--rw=write",
            "--bs=1M",
            "--size=8M",
            "--ioengine=psync",
            "--end_fsync=1",
        ])
        .arg(format!("--filename={}", data.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let fio: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let bw = fio["jobs"][0]["write"]["bw_bytes"].as_f64().unwrap() / 1e6;
    let report = dir.path().join("fio.json");
    std::fs::write(&report, &out.stdout).unwrap();
    let db = db_in(dir.path());
    let out = ok(iocurve().arg("import").arg(&report).arg("--db").arg(&db));
    assert!(
        text(&out.stdout).contains("imported 1 fio job(s) as run 1"),
        "{}",
        text(&out.stdout)
    );
    let out = iocurve()
        .args(["export", "1", "--format", "csv", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let csv = text(&out.stdout);
    let row = csv.lines().nth(1).unwrap();
    assert!(row.contains(",fio,seq,write,1048576,1,1,1,"), "{row}");
    // Counted from the end: the device's label before them may hold a
    // quoted comma.
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let cells: Vec<&str> = row.split(',').collect();
    let column = |name: &str| {
        let from_end = header.len() - header.iter().position(|c| *c == name).unwrap();
        cells[cells.len() - from_end]
    };
    let median: f64 = column("mb_per_s_median").parse().unwrap();
    let p50: u64 = column("p50_ns").parse().unwrap();
    let fio_p50 = fio["jobs"][0]["write"]["clat_ns"]["percentile"]["50.000000"]
        .as_u64()
        .unwrap();
    assert_eq!(p50, fio_p50, "{row}");
    assert!((median - bw).abs() < 0.001, "{median} vs {bw}");
    // The data file lives in the test directory: the same device as an
    // iocurve run there.
    let ours = write_run(dir.path(), &db);
    let out = iocurve().args(["list", "--db"]).arg(&db).output().unwrap();
    let list = text(&out.stdout);
    assert_eq!(
        list.matches("2 run(s)").count(),
        1,
        "{list} (key {})",
        ours["device_identity"]["key"]
    );
}

/// fio's job and iocurve's run of the same workload (1 MiB sequential
/// reads of one file, QD1, through the page cache) compare: the engines
/// differ (fio:psync vs sync), which is a caveat on the verdict and a note
/// on the row, never a refusal; and a job that gave no size records the
/// span fio used, the whole file.
#[test]
fn an_imported_fio_job_compares_with_iocurves_run_of_the_same_workload() {
    if Std::new("fio").arg("--version").output().is_err() {
        return skipped("fio is not installed (apt-get install fio)");
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("fio.dat");
    std::fs::write(&data, vec![7u8; 8 << 20]).unwrap();
    let out = Std::new("fio")
        .args([
            "--output-format=json",
            "--name=seqread",
            "--rw=read",
            "--bs=1M",
            "--ioengine=psync",
            "--loops=2",
        ])
        .arg(format!("--filename={}", data.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = dir.path().join("fio.json");
    std::fs::write(&report, &out.stdout).unwrap();
    let db = db_in(dir.path());
    ok(iocurve().arg("import").arg(&report).arg("--db").arg(&db));
    let out = ok(iocurve()
        .args(["export", "1", "--format", "json", "--db"])
        .arg(&db));
    let imported = json(&out.stdout);
    assert_eq!(
        imported["tests"][0]["workload"]["span"],
        8 << 20,
        "{imported}"
    );
    ok(iocurve()
        .arg("run")
        .arg(&data)
        .args([
            "--rw", "read", "--bs", "1M", "--qd", "1", "--engine", "sync",
        ])
        .args(["--buffered", "--size", "8M", "--ramp", "0", "--repeat", "2"])
        .arg("--db")
        .arg(&db));
    let out = ok(iocurve().args(["compare", "1", "2", "--db"]).arg(&db));
    let shown = text(&out.stdout);
    assert!(
        shown.contains("caveat: engine fio:psync vs sync"),
        "{shown}"
    );
    assert!(
        shown.contains("engine sync"),
        "the row names its engine: {shown}"
    );
    let out = ok(iocurve()
        .args(["compare", "1", "2", "--json", "--db"])
        .arg(&db));
    let comparison = json(&out.stdout);
    let change = &comparison["changes"][0];
    assert_eq!(change["engines"]["before"], "fio:psync", "{comparison}");
    assert_eq!(change["engines"]["after"], "sync", "{comparison}");
    assert_eq!(change["test"], "1 MiB read QD1 buffered", "{comparison}");
}

/// `list` shows runs by number, the order they were saved: a fio import
/// dated days before keeps its date but is listed last, not in the middle.
#[test]
fn list_shows_an_imported_run_where_it_was_saved() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(dir.path());
    write_run(dir.path(), &db);
    ok(iocurve().args(["import", FIO_FIXTURE, "--db"]).arg(&db));
    write_run(dir.path(), &db);
    let out = ok(iocurve().args(["list", "--db"]).arg(&db));
    let shown = text(&out.stdout);
    let numbers: Vec<&str> = shown
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("run "))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(numbers, ["1", "2", "3"], "{shown}");
    assert!(shown.contains("2026-11-22T09:20:07Z  fio"), "{shown}");
    let out = ok(iocurve().args(["list", "--json", "--db"]).arg(&db));
    let ids: Vec<i64> = json(&out.stdout)["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [1, 2, 3]);
}

#[test]
fn probe_of_a_loop_device_reaches_its_backing_file() {
    let lo = match LoopDevice::new(8 << 20) {
        Ok(lo) => lo,
        Err(why) => return skipped(&why),
    };
    let out = ok(iocurve().args(["probe", "--json"]).arg(&lo.dev));
    let id = json(&out.stdout);
    let name = lo.dev.file_name().unwrap().to_str().unwrap();
    assert_eq!(id["device"], name);
    assert_eq!(id["stack"][0]["kind"], "loop");
    assert_eq!(id["stack"][0]["detail"], lo.backing.to_str().unwrap());
    assert!(
        id["filesystem"].is_null(),
        "a raw device has no file system"
    );
    let out = iocurve().args(["probe"]).arg(&lo.dev).output().unwrap();
    let t = text(&out.stdout);
    assert!(t.contains("stack") && t.contains("(loop, file "), "{t}");
}

#[test]
fn probe_of_a_directory_names_its_file_system() {
    let dir = tempfile::tempdir().unwrap();
    let out = ok(iocurve().arg("probe").arg(dir.path()));
    let t = text(&out.stdout);
    assert!(
        t.contains("file system ") && t.contains("free space"),
        "{t}"
    );
    assert!(t.contains("device key"), "{t}");
    run_fail(["probe", "/nonexistent/x"], 2);
}

/// A quick run on a simulated card, saved in `db`; `card` may fail reads.
fn sim_run(db: &Path, card: &str, code: i32) {
    let args = [
        "run", card, "--rw", "read", "--bs", "1M", "--time", "200ms", "--db",
    ];
    fails(iocurve().args(args).arg(db), code);
}

#[test]
fn list_and_history_mark_a_failed_run_and_delete_removes_runs_all_or_none() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(dir.path());
    let db_arg = db.to_str().unwrap();
    sim_run(&db, "sim:size=64M,read=50MB/s", 0);
    // Reads beyond the card's real 16 MiB fail: exit 3, partial figures.
    sim_run(&db, "sim:size=64M,real=16M,fake=eio", 3);
    sim_run(&db, "sim:size=64M,read=50MB/s", 0);
    let list = text(&ok(iocurve().args(["--db", db_arg, "list"])).stdout);
    assert_eq!(runs_listed(&list), 3, "{list}");
    let marked: Vec<&str> = list.lines().filter(|l| l.contains("FAILED")).collect();
    assert_eq!(marked.len(), 1, "{list}");
    assert!(marked[0].starts_with("  run    2 "), "{list}");
    let history = text(&ok(iocurve().args(["--db", db_arg, "history"])).stdout);
    assert!(history.contains("run      FAILED "), "{history}");
    assert_eq!(history.matches("FAILED").count(), 1, "{history}");
    let listed = json(&ok(iocurve().args(["--db", db_arg, "list", "--json"])).stdout);
    let statuses: Vec<&str> = listed["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["complete", "failed", "complete"], "{listed}");
    let by_device = json(&ok(iocurve().args(["--db", db_arg, "history", "--json"])).stdout);
    let runs_per_device: Vec<usize> = by_device["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["runs"].as_array().unwrap().len())
        .collect();
    assert_eq!(runs_per_device.iter().sum::<usize>(), 3, "{by_device}");

    // An id that is not stored: nothing is deleted.
    let refused = fails(iocurve().args(["--db", db_arg, "delete", "1", "9"]), 2);
    assert!(
        text(&refused.stderr).contains("no run 9"),
        "{}",
        text(&refused.stderr)
    );
    let list = text(&ok(iocurve().args(["--db", db_arg, "list"])).stdout);
    assert_eq!(runs_listed(&list), 3, "{list}");

    // The failed card's only run goes, and its device with it.
    let done = ok(iocurve().args(["--db", db_arg, "delete", "2", "3"]));
    assert!(text(&done.stdout).starts_with("deleted run 2, run 3 from "));
    let list = text(&ok(iocurve().args(["--db", db_arg, "list"])).stdout);
    assert_eq!(runs_listed(&list), 1, "{list}");
    assert!(
        list.contains("  run    1 ") && !list.contains("fake=eio"),
        "{list}"
    );
    let export = fails(iocurve().args(["--db", db_arg, "export", "2"]), 2);
    assert!(!export.stderr.is_empty());
}

#[test]
fn compare_fail_above_exits_6_on_a_slowdown_beyond_the_allowed_share() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(dir.path());
    let db_arg = db.to_str().unwrap();
    // The same workload on a card reading at 50 MB/s, then at 40 MB/s: 20%
    // slower in every repetition (a simulated card's clock is exact).
    for card in ["sim:size=64M,read=50MB/s", "sim:size=64M,read=40MB/s"] {
        let args = ["run", card, "--rw", "read", "--bs", "1M", "--time", "200ms"];
        ok(iocurve().args(args).args(["--repeat", "3", "--db", db_arg]));
    }
    let gate = |pct: &str| {
        iocurve()
            .args([
                "--db",
                db_arg,
                "compare",
                "--baseline",
                "1",
                "2",
                "--fail-above",
                pct,
            ])
            .output()
            .unwrap()
    };
    let failed = gate("5%");
    assert_eq!(failed.status.code(), Some(6), "{}", text(&failed.stderr));
    let why = text(&failed.stderr);
    assert!(
        why.starts_with("REGRESSION: run 2 is slower than run 1 by more than 5.0%: "),
        "{why}"
    );
    // Each 1 MiB read also pays the card's 200 µs command cost: -19.8%.
    assert!(
        why.contains("1 MiB read QD1 -19.8% (-19.8% to -19.8%)"),
        "{why}"
    );
    // The table is printed either way, with both runs.
    assert!(
        text(&failed.stdout).contains("run 2 "),
        "{}",
        text(&failed.stdout)
    );
    // 25% allowed: a 20% slowdown passes; the other way round is faster.
    assert_eq!(gate("25").status.code(), Some(0));
    let reverse = iocurve()
        .args(["--db", db_arg, "compare", "2", "1", "--fail-above", "1%"])
        .output()
        .unwrap();
    assert_eq!(reverse.status.code(), Some(0), "{}", text(&reverse.stderr));
    for bad in ["0", "100", "-5%", "five"] {
        let out = iocurve()
            .args(["--db", db_arg, "compare", "1", "2", "--fail-above", bad])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "--fail-above {bad}");
    }
}

/// Text that a spreadsheet would run as a formula, HTML that a Markdown
/// viewer would run, and what splits a table cell or a line.
const HOSTILE: [&str; 9] = [
    "=cmd|' /C calc'!A0",
    "+1+cmd",
    "-2+3",
    "@SUM(A1)",
    "\tx",
    "\rx",
    "<script>alert(1)</script>",
    "a|b",
    "line\nbreak",
];

/// The fixture with one read job per hostile name, a hostile fio version
/// and a hostile file name: what a hostile fio file can carry.
fn hostile_fio_file(dir: &Path) -> PathBuf {
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(FIO_FIXTURE).unwrap()).unwrap();
    doc["fio version"] = "fio-<script>alert(2)</script>|\nx".into();
    let template = doc["jobs"][0].clone();
    let jobs: Vec<serde_json::Value> = HOSTILE
        .iter()
        .map(|name| {
            let mut job = template.clone();
            job["jobname"] = (*name).into();
            job["job options"]["filename"] = "/tmp/<img src=x>|=1".into();
            job
        })
        .collect();
    doc["jobs"] = jobs.into();
    let file = dir.join("hostile-fio.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    file
}

/// The cells of each CSV record, unquoted as a spreadsheet reads them
/// (RFC 4180: quotes double inside quoted cells, which may span lines).
fn csv_records(csv: &str) -> Vec<Vec<String>> {
    let (mut records, mut cells, mut cell) = (Vec::new(), Vec::new(), String::new());
    let (mut quoted, mut chars) = (false, csv.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                cell.push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => cells.push(std::mem::take(&mut cell)),
            ('\n', false) => {
                cells.push(std::mem::take(&mut cell));
                records.push(std::mem::take(&mut cells));
            }
            (c, _) => cell.push(c),
        }
    }
    records
}

/// The cells of each Markdown table row, split where a renderer splits
/// them: at a `|` that no backslash escapes.
fn markdown_rows(md: &str) -> Vec<Vec<String>> {
    md.lines()
        .filter(|l| l.starts_with('|'))
        .map(|l| {
            let inner = l.trim().trim_start_matches('|').trim_end_matches('|');
            let (mut cells, mut escaped) = (vec![String::new()], false);
            for c in inner.chars() {
                match (c, escaped) {
                    ('|', false) => cells.push(String::new()),
                    (c, _) => cells.last_mut().unwrap().push(c),
                }
                escaped = c == '\\' && !escaped;
            }
            cells
        })
        .collect()
}

fn stdout_of(db: &Path, args: &[&str]) -> String {
    text(&ok(iocurve().args(args).arg("--db").arg(db)).stdout)
}

/// Every CSV cell of a hostile import is inert (neutralised with a quote
/// when it starts like a formula) and keeps its text.
fn assert_csv_inert(csv: &str, rows: usize) {
    let records = csv_records(csv);
    assert_eq!(records.len(), rows + 1, "{csv:?}");
    for record in &records {
        assert_eq!(record.len(), records[0].len(), "{csv:?}");
        for cell in record {
            assert!(
                !cell.starts_with(['=', '+', '-', '@', '\t', '\r']),
                "the cell {cell:?} starts a formula: {csv:?}"
            );
        }
    }
    let test = records[0].iter().position(|h| h == "test").unwrap();
    let names: Vec<&str> = records[1..]
        .iter()
        .map(|r| r[test].strip_prefix('\'').unwrap_or(&r[test]))
        .collect();
    // A carriage return is shown escaped, as every control character but
    // the line breaks and tabs a quoted cell holds.
    for name in HOSTILE.map(|n| n.replace('\r', "\\r")) {
        assert!(names.contains(&name.as_str()), "{name:?} in {names:?}");
    }
}

/// No raw HTML, and every table row has as many cells as its header.
fn assert_markdown_inert(md: &str, columns: usize) {
    assert!(!md.contains('<'), "raw HTML: {md}");
    assert!(!md.contains('\r'), "{md:?}");
    let rows = markdown_rows(md);
    assert!(rows.len() >= 3, "{md}");
    for row in &rows {
        assert_eq!(row.len(), columns, "{row:?} in {md}");
    }
}

#[test]
fn hostile_names_from_an_import_come_out_inert_in_every_export() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(dir.path());
    let fio = hostile_fio_file(dir.path());
    for _ in 0..2 {
        ok(iocurve().arg("import").arg(&fio).arg("--db").arg(&db));
    }
    assert_csv_inert(&stdout_of(&db, &["export", "1", "--csv"]), HOSTILE.len());
    assert_csv_inert(
        &stdout_of(&db, &["compare", "1", "2", "--csv"]),
        2 * HOSTILE.len(),
    );
    let md = stdout_of(&db, &["export", "1", "--markdown"]);
    // Test, then MB/s, IOPS, p50 and p99 of reads and of writes.
    assert_markdown_inert(&md, 9);
    // The heading and a blank line, the table (header, rule, one row per
    // job), a blank line and the four lines of notes: no name adds one.
    assert_eq!(md.lines().count(), 9 + HOSTILE.len(), "{md}");
    assert!(md.contains("&lt;img src=x&gt;\\|=1"), "{md}");
    let md = stdout_of(&db, &["compare", "1", "2", "--markdown"]);
    assert_markdown_inert(&md, 6);
    // JSON keeps every name exactly.
    let doc = json(stdout_of(&db, &["export", "1", "--json"]).as_bytes());
    let names: Vec<&str> = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, HOSTILE);
    // The HTML report escapes them too.
    let html = dir.path().join("report.html");
    ok(iocurve()
        .args(["report", "1", "2", "-o"])
        .arg(&html)
        .arg("--db")
        .arg(&db));
    let html = std::fs::read_to_string(&html).unwrap();
    for raw in ["<script>alert", "<img src=x>"] {
        assert!(!html.contains(raw), "{raw} in the HTML report");
    }
}
