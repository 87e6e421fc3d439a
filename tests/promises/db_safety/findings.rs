//! What may be planted in a sound results database, and what iocurve does
//! about it: a trigger (never fired, never written past, listed by
//! `db check`, removed by `db repair`), a stored document that does not
//! parse (exit 3 naming the repair in every command that reads runs, set
//! aside by the repair), and a schema stamp iocurve never writes.

use super::{count_runs, save_one, sim_run};
use crate::common::{fails, iocurve_wide as iocurve, ok, text};
use std::path::{Path, PathBuf};

fn sql(db: &Path, batch: &str) {
    rusqlite::Connection::open(db)
        .unwrap()
        .execute_batch(batch)
        .unwrap();
}

/// The stamp as stored, signed.
fn raw_stamp(db: &Path) -> i64 {
    rusqlite::Connection::open(db)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap()
}

/// The schema objects of `db` that are not SQLite's own, as `type name`.
fn objects(db: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT type || ' ' || name FROM sqlite_master WHERE name NOT LIKE 'sqlite%' ORDER BY 1")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// The path `db repair` names after `prefix` on a line of its own.
fn named_after(said: &str, prefix: &str) -> PathBuf {
    said.lines()
        .find_map(|l| l.trim().strip_prefix(prefix))
        .map(|rest| PathBuf::from(rest.trim()))
        .unwrap_or_else(|| panic!("no {prefix:?} in: {said}"))
}

/// A database of three runs.
fn three_runs(dir: &Path) -> PathBuf {
    let db = dir.join("results.db");
    for _ in 0..3 {
        save_one(&db);
    }
    assert_eq!(count_runs(&db), 3);
    db
}

#[test]
fn a_planted_trigger_never_fires_is_listed_and_removed_by_repair() {
    let dir = tempfile::tempdir().unwrap();
    let db = three_runs(dir.path());
    let shown = db.display().to_string();
    sql(
        &db,
        "CREATE TRIGGER t AFTER INSERT ON runs BEGIN DELETE FROM runs; END;
         CREATE VIEW v AS SELECT id FROM runs;
         CREATE TABLE notes (x); INSERT INTO notes VALUES ('kept in the copy');
         CREATE INDEX by_command ON runs(command);",
    );
    let repair = format!("`iocurve db repair --db {shown}`");

    // A save is refused, naming the trigger and the repair; the run still
    // prints and ends as it measured; no run is lost.
    let out = sim_run(&db).output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("warning: the result was not saved: ")
            && err.contains("trigger t on runs")
            && err.contains(&repair),
        "{err}"
    );
    assert_eq!(count_runs(&db), 3, "{err}");
    // A command whose whole job is to write fails with one line, exit 3.
    let out = fails(iocurve().args(["delete", "1", "--db"]).arg(&db), 3);
    let err = text(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains(&repair), "{err}");
    assert_eq!(count_runs(&db), 3);
    // Reading goes on.
    let listed = text(&ok(iocurve().args(["list", "--db"]).arg(&db)).stdout);
    assert!(listed.contains("3 run(s)"), "{listed}");

    // db check lists every object iocurve did not make, exit 3.
    let out = fails(iocurve().args(["db", "check", "--db"]).arg(&db), 3);
    let said = text(&out.stdout);
    for line in [
        "trigger t on runs: not made by iocurve",
        "view v: not made by iocurve",
        "index by_command on runs: not made by iocurve",
        "table notes: not made by iocurve",
    ] {
        assert!(said.contains(line), "{line}: {said}");
    }
    let err = text(&out.stderr);
    assert!(
        err.contains("has 4 problem(s)") && err.contains(&repair),
        "{err}"
    );

    // db repair removes them, trigger first, keeping a copy as it was.
    let said = text(&ok(iocurve().args(["db", "repair", "--db"]).arg(&db)).stdout);
    eprintln!("{said}");
    assert!(
        said.contains("removed trigger t, view v, index by_command, table notes"),
        "{said}"
    );
    let copy = named_after(&said, "copied it as it was to ");
    assert!(objects(&copy).contains(&"trigger t".to_string()));
    let kept: String = rusqlite::Connection::open(&copy)
        .unwrap()
        .query_row("SELECT x FROM notes", [], |r| r.get(0))
        .unwrap();
    assert_eq!(kept, "kept in the copy");
    assert_eq!(
        objects(&db)
            .iter()
            .filter(|o| o.starts_with("trigger") || o.starts_with("view"))
            .count(),
        0,
        "{:?}",
        objects(&db)
    );
    assert_eq!(count_runs(&db), 3);
    // Saving works again, and keeps every run.
    save_one(&db);
    assert_eq!(count_runs(&db), 4);
    ok(iocurve().args(["db", "check", "--db"]).arg(&db));
}

/// Every command of the definition that reads stored runs, with a command
/// line that reads run `bad`; the others that take `--db` are named as not
/// reading stored documents. A new command taking `--db` must be sorted
/// here.
fn readers(bad: i64, report: &Path) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for (name, cmd) in crate::output_flags::leaves() {
        let takes_db = cmd.get_arguments().any(|a| a.get_long() == Some("db"));
        let saves = cmd.get_arguments().any(|a| a.get_long() == Some("no-save"));
        if !takes_db || saves {
            continue;
        }
        let args: Vec<String> = match name.as_str() {
            "list" | "history" => vec![name.clone()],
            "export" => vec![name.clone(), bad.to_string()],
            "compare" => vec![name.clone(), "1".into(), bad.to_string()],
            "report" => vec![
                name.clone(),
                bad.to_string(),
                "-o".into(),
                report.display().to_string(),
            ],
            // Not readers of stored documents: delete takes runs out by
            // id (the way to drop a bad one by hand), import saves a new
            // one, db check and db repair are tested on their own.
            "delete" | "import" | "db check" | "db repair" => continue,
            other => panic!("{other} takes --db: say here how it reads stored runs"),
        };
        out.push((name, args));
    }
    assert_eq!(out.len(), 5, "{out:?}");
    out
}

#[test]
fn a_stored_run_that_does_not_parse_is_named_with_the_repair_by_every_reader() {
    let dir = tempfile::tempdir().unwrap();
    let db = three_runs(dir.path());
    let shown = db.display().to_string();
    // Run 2 is not JSON at all; run 3 is JSON, but not a result.
    sql(
        &db,
        "UPDATE runs SET result_json = '{not json' WHERE id = 2;
         UPDATE runs SET result_json = '{\"x\": 1}' WHERE id = 3;",
    );
    let repair = format!("`iocurve db repair --db {shown}`");
    let report = dir.path().join("report.html");
    for bad in [2, 3] {
        for (name, args) in readers(bad, &report) {
            let out = iocurve().args(&args).arg("--db").arg(&db).output().unwrap();
            // list and history (which read every run, with SQLite's JSON
            // functions) stop at run 2 both times.
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(3), "{name} (run {bad}): {err}");
            assert_eq!(err.trim().lines().count(), 1, "{name}: {err}");
            assert!(
                err.contains("cannot be read") && err.contains(&repair),
                "{name} (run {bad}): {err}"
            );
        }
    }

    let out = fails(iocurve().args(["db", "check", "--db"]).arg(&db), 3);
    let said = text(&out.stdout);
    assert!(
        said.contains("run 2: its stored document cannot be read"),
        "{said}"
    );
    assert!(
        said.contains("run 3: its stored document cannot be read"),
        "{said}"
    );
    assert!(!said.contains("run 1:"), "{said}");

    let said = text(&ok(iocurve().args(["db", "repair", "--db"]).arg(&db)).stdout);
    eprintln!("{said}");
    let line = said
        .lines()
        .find(|l| l.starts_with("set aside 2 unreadable run(s) (run 2-3) to "))
        .unwrap_or_else(|| panic!("{said}"));
    let aside = PathBuf::from(line.rsplit(" to ").next().unwrap());
    let kept: Vec<serde_json::Value> = std::fs::read_to_string(&aside)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(kept.len(), 2);
    assert_eq!(
        (kept[0]["id"].as_i64(), kept[0]["document"].as_str()),
        (Some(2), Some("{not json"))
    );
    assert_eq!(count_runs(&db), 1);
    // Every reader works again.
    for args in [&["export"][..], &["list"], &["history"], &["export", "1"]] {
        ok(iocurve().args(args).arg("--db").arg(&db));
    }
    ok(iocurve().args(["db", "check", "--db"]).arg(&db));
}

#[test]
fn an_odd_schema_stamp_is_named_with_the_repair_and_set_back_by_it() {
    for odd in [-5_i64, i64::from(i32::MAX)] {
        let dir = tempfile::tempdir().unwrap();
        let db = three_runs(dir.path());
        sql(&db, &format!("PRAGMA user_version = {odd};"));
        let repair = format!("`iocurve db repair --db {}`", db.display());
        for args in [&["list"][..], &["history"], &["export", "1"]] {
            let out = fails(iocurve().args(args).arg("--db").arg(&db), 3);
            let err = text(&out.stderr);
            assert_eq!(err.trim().lines().count(), 1, "{odd} {args:?}: {err}");
            assert!(
                err.contains(&format!("has schema version {odd}")) && err.contains(&repair),
                "{odd} {args:?}: {err}"
            );
            assert!(!err.contains("out of range"), "{err}");
        }
        let out = sim_run(&db).output().unwrap();
        let err = text(&out.stderr);
        assert!(err.contains("not saved") && err.contains(&repair), "{err}");
        assert_eq!((count_runs(&db), raw_stamp(&db)), (3, odd));

        let out = fails(iocurve().args(["db", "check", "--db"]).arg(&db), 3);
        let said = text(&out.stdout);
        assert!(
            said.contains(&format!("schema version {odd}: "))
                && said.contains("the tables are those of version 3"),
            "{said}"
        );
        let said = text(&ok(iocurve().args(["db", "repair", "--db"]).arg(&db)).stdout);
        assert!(
            said.contains(&format!("set schema version {odd} back to 3")),
            "{said}"
        );
        assert_eq!((count_runs(&db), raw_stamp(&db)), (3, 3));
        ok(iocurve().args(["list", "--db"]).arg(&db));
        save_one(&db);
        assert_eq!(count_runs(&db), 4);
    }
}
