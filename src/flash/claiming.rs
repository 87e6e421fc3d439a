//! A simulated card that holds detectors to the `--preserve` rule (tests
//! only): every write lies in the regions the plan listed or in a claim
//! made before it, and no byte is claimed twice (a claim journals what is
//! there now, which would be the detector's own earlier writes).

use super::{FlashIo, SimIo};
use std::io;

pub struct Claiming<'a> {
    io: SimIo<'a>,
    /// The regions listed up front and claimed since.
    pub allowed: Vec<(u64, u64)>,
    /// Regions claimed while running.
    pub claims: usize,
}

impl<'a> Claiming<'a> {
    pub fn new(io: SimIo<'a>, listed: Vec<(u64, u64)>) -> Claiming<'a> {
        Claiming {
            io,
            allowed: listed,
            claims: 0,
        }
    }

    /// Every byte of the write lies in some region listed or claimed (a
    /// write may span several: a flush over earlier probes).
    fn check(&self, offset: u64, len: u64) {
        let mut at = offset;
        while at < offset + len {
            let reach = self
                .allowed
                .iter()
                .filter(|&&(a, n)| a <= at && at < a + n)
                .map(|&(a, n)| a + n)
                .max();
            let Some(reach) = reach else {
                panic!(
                    "{len} bytes at {offset} were written but never listed or claimed (at {at})"
                );
            };
            at = reach;
        }
    }
}

impl FlashIo for Claiming<'_> {
    fn size(&self) -> u64 {
        self.io.size()
    }

    fn buffer(&self, len: usize) -> crate::sys::buffer::AlignedBuf {
        self.io.buffer(len)
    }

    fn read(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<u64> {
        self.io.read(offset, buf)
    }

    fn write(&mut self, offset: u64, buf: &[u8]) -> io::Result<u64> {
        self.check(offset, buf.len() as u64);
        self.io.write(offset, buf)
    }

    fn write_zeros(&mut self, offset: u64, len: u64) -> io::Result<u64> {
        self.check(offset, len);
        self.io.write_zeros(offset, len)
    }

    fn claim(&mut self, regions: &[(u64, u64)]) -> io::Result<()> {
        for &(o, l) in regions {
            let overlaps = self.allowed.iter().any(|&(a, n)| o < a + n && a < o + l);
            assert!(!overlaps, "{l} bytes at {o} claimed twice");
            self.allowed.push((o, l));
            self.claims += 1;
        }
        Ok(())
    }
}
