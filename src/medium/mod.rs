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

//!
//! The open path of each kind of target is in [`kinds`]; every descriptor
//! is opened in [`descriptors`], the writable one only for the gate.

pub mod copy_ends;
mod descriptors;
pub mod gate;
mod kinds;
pub mod open;
pub mod restore;
pub mod scratch;
pub mod storage;
pub mod write_rules;

pub use descriptors::dio_alignment;

use crate::engine::sim::SimDevice;
use crate::error::IoFailure;
use crate::probe::block::{Layer, StackCache};
use crate::probe::sysfs::{self, BlockDevice};
use crate::result::Caveat;
use crate::result::{TargetInfo, TargetKind};
use anyhow::Result;
use gate::{Restoration, WriteGate, WriteGuard};
use scratch::ScratchFile;
use std::fs::File;
use std::os::fd::AsFd;
use std::os::fd::BorrowedFd;
use std::path::{Path, PathBuf};

/// The opened target as a measurement needs it.
pub struct MeasureTarget<'a> {
    pub fd: BorrowedFd<'a>,
    /// Buffer alignment for O_DIRECT.
    pub align: usize,
    /// The block device beneath, whose counters show what reached it.
    pub device: Option<&'a BlockDevice>,
    /// A simulated card: its engine and virtual clock replace `fd`'s.
    pub sim: Option<&'a SimDevice>,
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
        descriptors::reopen_buffered(self.fd(), self.gate.guard().is_some(), &self.info.path)
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
        return kinds::open_sim(req, spec);
    }
    // Decided on a descriptor of the path (see `storage`): what is not
    // storage is refused before anything opens it for reading or writing,
    // and everything after this opens the object that descriptor holds,
    // never the name again.
    let held = storage::examine_held(&req.path)
        .map_err(|e| descriptors::explain_stat(&req.path, e))?
        .map_err(|why| why.refusal(&req.path))?;
    let examined = held.examined;
    let kind = match examined.kind {
        storage::Storage::Directory => TargetKind::Directory,
        storage::Storage::File => TargetKind::File,
        storage::Storage::BlockDevice => TargetKind::BlockDevice,
    };
    let device = device_of(&examined);
    let filesystem = match kind {
        TargetKind::BlockDevice => None,
        _ => sysfs::mount_of(&descriptors::proc_path(&held))
            .ok()
            .flatten(),
    };
    let memory_fs = filesystem
        .as_ref()
        .is_some_and(|m| matches!(m.fstype.as_str(), "tmpfs" | "ramfs"));
    let mut target = match kind {
        TargetKind::Directory => kinds::open_directory(req, &held, device, filesystem),
        TargetKind::File => kinds::open_file(req, &held, device, filesystem),
        TargetKind::BlockDevice | TargetKind::Simulated => {
            kinds::open_block_device(req, &held, device)
        }
    }?;
    if memory_fs {
        target.info.notes.push(Caveat::MemoryFileSystem);
    }
    if let Some(dev) = &target.info.device {
        let caches = crate::probe::block::caches_in(Path::new(crate::probe::SYSFS), &dev.name);
        let notes = caches
            .iter()
            .filter_map(|l| stack_cache_caveat(&dev.name, l));
        target.info.notes.extend(notes);
    }
    Ok(target)
}

/// The caveat a cache in the target's stack puts on every figure, whether
/// the target is that device, a file system on it, or a device above it:
/// what answers there may never reach the medium.
fn stack_cache_caveat(device: &str, layer: &Layer) -> Option<Caveat> {
    let cache = layer.cache?;
    Some(Caveat::StackCache {
        device: device.to_string(),
        layer: layer.name.clone(),
        cache,
        backing: layer.detail.clone(),
        file_system: match cache {
            StackCache::Memory => layer.file_system.clone(),
            _ => None,
        },
    })
}

/// The block device beneath what was examined: the device a node stands
/// for, or the one holding a file's file system; by number, so the name is
/// not looked up again.
fn device_of(examined: &storage::Examined) -> Option<BlockDevice> {
    let (major, minor) = examined.rdev.unwrap_or((examined.id.0, examined.id.1));
    BlockDevice::from_dev(major, minor).ok().flatten()
}
