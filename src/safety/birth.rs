//! The facts that tell an object from another that took its place: a file
//! deleted and a new one made under the same name often gets the same inode
//! number (ext4 reuses freed inodes first), so device, inode and size do not
//! prove that a journal's file still exists. Its birth time (statx
//! `STATX_BTIME`, where the file system keeps one) and its inode generation
//! (`FS_IOC_GETVERSION`, renewed for every new inode on ext4, xfs, btrfs)
//! do. A loop device is known by the file behind it, with the same facts
//! and the offset it starts at (`LOOP_GET_STATUS64`).
//!
//! Everything is read from a descriptor already held, never a name, so the
//! facts are those of the object a test or a `recover` writes through.

use serde::{Deserialize, Serialize};
use std::fs::File;
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};

/// A moment as a file system records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Stamp {
    pub sec: i64,
    pub nsec: u32,
}

impl Stamp {
    pub fn nanos(self) -> i128 {
        i128::from(self.sec) * 1_000_000_000 + i128::from(self.nsec)
    }

    pub fn now() -> Stamp {
        let d = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Stamp {
            sec: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
            nsec: d.subsec_nanos(),
        }
    }
}

/// The file behind a loop device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Backing {
    /// `st_dev` of the file system holding it, as the kernel encodes it.
    pub dev: u64,
    pub inode: u64,
    /// Where the loop device starts in it.
    pub offset: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub birth: Option<Stamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<u32>,
}

/// The birth time of the object open on `fd`, where its file system keeps one.
pub fn birth_of(fd: impl AsFd) -> Option<Stamp> {
    use rustix::fs::{AtFlags, StatxFlags};
    let st = rustix::fs::statx(fd, "", AtFlags::EMPTY_PATH, StatxFlags::BTIME).ok()?;
    (st.stx_mask & StatxFlags::BTIME.bits() != 0).then_some(Stamp {
        sec: st.stx_btime.tv_sec,
        nsec: st.stx_btime.tv_nsec,
    })
}

/// The last status change (ctime) of the object open on `fd`: any write
/// to a regular file moves it, O_DIRECT ones included.
pub fn ctime_of(fd: impl AsFd) -> Option<Stamp> {
    let st = rustix::fs::fstat(fd).ok()?;
    Some(Stamp {
        sec: st.st_ctime,
        nsec: u32::try_from(st.st_ctime_nsec).unwrap_or(0),
    })
}

/// The inode generation of the regular file open on `fd`, where kept.
pub fn generation_of(fd: impl AsFd) -> Option<u32> {
    crate::sys::inode_generation(fd).ok()
}

/// The file behind the loop device open on `fd`, with its birth and
/// generation when its name (from the loop driver, checked against the
/// device and inode the driver gives) still leads to it.
pub fn backing_of(fd: impl AsFd, named: Option<&str>) -> Option<Backing> {
    let info = crate::sys::loop_status64(fd).ok()?;
    let mut backing = Backing {
        dev: info.lo_device,
        inode: info.lo_inode,
        offset: info.lo_offset,
        birth: None,
        generation: None,
    };
    let opened = named.and_then(|name| {
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(name)
            .ok()
    });
    if let Some(file) = opened.filter(|f| is_backing(f, &backing)) {
        backing.birth = birth_of(&file);
        backing.generation = generation_of(&file);
    }
    Some(backing)
}

fn is_backing(file: &File, backing: &Backing) -> bool {
    file.metadata()
        .is_ok_and(|m| m.dev() == backing.dev && m.ino() == backing.inode)
}

/// Two facts that are both known and differ.
pub fn differ<T: PartialEq>(a: &Option<T>, b: &Option<T>) -> bool {
    matches!((a, b), (Some(a), Some(b)) if a != b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_facts_known_on_both_sides_can_differ() {
        assert!(differ(&Some(1), &Some(2)));
        assert!(!differ(&Some(1), &Some(1)));
        assert!(!differ(&None, &Some(1)));
        let a = Stamp { sec: 1, nsec: 5 };
        assert_eq!(a.nanos(), 1_000_000_005);
        assert!(a < Stamp { sec: 2, nsec: 0 });
    }

    #[test]
    fn a_written_file_has_a_ctime_and_a_deleted_one_keeps_its_birth() {
        let (_dir, f) = crate::safety::scratch::file_holding("f", b"one");
        let held = File::open(&f).unwrap();
        let birth = birth_of(&held);
        assert!(ctime_of(&held).is_some());
        std::fs::remove_file(&f).unwrap();
        assert_eq!(
            birth_of(&held),
            birth,
            "read from the descriptor, not the name"
        );
    }
}
