//! Memory aligned for O_DIRECT.
//!
//! O_DIRECT transfers need the buffer address, the length and the file offset
//! aligned to the device's logical block size (open(2), "O_DIRECT"). We align
//! to at least a page so one buffer suits every device.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ptr::NonNull;

/// The smallest alignment handed out: one page.
pub const MIN_ALIGN: usize = 4096;

/// A zero-initialised heap buffer whose start is aligned to `align` bytes.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: AlignedBuf owns its allocation exclusively, like a Vec<u8>; moving
// it to another thread moves that ownership.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// Allocates `len` zeroed bytes aligned to `max(align, 4096)`.
    ///
    /// Panics only if `len` is zero or the layout overflows, which callers
    /// rule out by validating sizes first.
    pub fn new(len: usize, align: usize) -> AlignedBuf {
        assert!(len > 0, "an aligned buffer must not be empty");
        let align = align.max(MIN_ALIGN).next_power_of_two();
        let layout = Layout::from_size_align(len, align).expect("validated buffer layout");
        // SAFETY: the layout has a non-zero size (asserted above).
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        AlignedBuf { ptr, layout }
    }

    pub fn len(&self) -> usize {
        self.layout.size()
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr points to `len` initialised (zeroed) bytes owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len()) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and `&mut self` guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len()) }
    }

    /// Raw start address, for handing to the kernel (io_uring).
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: ptr was allocated with exactly this layout and is freed once.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_zeroed() {
        for align in [512, 4096, 65536] {
            let mut b = AlignedBuf::new(8192, align);
            assert_eq!(b.as_mut_ptr() as usize % align.max(MIN_ALIGN), 0);
            assert!(b.as_slice().iter().all(|&x| x == 0));
            b.as_mut_slice()[8191] = 7;
            assert_eq!(b.as_slice()[8191], 7);
        }
    }
}
