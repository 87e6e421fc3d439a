//! Read-only memory mappings of a whole file or device (mmap(2)): reading
//! by page faults is one of the ways programs load data, and the `mmap`
//! access method and `files load` measure it.
//!
//! A read past the end of a mapping, or of a page the device cannot read,
//! raises SIGBUS instead of returning an error; [`Mapping::read_at`] checks
//! every range against the mapping's length so only a file shrinking under
//! a run (which iocurve's own targets never do) can raise it.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::ptr::NonNull;

/// A read-only shared mapping of a file or device (whole, or a page-aligned
/// range), unmapped on drop.
pub struct Mapping {
    addr: NonNull<u8>,
    len: usize,
}

impl Mapping {
    /// Maps everything the descriptor names (file length or device size).
    /// An empty target cannot be mapped, so it is an error.
    pub fn whole(fd: BorrowedFd<'_>) -> io::Result<Mapping> {
        let len = rustix::fs::seek(fd, rustix::fs::SeekFrom::End(0))? as usize;
        if len == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty target"));
        }
        Mapping::range(fd, 0, len)
    }

    /// Maps `len` bytes (more than 0) from `offset`, which must be a
    /// multiple of the page size, as mmap(2) requires.
    pub fn range(fd: BorrowedFd<'_>, offset: u64, len: usize) -> io::Result<Mapping> {
        // SAFETY: a fresh read-only shared mapping of the descriptor; no
        // existing memory is affected, and the kernel picks the address.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                offset as libc::off_t,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let addr = NonNull::new(addr.cast()).ok_or_else(io::Error::last_os_error)?;
        Ok(Mapping { addr, len })
    }

    /// Where the mapping starts, for calls such as mincore(2) that take it.
    pub fn addr(&self) -> *mut libc::c_void {
        self.addr.as_ptr().cast()
    }

    /// Bytes mapped.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Never true: an empty target is refused when mapping.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Fills `dst` from `offset` of the mapping, taking the page faults that
    /// load it; a range past the end is an error, not a fault beyond it.
    pub fn read_at(&self, offset: u64, dst: &mut [u8]) -> io::Result<()> {
        let inside = offset
            .checked_add(dst.len() as u64)
            .is_some_and(|end| end <= self.len as u64);
        if !inside {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "read past the end",
            ));
        }
        // SAFETY: the range was checked against the mapping just above, and
        // the mapping lives as long as `self`; `dst` is a distinct, writable
        // buffer of the given length.
        unsafe {
            let src = self.addr.as_ptr().add(offset as usize);
            std::ptr::copy_nonoverlapping(src, dst.as_mut_ptr(), dst.len());
        }
        Ok(())
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the mapping made in `range`; no slice of
        // it outlives a `read_at` call.
        unsafe { libc::munmap(self.addr.as_ptr().cast(), self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsFd;

    #[test]
    fn reads_inside_and_refuses_past_the_end() {
        let mut f = tempfile::tempfile().unwrap();
        let bytes: Vec<u8> = (0..8192u32).map(|i| i as u8).collect();
        f.write_all(&bytes).unwrap();
        let map = Mapping::whole(f.as_fd()).unwrap();
        assert_eq!(map.len(), 8192);
        let mut dst = [0u8; 100];
        map.read_at(4000, &mut dst).unwrap();
        assert_eq!(&dst[..], &bytes[4000..4100]);
        assert!(map.read_at(8100, &mut dst).is_err());
        assert!(map.read_at(u64::MAX - 10, &mut dst).is_err());
    }

    #[test]
    fn an_empty_file_is_refused() {
        let f = tempfile::tempfile().unwrap();
        assert!(Mapping::whole(f.as_fd()).is_err());
    }
}
