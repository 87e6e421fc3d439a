//! Only storage is a target: a regular file or a directory on a file system
//! that keeps data, or a block device.
//!
//! Why: a benchmark reads and writes bytes, and everywhere else a "file" is
//! something else. A file in /proc or /sys is a kernel setting (writing "1"
//! to `read_ahead_kb` changes how the kernel reads ahead), a file in cgroup
//! moves processes, /dev/null swallows everything and measures nothing, a
//! FIFO or a socket blocks or talks to another program. None of these holds
//! data to measure, and writing to them changes the system. So they are
//! refused for every command, reads included, with the kind named.
//!
//! The decision is made on an opened descriptor, never on a path alone:
//! the path is opened with `O_PATH` (which follows symlinks, as
//! `/dev/disk/by-id` names need, but opens nothing: no FIFO blocks, no
//! driver's open runs), and `fstat`/`fstatfs` on it say what it is. The file
//! system is known by its magic number (`f_type`), which a mount point's
//! path or a source name cannot fake. The descriptors iocurve then measures
//! through are compared with the examined one ([`Examined::same_file`]), so
//! a path swapped in between is refused too.
//!
//! tmpfs and ramfs stay allowed (they keep files, in memory; the result says
//! the figures are memory speed). devtmpfs shares tmpfs's magic number, so a
//! tmpfs-like file system is looked up in the mount table by its device
//! number to tell the two apart.

use crate::error::usage;
use crate::probe::sysfs::parse_mountinfo;
use rustix::fs::{FileType, Mode, OFlags};
use std::io;
use std::os::fd::AsFd;
use std::path::Path;

/// (major, minor, inode): a file, whatever names it.
pub type FileId = (u32, u32, u64);

/// What a target is, when it is storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    Directory,
    File,
    BlockDevice,
}

/// Why something is not storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotStorage {
    CharDevice,
    Fifo,
    Socket,
    /// A file or directory on a pseudo file system, named as `mount -t`
    /// names it.
    Pseudo {
        fstype: &'static str,
        directory: bool,
    },
    /// A file type none of the above (a symlink opened as such).
    Other,
}

impl NotStorage {
    /// What it is, after "it is".
    fn what(&self) -> String {
        match self {
            NotStorage::CharDevice => {
                "a character device (a stream, not a block device: there is no stored data to measure)"
                    .into()
            }
            NotStorage::Fifo => "a FIFO (named pipe), which passes data between programs".into(),
            NotStorage::Socket => "a socket, which talks to another program".into(),
            NotStorage::Pseudo { fstype, directory } => format!(
                "a {} on {fstype}, a pseudo file system of kernel state, not stored data (writing to it changes the system)",
                if *directory { "directory" } else { "file" }
            ),
            NotStorage::Other => {
                "neither a regular file, a directory nor a block device".into()
            }
        }
    }

    /// The one-line refusal for `path`.
    pub fn refusal(&self, path: &Path) -> anyhow::Error {
        usage(format!(
            "{} is not storage: it is {}; give a file or directory on a disk-backed file system, or a block device (e.g. /dev/sdb)",
            path.display(),
            self.what()
        ))
    }
}

/// A target examined through a descriptor of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Examined {
    pub kind: Storage,
    /// The file itself (for a block device: its node).
    pub id: FileId,
    /// The device a block device node stands for.
    pub rdev: Option<(u32, u32)>,
    /// The file's length (0 for a block device: its size comes from the
    /// device).
    pub len: u64,
}

impl Examined {
    /// Checks that `fd`, opened by path after [`examine`], is the file that
    /// was examined: a path swapped in between (a symlink retargeted, a
    /// file renamed over) is refused before anything is read or written.
    pub fn same_file(&self, fd: impl AsFd, path: &Path) -> anyhow::Result<()> {
        let now = classify(fd.as_fd())
            .map_err(|e| {
                crate::error::IoFailure::new(
                    format!("cannot examine {}: {e}", path.display()),
                    Some(e),
                )
            })?
            .map_err(|why| why.refusal(path))?;
        if now.id == self.id && now.rdev == self.rdev {
            return Ok(());
        }
        Err(usage(format!(
            "{} was replaced while iocurve opened it (it names another file now), so nothing was read or written: make sure nothing renames or relinks it, then run the command again",
            path.display()
        )))
    }
}

/// Opens `path` with `O_PATH` and says what it is. The outer error is the
/// system's (no such file, permission denied); the inner one says why it
/// is not storage.
pub fn examine(path: &Path) -> io::Result<Result<Examined, NotStorage>> {
    Ok(examine_held(path)?.map(|held| held.examined))
}

/// A target examined through an `O_PATH` descriptor that it keeps: every
/// descriptor the target is measured, journalled and restored through is
/// reopened from this one ([`crate::sys::reopen`]), never from the name,
/// so what was checked is what is used however the name changes later.
#[derive(Debug)]
pub struct Held {
    pub fd: std::os::fd::OwnedFd,
    pub examined: Examined,
}

/// [`examine`], keeping the descriptor (see [`Held`]).
pub fn examine_held(path: &Path) -> io::Result<Result<Held, NotStorage>> {
    let fd = rustix::fs::open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty())?;
    Ok(classify(fd.as_fd())?.map(|examined| Held { fd, examined }))
}

/// [`examine`] for commands that need only the verdict: Ok with the kind,
/// or the refusal (exit 2) naming what it is instead; a path that cannot
/// be examined is left to the command's own checks.
pub fn refuse_unless_storage(path: &Path) -> anyhow::Result<Option<Storage>> {
    match examine(path) {
        Ok(Ok(e)) => Ok(Some(e.kind)),
        Ok(Err(why)) => Err(why.refusal(path)),
        Err(_) => Ok(None),
    }
}

/// What the open file `fd` is, from `fstat` and `fstatfs`.
pub fn classify(fd: impl AsFd) -> io::Result<Result<Examined, NotStorage>> {
    let st = rustix::fs::fstat(&fd)?;
    let id = (
        rustix::fs::major(st.st_dev),
        rustix::fs::minor(st.st_dev),
        st.st_ino,
    );
    let kind = match FileType::from_raw_mode(st.st_mode) {
        FileType::BlockDevice => {
            // Wherever its node lives (devtmpfs, usually), a block device
            // is storage.
            return Ok(Ok(Examined {
                kind: Storage::BlockDevice,
                id,
                rdev: Some((rustix::fs::major(st.st_rdev), rustix::fs::minor(st.st_rdev))),
                len: 0,
            }));
        }
        FileType::RegularFile => Storage::File,
        FileType::Directory => Storage::Directory,
        FileType::CharacterDevice => return Ok(Err(NotStorage::CharDevice)),
        FileType::Fifo => return Ok(Err(NotStorage::Fifo)),
        FileType::Socket => return Ok(Err(NotStorage::Socket)),
        _ => return Ok(Err(NotStorage::Other)),
    };
    let fs = rustix::fs::fstatfs(&fd)?;
    if let Some(fstype) = pseudo_fs(fs.f_type as u32, (id.0, id.1)) {
        return Ok(Err(NotStorage::Pseudo {
            fstype,
            directory: kind == Storage::Directory,
        }));
    }
    Ok(Ok(Examined {
        kind,
        id,
        rdev: None,
        len: st.st_size.max(0) as u64,
    }))
}

/// The pseudo file systems, by the magic number `statfs(2)` reports
/// (linux/magic.h and the kernel sources), with the name `mount -t` takes.
const PSEUDO_FS: &[(u32, &str)] = &[
    (0x9fa0, "proc"),
    (0x6265_6572, "sysfs"),
    (0x1cd1, "devpts"),
    (0x0027_e0eb, "cgroup"),
    (0x6367_7270, "cgroup2"),
    (0x6462_6720, "debugfs"),
    (0x7472_6163, "tracefs"),
    (0x7363_6673, "securityfs"),
    (0x6265_6570, "configfs"),
    (0x6165_676c, "pstore"),
    (0xcafe_4a11, "bpf"),
    (0xde5e_81e4, "efivarfs"),
    (0x6573_5543, "fusectl"),
    (0x1980_0202, "mqueue"),
    (0x0187, "autofs"),
    (0x4249_4e4d, "binfmt_misc"),
    (0x6e73_6673, "nsfs"),
    (0x6759_6969, "rpc_pipefs"),
    (0x6e66_7364, "nfsd"),
    (0x9584_58f6, "hugetlbfs"),
    (0xf97c_ff8c, "selinuxfs"),
    (0x4341_5d53, "smackfs"),
    (0x0765_5821, "resctrl"),
    (0x9fa1, "openpromfs"),
    (0x9fa2, "usbfs"),
    (0xabba_1974, "xenfs"),
    (0x6c6f_6f70, "binder"),
    (0x5049_5045, "pipefs"),
    (0x534f_434b, "sockfs"),
    (0x0904_1934, "anon_inodefs"),
    (0x6264_6576, "bdev"),
    (0x444d_4142, "dmabuf"),
    (0x454d_444d, "devmem"),
    (0x5345_434d, "secretmem"),
    (0x5049_4446, "pidfs"),
];

/// The magic numbers tmpfs, and devtmpfs with it, and ramfs report.
const TMPFS_MAGIC: u32 = 0x0102_1994;
const RAMFS_MAGIC: u32 = 0x8584_58f6;

/// The name of the pseudo file system with magic `f_type`, holding files
/// of device `dev`; `None` for a file system that stores data.
fn pseudo_fs(f_type: u32, dev: (u32, u32)) -> Option<&'static str> {
    if let Some(&(_, name)) = PSEUDO_FS.iter().find(|(magic, _)| *magic == f_type) {
        return Some(name);
    }
    let tmpfs_like = f_type == TMPFS_MAGIC || f_type == RAMFS_MAGIC;
    (tmpfs_like && is_devtmpfs(dev)).then_some("devtmpfs")
}

/// Whether the file system of device `dev` is mounted as devtmpfs in this
/// mount namespace (without /proc it cannot be told: then it counts as the
/// tmpfs its magic says).
fn is_devtmpfs(dev: (u32, u32)) -> bool {
    std::fs::read_to_string("/proc/self/mountinfo").is_ok_and(|text| {
        parse_mountinfo(&text)
            .iter()
            .any(|m| (m.major, m.minor) == dev && m.fstype == "devtmpfs")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(path: &str) -> Result<Storage, NotStorage> {
        examine(Path::new(path)).expect("examined").map(|e| e.kind)
    }

    #[test]
    fn kernel_files_and_streams_are_not_storage() {
        let pseudo = |fstype, directory| Err(NotStorage::Pseudo { fstype, directory });
        assert_eq!(verdict("/proc/version"), pseudo("proc", false));
        assert_eq!(verdict("/proc/sys"), pseudo("proc", true));
        assert_eq!(verdict("/sys/kernel"), pseudo("sysfs", true));
        assert_eq!(verdict("/dev/null"), Err(NotStorage::CharDevice));
        // A symlink is followed: /proc/self/exe names a file on disk.
        assert_eq!(verdict("/proc/self/exe"), Ok(Storage::File));
    }

    #[test]
    fn files_and_directories_on_disk_are_storage() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"12345").unwrap();
        let e = examine(&file).unwrap().unwrap();
        assert_eq!((e.kind, e.len, e.rdev), (Storage::File, 5, None));
        let d = examine(dir.path()).unwrap().unwrap();
        assert_eq!(d.kind, Storage::Directory);
    }

    #[test]
    fn a_replaced_path_is_noticed() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, b"a").unwrap();
        std::fs::write(&b, b"b").unwrap();
        let examined = examine(&a).unwrap().unwrap();
        examined
            .same_file(std::fs::File::open(&a).unwrap(), &a)
            .unwrap();
        std::fs::rename(&b, &a).unwrap();
        let err = examined
            .same_file(std::fs::File::open(&a).unwrap(), &a)
            .unwrap_err();
        assert!(err.to_string().contains("was replaced"), "{err}");
    }

    #[test]
    fn magic_numbers_name_their_file_systems() {
        assert_eq!(pseudo_fs(0x9fa0, (0, 0)), Some("proc"));
        assert_eq!(pseudo_fs(0x6367_7270, (0, 0)), Some("cgroup2"));
        // ext4, xfs, btrfs: storage.
        for magic in [0xef53, 0x5846_5342, 0x9123_683e] {
            assert_eq!(pseudo_fs(magic, (0, 0)), None);
        }
        // tmpfs is storage unless mounted as devtmpfs; no device is 0:0.
        assert_eq!(pseudo_fs(TMPFS_MAGIC, (0, 0)), None);
    }
}
