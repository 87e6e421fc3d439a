//! `iocurve files`: storage as applications meet it, through whole files.
//!
//! `load` times open + read everything + close for many files of each size,
//! from a cold page cache: the game loading its assets, the 6502 LOAD of the
//! seed report, where a large fixed cost per file dominates small files. The
//! eviction is not assumed: each file is written back and dropped
//! (fdatasync + posix_fadvise DONTNEED) and then mincore(2) must show none
//! of its pages resident; otherwise the size is marked unproved.
//!
//! `save` writes one file of a fixed total size with write calls of a given
//! size, then fsync and close (the FatFs `f_write` benchmark of the seed
//! report), and reads it back from a cold cache to check every byte. The
//! block device's counters show the requests that reached the device, which
//! is what the write-call size turns into after the file system.
//!
//! Only per-file times sit on the timed path: the path is converted on the
//! stack, the buffer is allocated before, and nothing is formatted. The
//! time is read only through the engine [`Clock`] the caller gives, as
//! every workload does.
//!
//! The command's side lives here too: opening the directory as a target,
//! checking the sizes against what fits in memory, and the loops over every
//! size (`measure_loads`, `measure_saves`) on the monotonic clock; what the
//! times mean is read in `crate::analysis::files`.

use crate::engine::access::{FileRead, read_whole_file};
use crate::engine::{Clock, MonotonicClock};
use crate::error::{IoFailure, usage};
use crate::interrupt;
use crate::probe::sysfs::{self, BlockDevice, DiskStat};
use crate::result::Caveat;
use crate::result::apps::{
    EvictionProblem, EvictionProof, LoadMethod, SaveCheck, SaveSkip, SaveTimes,
};
use crate::result::apps::{SaveDeviceIo, SavePoint, SkippedSave};
use crate::result::measured::{SaveRun, SizeTimes};
use crate::result::{TargetInfo, TargetKind};
use crate::sys;
use crate::sys::buffer::{AlignedBuf, MIN_ALIGN};
use crate::units::{format_size, mb_per_s};
use crate::vocab::Pattern;
use crate::vocab::options::IoMode;
use crate::vocab::options::{CopySync, FileReadMethod};

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// A working directory inside the target directory, removed on drop.
pub struct WorkDir {
    pub path: PathBuf,
}

impl WorkDir {
    pub fn create(parent: &Path) -> io::Result<WorkDir> {
        let path = parent.join(format!(".iocurve-files-{}", std::process::id()));
        std::fs::create_dir(&path)?;
        Ok(WorkDir { path })
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Writes `count` files of `size` random bytes into `dir`, each synced.
pub fn create_files(dir: &Path, size: u64, count: u32, seed: u64) -> io::Result<Vec<PathBuf>> {
    let mut data = vec![0u8; size as usize];
    (0..count)
        .map(|i| {
            let path = dir.join(format!("f{size}-{i}.bin"));
            Pattern::Random.fill(&mut data, seed ^ (size << 20) ^ u64::from(i));
            let mut f = File::create(&path)?;
            f.write_all(&data)?;
            f.sync_all()?;
            Ok(path)
        })
        .collect()
}

/// Drops every file's pages from the page cache and checks with mincore.
pub fn evict_all(paths: &[PathBuf]) -> EvictionProof {
    let mut proof = EvictionProof {
        files: paths.len() as u64,
        resident_pages: 0,
        total_pages: 0,
        proved: true,
        problem: None,
    };
    for path in paths {
        match evict_one(path) {
            Ok((resident, total)) => {
                proof.resident_pages += resident;
                proof.total_pages += total;
            }
            Err(e) => {
                proof.problem = Some(EvictionProblem::Failed {
                    path: path.display().to_string(),
                    os_error: e.to_string(),
                })
            }
        }
    }
    if proof.problem.is_some() {
        proof.proved = false;
    } else if proof.resident_pages > 0 {
        proof.proved = false;
        proof.problem = Some(EvictionProblem::PagesStayed);
    }
    proof
}

fn evict_one(path: &Path) -> io::Result<(u64, u64)> {
    let f = File::open(path)?;
    sys::evict_file(f.as_fd())?;
    let len = f.metadata()?.len();
    sys::resident_pages(f.as_fd(), 0, len)
}

/// Times open + read to the end + close of each file, in nanoseconds,
/// into `times` (cleared first), reading the way `how` says. `buf` must hold
/// the largest file. A file that reads back short is an error: every method
/// must move every byte. Returns the bytes read. Timed on `clock`.
pub fn time_loads(
    paths: &[PathBuf],
    buf: &mut [u8],
    times: &mut Vec<u64>,
    how: FileRead,
    stop: &AtomicBool,
    clock: impl Clock,
) -> io::Result<u64> {
    times.clear();
    let mut total = 0;
    for path in paths {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let t0 = clock.now_ns();
        let f = File::open(path)?;
        let len = f.metadata()?.len() as usize;
        let got = read_whole_file(&f, len, buf, how)?;
        drop(f);
        times.push(clock.now_ns().saturating_sub(t0));
        if got != len {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("{} read back {got} of {len} bytes", path.display()),
            ));
        }
        total += got as u64;
    }
    Ok(total)
}

/// The device counters, when there is a device to read.
pub fn stat_of(device: Option<&BlockDevice>) -> Option<DiskStat> {
    device.and_then(|d| d.read_stat().ok())
}

/// Creates `path` and writes `data` to it with calls of `call` bytes (the
/// last one shorter), then fsync (unless `sync` is `none` or `each`) and
/// close, each timed on `clock`. `each` opens with O_DSYNC, so every call
/// reaches the device before the next, as on a microcontroller without a
/// cache; `direct` opens with O_DIRECT (`data` must then be aligned).
pub fn save_with_calls(
    path: &Path,
    data: &[u8],
    call: usize,
    sync: CopySync,
    clock: impl Clock,
) -> io::Result<SaveTimes> {
    let direct = if sync == CopySync::Direct {
        libc::O_DIRECT
    } else {
        0
    };
    let t0 = clock.now_ns();
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(sync.open_flags() | direct)
        .open(path)?;
    let t1 = clock.now_ns();
    let mut calls = 0;
    // A call of 0 bytes would never finish the file; 1 is the least.
    for piece in data.chunks(call.max(1)) {
        f.write_all(piece)?;
        calls += 1;
    }
    let t2 = clock.now_ns();
    // No fsync, no fsync time (not the few ns between two clock reads).
    let t3 = if sync.syncs_at_end() {
        f.sync_all()?;
        clock.now_ns()
    } else {
        t2
    };
    drop(f);
    let t4 = clock.now_ns();
    let ns = |a: u64, b: u64| b.saturating_sub(a);
    Ok(SaveTimes {
        open_ns: ns(t0, t1),
        write_ns: ns(t1, t2),
        fsync_ns: ns(t2, t3),
        close_ns: ns(t3, t4),
        calls,
    })
}

/// Evicts the file, proves it, reads it back and compares with `data`.
pub fn check_saved(path: &Path, data: &[u8]) -> io::Result<SaveCheck> {
    let eviction = evict_all(&[path.to_path_buf()]);
    let back = std::fs::read(path)?;
    let common = back.len().min(data.len());
    let mut wrong = back.len().abs_diff(data.len()) as u64;
    let mut first = (back.len() != data.len()).then_some(common as u64);
    for (i, (a, b)) in back.iter().zip(data).enumerate() {
        if a != b {
            wrong += 1;
            first = Some(first.map_or(i as u64, |f| f.min(i as u64)));
        }
    }
    Ok(SaveCheck {
        bytes_checked: back.len() as u64,
        bytes_wrong: wrong,
        first_wrong_offset: first,
        eviction,
    })
}

/// Default file sizes of `files load`: 1.5 KiB up to 16 MiB.
pub const LOAD_SIZES: [u64; 6] = [1536, 8 << 10, 32 << 10, 128 << 10, 1 << 20, 16 << 20];
/// Default bytes of files per size (the count is at least 4, at most 200).
const LOAD_BYTES_PER_SIZE: u64 = 16 << 20;
/// The largest file (or save size) iocurve holds in memory at once.
const MAX_FILE: u64 = 1 << 30;

/// How many files of `size` to load when `--count` is not given.
pub fn default_count(size: u64) -> u32 {
    (LOAD_BYTES_PER_SIZE / size.max(1)).clamp(4, 200) as u32
}

/// Refuses an empty list, a size of 0 or one above what fits in memory.
pub fn check_sizes(sizes: &[u64], option: &str) -> anyhow::Result<()> {
    if sizes.is_empty() || sizes.contains(&0) {
        return Err(usage(format!(
            "{option} needs sizes above 0, such as 8k or 1M"
        )));
    }
    if let Some(&big) = sizes.iter().find(|&&s| s > MAX_FILE) {
        return Err(usage(format!(
            "{option}: {} is larger than the 1 GiB iocurve holds in memory",
            format_size(big)
        )));
    }
    Ok(())
}

/// The read method asked for; `stdio_bs` is the stdio call size.
pub fn read_method(method: FileReadMethod, stdio_bs: u64) -> anyhow::Result<FileRead> {
    Ok(match method {
        FileReadMethod::Mmap => FileRead::Mmap,
        FileReadMethod::Stdio => {
            let call = usize::try_from(stdio_bs)
                .ok()
                .filter(|&c| c > 0 && c as u64 <= MAX_FILE);
            FileRead::Stdio(
                call.ok_or_else(|| {
                    usage("--stdio-bs must be from 1 byte to 1 GiB, such as 1 or 4k")
                })?,
            )
        }
        FileReadMethod::Read | FileReadMethod::Pread => FileRead::Read,
    })
}

/// The method as the result records it.
pub fn describe_method(how: FileRead) -> LoadMethod {
    match how {
        FileRead::Read => LoadMethod::Read,
        FileRead::Mmap => LoadMethod::Mmap,
        FileRead::Stdio(call) => LoadMethod::Stdio {
            call_bytes: call as u64,
        },
    }
}

/// Checks the directory, makes the working directory inside it, and finds
/// the block device beneath it.
pub fn open_dir(dir: &Path) -> anyhow::Result<(WorkDir, Option<BlockDevice>, TargetInfo)> {
    interrupt::install();
    if !dir.exists() {
        return Err(usage(format!(
            "{} does not exist: give a directory",
            dir.display()
        )));
    }
    // A directory in /proc, /sys or cgroup is no place for files (in
    // cgroup, making one makes a control group).
    crate::medium::storage::refuse_unless_storage(dir)?;
    let meta =
        std::fs::metadata(dir).map_err(|e| io_failure(dir, "cannot use the directory", e))?;
    if !meta.is_dir() {
        return Err(usage(format!(
            "{} is not a directory: files load/save work in a directory",
            dir.display()
        )));
    }
    let work = WorkDir::create(dir)
        .map_err(|e| io_failure(dir, "cannot create a working directory in", e))?;
    let device = BlockDevice::from_path(dir).ok().flatten();
    let info = dir_info(dir, &work, device.as_ref());
    Ok((work, device, info))
}

/// The target as the result records it: a directory, read through the
/// page cache, with the device beneath when there is one.
fn dir_info(dir: &Path, work: &WorkDir, device: Option<&BlockDevice>) -> TargetInfo {
    let mut notes = vec![Caveat::FilesThroughPageCache];
    if device.is_none() {
        notes.push(Caveat::NoBlockDevice);
    }
    TargetInfo {
        path: dir.display().to_string(),
        kind: TargetKind::Directory,
        scratch_file: Some(work.path.display().to_string()),
        size_bytes: 0,
        logical_block_size: device.map_or(512, |d| d.logical_block_size),
        device: device.cloned(),
        filesystem: sysfs::mount_of(dir).ok().flatten(),
        mode: IoMode::Buffered,
        writable: true,
        notes,
    }
}

/// Creates the files of every size in the working directory.
pub fn create_sets(
    work: &Path,
    sizes: &[u64],
    count: Option<u32>,
    seed: u64,
) -> anyhow::Result<Vec<(u64, Vec<PathBuf>)>> {
    let mut sets = Vec::new();
    for &size in sizes {
        let count = count.unwrap_or_else(|| default_count(size));
        let paths = create_files(work, size, count, seed)
            .map_err(|e| io_failure(work, "cannot create the test files", e))?;
        sets.push((size, paths));
    }
    Ok(sets)
}

/// Under MPI, every rank starts timing its files together (once: a rank
/// may stop between sizes where another goes on).
fn hold_with_other_ranks(label: &str) {
    if let Some(c) = super::coordinate::current() {
        c.before_counted(label);
    }
}

/// Loads every set of files in turn from a cold cache (until interrupted).
pub fn measure_loads(
    work: &Path,
    sets: &[(u64, Vec<PathBuf>)],
    how: FileRead,
    device: Option<&BlockDevice>,
) -> anyhow::Result<Vec<SizeTimes>> {
    let largest = sets.iter().map(|(size, _)| *size).max().unwrap_or(1);
    let mut buf = vec![0u8; largest as usize];
    let mut measured = Vec::new();
    hold_with_other_ranks("files load");
    for (size, paths) in sets {
        if interrupt::stop_flag().load(Ordering::Relaxed) {
            break;
        }
        let m = load_one_size(*size, paths, &mut buf, how, device)
            .map_err(|e| io_failure(work, "cannot read the test files", e))?;
        measured.push(m);
    }
    Ok(measured)
}

fn load_one_size(
    size: u64,
    paths: &[PathBuf],
    buf: &mut [u8],
    how: FileRead,
    device: Option<&BlockDevice>,
) -> io::Result<SizeTimes> {
    let eviction = evict_all(paths);
    let mut times = Vec::with_capacity(paths.len());
    let before = stat_of(device);
    time_loads(
        paths,
        buf,
        &mut times,
        how,
        interrupt::stop_flag(),
        MonotonicClock::new(),
    )?;
    let after = stat_of(device);
    let device_read_bytes = before
        .zip(after)
        .map(|(b, a): (DiskStat, DiskStat)| a.since(&b).read_bytes());
    Ok(SizeTimes {
        size,
        times,
        eviction,
        device_read_bytes,
    })
}

/// Saves a file of `file_size` with each write-call size in turn (until
/// interrupted); a failure stops the loop and is returned beside the
/// sizes measured before it, which are still worth printing.
/// What `files save` writes: one file of `file_size` bytes per write-call
/// size, made durable the `sync` way.
#[derive(Debug, Clone)]
pub struct SavePlan {
    pub file_size: u64,
    pub calls: Vec<u64>,
    pub seed: u64,
    pub sync: CopySync,
}

/// Saves the file once per write-call size and reads each back.
pub fn measure_saves(work: &Path, plan: &SavePlan, device: Option<&BlockDevice>) -> SaveRun {
    let mut buf = AlignedBuf::new(plan.file_size as usize, MIN_ALIGN);
    let align = device.map_or(512, |d| u64::from(d.logical_block_size).max(512));
    let mut run = SaveRun::default();
    hold_with_other_ranks("files save");
    for &w in &plan.calls {
        if interrupt::stop_flag().load(Ordering::Relaxed) {
            break;
        }
        if plan.sync == CopySync::Direct {
            if let Some(why) = direct_refusal(w, plan.file_size, align) {
                run.skipped.push(SkippedSave { write_size: w, why });
                continue;
            }
        }
        let data = buf.as_mut_slice();
        Pattern::Random.fill(data, plan.seed ^ w);
        let path = work.join(format!("save-{w}.bin"));
        let point = save_one(&path, data, w, plan.sync, device);
        let _ = std::fs::remove_file(&path);
        match point {
            Ok(point) => run.points.push(point),
            Err(e) => {
                run.failure = Some(save_failure(&path, w, plan.sync, &e));
                break;
            }
        }
    }
    run
}

/// Why O_DIRECT cannot save a file with `w`-byte calls: every call (the
/// last, shorter one too) must start and end on the device's logical
/// block (`align` bytes), as open(2) says of O_DIRECT.
pub fn direct_refusal(w: u64, file_size: u64, align: u64) -> Option<SaveSkip> {
    if w.is_multiple_of(align) && file_size.is_multiple_of(align) {
        return None;
    }
    Some(SaveSkip::DirectUnaligned { align_bytes: align })
}

fn save_one(
    path: &Path,
    data: &[u8],
    w: u64,
    sync: CopySync,
    device: Option<&BlockDevice>,
) -> io::Result<SavePoint> {
    let before = stat_of(device);
    let times = save_with_calls(path, data, w as usize, sync, MonotonicClock::new())?;
    let after = stat_of(device);
    let check = check_saved(path, data)?;
    let total_ns = times.total_ns();
    let device = device.zip(before.zip(after)).map(|(d, (b, a))| {
        let delta = a.since(&b);
        SaveDeviceIo {
            device: d.name.clone(),
            write_requests: delta.write_ios,
            write_bytes: delta.write_bytes(),
            avg_request_bytes: (delta.write_ios > 0)
                .then(|| delta.write_bytes() as f64 / delta.write_ios as f64),
        }
    });
    Ok(SavePoint {
        write_size: w,
        mb_per_s: mb_per_s(data.len() as u64, total_ns),
        total_ns,
        times,
        device,
        check,
    })
}

/// Why saving with `w`-byte calls stopped, with the fix; the sizes before
/// it are kept in the result.
fn save_failure(path: &Path, w: u64, sync: CopySync, e: &io::Error) -> String {
    let fix = match e.raw_os_error() {
        Some(libc::EINVAL) if sync == CopySync::Direct => {
            "this file system does not take O_DIRECT: use --sync each"
        }
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => {
            "the file system is full: free some space or give a smaller --size"
        }
        Some(libc::EROFS) => "the file system became read-only (check `dmesg`)",
        Some(libc::EIO) => "the device reported an error: check `dmesg`",
        _ => "the sizes measured before it are shown above",
    };
    format!(
        "saving {} with {w}-byte write calls failed: {e}; {fix}",
        path.display()
    )
}

fn io_failure(path: &Path, what: &str, e: io::Error) -> anyhow::Error {
    IoFailure::new(format!("{what} {}: {e}", path.display()), Some(e)).into()
}

#[cfg(test)]
mod tests;
