use super::*;
use crate::testdata;
use std::path::Path;

fn memory(version: u32) -> Store {
    Store::from_connection(Connection::open_in_memory().unwrap(), version).unwrap()
}

/// A temporary folder (gone when dropped) and the database path `name`
/// in it.
fn db_file(name: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    (dir, path)
}

/// A database `name` of `runs` runs whose figures table has a damaged
/// root page, with its bytes as damaged.
fn damaged_db(name: &str, runs: usize) -> (tempfile::TempDir, std::path::PathBuf, Vec<u8>) {
    let (dir, path) = db_file(name);
    database_with_runs(&path, runs);
    damage_page(&path, root_page(&path, "figures"));
    let before = std::fs::read(&path).unwrap();
    (dir, path, before)
}

fn card(serial: &str) -> crate::probe::DeviceIdentity {
    testdata::sd_identity("SD08G", 3, "SD", serial, "2008-12")
}

#[test]
fn migrates_an_empty_database_to_the_latest_version() {
    let s = memory(schema::latest());
    assert_eq!(schema::version(s.connection()).unwrap(), schema::latest());
    assert_eq!(s.devices().unwrap(), vec![]);
}

/// A run saved by a version-1 database (no `source`, no figures) keeps its
/// document and gains its figures when migrated.
#[test]
fn migrates_from_version_1_with_backfill() {
    let (_dir, path) = db_file("v1.db");
    let result = testdata::run(
        Some(card("0x1")),
        "2024-01-01T00:00:00Z",
        &[20.0, 21.0],
        &[17.0, 18.0],
    );
    {
        let s = Store::from_connection(Connection::open(&path).unwrap(), 1).unwrap();
        s.connection()
            .execute_batch(&format!(
                "INSERT INTO devices (key, label, first_seen, last_seen) VALUES ('k', 'old card', 'a', 'a');
                 INSERT INTO runs (device_id, command, started_at, result_json) VALUES (1, 'profile', 'a', '{}');",
                serde_json::to_string(&result).unwrap().replace('\'', "''")
            ))
            .unwrap();
        assert_eq!(schema::version(s.connection()).unwrap(), 1);
    }
    let s = Store::open(&path).unwrap();
    assert_eq!(schema::version(s.connection()).unwrap(), schema::latest());
    let runs = s.runs(None).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].source, "iocurve");
    assert_eq!(runs[0].figures.len(), 2);
    assert_eq!(runs[0].figures[0].median, 20.5);
    assert_eq!(runs[0].figures[1].rw, "write");
}

#[test]
fn every_earlier_version_reaches_the_latest() {
    for v in 0..=schema::latest() {
        let mut s = memory(v);
        schema::migrate_to(&mut s.conn, schema::latest()).unwrap();
        assert_eq!(
            schema::version(s.connection()).unwrap(),
            schema::latest(),
            "from {v}"
        );
    }
}

#[test]
fn a_newer_database_is_refused() {
    let conn = Connection::open_in_memory().unwrap();
    conn.pragma_update(None, "user_version", 99).unwrap();
    let err = Store::from_connection(conn, schema::latest())
        .err()
        .unwrap();
    // As `main` prints it: the file, then why, on one line, exit 3.
    assert_eq!(crate::error::exit_code(&err), crate::error::EXIT_IO);
    let err = format!("{err:#}");
    assert!(
        err.starts_with("the results database :memory: has schema version 99, newer than this iocurve knows (3): upgrade iocurve"),
        "{err}"
    );
}

#[test]
fn runs_of_one_device_share_a_key() {
    let mut s = memory(schema::latest());
    let a1 = testdata::run(Some(card("0x1")), "2024-01-01T00:00:00Z", &[20.0], &[17.0]);
    let b = testdata::run(Some(card("0x2")), "2024-02-01T00:00:00Z", &[10.0], &[7.0]);
    let a2 = testdata::run(Some(card("0x1")), "2025-01-01T00:00:00Z", &[19.0], &[12.0]);
    let ids: Vec<i64> = [&a1, &b, &a2]
        .iter()
        .map(|r| s.save(r, "iocurve").unwrap())
        .collect();
    let devices = s.devices().unwrap();
    assert_eq!(devices.len(), 2);
    let a = s.find_device("cid:030x1").unwrap().unwrap();
    assert_eq!(
        (a.runs, a.first_seen.as_str(), a.last_seen.as_str()),
        (2, "2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z")
    );
    let history: Vec<i64> = s.runs(Some(a.id)).unwrap().iter().map(|r| r.id).collect();
    assert_eq!(history, vec![ids[0], ids[2]]);
    assert_eq!(s.latest_run(a.id).unwrap(), Some(ids[2]));
    assert_eq!(s.find_device("mmcblk0").unwrap().unwrap().id, a.id);
    assert!(s.find_device("sd08g").is_err(), "two cards share the label");
    assert!(s.find_device("nothing like it").unwrap().is_none());
    let loaded = s.load(ids[1]).unwrap().unwrap();
    assert_eq!(loaded.device_identity.unwrap().key, "cid:030x2");
    assert_eq!(loaded.tests[1].mb_per_s.unwrap().median, 7.0);
}

/// A database of `n` runs at `path`, closed (its log folded back in).
fn database_with_runs(path: &Path, n: usize) {
    let mut s = Store::open(path).unwrap();
    for i in 0..n {
        let r = testdata::run(
            Some(card(&format!("0x{}", i % 2))),
            &format!("2024-01-{:02}T00:00:00Z", i + 1),
            &[20.0 + i as f64],
            &[10.0],
        );
        s.save(&r, "iocurve").unwrap();
    }
}

/// Overwrites page `page` (counted from 1) of a closed database with
/// random bytes.
fn damage_page(path: &Path, page: u64) {
    use std::io::{Seek, SeekFrom, Write};
    let mut garbage = vec![0u8; 4096];
    fastrand::Rng::with_seed(page).fill(&mut garbage);
    let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.seek(SeekFrom::Start((page - 1) * 4096)).unwrap();
    f.write_all(&garbage).unwrap();
}

/// The root page of a table or index.
fn root_page(path: &Path, name: &str) -> u64 {
    let page: i64 = Connection::open(path)
        .unwrap()
        .query_row(
            "SELECT rootpage FROM sqlite_master WHERE name = ?1",
            [name],
            |r| r.get(0),
        )
        .unwrap();
    page as u64
}

/// Connections racing on a fresh file: one migrates, the others find it
/// done, every save lands.
#[test]
fn connections_racing_on_a_fresh_file_all_save() {
    let (_dir, path) = db_file("race.db");
    let barrier = std::sync::Barrier::new(8);
    std::thread::scope(|scope| {
        for i in 0..8 {
            let (path, barrier) = (&path, &barrier);
            scope.spawn(move || {
                let r = testdata::run(Some(card("0x1")), "2024-01-01T00:00:00Z", &[20.0], &[]);
                barrier.wait();
                let id = Store::open(path)
                    .and_then(|mut s| s.save(&r, "iocurve"))
                    .unwrap_or_else(|e| panic!("connection {i}: {e:#}"));
                assert!(id > 0);
            });
        }
    });
    let s = Store::open(&path).unwrap();
    assert_eq!(s.runs(None).unwrap().len(), 8);
    assert_eq!(schema::version(s.connection()).unwrap(), schema::latest());
    let mode: String = s
        .connection()
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn a_damaged_file_is_refused_and_left_as_it_is() {
    let (dir, path, before) = damaged_db("damaged.db", 4);
    let err = format!("{:#}", Store::open(&path).err().unwrap());
    assert!(
        err.starts_with(&format!(
            "the results database {} is damaged (quick_check: ",
            path.display()
        )),
        "{err}"
    );
    assert!(err.contains("`iocurve db repair --db "), "{err}");
    assert!(err.ends_with("(or pass --db FILE / --no-save)"), "{err}");
    let err = format!("{:#}", Store::open_to_read(&path).err().unwrap());
    assert!(err.ends_with("(or pass --db FILE)"), "{err}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the file was written"
    );
    assert!(matches!(
        repair::check(&path).unwrap(),
        repair::Checked::Damaged(problem) if problem.starts_with("quick_check: ")
    ));
    // Not a database at all is damage too.
    let text = dir.path().join("notes.db");
    std::fs::write(&text, vec![b'x'; 8192]).unwrap();
    let err = format!("{:#}", Store::open(&text).err().unwrap());
    assert!(
        err.contains("is damaged (quick_check: file is not a database)"),
        "{err}"
    );
}

#[test]
fn repair_leaves_a_sound_database_alone() {
    let (dir, path) = db_file("sound.db");
    database_with_runs(&path, 3);
    let before = std::fs::read(&path).unwrap();
    let done = repair::repair(&path).unwrap();
    assert_eq!(
        done,
        repair::Repair::Healthy(crate::result::stored::Sound {
            runs: 3,
            version: schema::latest()
        })
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("sound.db")]);
}

/// Damage to the figures keeps every run (they are rebuilt from the
/// documents); damage to a leaf of the runs table costs its runs only, and
/// says which.
#[test]
fn repair_moves_a_damaged_file_aside_and_salvages_what_it_can() {
    let (dir, path, before) = damaged_db("results.db", 6);
    let repair::Repair::Replaced(r) = repair::repair(&path).unwrap() else {
        panic!("not repaired");
    };
    assert_eq!(r.salvaged, vec![1, 2, 3, 4, 5, 6]);
    assert!(r.unreadable.is_empty() && !r.list_damaged, "{r:?}");
    assert_eq!(
        std::fs::read(&r.aside).unwrap(),
        before,
        "the damaged copy changed"
    );
    let name = r.aside.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("results.db.damaged-20") && name.ends_with('Z'),
        "{name}"
    );
    let s = Store::open(&path).unwrap();
    let runs = s.runs(None).unwrap();
    assert_eq!(runs.len(), 6);
    assert_eq!(runs[5].figures[0].median, 25.0);
    assert_eq!(s.devices().unwrap().len(), 2);
    drop(s);

    // A page of the runs table itself: the last page of the file.
    let path = dir.path().join("leaf.db");
    database_with_runs(&path, 6);
    let pages = std::fs::metadata(&path).unwrap().len() / 4096;
    damage_page(&path, pages);
    let repair::Repair::Replaced(r) = repair::repair(&path).unwrap() else {
        panic!("not repaired");
    };
    assert!(!r.salvaged.is_empty(), "{r:?}");
    assert_eq!(r.salvaged.len() + r.unreadable.len(), 6, "{r:?}");
    assert_eq!(
        Store::open(&path).unwrap().runs(None).unwrap().len(),
        r.salvaged.len()
    );
}

/// Every version's tables, stamp lost, are recognised as that version and
/// migrated on from there; an extra table makes them another make's.
#[test]
fn a_lost_stamp_is_recognised_from_the_tables_of_each_version() {
    for v in 1..=schema::latest() {
        let s = memory(v);
        let mut conn = s.conn;
        conn.pragma_update(None, "user_version", 0).unwrap();
        assert_eq!(
            schema::recognise(&conn).unwrap(),
            schema::Found::Unstamped(v)
        );
        schema::migrate_to(&mut conn, schema::latest()).unwrap();
        assert_eq!(schema::version(&conn).unwrap(), schema::latest());
    }
    let conn = Connection::open_in_memory().unwrap();
    assert_eq!(schema::recognise(&conn).unwrap(), schema::Found::Empty);
    let mut conn = memory(schema::latest()).conn;
    conn.execute_batch("CREATE TABLE notes (x); PRAGMA user_version = 0;")
        .unwrap();
    let found = schema::recognise(&conn).unwrap();
    assert!(
        matches!(&found, schema::Found::Foreign(t) if t.contains(&"notes".to_string())),
        "{found:?}"
    );
    let err = format!(
        "{:#}",
        schema::migrate_to(&mut conn, schema::latest()).unwrap_err()
    );
    assert!(err.contains("tables iocurve does not make"), "{err}");
    assert_eq!(schema::version(&conn).unwrap(), 0, "nothing was stamped");
}

/// The fixture's ranks, saved with its run, read back row for row; the
/// stored document keeps its `mpi` section; `runs` counts ranks and hosts.
#[test]
fn a_run_on_many_hosts_keeps_its_rank_rows() {
    let mut s = memory(schema::latest());
    let result = testdata::mpi_result();
    let id = s.save(&result, "iocurve").unwrap();
    let want = result.mpi.as_ref().unwrap().ranks.clone();
    assert_eq!(s.rank_rows(id).unwrap(), want);
    let back = s.load(id).unwrap().unwrap();
    let json = |r: &RunResult| serde_json::to_value(&r.mpi).unwrap();
    assert!(testdata::same_json(&json(&back), &json(&result)));
    let runs = s.runs(None).unwrap();
    assert_eq!(
        runs[0].ranks,
        Some(crate::result::stored::RankCount { ranks: 4, hosts: 2 })
    );
    // A run on one host has none.
    let one = testdata::run(Some(card("0x9")), "2024-01-02T00:00:00Z", &[20.0], &[9.0]);
    let other = s.save(&one, "iocurve").unwrap();
    assert_eq!(s.rank_rows(other).unwrap(), vec![]);
    let runs = s.runs(None).unwrap();
    assert_eq!(runs.iter().find(|r| r.id == other).unwrap().ranks, None);
}

#[test]
fn rank_rows_follow_their_run_through_update_and_delete() {
    let mut s = memory(schema::latest());
    let mut result = testdata::mpi_result();
    let id = s.save(&result, "iocurve").unwrap();
    let m = result.mpi.as_mut().unwrap();
    m.ranks.truncate(3);
    m.size = 3;
    s.update(id, &result).unwrap();
    assert_eq!(s.rank_rows(id).unwrap().len(), 3);
    s.delete(&[id]).unwrap();
    let left: i64 = s
        .connection()
        .query_row("SELECT count(*) FROM mpi_ranks", [], |r| r.get(0))
        .unwrap();
    assert_eq!(left, 0);
}

/// A run on many hosts stored before the table existed gains its rows
/// when the database is migrated.
#[test]
fn migrating_from_version_2_fills_the_rank_rows() {
    let (_dir, path) = db_file("v2.db");
    let result = testdata::mpi_result();
    {
        let mut s = Store::from_connection(Connection::open(&path).unwrap(), 2).unwrap();
        let json = serde_json::to_string(&result).unwrap();
        s.write("save", |tx| {
            tx.execute(
                "INSERT INTO devices (key, label, first_seen, last_seen) VALUES ('k', 'x', 'a', 'a')",
                [],
            )?;
            tx.execute(
                "INSERT INTO runs (device_id, command, started_at, result_json) VALUES (1, 'profile', 'a', ?1)",
                [&json],
            )?;
            Ok(())
        })
        .unwrap();
    }
    let s = Store::open(&path).unwrap();
    assert_eq!(s.rank_rows(1).unwrap(), result.mpi.unwrap().ranks);
}

/// A trigger planted in the file: the connection has triggers switched
/// off, and opening to save is refused (exit 3, naming the repair) before
/// anything is written.
#[test]
fn a_planted_trigger_never_fires_and_saving_is_refused() {
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(
        "CREATE TABLE a (x); CREATE TABLE log (x);
         CREATE TRIGGER t AFTER INSERT ON a BEGIN INSERT INTO log VALUES (1); END;",
    )
    .unwrap();
    audit::disarm(&conn).unwrap();
    conn.execute("INSERT INTO a VALUES (1)", []).unwrap();
    let fired: i64 = conn
        .query_row("SELECT count(*) FROM log", [], |r| r.get(0))
        .unwrap();
    assert_eq!(fired, 0);

    let mut s = memory(schema::latest());
    s.save(
        &testdata::run(None, "2024-03-01T10:00:00Z", &[20.0], &[10.0]),
        "iocurve",
    )
    .unwrap();
    s.conn
        .execute_batch("CREATE TRIGGER t AFTER INSERT ON runs BEGIN DELETE FROM runs; END;")
        .unwrap();
    let err = Store::from_connection(s.conn, schema::latest())
        .err()
        .unwrap();
    assert_eq!(crate::error::exit_code(&err), crate::error::EXIT_IO);
    let err = format!("{err:#}");
    assert!(
        err.contains("holds trigger t on runs, which iocurve did not make")
            && err.contains("`iocurve db repair --db :memory:`"),
        "{err}"
    );
}

/// A document that does not parse: `load` and the listings fail with an
/// I/O failure naming the run and the repair, never an internal error.
#[test]
fn an_unreadable_document_is_an_io_failure_naming_the_repair() {
    let mut s = memory(schema::latest());
    let run = testdata::run(None, "2024-03-01T10:00:00Z", &[20.0], &[10.0]);
    s.save(&run, "iocurve").unwrap();
    s.conn
        .execute("UPDATE runs SET result_json = '{\"x\": 1}'", [])
        .unwrap();
    let err = s.load(1).err().unwrap();
    assert_eq!(crate::error::exit_code(&err), crate::error::EXIT_IO);
    assert!(
        format!("{err:#}").starts_with("run 1 of the results database :memory: cannot be read (")
    );
    assert_eq!(s.runs(None).unwrap().len(), 1, "JSON, if not a result");
    s.conn
        .execute("UPDATE runs SET result_json = '{not json'", [])
        .unwrap();
    let err = s.runs(None).err().unwrap();
    assert_eq!(crate::error::exit_code(&err), crate::error::EXIT_IO);
    assert!(format!("{err:#}").contains("cannot be read (not JSON): run `iocurve db repair"));
    assert_eq!(
        audit::unreadable(&s.conn)
            .unwrap()
            .iter()
            .map(|u| u.id)
            .collect::<Vec<_>>(),
        [1]
    );
}

/// A negative stamp is read as a number, not an error of the driver, and
/// named with the version its tables are.
#[test]
fn a_negative_stamp_names_the_version_of_its_tables_and_the_repair() {
    let s = memory(schema::latest());
    s.conn.pragma_update(None, "user_version", -5).unwrap();
    assert_eq!(schema::stamp(&s.conn).unwrap(), -5);
    let err = format!(
        "{:#}",
        Store::from_connection(s.conn, schema::latest())
            .err()
            .unwrap()
    );
    assert!(
        err.contains("has schema version -5, which no iocurve writes, and the tables of version 3: run `iocurve db repair"),
        "{err}"
    );
}
