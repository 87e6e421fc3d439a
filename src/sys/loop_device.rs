//! The loop driver's status ioctl (`LOOP_GET_STATUS64`, loop(4)): the write
//! rules need to know which file backs a loop device before writing to it.

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
