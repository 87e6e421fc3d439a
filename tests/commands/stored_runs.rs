//! Runs stored by an earlier release still read: `tests/fixtures/results-v1.db`
//! was written by iocurve 0.1.0 (schema 1: a command string and optional
//! sections), one run of every command. Each is exported again by this
//! build and must read as the command it was. The CSV that release gave is
//! kept in `results-v1/0.1.0/`: every row of it is in this build's CSV with
//! the same words and the same figures to the decimals 0.1.0 wrote (this
//! build writes 6 significant figures, and adds the outcome of a run
//! without a tests table). `results-v1/run-N.{md,csv}` are this format's
//! export of the same stored runs, compared byte for byte so that a change
//! of format is a choice made in a commit.

use crate::common;

use common::iocurve;
use std::path::{Path, PathBuf};

const RUNS: u32 = 15;

/// A private copy of the fixture (opening it may migrate it in place).
fn fixture_db(dir: &Path) -> PathBuf {
    let db = dir.join("results-v1.db");
    std::fs::copy("tests/fixtures/results-v1.db", &db).expect("copy the fixture database");
    db
}

fn export(db: &Path, run: u32, format: &str) -> String {
    let out = iocurve()
        .args(["--no-save", "--db"])
        .arg(db)
        .args(["export", &run.to_string(), "--format", format])
        .output()
        .expect("run iocurve");
    assert!(
        out.status.success(),
        "export {run} --format {format}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn every_run_of_the_previous_release_exports_as_it_did() {
    let dir = tempfile::tempdir().unwrap();
    let db = fixture_db(dir.path());
    for run in 1..=RUNS {
        for (format, ext) in [("markdown", "md"), ("csv", "csv")] {
            let want =
                std::fs::read_to_string(format!("tests/fixtures/results-v1/run-{run}.{ext}"))
                    .expect("fixture export");
            assert_eq!(export(&db, run, format), want, "run {run} as {format}");
        }
    }
}

/// A CSV line's cells (the fixtures quote only cells with commas, and hold
/// no quote inside a cell).
fn cells(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out
}

/// `new` is `old` written with more significant figures: equal words, and
/// equal numbers at the decimals `old` was written with.
fn same_cell(old: &str, new: &str) -> bool {
    match (old.parse::<f64>(), new.parse::<f64>()) {
        (Ok(o), Ok(n)) => {
            let decimals = old.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
            (o - n).abs() <= 0.5 * 10f64.powi(-decimals) * (1.0 + 1e-9)
        }
        _ => old == new,
    }
}

#[test]
fn every_row_the_previous_release_exported_keeps_its_figures() {
    let dir = tempfile::tempdir().unwrap();
    let db = fixture_db(dir.path());
    let mut rows = 0;
    for run in 1..=RUNS {
        let old = std::fs::read_to_string(format!("tests/fixtures/results-v1/0.1.0/run-{run}.csv"))
            .expect("0.1.0's export");
        let new = export(&db, run, "csv");
        let new_rows: Vec<Vec<String>> = new.lines().map(cells).collect();
        for line in old.lines().skip(1) {
            let old_cells = cells(line);
            let kept = new_rows.iter().any(|n| {
                n.len() == old_cells.len() && old_cells.iter().zip(n).all(|(o, n)| same_cell(o, n))
            });
            // A copy is now exported as its outcome's rows (bottleneck,
            // each side alone): the test's median MB/s is one of them.
            let kept = kept
                || (old_cells[3] == "copy"
                    && new_rows
                        .iter()
                        .any(|n| n.last().is_some_and(|v| same_cell(&old_cells[10], v))));
            assert!(kept, "run {run}: 0.1.0's row\n{line}\nis not in\n{new}");
            rows += 1;
        }
    }
    assert!(rows >= 20, "only {rows} rows of 0.1.0 were compared");
}

#[test]
fn every_run_of_the_previous_release_reads_as_its_command_in_the_current_schema() {
    let dir = tempfile::tempdir().unwrap();
    let db = fixture_db(dir.path());
    // What each stored run was, and the section its command must carry.
    let expected: [(u32, &str, Option<&str>); 15] = [
        (1, "profile", None),
        (2, "run", None),
        (3, "curve", Some("curve")),
        (4, "stream", Some("stream")),
        (5, "sustain", Some("sustain")),
        (6, "surface", Some("surface")),
        (7, "flash", Some("flash")),
        (8, "flash", Some("flash")),
        (9, "files load", Some("files_load")),
        (10, "files save", Some("files_save")),
        (11, "copy", Some("copy")),
        (12, "imported", None),
        (13, "run", Some("parallel")),
        (14, "endure", Some("endure")),
        (15, "files load", Some("files_load")),
    ];
    for (run, command, section) in expected {
        let doc: serde_json::Value = serde_json::from_str(&export(&db, run, "json")).unwrap();
        assert_eq!(doc["schema_version"], 5, "run {run}");
        assert_eq!(doc["command"], command, "run {run}");
        if let Some(key) = section {
            assert!(
                doc[key].is_object(),
                "run {run} lacks its {key} section: {doc}"
            );
        }
        // A section of another command is not carried along as null.
        for other in [
            "curve",
            "stream",
            "sustain",
            "files_load",
            "files_save",
            "flash",
        ] {
            if Some(other) != section {
                assert!(doc.get(other).is_none(), "run {run} carries {other}");
            }
        }
        assert!(doc["tests"].is_array(), "run {run}");
    }
    let flash: serde_json::Value = serde_json::from_str(&export(&db, 8, "json")).unwrap();
    assert_eq!(flash["flash"]["test"], "class");
    let fio: serde_json::Value = serde_json::from_str(&export(&db, 12, "json")).unwrap();
    assert_eq!(fio["tool"], "fio");
}

#[test]
fn the_list_still_names_each_stored_command() {
    let dir = tempfile::tempdir().unwrap();
    let db = fixture_db(dir.path());
    let out = iocurve().arg("--db").arg(&db).arg("list").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for command in [
        "profile",
        "curve",
        "flash align",
        "flash class",
        "files load",
        "fio",
    ] {
        assert!(text.contains(command), "{command} missing from:\n{text}");
    }
}

/// `tests/fixtures/results-v2.db` was written by the release before the
/// typed results (schema 2: closed sets as strings, flash findings and
/// tables as words), one run of each kind on `sim:` cards, a copy and an
/// mmap run on a file; host and paths were replaced afterwards.
mod schema_2 {
    use super::common::iocurve;
    use std::path::{Path, PathBuf};

    fn fixture_db(dir: &Path) -> PathBuf {
        let db = dir.join("results-v2.db");
        std::fs::copy("tests/fixtures/results-v2.db", &db).expect("copy the fixture database");
        db
    }

    fn run(db: &Path, args: &[&str]) -> String {
        let out = iocurve()
            .args(["--no-save", "--db"])
            .arg(db)
            .args(args)
            .output()
            .expect("run iocurve");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8")
    }

    fn export(db: &Path, id: u32) -> serde_json::Value {
        let doc = run(db, &["export", &id.to_string(), "--format", "json"]);
        serde_json::from_str(&doc).expect("a JSON document")
    }

    #[test]
    fn every_run_exports_in_the_current_schema_with_its_figures() {
        let dir = tempfile::tempdir().unwrap();
        let db = fixture_db(dir.path());
        let commands = [
            "run", "profile", "flash", "flash", "sustain", "stream", "flash", "flash", "flash",
            "copy", "run", "run", "run", "curve", "run",
        ];
        for (i, command) in commands.iter().enumerate() {
            let doc = export(&db, i as u32 + 1);
            assert_eq!(doc["schema_version"], 5, "run {}", i + 1);
            assert_eq!(doc["command"], *command, "run {}", i + 1);
        }
        let first = export(&db, 1);
        let w = &first["tests"][0]["workload"];
        assert_eq!(
            (w["rw"].as_str(), w["engine"].as_str()),
            (Some("read"), Some("sync"))
        );
        assert_eq!(first["tests"][0]["mb_per_s"]["median"], 38.530189899464986);
        assert_eq!(first["access"]["method"], "pread");
        assert_eq!(export(&db, 2)["tests"][0]["workload"]["engine"], "uring");
        assert_eq!(export(&db, 5)["sustain"]["ended_by"], "bytes");
        assert_eq!(export(&db, 5)["sustain"]["bytes"], 160u64 << 20);
        assert_eq!(export(&db, 6)["stream"]["direction"], "read");
        let copy = export(&db, 10);
        assert_eq!(copy["copy"]["sync"], "end");
        assert_eq!(copy["copy"]["bottleneck"], "destination");
        assert_eq!(copy["copy"]["bytes"], 64u64 << 20);
        assert_eq!(export(&db, 11)["access"]["method"], "mmap");
        assert_eq!(export(&db, 11)["tests"][0]["workload"]["engine"], "mmap");
        assert_eq!(export(&db, 13)["parallel"]["tests"][0]["rw"], "read");
        let patterns: Vec<String> = export(&db, 14)["curve"]["series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["pattern"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(patterns, ["read", "write", "randread", "randwrite"]);
    }

    #[test]
    fn flash_runs_keep_their_words_and_their_table() {
        let dir = tempfile::tempdir().unwrap();
        let db = fixture_db(dir.path());
        let expected = [
            (3, "capacity", "usable capacity", "1 GiB"),
            (
                4,
                "class",
                "write cache",
                "burst 58.7 MB/s, fell after 100 MiB, steady after 176 MiB",
            ),
            (7, "align", "AU (erase block)", "2 MiB"),
            (8, "open-au", "open AUs", "5"),
            (9, "cache", "burst", "58.7 MB/s"),
        ];
        for (id, test, name, value) in expected {
            let doc = export(&db, id);
            let flash = &doc["flash"];
            assert_eq!(flash["test"], test, "run {id}");
            let words = &flash["findings"][0]["figure"]["words"];
            assert_eq!(words["name"], name, "run {id}");
            assert_eq!(words["value"], value, "run {id}");
            assert!(flash["table"][0].is_array(), "run {id}: {}", flash["table"]);
        }
        let capacity = export(&db, 3);
        assert_eq!(capacity["flash"]["outcome"], "legacy");
        assert_eq!(capacity["flash"]["failed"], true);
        assert_eq!(capacity["flash"]["table"][1][1], "Corrupted");
        let class = export(&db, 4);
        assert_eq!(class["flash"]["findings"][5]["status"], "PASS");
        assert_eq!(class["flash"]["table"][0][1], "AU MB/s");
    }

    #[test]
    fn history_report_and_compare_read_the_stored_runs() {
        let dir = tempfile::tempdir().unwrap();
        let db = fixture_db(dir.path());
        let history: serde_json::Value =
            serde_json::from_str(&run(&db, &["history", "--json"])).unwrap();
        let runs: Vec<&serde_json::Value> = history["devices"]
            .as_array()
            .expect("devices")
            .iter()
            .flat_map(|d| d["runs"].as_array().expect("runs"))
            .collect();
        assert_eq!(runs.len(), 15);
        let first = runs.iter().find(|r| r["id"] == 1).expect("run 1");
        assert_eq!(first["figures"][0]["rw"], "read");
        let median = first["figures"][0]["median"].as_f64().unwrap();
        assert!((median - 38.530_19).abs() < 1e-4, "{median}");
        let profile = runs.iter().find(|r| r["id"] == 2).expect("run 2");
        assert_eq!(profile["figures"].as_array().unwrap().len(), 8);
        assert_eq!(profile["figures"][5]["rw"], "randwrite");

        let page = dir.path().join("report.html");
        let ids: Vec<String> = (1..=15).map(|i| i.to_string()).collect();
        let mut args: Vec<&str> = vec!["report"];
        args.extend(ids.iter().map(String::as_str));
        let page_arg = page.to_str().unwrap();
        args.extend(["-o", page_arg]);
        run(&db, &args);
        let html = std::fs::read_to_string(&page).unwrap();
        assert!(html.contains("FAKE: claims 8 GiB, really holds 1 GiB"));
        assert!(html.contains("meets: C10"));
        assert!(html.contains("Streaming on a fixed schedule (read)"));

        let compared = run(&db, &["compare", "1", "15"]);
        assert!(compared.contains("same device"), "{compared}");
        assert!(
            compared.contains("run 15, 128 KiB read QD1: no change"),
            "{compared}"
        );
    }
}

/// The words earlier releases stored (caveats as `"KIND: text"`, the
/// curve's advice, fit reasons and deviation notes, skip reasons) read back
/// as legacy variants, are shown as stored by the text and CSV renderers,
/// and are written back unchanged; no figure is lost on the way.
mod stored_words {
    use iocurve::report::{Csv, Export, Text};
    use iocurve::result::RunResult;
    use iocurve::store::Store;
    use std::path::Path;

    fn runs(fixture: &str, dir: &Path) -> Vec<(i64, RunResult, serde_json::Value)> {
        let db = dir.join("copy.db");
        std::fs::copy(fixture, &db).expect("copy the fixture database");
        let store = Store::open(&db).expect("open the fixture");
        let raw = Store::open_to_read(&db).expect("open again");
        (1..=15)
            .map(|id| {
                let r = store.load(id).expect("load").expect("stored");
                let json: String = raw
                    .connection()
                    .query_row("SELECT result_json FROM runs WHERE id = ?1", [id], |row| {
                        row.get(0)
                    })
                    .expect("the stored document");
                (id, r, serde_json::from_str(&json).expect("JSON"))
            })
            .collect()
    }

    /// Every string a stored document held under `key`, anywhere in it.
    fn strings_under(v: &serde_json::Value, key: &str, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    match (k == key, x) {
                        (true, serde_json::Value::String(s)) => out.push(s.clone()),
                        (true, serde_json::Value::Array(a)) => {
                            out.extend(a.iter().filter_map(|s| s.as_str().map(String::from)))
                        }
                        _ => strings_under(x, key, out),
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| strings_under(x, key, out)),
            _ => {}
        }
    }

    #[test]
    fn stored_words_are_shown_as_stored_and_figures_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mut shown = 0;
        for fixture in [
            "tests/fixtures/results-v1.db",
            "tests/fixtures/results-v2.db",
        ] {
            for (id, r, stored) in runs(fixture, dir.path()) {
                let text = Text.render(&r);
                let csv = Csv.render(&r);
                let mut notes = Vec::new();
                strings_under(&stored, "notes", &mut notes);
                strings_under(&stored, "recommendation", &mut notes);
                for note in notes {
                    // The text wraps long lines: compare words, not lines.
                    let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
                    let words = flat(&note.replace("no advice: ", ""));
                    assert!(
                        flat(&text).contains(&words),
                        "{fixture} run {id}: {note:?} missing from\n{text}"
                    );
                    shown += 1;
                }
                // Written back, the stored words are what they were.
                let again = serde_json::to_value(&r).unwrap();
                for key in ["notes", "warnings", "skipped"] {
                    let (mut before, mut after) = (Vec::new(), Vec::new());
                    strings_under(&stored, key, &mut before);
                    strings_under(&again, key, &mut after);
                    assert_eq!(before, after, "{fixture} run {id}: {key}");
                }
                // One CSV row per test (v1's CSV is also compared above);
                // a run without tests (curve, flash) has its outcome's rows.
                let rows = csv.lines().count() - 1;
                let own_outcome = !iocurve::report::outcome::figures(&r).is_empty();
                if r.tests.is_empty() || own_outcome {
                    assert!(rows > 0, "{fixture} run {id}: no outcome rows\n{csv}");
                } else {
                    assert_eq!(rows, r.tests.len(), "{fixture} run {id}");
                }
            }
        }
        assert!(shown > 10, "only {shown} stored sentences were checked");
    }
}
