//! Every run stored by an earlier release keeps its figures. Each run of
//! the fixture databases (schema 1 of 0.1.0, schema 2, and schema 4, the
//! last before the JSON naming rule) and each schema-4 `--json` document in
//! tests/fixtures/results-v4/ is exported by this build as JSON of the
//! current schema, and every number the stored document held is in the
//! export, converted where its unit changed (schema 5 writes `t0_s` where
//! schema 4 wrote `t0_us`). Numbers are compared, not text: a figure may
//! move to another key, it may not be lost. Each run also exports as CSV
//! and Markdown, and the schema-4 runs show in `list`, `history` and a
//! report.

use crate::common;

use common::iocurve;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The fixture databases, each written by an earlier release.
const DATABASES: [&str; 3] = ["results-v1.db", "results-v2.db", "results-v4.db"];

/// Keys whose unit changed with the naming rule, and the factor from the
/// old unit to the new.
const CONVERTED: [(&str, f64); 9] = [
    ("t0_us", 1e-6),
    ("t0_se_us", 1e-6),
    ("busy_ms", 1e6),
    ("period_us", 1e3),
    ("max_sectors_kb", 1024.0),
    ("max_hw_sectors_kb", 1024.0),
    ("link_mbit_s", 0.125),
    ("speed_mbit_s", 0.125),
    ("rate_bytes_per_s", 1e-6),
];

/// Figures no longer written, and why nothing is lost.
const DROPPED: [(&str, &str); 1] = [(
    "mib_per_s",
    "MB/s is the JSON's one rate unit; MiB/s was the same figure × 10^6/2^20",
)];

/// `(path, figure)` for every number in `v`, in the current unit of its
/// key; seeds written as strings of digits count as numbers.
fn figures(v: &Value, path: &str, factor: f64, out: &mut Vec<(String, f64)>) {
    match v {
        Value::Number(n) => out.push((path.to_string(), n.as_f64().unwrap() * factor)),
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
            if let Ok(x) = s.parse::<f64>() {
                out.push((path.to_string(), x));
            }
        }
        Value::Object(map) => {
            for (k, x) in map {
                // The version is the one number meant to change.
                if k == "schema_version" || DROPPED.iter().any(|(d, _)| d == k) {
                    continue;
                }
                let mut f = CONVERTED.iter().find(|(c, _)| c == k).map_or(1.0, |c| c.1);
                // A class finding's FAT write times: float ms, now ns.
                if path.ends_with(".fat_writes") && k.ends_with("_ms") {
                    f = 1e6;
                }
                figures(x, &format!("{path}.{k}"), factor * f, out);
            }
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .for_each(|(i, x)| figures(x, &format!("{path}[{i}]"), factor, out)),
        _ => {}
    }
}

/// The figures of `old` that `new` does not hold (as `path = value`).
fn lost(old: &Value, new: &Value) -> Vec<String> {
    let mut before = Vec::new();
    figures(old, "", 1.0, &mut before);
    let mut after: Vec<f64> = Vec::new();
    let mut with_paths = Vec::new();
    figures(new, "", 1.0, &mut with_paths);
    after.extend(with_paths.into_iter().map(|(_, x)| x));
    after.sort_by(f64::total_cmp);
    let held = |x: f64| {
        let tol = 1e-9 * x.abs();
        let i = after.partition_point(|y| *y < x - tol);
        after.get(i).is_some_and(|y| (y - x).abs() <= tol)
    };
    before
        .into_iter()
        .filter(|(_, x)| !held(*x))
        .map(|(p, x)| format!("{p} = {x}"))
        .collect()
}

/// `iocurve export <what> --format <format>` against `db`.
fn export(db: &Path, what: &str, format: &str) -> String {
    let out = iocurve()
        .args(["--no-save", "--db"])
        .arg(db)
        .args(["export", what, "--format", format])
        .output()
        .expect("run iocurve");
    assert!(
        out.status.success(),
        "export {what} --format {format}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Each stored run of fixture database `name`: its id and the document as
/// the earlier release stored it (read from the fixture, not a copy that
/// this build may have migrated).
fn stored_runs(name: &str) -> Vec<(u32, Value)> {
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
    let conn = rusqlite::Connection::open_with_flags(fixture(name), flags).unwrap();
    let mut stmt = conn
        .prepare("SELECT id, result_json FROM runs ORDER BY id")
        .unwrap();
    stmt.query_map([], |row| Ok((row.get(0)?, row.get::<_, String>(1)?)))
        .unwrap()
        .map(|r| {
            let (id, text) = r.unwrap();
            (id, serde_json::from_str(&text).unwrap())
        })
        .collect()
}

/// A private copy of fixture database `name` (opening it may migrate it).
fn copy_of(name: &str, dir: &Path) -> PathBuf {
    let db = dir.join(name);
    std::fs::copy(fixture(name), &db).expect("copy the fixture database");
    db
}

/// Exports `what` as JSON, CSV and Markdown; the JSON, after checking it
/// is of the current schema and holds every figure of `stored`.
fn exports_with_its_figures(db: &Path, what: &str, stored: &Value, lost_all: &mut Vec<String>) {
    let doc: Value = serde_json::from_str(&export(db, what, "json")).unwrap();
    assert_eq!(doc["schema_version"], 5, "{what}");
    let gone = lost(stored, &doc);
    lost_all.extend(gone.into_iter().map(|g| format!("{what}: {g}")));
    for format in ["csv", "markdown"] {
        assert!(!export(db, what, format).is_empty(), "{what} as {format}");
    }
}

#[test]
fn every_stored_run_of_every_earlier_schema_exports_with_its_figures() {
    let dir = tempfile::tempdir().unwrap();
    let mut gone = Vec::new();
    let mut runs = 0;
    for name in DATABASES {
        let db = copy_of(name, dir.path());
        for (id, stored) in stored_runs(name) {
            let what = id.to_string();
            exports_with_its_figures(&db, &what, &stored, &mut gone);
            runs += 1;
        }
    }
    assert_eq!(runs, 15 + 15 + 17);
    assert!(
        gone.is_empty(),
        "{} stored figures are not in the export:\n{}",
        gone.len(),
        gone.join("\n")
    );
}

#[test]
fn every_schema_4_document_exports_with_its_figures_under_the_current_keys() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let mut gone = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixture("results-v4"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 15, "{files:?}");
    for file in &files {
        let stored: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        assert_eq!(stored["schema_version"], 4, "{}", file.display());
        exports_with_its_figures(&db, file.to_str().unwrap(), &stored, &mut gone);
    }
    assert!(
        gone.is_empty(),
        "{} stored figures are not in the export:\n{}",
        gone.len(),
        gone.join("\n")
    );
}

/// The keys that moved, read from the old document and written anew.
#[test]
fn schema_4_keys_are_read_under_their_new_names() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let read = |name: &str| -> (Value, Value) {
        let path = fixture("results-v4").join(name);
        let old = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let new = serde_json::from_str(&export(&db, path.to_str().unwrap(), "json")).unwrap();
        (old, new)
    };
    let (old, new) = read("run.json");
    assert_eq!(new["config"]["seed"], old["config"]["target"]["seed"]);
    assert!(
        new["config"]["target"].get("seed").is_none(),
        "{}",
        new["config"]
    );
    let busy = |d: &Value| d["tests"][0]["repetitions"][0]["device"].clone();
    if let Some(ms) = busy(&old)["busy_ms"].as_u64() {
        assert_eq!(busy(&new)["busy_ns"].as_u64(), Some(ms * 1_000_000));
    }
    let (old, new) = read("curve.json");
    let fit = |d: &Value, k: &str| d["curve"]["series"][0]["model"][k].as_f64();
    let us = fit(&old, "t0_us").expect("schema 4 wrote t0_us");
    let s = fit(&new, "t0_s").expect("t0_s");
    assert!((s - us / 1e6).abs() <= 1e-12, "{s} {us}");
    assert!(fit(&new, "t0_us").is_none());
    let (old, new) = read("surface.json");
    assert_eq!(
        new["surface"]["median_read_mb_per_s"],
        old["surface"]["median_read_mb_s"]
    );
    assert_eq!(
        new["config"]["threshold_pct"],
        old["config"]["threshold_percent"]
    );
    let (old, new) = read("stream.json");
    let rate = old["config"]["rate_bytes_per_s"].as_f64().unwrap();
    assert_eq!(new["config"]["rate_mb_per_s"].as_f64(), Some(rate / 1e6));
}

#[test]
fn schema_4_runs_show_in_list_history_and_a_report() {
    let dir = tempfile::tempdir().unwrap();
    let db = copy_of("results-v4.db", dir.path());
    let page = dir.path().join("report.html");
    let ids: Vec<String> = (1..=17).map(|i| i.to_string()).collect();
    let mut report = vec!["report".to_string()];
    report.extend(ids);
    report.extend(["-o".into(), page.to_str().unwrap().into()]);
    for args in [
        vec!["list".to_string()],
        vec!["history".into()],
        vec!["history".into(), "--json".into()],
        report,
    ] {
        let out = iocurve()
            .args(["--no-save", "--db"])
            .arg(&db)
            .args(&args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(std::fs::metadata(&page).unwrap().len() > 10_000);
}
