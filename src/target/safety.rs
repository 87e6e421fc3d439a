//! Is a block device free to be written?
//!
//! A benchmark must never destroy data. Writing to a raw block device
//! overwrites whatever is on it, and doing so under a mounted filesystem, a
//! device-mapper or md array stacked on the device, or active swap corrupts it
//! in ways that surface much later. So a write test on a device is refused
//! while anything uses it, and [`why_busy`] says, in one sentence, what does.
//! A device that nothing uses may still hold data nobody has mounted right
//! now; [`has_data_signature`] recognises the common on-disk formats so that
//! the caller can warn (or demand confirmation) before a destructive run.

use super::sysfs::{BlockDevice, Mount, parse_mountinfo, unescape_octal};
use std::fs;
use std::io::{self, Read};
use std::path::Path;

/// Returns `Ok(None)` when nothing uses the device, else a sentence naming
/// what does (a mount, a holder, swap).
///
/// Checked are the device itself; when it is a whole disk, each of its
/// partitions; when it is a partition, its whole disk (not its sibling
/// partitions, which writing to this one does not touch). For each of these:
/// - a mount of it in this process's mount namespace (`/proc/self/mountinfo`),
/// - devices stacked on it (`holders/` in sysfs: device-mapper, md, bcache),
/// - active swap on it (`/proc/swaps`).
///
/// When none of that is found, the device node itself is opened with
/// `O_EXCL`, which the kernel refuses with `EBUSY` while the device (or, for
/// a whole disk, any of its partitions; for a partition, its whole disk) is
/// mounted in any mount namespace, stacked upon, swapped to, or opened with
/// `O_EXCL` by another process (`mkfs`, another benchmark). That catches what
/// this process cannot see.
///
/// Because of the exclusive open, call this *before* opening the device with
/// `O_EXCL` yourself, or your own open makes the device look busy. (Like any
/// close, closing that probe lets a loop device whose detach was deferred
/// because it was busy go away, if nothing else holds it open.)
///
/// Whether the device backs a loop device (a loop device does not claim a
/// block device it is backed by) is not checked.
pub fn why_busy(dev: &BlockDevice) -> io::Result<Option<String>> {
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

    let mut reasons = Vec::new();
    for d in &devices {
        reasons.extend(reasons_for(d, &mounts, &d.holders()?, &swaps));
        let loops = loops_over(d);
        if !loops.is_empty() {
            reasons.push(format!(
                "{} has loop devices set up over it: {} (detach them with losetup -d)",
                d.dev_path().display(),
                loops.join(", ")
            ));
        }
    }
    // Only the device itself: an exclusive open of a whole disk is also
    // refused while any of its partitions is claimed, which for a partition
    // would report its siblings.
    if reasons.is_empty() && exclusive_open_refused(dev)? {
        reasons.push(format!(
            "{} is in use: the kernel refused to open it exclusively \
             (mounted in another mount namespace, or held by another program)",
            dev.dev_path().display()
        ));
    }
    Ok(if reasons.is_empty() {
        None
    } else {
        Some(reasons.join("; "))
    })
}

/// Loop devices whose backing file is the device node of `d` itself. (A loop
/// over a file on a file system of `d` needs that file system mounted, which
/// the mount check already reports.) The loop driver does not claim its
/// backing device, so neither holders nor an exclusive open reveal this.
fn loops_over(d: &BlockDevice) -> Vec<String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let Ok(entries) = fs::read_dir("/sys/class/block") else {
        return Vec::new();
    };
    let mut loops: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let backing = fs::read_to_string(e.path().join("loop/backing_file")).ok()?;
            let meta = fs::metadata(backing.trim()).ok()?;
            let rdev = meta.rdev();
            let same = meta.file_type().is_block_device()
                && rustix::fs::major(rdev) == d.major
                && rustix::fs::minor(rdev) == d.minor;
            same.then_some(name)
        })
        .collect();
    loops.sort();
    loops
}

/// What uses `d`, from the facts gathered: one sentence per kind of use.
fn reasons_for(
    d: &BlockDevice,
    mounts: &[Mount],
    holders: &[String],
    swaps: &[(String, (u32, u32))],
) -> Vec<String> {
    let node = d.dev_path();
    let node = node.display();
    let mut reasons = Vec::new();
    let on: Vec<String> = mounts
        .iter()
        .filter(|m| (m.major, m.minor) == (d.major, d.minor))
        .map(|m| format!("{} ({})", m.mount_point, m.fstype))
        .collect();
    if !on.is_empty() {
        reasons.push(format!("{node} is mounted on {}", on.join(", ")));
    }
    if !holders.is_empty() {
        reasons.push(format!("{node} has holders: {}", holders.join(", ")));
    }
    for (path, _) in swaps.iter().filter(|(_, mm)| *mm == (d.major, d.minor)) {
        reasons.push(format!("{node} is active swap (listed as {path})"));
    }
    reasons
}

/// The block devices in active swap: each `/proc/swaps` path that is a block
/// device node, with its major:minor. Swap files are left out (their
/// filesystem's mount already marks their device busy).
fn swap_devices() -> io::Result<Vec<(String, (u32, u32))>> {
    let text = match fs::read_to_string("/proc/swaps") {
        Ok(t) => t,
        // Kernels built without swap have no /proc/swaps.
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut found = Vec::new();
    for path in parse_swaps(&text) {
        let Ok(st) = rustix::fs::stat(path.as_str()) else {
            continue;
        };
        if rustix::fs::FileType::from_raw_mode(st.st_mode).is_block_device() {
            let mm = (rustix::fs::major(st.st_rdev), rustix::fs::minor(st.st_rdev));
            found.push((path, mm));
        }
    }
    Ok(found)
}

/// The paths in the first column of `/proc/swaps` (after its header line),
/// with the kernel's octal escapes (`\040`) undone.
fn parse_swaps(text: &str) -> Vec<String> {
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(unescape_octal)
        .collect()
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

/// How many leading bytes of a device [`has_data_signature`] looks at: enough
/// for every signature it knows (the farthest is btrfs, at 64 KiB + 64, and
/// swap on 64 KiB-page systems).
pub const SIGNATURE_PROBE_BYTES: usize = 68 * 1024;

fn at(buf: &[u8], offset: usize, pattern: &[u8]) -> bool {
    buf.get(offset..offset + pattern.len()) == Some(pattern)
}

fn le_u32(buf: &[u8], offset: usize) -> Option<u32> {
    let b: [u8; 4] = buf.get(offset..offset + 4)?.try_into().ok()?;
    Some(u32::from_le_bytes(b))
}

/// Which ext version the superblock at byte 1024 describes, from its feature
/// flags: anything ext4 introduced makes it ext4, a journal alone ext3.
fn ext_flavour(buf: &[u8]) -> &'static str {
    const COMPAT_HAS_JOURNAL: u32 = 0x4;
    // extents, 64bit, mmp, flex_bg, csum_seed, largedir, inline_data, encrypt...
    const INCOMPAT_EXT4: u32 =
        0x40 | 0x80 | 0x100 | 0x200 | 0x1000 | 0x2000 | 0x4000 | 0x8000 | 0x10000;
    // huge_file, gdt_csum, dir_nlink, extra_isize, quota, bigalloc, metadata_csum
    const RO_COMPAT_EXT4: u32 = 0x8 | 0x10 | 0x20 | 0x40 | 0x100 | 0x200 | 0x400;
    let compat = le_u32(buf, 1024 + 0x5C).unwrap_or(0);
    let incompat = le_u32(buf, 1024 + 0x60).unwrap_or(0);
    let ro_compat = le_u32(buf, 1024 + 0x64).unwrap_or(0);
    if incompat & INCOMPAT_EXT4 != 0 || ro_compat & RO_COMPAT_EXT4 != 0 {
        "ext4"
    } else if compat & COMPAT_HAS_JOURNAL != 0 {
        "ext3"
    } else {
        "ext2"
    }
}

/// Recognises a partition table or filesystem from the first bytes of a
/// device (pass [`SIGNATURE_PROBE_BYTES`] of them, or all there are). Returns
/// its name: `"GPT partition table"`, `"MBR partition table"`, `"ext2"`,
/// `"ext3"`, `"ext4"`, `"FAT12"`, `"FAT16"`, `"FAT32"`, `"exFAT"`, `"NTFS"`,
/// `"XFS"`, `"btrfs"`, `"swap"`, `"LUKS"` or `"ISO9660"`. `None` means no
/// known signature, not that the device is empty.
///
/// Filesystems are checked before partition tables because FAT, exFAT and NTFS
/// boot sectors also end in the MBR's 0x55AA, and GPT before MBR because a GPT
/// disk starts with a protective MBR.
pub fn has_data_signature(first_bytes: &[u8]) -> Option<&'static str> {
    let b = first_bytes;
    let boot_signature = at(b, 510, &[0x55, 0xAA]);
    if at(b, 0, b"LUKS\xba\xbe") {
        return Some("LUKS");
    }
    if at(b, 0, b"XFSB") {
        return Some("XFS");
    }
    if at(b, 3, b"NTFS    ") {
        return Some("NTFS");
    }
    if at(b, 3, b"EXFAT   ") {
        return Some("exFAT");
    }
    if boot_signature {
        if at(b, 54, b"FAT12") {
            return Some("FAT12");
        }
        if at(b, 54, b"FAT16") {
            return Some("FAT16");
        }
        if at(b, 82, b"FAT32") {
            return Some("FAT32");
        }
    }
    if at(b, 1080, &[0x53, 0xEF]) {
        return Some(ext_flavour(b));
    }
    if at(b, 65600, b"_BHRfS_M") {
        return Some("btrfs");
    }
    // The swap header fills the first page, whatever the page size is.
    if [4096, 8192, 16384, 65536]
        .iter()
        .any(|page| at(b, page - 10, b"SWAPSPACE2"))
    {
        return Some("swap");
    }
    if at(b, 32769, b"CD001") {
        return Some("ISO9660");
    }
    if at(b, 512, b"EFI PART") {
        return Some("GPT partition table");
    }
    if boot_signature
        && (0..4).any(|i| {
            let entry = &b[446 + 16 * i..446 + 16 * (i + 1)];
            // A used entry has a non-zero type byte and a non-zero size.
            entry[4] != 0 && entry[12..16] != [0, 0, 0, 0]
        })
    {
        return Some("MBR partition table");
    }
    None
}

/// Reads the first [`SIGNATURE_PROBE_BYTES`] of `path` (fewer if it is
/// shorter) and passes them to [`has_data_signature`].
pub fn probe_data_signature(path: &Path) -> io::Result<Option<&'static str>> {
    let mut buf = Vec::with_capacity(SIGNATURE_PROBE_BYTES);
    fs::File::open(path)?
        .take(SIGNATURE_PROBE_BYTES as u64)
        .read_to_end(&mut buf)?;
    Ok(has_data_signature(&buf))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::sysfs::tests::{
        LoopDev, MIB, Mounted, have, loop_lock, mbr_two_partitions, mkfs_ext4, or_skip,
        partitioned_loop, run,
    };

    fn put(buf: &mut [u8], offset: usize, bytes: &[u8]) {
        buf[offset..offset + bytes.len()].copy_from_slice(bytes);
    }

    fn blank() -> Vec<u8> {
        vec![0u8; SIGNATURE_PROBE_BYTES]
    }

    #[test]
    fn signatures_of_built_buffers() {
        assert_eq!(has_data_signature(&blank()), None);
        assert_eq!(has_data_signature(&[]), None);
        assert_eq!(has_data_signature(&[0xFF; 100]), None);

        // 0x55AA alone (all four entries empty) is not a partition table.
        let mut b = blank();
        put(&mut b, 510, &[0x55, 0xAA]);
        assert_eq!(has_data_signature(&b), None);
        let mut b = blank();
        put(&mut b, 0, &mbr_two_partitions());
        assert_eq!(has_data_signature(&b), Some("MBR partition table"));
        put(&mut b, 510, &[0, 0]);
        assert_eq!(has_data_signature(&b), None);

        let mut b = blank();
        put(&mut b, 0, &mbr_two_partitions());
        put(&mut b, 512, b"EFI PART");
        assert_eq!(has_data_signature(&b), Some("GPT partition table"));

        let ext = |compat: u32, incompat: u32, ro_compat: u32| {
            let mut b = blank();
            put(&mut b, 1080, &0xEF53u16.to_le_bytes());
            put(&mut b, 1024 + 0x5C, &compat.to_le_bytes());
            put(&mut b, 1024 + 0x60, &incompat.to_le_bytes());
            put(&mut b, 1024 + 0x64, &ro_compat.to_le_bytes());
            has_data_signature(&b)
        };
        assert_eq!(ext(0, 0x2, 0x1), Some("ext2"));
        assert_eq!(ext(0x4, 0x2, 0x1), Some("ext3"));
        assert_eq!(ext(0x4, 0x2 | 0x40, 0x1), Some("ext4"));
        assert_eq!(ext(0x4, 0x2, 0x400), Some("ext4"));
        // Cut off after the magic: still ext, flavour from what is there.
        let mut b = vec![0u8; 1082];
        put(&mut b, 1080, &[0x53, 0xEF]);
        assert_eq!(has_data_signature(&b), Some("ext2"));

        for (offset, tag, name) in [
            (54, &b"FAT12   "[..], "FAT12"),
            (54, b"FAT16   ", "FAT16"),
            (82, b"FAT32   ", "FAT32"),
        ] {
            let mut b = blank();
            put(&mut b, offset, tag);
            assert_eq!(has_data_signature(&b), None, "{name} without 0x55AA");
            put(&mut b, 510, &[0x55, 0xAA]);
            // Boot code where a partition entry would be must not make it MBR.
            put(&mut b, 446, &[0x33; 64]);
            assert_eq!(has_data_signature(&b), Some(name));
        }

        let cases: [(usize, &[u8], &str); 9] = [
            (3, b"EXFAT   ", "exFAT"),
            (3, b"NTFS    ", "NTFS"),
            (0, b"XFSB", "XFS"),
            (65600, b"_BHRfS_M", "btrfs"),
            (4086, b"SWAPSPACE2", "swap"),
            (65526, b"SWAPSPACE2", "swap"),
            (0, b"LUKS\xba\xbe", "LUKS"),
            (32769, b"CD001", "ISO9660"),
            (16374, b"SWAPSPACE2", "swap"),
        ];
        for (offset, tag, name) in cases {
            let mut b = blank();
            put(&mut b, offset, tag);
            assert_eq!(has_data_signature(&b), Some(name), "{name} at {offset}");
            // A buffer that ends inside the signature does not have it.
            assert_eq!(has_data_signature(&b[..offset + tag.len() - 1]), None);
            // NTFS, exFAT and hybrid ISO images carry an MBR too.
            put(&mut b, 446, &mbr_two_partitions()[446..]);
            assert_eq!(has_data_signature(&b), Some(name), "{name} with an MBR");
        }
    }

    #[test]
    fn swaps_file_paths_are_unescaped() {
        let text = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n\
                    /dev/zram0                              partition\t8388604\t\t0\t\t100\n\
                    /swap\\040file                           file\t\t1048572\t\t0\t\t-2\n";
        assert_eq!(parse_swaps(text), ["/dev/zram0", "/swap file"]);
        assert!(parse_swaps("Filename Type Size Used Priority\n").is_empty());
        assert!(parse_swaps("").is_empty());
    }

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

    #[test]
    fn reasons_name_mounts_holders_and_swap() {
        let mounts = crate::target::sysfs::parse_mountinfo(
            "27 1 254:0 / / rw - ext4 /dev/vda rw\n\
             40 27 8:17 / /mnt/my\\040data rw - xfs /dev/sdb1 rw\n\
             41 27 8:17 /sub /srv rw - xfs /dev/sdb1 rw\n",
        );
        let swaps = vec![("/dev/sdb2".to_string(), (8, 18))];
        let sdb1 = fake_device("sdb1", 8, 17);
        assert_eq!(
            reasons_for(&sdb1, &mounts, &[], &swaps),
            ["/dev/sdb1 is mounted on /mnt/my data (xfs), /srv (xfs)"]
        );
        let sdb = fake_device("sdb", 8, 16);
        assert_eq!(
            reasons_for(&sdb, &mounts, &["dm-0".into(), "md127".into()], &swaps),
            ["/dev/sdb has holders: dm-0, md127"]
        );
        let sdb2 = fake_device("sdb2", 8, 18);
        assert_eq!(
            reasons_for(&sdb2, &mounts, &[], &swaps),
            ["/dev/sdb2 is active swap (listed as /dev/sdb2)"]
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
                        "{} is mounted on {} (ext4)",
                        lo.node.display(),
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
                "/dev/{}p1 is mounted on {} (ext4)",
                lo.name,
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
                    "{0} is active swap (listed as {0})",
                    lo.node.display()
                ))
            );
        }
        assert_eq!(busy(&dev), None);
    }
}
