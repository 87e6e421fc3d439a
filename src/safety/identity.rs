//! Which device or file a journal belongs to.
//!
//! A journal restores bytes to one particular medium. Writing them to any
//! other (a card swapped in the same reader, a loop device re-attached over
//! another file, a file replaced by a new one of the same name) would destroy
//! that medium's data, so the journal records an identity and `recover`
//! compares it with what the path names now. For a block device the identity
//! is the device number, the size, and what sysfs tells of the hardware
//! (model, serial or WWID, an SD card's CID, a loop device's backing file);
//! for a regular file it is the file system's device number, the inode
//! number, the size and (format 2 on) the birth time and inode generation,
//! which tell a file from a new one that took its inode; for a loop device
//! also the backing file's device, inode, birth and offset. All are read
//! from a descriptor ([`Identity::of_file`]): the one a test writes
//! through, or the one `recover` opened and will write through. Paths are stored canonical and absolute, so that
//! `recover` works from any directory; a device replugged under another node
//! name (`/dev/sdb` now `/dev/sdc`) is found again by [`locate`] from its
//! serial, CID or loop backing file.

use crate::probe::sysfs::BlockDevice;
use crate::safety::birth::{self, Backing, Stamp, differ};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// What a journal records about the medium it was taken from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    /// The path the user gave (`/dev/sdb`, `/data/disk.img`).
    pub path: String,
    /// `block_device` or `file`.
    pub kind: String,
    /// Device number of a block device; of the file system holding a file.
    pub major: u32,
    pub minor: u32,
    /// Inode number of a regular file.
    pub inode: Option<u64>,
    pub size: u64,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub loop_backing_file: Option<String>,
    /// An SD/MMC card's CID register (unique per card).
    #[serde(default)]
    pub cid: Option<String>,
    /// A regular file's birth time, where its file system keeps one
    /// (format 2 on; see [`crate::safety::birth`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub birth: Option<Stamp>,
    /// A regular file's inode generation, where its file system keeps one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<u32>,
    /// The file behind a loop device: device, inode, offset, birth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_backing: Option<Backing>,
}

impl Identity {
    /// The identity of what `path` names now (opened once, read-only,
    /// and examined through that descriptor).
    pub fn of_path(path: &Path) -> io::Result<Identity> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)?;
        Identity::of_file(&file, path)
    }

    /// The identity of the object open on `file`; `name` is only recorded
    /// (made absolute), for `recover` to look there first and for messages.
    pub fn of_file(file: &File, name: &Path) -> io::Result<Identity> {
        let meta = file.metadata()?;
        let shown = absolute(name).display().to_string();
        if meta.file_type().is_block_device() {
            let (major, minor) = (
                rustix::fs::major(meta.rdev()),
                rustix::fs::minor(meta.rdev()),
            );
            let dev = BlockDevice::from_dev_t(major, minor).ok();
            let backing_name = dev.as_ref().and_then(|d| d.loop_backing_file.clone());
            Ok(Identity {
                path: shown,
                kind: "block_device".into(),
                major,
                minor,
                size: block_size_of(file)?,
                model: dev.as_ref().and_then(|d| d.model.clone()),
                serial: dev.as_ref().and_then(serial_of),
                cid: dev.as_ref().and_then(cid_of),
                loop_backing: birth::backing_of(file, backing_name.as_deref()),
                loop_backing_file: backing_name,
                ..Identity::default()
            })
        } else if meta.is_file() {
            Ok(Identity {
                path: shown,
                kind: "file".into(),
                major: rustix::fs::major(meta.dev()),
                minor: rustix::fs::minor(meta.dev()),
                inode: Some(meta.ino()),
                size: meta.len(),
                birth: birth::birth_of(file),
                generation: birth::generation_of(file),
                ..Identity::default()
            })
        } else {
            Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{shown} is neither a block device nor a regular file"),
            ))
        }
    }

    /// Whether the object this identity describes is proven gone, `now`
    /// having taken its inode: the same device and inode (of the file, or
    /// of the file behind a loop device) with another birth time or inode
    /// generation. Its journal can never be applied anywhere.
    pub fn replaced_by(&self, now: &Identity) -> bool {
        let file_reborn = self.kind == "file"
            && now.kind == "file"
            && (self.major, self.minor, self.inode) == (now.major, now.minor, now.inode)
            && (differ(&self.birth, &now.birth) || differ(&self.generation, &now.generation));
        let backing_reborn = match (&self.loop_backing, &now.loop_backing) {
            (Some(a), Some(b)) => {
                (a.dev, a.inode) == (b.dev, b.inode)
                    && (differ(&a.birth, &b.birth) || differ(&a.generation, &b.generation))
            }
            _ => false,
        };
        file_reborn || backing_reborn
    }

    /// Why `now` is not the medium this identity describes, or `None` when
    /// it is. Facts one side does not know are not compared.
    pub fn mismatch(&self, now: &Identity) -> Option<String> {
        let mut why = Vec::new();
        if self.kind != now.kind {
            why.push(format!("it was a {}, now it is a {}", self.kind, now.kind));
        }
        if (self.major, self.minor) != (now.major, now.minor) {
            why.push(format!(
                "device number {}:{} recorded, {}:{} now",
                self.major, self.minor, now.major, now.minor
            ));
        }
        if self.size != now.size {
            why.push(format!("size {} recorded, {} now", self.size, now.size));
        }
        let pairs = [
            (
                "inode",
                self.inode.map(|i| i.to_string()),
                now.inode.map(|i| i.to_string()),
            ),
            ("model", self.model.clone(), now.model.clone()),
            ("serial", self.serial.clone(), now.serial.clone()),
            ("CID", self.cid.clone(), now.cid.clone()),
            (
                "loop backing file",
                self.loop_backing_file.clone(),
                now.loop_backing_file.clone(),
            ),
        ];
        if differ(&self.birth, &now.birth) || differ(&self.generation, &now.generation) {
            why.push("another file now has its inode (birth time or generation differ)".into());
        }
        if backing_differs(&self.loop_backing, &now.loop_backing) {
            why.push("another file (or offset) now backs the loop device".into());
        }
        for (name, was, is) in pairs {
            if let (Some(was), Some(is)) = (was, is) {
                if was != is {
                    why.push(format!("{name} {was:?} recorded, {is:?} now"));
                }
            }
        }
        (!why.is_empty()).then(|| why.join("; "))
    }

    /// Whether `now` is this medium, possibly under another node name: the
    /// same in every fact ([`Identity::mismatch`]), or a block device whose
    /// serial, CID or loop backing file (recorded on both sides) and size
    /// agree while its device number changed (replugged).
    pub fn is_same_medium(&self, now: &Identity) -> bool {
        if self.mismatch(now).is_none() {
            return true;
        }
        if self.kind != "block_device" || now.kind != "block_device" || self.size != now.size {
            return false;
        }
        let key_agrees = |a: &Option<String>, b: &Option<String>| matches!((a, b), (Some(a), Some(b)) if !a.is_empty() && a == b);
        if backing_differs(&self.loop_backing, &now.loop_backing) {
            return false;
        }
        let strong = key_agrees(&self.serial, &now.serial)
            || key_agrees(&self.cid, &now.cid)
            || key_agrees(&self.loop_backing_file, &now.loop_backing_file);
        let model_agrees = match (&self.model, &now.model) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        strong && model_agrees
    }

    /// Whether a serial, CID or loop backing file can find this medium
    /// again under another name.
    fn has_strong_key(&self) -> bool {
        [&self.serial, &self.cid, &self.loop_backing_file]
            .iter()
            .any(|k| k.as_ref().is_some_and(|v| !v.is_empty()))
    }

    /// A short name for file names and messages: `loop3`, `disk.img`.
    pub fn short_name(&self) -> String {
        let base = Path::new(&self.path)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "target".into());
        crate::units::escape::file_name(&base)
    }
}

/// Whether two loop backings are both known and not the same file at the
/// same offset.
fn backing_differs(a: &Option<Backing>, b: &Option<Backing>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => {
            (a.dev, a.inode, a.offset) != (b.dev, b.inode, b.offset)
                || differ(&a.birth, &b.birth)
                || differ(&a.generation, &b.generation)
        }
        _ => false,
    }
}

/// The serial number sysfs gives for the device's disk: `device/serial`
/// (SD/MMC, NVMe), else the WWID (NVMe, SCSI).
fn serial_of(dev: &BlockDevice) -> Option<String> {
    let base = Path::new("/sys/class/block").join(&dev.disk);
    ["device/serial", "wwid", "device/wwid"]
        .iter()
        .filter_map(|rel| std::fs::read_to_string(base.join(rel)).ok())
        .map(|s| s.trim().to_string())
        .find(|s| !s.is_empty())
}

/// Where the medium an identity describes is now: its recorded path when
/// that is still it, else (a block device replugged under another name) the
/// one device whose serial, CID or loop backing file and size agree.
pub fn locate(recorded: &Identity) -> io::Result<std::path::PathBuf> {
    let path = Path::new(&recorded.path);
    let here = Identity::of_path(path);
    if let Ok(now) = &here {
        if recorded.mismatch(now).is_none() {
            return Ok(path.to_path_buf());
        }
    }
    if recorded.kind != "block_device" || !recorded.has_strong_key() {
        return here.map(|_| path.to_path_buf());
    }
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/sys/class/block")?.flatten() {
        let node = Path::new("/dev").join(entry.file_name());
        if let Ok(now) = Identity::of_path(&node) {
            if recorded.is_same_medium(&now) {
                found.push(node);
            }
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => here.map(|_| path.to_path_buf()).map_err(|_| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "no device with its serial, CID or backing file is connected (it was {})",
                    recorded.path
                ),
            )
        }),
        _ => Err(io::Error::other(format!(
            "several devices match it: {}",
            found
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// `path` made absolute and free of symbolic links where it exists
/// (`/dev/disk/by-id/...` becomes its `/dev/sdX`), else joined to the
/// working directory.
fn absolute(path: &Path) -> std::path::PathBuf {
    std::fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

/// The CID of an SD/MMC card (sysfs `device/cid`).
fn cid_of(dev: &BlockDevice) -> Option<String> {
    let path = Path::new("/sys/class/block")
        .join(&dev.disk)
        .join("device/cid");
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Size of a block device: the end of the device, sought on a reopen of
/// the descriptor held (its own file position, so the test's is untouched).
fn block_size_of(file: &File) -> io::Result<u64> {
    let own = crate::sys::reopen::reopen(file.as_fd(), rustix::fs::OFlags::RDONLY)?;
    Ok(rustix::fs::seek(&own, rustix::fs::SeekFrom::End(0))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_itself_and_not_its_replacement() {
        let (dir, path) = crate::safety::scratch::file_holding("disk.img", &[1u8; 8192]);
        let id = Identity::of_path(&path).unwrap();
        assert_eq!(id.mismatch(&Identity::of_path(&path).unwrap()), None);
        assert_eq!(id.short_name(), "disk.img");
        let other = dir.path().join("other.img");
        std::fs::write(&other, vec![1u8; 8192]).unwrap();
        std::fs::rename(&other, &path).unwrap();
        let why = id.mismatch(&Identity::of_path(&path).unwrap()).unwrap();
        assert!(why.contains("inode"), "{why}");
    }

    #[test]
    fn unknown_facts_are_not_compared() {
        let (_dir, path) = crate::safety::scratch::file_holding("f", b"x");
        let id = Identity::of_path(&path).unwrap();
        let mut bigger = id.clone();
        bigger.size += 1;
        assert!(id.mismatch(&bigger).unwrap().contains("size"));
        let mut with_model = id.clone();
        with_model.model = Some("card".into());
        assert_eq!(id.mismatch(&with_model), None);
    }

    fn card(minor: u32, serial: Option<&str>, cid: Option<&str>) -> Identity {
        Identity {
            path: format!("/dev/sd{}", (b'a' + minor as u8 / 16) as char),
            kind: "block_device".into(),
            major: 8,
            minor,
            inode: None,
            size: 32 << 30,
            model: Some("Card Reader".into()),
            serial: serial.map(String::from),
            loop_backing_file: None,
            cid: cid.map(String::from),
            ..Identity::default()
        }
    }

    #[test]
    fn a_replugged_device_is_the_same_medium_by_serial_or_cid() {
        let was = card(16, Some("0000123"), None);
        assert!(was.is_same_medium(&card(32, Some("0000123"), None)));
        assert!(!was.is_same_medium(&card(32, Some("0000999"), None)));
        let by_cid = card(16, None, Some("035344534331364780a1b2c3d4012301"));
        assert!(by_cid.is_same_medium(&card(48, None, Some("035344534331364780a1b2c3d4012301"))));
        assert!(!by_cid.is_same_medium(&card(48, None, Some("0353445343313647ffffffffff012301"))));
    }

    #[test]
    fn without_a_serial_or_cid_another_node_is_another_medium() {
        let was = card(16, None, None);
        assert!(was.is_same_medium(&card(16, None, None)));
        assert!(!was.is_same_medium(&card(32, None, None)));
        let mut smaller = card(32, Some("S"), None);
        smaller.size -= 512;
        assert!(
            !card(16, Some("S"), None).is_same_medium(&smaller),
            "size differs"
        );
        let mut other_model = card(32, Some("S"), None);
        other_model.model = Some("Other".into());
        assert!(!card(16, Some("S"), None).is_same_medium(&other_model));
    }
}
