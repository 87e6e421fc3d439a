//! Checks that the fault-injecting test device (tests/common/faultdev.rs +
//! tests/support/faultfs.py) really fails and delays I/O where asked, so the
//! tests built on it test iocurve and not the harness.
//!
//! Skips (prints `skipped: ...`) where the device cannot be made; set
//! IOCURVE_REQUIRE_FAULTDEV=1 to turn a skip into a failure.

use crate::common::faultdev;

use faultdev::FaultDevice;
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

/// A page-aligned buffer for O_DIRECT: the engine's, whose unsafe code
/// stays in the engine.
struct AlignedBuf(iocurve::sys::buffer::AlignedBuf);

impl AlignedBuf {
    fn new(len: usize) -> Self {
        AlignedBuf(iocurve::sys::buffer::AlignedBuf::new(len, 4096))
    }
    fn as_slice(&self) -> &[u8] {
        self.0.as_slice()
    }
    fn as_mut_slice(&mut self) -> &mut [u8] {
        self.0.as_mut_slice()
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

// --- the flash model: counterfeits, the hiding cache, AU timing --------

use faultdev::{Fake, FaultSpec};

/// A real size in whole sectors that is no multiple of 4 KiB, as any
/// real size must be possible.
const ODD_REAL: u64 = 3 * MIB + 1536;
const FAKE_SIZE: u64 = 8 * MIB;

fn build(spec: FaultSpec) -> Option<FaultDevice> {
    match spec.build() {
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

fn counterfeit(kind: Fake, hide: u64) -> Option<FaultDevice> {
    build(
        FaultDevice::spec(FAKE_SIZE)
            .fake(ODD_REAL, kind)
            .hide_cache(hide),
    )
}

/// A block of `len` bytes no device holds by itself: `tag` everywhere.
fn block_of(tag: u8, len: usize) -> AlignedBuf {
    let mut b = AlignedBuf::new(len);
    b.as_mut_slice().fill(tag);
    b
}

fn read_block(f: &File, at: u64) -> std::io::Result<Vec<u8>> {
    let mut b = AlignedBuf::new(BLOCK);
    f.read_at(b.as_mut_slice(), at)?;
    Ok(b.as_slice().to_vec())
}

#[test]
fn wrap_fake_maps_an_address_beyond_the_real_size_onto_address_mod_real() {
    let Some(dev) = counterfeit(Fake::Wrap, 0) else {
        return;
    };
    let f = open_direct(&dev, true);
    let x = 64 * KIB;
    f.write_at(block_of(0xa5, BLOCK).as_slice(), ODD_REAL + x)
        .unwrap();
    assert!(read_block(&f, x).unwrap().iter().all(|&b| b == 0xa5));
    // Twice round: 2·real + x is the same block again.
    assert!(
        read_block(&f, 2 * ODD_REAL + x)
            .unwrap()
            .iter()
            .all(|&b| b == 0xa5)
    );
    // A block straddling the real size reads the start of the device on.
    let across = ODD_REAL - 1024;
    let got = read_block(&f, across).unwrap();
    assert_pattern(&got[..1024], across);
    assert_pattern(&got[1024..], 0);
}

#[test]
fn zeros_fake_drops_writes_beyond_the_real_size() {
    let Some(dev) = counterfeit(Fake::Zeros, 0) else {
        return;
    };
    let f = open_direct(&dev, true);
    let across = ODD_REAL - 1024;
    f.write_at(block_of(0x5a, BLOCK).as_slice(), across)
        .unwrap();
    let got = read_block(&f, across).unwrap();
    assert!(
        got[..1024].iter().all(|&b| b == 0x5a),
        "the real part keeps it"
    );
    assert!(got[1024..].iter().all(|&b| b == 0), "beyond reads zeros");
    f.write_at(block_of(0x5a, BLOCK).as_slice(), FAKE_SIZE - BLOCK as u64)
        .unwrap();
    let last = read_block(&f, FAKE_SIZE - BLOCK as u64).unwrap();
    assert!(last.iter().all(|&b| b == 0));
    // Nothing beyond wrapped onto the real part either.
    assert_pattern(&read_block(&f, 0).unwrap(), 0);
}

#[test]
fn stale_fake_reads_the_same_old_contents_whatever_was_written() {
    let Some(dev) = counterfeit(Fake::Stale, 0) else {
        return;
    };
    let f = open_direct(&dev, true);
    let at = 5 * MIB;
    let before = read_block(&f, at).unwrap();
    assert!(before.iter().any(|&b| b != 0), "old contents, not zeros");
    f.write_at(block_of(0x77, BLOCK).as_slice(), at).unwrap();
    assert_eq!(read_block(&f, at).unwrap(), before);
    assert_ne!(read_block(&f, at + BLOCK as u64).unwrap(), before);
}

#[test]
fn eio_fake_fails_every_transfer_that_reaches_beyond_the_real_size() {
    let Some(dev) = counterfeit(Fake::Eio, 0) else {
        return;
    };
    let f = open_direct(&dev, true);
    let eio = Some(libc::EIO);
    for at in [ODD_REAL, ODD_REAL - 1024, 6 * MIB] {
        assert_eq!(read_block(&f, at).unwrap_err().raw_os_error(), eio);
        let err = f.write_at(block_of(1, BLOCK).as_slice(), at).unwrap_err();
        assert_eq!(err.raw_os_error(), eio, "write at {at}");
    }
    let below = ODD_REAL - 1024 - BLOCK as u64;
    assert_pattern(&read_block(&f, below).unwrap(), below);
    assert!(dev.log().contains("beyond real size"), "{}", dev.log());
}

/// Writes a block beyond the real size, checks the cache hides the fake
/// from an immediate read-back, then writes `flush` bytes elsewhere and
/// returns what a read of the block gives now.
fn hidden_then_flushed(dev: &FaultDevice, flush: u64) -> std::io::Result<Vec<u8>> {
    let f = open_direct(dev, true);
    let at = 6 * MIB;
    f.write_at(block_of(0x3c, BLOCK).as_slice(), at).unwrap();
    let back = read_block(&f, at).expect("the cache answers");
    assert!(back.iter().all(|&b| b == 0x3c), "hidden by the cache");
    let chunk = block_of(0, 64 * KIB as usize);
    for i in 0..flush / (64 * KIB) {
        f.write_at(chunk.as_slice(), MIB + i * 64 * KIB).unwrap();
    }
    read_block(&f, at)
}

#[test]
fn the_hiding_cache_answers_until_as_many_bytes_were_written_after() {
    let hide = 256 * KIB;
    let Some(dev) = counterfeit(Fake::Zeros, hide) else {
        return;
    };
    // One block less than the cache: still hidden.
    let partly = hidden_then_flushed(&dev, hide - 64 * KIB).unwrap();
    assert!(partly.iter().all(|&b| b == 0x3c));
    drop(dev);
    let Some(dev) = counterfeit(Fake::Zeros, hide) else {
        return;
    };
    let flushed = hidden_then_flushed(&dev, hide).unwrap();
    assert!(
        flushed.iter().all(|&b| b == 0),
        "the zeros show once flushed"
    );
    drop(dev);
    let Some(dev) = counterfeit(Fake::Eio, hide) else {
        return;
    };
    let err = hidden_then_flushed(&dev, hide).unwrap_err();
    assert_eq!(
        err.raw_os_error(),
        Some(libc::EIO),
        "an eio fake accepts writes while it hides"
    );
}

/// Minimum latency of `n` O_DIRECT reads of `len` bytes at `at`.
fn min_read(f: &File, at: u64, len: usize, n: u32) -> Duration {
    let mut b = AlignedBuf::new(len);
    (0..n)
        .map(|_| {
            let t = Instant::now();
            f.read_at(b.as_mut_slice(), at).expect("read");
            t.elapsed()
        })
        .min()
        .unwrap()
}

#[test]
fn reads_across_an_au_boundary_cost_a_command_and_across_a_page_a_quarter() {
    let (au, page, cmd_ms) = (3 * MIB, 16 * KIB, 20.0);
    let Some(dev) = build(FaultDevice::spec(16 * MIB).page(page).au(au, cmd_ms)) else {
        return;
    };
    let f = open_direct(&dev, false);
    let cmd = Duration::from_millis(20);
    let plain = min_read(&f, au + 64 * KIB, BLOCK, 5);
    let on_page = min_read(&f, au + page - 2 * KIB, BLOCK, 5);
    let on_au = min_read(&f, 2 * au - 2 * KIB, BLOCK, 5);
    println!("plain {plain:?}, page boundary {on_page:?}, AU boundary {on_au:?}");
    assert!(plain < cmd / 4, "plain read {plain:?}");
    assert!(
        on_page >= cmd / 4 && on_page < cmd,
        "page boundary {on_page:?}"
    );
    assert!(on_au >= cmd, "AU boundary {on_au:?}");
    // A power of two that is no multiple of the 3 MiB AU is no boundary.
    assert!(min_read(&f, 4 * MIB - 2 * KIB, BLOCK, 5) < cmd);
}

/// Median time of 4 KiB writes going round-robin over the first `aus` AUs
/// (after the test's base), `rounds` times.
fn round_robin_write(f: &File, au: u64, aus: u64, rounds: u64) -> Duration {
    let buf = block_of(0x11, BLOCK);
    let mut times = Vec::new();
    for r in 0..rounds {
        for i in 0..aus {
            let t = Instant::now();
            f.write_at(buf.as_slice(), i * au + r * BLOCK as u64)
                .unwrap();
            times.push(t.elapsed());
        }
    }
    times.sort();
    times[times.len() / 2]
}

#[test]
fn a_write_to_one_au_more_than_are_open_pays_for_garbage_collection() {
    let au = 4 * MIB;
    // Closing an AU copies about 4 MiB at 100 MB/s: 42 ms.
    let Some(dev) = build(
        FaultDevice::spec(16 * MIB)
            .mbps(100.0)
            .au(au, 0.0)
            .open_au(2),
    ) else {
        return;
    };
    let f = open_direct(&dev, true);
    let gc = Duration::from_millis(40);
    let within = round_robin_write(&f, au, 2, 6);
    let beyond = round_robin_write(&f, au, 3, 4);
    println!("2 AUs in turn: {within:?} per write; 3 AUs: {beyond:?}");
    assert!(within < gc / 2, "{within:?}");
    assert!(beyond >= gc, "{beyond:?}");
}
