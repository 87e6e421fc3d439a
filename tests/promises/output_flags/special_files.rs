//! An output file is only ever a regular file: every option that names one
//! (`-o`, `--export-*`, `report -o`, `--svg`) refuses a FIFO at once
//! (writing would wait for a reader forever), a device, a socket, and a
//! symlink, leaving what it points at untouched.

use super::CARD;
use crate::common::{iocurve, ok, sh, skipped, text};
use std::path::Path;
use std::time::Duration;

/// A database with two runs, so export, compare and report have something.
fn two_saved(dir: &Path) -> std::path::PathBuf {
    let db = dir.join("r.db");
    for _ in 0..2 {
        ok(iocurve()
            .args(["run", CARD, "--time", "50ms", "--ramp", "0", "-q", "--db"])
            .arg(&db));
    }
    db
}

/// Every option that names an output file, as a command line writing to
/// `out`, reading `db`.
fn writers(out: &Path, db: &Path) -> Vec<Vec<String>> {
    let (o, d) = (out.display().to_string(), db.display().to_string());
    let with_db = |args: Vec<&str>| {
        let mut args: Vec<String> = args.into_iter().map(String::from).collect();
        args.extend(["--db".to_string(), d.clone()]);
        args
    };
    vec![
        with_db(vec!["export", "1", "-o", &o]),
        with_db(vec!["export", "1", "--export-json", &o]),
        with_db(vec!["export", "1", "--export-csv", &o]),
        with_db(vec!["export", "1", "--export-markdown", &o]),
        with_db(vec!["compare", "1", "2", "-o", &o]),
        with_db(vec!["report", "1", "-o", &o]),
        with_db(vec![
            "curve",
            CARD,
            "--time",
            "50ms",
            "--no-save",
            "--svg",
            &o,
        ]),
    ]
}

/// Runs `args`, killed after a minute so that a hang fails rather than
/// stalls the suite; exit code and stderr.
fn run_briefly(args: &[String]) -> (Option<i32>, String) {
    let out = iocurve()
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    (out.status.code(), text(&out.stderr))
}

#[test]
fn a_fifo_is_refused_at_once_by_every_output_option() {
    let dir = tempfile::tempdir().unwrap();
    let db = two_saved(dir.path());
    let fifo = dir.path().join("fifo");
    if let Err(why) = sh("mkfifo", &[fifo.to_str().unwrap()]) {
        return skipped(&format!("no FIFO: {why}"));
    }
    for args in writers(&fifo, &db) {
        let (code, err) = run_briefly(&args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains("it is a FIFO (named pipe)"), "{args:?}: {err}");
    }
    let (code, err) = run_briefly(&writers(Path::new("/dev/null"), &db)[0]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("a character device"), "{err}");
}

#[test]
fn a_symlink_is_not_followed_and_its_file_is_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let db = two_saved(dir.path());
    let precious = dir.path().join("precious");
    std::fs::write(&precious, b"not to be overwritten").unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&precious, &link).unwrap();
    for args in writers(&link, &db) {
        let (code, err) = run_briefly(&args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(
            err.contains("it is a symbolic link (to ") && err.contains("which is not followed"),
            "{args:?}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert_eq!(std::fs::read(&precious).unwrap(), b"not to be overwritten");
        assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    }
    // A regular file is still written, in place: its inode and mode kept.
    use std::os::unix::fs::MetadataExt;
    let plain = dir.path().join("plain.json");
    std::fs::write(&plain, b"old, and longer than nothing at all......").unwrap();
    let before = std::fs::metadata(&plain).unwrap().ino();
    let (code, err) = run_briefly(&writers(&plain, &db)[0]);
    assert_eq!(code, Some(0), "{err}");
    let written = std::fs::read_to_string(&plain).unwrap();
    assert!(
        written.contains("simulated card") && !written.contains("old, and"),
        "{written}"
    );
    assert_eq!(std::fs::metadata(&plain).unwrap().ino(), before);
}
