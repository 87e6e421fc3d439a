//! The write rules: may this block device or file be written right now?
//!
//! Why this module exists, and why it is not called "safety": iocurve has
//! two kinds of protection. This one decides *before* a write test whether
//! its target may be written at all (nothing mounts it, stacks on it, swaps
//! to it or holds it open; what data it seems to hold). The other,
//! `crate::safety` (preserve, journal, identity), puts data *back* after a
//! write test that was allowed. Keeping the names apart keeps a reader from
//! looking for the refusal rules among the restore code.
//!
//! A benchmark must never destroy data. Writing to a raw block device
//! overwrites whatever is on it, and doing so under a mounted filesystem, a
//! device-mapper or md array stacked on the device, active swap or a loop
//! device set up over it corrupts it in ways that surface much later. The
//! same holds for a regular file that backs a loop device: the file *is* that
//! device's medium, so writing to it is writing under whatever uses the loop
//! device. Likewise a swap file is the kernel's, a file another program
//! holds open for writing is that program's (a write test overwrites its
//! data, and a `--preserve` restore would undo its writes), and a file
//! bind-mounted elsewhere is seen, and used, there too. So a write test is
//! refused while anything uses its target, and [`why_busy`] (block
//! devices) and [`why_file_in_use`] (regular files) say, one
//! sentence per use, what uses it and how to end that use: the person reading
//! the refusal should not need a second tool to find out what to do.
//!
//! A device that nothing uses may still hold data nobody has mounted right
//! now; [`has_data_signature`] recognises the common on-disk formats so that
//! the caller can warn (or demand confirmation) before a destructive run.
//!
//! Each question is answered from facts gathered one kind at a time, each
//! in its own file: [`device`] (mounts, holders, swap and exclusive openers
//! of a block device), [`loops`] (loop devices and what backs them),
//! [`swap`], [`bind_mounts`], [`writers`] (other processes writing a file),
//! and [`signature`] (what data a device seems to hold); [`messages`] says
//! each use found, with its fix.

pub mod advice;
mod backed_loops;
mod bind_mounts;
mod device;
mod loops;
mod messages;
mod signature;
mod swap;
mod writers;

#[cfg(test)]
pub use signature::probe_data_signature;
pub use signature::{SIGNATURE_PROBE_BYTES, has_data_signature};

use crate::medium::storage::FileId;
use crate::probe::sysfs::BlockDevice;
use std::fs;
use std::io;
use std::path::Path;

/// Returns `Ok(None)` when nothing uses the device, else sentences (joined
/// by `"; "`) naming what does and how to end it: a mount (unmount it), a
/// holder (`dmsetup remove`, `mdadm --stop`), swap (`swapoff`), a loop device
/// over the node (`losetup -d`), or an exclusive opener (the program, by pid
/// and command, when `/proc` shows it).
///
/// Checked are the device itself; when it is a whole disk, each of its
/// partitions; when it is a partition, its whole disk (not its sibling
/// partitions, which writing to this one does not touch). For each of these:
/// - a mount of it in this process's mount namespace (`/proc/self/mountinfo`),
/// - devices stacked on it (`holders/` in sysfs: device-mapper, md, bcache),
/// - active swap on it (`/proc/swaps`),
/// - loop devices whose backing file is its device node.
///
/// When none of that is found, the device node itself is opened with
/// `O_EXCL`, which the kernel refuses with `EBUSY` while the device (or, for
/// a whole disk, any of its partitions; for a partition, its whole disk) is
/// mounted in any mount namespace, stacked upon, swapped to, or opened with
/// `O_EXCL` by another process (`mkfs`, another benchmark). That catches what
/// this process cannot see; the processes that have one of the nodes open
/// are then looked up in `/proc` to name them.
///
/// Because of the exclusive open, call this *before* opening the device with
/// `O_EXCL` yourself, or your own open makes the device look busy. (Like any
/// close, closing that probe lets a loop device whose detach was deferred
/// because it was busy go away, if nothing else holds it open.)
pub fn why_busy(dev: &BlockDevice) -> io::Result<Option<String>> {
    Ok(messages::sentences(&device::uses_of(dev)?))
}

/// Returns `Ok(None)` unless `path` is a regular file that backs a loop
/// device; then one sentence per such loop device (joined by `"; "`), each
/// naming the loop device, what uses it (a mount and where, swap, holders,
/// another loop device, a program) and the fix: end that use and detach it
/// with `losetup -d /dev/loopN`. The sentences speak of the file as "it", to
/// follow `refusing to write to <path>: `.
///
/// The file is recognised by its device and inode number, so another name
/// for it (a hard link, a bind mount, a symlink) is recognised too, and the
/// path a loop device shows in sysfs (`loop/backing_file`), which may be
/// stale, `(deleted)` or a path of another mount namespace, is used only
/// when the kernel cannot be asked (`LOOP_GET_STATUS64` on the loop device).
///
/// Like [`why_busy`], this briefly opens each loop device over the file with
/// `O_EXCL` to find users this process cannot see.
pub fn why_file_busy(path: &Path) -> io::Result<Option<String>> {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::metadata(path).map_err(|e| loops::backing_context(path, e))?;
    if !meta.is_file() {
        return Ok(None);
    }
    let file = (
        rustix::fs::major(meta.dev()),
        rustix::fs::minor(meta.dev()),
        meta.ino(),
    );
    let found = backed_loops::loop_sentences(path, file)?;
    Ok((!found.is_empty()).then(|| found.join("; ")))
}

/// Everything that uses the regular file `path`, known as `file` (device
/// and inode of the descriptor it was examined through), one sentence per
/// use joined by `"; "`, each with its fix; `Ok(None)` when nothing does.
/// To the loop devices of [`why_file_busy`] this adds:
/// - active swap on it (`/proc/swaps`: `swapoff`);
/// - a bind mount of it elsewhere, or it being a bind mount over another
///   file (`/proc/self/mountinfo`: `umount`);
/// - other processes holding it open for writing (`/proc/*/fd`: stop
///   them), whose data a write test would overwrite and whose writes a
///   `--preserve` restore would undo.
///
/// Files are compared by device and inode, never by the path a table
/// shows, so another name of the file is the same file.
pub fn why_file_in_use(path: &Path, file: FileId) -> io::Result<Option<String>> {
    let mut found = backed_loops::loop_sentences(path, file)?;
    let uses = swap::swap_files(file)
        .into_iter()
        .chain(bind_mounts::bind_mounts_of(path, file))
        .chain(writers::writers_of(file));
    found.extend(uses.map(|u| u.sentence()));
    Ok((!found.is_empty()).then(|| found.join("; ")))
}

/// What a path names now, as (file identity, device number): the file's
/// (major, minor, inode), and for a device node the device it stands for.
/// Every rule compares files this way, never by the path a table shows.
type Identity = (Option<(u32, u32, u64)>, Option<(u32, u32)>);

/// (file identity, device number) of what `path` names now.
fn stat_identity(path: &str) -> Option<Identity> {
    let st = rustix::fs::stat(path).ok()?;
    let file = Some((
        rustix::fs::major(st.st_dev),
        rustix::fs::minor(st.st_dev),
        st.st_ino,
    ));
    let block = rustix::fs::FileType::from_raw_mode(st.st_mode).is_block_device();
    let rdev = block.then(|| (rustix::fs::major(st.st_rdev), rustix::fs::minor(st.st_rdev)));
    Some((file, rdev))
}
