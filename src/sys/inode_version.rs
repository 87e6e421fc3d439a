//! The inode generation number (`FS_IOC_GETVERSION`, ioctl_iflags(2)'s
//! sibling): a number the file system gives each new inode, so that an
//! inode number reused by a new file is told apart from the file that had
//! it before. `--preserve` records it in a journal so that `recover` never
//! writes a deleted file's bytes into the new file that took its inode.

/// `FS_IOC_GETVERSION` from `<linux/fs.h>`: `_IOR('v', 1, long)`.
const FS_IOC_GETVERSION: rustix::ioctl::Opcode =
    rustix::ioctl::opcode::read::<libc::c_long>(b'v', 1);

/// The generation number of the inode open on `fd`; Err where the file
/// system keeps none (tmpfs, FAT: ENOTTY or EINVAL) or `fd` is an O_PATH
/// descriptor (EBADF).
pub fn inode_generation(fd: impl std::os::fd::AsFd) -> rustix::io::Result<u32> {
    // SAFETY: FS_IOC_GETVERSION writes at most one `long` (ext4 and xfs
    // write an int into its first bytes), and the Getter hands the kernel a
    // pointer to a whole, initialised `c_long` it owns.
    let got = unsafe {
        rustix::ioctl::ioctl(
            fd,
            rustix::ioctl::Getter::<FS_IOC_GETVERSION, libc::c_long>::new(),
        )
    }?;
    // The kernel stored an int at the start of the long: its first 4 bytes
    // in memory order, whatever the byte order.
    let bytes = got.to_ne_bytes();
    Ok(u32::from_ne_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_in_the_same_place_gets_a_number_or_an_error_never_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, b"x").unwrap();
        let file = std::fs::File::open(&f).unwrap();
        // tmpfs has no generation; ext4, xfs and btrfs do.
        let _ = inode_generation(&file);
    }
}
