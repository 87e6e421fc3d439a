//! The results database cannot lose or corrupt results: many processes
//! saving into a fresh file at once, a damaged file (refused, left as it
//! is, repaired), a full disk, and errors that name the file.

mod common;

use common::{fails, iocurve, ok, ok_json, sh, skipped, text};
use std::path::{Path, PathBuf};
use std::process::{Command as Std, Stdio};

/// A quick measuring run on a simulated card, saved in `db`.
fn sim_run(db: &Path) -> assert_cmd::Command {
    let mut cmd = iocurve();
    cmd.args([
        "run",
        "sim:size=64M",
        "--rw",
        "read",
        "--size",
        "1M",
        "--ramp",
        "0",
        "--json",
        "--db",
    ])
    .arg(db);
    cmd
}

/// The same, as a plain process (to start many at once).
fn sim_run_process(db: &Path) -> Std {
    let mut cmd = common::iocurve_std();
    cmd.args([
        "run",
        "sim:size=64M",
        "--rw",
        "read",
        "--size",
        "1M",
        "--ramp",
        "0",
        "--json",
        "--db",
    ])
    .arg(db);
    cmd
}

fn count_runs(db: &Path) -> i64 {
    rusqlite::Connection::open(db)
        .unwrap()
        .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
        .unwrap()
}

fn integrity(db: &Path) -> String {
    rusqlite::Connection::open(db)
        .unwrap()
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn sixteen_processes_saving_into_a_fresh_database_all_succeed() {
    const PROCESSES: usize = 16;
    const ROUNDS: usize = 3;
    let dir = tempfile::tempdir().unwrap();
    for round in 1..=ROUNDS {
        let db = dir.path().join(format!("fresh-{round}.db"));
        let children: Vec<_> = (0..PROCESSES)
            .map(|_| {
                sim_run_process(&db)
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let mut saved = 0;
        for child in children {
            let out = child.wait_with_output().unwrap();
            let err = text(&out.stderr);
            assert!(out.status.success(), "round {round}: {err}");
            assert!(!err.contains("warning"), "round {round}: {err}");
            if err.contains("saved as run") {
                saved += 1;
            }
        }
        let stored = count_runs(&db);
        eprintln!("round {round}: {PROCESSES} processes, {saved} said saved, {stored} runs stored");
        assert_eq!(saved, PROCESSES, "round {round}");
        assert_eq!(stored, PROCESSES as i64, "round {round}");
        assert_eq!(integrity(&db), "ok", "round {round}");
        let out = ok(iocurve().args(["db", "check", "--db"]).arg(&db));
        assert!(
            text(&out.stdout).starts_with("ok: "),
            "{}",
            text(&out.stdout)
        );
    }
}

/// Overwrites the page in the middle of the file with random bytes.
fn damage_middle_page(db: &Path) {
    use std::io::{Seek, SeekFrom, Write};
    let pages = std::fs::metadata(db).unwrap().len() / 4096;
    let mut garbage = vec![0u8; 4096];
    fastrand::Rng::with_seed(12).fill(&mut garbage);
    let mut f = std::fs::OpenOptions::new().write(true).open(db).unwrap();
    f.seek(SeekFrom::Start(pages / 2 * 4096)).unwrap();
    f.write_all(&garbage).unwrap();
}

/// The files of a directory, by name.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_damaged_database_is_never_written_and_repair_starts_a_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let shown = db.display().to_string();
    for _ in 0..6 {
        ok_json(&mut sim_run(&db));
    }
    assert_eq!(count_runs(&db), 6);
    damage_middle_page(&db);
    assert_ne!(
        rusqlite::Connection::open(&db)
            .unwrap()
            .query_row("PRAGMA quick_check", [], |r| r.get::<_, String>(0))
            .unwrap_or_default(),
        "ok",
        "the damage is not seen by SQLite"
    );
    let damaged = std::fs::read(&db).unwrap();

    // A run still prints its result and exit code; the save is refused.
    let out = sim_run(&db).output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["tests"][0]["repetitions"][0]["bytes"], 1 << 20);
    assert!(
        err.contains(&format!(
            "warning: the result was not saved: the results database {shown} is damaged (quick_check: "
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "run `iocurve db repair --db {shown}` to move it aside and start a new one (or pass --db FILE / --no-save)"
        )),
        "{err}"
    );
    assert!(!err.contains("saved as run"), "{err}");
    assert_eq!(
        std::fs::read(&db).unwrap(),
        damaged,
        "the refused save wrote"
    );

    // Reading commands fail with one line naming the file and the fix.
    let report = dir.path().join("report.html");
    let readers: [&[&str]; 5] = [
        &["list"],
        &["history"],
        &["compare", "1", "2"],
        &["export", "1"],
        &["report", "1", "-o", report.to_str().unwrap()],
    ];
    for args in readers {
        let out = iocurve().args(args).arg("--db").arg(&db).output().unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with(&format!("Error: the results database {shown} is damaged")),
            "{args:?}: {err}"
        );
        assert!(err.contains("`iocurve db repair --db "), "{args:?}: {err}");
    }
    let out = fails(iocurve().args(["db", "check", "--db"]).arg(&db), 3);
    assert!(text(&out.stderr).contains("is damaged (quick_check: "));
    assert_eq!(std::fs::read(&db).unwrap(), damaged, "a reader wrote");

    // Repair: moved aside untouched, what can be read saved anew.
    let out = ok(iocurve().args(["db", "repair", "--db"]).arg(&db));
    let said = text(&out.stdout);
    eprintln!("{said}");
    assert!(
        said.contains(&format!(
            "the results database {shown} was damaged (quick_check: "
        )),
        "{said}"
    );
    let aside: PathBuf = said
        .lines()
        .find_map(|l| l.strip_prefix("moved it aside to "))
        .map(|l| PathBuf::from(l.split(" (with").next().unwrap()))
        .unwrap_or_else(|| panic!("{said}"));
    assert!(
        aside
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("results.db.damaged-"),
        "{said}"
    );
    assert_eq!(
        std::fs::read(&aside).unwrap(),
        damaged,
        "the damaged copy changed"
    );
    let salvaged: i64 = said
        .lines()
        .find_map(|l| l.strip_prefix("salvaged "))
        .and_then(|l| l.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{said}"));
    assert!(salvaged <= 6, "{said}");
    assert_eq!(count_runs(&db), salvaged);

    // The next save lands, and the new file is sound.
    let out = sim_run(&db).output().unwrap();
    assert!(
        text(&out.stderr).contains("saved as run"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(count_runs(&db), salvaged + 1);
    ok(iocurve().args(["list", "--db"]).arg(&db));
    ok(iocurve().args(["db", "check", "--db"]).arg(&db));

    // Repair of a sound database changes nothing.
    let before = (names(dir.path()), std::fs::read(&db).unwrap());
    let out = ok(iocurve().args(["db", "repair", "--db"]).arg(&db));
    assert!(
        text(&out.stdout).contains("nothing to repair"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!((names(dir.path()), std::fs::read(&db).unwrap()), before);
}

#[test]
fn check_and_repair_of_a_missing_database_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["check", "repair"] {
        let out = fails(
            iocurve()
                .args(["db", sub, "--db"])
                .arg(dir.path().join("none.db")),
            2,
        );
        assert!(text(&out.stderr).contains("no results database at "));
    }
    assert!(names(dir.path()).is_empty());
}

#[test]
fn an_unopenable_database_is_named_with_the_os_reason_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = ok_json_and_stderr(&mut sim_run(dir.path()));
    let shown = dir.path().display();
    assert!(
        out.contains(&format!(
            "warning: the result was not saved: cannot open the results database {shown}: Is a directory (os error 21)"
        )),
        "{out}"
    );
    assert_eq!(out.matches("Is a directory").count(), 1, "{out}");
}

/// Runs a command that must succeed and print JSON; returns its stderr.
fn ok_json_and_stderr(cmd: &mut assert_cmd::Command) -> String {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    common::json(&out.stdout);
    text(&out.stderr)
}

/// A small tmpfs, unmounted on drop.
struct SmallFs {
    dir: tempfile::TempDir,
}

impl SmallFs {
    fn mount(size: &str) -> Result<SmallFs, String> {
        if !common::is_root() {
            return Err("not root: mounting a small tmpfs needs root".into());
        }
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        sh(
            "mount",
            &[
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size}"),
                "tmpfs",
                dir.path().to_str().unwrap(),
            ],
        )
        .map_err(|e| format!("cannot mount a tmpfs: {e}"))?;
        Ok(SmallFs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = sh("umount", &[self.dir.path().to_str().unwrap()]);
    }
}

/// Writes zeros to `path` until the file system refuses.
fn fill(path: &Path) {
    use std::io::Write;
    let mut f = std::fs::File::create(path).unwrap();
    let block = vec![0u8; 4096];
    while f.write_all(&block).is_ok() {}
    let _ = f.sync_all();
}

#[test]
fn a_full_disk_is_named_and_the_result_still_printed() {
    let fs = match SmallFs::mount("512k") {
        Ok(fs) => fs,
        Err(why) => return skipped(&why),
    };
    let db = fs.path().join("results.db");
    let shown = db.display().to_string();
    ok_json(&mut sim_run(&db));
    let filler = fs.path().join("filler");
    fill(&filler);

    let out = sim_run(&db).output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["tests"][0]["repetitions"][0]["bytes"], 1 << 20);
    assert!(
        err.contains("warning: the result was not saved: disk full: "),
        "{err}"
    );
    assert!(err.contains(&shown), "{err}");
    assert!(
        err.contains("free some space on its file system, or pass --db FILE on another one"),
        "{err}"
    );
    let out = iocurve().args(["list", "--db"]).arg(&db).output().unwrap();
    // Even reading needs a little room (SQLite's shared-memory index).
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.starts_with("Error: disk full: ") && err.contains(&shown),
        "{err}"
    );

    // Some room again, and saving works, into a sound file.
    std::fs::remove_file(&filler).unwrap();
    let out = sim_run(&db).output().unwrap();
    assert!(
        text(&out.stderr).contains("saved as run 2"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(integrity(&db), "ok");
}
