//! The file system a target lives on, and what it does to the data.
//!
//! Compression makes written data smaller than what was asked for, encryption
//! costs CPU on every block, and copy-on-write turns overwrites into new
//! allocations: each changes what a figure means, so the probe says which are
//! in play, as far as the mount options tell. Free space is from statvfs.

use crate::probe::sysfs::Mount;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The file system beneath a target path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FsInfo {
    /// File system type (`ext4`, `vfat`, `btrfs`).
    pub fstype: String,
    /// What is mounted, as mountinfo gives it (`/dev/sda1`).
    pub source: String,
    /// Where it is mounted.
    pub mount_point: String,
    /// Mount options, comma-separated.
    pub options: String,
    /// `Some(true)` when the options turn compression on; `None` when the
    /// options cannot tell (ZFS datasets keep it as a property).
    pub compression: Option<bool>,
    /// True when a dm-crypt layer or ecryptfs encrypts the data; otherwise null
    /// (per-directory encryption does not show in the options).
    pub encryption: Option<bool>,
    /// True when overwrites become new allocations (btrfs, ZFS); null when the
    /// options cannot tell.
    pub copy_on_write: Option<bool>,
    /// Space free to unprivileged users, bytes (statvfs); null when statvfs
    /// failed.
    pub free_bytes: Option<u64>,
    /// Size of the file system, bytes (statvfs); null when statvfs failed.
    pub total_bytes: Option<u64>,
}

/// File systems that never compress, encrypt or copy on write by
/// themselves.
const PLAIN: &[&str] = &[
    "ext2", "ext3", "ext4", "vfat", "exfat", "msdos", "ntfs", "ntfs3", "xfs", "tmpfs", "iso9660",
];

/// Facts from a mount; `dm_crypt` says a dm-crypt layer sits beneath it.
pub fn from_mount(m: &Mount, dm_crypt: bool) -> FsInfo {
    let opts: Vec<&str> = m.options.split(',').collect();
    let has = |prefix: &str| opts.iter().any(|o| o.starts_with(prefix));
    let plain = PLAIN.contains(&m.fstype.as_str());
    let compression = match m.fstype.as_str() {
        "btrfs" => Some(has("compress")),
        "f2fs" => Some(has("compress_algorithm")),
        _ if plain => Some(false),
        _ => None,
    };
    let encryption = if dm_crypt || m.fstype == "ecryptfs" {
        Some(true)
    } else {
        // fscrypt is per directory and invisible in the options.
        None
    };
    let copy_on_write = match m.fstype.as_str() {
        "btrfs" => Some(!has("nodatacow")),
        "zfs" | "bcachefs" => Some(true),
        _ if plain => Some(false),
        _ => None,
    };
    FsInfo {
        fstype: m.fstype.clone(),
        source: m.source.clone(),
        mount_point: m.mount_point.clone(),
        options: m.options.clone(),
        compression,
        encryption,
        copy_on_write,
        free_bytes: None,
        total_bytes: None,
    }
}

/// Adds free and total space of the file system holding `path`.
pub fn with_space(mut info: FsInfo, path: &Path) -> FsInfo {
    if let Ok(st) = rustix::fs::statvfs(path) {
        info.free_bytes = Some(st.f_bavail.saturating_mul(st.f_frsize));
        info.total_bytes = Some(st.f_blocks.saturating_mul(st.f_frsize));
    }
    info
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mount(fstype: &str, options: &str) -> Mount {
        Mount {
            major: 0,
            minor: 40,
            root: "/".into(),
            mount_point: "/mnt".into(),
            fstype: fstype.into(),
            source: "/dev/sdb1".into(),
            options: options.into(),
        }
    }

    #[test]
    fn btrfs_compression_and_cow() {
        let f = from_mount(
            &mount("btrfs", "rw,relatime,compress=zstd:3,space_cache=v2"),
            false,
        );
        assert_eq!(
            (f.compression, f.copy_on_write, f.encryption),
            (Some(true), Some(true), None)
        );
        let f = from_mount(&mount("btrfs", "rw,nodatacow"), false);
        assert_eq!((f.compression, f.copy_on_write), (Some(false), Some(false)));
    }

    #[test]
    fn ext4_plain_and_unknown_fs() {
        let f = from_mount(&mount("ext4", "rw,relatime"), true);
        assert_eq!(
            (f.compression, f.copy_on_write, f.encryption),
            (Some(false), Some(false), Some(true))
        );
        let f = from_mount(&mount("fuse.sshfs", "rw"), false);
        assert_eq!(
            (f.compression, f.copy_on_write, f.encryption),
            (None, None, None)
        );
    }
}
