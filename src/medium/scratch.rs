//! The scratch file a directory target is measured through.
//!
//! Its size is chosen from the free space (1 GiB by default, less when space
//! is short, and the result says so). It is filled with incompressible data
//! before any measurement, since reading a hole or an unwritten extent never
//! touches the medium. It is removed when dropped, after Ctrl-C (the
//! interrupt module knows its path) and after errors.

use crate::error::IoFailure;
use crate::interrupt;
use crate::sys::buffer::AlignedBuf;
use crate::units::format_size;
use crate::vocab::Pattern;
use anyhow::Result;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The smallest scratch file worth measuring with.
pub const MIN_SCRATCH: u64 = 16 << 20;
/// Space left to other users of the file system: a tenth of the free space,
/// at most this much.
const RESERVE: u64 = 64 << 20;
/// Preparation writes in chunks of this size.
const FILL_CHUNK: usize = 4 << 20;

pub struct ScratchFile {
    path: PathBuf,
    file: File,
    size: u64,
    note: Option<crate::result::Caveat>,
    /// Where this process's part of a file shared by the ranks of a job
    /// starts (0 for a file of its own): the preparation fills only its
    /// own segment.
    own_from: u64,
}

/// How scratch files are named: one per process, one per rank of an MPI
/// job (whose ranks may share a directory, and whose process ids repeat
/// across hosts), or one that every rank of the job shares, each in its
/// own segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScratchNaming {
    Process,
    Rank { job: String, rank: u32 },
    Shared { job: String, own_from: u64 },
}

static NAMING: std::sync::OnceLock<ScratchNaming> = std::sync::OnceLock::new();

/// Sets how this process names its scratch files, once, before any is
/// made (the cluster floor does, for a rank of a job).
pub fn name_scratch_files(naming: ScratchNaming) {
    let _ = NAMING.set(naming);
}

fn naming() -> &'static ScratchNaming {
    NAMING.get().unwrap_or(&ScratchNaming::Process)
}

impl ScratchNaming {
    /// The file name in the target directory.
    pub fn file_name(&self) -> String {
        match self {
            ScratchNaming::Process => format!(".iocurve-scratch-{}.tmp", std::process::id()),
            ScratchNaming::Rank { job, rank } => format!(".iocurve-scratch-{job}-r{rank}.tmp"),
            ScratchNaming::Shared { job, .. } => format!(".iocurve-scratch-shared-{job}.tmp"),
        }
    }
}

/// The scratch file `rank` of this job makes in `dir`: where another rank
/// reads it under `--read-other-host`.
pub fn rank_scratch_path(dir: &Path, rank: u32) -> Option<PathBuf> {
    match naming() {
        ScratchNaming::Rank { job, .. } => Some(
            dir.join(
                ScratchNaming::Rank {
                    job: job.clone(),
                    rank,
                }
                .file_name(),
            ),
        ),
        _ => None,
    }
}

/// How the preparation pass went.
#[derive(Debug, Clone, Copy)]
pub struct FillStats {
    pub bytes: u64,
    pub elapsed: Duration,
}

impl ScratchFile {
    /// Creates `.iocurve-scratch-PID.tmp` in `dir`, sized `requested` or less
    /// when free space is short, and reserves its blocks.
    pub fn create(dir: &Path, requested: u64, buffered: bool) -> Result<ScratchFile> {
        if requested == 0 {
            // Only a command that writes a file it is given asks for no
            // scratch space at all.
            return Err(crate::error::usage(format!(
                "{} is a directory: this command needs a file or a device, not a directory",
                dir.display()
            )));
        }
        let free = free_bytes(dir)?;
        let usable = free.saturating_sub(RESERVE.min(free / 10));
        // Whole 4 KiB blocks (MiB above 1 MiB), rounded up so that a small
        // or unaligned region still fits; less only when space is short.
        let wanted = round_up(requested);
        let size = match wanted <= usable {
            true => wanted,
            false => round_size(usable),
        };
        if size < MIN_SCRATCH.min(wanted) {
            return Err(IoFailure::new(
                format!(
                    "out of space: {} has {} free, too little for a {} scratch file; free some space, choose another directory, or pass a smaller --span",
                    dir.display(),
                    format_size(free),
                    format_size(MIN_SCRATCH.min(wanted))
                ),
                None,
            )
            .into());
        }
        let note = (size < requested).then_some(crate::result::Caveat::ScratchShrunk {
            size_bytes: size,
            requested_bytes: requested,
            free_bytes: free,
        });
        let naming = naming();
        let path = dir.join(naming.file_name());
        let (file, own_from) = match naming {
            ScratchNaming::Shared { own_from, .. } => (open_shared(&path, buffered)?, *own_from),
            _ => (create_exclusive(&path, buffered)?, 0),
        };
        interrupt::register_scratch(path.clone());
        let scratch = ScratchFile {
            path,
            file,
            size,
            note,
            own_from,
        };
        // Never shrinks: a shared file's other ranks may already have
        // reserved beyond this rank's end.
        let reserved = match rustix::fs::fallocate(
            &scratch.file,
            rustix::fs::FallocateFlags::empty(),
            0,
            size,
        ) {
            Err(rustix::io::Errno::OPNOTSUPP) => grow_to(&scratch.file, size),
            other => other.map_err(io::Error::from),
        };
        reserved.map_err(|e| {
            IoFailure::new(
                format!(
                    "cannot reserve {} for the scratch file in {}: {e}",
                    format_size(size),
                    dir.display()
                ),
                Some(e),
            )
        })?;
        Ok(scratch)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn file(&self) -> &File {
        &self.file
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    pub fn size_note(&self) -> Option<crate::result::Caveat> {
        self.note.clone()
    }

    /// The preparation pass over the scratch file (see [`fill_region`]);
    /// when it was cut short, the file's usable size shrinks to what was
    /// written.
    pub fn fill(
        &mut self,
        plan: &FillPlan,
        on_progress: impl FnMut(u64),
        stop: &AtomicBool,
    ) -> Result<FillStats> {
        // The file is whole 4 KiB blocks, and O_DIRECT writes nothing
        // less: the pass covers every block the region touches.
        let start = plan.offset.max(self.own_from) / 4096 * 4096;
        let end = plan
            .offset
            .saturating_add(plan.bytes)
            .div_ceil(4096)
            .saturating_mul(4096)
            .min(self.size);
        let plan = FillPlan {
            offset: start,
            bytes: end.saturating_sub(start),
            ..*plan
        };
        let stats = fill_region(&self.file, &plan, on_progress, stop)?;
        if stats.bytes < plan.bytes {
            let kept = stats.bytes / (1 << 20) * (1 << 20);
            self.size = (plan.offset + kept).max(1 << 20).min(self.size);
        }
        Ok(stats)
    }
}

/// What a preparation pass writes.
#[derive(Debug, Clone, Copy)]
pub struct FillPlan {
    pub offset: u64,
    pub bytes: u64,
    /// Written even when the time limit has passed.
    pub min_bytes: u64,
    pub time_limit: Option<Duration>,
    pub pattern: Pattern,
    pub seed: u64,
}

/// The preparation pass: writes the pattern sequentially over
/// `[offset, offset + bytes)` in 4 MiB chunks, stopping early once the time
/// limit has passed and `min_bytes` are written, then syncs. Reading a hole
/// or a trimmed block never touches the medium, so reads are measured only
/// over data written here. `on_progress` gets the bytes written so far.
pub fn fill_region(
    file: &File,
    plan: &FillPlan,
    mut on_progress: impl FnMut(u64),
    stop: &AtomicBool,
) -> Result<FillStats> {
    let start = Instant::now();
    let mut buf = AlignedBuf::new(FILL_CHUNK, 4096);
    let mut written = 0u64;
    let mut chunk_index = 0u64;
    while written < plan.bytes && !stop.load(Ordering::Relaxed) {
        let late = plan
            .time_limit
            .is_some_and(|limit| start.elapsed() >= limit);
        if late && written >= plan.min_bytes {
            break;
        }
        let len = (plan.bytes - written).min(FILL_CHUNK as u64) as usize;
        plan.pattern.fill(
            buf.as_mut_slice(),
            plan.seed ^ chunk_index.wrapping_mul(0x2545_f491_4f6c_dd1d),
        );
        let at = plan.offset + written;
        let n = rustix::io::pwrite(file, &buf.as_slice()[..len], at).map_err(|e| {
            let e = io::Error::from(e);
            IoFailure::new(
                format!("the preparation pass failed writing at offset {at}: {e}"),
                Some(e),
            )
        })?;
        written += n as u64;
        chunk_index += 1;
        on_progress(written);
    }
    rustix::fs::fdatasync(file).map_err(io::Error::from)?;
    Ok(FillStats {
        bytes: written,
        elapsed: start.elapsed(),
    })
}

impl Drop for ScratchFile {
    /// Removes the scratch file, but only while its name still names it:
    /// a file renamed onto that name meanwhile is someone else's.
    fn drop(&mut self) {
        if still_named(&self.path, &self.file) {
            let _ = std::fs::remove_file(&self.path);
        }
        interrupt::unregister_scratch(&self.path);
    }
}

/// Whether `path` (not followed if a symlink) names the file `file` holds.
fn still_named(path: &Path, file: &File) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::symlink_metadata(path), file.metadata()) {
        (Ok(named), Ok(held)) => named.dev() == held.dev() && named.ino() == held.ino(),
        _ => false,
    }
}

/// Extends `file` to `size` when it is shorter; never cuts it.
fn grow_to(file: &File, size: u64) -> io::Result<()> {
    match file.metadata()?.len() < size {
        true => file.set_len(size),
        false => Ok(()),
    }
}

/// Opens (or creates) the file every rank of a job shares. It may exist
/// already, made by another rank of this job a moment ago; it is trusted
/// only as a regular file with one link owned by this user, reached
/// without following a symbolic link.
fn open_shared(path: &Path, buffered: bool) -> Result<File> {
    use std::os::unix::fs::MetadataExt;
    let flags = libc::O_NOFOLLOW | if buffered { 0 } else { libc::O_DIRECT };
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(flags)
        .open(path)
        .map_err(|e| {
            IoFailure::new(
                format!(
                    "cannot open the shared scratch file {}: {e}",
                    path.display()
                ),
                Some(e),
            )
        })?;
    let meta = file.metadata()?;
    let ours =
        meta.is_file() && meta.nlink() == 1 && meta.uid() == rustix::process::geteuid().as_raw();
    if !ours {
        return Err(crate::error::usage(format!(
            "{} is not a scratch file this job made (not a regular file of yours with one link): remove it or choose another directory",
            path.display()
        )));
    }
    Ok(file)
}

fn create_exclusive(path: &Path, buffered: bool) -> Result<File> {
    let flags = if buffered { 0 } else { libc::O_DIRECT };
    OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .custom_flags(flags)
        .open(path)
        .map_err(|e| {
            let msg = match e.raw_os_error() {
                Some(libc::EINVAL) => format!(
                    "the file system holding {} refuses O_DIRECT (tmpfs and some FUSE file systems do): pass --buffered to measure through the page cache",
                    path.parent().unwrap_or(path).display()
                ),
                Some(libc::EROFS) => format!(
                    "{} is on a read-only file system: choose a writable directory, or measure a file or device read-only",
                    path.parent().unwrap_or(path).display()
                ),
                Some(libc::EACCES) | Some(libc::EPERM) => format!(
                    "permission denied creating a scratch file in {}: choose a directory you may write to",
                    path.parent().unwrap_or(path).display()
                ),
                Some(libc::ENOSPC) => format!("out of space creating a scratch file in {}", path.parent().unwrap_or(path).display()),
                _ => format!("cannot create scratch file {}: {e}", path.display()),
            };
            IoFailure::new(msg, Some(e)).into()
        })
}

fn free_bytes(dir: &Path) -> Result<u64> {
    let st = rustix::fs::statvfs(dir).map_err(|e| {
        let e = io::Error::from(e);
        IoFailure::new(
            format!("cannot read the free space of {}: {e}", dir.display()),
            Some(e),
        )
    })?;
    Ok(st.f_bavail * st.f_frsize)
}

/// Whole MiB for sizes above one MiB, whole 4 KiB pages below.
fn round_size(bytes: u64) -> u64 {
    let unit = if bytes >= 1 << 20 { 1 << 20 } else { 4096 };
    bytes / unit * unit
}

/// `bytes` rounded up as [`round_size`] rounds down (saturating).
fn round_up(bytes: u64) -> u64 {
    let unit = if bytes > 1 << 20 { 1 << 20 } else { 4096 };
    bytes.div_ceil(unit).saturating_mul(unit)
}
