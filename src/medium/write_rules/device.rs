//! What uses a block device: the facts [`super::why_busy`] gathers, for the
//! device and the disk or partitions that share its medium: mounts, devices
//! stacked on it (holders), active swap, loop devices over its node, and,
//! when none of that shows, whether the kernel refuses an exclusive open
//! and which processes hold the node.

use super::loops::{LoopBacking, loop_backings};
use super::messages::{FileUse, Holder, Opener, Use};
use super::swap::swap_devices;
use super::writers::{processes, writers_of};
use crate::probe::sysfs::{BlockDevice, Mount, parse_mountinfo};
use std::fs;
use std::io;
use std::path::PathBuf;

/// Everything [`super::why_busy`] reports, gathered.
pub(super) fn uses_of(dev: &BlockDevice) -> io::Result<Vec<Use>> {
    let mut devices = vec![dev.clone()];
    if dev.partition {
        devices.push(dev.whole_disk()?);
    } else {
        for name in dev.partitions()? {
            match BlockDevice::from_name(&name) {
                Ok(p) => devices.push(p),
                // The partition vanished between the listing and the lookup
                // (a rescan): nothing left of it to use.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
    }

    let mounts = parse_mountinfo(&fs::read_to_string("/proc/self/mountinfo")?);
    let swaps = swap_devices()?;
    // Listed once: every device is compared against the same loop devices.
    let backings = loop_backings().unwrap_or_default();

    let mut uses = Vec::new();
    for d in &devices {
        let holders: Vec<Holder> = d.holders()?.iter().map(|h| Holder::read(h)).collect();
        uses.extend(reasons_for(d, &mounts, &holders, &swaps));
        let mut loops: Vec<String> = backings
            .iter()
            .filter(|b| b.rdev == Some((d.major, d.minor)))
            .map(|b| b.name.clone())
            .collect();
        if !loops.is_empty() {
            loops.sort();
            uses.push(Use::LoopsOver {
                node: d.dev_path().display().to_string(),
                loops,
            });
        }
        if let Some(u) = backing_written(d, &backings).filter(|u| !uses.contains(u)) {
            uses.push(u);
        }
    }
    // Only the device itself: an exclusive open of a whole disk is also
    // refused while any of its partitions is claimed, which for a partition
    // would report its siblings.
    if uses.is_empty() && exclusive_open_refused(dev)? {
        let nodes: Vec<PathBuf> = devices.iter().map(BlockDevice::dev_path).collect();
        uses.push(Use::Claimed {
            node: dev.dev_path().display().to_string(),
            openers: openers_of(&nodes),
        });
    }
    Ok(uses)
}

impl Holder {
    /// The holder `name` as sysfs describes it.
    fn read(name: &str) -> Holder {
        let dm_name = fs::read_to_string(format!("/sys/class/block/{name}/dm/name"))
            .ok()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty());
        Holder {
            name: name.to_owned(),
            dm_name,
        }
    }
}

/// When `d` is a loop device (or a partition of one), the processes that
/// hold its backing file open for writing, found by the file's device and
/// inode as the kernel reports them.
fn backing_written(d: &BlockDevice, backings: &[LoopBacking]) -> Option<Use> {
    let backing = backings
        .iter()
        .find(|b| b.name == d.disk || b.name == d.name)?;
    let openers: Vec<Opener> = writers_of(backing.file?)
        .into_iter()
        .flat_map(|u| match u {
            FileUse::Writers { openers } => openers,
            _ => Vec::new(),
        })
        .collect();
    (!openers.is_empty()).then(|| Use::BackingWritten {
        node: d.dev_path().display().to_string(),
        openers,
    })
}

/// What uses `d`, from the facts gathered: mounts, holders, swap.
fn reasons_for(
    d: &BlockDevice,
    mounts: &[Mount],
    holders: &[Holder],
    swaps: &[(String, (u32, u32))],
) -> Vec<Use> {
    let node = d.dev_path().display().to_string();
    let mut uses = Vec::new();
    let on: Vec<(String, String)> = mounts
        .iter()
        .filter(|m| (m.major, m.minor) == (d.major, d.minor))
        .map(|m| (m.mount_point.clone(), m.fstype.clone()))
        .collect();
    if !on.is_empty() {
        uses.push(Use::Mounted {
            node: node.clone(),
            on,
        });
    }
    if !holders.is_empty() {
        uses.push(Use::Holders {
            node: node.clone(),
            holders: holders.to_vec(),
        });
    }
    for (path, _) in swaps.iter().filter(|(_, mm)| *mm == (d.major, d.minor)) {
        uses.push(Use::Swap {
            node: node.clone(),
            listed_as: path.clone(),
        });
    }
    uses
}

/// The processes that have one of `nodes` open, from the `/proc/<pid>/fd`
/// links, by pid. Processes that exit or whose `/proc` entries cannot be
/// read (another user's, without privilege) are passed over: this only
/// names what it can.
fn openers_of(nodes: &[PathBuf]) -> Vec<Opener> {
    let mut found = Vec::new();
    for p in processes() {
        let Some(fds) = p.fds() else { continue };
        let hit = fds.into_iter().find_map(|fd| {
            let target = fs::read_link(p.dir.join("fd").join(&fd)).ok()?;
            let node = nodes.iter().find(|n| **n == target)?;
            (!path_only(&p.dir, &fd)).then(|| node.clone())
        });
        let Some(node) = hit else { continue };
        found.push(Opener {
            pid: p.pid,
            command: p.command(),
            node: node.display().to_string(),
        });
    }
    found.sort_by_key(|o| o.pid);
    found
}

/// Whether descriptor `fd` of the process at `proc_dir` is an `O_PATH` one:
/// it opened nothing (no driver's open ran), so it holds nothing busy; this
/// process holds the target so while it checks it.
fn path_only(proc_dir: &std::path::Path, fd: &std::ffi::OsStr) -> bool {
    let Ok(info) = fs::read_to_string(proc_dir.join("fdinfo").join(fd)) else {
        return false;
    };
    info.lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        .is_some_and(|flags| flags & libc::O_PATH as u32 != 0)
}

/// Whether the kernel refuses an `O_EXCL` open of the device node with
/// `EBUSY`. `false` when the node is missing or is not this device (nothing
/// can be learnt then, and the other checks still stand).
fn exclusive_open_refused(dev: &BlockDevice) -> io::Result<bool> {
    use rustix::fs::{Mode, OFlags};
    let node = dev.dev_path();
    match rustix::fs::stat(&node) {
        Ok(st)
            if rustix::fs::FileType::from_raw_mode(st.st_mode).is_block_device()
                && rustix::fs::major(st.st_rdev) == dev.major
                && rustix::fs::minor(st.st_rdev) == dev.minor => {}
        _ => return Ok(false),
    }
    let flags = OFlags::RDONLY | OFlags::EXCL | OFlags::NONBLOCK | OFlags::CLOEXEC;
    match rustix::fs::open(&node, flags, Mode::empty()) {
        Ok(_fd) => Ok(false),
        Err(rustix::io::Errno::BUSY) => Ok(true),
        // No medium, no permission...: this check cannot tell; the others
        // have already spoken.
        Err(_) => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::medium::write_rules::{has_data_signature, probe_data_signature, why_busy};
    use crate::probe::sysfs::tests::{
        LoopDev, MIB, Mounted, have, loop_lock, mkfs_ext4, or_skip, partitioned_loop, run,
    };
    use std::io::Read;
    use std::path::Path;

    fn fake_device(name: &str, major: u32, minor: u32) -> BlockDevice {
        BlockDevice {
            name: name.into(),
            major,
            minor,
            disk: name.into(),
            partition: false,
            size_bytes: 1 << 30,
            logical_block_size: 512,
            physical_block_size: 512,
            read_only: false,
            rotational: Some(true),
            model: None,
            loop_backing_file: None,
        }
    }

    fn said(uses: Vec<Use>) -> Vec<String> {
        uses.iter().map(Use::sentence).collect()
    }

    fn holder(name: &str, dm_name: Option<&str>) -> Holder {
        Holder {
            name: name.into(),
            dm_name: dm_name.map(Into::into),
        }
    }

    #[test]
    fn reasons_name_mounts_holders_and_swap_with_their_fixes() {
        let mounts = crate::probe::sysfs::parse_mountinfo(
            "27 1 254:0 / / rw - ext4 /dev/vda rw\n\
             40 27 8:17 / /mnt/my\\040data rw - xfs /dev/sdb1 rw\n\
             41 27 8:17 /sub /srv rw - xfs /dev/sdb1 rw\n",
        );
        let swaps = vec![("/dev/sdb2".to_string(), (8, 18))];
        let sdb1 = fake_device("sdb1", 8, 17);
        assert_eq!(
            said(reasons_for(&sdb1, &mounts, &[], &swaps)),
            ["/dev/sdb1 is mounted on /mnt/my data (xfs), /srv (xfs): \
              unmount '/mnt/my data' and /srv"]
        );
        let sdb = fake_device("sdb", 8, 16);
        let holders = [
            holder("dm-0", Some("vg-home")),
            holder("dm-3", None),
            holder("md127", None),
            holder("bcache0", None),
        ];
        assert_eq!(
            said(reasons_for(&sdb, &mounts, &holders, &swaps)),
            [
                "/dev/sdb has holders: dm-0, dm-3, md127, bcache0: remove what is stacked \
              on it (`dmsetup remove vg-home`, `dmsetup remove /dev/dm-3`, \
              `mdadm --stop /dev/md127`, stop /dev/bcache0)"
            ]
        );
        let sdb2 = fake_device("sdb2", 8, 18);
        assert_eq!(
            said(reasons_for(&sdb2, &mounts, &[], &swaps)),
            ["/dev/sdb2 is active swap (listed as /dev/sdb2): \
              turn it off with `swapoff /dev/sdb2`"]
        );
        assert!(reasons_for(&fake_device("sdc", 8, 32), &mounts, &[], &swaps).is_empty());
    }

    fn busy(dev: &BlockDevice) -> Option<String> {
        why_busy(dev).unwrap()
    }

    /// The device node held open with `O_EXCL` until dropped, as `mkfs` or
    /// another benchmark would.
    fn hold_exclusively(node: &Path) -> rustix::fd::OwnedFd {
        use rustix::fs::{Mode, OFlags};
        rustix::fs::open(
            node,
            OFlags::RDONLY | OFlags::EXCL | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .unwrap()
    }

    #[test]
    fn loop_device_busy_while_claimed_or_mounted() {
        let _lock = loop_lock();
        let lo = or_skip!(LoopDev::new(64 * MIB, &[]));
        let dev = BlockDevice::from_path(&lo.node).unwrap().unwrap();
        assert_eq!(busy(&dev), None);
        assert_eq!(probe_data_signature(&lo.node).unwrap(), None);

        let held = hold_exclusively(&lo.node);
        let why = busy(&dev).expect("busy while held");
        assert!(
            why.starts_with(&format!("{} is in use", lo.node.display())),
            "{why}"
        );
        // The holder, this very process, is found and named.
        assert!(
            why.contains(&format!("open in pid {} (", std::process::id())),
            "{why}"
        );
        assert!(
            why.ends_with("close that program (or let it finish)"),
            "{why}"
        );
        drop(held);
        assert_eq!(busy(&dev), None);

        or_skip!(mkfs_ext4(lo.node_str()));
        let mut head = Vec::new();
        fs::File::open(&lo.node)
            .unwrap()
            .take(70 * 1024)
            .read_to_end(&mut head)
            .unwrap();
        assert_eq!(head.len(), 70 * 1024);
        assert_eq!(has_data_signature(&head), Some("ext4"));
        assert_eq!(probe_data_signature(&lo.node).unwrap(), Some("ext4"));
        // Nothing uses a device merely because it holds a filesystem.
        assert_eq!(busy(&dev), None);

        {
            let mounted = or_skip!(Mounted::new(lo.node_str()));
            let mount_point = fs::canonicalize(mounted.dir.path()).unwrap();
            assert_eq!(
                busy(&dev).as_deref(),
                Some(
                    format!(
                        "{} is mounted on {} (ext4): unmount {}",
                        lo.node.display(),
                        mount_point.display(),
                        mount_point.display()
                    )
                    .as_str()
                )
            );
        }
        assert_eq!(busy(&dev), None);
    }

    #[test]
    fn partitions_make_their_disk_busy_but_not_their_siblings() {
        let _lock = loop_lock();
        let lo = or_skip!(partitioned_loop());
        let disk = BlockDevice::from_path(&lo.node).unwrap().unwrap();
        let p1 = BlockDevice::from_name(&format!("{}p1", lo.name)).unwrap();
        let p2 = BlockDevice::from_name(&format!("{}p2", lo.name)).unwrap();
        assert_eq!(
            probe_data_signature(&lo.node).unwrap(),
            Some("MBR partition table")
        );
        for d in [&disk, &p1, &p2] {
            assert_eq!(busy(d), None, "{}", d.name);
        }

        or_skip!(mkfs_ext4(p1.dev_path().to_str().unwrap()));
        assert_eq!(probe_data_signature(&p1.dev_path()).unwrap(), Some("ext4"));
        {
            let mounted = or_skip!(Mounted::new(p1.dev_path().to_str().unwrap()));
            let mount_point = fs::canonicalize(mounted.dir.path()).unwrap();
            let want = format!(
                "/dev/{}p1 is mounted on {} (ext4): unmount {}",
                lo.name,
                mount_point.display(),
                mount_point.display()
            );
            assert_eq!(busy(&disk), Some(want.clone()));
            assert_eq!(busy(&p1), Some(want));
            assert_eq!(busy(&p2), None);
        }
        for d in [&disk, &p1, &p2] {
            assert_eq!(busy(d), None, "{}", d.name);
        }

        // A claimed partition makes its disk busy, not its sibling...
        let held = hold_exclusively(&p1.dev_path());
        assert!(busy(&disk).unwrap().contains("in use"));
        assert_eq!(busy(&p2), None);
        drop(held);
        // ...and a claimed disk makes every partition busy.
        let held = hold_exclusively(&lo.node);
        assert!(busy(&p1).unwrap().contains("in use"));
        assert!(busy(&p2).unwrap().contains("in use"));
        drop(held);
        assert_eq!(busy(&p2), None);
    }

    /// Swap on a device, turned off when dropped.
    struct SwapOn(String);

    impl Drop for SwapOn {
        fn drop(&mut self) {
            if let Err(e) = run("swapoff", &[&self.0]) {
                eprintln!("cleanup: {e}");
            }
        }
    }

    #[test]
    fn active_swap_is_busy() {
        let _lock = loop_lock();
        if !have("mkswap") || !have("swapon") {
            println!("skipped: mkswap or swapon missing");
            return;
        }
        let lo = or_skip!(LoopDev::new(64 * MIB, &[]));
        let dev = BlockDevice::from_path(&lo.node).unwrap().unwrap();
        or_skip!(run("mkswap", &[lo.node_str()]));
        assert_eq!(probe_data_signature(&lo.node).unwrap(), Some("swap"));
        assert_eq!(busy(&dev), None);
        {
            or_skip!(run("swapon", &["-p", "-1", lo.node_str()]));
            let _swap = SwapOn(lo.node_str().to_owned());
            assert_eq!(
                busy(&dev),
                Some(format!(
                    "{0} is active swap (listed as {0}): turn it off with `swapoff {0}`",
                    lo.node.display()
                ))
            );
        }
        assert_eq!(busy(&dev), None);
    }
}
