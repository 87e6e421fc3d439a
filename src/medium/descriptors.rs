//! Every descriptor a target is opened with: the read-only one, the
//! writable one the write gate holds (opened only after the write rules
//! allowed it, and locked for the test), a buffered second one, the
//! scratch file of a directory, and `/dev/null` for a simulated card; with
//! errors that say what to do.

use super::TargetRequest;
use super::gate::{Permit, WriteGate};
use super::scratch::ScratchFile;
use super::storage::Held;
use crate::error::{IoFailure, usage};
use crate::probe::sysfs::BlockDevice;
use crate::safety::preserve;
use crate::sys::reopen::reopen;
use anyhow::Result;
use rustix::fs::OFlags;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::path::Path;

/// The write gate of a file or device the safety rules let the command
/// write: open at once with `--destructive`, sealed until journalled with
/// `--preserve` (which wins when both are given), closed for a read test.
pub(super) fn write_gate(req: &TargetRequest, held: &Held, block: bool) -> Result<WriteGate> {
    if !req.want_write {
        return Ok(WriteGate::Closed);
    }
    if req.preserve {
        let journal_dir = preserve::journal_dir(req.journal_dir.as_deref())?;
        let file = open_writer(held, &req.path, req, block)?;
        lock_medium(&file, &req.path)?;
        preserve::refuse_if_unfinished(&journal_dir, &req.path)?;
        return Ok(WriteGate::new(
            file,
            Permit::Sealed { journal_dir },
            &req.path,
        ));
    }
    let file = open_writer(held, &req.path, req, block)?;
    lock_medium(&file, &req.path)?;
    if let Ok(dir) = preserve::journal_dir(req.journal_dir.as_deref()) {
        // An unfinished restore of this target must come first: writing
        // now would make its journal restore stale data over new.
        preserve::refuse_if_unfinished(&dir, &req.path)?;
    }
    Ok(WriteGate::new(file, Permit::Destructive, &req.path))
}

/// Takes the medium's own lock for the whole test (see
/// [`crate::safety::lock`]): on the target's inode, so a second write test
/// on the same file or device is refused whatever path or journal
/// directory it was given, and a `recover` leaves the medium alone until
/// this test has ended. The lock goes with the descriptor, at the end of
/// the test or at a kill.
fn lock_medium(file: &File, path: &Path) -> Result<()> {
    use crate::safety::lock::{Lock, try_exclusive};
    match try_exclusive(file) {
        Ok(Lock::Taken) => Ok(()),
        Ok(Lock::Held(pid)) => Err(usage(format!(
            "refusing to write to {}: {} is writing to it now (a test with --preserve or --destructive); wait for it to end",
            path.display(),
            crate::safety::lock::holder_name(pid)
        ))),
        // A file system without flock support cannot be excluded this way;
        // the journal directory's own checks still apply.
        Err(e) if e.raw_os_error() == Some(libc::ENOLCK) => Ok(()),
        Err(e) => Err(IoFailure::new(
            format!("cannot lock {} for the test: {e}", path.display()),
            Some(e),
        )
        .into()),
    }
}

/// The read-only descriptor: O_DIRECT unless buffered; the object `held`
/// examined, whatever its name is now.
pub(super) fn open_reader(held: &Held, path: &Path, req: &TargetRequest) -> Result<File> {
    let flags = if req.buffered {
        OFlags::RDONLY
    } else {
        OFlags::RDONLY | OFlags::DIRECT
    };
    reopen(held.fd.as_fd(), flags).map_err(|e| explain_open(path, e, req, false))
}

/// The writable descriptor, for the gate only: O_DIRECT unless buffered;
/// O_EXCL on a block device makes the kernel refuse while anything else
/// holds it, and keeps others from claiming it while iocurve writes.
fn open_writer(held: &Held, path: &Path, req: &TargetRequest, block: bool) -> Result<File> {
    let mut flags = OFlags::RDWR;
    if !req.buffered {
        flags |= OFlags::DIRECT;
    }
    if block {
        flags |= OFlags::EXCL;
    }
    reopen(held.fd.as_fd(), flags).map_err(|e| explain_open(path, e, req, true))
}

/// A second descriptor on the object `fd` holds, through the page cache
/// (see [`super::OpenTarget::reopen_buffered`]), writable when `writable`.
/// Never by name: the name may have been given to another file since.
pub(super) fn reopen_buffered(fd: BorrowedFd<'_>, writable: bool, name: &str) -> Result<File> {
    let flags = if writable {
        OFlags::RDWR
    } else {
        OFlags::RDONLY
    };
    reopen(fd, flags).map_err(|e| {
        IoFailure::new(
            format!("cannot reopen {name} through the page cache: {e}"),
            Some(e),
        )
        .into()
    })
}

/// The name under which `held`'s object can be looked up without its own
/// name: `/proc/self/fd/N`, which the kernel resolves to the object.
pub(super) fn proc_path(held: &Held) -> std::path::PathBuf {
    std::path::PathBuf::from(format!("/proc/self/fd/{}", held.fd.as_raw_fd()))
}

/// iocurve's own scratch file in the directory `req` names (see
/// [`super::scratch`]), the descriptor of a directory target.
pub(super) fn scratch_file(req: &TargetRequest) -> Result<ScratchFile> {
    ScratchFile::create(&req.path, req.scratch_size, req.buffered)
}

/// `/dev/null`, read-write: the descriptor of a simulated card.
pub(super) fn dev_null() -> io::Result<File> {
    OpenOptions::new().read(true).write(true).open("/dev/null")
}

/// The offset alignment O_DIRECT needs on this file: statx(STATX_DIOALIGN)
/// where the kernel tells (Linux 6.1+), else the device's logical block size,
/// else a page.
pub fn dio_alignment(file: &File, device: Option<&BlockDevice>) -> usize {
    use rustix::fs::{AtFlags, StatxFlags, statx};
    if let Ok(stx) = statx(file, "", AtFlags::EMPTY_PATH, StatxFlags::DIOALIGN) {
        if stx.stx_dio_offset_align > 0 {
            return stx.stx_dio_offset_align as usize;
        }
    }
    device.map_or(4096, |d| d.logical_block_size as usize)
}

pub(super) fn explain_stat(path: &Path, e: io::Error) -> anyhow::Error {
    match e.kind() {
        io::ErrorKind::NotFound => usage(format!(
            "{} does not exist: give an existing directory, file or block device (e.g. . or /dev/sdb)",
            path.display()
        )),
        io::ErrorKind::PermissionDenied => IoFailure::new(
            format!("permission denied reading {}: run as a user who may read it (root, or the disk group for devices)", path.display()),
            Some(e),
        )
        .into(),
        _ => IoFailure::new(format!("cannot examine {}: {e}", path.display()), Some(e)).into(),
    }
}

fn explain_open(path: &Path, e: io::Error, req: &TargetRequest, writing: bool) -> anyhow::Error {
    let name = path.display();
    let msg = match e.raw_os_error() {
        Some(libc::EINVAL) if !req.buffered && super::write_rules::advice::buffered() => format!(
            "the file system holding {name} refuses O_DIRECT (tmpfs and some FUSE file systems do): pass --buffered to measure through the page cache (iocurve then evicts it before reads and syncs after writes)"
        ),
        // A command without --buffered (the flash tests time the device
        // itself) cannot go through the page cache.
        Some(libc::EINVAL) if !req.buffered => format!(
            "the file system holding {name} refuses O_DIRECT (tmpfs and some FUSE file systems do): give a file or device on another file system"
        ),
        Some(libc::EROFS) => format!(
            "{name} is on a read-only device or file system: {}remount it read-write",
            super::write_rules::advice::reads_only_how().map_or(String::new(), |how| format!(
                "measure reads only ({how}) or "
            ))
        ),
        Some(libc::EACCES) | Some(libc::EPERM)
            if writing && rustix::process::geteuid().is_root() =>
        {
            format!(
                "{name} may not be written, even by root: it is immutable or append-only (`lsattr {name}` shows it; `chattr -i -a {name}` lifts it), or a security module forbids it"
            )
        }
        Some(libc::EACCES) | Some(libc::EPERM) => format!(
            "permission denied opening {name}{}: run as root or as a user with access (the disk group for devices)",
            if writing { " for writing" } else { "" }
        ),
        Some(libc::EBUSY) => format!(
            "{name} is in use (mounted, swap, held by another driver, or opened exclusively by another program): release it before a write test"
        ),
        _ => format!("cannot open {name}: {e}"),
    };
    IoFailure::new(msg, Some(e)).into()
}
