//! Flash-card analysis: erase-block geometry, open allocation units, the
//! write cache, fake capacity and SD speed-class verdicts.
//!
//! Why a module of its own: cheap flash (SD cards, USB sticks) hides its
//! geometry behind a simple controller, and each question here is answered
//! by timing a few thousand single transfers and reading a pattern out of
//! them. flashbench and f3 showed which patterns to look for but leave the
//! reading to the user; every detector here turns the raw figures into a
//! decision with a [`Confidence`](crate::result::flash::Confidence), and says "not seen" rather than invent a
//! geometry when the pattern is absent.
//!
//! The detectors talk to the device through [`FlashIo`]: one timed transfer
//! at a time, on a file descriptor (an engine clock) or on the simulated
//! card (its virtual clock), so each is tested against known ground truth.
//! This module only measures; what the numbers mean is decided by the pure
//! functions of `crate::analysis::flash`, where every threshold is named.
//! [`session`] runs one test on an open target (AU choice, journalled
//! regions, the right `FlashIo`); [`device`] reads what the card says about
//! itself; [`partition`] makes a fake card usable at its real size; the verdict's words are written in `crate::report::flash_verdicts`.

pub mod align;
pub mod cache;
pub mod capacity;
#[cfg(test)]
pub(crate) mod claiming;
pub mod class;
pub mod device;
pub mod findings;
pub mod open_au;
pub mod partition;
pub mod session;

use crate::engine::sim::SimDevice;
use crate::engine::{Clock, MonotonicClock};
use crate::medium::OpenTarget;
use crate::sys::buffer::AlignedBuf;
use std::io;

/// The FAT area cheap controllers treat specially: writing tests start
/// beyond it.
pub const FAT_AREA: u64 = 16 << 20;

/// The smallest AU the writing tests use: the smallest the SD
/// specification defines, and the size of the open-AU test's writes.
pub const MIN_AU: u64 = 16 << 10;

/// Whether an AU (from the user or the kernel) is one the writing tests
/// can slice: at least [`MIN_AU`], in whole 512-byte sectors.
pub fn usable_au(au: u64) -> bool {
    au >= MIN_AU && au.is_multiple_of(512)
}

/// One timed transfer at a time. Buffers come from [`FlashIo::buffer`] so
/// that O_DIRECT accepts them.
pub trait FlashIo {
    /// Bytes addressable.
    fn size(&self) -> u64;
    /// A zeroed buffer the device accepts.
    fn buffer(&self, len: usize) -> AlignedBuf;
    /// Reads `buf.len()` bytes at `offset`; the time taken, ns.
    fn read(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<u64>;
    /// Writes `buf` at `offset`; the time taken, ns.
    fn write(&mut self, offset: u64, buf: &[u8]) -> io::Result<u64>;
    /// Announces regions (offset, length) a detector is about to write
    /// that its plan did not list: on a `--preserve` target they are
    /// journalled before this returns (a write outside every announced
    /// region is refused). Elsewhere nothing needs doing.
    fn claim(&mut self, _regions: &[(u64, u64)]) -> io::Result<()> {
        Ok(())
    }
    /// Writes `len` zero bytes at `offset` (a flush); the time taken, ns.
    /// The simulated card stores them without a buffer.
    fn write_zeros(&mut self, offset: u64, len: u64) -> io::Result<u64> {
        let zeros = self.buffer(usize::try_from(len).map_err(io::Error::other)?);
        self.write(offset, zeros.as_slice())
    }
}

/// The simulated card.
pub struct SimIo<'a>(pub &'a SimDevice);

impl FlashIo for SimIo<'_> {
    fn size(&self) -> u64 {
        self.0.params().size
    }

    fn buffer(&self, len: usize) -> AlignedBuf {
        AlignedBuf::new(len, crate::sys::buffer::MIN_ALIGN)
    }

    fn read(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<u64> {
        self.0.read(offset, buf).map_err(io::Error::other)
    }

    fn write(&mut self, offset: u64, buf: &[u8]) -> io::Result<u64> {
        self.0.write(offset, buf).map_err(io::Error::other)
    }

    fn write_zeros(&mut self, offset: u64, len: u64) -> io::Result<u64> {
        self.0.write_zeros(offset, len).map_err(io::Error::other)
    }
}

/// A real target's descriptor (O_DIRECT), timed on an engine [`Clock`]
/// (the wall clock unless [`FdIo::with_clock`] says otherwise): flash
/// reads the time the way every other measurement does, never by itself.
///
/// It holds the target rather than a descriptor so that [`FlashIo::claim`]
/// can reach the write gate between two transfers (the descriptor is looked
/// up for each one; it changes when the gate opens). Every write is checked
/// against the gate before it is timed: under `--preserve` one outside the
/// journalled regions is refused, never made.
pub struct FdIo<'a, C: Clock = MonotonicClock> {
    target: &'a mut OpenTarget,
    clock: C,
    /// The first claim or write the gate refused. The command reports it
    /// as it is (Ctrl-C during a journal copy, a full journal disk, a bug),
    /// and every later transfer fails at once: a detector that takes a
    /// failed write for a fault of the card cannot make a verdict of it.
    failure: Option<anyhow::Error>,
}

impl<'a> FdIo<'a> {
    /// Timed on the wall clock.
    pub fn new(target: &'a mut OpenTarget) -> FdIo<'a> {
        FdIo::with_clock(target, MonotonicClock::new())
    }
}

impl<'a, C: Clock> FdIo<'a, C> {
    /// Timed on `clock`.
    pub fn with_clock(target: &'a mut OpenTarget, clock: C) -> FdIo<'a, C> {
        FdIo {
            target,
            clock,
            failure: None,
        }
    }

    /// Nanoseconds `transfer` took on the clock, with its result.
    fn timed<T>(&self, transfer: impl FnOnce() -> T) -> (T, u64) {
        let start = self.clock.now_ns();
        let out = transfer();
        (out, self.clock.now_ns().saturating_sub(start))
    }

    /// Why the gate stopped the detector, if it did.
    pub fn take_failure(&mut self) -> Option<anyhow::Error> {
        self.failure.take()
    }

    fn check(done: usize, len: usize) -> io::Result<()> {
        match done == len {
            true => Ok(()),
            false => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("short transfer: {done} of {len} bytes"),
            )),
        }
    }

    /// Fails at once after an earlier refusal.
    fn stopped(&self) -> io::Result<()> {
        match &self.failure {
            Some(e) => Err(io::Error::other(format!(
                "stopped after: {}",
                crate::error::render(e)
            ))),
            None => Ok(()),
        }
    }

    /// Keeps the first refusal for the command; the detector gets its text.
    fn refuse(&mut self, e: anyhow::Error) -> io::Error {
        let said = io::Error::other(crate::error::render(&e));
        self.failure.get_or_insert(e);
        said
    }
}

impl<C: Clock> FlashIo for FdIo<'_, C> {
    fn size(&self) -> u64 {
        self.target.info.size_bytes
    }

    fn buffer(&self, len: usize) -> AlignedBuf {
        AlignedBuf::new(len, self.target.align)
    }

    fn read(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<u64> {
        self.stopped()?;
        let len = buf.len();
        let fd = self.target.fd();
        let (n, ns) = self.timed(|| rustix::io::pread(fd, buf, offset));
        Self::check(n?, len).map(|_| ns)
    }

    fn write(&mut self, offset: u64, buf: &[u8]) -> io::Result<u64> {
        self.stopped()?;
        if !self.target.allows_write(offset, buf.len() as u64) {
            let e = crate::error::IoFailure::new(
                format!(
                    "internal error: a write of {} bytes at offset {offset} was not journalled by --preserve; nothing was written there. Please report this",
                    buf.len()
                ),
                None,
            );
            return Err(self.refuse(e.into()));
        }
        let fd = self.target.fd();
        let (n, ns) = self.timed(|| rustix::io::pwrite(fd, buf, offset));
        Self::check(n?, buf.len()).map(|_| ns)
    }

    /// Journals the regions through the target's write gate (nothing to do
    /// unless it is `--preserve`).
    fn claim(&mut self, regions: &[(u64, u64)]) -> io::Result<()> {
        self.stopped()?;
        self.target.arm(regions).map_err(|e| self.refuse(e))
    }
}

/// Bytes per second from bytes and nanoseconds, in MB/s.
pub fn mb_s(bytes: u64, ns: u64) -> f64 {
    crate::units::mb_per_s(bytes, ns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sim::SimParams;
    use proptest::prelude::*;

    fn card(spec: &str) -> SimDevice {
        SimDevice::new(SimParams::parse(spec).unwrap())
    }

    #[test]
    fn unusable_aus_are_refused_as_usage_errors_not_panics() {
        let dev = card("size=64M");
        let odd = [0, 1, 511, 512, 1024, 1536, 3072, 4096, 8192, (16 << 10) + 1];
        for au in odd.into_iter().chain([u64::MAX]) {
            let plan = class::ClassPlan::new(au, dev.params().size);
            let e = class::measure(&mut SimIo(&dev), &plan, 1).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "class, AU {au}: {e}");
            let e = open_au::detect(&mut SimIo(&dev), open_au::OpenAuPlan::new(au)).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "open-au {au}: {e}");
            let code = crate::error::exit_code(&anyhow::Error::from(e));
            assert_eq!(code, crate::error::EXIT_USAGE, "AU {au}");
        }
    }

    #[test]
    fn devices_too_small_for_a_test_are_refused() {
        let dev = card("size=1M,au=16k,page=4k");
        let plan = class::ClassPlan::new(16 << 10, dev.params().size);
        assert!(class::measure(&mut SimIo(&dev), &plan, 1).is_err());
        let plan = capacity::CapacityPlan::new(dev.params().size, 1 << 20, 1);
        assert!(plan.probes.is_empty());
        assert!(capacity::detect(&mut SimIo(&dev), &plan).is_err());
        let r = cache::detect(&mut SimIo(&dev), cache::CachePlan::new(dev.params().size));
        assert!(r.unwrap().speeds.is_empty());
        assert!(align::detect(&mut SimIo(&dev), align::AlignPlan::default()).is_ok());
    }

    proptest! {
        #[test]
        fn plans_take_any_au_and_size(au in any::<u64>(), size in any::<u64>()) {
            let c = class::ClassPlan::new(au, size);
            let _ = (c.seq_offset(), c.random_offset(), c.unusable(size));
            let _ = (c.pnu_offset(), c.pnu_len(), c.pw_offset(), c.regions());
            let o = open_au::OpenAuPlan::new(au);
            let _ = (o.base(), o.span());
            let _ = cache::CachePlan::new(size);
        }

    }
}
