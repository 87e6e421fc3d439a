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

use crate::engine::access::{FileRead, read_whole_file};
use crate::engine::{Clock, sys};
use crate::probe::sysfs::{BlockDevice, DiskStat};
pub use crate::result::apps::{EvictionProof, SaveCheck, SaveTimes};
use crate::workload::Pattern;

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsFd;
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
            Err(e) => proof.problem = Some(format!("{}: {e}", path.display())),
        }
    }
    if proof.problem.is_some() {
        proof.proved = false;
    } else if proof.resident_pages > 0 {
        proof.proved = false;
        proof.problem = Some(format!(
            "{} of {} pages stayed in the page cache after eviction (tmpfs and some network file systems keep them)",
            proof.resident_pages, proof.total_pages
        ));
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
/// last one shorter), then fsync and close, each timed on `clock`.
pub fn save_with_calls(
    path: &Path,
    data: &[u8],
    call: usize,
    clock: impl Clock,
) -> io::Result<SaveTimes> {
    let t0 = clock.now_ns();
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    let t1 = clock.now_ns();
    let mut calls = 0;
    // A call of 0 bytes would never finish the file; 1 is the least.
    for piece in data.chunks(call.max(1)) {
        f.write_all(piece)?;
        calls += 1;
    }
    let t2 = clock.now_ns();
    f.sync_all()?;
    let t3 = clock.now_ns();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::MonotonicClock;

    #[test]
    fn save_then_check_finds_every_byte_right() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.bin");
        let mut data = vec![0u8; 10_000];
        Pattern::Random.fill(&mut data, 7);
        let t = save_with_calls(&path, &data, 1636, MonotonicClock::new()).unwrap();
        assert_eq!(t.calls, 7);
        let check = check_saved(&path, &data).unwrap();
        assert!(check.ok());
        assert_eq!(check.bytes_checked, 10_000);
    }

    #[test]
    fn check_finds_a_changed_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.bin");
        let data = vec![5u8; 4096];
        save_with_calls(&path, &data, 512, MonotonicClock::new()).unwrap();
        let mut other = data.clone();
        other[1000] = 6;
        let check = check_saved(&path, &other).unwrap();
        assert_eq!(check.bytes_wrong, 1);
        assert_eq!(check.first_wrong_offset, Some(1000));
    }

    #[test]
    fn loads_are_timed_per_file() {
        let dir = tempfile::tempdir().unwrap();
        let paths = create_files(dir.path(), 8192, 3, 1).unwrap();
        let mut buf = vec![0u8; 8192];
        let mut times = Vec::new();
        time_loads(
            &paths,
            &mut buf,
            &mut times,
            FileRead::Read,
            &AtomicBool::new(false),
            MonotonicClock::new(),
        )
        .unwrap();
        assert_eq!(times.len(), 3);
        assert!(times.iter().all(|&t| t > 0));
    }

    #[test]
    fn every_method_reads_the_same_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let paths = create_files(dir.path(), 10_000, 2, 7).unwrap();
        let expected: Vec<u8> = std::fs::read(&paths[1]).unwrap();
        for how in [
            FileRead::Read,
            FileRead::Mmap,
            FileRead::Stdio(1),
            FileRead::Stdio(4096),
        ] {
            let mut buf = vec![0u8; 10_000];
            let mut times = Vec::new();
            let bytes = time_loads(
                &paths,
                &mut buf,
                &mut times,
                how,
                &AtomicBool::new(false),
                MonotonicClock::new(),
            )
            .unwrap();
            assert_eq!(bytes, 20_000, "{how:?}");
            assert_eq!(buf, expected, "{how:?}: the last file's bytes");
        }
    }
}
