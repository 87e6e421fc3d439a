//! A journal finds its target from anywhere: `recover` run from another
//! working directory restores a file given by a relative path, and a device
//! that came back under another node name (a loop device detached and
//! attached again, as a card reader replugged becomes another /dev/sdX) is
//! found by its identity, while a different medium of the same size is not
//! written.

mod common;

use common::{LoopDevice, MIB, Tmpfs, iocurve, is_root, sh, skipped};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

fn journal_in(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "iocj"))
}

fn state_of(journal: &Path) -> String {
    let bytes = std::fs::read(journal).unwrap_or_default();
    String::from_utf8_lossy(bytes.get(8..16).unwrap_or_default())
        .trim_end_matches('\0')
        .to_string()
}

/// A long `--preserve` write run in `cwd` on `target`, killed with SIGKILL
/// once its journal is armed and it has written for a moment.
fn kill_while_writing(cwd: &Path, target: &str, journal_dir: &Path) {
    let mut child: Child = common::iocurve_std()
        .current_dir(cwd)
        .args([
            "run",
            target,
            "--rw",
            "randwrite",
            "--bs",
            "4k",
            "--time",
            "30s",
        ])
        .args(["--ramp", "0", "--no-save", "--preserve", "--journal-dir"])
        .arg(journal_dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn iocurve");
    let started = Instant::now();
    loop {
        let armed = journal_in(journal_dir).is_some_and(|j| state_of(&j) == "ARMED");
        if armed {
            break;
        }
        if let Ok(Some(status)) = child.try_wait() {
            let mut err = String::new();
            use std::io::Read;
            let _ = child.stderr.take().unwrap().read_to_string(&mut err);
            panic!("the run ended before its journal was armed: {status} {err}");
        }
        assert!(started.elapsed() < Duration::from_secs(30), "never armed");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(300));
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
}

fn recover_from(cwd: &Path, journal_dir: &Path) -> std::process::Output {
    iocurve()
        .current_dir(cwd)
        .args(["recover", "--journal-dir"])
        .arg(journal_dir)
        .output()
        .expect("recover runs")
}

#[test]
fn recover_restores_a_relative_file_target_from_another_directory() {
    let work = match Tmpfs::mount("size=64m") {
        Ok(t) => t,
        Err(why) => return skipped(&why),
    };
    let journals = tempfile::tempdir().unwrap();
    let mut data = vec![0u8; (8 * MIB) as usize];
    fastrand::Rng::with_seed(5).fill(&mut data);
    std::fs::write(work.path().join("disk.img"), &data).unwrap();
    kill_while_writing(work.path(), "disk.img", journals.path());
    assert_ne!(
        std::fs::read(work.path().join("disk.img")).unwrap(),
        data,
        "the killed run wrote (else this test proves nothing)"
    );
    let elsewhere = tempfile::tempdir().unwrap();
    let out = recover_from(elsewhere.path(), journals.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(work.path().join("disk.img")).unwrap(), data);
    assert!(journal_in(journals.path()).is_none(), "journal removed");
}

#[test]
fn recover_finds_a_device_that_came_back_under_another_name() {
    if !is_root() {
        return skipped("not root: loop devices need root");
    }
    let dev = match LoopDevice::new(16 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let original = dev.contents();
    let journals = tempfile::tempdir().unwrap();
    kill_while_writing(Path::new("/"), dev.path(), journals.path());
    assert_ne!(dev.contents(), original, "the killed run wrote");
    let backing = dev.backing.display().to_string();
    // Replugged: detached, and attached again while its old number is
    // taken by another device of the same size (which must stay untouched).
    sh("losetup", &["-d", dev.path()]).unwrap();
    let impostor = LoopDevice::new(16 * MIB).unwrap();
    let impostor_bytes = impostor.contents();
    let again = sh("losetup", &["-f", "--show", &backing]).unwrap();
    struct Detach(String);
    impl Drop for Detach {
        fn drop(&mut self) {
            let _ = sh("losetup", &["-d", &self.0]);
        }
    }
    let _again_guard = Detach(again.clone());
    assert_ne!(again, dev.path(), "the device came back under another name");

    let out = recover_from(Path::new("/"), journals.path());
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains(&again),
        "recover names where it found the device: {said}"
    );
    let _ = sh("blockdev", &["--flushbufs", &again]);
    assert_eq!(
        std::fs::read(&again).unwrap(),
        original,
        "restored on {again}"
    );
    assert_eq!(
        impostor.contents(),
        impostor_bytes,
        "the other device was not written"
    );
    assert!(journal_in(journals.path()).is_none(), "journal removed");
}
