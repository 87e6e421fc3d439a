//! Reopening an object through a descriptor already held, never through its
//! name.
//!
//! Why: a name can change between two opens (`mv F F.old; ln -s OTHER F`),
//! so a second open by path after the safety checks may reach a file the
//! checks never saw. Linux offers one way to get a new open file
//! description, with other flags, of the very object a descriptor refers
//! to: opening `/proc/self/fd/N` (proc(5): "opening the file ... opens the
//! file to which the link refers", the object, not its current name; it
//! works for a renamed or deleted file and for an `O_PATH` descriptor). The
//! result is checked with `fstat` against the held descriptor all the same:
//! where `/proc` is missing or something else is mounted over it, the open
//! fails or is refused instead of reaching another object.

use rustix::fs::{Mode, OFlags};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};

/// A new descriptor, with `flags` (access mode included), on the object
/// `held` refers to; `O_CLOEXEC` and `O_NOCTTY` are always added, `O_CREAT`
/// and `O_TRUNC` are never honoured. `O_EXCL` on a block device claims it
/// exclusively, as an open by name would: pass it only for the first
/// writable descriptor (a second exclusive claim by the same process is
/// refused with `EBUSY`).
pub fn reopen(held: BorrowedFd<'_>, flags: OFlags) -> io::Result<File> {
    let link = format!("/proc/self/fd/{}", held.as_raw_fd());
    let flags = (flags - OFlags::CREATE - OFlags::TRUNC) | OFlags::CLOEXEC | OFlags::NOCTTY;
    let fd = rustix::fs::open(link.as_str(), flags, Mode::empty()).map_err(|e| {
        let e = io::Error::from(e);
        match e.kind() {
            io::ErrorKind::NotFound => io::Error::new(
                e.kind(),
                "cannot reopen the target through /proc/self/fd (is /proc mounted?)",
            ),
            _ => e,
        }
    })?;
    let file = File::from(fd);
    match same_object(held, file.as_fd())? {
        true => Ok(file),
        false => Err(io::Error::other(
            "/proc/self/fd gave another object than the descriptor held (something is mounted over /proc?)",
        )),
    }
}

/// Whether two descriptors refer to the same object: the same file (device
/// and inode) and, for device nodes, the same device.
pub fn same_object(a: BorrowedFd<'_>, b: BorrowedFd<'_>) -> io::Result<bool> {
    let (x, y) = (rustix::fs::fstat(a)?, rustix::fs::fstat(b)?);
    Ok(x.st_dev == y.st_dev && x.st_ino == y.st_ino && x.st_rdev == y.st_rdev)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn a_reopen_follows_the_object_not_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let (f, other) = (dir.path().join("f"), dir.path().join("other"));
        std::fs::write(&f, b"first").unwrap();
        std::fs::write(&other, b"other").unwrap();
        let held = File::open(&f).unwrap();
        std::fs::rename(&f, dir.path().join("f.old")).unwrap();
        std::os::unix::fs::symlink(&other, &f).unwrap();
        let mut again = reopen(held.as_fd(), OFlags::RDWR).unwrap();
        let mut text = String::new();
        again.read_to_string(&mut text).unwrap();
        assert_eq!(text, "first");
        again.write_all(b"!").unwrap();
        assert_eq!(std::fs::read(&other).unwrap(), b"other");
    }

    #[test]
    fn an_o_path_descriptor_reopens_and_a_deleted_file_too() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, b"kept").unwrap();
        let path_fd = rustix::fs::open(&f, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()).unwrap();
        std::fs::remove_file(&f).unwrap();
        let mut opened = reopen(path_fd.as_fd(), OFlags::RDONLY).unwrap();
        let mut text = String::new();
        opened.read_to_string(&mut text).unwrap();
        assert_eq!(text, "kept");
        assert!(same_object(path_fd.as_fd(), opened.as_fd()).unwrap());
        assert!(!std::path::Path::new(&f).exists());
    }
}
