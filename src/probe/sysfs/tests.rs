//! Fixtures for tests that read block devices (a fabricated sysfs tree,
//! real loop devices, mounts, partition tables), shared with the write
//! rules' tests, and the tests that read a whole device through them.

use super::diskstat::read_stat_in;
use super::stack::{holders_in, partitions_in};
use super::*;
use std::fs;
use std::io;
use std::io::Write;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A `stat` line with the 17 fields of kernels that count flushes.
pub(crate) const STAT_17: &str =
    "  4410  171 329502 2193 1527 2079 61568 3062 0 3436 5256 12 0 4096 7 99 33\n";

// ---- a fabricated sysfs tree ------------------------------------------

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// `/sys` with one partitioned disk `sdz` (8:0) and partitions `sdz1`,
/// `sdz2`, `sdz10`, the way the kernel lays it out.
fn fake_sysfs() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let sys = t.path();
    let disk = sys.join("devices/pci0000:00/host0/block/sdz");
    write(&disk.join("dev"), "8:0\n");
    write(&disk.join("size"), "2097152\n");
    write(&disk.join("ro"), "0\n");
    write(&disk.join("queue/logical_block_size"), "512\n");
    write(&disk.join("queue/physical_block_size"), "4096\n");
    write(&disk.join("device/model"), "FAKE DISK       \n");
    fs::create_dir_all(disk.join("holders")).unwrap();
    for (name, minor, number) in [("sdz1", 1, 1), ("sdz2", 2, 2), ("sdz10", 10, 10)] {
        let p = disk.join(name);
        write(&p.join("dev"), &format!("8:{minor}\n"));
        write(&p.join("partition"), &format!("{number}\n"));
        write(&p.join("size"), "2048\n");
        write(&p.join("ro"), if name == "sdz2" { "1\n" } else { "0\n" });
        fs::create_dir_all(p.join("holders")).unwrap();
        write(&p.join("stat"), STAT_17);
    }
    fs::create_dir_all(disk.join("sdz1/holders/dm-1")).unwrap();
    fs::create_dir_all(disk.join("sdz1/holders/dm-0")).unwrap();
    fs::create_dir_all(sys.join("dev/block")).unwrap();
    fs::create_dir_all(sys.join("class/block")).unwrap();
    for (name, rel) in [
        ("sdz", "sdz"),
        ("sdz1", "sdz/sdz1"),
        ("sdz2", "sdz/sdz2"),
        ("sdz10", "sdz/sdz10"),
    ] {
        let target = format!("../../devices/pci0000:00/host0/block/{rel}");
        symlink(&target, sys.join("class/block").join(name)).unwrap();
        let dev = fs::read_to_string(disk.parent().unwrap().join(rel).join("dev")).unwrap();
        symlink(&target, sys.join("dev/block").join(dev.trim())).unwrap();
    }
    t
}

#[test]
fn fake_sysfs_partition_takes_queue_facts_from_its_disk() {
    let t = fake_sysfs();
    let sys = t.path();
    let p1 = from_dev_t_in(sys, 8, 1).unwrap();
    assert_eq!(
        p1,
        BlockDevice {
            name: "sdz1".into(),
            major: 8,
            minor: 1,
            disk: "sdz".into(),
            partition: true,
            size_bytes: 2048 * 512,
            logical_block_size: 512,
            physical_block_size: 4096,
            read_only: false,
            rotational: None, // no queue/rotational file: not guessed
            model: Some("FAKE DISK".into()),
            loop_backing_file: None,
        }
    );
    assert_eq!(from_name_in(sys, "sdz1").unwrap(), p1);
    assert!(from_name_in(sys, "sdz2").unwrap().read_only);
    let disk = from_name_in(sys, "sdz").unwrap();
    assert!(!disk.partition);
    assert_eq!(disk.disk, "sdz");
    assert_eq!(disk.size_bytes, 1 << 30);
    assert_eq!(
        partitions_in(sys, "sdz").unwrap(),
        ["sdz1", "sdz2", "sdz10"]
    );
    assert_eq!(holders_in(sys, "sdz1").unwrap(), ["dm-0", "dm-1"]);
    assert!(holders_in(sys, "sdz").unwrap().is_empty());
    assert_eq!(read_stat_in(sys, "sdz1").unwrap().write_sectors, 61568);
    assert_eq!(
        from_dev_t_in(sys, 8, 99).unwrap_err().kind(),
        io::ErrorKind::NotFound
    );
    for bad in ["", ".", "..", "../sdz", "sdz/sdz1"] {
        assert_eq!(
            from_name_in(sys, bad).unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
    }
    assert_eq!(p1.dev_path(), Path::new("/dev/sdz1"));
}

// ---- real loop devices ------------------------------------------------

pub(crate) const MIB: u64 = 1 << 20;

/// Loop-device tests take turns: `losetup -f` can race with itself.
pub(crate) fn loop_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs a command; its stdout, or a message with its stderr.
pub(crate) fn run(program: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "{program} {args:?} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

pub(crate) fn have(program: &str) -> bool {
    run("which", &[program]).is_ok()
}

/// A loop device over a scratch file in its own temporary directory,
/// detached when dropped (the directory is removed after that).
pub(crate) struct LoopDev {
    pub(crate) node: PathBuf,
    pub(crate) name: String,
    pub(crate) backing: PathBuf,
    _dir: tempfile::TempDir,
}

impl LoopDev {
    /// `size` bytes of zeros, `head` written at the start.
    pub(crate) fn new(size: u64, head: &[u8]) -> Result<LoopDev, String> {
        if !rustix::process::geteuid().is_root() {
            return Err("not root".into());
        }
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let backing = dir.path().join("scratch.img");
        let mut f = fs::File::create(&backing).map_err(|e| e.to_string())?;
        f.write_all(head).map_err(|e| e.to_string())?;
        f.set_len(size).map_err(|e| e.to_string())?;
        drop(f);
        let backing_str = backing.to_str().ok_or("temp path is not UTF-8")?;
        let out = run("losetup", &["-f", "--show", "-P", backing_str])?;
        let node = PathBuf::from(out.trim());
        let name = node
            .file_name()
            .ok_or_else(|| format!("losetup printed {out:?}"))?
            .to_string_lossy()
            .into_owned();
        Ok(LoopDev {
            node,
            name,
            backing,
            _dir: dir,
        })
    }

    pub(crate) fn node_str(&self) -> &str {
        self.node.to_str().unwrap()
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        if let Err(e) = run("losetup", &["-d", self.node_str()]) {
            eprintln!("cleanup: {e}");
        }
    }
}

/// A filesystem mounted on a temporary directory, unmounted when dropped.
pub(crate) struct Mounted {
    pub(crate) dir: tempfile::TempDir,
}

impl Mounted {
    pub(crate) fn new(node: &str) -> Result<Mounted, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        run("mount", &[node, dir.path().to_str().unwrap()])?;
        Ok(Mounted { dir })
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let p = self.dir.path().to_str().unwrap().to_owned();
        if let Err(e) = run("umount", &[&p]) {
            eprintln!("cleanup: {e}; detaching lazily");
            let _ = run("umount", &["-l", &p]);
        }
    }
}

pub(crate) fn mkfs_ext4(node: &str) -> Result<(), String> {
    run(
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
}

/// A master boot record with two primary Linux partitions: 20 MiB at
/// 1 MiB and 42 MiB after it (for a 64 MiB disk).
pub(crate) fn mbr_two_partitions() -> Vec<u8> {
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

/// A 64 MiB loop device with [`mbr_two_partitions`], its partitions made
/// known to the kernel: by the kernel's own scan, or, when the kernel
/// has no partition-table parser (this test VM's has none), by `partx -a`,
/// which reads the table itself and adds the partitions with BLKPG.
pub(crate) fn partitioned_loop() -> Result<LoopDev, String> {
    let lo = LoopDev::new(64 * MIB, &mbr_two_partitions())?;
    let p1 = Path::new("/sys/class/block").join(format!("{}p1", lo.name));
    if !p1.exists() {
        if !have("partx") {
            return Err("the kernel did not scan the partition table and partx is missing".into());
        }
        run("partx", &["-a", lo.node_str()])?;
    }
    // devtmpfs (or udev) makes the nodes; give it a moment.
    let deadline = Instant::now() + Duration::from_secs(5);
    let nodes = [1, 2].map(|n| PathBuf::from(format!("/dev/{}p{n}", lo.name)));
    while !nodes.iter().all(|n| n.exists()) {
        if Instant::now() > deadline {
            return Err(format!("{nodes:?} did not appear"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(lo)
}

/// Prints why a test cannot run and says whether to go on.
macro_rules! or_skip {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(why) => {
                println!("skipped: {why}");
                return;
            }
        }
    };
}
pub(crate) use or_skip;

#[test]
fn loop_device_facts_and_counters() {
    let _lock = loop_lock();
    let lo = or_skip!(LoopDev::new(64 * MIB, &[]));
    let dev = BlockDevice::from_path(&lo.node)
        .unwrap()
        .expect("a loop device");
    assert_eq!(dev.name, lo.name);
    assert_eq!(dev.disk, lo.name);
    assert!(!dev.partition);
    assert_eq!(dev.major, 7);
    assert_eq!(dev.size_bytes, 64 * MIB);
    assert_eq!(dev.logical_block_size, 512);
    assert!(dev.physical_block_size >= 512);
    assert!(!dev.read_only);
    assert_eq!(dev.model, None);
    assert_eq!(
        dev.loop_backing_file.as_deref().map(Path::new),
        Some(fs::canonicalize(&lo.backing).unwrap().as_path())
    );
    assert_eq!(dev.dev_path(), lo.node);
    assert_eq!(BlockDevice::from_dev_t(dev.major, dev.minor).unwrap(), dev);
    assert_eq!(BlockDevice::from_name(&lo.name).unwrap(), dev);
    assert_eq!(dev.whole_disk().unwrap(), dev);
    assert!(dev.partitions().unwrap().is_empty());
    assert!(dev.holders().unwrap().is_empty());

    // What is written through the node shows in the device's counters.
    let before = dev.read_stat().unwrap();
    let mut f = fs::OpenOptions::new().write(true).open(&lo.node).unwrap();
    f.write_all(&vec![0xA5; MIB as usize]).unwrap();
    f.sync_all().unwrap();
    drop(f);
    let delta = dev.read_stat().unwrap().since(&before);
    assert!(delta.write_sectors >= 2048, "{delta:?}");
    assert!(delta.write_ios >= 1, "{delta:?}");
    assert!(delta.write_bytes() >= MIB, "{delta:?}");
}

#[test]
fn path_on_a_mounted_loop_device_resolves_to_it() {
    let _lock = loop_lock();
    let lo = or_skip!(LoopDev::new(64 * MIB, &[]));
    or_skip!(mkfs_ext4(lo.node_str()));
    let mounted = or_skip!(Mounted::new(lo.node_str()));
    let file = mounted.dir.path().join("some file");
    fs::write(&file, b"x").unwrap();

    let dev = BlockDevice::from_path(&file).unwrap().expect("a device");
    assert_eq!(dev.name, lo.name);
    assert_eq!(
        BlockDevice::from_path(mounted.dir.path()).unwrap().unwrap(),
        dev
    );
    let m = mount_of(&file).unwrap().expect("a mount");
    let mount_point = fs::canonicalize(mounted.dir.path()).unwrap();
    assert_eq!(Path::new(&m.mount_point), mount_point);
    assert_eq!(m.fstype, "ext4");
    assert_eq!((m.major, m.minor), (dev.major, dev.minor));
    assert!(m.options.split(',').any(|o| o == "rw"), "{}", m.options);
    let all = mounts_of_device(dev.major, dev.minor).unwrap();
    assert_eq!(all, [m]);
}

#[test]
fn paths_without_a_single_block_device() {
    // /proc and /dev live on filesystems with anonymous device numbers.
    assert_eq!(
        BlockDevice::from_path(Path::new("/proc/self")).unwrap(),
        None
    );
    assert_eq!(
        BlockDevice::from_path(Path::new("/dev/null")).unwrap(),
        None
    );
    assert_eq!(
        BlockDevice::from_path(Path::new("/no/such/path"))
            .unwrap_err()
            .kind(),
        io::ErrorKind::NotFound
    );
    let m = mount_of(Path::new("/proc/self/status")).unwrap().unwrap();
    assert_eq!(m.fstype, "proc");
}

#[test]
fn partitions_of_a_loop_device() {
    let _lock = loop_lock();
    let lo = or_skip!(partitioned_loop());
    let disk = BlockDevice::from_path(&lo.node).unwrap().unwrap();
    let p1_name = format!("{}p1", lo.name);
    let p2_name = format!("{}p2", lo.name);
    assert_eq!(
        disk.partitions().unwrap(),
        [p1_name.clone(), p2_name.clone()]
    );

    let p1 = BlockDevice::from_path(Path::new(&format!("/dev/{p1_name}")))
        .unwrap()
        .unwrap();
    assert_eq!(p1.name, p1_name);
    assert!(p1.partition);
    assert_eq!(p1.disk, lo.name);
    assert_eq!(p1.size_bytes, 20 * MIB);
    assert_eq!(p1.logical_block_size, disk.logical_block_size);
    assert_eq!(p1.physical_block_size, disk.physical_block_size);
    assert_eq!(p1.rotational, disk.rotational);
    assert_eq!(p1.loop_backing_file, disk.loop_backing_file);
    assert_eq!(p1.partitions().unwrap(), disk.partitions().unwrap());
    assert_eq!(p1.whole_disk().unwrap(), disk);
    assert_eq!(BlockDevice::from_name(&p1_name).unwrap(), p1);
    assert_eq!(BlockDevice::from_dev_t(p1.major, p1.minor).unwrap(), p1);
    assert!(p1.read_stat().is_ok());
    assert!(p1.holders().unwrap().is_empty());
    let p2 = BlockDevice::from_name(&p2_name).unwrap();
    assert_eq!(p2.size_bytes, 42 * MIB);
}
