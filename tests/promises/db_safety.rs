//! The results database cannot lose or corrupt results: many processes
//! saving into a fresh file at once, a damaged file (refused, left as it
//! is, repaired), a full disk, and errors that name the file.

use crate::common;
#[path = "db_safety/findings.rs"]
mod findings;

use common::{fails, iocurve_wide as iocurve, ok, ok_json, sh, skipped, text};
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
    // A file where the database's directory would have to be.
    let file = dir.path().join("plain");
    std::fs::write(&file, b"x").unwrap();
    let out = ok_json_and_stderr(&mut sim_run(&file.join("results.db")));
    let shown = file.display();
    assert!(
        out.contains(&format!(
            "warning: the result was not saved: cannot create the directory {shown} for the results database: File exists (os error 17)"
        )),
        "{out}"
    );
    assert_eq!(out.matches("File exists").count(), 1, "{out}");
}

/// Paths that exist but can never be a database, each with the kind the
/// refusal must name.
fn not_files(dir: &Path) -> Vec<(PathBuf, String)> {
    let fifo = dir.join("fifo");
    sh("mkfifo", &[fifo.to_str().unwrap()]).unwrap();
    let socket = dir.join("socket");
    let _keep = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let to_null = dir.join("to-null");
    std::os::unix::fs::symlink("/dev/null", &to_null).unwrap();
    let to_dir = dir.join("to-dir");
    std::os::unix::fs::symlink(dir, &to_dir).unwrap();
    let to_dir_kind = format!("(a symlink to {}) is a directory", dir.display());
    [
        (dir.to_path_buf(), "is a directory"),
        (PathBuf::from("/dev/null"), "is a character device"),
        (PathBuf::from("/dev/zero"), "is a character device"),
        (fifo, "is a FIFO"),
        (socket, "is a socket"),
        (to_null, "(a symlink to /dev/null) is a character device"),
        (to_dir, &to_dir_kind),
    ]
    .into_iter()
    .map(|(p, k)| (p, k.to_string()))
    .collect()
}

#[test]
fn a_database_path_that_is_not_a_file_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let journal_before = Path::new("/dev/null-journal").exists();
    let cases = not_files(dir.path());
    // A block device too, where loop devices can be made (as root).
    let block = common::LoopDevice::new(1 << 20).ok();
    let block_case = block
        .as_ref()
        .map(|d| (d.dev.clone(), "is a block device".to_string()));
    for (path, kind) in cases.into_iter().chain(block_case) {
        let runs: [&[&str]; 5] = [
            &["list"],
            &["history"],
            &["db", "check"],
            &["import", "tests/fixtures/fio-3.33-seqread-randwrite.json"],
            &["run", "sim:size=64M", "--time", "50ms", "--ramp", "0"],
        ];
        for args in runs {
            let out = fails(iocurve().args(args).arg("--db").arg(&path), 2);
            let err = text(&out.stderr);
            let said = format!(
                "the results database {} {kind}, not a file: pass --db with the path of a regular file",
                path.display()
            );
            assert!(
                err.contains(&said),
                "{args:?} --db {}: {err}",
                path.display()
            );
            assert_eq!(err.trim().lines().count(), 1, "{err}");
            // Refused before measuring: nothing was printed.
            assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
        }
    }
    if !journal_before {
        assert!(!Path::new("/dev/null-journal").exists());
    }
    // Nothing was made beside the paths tried.
    assert_eq!(names(dir.path()), ["fifo", "socket", "to-dir", "to-null"]);
}

/// A run saved into `db` on the mounted file system.
fn save_one(db: &Path) {
    ok(&mut sim_run(db));
}

#[test]
fn a_database_on_a_read_only_file_system_is_still_read() {
    let mut dev = match common::LoopDevice::new(32 << 20) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let mnt = match dev.mkfs_and_mount() {
        Ok(m) => m,
        Err(why) => return skipped(&why),
    };
    let db = mnt.join("results.db");
    save_one(&db);
    save_one(&db);
    sh("mount", &["-o", "remount,ro", mnt.to_str().unwrap()]).unwrap();
    let before = (names(&mnt), std::fs::read(&db).unwrap());
    let listed = text(&ok(iocurve().arg("list").arg("--db").arg(&db)).stdout);
    assert!(listed.contains("2 run(s)"), "{listed}");
    let history = text(&ok(iocurve().arg("history").arg("--db").arg(&db)).stdout);
    let runs = history.lines().filter(|l| l.starts_with("  run ")).count();
    assert_eq!(runs, 2, "{history}");
    let checked = text(&ok(iocurve().args(["db", "check", "--db"]).arg(&db)).stdout);
    assert!(
        checked
            .contains("ok: the results database passed quick_check (2 run(s), schema version 3)"),
        "{checked}"
    );
    let out = tempfile::tempdir().unwrap();
    let page = out.path().join("report.html");
    ok(iocurve()
        .args(["report", "1", "2", "-o"])
        .arg(&page)
        .arg("--db")
        .arg(&db));
    assert!(std::fs::read_to_string(&page).unwrap().contains("<html"));
    let exported = ok_json(iocurve().args(["export", "2", "--json", "--db"]).arg(&db));
    assert_eq!(exported["tests"][0]["workload"]["rw"], "read");
    let compared = text(&ok(iocurve().args(["compare", "1", "2", "--db"]).arg(&db)).stdout);
    assert!(compared.contains("run 2"), "{compared}");
    // Saving names the real cause and the fix, and the result is printed.
    let said = ok_json_and_stderr(&mut sim_run(&db));
    assert!(
        said.contains(&format!("warning: the result was not saved: cannot save in the results database {}: it cannot be written here (Read-only file system (os error 30)): pass --db FILE on a writable file system", db.display())),
        "{said}"
    );
    assert!(!said.contains("No such file"), "{said}");
    let deleted = fails(iocurve().args(["delete", "1", "--db"]).arg(&db), 3);
    assert!(
        text(&deleted.stderr).contains("Read-only file system"),
        "{}",
        text(&deleted.stderr)
    );
    assert_eq!((names(&mnt), std::fs::read(&db).unwrap()), before);
}

/// Sets `user_version` of `db`, as a tool that lost it would.
fn stamp(db: &Path, version: u32) {
    rusqlite::Connection::open(db)
        .unwrap()
        .pragma_update(None, "user_version", version)
        .unwrap();
}

fn user_version(db: &Path) -> u32 {
    rusqlite::Connection::open(db)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn a_database_that_lost_its_version_stamp_is_recognised_from_its_tables() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    save_one(&db);
    stamp(&db, 0);
    let listed = text(&ok(iocurve().arg("list").arg("--db").arg(&db)).stdout);
    assert!(listed.contains("1 run(s)"), "{listed}");
    assert_eq!(user_version(&db), 3, "the stamp is written back");
    stamp(&db, 0);
    save_one(&db);
    assert_eq!((count_runs(&db), user_version(&db)), (2, 3));
    // db check recognises it too, and leaves the file alone.
    stamp(&db, 0);
    let checked = text(&ok(iocurve().args(["db", "check", "--db"]).arg(&db)).stdout);
    assert!(
        checked.contains("(2 run(s), schema version 3)"),
        "{checked}"
    );
    assert_eq!(user_version(&db), 0);
}

#[test]
fn a_database_of_another_make_is_refused_untouched_and_repair_moves_it_aside() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("other.db");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            "CREATE TABLE devices (x); CREATE TABLE runs (id INTEGER PRIMARY KEY, result_json TEXT);",
        )
        .unwrap();
    }
    let before = (names(dir.path()), std::fs::read(&db).unwrap());
    let fix = format!(
        "run `iocurve db repair --db {}` to move it aside",
        db.display()
    );
    for args in [
        &["list"][..],
        &["history"],
        &[
            "run",
            "sim:size=64M",
            "--time",
            "50ms",
            "--ramp",
            "0",
            "--json",
        ],
    ] {
        let out = iocurve().args(args).arg("--db").arg(&db).output().unwrap();
        let err = text(&out.stderr);
        assert!(
            err.contains("has no schema version, and tables iocurve does not make: devices, runs")
                && err.contains(&fix),
            "{args:?}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    assert_eq!((names(dir.path()), std::fs::read(&db).unwrap()), before);
    let checked = fails(iocurve().args(["db", "check", "--db"]).arg(&db), 3);
    assert!(
        text(&checked.stderr).contains(&fix),
        "{}",
        text(&checked.stderr)
    );
    let repaired = text(&ok(iocurve().args(["db", "repair", "--db"]).arg(&db)).stdout);
    assert!(repaired.contains("moved it aside to "), "{repaired}");
    save_one(&db);
    assert_eq!((count_runs(&db), user_version(&db)), (1, 3));
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
