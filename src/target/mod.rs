//! What is measured: a directory (through a scratch file), a regular file, or
//! a block device; opened only after the safety rules allow it. Nothing else
//! is storage (see [`storage`]): a kernel file, a character device, a FIFO
//! or a socket is refused before anything opens it.
//!
//! The rules: reads are always allowed. A scratch file iocurve creates may be
//! written, and is removed at the end whatever happens. An existing file is
//! written only with `--destructive`. A block device is written only with
//! `--destructive`, and never while it, a partition of it or anything stacked
//! on it is mounted or in use. O_DIRECT is the default; where a file system
//! refuses it the error says to pass `--buffered`.

pub mod copy_ends;
pub mod gate;
pub mod open;
pub mod scratch;
pub mod storage;
pub mod write_rules;

use crate::engine::sim::{SimDevice, SimParams};
use crate::error::{IoFailure, usage};
use crate::probe::sysfs::{self, BlockDevice, Mount};
use crate::result::Caveat;
pub use crate::result::{TargetInfo, TargetKind};
use crate::safety::preserve;
use crate::units::format_size;
use crate::workload::runner::MeasureTarget;
use anyhow::Result;
use gate::{Permit, Restoration, WriteGate, WriteGuard};
use scratch::ScratchFile;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The two ways to allow a write test on a medium that may hold data.
const PRESERVE_OR_DESTRUCTIVE: &str = "Pass --preserve to have iocurve copy the region the test writes to a journal on another file system and put it back afterwards (crash-safe: `iocurve recover` finishes an interrupted restore), or --destructive if its contents may be lost";

/// How data moves between iocurve and the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IoMode {
    /// O_DIRECT: no page cache in between.
    Direct,
    /// Through the page cache, evicted before reads, fdatasync after writes.
    Buffered,
}

/// What the command wants from the target.
#[derive(Debug, Clone)]
pub struct TargetRequest {
    pub path: PathBuf,
    pub want_write: bool,
    pub buffered: bool,
    pub destructive: bool,
    /// Writes allowed because the command journals and restores them.
    pub preserve: bool,
    /// Where `--preserve` keeps its journals (`None`: iocurve's data
    /// directory).
    pub journal_dir: Option<PathBuf>,
    /// Size of the scratch file for a directory target.
    pub scratch_size: u64,
}

/// An opened target, ready to measure.
pub struct OpenTarget {
    /// A read-only descriptor (iocurve's own for scratch files and `sim:`).
    reader: File,
    /// The only way to a writable descriptor.
    gate: WriteGate,
    pub info: TargetInfo,
    /// Buffer alignment (logical block size, at least a page).
    pub align: usize,
    scratch: Option<ScratchFile>,
    /// The simulated card of a `sim:` target.
    sim: Option<Box<SimDevice>>,
}

impl OpenTarget {
    /// What the engines measure on: the writable descriptor once the gate
    /// is open, else the read-only one (a write then fails with EBADF and
    /// destroys nothing).
    pub fn measure_target(&self) -> MeasureTarget<'_> {
        MeasureTarget {
            fd: self.fd(),
            align: self.align,
            device: self.info.device.as_ref(),
            sim: self.sim.as_deref(),
        }
    }

    /// The descriptor reads go through (the writable one once armed, so a
    /// mixed workload sees one file).
    pub fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        match self.gate.guard() {
            Some(g) => g.fd(),
            None => self.reader.as_fd(),
        }
    }

    /// The write guard; an error when writes are not allowed (yet): a
    /// `--preserve` target must be armed with [`OpenTarget::arm`] first.
    pub fn writer(&self) -> Result<&WriteGuard> {
        self.gate.guard().ok_or_else(|| {
            IoFailure::new(
                format!(
                    "internal error: a write to {} was attempted before it was allowed (journalled by --preserve, or --destructive); nothing was written. Please report this",
                    self.info.path
                ),
                None,
            )
            .into()
        })
    }

    /// Journals the regions (offset, length) a write test will touch on a
    /// `--preserve` target and opens its writes; on other writable targets
    /// it does nothing. Every command that writes calls this first; a later
    /// call journals whatever of its regions no earlier one did.
    pub fn arm(&mut self, regions: &[(u64, u64)]) -> Result<()> {
        self.gate.arm(regions, self.info.size_bytes)
    }

    /// Whether a write of `len` bytes at `offset` is allowed now (under
    /// `--preserve`: inside what [`OpenTarget::arm`] journalled).
    pub fn allows_write(&self, offset: u64, len: u64) -> bool {
        self.gate.allows(offset, len)
    }

    /// Puts back what `--preserve` journalled and verifies it; `None` when
    /// nothing was journalled. Writes are closed afterwards.
    pub fn restore(&mut self) -> Option<Result<Restoration>> {
        self.gate.restore()
    }

    /// Whether a write test may run (after [`OpenTarget::arm`]).
    pub fn may_write(&self) -> bool {
        self.gate.may_write()
    }

    /// The simulated card, if this is a `sim:` target.
    pub fn sim(&self) -> Option<&SimDevice> {
        self.sim.as_deref()
    }

    /// The scratch file, if this target is a directory.
    pub fn scratch(&mut self) -> Option<&mut ScratchFile> {
        self.scratch.as_mut()
    }

    /// A second descriptor on the same target through the page cache, for
    /// sizes O_DIRECT cannot transfer; writable only while the gate is open.
    pub fn reopen_buffered(&self) -> Result<File> {
        let path = self.scratch.as_ref().map_or_else(
            || PathBuf::from(&self.info.path),
            |s| s.path().to_path_buf(),
        );
        OpenOptions::new()
            .read(true)
            .write(self.gate.guard().is_some())
            .open(&path)
            .map_err(|e| {
                IoFailure::new(
                    format!(
                        "cannot reopen {} through the page cache: {e}",
                        path.display()
                    ),
                    Some(e),
                )
                .into()
            })
    }

    /// Shrinks the usable size (after a time-limited preparation pass).
    pub fn set_size(&mut self, size: u64) {
        self.info.size_bytes = size;
    }
}

/// Whether `path` names a simulated card (`sim:...`).
pub fn is_simulated(path: &Path) -> bool {
    path.to_str().is_some_and(|p| p.starts_with("sim:"))
}

/// Checks the request against the safety rules and opens the target.
pub fn open(req: &TargetRequest) -> Result<OpenTarget> {
    if let Some(spec) = req.path.to_str().and_then(|p| p.strip_prefix("sim:")) {
        return open_sim(req, spec);
    }
    // Decided on a descriptor of the path (see `storage`): what is not
    // storage is refused before anything opens it for reading or writing.
    let examined = storage::examine(&req.path)
        .map_err(|e| explain_stat(&req.path, e))?
        .map_err(|why| why.refusal(&req.path))?;
    let kind = match examined.kind {
        storage::Storage::Directory => TargetKind::Directory,
        storage::Storage::File => TargetKind::File,
        storage::Storage::BlockDevice => TargetKind::BlockDevice,
    };
    let device = BlockDevice::from_path(&req.path).ok().flatten();
    let filesystem = match kind {
        TargetKind::BlockDevice => None,
        _ => sysfs::mount_of(&req.path).ok().flatten(),
    };
    let memory_fs = filesystem
        .as_ref()
        .is_some_and(|m| matches!(m.fstype.as_str(), "tmpfs" | "ramfs"));
    let mut target = match kind {
        TargetKind::Directory => open_directory(req, &examined, device, filesystem),
        TargetKind::File => open_file(req, &examined, device, filesystem),
        TargetKind::BlockDevice | TargetKind::Simulated => {
            open_block_device(req, &examined, device)
        }
    }?;
    if memory_fs {
        target.info.notes.push(Caveat::memory(
            "this file system keeps its files in RAM, so the figures are memory speed, not a storage device's",
        ));
    }
    Ok(target)
}

fn open_directory(
    req: &TargetRequest,
    examined: &storage::Examined,
    device: Option<BlockDevice>,
    filesystem: Option<Mount>,
) -> Result<OpenTarget> {
    let scratch = ScratchFile::create(&req.path, req.scratch_size, req.buffered)?;
    scratch_in_examined(&scratch, examined, &req.path)?;
    let mut notes = Vec::new();
    if let Some(note) = scratch.size_note() {
        notes.push(Caveat::note(note));
    }
    // iocurve's own file: writable whatever the command, since the
    // preparation pass fills it even for a read test.
    let reader = scratch.file().try_clone()?;
    let gate = WriteGate::new(
        scratch.file().try_clone()?,
        Permit::Scratch,
        scratch.path(),
        false,
    );
    let align = dio_alignment(&reader, device.as_ref());
    let info = TargetInfo {
        path: display(&req.path),
        kind: TargetKind::Directory,
        scratch_file: Some(display(scratch.path())),
        size_bytes: scratch.size(),
        device,
        filesystem,
        mode: mode(req),
        logical_block_size: align as u32,
        writable: true,
        notes,
    };
    Ok(OpenTarget {
        reader,
        gate,
        info,
        align: align.max(crate::engine::buffer::MIN_ALIGN),
        scratch: Some(scratch),
        sim: None,
    })
}

fn open_file(
    req: &TargetRequest,
    examined: &storage::Examined,
    device: Option<BlockDevice>,
    filesystem: Option<Mount>,
) -> Result<OpenTarget> {
    // A file behind a loop device is that device's medium, a swap file the
    // kernel's, a file another program writes that program's, a file
    // mounted elsewhere visible there: in use, whatever the flags.
    if req.want_write
        && let Some(why) = write_rules::why_file_in_use(&req.path, examined.id)?
    {
        return Err(usage(format!(
            "refusing to write to {}: {why}",
            req.path.display()
        )));
    }
    if req.want_write && !req.destructive && !req.preserve {
        let found = write_rules::probe_data_signature(&req.path).ok().flatten();
        let holds = found.map(|sig| format!(" It holds data ({sig} signature found)."));
        return Err(usage(format!(
            "refusing to write to {}: it is an existing file, not a scratch file of iocurve's.{} {PRESERVE_OR_DESTRUCTIVE}, or give a directory so iocurve tests with a scratch file it removes afterwards",
            req.path.display(),
            holds.unwrap_or_default()
        )));
    }
    let reader = open_reader(&req.path, req)?;
    let gate = write_gate(req, false)?;
    opened_as_examined(&reader, &gate, examined, &req.path)?;
    let align = dio_alignment(&reader, device.as_ref());
    let info = TargetInfo {
        path: display(&req.path),
        kind: TargetKind::File,
        scratch_file: None,
        size_bytes: examined.len,
        device,
        filesystem,
        mode: mode(req),
        logical_block_size: align as u32,
        writable: req.want_write,
        notes: Vec::new(),
    };
    Ok(OpenTarget {
        reader,
        gate,
        info,
        align: align.max(crate::engine::buffer::MIN_ALIGN),
        scratch: None,
        sim: None,
    })
}

fn open_block_device(
    req: &TargetRequest,
    examined: &storage::Examined,
    device: Option<BlockDevice>,
) -> Result<OpenTarget> {
    let name = req.path.display();
    if req.want_write && device.is_none() {
        return Err(usage(format!(
            "refusing to write to {name}: it cannot be identified in /sys/class/block, so iocurve cannot check that nothing uses it; measure reads only (--rw read or randread)"
        )));
    }
    if req.want_write {
        if let Some(dev) = &device {
            if let Some(why) = write_rules::why_busy(dev)? {
                return Err(usage(format!(
                    "refusing to write to {name}: {why}. A write test overwrites the device, so nothing may use it: release it first, or measure reads only (--rw read or randread)"
                )));
            }
            if dev.read_only {
                return Err(usage(format!(
                    "{name} is read-only (write-protect switch or kernel setting): measure reads only (--rw read or randread)"
                )));
            }
        }
        if !req.destructive && !req.preserve {
            let found = first_bytes(&req.path)
                .ok()
                .and_then(|b| write_rules::has_data_signature(&b));
            let holds = found.map(|sig| format!(" It holds data ({sig} signature found)."));
            return Err(usage(format!(
                "refusing to write to {name}: a write test overwrites the device and destroys its data.{} {PRESERVE_OR_DESTRUCTIVE}, or measure reads only (--rw read or randread)",
                holds.unwrap_or_default()
            )));
        }
    }
    let reader = open_reader(&req.path, req)?;
    let gate = write_gate(req, true)?;
    opened_as_examined(&reader, &gate, examined, &req.path)?;
    let size = device_size(&reader)?;
    let lbs = rustix::fs::ioctl_blksszget(&reader)
        .map(|v| v as usize)
        .unwrap_or_else(|_| {
            device
                .as_ref()
                .map_or(512, |d| d.logical_block_size as usize)
        });
    let mut notes = Vec::new();
    if let Some(note) = device.as_ref().and_then(loop_cache_note) {
        notes.push(note);
    }
    let info = TargetInfo {
        path: display(&req.path),
        kind: TargetKind::BlockDevice,
        scratch_file: None,
        size_bytes: size,
        device,
        filesystem: None,
        mode: mode(req),
        logical_block_size: lbs as u32,
        writable: req.want_write,
        notes,
    };
    Ok(OpenTarget {
        reader,
        gate,
        info,
        align: lbs.max(crate::engine::buffer::MIN_ALIGN),
        scratch: None,
        sim: None,
    })
}

/// Checks that the descriptors a file or device target was opened with
/// (the reader and, when held, the writer) are the file that was examined
/// and found to be storage.
fn opened_as_examined(
    reader: &File,
    gate: &WriteGate,
    examined: &storage::Examined,
    path: &Path,
) -> Result<()> {
    examined.same_file(reader, path)?;
    if let WriteGate::Held(guard) = gate {
        examined.same_file(guard.file(), path)?;
    }
    Ok(())
}

/// Checks that the scratch file was made on storage, on the file system of
/// the directory that was examined (not in one swapped in meanwhile).
fn scratch_in_examined(
    scratch: &ScratchFile,
    examined: &storage::Examined,
    dir: &Path,
) -> Result<()> {
    let made = storage::classify(scratch.file())?.map_err(|why| why.refusal(dir))?;
    if (made.id.0, made.id.1) != (examined.id.0, examined.id.1) {
        return Err(usage(format!(
            "{} was replaced while iocurve made its scratch file there (it is on another file system now), so nothing was measured: make sure nothing renames or remounts it, then run the command again",
            dir.display()
        )));
    }
    Ok(())
}

/// The write gate of a file or device the safety rules let the command
/// write: open at once with `--destructive`, sealed until journalled with
/// `--preserve` (which wins when both are given), closed for a read test.
fn write_gate(req: &TargetRequest, block: bool) -> Result<WriteGate> {
    if !req.want_write {
        return Ok(WriteGate::Closed);
    }
    if req.preserve {
        let journal_dir = preserve::journal_dir(req.journal_dir.as_deref())?;
        let file = open_writer(&req.path, req, block)?;
        lock_medium(&file, &req.path)?;
        preserve::refuse_if_unfinished(&journal_dir, &req.path)?;
        return Ok(WriteGate::new(
            file,
            Permit::Sealed { journal_dir },
            &req.path,
            block,
        ));
    }
    let file = open_writer(&req.path, req, block)?;
    lock_medium(&file, &req.path)?;
    if let Ok(dir) = preserve::journal_dir(req.journal_dir.as_deref()) {
        // An unfinished restore of this target must come first: writing
        // now would make its journal restore stale data over new.
        preserve::refuse_if_unfinished(&dir, &req.path)?;
    }
    Ok(WriteGate::new(file, Permit::Destructive, &req.path, block))
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

/// A loop device without direct I/O reads its backing file through the
/// host's page cache: its own counters see every request, yet the medium
/// beneath may see none.
fn loop_cache_note(dev: &BlockDevice) -> Option<Caveat> {
    let backing = dev.loop_backing_file.as_ref()?;
    let dio = std::fs::read_to_string(format!("/sys/class/block/{}/loop/dio", dev.disk)).ok()?;
    (dio.trim() == "0").then(|| {
        Caveat::cache(format!(
            "{} reads {backing} through the page cache (loop direct I/O is off), so figures may be memory speed; attach it with `losetup --direct-io=on` to measure the medium",
            dev.name
        ))
    })
}

fn mode(req: &TargetRequest) -> IoMode {
    if req.buffered {
        IoMode::Buffered
    } else {
        IoMode::Direct
    }
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

/// The read-only descriptor: O_DIRECT unless buffered.
fn open_reader(path: &Path, req: &TargetRequest) -> Result<File> {
    let flags = if req.buffered { 0 } else { libc::O_DIRECT };
    OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
        .map_err(|e| explain_open(path, e, req, false))
}

/// The writable descriptor, for the gate only: O_DIRECT unless buffered;
/// O_EXCL on a block device makes the kernel refuse while anything else
/// holds it, and keeps others from claiming it while iocurve writes.
fn open_writer(path: &Path, req: &TargetRequest, block: bool) -> Result<File> {
    let mut flags = if req.buffered { 0 } else { libc::O_DIRECT };
    if block {
        flags |= libc::O_EXCL;
    }
    OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(flags)
        .open(path)
        .map_err(|e| explain_open(path, e, req, true))
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

fn device_size(file: &File) -> Result<u64> {
    let end = rustix::fs::seek(file, rustix::fs::SeekFrom::End(0))?;
    Ok(end)
}

fn first_bytes(path: &Path) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let mut buf = vec![0u8; 72 * 1024];
    let mut f = File::open(path)?;
    let mut filled = 0;
    while filled < buf.len() {
        match f.read(&mut buf[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    buf.truncate(filled);
    Ok(buf)
}

fn explain_stat(path: &Path, e: io::Error) -> anyhow::Error {
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
        Some(libc::EINVAL) if !req.buffered => format!(
            "the file system holding {name} refuses O_DIRECT (tmpfs and some FUSE file systems do): pass --buffered to measure through the page cache (iocurve then evicts it before reads and syncs after writes)"
        ),
        Some(libc::EROFS) => format!(
            "{name} is on a read-only device or file system: measure reads only (--rw read or randread) or remount it read-write"
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

/// Describes a size for messages.
pub fn describe_size(bytes: u64) -> String {
    format_size(bytes)
}

/// A simulated card: always writable (it holds nothing of the user's), and
/// with no file behind it. `/dev/null` stands in for the descriptor, so the
/// steps that take one (preparation fills) are harmless no-ops; measuring
/// goes to the simulator's engine.
fn open_sim(req: &TargetRequest, spec: &str) -> Result<OpenTarget> {
    let params = SimParams::parse(spec).map_err(usage)?;
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")?;
    let reader = file.try_clone()?;
    let gate = WriteGate::new(file, Permit::Simulated, &req.path, false);
    let info = TargetInfo {
        path: display(&req.path),
        kind: TargetKind::Simulated,
        scratch_file: None,
        size_bytes: params.size,
        device: None,
        filesystem: None,
        mode: IoMode::Direct,
        logical_block_size: crate::engine::sim::SECTOR as u32,
        writable: true,
        notes: vec![Caveat::simulated(params.describe())],
    };
    Ok(OpenTarget {
        reader,
        gate,
        info,
        align: crate::engine::buffer::MIN_ALIGN,
        scratch: None,
        sim: Some(Box::new(SimDevice::new(params))),
    })
}
