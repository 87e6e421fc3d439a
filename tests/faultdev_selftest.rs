//! Checks that the fault-injecting test device (tests/common/faultdev.rs +
//! tests/support/faultfs.py) really fails and delays I/O where asked, so the
//! tests built on it test iocurve and not the harness.
//!
//! Skips (prints `skipped: ...`) where the device cannot be made; set
//! IOCURVE_REQUIRE_FAULTDEV=1 to turn a skip into a failure.

#[path = "common/faultdev.rs"]
mod faultdev;

use faultdev::FaultDevice;
use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::time::{Duration, Instant};

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
const BLOCK: usize = 4096;

fn make(
    size: u64,
    eio_read: &[(u64, u64)],
    eio_write: &[(u64, u64)],
    delay_ms: u32,
) -> Option<FaultDevice> {
    match FaultDevice::new(size, eio_read, eio_write, delay_ms) {
        Ok(d) => Some(d),
        Err(e) if std::env::var_os("IOCURVE_REQUIRE_FAULTDEV").is_some_and(|v| v == "1") => {
            panic!("fault device required but unavailable: {e}")
        }
        Err(e) => {
            println!("skipped: {e}");
            None
        }
    }
}

/// A page-aligned buffer, as O_DIRECT needs.
struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

impl AlignedBuf {
    fn new(len: usize) -> Self {
        let layout = Layout::from_size_align(len, 4096).unwrap();
        let ptr = unsafe { alloc_zeroed(layout) };
        assert!(!ptr.is_null());
        AlignedBuf { ptr, layout }
    }
    fn as_slice(&self) -> &[u8] {
        unsafe { std::slice::from_raw_parts(self.ptr, self.layout.size()) }
    }
    fn as_mut_slice(&mut self) -> &mut [u8] {
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

fn open_direct(dev: &FaultDevice, write: bool) -> File {
    OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(libc::O_DIRECT)
        .open(&dev.dev)
        .unwrap_or_else(|e| panic!("open {} O_DIRECT: {e}", dev.dev.display()))
}

fn assert_pattern(buf: &[u8], offset: u64) {
    for (i, &b) in buf.iter().enumerate() {
        let want = FaultDevice::pattern_at(offset + i as u64);
        assert_eq!(
            b,
            want,
            "byte at {} is {b:#x}, want {want:#x}",
            offset + i as u64
        );
    }
}

#[test]
fn eio_read_range_fails_exactly_there() {
    let size = 4 * MIB;
    let Some(dev) = make(size, &[(MIB, 4 * KIB)], &[], 0) else {
        return;
    };
    let f = open_direct(&dev, false);
    let mut buf = AlignedBuf::new(BLOCK);

    // Like `dd bs=4k iflag=direct` over the whole device, but carrying on
    // past errors: exactly the block at 1 MiB fails, with EIO.
    let mut failed = Vec::new();
    for off in (0..size).step_by(BLOCK) {
        match f.read_at(buf.as_mut_slice(), off) {
            Ok(n) => {
                assert_eq!(n, BLOCK, "short read at {off}");
                assert_pattern(buf.as_slice(), off);
            }
            Err(e) => failed.push((off, e.raw_os_error())),
        }
    }
    assert_eq!(failed, vec![(MIB, Some(libc::EIO))], "log:\n{}", dev.log());

    // A larger read that spans the bad range fails as a whole.
    let mut big = AlignedBuf::new(256 * KIB as usize);
    let err = f.read_at(big.as_mut_slice(), MIB - 128 * KIB).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EIO));

    assert!(
        dev.log().contains("EIO read offset=1048576"),
        "log:\n{}",
        dev.log()
    );
}

#[test]
fn eio_write_range_fails_exactly_there() {
    let size = 4 * MIB;
    let bad = 2 * MIB;
    let Some(dev) = make(size, &[], &[(bad, 4 * KIB)], 0) else {
        return;
    };
    let f = open_direct(&dev, true);
    let mut buf = AlignedBuf::new(BLOCK);
    buf.as_mut_slice().fill(0xab);

    let err = f.write_at(buf.as_slice(), bad).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EIO), "log:\n{}", dev.log());

    // The neighbours of the bad range are writable, and writes reach the
    // backing file.
    for off in [bad - BLOCK as u64, bad + 4 * KIB] {
        assert_eq!(
            f.write_at(buf.as_slice(), off)
                .expect("write next to bad range"),
            BLOCK
        );
    }
    let mut back = vec![0u8; BLOCK];
    File::open(&dev.backing)
        .unwrap()
        .read_exact_at(&mut back, bad + 4 * KIB)
        .unwrap();
    assert!(
        back.iter().all(|&b| b == 0xab),
        "write did not reach the backing file"
    );

    // Reads of the write-bad range still work and see the old data.
    let mut rbuf = AlignedBuf::new(BLOCK);
    assert_eq!(
        f.read_at(rbuf.as_mut_slice(), bad)
            .expect("read of write-bad range"),
        BLOCK
    );
    assert_pattern(rbuf.as_slice(), bad);

    assert!(
        dev.log().contains("EIO write offset=2097152"),
        "log:\n{}",
        dev.log()
    );
}

/// Median latency of `n` 4 KiB O_DIRECT reads at distinct offsets.
fn median_read_latency(dev: &FaultDevice, n: u64) -> Duration {
    let f = open_direct(dev, false);
    let mut buf = AlignedBuf::new(BLOCK);
    let mut lat: Vec<Duration> = (0..n)
        .map(|i| {
            let t = Instant::now();
            f.read_at(buf.as_mut_slice(), i * 64 * KIB).expect("read");
            t.elapsed()
        })
        .collect();
    lat.sort();
    lat[lat.len() / 2]
}

#[test]
fn delay_shows_in_read_latency() {
    let delay_ms = 50;
    let Some(slow) = make(MIB, &[], &[], delay_ms) else {
        return;
    };
    let slow_lat = median_read_latency(&slow, 5);
    drop(slow);
    let Some(fast) = make(MIB, &[], &[], 0) else {
        return;
    };
    let fast_lat = median_read_latency(&fast, 5);

    let delay = Duration::from_millis(delay_ms as u64);
    assert!(
        slow_lat >= delay,
        "delayed read took {slow_lat:?}, want >= {delay:?}"
    );
    assert!(
        slow_lat < delay * 10,
        "delayed read took {slow_lat:?}, far over {delay:?}"
    );
    assert!(fast_lat < delay, "undelayed read took {fast_lat:?}");
}
