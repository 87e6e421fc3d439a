use super::*;
use crate::testdata;

fn memory(version: u32) -> Store {
    Store::from_connection(Connection::open_in_memory().unwrap(), version).unwrap()
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
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.db");
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
    assert_eq!(schema::version(s.connection()).unwrap(), 2);
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
    assert!(
        err.to_string().contains("newer than this iocurve knows"),
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
