//! The few system calls no safe wrapper covers: resource usage and page-cache
//! residency.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// User and system CPU seconds of the whole process so far (getrusage(2)).
pub fn cpu_seconds() -> (f64, f64) {
    rusage(libc::RUSAGE_SELF)
}

/// User and system CPU seconds of the calling thread so far.
pub fn thread_cpu_seconds() -> (f64, f64) {
    rusage(libc::RUSAGE_THREAD)
}

fn rusage(who: libc::c_int) -> (f64, f64) {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a complete rusage into the pointer we pass; the
    // pointer is valid for writes of that size.
    let rc = unsafe { libc::getrusage(who, usage.as_mut_ptr()) };
    if rc != 0 {
        return (0.0, 0.0);
    }
    // SAFETY: rc == 0 means the kernel filled the struct.
    let usage = unsafe { usage.assume_init() };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    (secs(usage.ru_utime), secs(usage.ru_stime))
}

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
    // SAFETY: we ask the kernel for a fresh read-only shared mapping of the
    // file at a page-aligned offset; no existing memory is affected.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            map_len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            fd.as_raw_fd(),
            start as libc::off_t,
        )
    };
    if addr == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let pages = map_len.div_ceil(page as usize);
    let mut vec = vec![0u8; pages];
    // SAFETY: addr..addr+map_len is the mapping created above and `vec` holds
    // one byte per page of it, as mincore(2) requires.
    let rc = unsafe { libc::mincore(addr, map_len, vec.as_mut_ptr()) };
    let err = io::Error::last_os_error();
    // SAFETY: unmapping exactly the mapping created above, which nothing else
    // references.
    unsafe { libc::munmap(addr, map_len) };
    if rc != 0 {
        return Err(err);
    }
    let resident = vec.iter().filter(|&&b| b & 1 == 1).count() as u64;
    Ok((resident, pages as u64))
}

/// The CPUs this process may run on (sched_getaffinity(2)), in order.
pub fn allowed_cpus() -> Vec<usize> {
    use rustix::thread::{CpuSet, sched_getaffinity};
    match sched_getaffinity(None) {
        Ok(set) => (0..CpuSet::MAX_CPU).filter(|&c| set.is_set(c)).collect(),
        Err(_) => (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect(),
    }
}

/// Pins the calling thread to one CPU (sched_setaffinity(2) on thread 0,
/// which the kernel reads as "the caller").
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    use rustix::thread::{CpuSet, sched_setaffinity};
    let mut set = CpuSet::new();
    set.set(cpu);
    sched_setaffinity(None, &set).map_err(io::Error::from)
}

/// Writes back and drops a file's pages from the page cache: fdatasync,
/// then posix_fadvise(DONTNEED) over the whole file. Whether it worked is
/// for [`resident_pages`] to prove; the kernel treats DONTNEED as advice.
pub fn evict_file(fd: BorrowedFd<'_>) -> io::Result<()> {
    rustix::fs::fdatasync(fd)?;
    rustix::fs::fadvise(fd, 0, None, rustix::fs::Advice::DontNeed)?;
    Ok(())
}
