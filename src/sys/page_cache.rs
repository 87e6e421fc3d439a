//! Page-cache residency and eviction (mincore(2), posix_fadvise(2)): an
//! honest cold read needs the cache emptied and the emptying proved.

use std::io;
use std::os::fd::BorrowedFd;

use super::mmap::Mapping;

/// How many pages of `[offset, offset + len)` of the file are in the page
/// cache, and how many pages the range spans (mincore(2) over a read-only
/// shared mapping). Proves that an eviction worked.
pub fn resident_pages(fd: BorrowedFd<'_>, offset: u64, len: u64) -> io::Result<(u64, u64)> {
    let page = rustix::param::page_size() as u64;
    let start = offset / page * page;
    let map_len = (offset + len - start) as usize;
    if len == 0 {
        return Ok((0, 0));
    }
    let map = Mapping::range(fd, start, map_len)?;
    let pages = map_len.div_ceil(page as usize);
    let mut vec = vec![0u8; pages];
    // SAFETY: addr..addr+map_len is the mapping made above, alive until the
    // end of this function, and `vec` holds one byte per page of it, as
    // mincore(2) requires.
    let rc = unsafe { libc::mincore(map.addr(), map_len, vec.as_mut_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let resident = vec.iter().filter(|&&b| b & 1 == 1).count() as u64;
    Ok((resident, pages as u64))
}

/// The largest file [`resident_share_of_file`] maps: its residency
/// vector is one byte per page (16 MiB for 64 GiB).
const MAX_SHARE_FILE: u64 = 64 << 30;

/// Share of the pages of the file at `path` in the page cache, read-only
/// and without following a final symlink; `None` for an empty file, one
/// over [`MAX_SHARE_FILE`], or one that cannot be opened or mapped. For
/// the file beneath a stacked device (a loop device's backing file),
/// whose cache may serve what the device's own does not.
pub fn resident_share_of_file(path: &std::path::Path) -> Option<f64> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    )
    .ok()?;
    let stat = rustix::fs::fstat(&fd).ok()?;
    let size = u64::try_from(stat.st_size).ok()?;
    let regular =
        rustix::fs::FileType::from_raw_mode(stat.st_mode) == rustix::fs::FileType::RegularFile;
    if !regular || size == 0 || size > MAX_SHARE_FILE {
        return None;
    }
    use std::os::fd::AsFd;
    let (resident, pages) = resident_pages(fd.as_fd(), 0, size).ok()?;
    (pages > 0).then(|| resident as f64 / pages as f64)
}

/// Writes back and drops a file's pages from the page cache: fdatasync,
/// then posix_fadvise(DONTNEED) over the whole file. Whether it worked is
/// for [`resident_pages`] to prove; the kernel treats DONTNEED as advice.
pub fn evict_file(fd: BorrowedFd<'_>) -> io::Result<()> {
    rustix::fs::fdatasync(fd)?;
    rustix::fs::fadvise(fd, 0, None, rustix::fs::Advice::DontNeed)?;
    Ok(())
}
