//! Write tests are refused on a target that something uses, in every way a
//! block device or a file can be used, even with `--destructive` or
//! `--preserve`: writing under a mounted file system, swap, a device-mapper
//! table, a loop device or another program corrupts data that nobody meant
//! to give to a benchmark.
//!
//! Each case builds the use on real loop devices holding data, runs a
//! destructive and a preserving write test, and checks that both exit with
//! code 2, that the one-line error names the use and its fix, and that not
//! one byte of the target changed. Everything set up (mounts, loop devices,
//! swap, mappings, helper processes) is undone by a guard, so that a failing
//! assertion leaves nothing behind.

use crate::common;

use common::{LoopDevice, MIB, iocurve, is_root, ok, sh, skipped};
use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The tests take turns: the kernel may allow only a few loop devices.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Undoes what a test set up, last first, when dropped: helper processes
/// are killed, then each recorded command runs (an unmount that fails is
/// retried lazily), then the temporary directories go.
#[derive(Default)]
struct Cleanup {
    children: Vec<Child>,
    undo: Vec<Vec<String>>,
    dirs: Vec<tempfile::TempDir>,
}

impl Cleanup {
    fn later(&mut self, command: &[&str]) {
        self.undo
            .push(command.iter().map(|s| s.to_string()).collect());
    }

    /// Forgets a recorded command that something else has already done.
    fn done(&mut self, command: &[&str]) {
        self.undo
            .retain(|c| c.iter().map(String::as_str).ne(command.iter().copied()));
    }

    /// A fresh directory that outlives everything mounted or attached.
    fn dir_in(&mut self, parent: &Path) -> Result<PathBuf, String> {
        let dir = tempfile::tempdir_in(parent).map_err(|e| e.to_string())?;
        let path = dir.path().to_path_buf();
        self.dirs.push(dir);
        Ok(path)
    }

    /// Mounts `node` on a fresh directory.
    fn mount(&mut self, node: &str) -> Result<PathBuf, String> {
        let mnt = self.dir_in(&std::env::temp_dir())?;
        let mnt_str = mnt.to_str().ok_or("temp path is not UTF-8")?.to_owned();
        sh("mount", &[node, &mnt_str])?;
        self.later(&["umount", &mnt_str]);
        Ok(mnt)
    }

    /// Attaches a loop device over `file` (a file or a device node).
    fn attach(&mut self, file: &Path) -> Result<String, String> {
        let file = file.to_str().ok_or("temp path is not UTF-8")?;
        let dev = sh("losetup", &["-f", "--show", file])?;
        self.later(&["losetup", "-d", &dev]);
        Ok(dev)
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for mut child in self.children.drain(..) {
            let _ = child.kill();
            let _ = child.wait();
        }
        while let Some(command) = self.undo.pop() {
            let args: Vec<&str> = command[1..].iter().map(String::as_str).collect();
            if let Err(e) = sh(&command[0], &args) {
                eprintln!("cleanup: {e}");
                if command[0] == "umount" {
                    let _ = sh("umount", &["-l", args[0]]);
                }
            }
        }
    }
}

fn hash_of(path: &Path) -> u64 {
    let bytes = std::fs::read(path).expect("read the target's bytes");
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

/// The target's bytes, after everything written so far reached them.
fn settled_hash(path: &Path) -> u64 {
    let _ = sh("sync", &[]);
    hash_of(path)
}

fn mkfs(node: &str) -> Result<(), String> {
    sh(
        "mkfs.ext4",
        &[
            "-q",
            "-F",
            "-E",
            "nodiscard,lazy_itable_init=0,lazy_journal_init=0",
            node,
        ],
    )
    .map(drop)
    .map_err(|e| format!("cannot make a file system: {e}"))
}

fn have(tool: &str) -> bool {
    ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
        .iter()
        .any(|dir| Path::new(dir).join(tool).exists())
}

/// Where image files of the file cases live: preferably a file system other
/// than the temporary directory's, so that a journal directory can be put on
/// another file system than the target.
fn image_parent() -> PathBuf {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        shm.into()
    } else {
        std::env::temp_dir()
    }
}

/// An image file of `size` random bytes in a fresh directory.
fn image(cleanup: &mut Cleanup, size: u64) -> Result<PathBuf, String> {
    let dir = cleanup.dir_in(&image_parent())?;
    let path = dir.join("disk.img");
    let mut data = vec![0u8; size as usize];
    fastrand::Rng::with_seed(size ^ 0x5eed).fill(&mut data);
    std::fs::write(&path, &data).map_err(|e| e.to_string())?;
    Ok(path)
}

/// A journal directory on another file system than `target` (a device's
/// own number for a device node), or why there is none.
fn journal_dir_apart(cleanup: &mut Cleanup, target: &str) -> Result<PathBuf, String> {
    let meta = std::fs::metadata(target).map_err(|e| e.to_string())?;
    let target_dev = if meta.file_type().is_block_device() {
        meta.rdev()
    } else {
        meta.dev()
    };
    for parent in [std::env::temp_dir(), PathBuf::from("/var/tmp")] {
        match std::fs::metadata(&parent) {
            Ok(m) if m.dev() != target_dev => return cleanup.dir_in(&parent),
            _ => {}
        }
    }
    Err(format!(
        "no temporary directory on another file system than {target}"
    ))
}

/// Runs a destructive and a preserving write test on `target`; both must be
/// refused with exit code 2 and one line that names the target and contains
/// each of `needles`. Returns the destructive run's message.
fn both_refused(cleanup: &mut Cleanup, target: &str, needles: &[&str]) -> String {
    let journal = journal_dir_apart(cleanup, target);
    let mut runs: Vec<Vec<String>> = vec![vec!["--destructive".into()]];
    match &journal {
        Ok(dir) => runs.push(vec![
            "--preserve".into(),
            "--journal-dir".into(),
            dir.display().to_string(),
        ]),
        Err(why) => skipped(&format!("(in part) the --preserve run: {why}")),
    }
    let mut first = None;
    for flags in runs {
        let out = iocurve()
            .args(["run", target, "--rw", "write", "--size", "1M"])
            .args(["--ramp", "0", "--no-save"])
            .args(&flags)
            .timeout(Duration::from_secs(120))
            .output()
            .expect("iocurve runs");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {err}");
        assert!(
            err.contains(&format!("refusing to write to {target}: ")),
            "{flags:?}: {err}"
        );
        for needle in needles {
            assert!(err.contains(needle), "{flags:?}: no {needle:?} in: {err}");
        }
        assert!(!err.contains("journal directory"), "{flags:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        first.get_or_insert(err);
    }
    first.unwrap_or_default()
}

// ---- (a) ------------------------------------------------------------------

#[test]
fn a_device_mounted_directly_is_refused() {
    let _serial = serial();
    let dev = match LoopDevice::new(32 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let mut cleanup = Cleanup::default();
    if let Err(why) = mkfs(dev.path()) {
        return skipped(&why);
    }
    let mnt = match cleanup.mount(dev.path()) {
        Ok(m) => m,
        Err(why) => return skipped(&why),
    };
    std::fs::write(mnt.join("keep.txt"), b"precious").unwrap();
    let before = settled_hash(&dev.backing);
    let mnt_str = mnt.display().to_string();
    both_refused(
        &mut cleanup,
        dev.path(),
        &[
            &format!("{} is mounted on {mnt_str} (ext4)", dev.path()),
            &format!("unmount {mnt_str}"),
        ],
    );
    assert_eq!(settled_hash(&dev.backing), before, "the device was written");
    assert_eq!(std::fs::read(mnt.join("keep.txt")).unwrap(), b"precious");
}

// ---- (b) ------------------------------------------------------------------

/// A master boot record with two Linux partitions of a 64 MiB disk: 20 MiB
/// at 1 MiB and 42 MiB after it.
fn mbr() -> Vec<u8> {
    let mut b = vec![0u8; 512];
    for (i, (start, sectors)) in [(2048u32, 40960u32), (43008, 86016)]
        .into_iter()
        .enumerate()
    {
        let e = 446 + 16 * i;
        b[e + 4] = 0x83;
        b[e + 8..e + 12].copy_from_slice(&start.to_le_bytes());
        b[e + 12..e + 16].copy_from_slice(&sectors.to_le_bytes());
    }
    b[510] = 0x55;
    b[511] = 0xAA;
    b
}

/// Writes a partition table to `node` (with sfdisk when installed, else the
/// same table byte by byte) and makes the kernel know the partitions: by its
/// own scan, or by `partx -a` on kernels without a partition-table parser.
/// Returns the first partition's node.
fn partition(node: &str, name: &str) -> Result<String, String> {
    if have("sfdisk") {
        let mut child = Command::new("sfdisk")
            .args(["--quiet", "--no-reread", node])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("sfdisk: {e}"))?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(b"label: dos\n2048,40960,L\n43008,,L\n")
                .map_err(|e| format!("sfdisk: {e}"))?;
        }
        let out = child.wait_with_output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!(
                "sfdisk: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
    } else {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(node)
            .map_err(|e| e.to_string())?;
        f.write_all(&mbr()).map_err(|e| e.to_string())?;
        f.sync_all().map_err(|e| e.to_string())?;
    }
    let p1 = format!("/dev/{name}p1");
    let _ = sh("blockdev", &["--rereadpt", node]);
    if !Path::new(&format!("/sys/class/block/{name}p1")).exists() {
        if !have("partx") {
            return Err("the kernel did not scan the partition table and partx is missing".into());
        }
        sh("partx", &["-a", node])?;
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while !Path::new(&p1).exists() {
        if Instant::now() > deadline {
            return Err(format!("{p1} did not appear"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(p1)
}

#[test]
fn a_device_mounted_through_a_partition_is_refused() {
    let _serial = serial();
    let dev = match LoopDevice::with_options(64 * MIB, &["-P"]) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let mut cleanup = Cleanup::default();
    let p1 = match partition(dev.path(), &dev.name()) {
        Ok(p) => p,
        Err(why) => return skipped(&format!("cannot partition a loop device: {why}")),
    };
    if let Err(why) = mkfs(&p1) {
        return skipped(&why);
    }
    let mnt = match cleanup.mount(&p1) {
        Ok(m) => m,
        Err(why) => return skipped(&why),
    };
    std::fs::write(mnt.join("keep.txt"), b"precious").unwrap();
    let before = settled_hash(&dev.backing);
    let mounted = format!("{p1} is mounted on {} (ext4)", mnt.display());
    // The whole disk, because writing to it writes the partition...
    both_refused(&mut cleanup, dev.path(), &[&mounted, "unmount"]);
    // ...and the partition itself.
    both_refused(&mut cleanup, &p1, &[&mounted, "unmount"]);
    assert_eq!(settled_hash(&dev.backing), before, "the disk was written");
    assert_eq!(std::fs::read(mnt.join("keep.txt")).unwrap(), b"precious");
}

// ---- (c) ------------------------------------------------------------------

#[test]
fn a_device_in_active_swap_is_refused() {
    let _serial = serial();
    let dev = match LoopDevice::new(32 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    if !(have("mkswap") && have("swapon") && have("swapoff")) {
        return skipped("mkswap, swapon or swapoff is missing");
    }
    let mut cleanup = Cleanup::default();
    if let Err(why) = sh("mkswap", &[dev.path()]) {
        return skipped(&format!("mkswap: {why}"));
    }
    // No priority given: below any swap area given one, so the machine
    // swaps here last.
    if let Err(why) = sh("swapon", &[dev.path()]) {
        return skipped(&format!("swapon: {why}"));
    }
    cleanup.later(&["swapoff", dev.path()]);
    let before = settled_hash(&dev.backing);
    both_refused(
        &mut cleanup,
        dev.path(),
        &[
            &format!("{} is active swap", dev.path()),
            &format!("`swapoff {}`", dev.path()),
        ],
    );
    // Pages the kernel swapped out meanwhile change the bytes too (CI's
    // machine did, with two builds beside the tests): then the bytes tell
    // nothing about iocurve, and the refusals above are what is checked.
    let after = settled_hash(&dev.backing);
    match swap_used_kib(dev.path()) {
        Some(0) | None => assert_eq!(after, before, "the device was written"),
        Some(used) => skipped(&format!(
            "(in part) the kernel swapped {used} KiB out to the swap device during the test: its bytes were not compared, only the refusals"
        )),
    }
}

/// KiB in use on the swap area `path`, from /proc/swaps.
fn swap_used_kib(path: &str) -> Option<u64> {
    let swaps = std::fs::read_to_string("/proc/swaps").ok()?;
    swaps
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.first() == Some(&path))
        .and_then(|f| f.get(3)?.parse().ok())
}

// ---- (d) ------------------------------------------------------------------

#[test]
fn a_device_held_by_device_mapper_is_refused() {
    let _serial = serial();
    let dev = match LoopDevice::new(16 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    if !have("dmsetup") {
        return skipped("dmsetup is missing");
    }
    let mut cleanup = Cleanup::default();
    let name = format!("iocurve-in-use-{}", std::process::id());
    let table = format!("0 {} linear {} 0", 16 * MIB / 512, dev.path());
    if let Err(why) = sh("dmsetup", &["create", &name, "--table", &table]) {
        return skipped(&format!("no device-mapper here: {why}"));
    }
    cleanup.later(&["dmsetup", "remove", &name]);
    let before = settled_hash(&dev.backing);
    both_refused(
        &mut cleanup,
        dev.path(),
        &[
            &format!("{} has holders: dm-", dev.path()),
            &format!("`dmsetup remove {name}`"),
        ],
    );
    assert_eq!(settled_hash(&dev.backing), before, "the device was written");
}

// ---- (e) ------------------------------------------------------------------

#[test]
fn a_device_with_a_loop_device_over_its_node_is_refused() {
    let _serial = serial();
    let dev = match LoopDevice::new(16 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let mut cleanup = Cleanup::default();
    let upper = match cleanup.attach(&dev.dev) {
        Ok(u) => u,
        Err(why) => return skipped(&why),
    };
    let upper_name = upper.trim_start_matches("/dev/");
    let before = settled_hash(&dev.backing);
    both_refused(
        &mut cleanup,
        dev.path(),
        &[
            &format!(
                "{} has loop devices set up over it: {upper_name}",
                dev.path()
            ),
            &format!("`losetup -d {upper}`"),
        ],
    );
    assert_eq!(settled_hash(&dev.backing), before, "the device was written");
}

// ---- (f) ------------------------------------------------------------------

#[test]
fn a_file_backing_an_attached_loop_device_is_refused() {
    let _serial = serial();
    if !is_root() {
        return skipped("not root: loop devices need root (CI runs as root)");
    }
    let mut cleanup = Cleanup::default();
    let img = match image(&mut cleanup, 16 * MIB) {
        Ok(i) => i,
        Err(why) => return skipped(&why),
    };
    let lo = match cleanup.attach(&img) {
        Ok(l) => l,
        Err(why) => return skipped(&why),
    };
    let before = settled_hash(&img);
    let img_str = img.display().to_string();
    let sentence = format!(
        "it backs loop device {lo}, which is attached though nothing uses it now: detach it with `losetup -d {lo}`"
    );
    both_refused(&mut cleanup, &img_str, &[&sentence]);
    // Another name of the same file is the same file.
    let link = img.with_file_name("another name.img");
    std::fs::hard_link(&img, &link).unwrap();
    both_refused(&mut cleanup, link.to_str().unwrap(), &[&sentence]);
    assert_eq!(settled_hash(&img), before, "the file was written");

    // Reading it is harmless and stays allowed.
    ok(iocurve()
        .args([
            "run", &img_str, "--rw", "read", "--size", "1M", "--ramp", "0",
        ])
        .args(["--buffered", "--no-save"])
        .timeout(Duration::from_secs(120)));
}

#[test]
fn a_file_backing_a_mounted_loop_device_is_refused() {
    let _serial = serial();
    if !is_root() {
        return skipped("not root: loop devices need root (CI runs as root)");
    }
    let mut cleanup = Cleanup::default();
    let img = match image(&mut cleanup, 32 * MIB) {
        Ok(i) => i,
        Err(why) => return skipped(&why),
    };
    let lo = match cleanup.attach(&img) {
        Ok(l) => l,
        Err(why) => return skipped(&why),
    };
    if let Err(why) = mkfs(&lo) {
        return skipped(&why);
    }
    let mnt = match cleanup.mount(&lo) {
        Ok(m) => m,
        Err(why) => return skipped(&why),
    };
    std::fs::write(mnt.join("keep.txt"), b"precious").unwrap();
    let before = settled_hash(&img);
    let mnt = mnt.display().to_string();
    both_refused(
        &mut cleanup,
        img.to_str().unwrap(),
        &[&format!(
            "it backs loop device {lo}, and {lo} is mounted on {mnt} (ext4): unmount {mnt} and detach it with `losetup -d {lo}`"
        )],
    );
    assert_eq!(settled_hash(&img), before, "the file was written");
}

#[test]
fn a_file_with_two_loop_devices_over_it_is_refused() {
    let _serial = serial();
    if !is_root() {
        return skipped("not root: loop devices need root (CI runs as root)");
    }
    let mut cleanup = Cleanup::default();
    let img = match image(&mut cleanup, 16 * MIB) {
        Ok(i) => i,
        Err(why) => return skipped(&why),
    };
    let (first, second) = match (cleanup.attach(&img), cleanup.attach(&img)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(why), _) | (_, Err(why)) => return skipped(&why),
    };
    let before = settled_hash(&img);
    let err = both_refused(
        &mut cleanup,
        img.to_str().unwrap(),
        &[
            &format!("it backs loop device {first}"),
            &format!("it backs loop device {second}"),
            &format!("`losetup -d {first}`"),
            &format!("`losetup -d {second}`"),
        ],
    );
    assert_eq!(err.matches("it backs loop device").count(), 2, "{err}");
    assert_eq!(settled_hash(&img), before, "the file was written");
}

// ---- (g) ------------------------------------------------------------------

#[test]
fn a_device_whose_file_system_holds_a_loop_backing_file_is_refused() {
    let _serial = serial();
    let dev = match LoopDevice::new(32 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let mut cleanup = Cleanup::default();
    if let Err(why) = mkfs(dev.path()) {
        return skipped(&why);
    }
    let mnt = match cleanup.mount(dev.path()) {
        Ok(m) => m,
        Err(why) => return skipped(&why),
    };
    let img = mnt.join("inner.img");
    let mut data = vec![0u8; (4 * MIB) as usize];
    fastrand::Rng::with_seed(7).fill(&mut data);
    std::fs::write(&img, &data).unwrap();
    let inner = match cleanup.attach(&img) {
        Ok(l) => l,
        Err(why) => return skipped(&why),
    };
    let before = settled_hash(&dev.backing);
    let mnt_str = mnt.display().to_string();
    both_refused(
        &mut cleanup,
        dev.path(),
        &[&format!("{} is mounted on {mnt_str} (ext4)", dev.path())],
    );
    // The file on it backs a loop device: refused as such.
    both_refused(
        &mut cleanup,
        img.to_str().unwrap(),
        &[&format!("it backs loop device {inner}")],
    );
    // Unmounted lazily, the file system lives on for the loop device over
    // its file: no mount to see, yet the kernel still holds the device.
    if let Err(why) = sh("umount", &["-l", &mnt_str]) {
        return skipped(&format!("lazy unmount: {why}"));
    }
    cleanup.done(&["umount", &mnt_str]);
    both_refused(
        &mut cleanup,
        dev.path(),
        &[
            &format!("{} is in use", dev.path()),
            "refused to open it exclusively",
        ],
    );
    assert_eq!(settled_hash(&dev.backing), before, "the device was written");
}

// ---- (h) ------------------------------------------------------------------

/// Starts a Python process that opens `node` with `O_EXCL` and waits;
/// returns it with its pid once the node is held.
fn hold_in_python(node: &str) -> Result<(Child, u32), String> {
    python_holding(node.as_ref(), "os.O_RDONLY | os.O_EXCL")
}

/// Starts a Python process that opens `path` with `flags` (Python's `os`
/// names) and waits; returns it with its pid once the file is open.
fn python_holding(path: &Path, flags: &str) -> Result<(Child, u32), String> {
    let script = format!(
        "import os, sys, time\n\
         fd = os.open(sys.argv[1], {flags})\n\
         print(os.getpid(), flush=True)\n\
         time.sleep(300)\n"
    );
    let mut child = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("python3: {e}"))?;
    let mut line = String::new();
    if let Some(out) = child.stdout.take() {
        let _ = BufReader::new(out).read_line(&mut line);
    }
    match line.trim().parse() {
        Ok(pid) => Ok((child, pid)),
        Err(_) => {
            let _ = child.kill();
            let out = child.wait_with_output().map_err(|e| e.to_string())?;
            Err(format!(
                "python3 could not open {}: {}",
                path.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }
}

#[test]
fn a_device_held_open_exclusively_by_another_process_is_refused() {
    let _serial = serial();
    let dev = match LoopDevice::new(16 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let mut cleanup = Cleanup::default();
    let before = settled_hash(&dev.backing);
    let in_use = format!(
        "{} is in use: the kernel refused to open it exclusively, and it is open in pid",
        dev.path()
    );

    match hold_in_python(dev.path()) {
        Ok((child, pid)) => {
            cleanup.children.push(child);
            both_refused(
                &mut cleanup,
                dev.path(),
                &[&in_use, &format!("pid {pid} (python"), "close that program"],
            );
            let mut child = cleanup.children.pop().unwrap();
            let _ = child.kill();
            let _ = child.wait();
        }
        Err(why) => skipped(&format!("(in part) the Python holder: {why}")),
    }

    // Held by this test process: iocurve names it just the same.
    {
        use std::os::unix::fs::OpenOptionsExt;
        let held = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_EXCL)
            .open(&dev.dev)
            .expect("hold the device exclusively");
        both_refused(
            &mut cleanup,
            dev.path(),
            &[&in_use, &format!("pid {} (", std::process::id())],
        );
        drop(held);
    }
    assert_eq!(settled_hash(&dev.backing), before, "the device was written");
}

// ---- (i) regular files used otherwise --------------------------------------

#[test]
fn an_active_swap_file_is_refused_by_any_of_its_names() {
    let _serial = serial();
    if !(have("mkswap") && have("swapon") && have("swapoff")) {
        return skipped("mkswap, swapon or swapoff is missing");
    }
    // A real ext4 file system: swap files need one that maps their blocks.
    let mut dev = match LoopDevice::new(64 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let mnt = match dev.mkfs_and_mount() {
        Ok(m) => m,
        Err(why) => return skipped(&why),
    };
    // Declared after the device: dropped, and so swapped off, before its
    // file system is unmounted.
    let mut cleanup = Cleanup::default();
    let swap = mnt.join("swapfile");
    std::fs::write(&swap, vec![0u8; (16 * MIB) as usize]).unwrap();
    std::fs::set_permissions(&swap, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let swap_str = swap.display().to_string();
    if let Err(why) = sh("mkswap", &[&swap_str]) {
        return skipped(&format!("mkswap: {why}"));
    }
    if let Err(why) = sh("swapon", &[&swap_str]) {
        return skipped(&format!("swapon on a file: {why}"));
    }
    cleanup.later(&["swapoff", &swap_str]);
    let before = settled_hash(&swap);
    let needles = [
        format!("it is an active swap file (listed in /proc/swaps as {swap_str})"),
        format!("turn it off with `swapoff {swap_str}`"),
    ];
    let needles: Vec<&str> = needles.iter().map(String::as_str).collect();
    both_refused(&mut cleanup, &swap_str, &needles);
    // /proc/swaps lists one name; another name of the file is the file.
    let link = mnt.join("another name");
    std::fs::hard_link(&swap, &link).unwrap();
    both_refused(&mut cleanup, link.to_str().unwrap(), &needles);
    // (Pages swapped out meanwhile would change the bytes too: this test
    // expects a machine with memory to spare.)
    assert_eq!(settled_hash(&swap), before, "the swap file was written");
}

/// Starts `sh` holding `file` open on descriptor 3 with `redirect` (`>>`
/// to write, `<` to read) and then sleeping as `sleep`; returns it with
/// its pid once the file is open.
fn hold_file(file: &Path, redirect: &str) -> Result<(Child, u32), String> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "exec 3{redirect}\"$0\" && echo ready && exec sleep 300"
        ))
        .arg(file)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("sh: {e}"))?;
    let mut line = String::new();
    if let Some(out) = child.stdout.take() {
        let _ = BufReader::new(out).read_line(&mut line);
    }
    if line.trim() != "ready" {
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!(
            "sh could not open {} with {redirect}",
            file.display()
        ));
    }
    let pid = child.id();
    Ok((child, pid))
}

#[test]
fn a_file_open_for_writing_in_another_process_is_refused() {
    let _serial = serial();
    let mut cleanup = Cleanup::default();
    let img = match image(&mut cleanup, 8 * MIB) {
        Ok(i) => i,
        Err(why) => return skipped(&why),
    };
    let img_str = img.display().to_string();
    let before = settled_hash(&img);
    let (child, pid) = match hold_file(&img, ">>") {
        Ok(held) => held,
        Err(why) => return skipped(&why),
    };
    cleanup.children.push(child);
    both_refused(
        &mut cleanup,
        &img_str,
        &[
            &format!("it is open for writing in pid {pid} (sleep)"),
            "a --preserve restore would undo its writes",
            "stop that process",
        ],
    );
    assert_eq!(settled_hash(&img), before, "the file was written");
    for mut child in cleanup.children.drain(..) {
        let _ = child.kill();
        let _ = child.wait();
    }

    // Held for reading only, it is not in use: a preserving write test
    // runs, and puts every byte back.
    let journal = match journal_dir_apart(&mut cleanup, &img_str) {
        Ok(dir) => dir,
        Err(why) => return skipped(&why),
    };
    let (child, _) = match hold_file(&img, "<") {
        Ok(held) => held,
        Err(why) => return skipped(&why),
    };
    cleanup.children.push(child);
    ok(iocurve()
        .args([
            "run", &img_str, "--rw", "write", "--size", "1M", "--ramp", "0",
        ])
        .args(["--buffered", "--no-save", "--preserve", "--journal-dir"])
        .arg(&journal)
        .timeout(Duration::from_secs(120)));
    assert_eq!(settled_hash(&img), before, "the file was not restored");
}

#[test]
fn a_bind_mounted_file_is_refused_by_either_name() {
    let _serial = serial();
    if !is_root() {
        return skipped("not root: bind mounts need root (CI runs as root)");
    }
    let mut cleanup = Cleanup::default();
    let source = match image(&mut cleanup, 8 * MIB) {
        Ok(i) => i,
        Err(why) => return skipped(&why),
    };
    let over = source.with_file_name("mount point.img");
    std::fs::write(&over, b"the file the bind mount hides").unwrap();
    let (source_str, over_str) = (source.display().to_string(), over.display().to_string());
    if let Err(why) = sh("mount", &["--bind", &source_str, &over_str]) {
        return skipped(&format!("mount --bind: {why}"));
    }
    cleanup.later(&["umount", &over_str]);
    let before = settled_hash(&source);
    let umount = format!("unmount it with `umount '{over_str}'`");
    both_refused(
        &mut cleanup,
        &source_str,
        &[&format!("it is bind-mounted on {over_str}"), &umount],
    );
    both_refused(
        &mut cleanup,
        &over_str,
        &[
            &format!("it is a bind mount of another file over {over_str}"),
            &umount,
        ],
    );
    assert_eq!(settled_hash(&source), before, "the bound file was written");
    sh("umount", &[&over_str]).unwrap();
    cleanup.done(&["umount", &over_str]);
    assert_eq!(
        std::fs::read(&over).unwrap(),
        b"the file the bind mount hides"
    );
}

// ---- (j) a loop device over a file someone is writing ------------------------

#[test]
fn a_loop_device_whose_backing_file_is_being_written_is_refused() {
    let _serial = serial();
    let dev = match LoopDevice::new(16 * MIB) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let mut cleanup = Cleanup::default();
    let before = settled_hash(&dev.backing);
    match python_holding(&dev.backing, "os.O_RDWR") {
        Ok((child, pid)) => {
            cleanup.children.push(child);
            both_refused(
                &mut cleanup,
                dev.path(),
                &[
                    &format!(
                        "the file behind {} is open for writing in pid {pid} (python",
                        dev.path()
                    ),
                    "close that program",
                ],
            );
            let mut child = cleanup.children.pop().unwrap();
            let _ = child.kill();
            let _ = child.wait();
        }
        Err(why) => return skipped(&why),
    }
    assert_eq!(settled_hash(&dev.backing), before, "the device was written");
}
