//! `--preserve` never writes a journal's originals over anything but the
//! object its test wrote, nor over data written after the test (issue 35):
//! a journal of a file deleted and made again (the new file taking its
//! inode) is set aside; a test killed mid-run whose target was rewritten
//! since is refused without --force; a journal its test could not mark
//! done (its file system turned read-only) is never applied again; and a
//! target renamed and replaced by a symbolic link during the test gets its
//! originals back under its new name while the link's target is untouched.
//! Each counts the bytes that differ from what must be there: zero.

use crate::common;

use common::{LoopDevice, MIB, iocurve_wide as iocurve, sh, skipped};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

const SIZE: usize = (16 * MIB) as usize;

fn random(seed: u64) -> Vec<u8> {
    let mut data = vec![0u8; SIZE];
    fastrand::Rng::with_seed(seed).fill(&mut data);
    data
}

/// Bytes that differ between two equally long buffers.
fn differing(a: &[u8], b: &[u8]) -> usize {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).filter(|(x, y)| x != y).count()
}

/// Overwrites `path` in place (same inode), `data` from offset 0.
fn rewrite(path: &Path, data: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.write_all_at(data, 0).unwrap();
    f.sync_all().unwrap();
}

fn journals(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default()
}

fn state_of(journal: &Path) -> String {
    let bytes = std::fs::read(journal).unwrap_or_default();
    String::from_utf8_lossy(bytes.get(8..16).unwrap_or_default())
        .trim_end_matches('\0')
        .to_string()
}

/// An ext4 file system on a loop device, mounted.
fn ext4(size: u64) -> Result<(LoopDevice, PathBuf), String> {
    let mut dev = LoopDevice::new(size)?;
    let mnt = dev.mkfs_and_mount()?;
    Ok((dev, mnt))
}

/// `iocurve run F --rw randwrite --span 16M --preserve` for `time`.
fn spawn_run(target: &Path, journal_dir: &Path, time: &str, env: &[(&str, &Path)]) -> Child {
    let mut cmd = common::iocurve_std();
    cmd.arg("run")
        .arg(target)
        .args([
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--span",
            "16M",
            "--time",
            time,
        ])
        .args(["--ramp", "0", "--no-save", "--preserve", "--journal-dir"])
        .arg(journal_dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.spawn().expect("spawn iocurve")
}

/// Waits until the run's journal is armed, lets it write a moment, kills it.
fn kill_mid_test(target: &Path, journal_dir: &Path) {
    let mut child = spawn_run(target, journal_dir, "30s", &[]);
    let started = Instant::now();
    while !journals(journal_dir).iter().any(|j| state_of(j) == "ARMED") {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before arming"
        );
        assert!(started.elapsed() < Duration::from_secs(60), "never armed");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(500));
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
}

fn recover(journal_dir: &Path, extra: &[&str]) -> Output {
    iocurve()
        .args(["recover", "--journal-dir"])
        .arg(journal_dir)
        .args(extra)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_journal_of_a_deleted_file_is_set_aside_not_written_into_its_successor() {
    let (_dev, mnt) = match ext4(64 * MIB) {
        Ok(x) => x,
        Err(why) => return skipped(&why),
    };
    let jdir = tempfile::tempdir().unwrap();
    let f = mnt.join("F");
    std::fs::write(&f, random(1)).unwrap();
    let ino = std::fs::metadata(&f).unwrap().ino();
    kill_mid_test(&f, jdir.path());
    std::fs::remove_file(&f).unwrap();
    let successor = random(2);
    std::fs::write(&f, &successor).unwrap();
    if std::fs::metadata(&f).unwrap().ino() != ino {
        return skipped("ext4 gave the new file another inode number: nothing to prove");
    }
    let out = recover(jdir.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("no longer exists"), "{}", text(&out));
    assert_eq!(differing(&std::fs::read(&f).unwrap(), &successor), 0);
    let left = journals(jdir.path());
    assert!(
        !left.is_empty() && left.iter().all(|j| j.to_string_lossy().ends_with(".stale")),
        "{left:?}"
    );
    let again = recover(jdir.path(), &[]);
    assert!(
        text(&again).contains("nothing to recover"),
        "{}",
        text(&again)
    );
}

#[test]
fn a_target_rewritten_after_a_kill_is_not_overwritten_without_force() {
    for half in [false, true] {
        let (_dev, mnt) = match ext4(64 * MIB) {
            Ok(x) => x,
            Err(why) => return skipped(&why),
        };
        let jdir = tempfile::tempdir().unwrap();
        let f = mnt.join("F");
        let original = random(3);
        std::fs::write(&f, &original).unwrap();
        kill_mid_test(&f, jdir.path());
        // Well after the test's last heartbeat, as a user would.
        std::thread::sleep(Duration::from_millis(2500));
        let newer = random(4);
        let upto = if half { SIZE / 2 } else { SIZE };
        rewrite(&f, &newer[..upto]);
        let expect = std::fs::read(&f).unwrap();
        let out = recover(jdir.path(), &[]);
        assert_eq!(out.status.code(), Some(2), "half {half}: {}", text(&out));
        assert!(text(&out).contains("--force"), "{}", text(&out));
        assert_eq!(
            differing(&std::fs::read(&f).unwrap(), &expect),
            0,
            "half {half}"
        );
        let kept = journals(jdir.path());
        assert_eq!(kept.len(), 1, "the journal is kept");
        let forced = iocurve()
            .arg("recover")
            .arg(&kept[0])
            .arg("--force")
            .output()
            .unwrap();
        assert_eq!(forced.status.code(), Some(0), "{}", text(&forced));
        assert_eq!(differing(&std::fs::read(&f).unwrap(), &original), 0);
    }
}

/// Runs a test whose restore waits at the hook until `during` has run.
fn run_with_gate(target: &Path, jdir: &Path, data_home: &Path, during: impl FnOnce()) -> Output {
    let gate_dir = tempfile::tempdir().unwrap();
    let gate = gate_dir.path().join("gate");
    let child = spawn_run(
        target,
        jdir,
        "1s",
        &[
            ("IOCURVE_TEST_BEFORE_RESTORE", &gate),
            ("XDG_DATA_HOME", data_home),
        ],
    );
    let waiting = gate_dir.path().join("gate.waiting");
    let started = Instant::now();
    while !waiting.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "never reached the restore"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    during();
    std::fs::write(&gate, b"").unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn a_journal_left_armed_on_a_read_only_fs_is_never_applied_again() {
    let (_dev, jmnt) = match ext4(64 * MIB) {
        Ok(x) => x,
        Err(why) => return skipped(&why),
    };
    let (work, data_home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let jdir = jmnt.join("journals");
    let f = work.path().join("F");
    let original = random(5);
    std::fs::write(&f, &original).unwrap();
    let mnt = jmnt.to_str().unwrap().to_string();
    let out = run_with_gate(&f, &jdir, data_home.path(), || {
        sh("mount", &["-o", "remount,ro", &mnt]).expect("remount read-only");
    });
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(
        differing(&std::fs::read(&f).unwrap(), &original),
        0,
        "{said}"
    );
    let left = journals(&jdir);
    assert_eq!(left.len(), 1, "{said}");
    assert_eq!(
        state_of(&left[0]),
        "ARMED",
        "a read-only journal keeps its state"
    );
    let newer = random(6);
    rewrite(&f, &newer);
    let out = iocurve()
        .args(["recover", "--journal-dir"])
        .arg(&jdir)
        .env("XDG_DATA_HOME", data_home.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("already restored"), "{}", text(&out));
    assert_eq!(differing(&std::fs::read(&f).unwrap(), &newer), 0);
    let _ = sh("mount", &["-o", "remount,rw", &mnt]);
}

#[test]
fn a_target_renamed_and_replaced_by_a_link_mid_test_leaves_the_link_alone() {
    let (_dev, mnt) = match ext4(96 * MIB) {
        Ok(x) => x,
        Err(why) => return skipped(&why),
    };
    let (jdir, data_home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (f, old, other) = (mnt.join("F"), mnt.join("F.old"), mnt.join("OTHER"));
    let (original, others) = (random(7), random(8));
    std::fs::write(&f, &original).unwrap();
    std::fs::write(&other, &others).unwrap();
    let out = run_with_gate(&f, jdir.path(), data_home.path(), || {
        std::fs::rename(&f, &old).unwrap();
        std::os::unix::fs::symlink(&other, &f).unwrap();
    });
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        differing(&std::fs::read(&other).unwrap(), &others),
        0,
        "OTHER untouched"
    );
    assert_eq!(
        differing(&std::fs::read(&old).unwrap(), &original),
        0,
        "F.old restored"
    );
    assert!(journals(jdir.path()).is_empty(), "journal removed");
}

#[test]
fn after_a_kill_in_the_restore_only_blocks_still_holding_the_tests_bytes_go_back() {
    let (_dev, mnt) = match ext4(64 * MIB) {
        Ok(x) => x,
        Err(why) => return skipped(&why),
    };
    let jdir = tempfile::tempdir().unwrap();
    let f = mnt.join("F");
    let original = random(9);
    std::fs::write(&f, &original).unwrap();
    // 100 ms per 1 MiB chunk copied or written back: the kill lands in the
    // restore, after the table of what the test wrote is stored.
    let mut child = common::iocurve_std()
        .arg("run")
        .arg(&f)
        .args([
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--span",
            "16M",
            "--time",
            "1s",
        ])
        .args(["--ramp", "0", "--no-save", "--preserve", "--journal-dir"])
        .arg(jdir.path())
        .env("IOCURVE_TEST_JOURNAL_DELAY_MS", "100")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !journals(jdir.path())
        .iter()
        .any(|j| state_of(j) == "WRITTEN")
    {
        assert!(
            child.try_wait().unwrap().is_none(),
            "ended before its table"
        );
        assert!(started.elapsed() < Duration::from_secs(60), "never WRITTEN");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let newer = random(10);
    rewrite(&f, &newer[..SIZE / 2]);
    let out = recover(jdir.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let words = text(&out).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("8 MiB written since the test left as found"),
        "{words}"
    );
    let now = std::fs::read(&f).unwrap();
    assert_eq!(
        differing(&now[..SIZE / 2], &newer[..SIZE / 2]),
        0,
        "newer half kept"
    );
    assert_eq!(
        differing(&now[SIZE / 2..], &original[SIZE / 2..]),
        0,
        "rest restored"
    );
    assert!(journals(jdir.path()).is_empty());
}
