//! Runs stored by an earlier release still read: `tests/fixtures/results-v1.db`
//! was written by iocurve 0.1.0 (schema 1: a command string and optional
//! sections), one run of every command. Each is exported again by this
//! build and must give the CSV that release gave, byte for byte, and read as
//! the command it was. The Markdown files were 0.1.0's until its format
//! changed on purpose (a median always, with its range when wide, and IOPS
//! columns); they are now this format's export of the same stored runs.

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
        assert_eq!(doc["schema_version"], 2, "run {run}");
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
