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

/// `struct loop_info64` of `<linux/loop.h>`, as `LOOP_GET_STATUS64` fills it.
#[repr(C)]
pub struct LoopInfo64 {
    pub lo_device: u64,
    pub lo_inode: u64,
    pub lo_rdevice: u64,
    pub lo_offset: u64,
    pub lo_sizelimit: u64,
    pub lo_number: u32,
    pub lo_encrypt_type: u32,
    pub lo_encrypt_key_size: u32,
    pub lo_flags: u32,
    pub lo_file_name: [u8; 64],
    pub lo_crypt_name: [u8; 64],
    pub lo_encrypt_key: [u8; 32],
    pub lo_init: [u64; 2],
}

const _: () = assert!(std::mem::size_of::<LoopInfo64>() == 232);

/// `LOOP_GET_STATUS64` from `<linux/loop.h>` (an old-style number, no size
/// or direction bits).
const LOOP_GET_STATUS64: rustix::ioctl::Opcode = 0x4C05;

/// The kernel's status of the loop device open on `fd` (what backs it);
/// Err when `fd` is not a loop device or the device has been detached.
pub fn loop_status64(fd: impl std::os::fd::AsFd) -> rustix::io::Result<LoopInfo64> {
    // SAFETY: LOOP_GET_STATUS64 writes one `struct loop_info64`, which
    // `LoopInfo64` reproduces field for field (its size is asserted above).
    unsafe {
        rustix::ioctl::ioctl(
            fd,
            rustix::ioctl::Getter::<LOOP_GET_STATUS64, LoopInfo64>::new(),
        )
    }
}

/// The OS error number behind SQLite's last I/O or open error on `conn`.
pub fn sqlite_system_errno(conn: &rusqlite::Connection) -> i32 {
    // SAFETY: the handle is valid for as long as `conn` is borrowed, and
    // sqlite3_system_errno only reads a field of it.
    unsafe { rusqlite::ffi::sqlite3_system_errno(conn.handle()) }
}
