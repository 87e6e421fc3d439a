//! One block device (whole disk or partition) as sysfs describes it: its
//! numbers, size, block sizes, read-only flag, rotation, model and, for a
//! loop device, the file behind it.

use super::SECTOR_BYTES;
use super::attrs::{
    SYSFS, check_name, invalid, parse_dev, read_attr, read_num, read_num_opt, with_path,
};
use serde::{Deserialize, Serialize};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// One block device (whole disk or partition) as the kernel describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BlockDevice {
    /// Kernel name: `sda1`, `loop0`, `nvme0n1p2`, `mmcblk0`.
    pub name: String,
    /// Major device number.
    pub major: u32,
    /// Minor device number.
    pub minor: u32,
    /// Kernel name of the whole disk (`sda` for `sda1`; itself for a disk).
    pub disk: String,
    /// True for a partition, false for a whole disk.
    pub partition: bool,
    /// Size of the device, bytes.
    pub size_bytes: u64,
    /// Smallest unit the device addresses, bytes.
    pub logical_block_size: u32,
    /// Smallest unit the device writes without read-modify-write, bytes.
    pub physical_block_size: u32,
    /// The device refuses writes (its own `ro` flag or its disk's).
    pub read_only: bool,
    /// `queue/rotational` of the disk. Virtual disks often claim to rotate
    /// (virtio-blk reports 1 unless the host says otherwise), so this is the
    /// kernel's belief, not a measurement.
    pub rotational: Option<bool>,
    /// `device/model` of the disk; null when the kernel gives none.
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
        BlockDevice::from_dev(rustix::fs::major(dev), rustix::fs::minor(dev))
    }

    /// The block device with number `major:minor`, or `Ok(None)` where there
    /// is no single one (major 0, an anonymous device) or sysfs does not
    /// know it; see [`BlockDevice::from_path`].
    pub fn from_dev(major: u32, minor: u32) -> io::Result<Option<BlockDevice>> {
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

    /// The largest request the kernel sends the device now
    /// (`queue/max_sectors_kb` of its whole disk), bytes; `None` when
    /// unknown.
    pub fn max_transfer_bytes(&self) -> Option<u64> {
        let path = format!("/sys/class/block/{}/queue/max_sectors_kb", self.disk);
        let kb: u64 = std::fs::read_to_string(path).ok()?.trim().parse().ok()?;
        (kb > 0).then_some(kb * 1024)
    }
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
