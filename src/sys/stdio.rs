//! The C library's buffered `FILE` stream (fdopen(3), fread(3), fseeko(3)):
//! programs that read in small calls through stdio get the library's
//! buffer between them and the device, and the `stdio` access method and
//! `files load` measure what that buffer does.

use std::io;
use std::os::fd::{BorrowedFd, IntoRawFd};
use std::ptr::NonNull;

/// A read-only C library stream on a duplicate of a descriptor, closed on
/// drop. The duplicate is the stream's own, so the caller's descriptor
/// stays open and unaffected.
pub struct Stream {
    fp: NonNull<libc::FILE>,
}

impl Stream {
    /// Opens a stream for reading on a close-on-exec duplicate of `fd`.
    pub fn open(fd: BorrowedFd<'_>) -> io::Result<Stream> {
        let raw = rustix::io::fcntl_dupfd_cloexec(fd, 0)?.into_raw_fd();
        // SAFETY: `raw` is a descriptor we own (just duplicated); fdopen
        // takes it over and the mode string is NUL-terminated.
        let fp = unsafe { libc::fdopen(raw, c"rb".as_ptr()) };
        match NonNull::new(fp) {
            Some(fp) => Ok(Stream { fp }),
            None => {
                let e = io::Error::last_os_error();
                // SAFETY: fdopen failed, so `raw` is still ours to close.
                unsafe { libc::close(raw) };
                Err(e)
            }
        }
    }

    /// Moves the stream to `offset` (fseeko drops the library's buffer).
    pub fn seek(&mut self, offset: u64) -> io::Result<()> {
        // SAFETY: `fp` is the open stream owned by self.
        let rc = unsafe { libc::fseeko(self.fp.as_ptr(), offset as libc::off_t, libc::SEEK_SET) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// One `fread` of up to `dst.len()` bytes; returns how many it gave.
    /// Nothing at all is an error: the library's, or the end of the file.
    pub fn read(&mut self, dst: &mut [u8]) -> io::Result<usize> {
        // SAFETY: `dst` is writable memory of its length that we borrow
        // exclusively, and `fp` is the open stream owned by self.
        let n = unsafe { libc::fread(dst.as_mut_ptr().cast(), 1, dst.len(), self.fp.as_ptr()) };
        match n {
            0 if !dst.is_empty() => Err(self.failure()),
            n => Ok(n),
        }
    }

    /// Why a read gave nothing, with the stream's flags cleared so a later
    /// seek can go on.
    fn failure(&mut self) -> io::Error {
        // SAFETY: `fp` is the open stream owned by self.
        let failed = unsafe { libc::ferror(self.fp.as_ptr()) } != 0;
        let e = io::Error::last_os_error();
        // SAFETY: as above.
        unsafe { libc::clearerr(self.fp.as_ptr()) };
        match failed {
            true => e,
            false => io::Error::new(io::ErrorKind::UnexpectedEof, "end of file"),
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: closing the stream opened in `open`, used by no one else.
        unsafe { libc::fclose(self.fp.as_ptr()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsFd;

    #[test]
    fn seeks_reads_and_reports_the_end() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(b"0123456789").unwrap();
        let mut s = Stream::open(f.as_fd()).unwrap();
        s.seek(4).unwrap();
        let mut dst = [0u8; 3];
        assert_eq!(s.read(&mut dst).unwrap(), 3);
        assert_eq!(&dst, b"456");
        s.seek(10).unwrap();
        let e = s.read(&mut dst).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        s.seek(0).unwrap();
        assert_eq!(s.read(&mut dst).unwrap(), 3);
        assert_eq!(&dst, b"012");
    }
}
