//! Block-device facts from sysfs and mount facts from `/proc/self/mountinfo`.
//!
//! A benchmark target is a path: a file, a directory to put a scratch file in,
//! or a block device node. iocurve needs to know which block device lies
//! beneath that path for two reasons. First, safety: before anything is written
//! to a device, [`crate::medium::write_rules`] must learn whether the device (or one of its
//! partitions, or the disk it is part of) is mounted, stacked upon or used as
//! swap. Second, honesty: the device keeps its own I/O counters
//! (`/sys/class/block/<name>/stat`), and reading them before and after a run
//! shows what actually reached the device (page-cache hits that never left
//! memory, merges done by the block layer, writes the filesystem added of its
//! own), as opposed to what the benchmark asked for.
//!
//! Everything here is read from the kernel's own descriptions: sysfs for the
//! devices and `/proc/self/mountinfo` for the mounts. A fact the kernel does not
//! give is reported as `None` and never guessed.

use serde::{Deserialize, Serialize};
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

/// Where sysfs is mounted. The private `*_in` helpers take the root as an
/// argument so that the parsing logic can be tested on a fabricated tree.
const SYSFS: &str = "/sys";

/// Bytes per sector in the `size` attribute and in the sector counters of
/// `stat`: always 512, whatever the device's logical block size.
pub const SECTOR_BYTES: u64 = 512;

/// One block device (whole disk or partition) as the kernel describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockDevice {
    /// Kernel name: `sda1`, `loop0`, `nvme0n1p2`, `mmcblk0`.
    pub name: String,
    pub major: u32,
    pub minor: u32,
    /// Kernel name of the whole disk (`sda` for `sda1`; itself for a disk).
    pub disk: String,
    pub partition: bool,
    pub size_bytes: u64,
    pub logical_block_size: u32,
    pub physical_block_size: u32,
    /// The device refuses writes (its own `ro` flag or its disk's).
    pub read_only: bool,
    /// `queue/rotational` of the disk. Virtual disks often claim to rotate
    /// (virtio-blk reports 1 unless the host says otherwise), so this is the
    /// kernel's belief, not a measurement.
    pub rotational: Option<bool>,
    pub model: Option<String>,
    /// For a loop device, the file behind it. For a partition of a loop
    /// device, the file behind the whole loop disk.
    pub loop_backing_file: Option<String>,
}

impl BlockDevice {
    /// The device with device number `major:minor`, found through
    /// `/sys/dev/block/major:minor`.
    pub fn from_dev_t(major: u32, minor: u32) -> io::Result<BlockDevice> {
        from_dev_t_in(Path::new(SYSFS), major, minor)
    }

    /// The device with kernel name `name` (`sda1`, `loop0`), found through
    /// `/sys/class/block/<name>`.
    pub fn from_name(name: &str) -> io::Result<BlockDevice> {
        from_name_in(Path::new(SYSFS), name)
    }

    /// The block device beneath `path`.
    ///
    /// For a block device node this is the device the node stands for; for
    /// anything else (a file, a directory) it is the device holding the
    /// filesystem the path lives on. Returns `Ok(None)` when there is no single
    /// block device: the filesystem has an anonymous device number (major 0:
    /// tmpfs, overlayfs, NFS, FUSE, btrfs) or sysfs does not know the number.
    pub fn from_path(path: &Path) -> io::Result<Option<BlockDevice>> {
        let st = rustix::fs::stat(path).map_err(|e| with_path(e.into(), path))?;
        let dev = if rustix::fs::FileType::from_raw_mode(st.st_mode).is_block_device() {
            st.st_rdev
        } else {
            st.st_dev
        };
        let (major, minor) = (rustix::fs::major(dev), rustix::fs::minor(dev));
        if major == 0 {
            return Ok(None);
        }
        match from_dev_t_in(Path::new(SYSFS), major, minor) {
            Ok(d) => Ok(Some(d)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The whole disk this device belongs to (a copy of `self` for a disk).
    pub fn whole_disk(&self) -> io::Result<BlockDevice> {
        if self.partition {
            BlockDevice::from_name(&self.disk)
        } else {
            Ok(self.clone())
        }
    }

    /// The device node path: `/dev/` followed by the kernel name, in which
    /// sysfs writes `!` for `/` (`cciss!c0d0` is `/dev/cciss/c0d0`).
    pub fn dev_path(&self) -> PathBuf {
        Path::new("/dev").join(self.name.replace('!', "/"))
    }

    /// The device's I/O counters now.
    /// The largest request the kernel sends the device now
    /// (`queue/max_sectors_kb` of its whole disk), bytes; `None` when
    /// unknown.
    pub fn max_transfer_bytes(&self) -> Option<u64> {
        let path = format!("/sys/class/block/{}/queue/max_sectors_kb", self.disk);
        let kb: u64 = std::fs::read_to_string(path).ok()?.trim().parse().ok()?;
        (kb > 0).then_some(kb * 1024)
    }

    pub fn read_stat(&self) -> io::Result<DiskStat> {
        read_stat_in(Path::new(SYSFS), &self.name)
    }

    /// Kernel names of the partitions of this device's whole disk, in
    /// partition-number order. Empty for an unpartitioned disk.
    pub fn partitions(&self) -> io::Result<Vec<String>> {
        partitions_in(Path::new(SYSFS), &self.disk)
    }

    /// Kernel names of the devices stacked on this one (device-mapper, md,
    /// bcache...), from `/sys/class/block/<name>/holders/`, sorted.
    pub fn holders(&self) -> io::Result<Vec<String>> {
        holders_in(Path::new(SYSFS), &self.name)
    }
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

fn with_path(e: io::Error, path: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// The trimmed text of a sysfs attribute.
fn read_attr(path: &Path) -> io::Result<String> {
    fs::read_to_string(path)
        .map(|s| s.trim().to_owned())
        .map_err(|e| with_path(e, path))
}

fn read_num<T: std::str::FromStr>(path: &Path) -> io::Result<T> {
    let s = read_attr(path)?;
    s.parse()
        .map_err(|_| invalid(format!("{}: not a number: {s:?}", path.display())))
}

/// Like `read_num`, but `None` when the attribute is absent or unreadable.
fn read_num_opt<T: std::str::FromStr>(path: &Path) -> Option<T> {
    read_attr(path).ok()?.parse().ok()
}

/// Parses the `dev` attribute, `major:minor`.
fn parse_dev(text: &str) -> Option<(u32, u32)> {
    let (maj, min) = text.trim().split_once(':')?;
    Some((maj.parse().ok()?, min.parse().ok()?))
}

fn check_name(name: &str) -> io::Result<()> {
    if name.is_empty() || name == "." || name == ".." || name.contains('/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a block device kernel name: {name:?}"),
        ));
    }
    Ok(())
}

/// [`BlockDevice::from_dev_t`] under a sysfs tree rooted at `sys`.
pub fn from_dev_t_in(sys: &Path, major: u32, minor: u32) -> io::Result<BlockDevice> {
    let link = sys.join("dev/block").join(format!("{major}:{minor}"));
    let dir = fs::canonicalize(&link).map_err(|e| with_path(e, &link))?;
    from_sysfs_dir(&dir, major, minor)
}

/// [`BlockDevice::from_name`] under a sysfs tree rooted at `sys`.
pub fn from_name_in(sys: &Path, name: &str) -> io::Result<BlockDevice> {
    check_name(name)?;
    let link = sys.join("class/block").join(name);
    let dir = fs::canonicalize(&link).map_err(|e| with_path(e, &link))?;
    let dev_file = dir.join("dev");
    let text = read_attr(&dev_file)?;
    let (major, minor) = parse_dev(&text)
        .ok_or_else(|| invalid(format!("{}: not major:minor: {text:?}", dev_file.display())))?;
    from_sysfs_dir(&dir, major, minor)
}

/// Reads one device from its canonical directory under `/sys/devices`.
fn from_sysfs_dir(dir: &Path, major: u32, minor: u32) -> io::Result<BlockDevice> {
    let file_name = |p: &Path| -> io::Result<String> {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| invalid(format!("{}: no device name in path", p.display())))
    };
    let name = file_name(dir)?;
    let partition = dir.join("partition").exists();
    let disk_dir = if partition {
        dir.parent()
            .ok_or_else(|| invalid(format!("{}: partition without a disk", dir.display())))?
    } else {
        dir
    };
    let disk = file_name(disk_dir)?;

    let sectors: u64 = read_num(&dir.join("size"))?;
    let size_bytes = sectors
        .checked_mul(SECTOR_BYTES)
        .ok_or_else(|| invalid(format!("{}: size overflows", dir.display())))?;
    let queue = disk_dir.join("queue");
    let logical_block_size = read_num(&queue.join("logical_block_size"))?;
    let physical_block_size = read_num(&queue.join("physical_block_size"))?;
    let own_ro: u32 = read_num(&dir.join("ro"))?;
    let disk_ro: u32 = if partition {
        read_num_opt(&disk_dir.join("ro")).unwrap_or(0)
    } else {
        own_ro
    };
    let rotational = read_num_opt::<u32>(&queue.join("rotational")).map(|r| r != 0);
    let model = read_attr(&disk_dir.join("device/model"))
        .ok()
        .filter(|m| !m.is_empty());
    let loop_backing_file = fs::read_to_string(disk_dir.join("loop/backing_file"))
        .ok()
        .map(|s| s.trim_end_matches('\n').to_owned())
        .filter(|s| !s.is_empty());

    Ok(BlockDevice {
        name,
        major,
        minor,
        disk,
        partition,
        size_bytes,
        logical_block_size,
        physical_block_size,
        read_only: own_ro != 0 || disk_ro != 0,
        rotational,
        model,
        loop_backing_file,
    })
}

fn read_stat_in(sys: &Path, name: &str) -> io::Result<DiskStat> {
    check_name(name)?;
    let path = sys.join("class/block").join(name).join("stat");
    let text = fs::read_to_string(&path).map_err(|e| with_path(e, &path))?;
    DiskStat::parse(&text).ok_or_else(|| {
        invalid(format!(
            "{}: not a block stat line: {:?}",
            path.display(),
            text.trim()
        ))
    })
}

fn partitions_in(sys: &Path, disk: &str) -> io::Result<Vec<String>> {
    check_name(disk)?;
    let dir = sys.join("class/block").join(disk);
    let mut found = Vec::new();
    for entry in fs::read_dir(&dir).map_err(|e| with_path(e, &dir))? {
        let entry = entry?;
        let part_file = entry.path().join("partition");
        if !part_file.is_file() {
            continue;
        }
        let number = read_num_opt::<u32>(&part_file).unwrap_or(u32::MAX);
        found.push((number, entry.file_name().to_string_lossy().into_owned()));
    }
    found.sort();
    Ok(found.into_iter().map(|(_, name)| name).collect())
}

fn holders_in(sys: &Path, name: &str) -> io::Result<Vec<String>> {
    check_name(name)?;
    let dir = sys.join("class/block").join(name).join("holders");
    let mut names = Vec::new();
    for entry in fs::read_dir(&dir).map_err(|e| with_path(e, &dir))? {
        names.push(entry?.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    Ok(names)
}

/// The counters of `/sys/class/block/<dev>/stat` (Documentation/block/stat.rst).
///
/// Sector counts are in 512-byte units whatever the device's block size;
/// times are milliseconds. Discard and flush counters, which newer kernels
/// append, are not kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskStat {
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub read_ticks_ms: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub write_ticks_ms: u64,
    pub in_flight: u64,
    pub io_ticks_ms: u64,
    pub time_in_queue_ms: u64,
}

impl DiskStat {
    /// Parses the whitespace-separated counters. Kernels give 11 (before
    /// 4.18), 15 (with discards) or 17 (with flushes) fields; any count of 11
    /// or more is accepted so that fields a later kernel appends do not break
    /// parsing. `None` when there are fewer than 11 or one is not a number.
    pub fn parse(text: &str) -> Option<DiskStat> {
        let values: Vec<u64> = text
            .split_whitespace()
            .map(|f| f.parse().ok())
            .collect::<Option<_>>()?;
        let v: &[u64; 11] = values.get(..11)?.try_into().ok()?;
        Some(DiskStat {
            read_ios: v[0],
            read_merges: v[1],
            read_sectors: v[2],
            read_ticks_ms: v[3],
            write_ios: v[4],
            write_merges: v[5],
            write_sectors: v[6],
            write_ticks_ms: v[7],
            in_flight: v[8],
            io_ticks_ms: v[9],
            time_in_queue_ms: v[10],
        })
    }

    /// What happened between `earlier` and `self`: each counter's difference,
    /// floored at zero (a counter can go backwards when a device is removed
    /// and re-added under the same name). `in_flight` is a level, not a
    /// counter, so it is `self`'s.
    pub fn since(&self, earlier: &DiskStat) -> DiskStat {
        DiskStat {
            read_ios: self.read_ios.saturating_sub(earlier.read_ios),
            read_merges: self.read_merges.saturating_sub(earlier.read_merges),
            read_sectors: self.read_sectors.saturating_sub(earlier.read_sectors),
            read_ticks_ms: self.read_ticks_ms.saturating_sub(earlier.read_ticks_ms),
            write_ios: self.write_ios.saturating_sub(earlier.write_ios),
            write_merges: self.write_merges.saturating_sub(earlier.write_merges),
            write_sectors: self.write_sectors.saturating_sub(earlier.write_sectors),
            write_ticks_ms: self.write_ticks_ms.saturating_sub(earlier.write_ticks_ms),
            in_flight: self.in_flight,
            io_ticks_ms: self.io_ticks_ms.saturating_sub(earlier.io_ticks_ms),
            time_in_queue_ms: self
                .time_in_queue_ms
                .saturating_sub(earlier.time_in_queue_ms),
        }
    }

    /// Bytes read, from the 512-byte sector counter.
    pub fn read_bytes(&self) -> u64 {
        self.read_sectors.saturating_mul(SECTOR_BYTES)
    }

    /// Bytes written, from the 512-byte sector counter.
    pub fn write_bytes(&self) -> u64 {
        self.write_sectors.saturating_mul(SECTOR_BYTES)
    }
}

/// One line of /proc/self/mountinfo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mount {
    pub major: u32,
    pub minor: u32,
    /// What is mounted, as a path inside its file system (`/` for a whole
    /// file system; a file's own path where a file is bind-mounted).
    /// Unescaped; not stored with results.
    #[serde(skip)]
    pub root: String,
    /// Unescaped (`\040` in the file is a space here).
    pub mount_point: String,
    pub fstype: String,
    pub source: String,
    /// The per-mount options then the superblock options, comma-separated,
    /// an option appearing in both only once (`rw,relatime,errors=remount-ro`).
    pub options: String,
}

/// A parsed mountinfo line together with the ids that place it in the tree.
#[derive(Debug, Clone)]
struct MountEntry {
    id: u64,
    parent: u64,
    mount: Mount,
}

/// Undoes the kernel's octal escaping (`\040` space, `\011` tab, `\012`
/// newline, `\134` backslash). A backslash not followed by three octal digits
/// is kept as it is.
pub(crate) fn unescape_octal(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && let Some(d) = b.get(i + 1..i + 4)
            && d.iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v =
                u32::from(d[0] - b'0') * 64 + u32::from(d[1] - b'0') * 8 + u32::from(d[2] - b'0');
            if let Ok(byte) = u8::try_from(v) {
                out.push(byte);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn join_options(per_mount: &str, per_super: &str) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for opt in per_mount.split(',').chain(per_super.split(',')) {
        if !opt.is_empty() && !seen.contains(&opt) {
            seen.push(opt);
        }
    }
    seen.join(",")
}

/// Parses one mountinfo line (proc(5)):
/// `id parent major:minor root mount-point options [optional...] - fstype source super-options`.
fn parse_mountinfo_line(line: &str) -> Option<MountEntry> {
    let fields: Vec<&str> = line.split(' ').collect();
    let sep = fields.iter().position(|f| *f == "-")?;
    if sep < 6 {
        return None;
    }
    let id = fields[0].parse().ok()?;
    let parent = fields[1].parse().ok()?;
    let (major, minor) = parse_dev(fields[2])?;
    let after = &fields[sep + 1..];
    let fstype = after.first()?;
    Some(MountEntry {
        id,
        parent,
        mount: Mount {
            major,
            minor,
            root: unescape_octal(fields[3]),
            mount_point: unescape_octal(fields[4]),
            fstype: unescape_octal(fstype),
            source: after.get(1).map(|s| unescape_octal(s)).unwrap_or_default(),
            options: join_options(fields[5], after.get(2).copied().unwrap_or("")),
        },
    })
}

fn parse_entries(text: &str) -> Vec<MountEntry> {
    text.lines().filter_map(parse_mountinfo_line).collect()
}

/// Parses the text of `/proc/self/mountinfo`, in file order. Lines that do not
/// have the documented shape are skipped.
pub fn parse_mountinfo(text: &str) -> Vec<Mount> {
    parse_entries(text).into_iter().map(|e| e.mount).collect()
}

fn read_mountinfo() -> io::Result<String> {
    let path = Path::new("/proc/self/mountinfo");
    fs::read_to_string(path).map_err(|e| with_path(e, path))
}

/// The number of normal components of `mount_point` when it is a
/// path-component prefix of `path` (so `/mnt/a` is a prefix of `/mnt/a/b` but
/// not of `/mnt/ab`); `None` when it is not.
fn prefix_depth(mount_point: &str, path: &Path) -> Option<usize> {
    let mp = Path::new(mount_point);
    if !mp.is_absolute() || !path.starts_with(mp) {
        return None;
    }
    Some(
        mp.components()
            .filter(|c| matches!(c, Component::Normal(_)))
            .count(),
    )
}

/// The mount an absolute, canonical `path` resolves into.
///
/// The mount tree is walked from the root: at each mount, among its children
/// whose mount point is a prefix of `path`, the one nearest the root covers the
/// others (a mount on `/a` hides whatever was mounted on `/a/b` before it), and
/// a mount stacked on the same point is a child of the one it covers, so it is
/// reached next. When the tree cannot be walked (no root found) the rule falls
/// back to the longest mount-point prefix, later lines winning ties.
fn find_mount(entries: &[MountEntry], path: &Path) -> Option<Mount> {
    let candidates: Vec<(usize, usize)> = entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| prefix_depth(&e.mount.mount_point, path).map(|d| (i, d)))
        .collect();
    let ids: Vec<u64> = entries.iter().map(|e| e.id).collect();
    // The root: a "/" mount whose parent is not listed (it lies outside this
    // process's root) or is itself. The last such line wins.
    let root = candidates.iter().rev().find(|&&(i, d)| {
        let e = &entries[i];
        d == 0 && (e.parent == e.id || !ids.contains(&e.parent))
    });
    if let Some(&(mut cur, _)) = root {
        for _ in 0..entries.len() {
            let cur_id = entries[cur].id;
            let mut next: Option<(usize, usize)> = None;
            for &(i, d) in &candidates {
                if i == cur || entries[i].parent != cur_id {
                    continue;
                }
                if next.is_none_or(|(_, best)| d <= best) {
                    next = Some((i, d));
                }
            }
            match next {
                Some((i, _)) => cur = i,
                None => return Some(entries[cur].mount.clone()),
            }
        }
    }
    let mut best: Option<(usize, usize)> = None;
    for &(i, d) in &candidates {
        if best.is_none_or(|(_, b)| d >= b) {
            best = Some((i, d));
        }
    }
    best.map(|(i, _)| entries[i].mount.clone())
}

/// The mount that `path` lives on: the mount that the canonical path resolves
/// into, in this process's mount namespace. `Ok(None)` only if no mount point
/// is a prefix of it, which does not happen in an ordinary namespace.
pub fn mount_of(path: &Path) -> io::Result<Option<Mount>> {
    let canonical = fs::canonicalize(path).map_err(|e| with_path(e, path))?;
    let entries = parse_entries(&read_mountinfo()?);
    Ok(find_mount(&entries, &canonical))
}

/// Every mount of the filesystem on device `major:minor` in this process's
/// mount namespace, in mountinfo order (bind mounts and over-mounted ones
/// included).
pub fn mounts_of_device(major: u32, minor: u32) -> io::Result<Vec<Mount>> {
    Ok(parse_mountinfo(&read_mountinfo()?)
        .into_iter()
        .filter(|m| m.major == major && m.minor == minor)
        .collect())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::symlink;
    use std::process::{Command, Stdio};
    use std::sync::{Mutex, MutexGuard};
    use std::time::{Duration, Instant};

    // ---- pure parsing ----------------------------------------------------

    const STAT_11: &str = "    4410      171   329502     2193     1527     2079    61568     3062        0     3436     5256\n";
    const STAT_15: &str = "4410 171 329502 2193 1527 2079 61568 3062 2 3436 5256 12 0 4096 7";
    const STAT_17: &str =
        "  4410  171 329502 2193 1527 2079 61568 3062 0 3436 5256 12 0 4096 7 99 33\n";

    #[test]
    fn diskstat_parses_11_15_and_17_fields() {
        let want = DiskStat {
            read_ios: 4410,
            read_merges: 171,
            read_sectors: 329502,
            read_ticks_ms: 2193,
            write_ios: 1527,
            write_merges: 2079,
            write_sectors: 61568,
            write_ticks_ms: 3062,
            in_flight: 0,
            io_ticks_ms: 3436,
            time_in_queue_ms: 5256,
        };
        assert_eq!(DiskStat::parse(STAT_11), Some(want));
        assert_eq!(
            DiskStat::parse(STAT_15),
            Some(DiskStat {
                in_flight: 2,
                ..want
            })
        );
        assert_eq!(DiskStat::parse(STAT_17), Some(want));
        assert_eq!(DiskStat::parse(STAT_17).unwrap().read_bytes(), 329502 * 512);
        assert_eq!(DiskStat::parse(STAT_17).unwrap().write_bytes(), 61568 * 512);
    }

    #[test]
    fn diskstat_rejects_garbage() {
        assert_eq!(DiskStat::parse(""), None);
        assert_eq!(DiskStat::parse("\n"), None);
        assert_eq!(DiskStat::parse("1 2 3 4 5 6 7 8 9 10"), None);
        assert_eq!(DiskStat::parse("1 2 3 4 5 6 7 8 9 10 x"), None);
        assert_eq!(DiskStat::parse("1 2 3 4 5 6 7 8 9 10 -11"), None);
        assert_eq!(DiskStat::parse("1 2 3 4 5 6 7 8 9 10 11 junk"), None);
        assert_eq!(
            DiskStat::parse("major minor name 1 2 3 4 5 6 7 8 9 10 11"),
            None
        );
        assert_eq!(
            DiskStat::parse("1 2 3 4 5 6 7 8 9 10 18446744073709551616"),
            None
        );
    }

    #[test]
    fn diskstat_since_saturates_and_keeps_in_flight() {
        let earlier = DiskStat::parse("10 1 80 5 20 2 160 7 4 30 40").unwrap();
        let later = DiskStat::parse("15 1 120 9 19 5 200 8 1 33 50").unwrap();
        let d = later.since(&earlier);
        assert_eq!(
            d,
            DiskStat {
                read_ios: 5,
                read_merges: 0,
                read_sectors: 40,
                read_ticks_ms: 4,
                write_ios: 0, // went backwards: floored
                write_merges: 3,
                write_sectors: 40,
                write_ticks_ms: 1,
                in_flight: 1,
                io_ticks_ms: 3,
                time_in_queue_ms: 10,
            }
        );
        assert_eq!(later.since(&later).in_flight, 1);
        assert_eq!(earlier.since(&later).read_ios, 0);
    }

    const MOUNTINFO: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard
40 27 7:3 / /mnt/my\\040disk rw,nosuid shared:7 master:2 - ext4 /dev/loop3 rw,errors=remount-ro
41 27 0:40 /sub /srv\\011tab\\012nl\\134bs ro,relatime - tmpfs  rw,size=4k
not a mountinfo line
42 27 0:41 / /broken rw
";

    #[test]
    fn mountinfo_parses_fields_escapes_and_optional_fields() {
        let m = parse_mountinfo(MOUNTINFO);
        assert_eq!(m.len(), 4, "{m:#?}");
        assert_eq!(
            m[1],
            Mount {
                major: 254,
                minor: 0,
                root: "/".into(),
                mount_point: "/".into(),
                fstype: "ext4".into(),
                source: "/dev/vda".into(),
                options: "rw,relatime,discard".into(),
            }
        );
        assert_eq!(
            m[2],
            Mount {
                major: 7,
                minor: 3,
                root: "/".into(),
                mount_point: "/mnt/my disk".into(),
                fstype: "ext4".into(),
                source: "/dev/loop3".into(),
                options: "rw,nosuid,errors=remount-ro".into(),
            }
        );
        // An empty source leaves an empty field between two spaces.
        assert_eq!(m[3].mount_point, "/srv\ttab\nnl\\bs");
        assert_eq!(m[3].source, "");
        assert_eq!(m[3].fstype, "tmpfs");
        assert_eq!(m[3].options, "ro,relatime,rw,size=4k");
    }

    #[test]
    fn unescape_octal_keeps_what_is_not_an_escape() {
        assert_eq!(unescape_octal(r"a\040b"), "a b");
        assert_eq!(unescape_octal(r"a\\b"), r"a\\b");
        assert_eq!(unescape_octal(r"a\04"), r"a\04");
        assert_eq!(unescape_octal(r"a\089"), r"a\089");
        assert_eq!(unescape_octal(r"\777x"), r"\777x");
        assert_eq!(unescape_octal(r"end\"), r"end\");
    }

    fn find(text: &str, path: &str) -> Option<String> {
        find_mount(&parse_entries(text), Path::new(path)).map(|m| m.source)
    }

    #[test]
    fn mount_lookup_uses_component_prefixes_and_stacking() {
        let text = "\
1 1 0:1 / / rw - rootfs rootfs rw
27 1 254:0 / / rw - ext4 root rw
30 27 7:0 / /mnt/a rw - ext4 a rw
31 27 7:1 / /mnt/ab rw - ext4 ab rw
32 30 7:2 / /mnt/a rw - ext4 a-over rw
33 27 7:3 / /mnt/x/y rw - ext4 xy rw
34 27 7:4 / /mnt/x rw - ext4 x-later rw
35 27 7:5 / /mnt/my\\040disk rw - ext4 sp rw
";
        assert_eq!(find(text, "/").as_deref(), Some("root"));
        assert_eq!(find(text, "/etc/passwd").as_deref(), Some("root"));
        // Over-mount on the same point: the later one is on top.
        assert_eq!(find(text, "/mnt/a").as_deref(), Some("a-over"));
        assert_eq!(find(text, "/mnt/a/f").as_deref(), Some("a-over"));
        // `/mnt/a` is not a prefix of `/mnt/ab`.
        assert_eq!(find(text, "/mnt/ab/f").as_deref(), Some("ab"));
        assert_eq!(find(text, "/mnt/abc").as_deref(), Some("root"));
        // A later mount on `/mnt/x` hides the earlier one on `/mnt/x/y`.
        assert_eq!(find(text, "/mnt/x/y/f").as_deref(), Some("x-later"));
        assert_eq!(find(text, "/mnt/my disk/f").as_deref(), Some("sp"));

        // Without a root (parents all listed, none its own), the longest
        // prefix wins and later lines win ties.
        let rootless = "\
5 6 254:0 / / rw - ext4 root rw
6 5 7:0 / /mnt rw - ext4 first rw
7 5 7:1 / /mnt rw - ext4 second rw
";
        assert_eq!(find(rootless, "/mnt/f").as_deref(), Some("second"));
        assert_eq!(find(rootless, "/usr").as_deref(), Some("root"));
        assert_eq!(find("", "/usr"), None);
    }

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
                return Err(
                    "the kernel did not scan the partition table and partx is missing".into(),
                );
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
}
