//! Every byte moves through the descriptor that was checked (issue 35): the
//! target's name is given to something else at each moment of a
//! `--preserve` write test, and nothing may be written where the user did
//! not point, the original object must get back every byte, and the process
//! must end.
//!
//! What is enumerated: every writing command of the safety matrix (found
//! from the clap definition there) × every way to change what the name
//! names (a rename and a symlink to another file, another file renamed onto
//! the name, a hard link or device node of another object, a FIFO,
//! `/dev/null`, a `/proc/sys` file) × every moment (after the checks before
//! the journal copy, once the journal is armed, before the restore, before
//! the read-back) × files and block devices. The whole product is some 900
//! runs; by default each command meets every change once, at a moment and
//! on a kind of target that rotate with the command so that every
//! (change, moment, kind) is met by some command (114 runs);
//! `IOCURVE_NAME_SWAPS=all` runs everything. The process is paused at the
//! moment by a handshake (`IOCURVE_TEST_PAUSE_AT`, see `sys::test_pause`),
//! the name is changed, and the process let go.

use crate::common;
use crate::safety_matrix::{Case, cases};

use common::{LoopDevice, MIB, Tmpfs, is_root, skipped};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// 40 MiB: `flash class --au 1M`, the largest writer here, needs that
/// much; every byte more is copied, journalled and compared again in each
/// of hundreds of runs.
const SIZE: u64 = 40 * MIB;
/// A run that is not over by then hangs.
const HANG: Duration = Duration::from_secs(120);
/// The `/proc/sys` file put at the name: harmless to read and compare.
const PROC_SYS: &str = "/proc/sys/kernel/domainname";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    RenameAndSymlink,
    OtherFileRenamedOnto,
    HardLinkOrNode,
    Fifo,
    DevNull,
    ProcSys,
}

const CHANGES: [Change; 6] = [
    Change::RenameAndSymlink,
    Change::OtherFileRenamedOnto,
    Change::HardLinkOrNode,
    Change::Fifo,
    Change::DevNull,
    Change::ProcSys,
];

const MOMENTS: [&str; 4] = ["opened", "armed", "before-restore", "before-read-back"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Device,
}

/// The objects of one kind of target: the target, reached through `name`,
/// and the other objects a changed name may point at, which must keep
/// every byte.
struct Bench {
    kind: Kind,
    dir: tempfile::TempDir,
    /// The target object: a file, or a loop device (its node).
    object: PathBuf,
    /// Another object of the same kind: a file, or a second loop device.
    other: PathBuf,
    journals: tempfile::TempDir,
    img: PathBuf,
    /// Whether the target and the other object are known to hold their
    /// patterns: true after a run whose checks read both back unchanged,
    /// false after anything that may have written them. Filling 2 × 40 MiB
    /// and syncing before every run was a quarter of this test's time.
    intact: std::cell::Cell<bool>,
    _held: Vec<LoopDevice>,
    _tmpfs: Option<Tmpfs>,
}

fn random(len: u64, seed: u64) -> Vec<u8> {
    let mut data = vec![0u8; len as usize];
    fastrand::Rng::with_seed(seed).fill(&mut data);
    data
}

/// The known bytes of the target (seed 1) and of the other object (seed
/// 2), made once: each run compares against them rather than reading
/// them back first.
fn pattern(seed: u64) -> &'static [u8] {
    static PATTERNS: std::sync::OnceLock<[Vec<u8>; 2]> = std::sync::OnceLock::new();
    let [target, other] = PATTERNS.get_or_init(|| [random(SIZE, 1), random(SIZE, 2)]);
    match seed {
        1 => target,
        2 => other,
        _ => unreachable!("only the target's and the other object's patterns are kept"),
    }
}

fn read(path: &Path) -> Vec<u8> {
    if path.starts_with("/dev") {
        let _ = common::sh("blockdev", &["--flushbufs", path.to_str().unwrap()]);
    }
    std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

fn fill(path: &Path, seed: u64) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .expect("open to fill");
    f.write_all(pattern(seed)).expect("fill");
    f.sync_all().expect("sync");
}

impl Bench {
    fn new(kind: Kind) -> Result<Bench, String> {
        if !is_root() {
            return Err("not root: loop devices and /dev need root (CI runs as root)".into());
        }
        let journals =
            tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).map_err(|e| e.to_string())?;
        let (tmpfs, held, dir) = match kind {
            Kind::File => {
                let t = Tmpfs::mount("size=320m")?;
                let dir = tempfile::tempdir_in(t.path()).map_err(|e| e.to_string())?;
                (Some(t), Vec::new(), dir)
            }
            Kind::Device => {
                let devs = vec![LoopDevice::new(SIZE)?, LoopDevice::new(SIZE)?];
                let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
                (None, devs, dir)
            }
        };
        let (object, other) = match kind {
            Kind::File => {
                let (o, x) = (dir.path().join("object"), dir.path().join("other"));
                std::fs::write(&o, pattern(1)).map_err(|e| e.to_string())?;
                std::fs::write(&x, pattern(2)).map_err(|e| e.to_string())?;
                (o, x)
            }
            Kind::Device => (held[0].dev.clone(), held[1].dev.clone()),
        };
        let img = journals.path().join("image");
        std::fs::write(&img, random(4 * MIB, 99)).map_err(|e| e.to_string())?;
        Ok(Bench {
            kind,
            dir,
            object,
            other,
            journals,
            img,
            intact: std::cell::Cell::new(false),
            _held: held,
            _tmpfs: tmpfs,
        })
    }

    /// The handshake file of `sys::test_pause`.
    fn pause(&self) -> PathBuf {
        self.journals.path().join("pause")
    }

    /// The name the command is given.
    fn name(&self) -> PathBuf {
        self.dir.path().join("target")
    }

    /// Points the name at the target object again, and gives the target
    /// and the other object their known bytes unless they are known to
    /// hold them.
    fn reset(&self) {
        let name = self.name();
        let _ = std::fs::remove_file(&name);
        let _ = std::fs::remove_file(self.dir.path().join("moved"));
        match self.kind {
            Kind::File => std::fs::hard_link(&self.object, &name).expect("link the name"),
            Kind::Device => {
                std::os::unix::fs::symlink(&self.object, &name).expect("symlink the name")
            }
        }
        if !self.intact.replace(false) {
            fill(&self.object, 1);
            fill(&self.other, 2);
        }
    }

    fn argv(&self, case: &Case) -> Vec<String> {
        let mut argv: Vec<String> = case.leaf.split(' ').map(String::from).collect();
        for a in case.args.split(' ') {
            argv.push(match a {
                "{dev}" => self.name().display().to_string(),
                "{img}" => self.img.display().to_string(),
                other => other.to_string(),
            });
        }
        argv.extend(["--no-save".into(), "--preserve".into()]);
        argv.extend([
            "--journal-dir".into(),
            self.journals.path().display().to_string(),
        ]);
        argv
    }

    /// Gives the name to something else; returns the files that now sit
    /// at the name and must keep their bytes (beside the other object).
    fn change(&self, change: Change) -> Option<(PathBuf, Vec<u8>)> {
        let name = self.name();
        std::fs::rename(&name, self.dir.path().join("moved")).expect("move the name away");
        match change {
            Change::RenameAndSymlink => symlink(&self.other, &name),
            Change::OtherFileRenamedOnto => {
                let staged = self.dir.path().join("staged");
                let bytes = random(SIZE, 3);
                std::fs::write(&staged, &bytes).expect("stage");
                std::fs::rename(&staged, &name).expect("rename onto the name");
                return Some((name, bytes));
            }
            Change::HardLinkOrNode => match self.kind {
                Kind::File => std::fs::hard_link(&self.other, &name).expect("hard link"),
                Kind::Device => node_of(&self.other, &name),
            },
            Change::Fifo => {
                rustix::fs::mknodat(
                    rustix::fs::CWD,
                    &name,
                    rustix::fs::FileType::Fifo,
                    rustix::fs::Mode::from_raw_mode(0o600),
                    0,
                )
                .expect("mkfifo");
            }
            Change::DevNull => symlink(Path::new("/dev/null"), &name),
            Change::ProcSys => symlink(Path::new(PROC_SYS), &name),
        }
        None
    }
}

fn symlink(to: &Path, at: &Path) {
    std::os::unix::fs::symlink(to, at).expect("symlink");
}

/// A second device node for the block device `node`, at `at`.
fn node_of(node: &Path, at: &Path) {
    use std::os::unix::fs::MetadataExt;
    let rdev = std::fs::metadata(node).expect("stat the node").rdev();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        at,
        rustix::fs::FileType::BlockDevice,
        rustix::fs::Mode::from_raw_mode(0o600),
        rdev,
    )
    .expect("mknod");
}

/// Points the name at the target again, with known bytes, and removes an
/// earlier run's journal (which would refuse every later run).
fn fresh(bench: &Bench) {
    bench.reset();
    for e in std::fs::read_dir(bench.journals.path()).unwrap().flatten() {
        if e.file_name() != "image" {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Starts `case` under `--preserve`, to pause at `moment`; stderr goes to
/// `said`.
fn start_paused(bench: &Bench, case: &Case, moment: &str, said: Stdio) -> std::process::Child {
    common::iocurve_std()
        .args(bench.argv(case))
        .env("IOCURVE_TEST_PAUSE_AT", moment)
        .env("IOCURVE_TEST_PAUSE_FILE", bench.pause())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(said)
        .spawn()
        .expect("iocurve starts")
}

/// One run: the command paused at `moment`, the name changed, the command
/// let go; then every promise checked. Returns a failure or `None`.
fn one(bench: &Bench, case: &Case, change: Change, moment: &str) -> Option<String> {
    fresh(bench);
    let what = format!(
        "{:?} {} {} / {change:?} at {moment}",
        bench.kind, case.leaf, case.args
    );
    let (before, other_before) = (pattern(1), pattern(2));
    let proc_before = std::fs::read(PROC_SYS).ok();
    let pause = bench.pause();
    let said = bench.journals.path().join("stderr");
    let file = std::fs::File::create(&said).expect("stderr file");
    let mut child = start_paused(bench, case, moment, file.into());
    let started = Instant::now();
    let mut at_name = None;
    let mut paused = false;
    while started.elapsed() < HANG {
        if pause.exists() {
            at_name = bench.change(change);
            std::fs::remove_file(&pause).expect("let the command go");
            paused = true;
            break;
        }
        if child.try_wait().ok().flatten().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break Some(s);
        }
        if started.elapsed() > HANG {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let err = std::fs::read_to_string(&said).unwrap_or_default();
    let _ = std::fs::remove_file(&said);
    let _ = std::fs::remove_file(&pause);
    let Some(status) = status else {
        return Some(format!("{what}: hung for {HANG:?}"));
    };
    if !paused {
        return Some(format!(
            "{what}: never reached the moment (exit {status}): {err}"
        ));
    }
    if read(&bench.other) != other_before {
        return Some(format!(
            "{what}: the other object was written (exit {status}): {err}"
        ));
    }
    if let Some((path, bytes)) = at_name
        && std::fs::read(&path).ok().as_deref() != Some(bytes.as_slice())
    {
        return Some(format!(
            "{what}: the file put at the name was written: {err}"
        ));
    }
    if std::fs::read(PROC_SYS).ok() != proc_before {
        return Some(format!("{what}: {PROC_SYS} changed"));
    }
    if read(&bench.object) != before {
        return Some(format!(
            "{what}: the target lost bytes (exit {status}): {err}"
        ));
    }
    // Both read back as their patterns: the next run need not fill them.
    bench.intact.set(true);
    let verdict_only = case.leaf.starts_with("flash ") && status.code() == Some(5);
    if !status.success() && !verdict_only {
        return Some(format!("{what}: exit {status}: {err}"));
    }
    let left = std::fs::read_dir(bench.journals.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| !matches!(e.file_name().to_str(), Some("image" | "stderr")))
        .count();
    (left > 0).then(|| format!("{what}: a journal was left behind: {err}"))
}

/// The writing commands this test drives: those of the safety matrix that
/// write under `--preserve` on one target.
fn writing_cases() -> Vec<Case> {
    cases()
        .into_iter()
        .filter(|c| c.writes && !c.refuses_preserve && !c.args.contains("{dev2}"))
        .collect()
}

/// The runs: (case index, change, moment index, kind). Every command
/// meets every change once, at a (moment, kind) that rotates with the
/// command, so that each change meets every (moment, kind) among the
/// commands; `all` runs every command at every one of them.
fn plan(all: bool) -> Vec<(usize, Change, usize, Kind)> {
    let cases = writing_cases();
    let kinds = [Kind::File, Kind::Device];
    let combos = MOMENTS.len() * kinds.len();
    let mut runs = Vec::new();
    for i in 0..cases.len() {
        for (j, &change) in CHANGES.iter().enumerate() {
            for c in 0..combos {
                if all || c == (i + j) % combos {
                    runs.push((i, change, c / kinds.len(), kinds[c % kinds.len()]));
                }
            }
        }
    }
    runs
}

#[test]
fn a_name_changed_at_any_moment_writes_nothing_elsewhere_and_loses_nothing() {
    let all = std::env::var("IOCURVE_NAME_SWAPS").is_ok_and(|v| v == "all");
    let benches = [Bench::new(Kind::File), Bench::new(Kind::Device)];
    let cases = writing_cases();
    let mut failures = Vec::new();
    let mut tries = 0;
    for (i, change, m, kind) in plan(all) {
        let bench = match &benches[usize::from(kind == Kind::Device)] {
            Ok(b) => b,
            Err(why) => {
                skipped(&format!("(in part) {kind:?}: {why}"));
                continue;
            }
        };
        tries += 1;
        failures.extend(one(bench, &cases[i], change, MOMENTS[m]));
    }
    eprintln!("name changes: {tries} runs, {} failed", failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_plan_meets_every_change_moment_and_kind() {
    let mut met = std::collections::BTreeSet::new();
    for (_, change, m, kind) in plan(false) {
        met.insert((format!("{change:?}"), m, format!("{kind:?}")));
    }
    assert_eq!(met.len(), CHANGES.len() * MOMENTS.len() * 2, "{met:?}");
}

/// What is done to the target after the test was killed, before
/// `recover` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Afterwards {
    /// The file deleted and a new one made at its name (files only).
    Recreated,
    /// Every byte written anew by the user.
    Rewritten,
    /// The first half written anew.
    HalfRewritten,
}

/// Kill a `--preserve` run at `moment` (plus `after` more), do
/// `afterwards`, run `recover`: no byte the user wrote since may be
/// overwritten, nothing may hang, and the originals come back where the
/// journal can prove the bytes are the test's. Returns a failure, or the
/// number of original bytes `recover` could not put back without
/// `--force` (counted, not a failure: it refused and said why).
fn killed(
    bench: &Bench,
    case: &Case,
    moment: &str,
    after: Duration,
    afterwards: Afterwards,
) -> Result<u64, String> {
    let what = format!(
        "{:?} {} {} / kill at {moment}+{after:?}, {afterwards:?}",
        bench.kind, case.leaf, case.args
    );
    fresh(bench);
    let original = read(&bench.object);
    let pause = bench.pause();
    let mut child = start_paused(bench, case, moment, Stdio::null());
    let started = Instant::now();
    while !pause.exists() && started.elapsed() < HANG {
        if child.try_wait().ok().flatten().is_some() {
            return Err(format!("{what}: ended before the moment"));
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let _ = std::fs::remove_file(&pause);
    std::thread::sleep(after);
    let _ = child.kill();
    let _ = child.wait();
    // A change within half a second of the kill cannot be told from the
    // test's own last writes (README: the heartbeat's margin); a person
    // who writes the target again does so later than that.
    std::thread::sleep(Duration::from_millis(600));
    let newer = random(SIZE, 7);
    let written_since = match afterwards {
        Afterwards::Recreated => {
            std::fs::remove_file(&bench.object).expect("delete");
            let _ = std::fs::remove_file(bench.name());
            std::fs::write(&bench.object, &newer).expect("recreate");
            std::fs::hard_link(&bench.object, bench.name()).expect("relink");
            0..SIZE as usize
        }
        Afterwards::Rewritten => {
            write_at(&bench.object, &newer, 0);
            0..SIZE as usize
        }
        Afterwards::HalfRewritten => {
            write_at(&bench.object, &newer[..SIZE as usize / 2], 0);
            0..SIZE as usize / 2
        }
    };
    let out = common::iocurve_std()
        .args(["recover", "--journal-dir"])
        .arg(bench.journals.path())
        .stdin(Stdio::null())
        .output()
        .expect("recover runs");
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    let now = read(&bench.object);
    if now[written_since.clone()] != newer[written_since.clone()] {
        return Err(format!(
            "{what}: recover (exit {:?}) overwrote bytes written since: {said}",
            out.status.code()
        ));
    }
    if !matches!(out.status.code(), Some(0 | 2)) {
        return Err(format!(
            "{what}: recover exit {:?}: {said}",
            out.status.code()
        ));
    }
    let rest = written_since.end..SIZE as usize;
    let not_back = now[rest.clone()]
        .chunks(4096)
        .zip(original[rest].chunks(4096))
        .filter(|(a, b)| a != b)
        .count() as u64
        * 4096;
    if not_back > 0 && out.status.code() == Some(0) {
        return Err(format!(
            "{what}: recover said it finished, yet {not_back} bytes are not the originals: {said}"
        ));
    }
    Ok(not_back)
}

/// Writes `data` at `offset` of `path`, through the page cache, synced.
fn write_at(path: &Path, data: &[u8], offset: u64) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .expect("open to rewrite");
    f.write_all_at(data, offset).expect("rewrite");
    f.sync_all().expect("sync");
}

/// The kill-then-newer-data-then-recover runs on files: two tests, one a
/// kind of target, so that the test harness runs them side by side (each
/// waits out the heartbeat's margin for most of its time).
#[test]
fn a_killed_test_then_newer_data_then_recover_overwrites_nothing_newer_on_files() {
    killed_then_newer(Kind::File);
}

#[test]
fn a_killed_test_then_newer_data_then_recover_overwrites_nothing_newer_on_devices() {
    killed_then_newer(Kind::Device);
}

/// Every writing command killed at a moment, the target then written
/// again in one of three ways, then `recover`: the cases whose kind of
/// target is `only`.
fn killed_then_newer(only: Kind) {
    let bench = Bench::new(only);
    let moments = [
        ("armed", Duration::from_millis(30)),
        ("before-read-back", Duration::ZERO),
    ];
    let (mut tries, mut failures, mut refused_bytes) = (0, Vec::new(), 0u64);
    for (i, case) in writing_cases().iter().enumerate() {
        for (j, afterwards) in [
            Afterwards::Recreated,
            Afterwards::Rewritten,
            Afterwards::HalfRewritten,
        ]
        .into_iter()
        .enumerate()
        {
            let kind = match afterwards {
                Afterwards::Recreated => Kind::File,
                _ if (i + j) % 2 == 0 => Kind::File,
                _ => Kind::Device,
            };
            if kind != only {
                continue;
            }
            let Ok(bench) = &bench else {
                skipped(&format!("(in part) {kind:?}: no bench"));
                continue;
            };
            let (moment, after) = moments[(i + j) % moments.len()];
            tries += 1;
            match killed(bench, case, moment, after, afterwards) {
                Ok(n) => refused_bytes += n,
                Err(f) => failures.push(f),
            }
        }
    }
    eprintln!(
        "kill, newer data, recover ({only:?}): {tries} runs, {} failed, {refused_bytes} original bytes left for recover --force",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
