//! A journal finds its target from anywhere: `recover` run from another
//! working directory restores a file given by a relative path, and a device
//! that came back under another node name (a loop device detached and
//! attached again, as a card reader replugged becomes another /dev/sdX) is
//! found by its identity, while a different medium of the same size is not
//! written. And a journal iocurve could not have made (another user's, one
//! others may write, a link, a hard link, a FIFO, in a directory others
//! control) is refused and left alone, on a file and on a device.

use crate::common;

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
    // The impostor takes the old number by name: tests beside this one
    // attach and detach loop devices too, so "the first free one" need not
    // be it.
    let impostor = match LoopDevice::at(dev.path(), 16 * MIB) {
        Ok(d) => d,
        Err(why) => {
            return skipped(&format!(
                "another test took {} between its detach and the impostor: {why}",
                dev.path()
            ));
        }
    };
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

/// A way to make a journal look like one iocurve did not make: planted in
/// the journal directory of a real, armed journal, then undone.
#[derive(Debug, Clone, Copy)]
enum Hostile {
    ForeignOwner,
    WorldWritable,
    GroupWritable,
    SymlinkToARealJournal,
    HardLink,
    ReplacedByAFifo,
    DirWorldWritable,
    DirOwnedByNobody,
    StickyDirOwnedByNobody,
    AncestorWorldWritable,
}

const NOBODY: u32 = 65534;

impl Hostile {
    const ALL: [Hostile; 10] = [
        Hostile::ForeignOwner,
        Hostile::WorldWritable,
        Hostile::GroupWritable,
        Hostile::SymlinkToARealJournal,
        Hostile::HardLink,
        Hostile::ReplacedByAFifo,
        Hostile::DirWorldWritable,
        Hostile::DirOwnedByNobody,
        Hostile::StickyDirOwnedByNobody,
        Hostile::AncestorWorldWritable,
    ];

    /// What the refusal must say.
    fn reason(self) -> &'static str {
        match self {
            Hostile::ForeignOwner => "owned by uid 65534, not by you (uid 0) or root",
            Hostile::WorldWritable | Hostile::GroupWritable => "lets group or others write it",
            Hostile::SymlinkToARealJournal => "it is a symbolic link",
            Hostile::HardLink => "it has 2 names (hard links)",
            Hostile::ReplacedByAFifo => "it is a FIFO, not a regular file",
            Hostile::DirWorldWritable | Hostile::AncestorWorldWritable => {
                "may be written by group or others and is not sticky"
            }
            Hostile::DirOwnedByNobody | Hostile::StickyDirOwnedByNobody => {
                "is owned by uid 65534, not by you (uid 0) or root"
            }
        }
    }
}

/// The journal directory `top/journals`, its one armed journal, and a
/// directory beside it on the same file system.
struct Scene {
    top: PathBuf,
    dir: PathBuf,
    journal: PathBuf,
    aside: PathBuf,
}

fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn chown(path: &Path, uid: u32) {
    std::os::unix::fs::chown(path, Some(uid), None).unwrap();
}

impl Scene {
    fn moved_aside(&self) -> PathBuf {
        self.aside.join(self.journal.file_name().unwrap())
    }

    /// Plants `h`; the path of the hostile entry, which must survive.
    fn plant(&self, h: Hostile) -> PathBuf {
        match h {
            Hostile::ForeignOwner => chown(&self.journal, NOBODY),
            Hostile::WorldWritable => chmod(&self.journal, 0o666),
            Hostile::GroupWritable => chmod(&self.journal, 0o660),
            Hostile::SymlinkToARealJournal => {
                std::fs::rename(&self.journal, self.moved_aside()).unwrap();
                std::os::unix::fs::symlink(self.moved_aside(), &self.journal).unwrap();
            }
            Hostile::HardLink => {
                std::fs::hard_link(&self.journal, self.aside.join("other.iocj")).unwrap()
            }
            Hostile::ReplacedByAFifo => {
                std::fs::rename(&self.journal, self.moved_aside()).unwrap();
                sh("mkfifo", &["-m", "600", self.journal.to_str().unwrap()]).unwrap();
            }
            Hostile::DirWorldWritable => chmod(&self.dir, 0o777),
            Hostile::DirOwnedByNobody => chown(&self.dir, NOBODY),
            Hostile::StickyDirOwnedByNobody => {
                chown(&self.dir, NOBODY);
                chmod(&self.dir, 0o1777);
            }
            Hostile::AncestorWorldWritable => chmod(&self.top, 0o777),
        }
        self.journal.clone()
    }

    fn undo(&self, h: Hostile) {
        match h {
            Hostile::ForeignOwner => chown(&self.journal, 0),
            Hostile::WorldWritable | Hostile::GroupWritable => chmod(&self.journal, 0o600),
            Hostile::SymlinkToARealJournal | Hostile::ReplacedByAFifo => {
                std::fs::remove_file(&self.journal).unwrap();
                std::fs::rename(self.moved_aside(), &self.journal).unwrap();
            }
            Hostile::HardLink => std::fs::remove_file(self.aside.join("other.iocj")).unwrap(),
            Hostile::DirWorldWritable => chmod(&self.dir, 0o700),
            Hostile::DirOwnedByNobody | Hostile::StickyDirOwnedByNobody => {
                chown(&self.dir, 0);
                chmod(&self.dir, 0o700);
            }
            Hostile::AncestorWorldWritable => chmod(&self.top, 0o700),
        }
    }
}

/// What a hostile entry is, to see that it was left as it was: its kind,
/// owner and mode, and a regular file's bytes.
fn fingerprint(path: &Path) -> (u32, u32, Option<Vec<u8>>) {
    use std::os::unix::fs::MetadataExt;
    let st = std::fs::symlink_metadata(path).expect("the hostile entry is still there");
    let bytes = st.is_file().then(|| std::fs::read(path).unwrap());
    (st.mode(), st.uid(), bytes)
}

/// Kills a `--preserve` run on `target` while it writes, then plants every
/// [`Hostile`] variant in turn and runs `recover` on the directory and on
/// the journal's path: each is refused (exit 2) with its reason, the target
/// keeps the test's bytes and the hostile entry is left as it was. Undone,
/// the journal restores every byte, even with a hostile link left beside it.
fn hostile_journals_are_refused(cwd: &Path, target: &str, read: &dyn Fn() -> Vec<u8>) {
    let top = tempfile::tempdir().unwrap();
    let scene = Scene {
        top: top.path().to_path_buf(),
        dir: top.path().join("journals"),
        journal: PathBuf::new(),
        aside: top.path().join("aside"),
    };
    for d in [&scene.dir, &scene.aside] {
        std::fs::create_dir(d).unwrap();
        chmod(d, 0o700);
    }
    let original = read();
    kill_while_writing(cwd, target, &scene.dir);
    let written = read();
    assert_ne!(written, original, "the killed run wrote");
    let journal = journal_in(&scene.dir).expect("an armed journal");
    let scene = Scene { journal, ..scene };

    let mut tried = 0;
    let mut refused = 0;
    for h in Hostile::ALL {
        let hostile = scene.plant(h);
        let planted = fingerprint(&hostile);
        let by_dir = ["recover", "--journal-dir", scene.dir.to_str().unwrap()];
        let by_path = ["recover", hostile.to_str().unwrap()];
        for args in [&by_dir[..], &by_path[..]] {
            tried += 1;
            let out = iocurve()
                .current_dir(cwd)
                .args(args)
                .timeout(Duration::from_secs(60))
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{h:?} {args:?}: {err}");
            assert!(err.contains(h.reason()), "{h:?} {args:?}: {err}");
            assert!(err.contains("left as it is"), "{h:?}: {err}");
            assert!(read() == written, "{h:?} {args:?}: the target was written");
            assert_eq!(fingerprint(&hostile), planted, "{h:?} {args:?}");
            refused += 1;
        }
        scene.undo(h);
    }
    eprintln!(
        "hostile journals on {target}: {} variants, each by directory and by path: {tried} tried, {refused} refused, the target unchanged every time",
        Hostile::ALL.len()
    );
    assert_eq!(refused, 2 * Hostile::ALL.len());

    // Fixed, beside a dangling link under a journal's name: the journal is
    // restored, the link refused (exit 2) and left.
    let link = scene.dir.join("zz-planted.iocj");
    std::os::unix::fs::symlink("/nonexistent/x.iocj", &link).unwrap();
    let out = recover_from(cwd, &scene.dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("zz-planted.iocj: it is a symbolic link"),
        "{err}"
    );
    assert!(read() == original, "every byte restored");
    assert!(!scene.journal.exists(), "the restored journal was removed");
    assert!(link.symlink_metadata().is_ok(), "the link is left");
    std::fs::remove_file(&link).unwrap();
    let out = recover_from(cwd, &scene.dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("nothing to recover"));
}

#[test]
fn hostile_journals_for_a_file_are_refused_and_left_alone() {
    if !is_root() {
        return skipped("not root: the hostile variants chown to another user");
    }
    let work = match Tmpfs::mount("size=64m") {
        Ok(t) => t,
        Err(why) => return skipped(&why),
    };
    let mut data = vec![0u8; (8 * MIB) as usize];
    fastrand::Rng::with_seed(24).fill(&mut data);
    let file = work.path().join("disk.img");
    std::fs::write(&file, &data).unwrap();
    hostile_journals_are_refused(work.path(), "disk.img", &|| std::fs::read(&file).unwrap());
}

#[test]
fn hostile_journals_for_a_device_are_refused_and_left_alone() {
    let dev = match LoopDevice::new(16 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    hostile_journals_are_refused(Path::new("/"), dev.path(), &|| dev.contents());
}
