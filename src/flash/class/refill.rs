//! Filling a write cache again between the phases of `flash class`.
//!
//! A card may queue the medium's work behind its cache: each write then
//! waits for the oldest work queued, not its own, and costs what was
//! written a cache's worth before it. The random and FAT-area writes of
//! the method are meant to meet the work of sequential recording, as in
//! the specification's sequence, not the work of the method's other
//! phases; this module counts what those phases wrote and writes whole
//! AUs again where the Pw writes went when they may have reached the
//! front of the cache.

use super::{ClassPlan, PwFigures, SMALL, write_au};
use crate::flash::FlashIo;
use std::io;

/// A [`FlashIo`] that counts the bytes written through it.
pub(super) struct Counted<'a> {
    pub(super) io: &'a mut dyn FlashIo,
    pub(super) written: u64,
}

impl FlashIo for Counted<'_> {
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
        self.written += buf.len() as u64;
        self.io.write(offset, buf)
    }

    fn claim(&mut self, regions: &[(u64, u64)]) -> io::Result<()> {
        self.io.claim(regions)
    }

    fn write_zeros(&mut self, offset: u64, len: u64) -> io::Result<u64> {
        self.written += len;
        self.io.write_zeros(offset, len)
    }
}

/// Before the FAT-area writes, fills a cache that the random and P(Nu)
/// writes (`written_since` bytes) may have filled with their own medium
/// work again with sequential whole AUs in the region the Pw writes
/// covered. A card that queues the medium's work behind its cache makes
/// each write wait for the oldest work: without this, the FAT-area writes
/// paid for the AU closes of the random writes (issue 37: a FAIL at high
/// on cards whose FAT writes cost 6 to 37 ms, measured at 176 to 491 ms).
/// Nothing to do when no cache was seen, or when one larger than those
/// writes and the FAT-area ones still holds the Pw writes' work first.
pub(super) fn refill(
    io: &mut dyn FlashIo,
    plan: &ClassPlan,
    ru: &[u8],
    pw: &PwFigures,
    written_since: u64,
) -> io::Result<()> {
    let fat_bytes = u64::from(plan.fat_writes) * SMALL;
    let Some(cache) = cache_bytes(pw) else {
        return Ok(());
    };
    if cache > written_since.saturating_add(fat_bytes) {
        return Ok(());
    }
    let room = pw.written.min(plan.pw_room).max(plan.au);
    let mut done = 0;
    while done < lead_bytes(pw) {
        write_au(io, plan, plan.pw_offset() + done % room, ru)?;
        done += plan.au;
    }
    Ok(())
}

/// The cache the Pw writes filled, bytes; `None` when the speed did not
/// fall. The writes before the fall filled it at the burst speed less
/// what it drained meanwhile at the slowest speed after it (the steady
/// mean may still hold burst AUs when the speed kept falling).
fn cache_bytes(pw: &PwFigures) -> Option<u64> {
    let fell_after = pw.fell_after?;
    let drained_share = (pw.min_mb_s / pw.burst_mb_s.max(f64::MIN_POSITIVE)).clamp(0.0, 1.0);
    Some((fell_after as f64 * (1.0 - drained_share)) as u64)
}

/// Bytes of sequential writes that push what came before them out of the
/// cache: its estimate and a quarter more (a drain seen with jitter
/// under-counts it; twice gave no other verdict over 6,000 cards and
/// cost 60% more writes), never more than the writes that filled it from
/// empty; none when no cache was seen.
pub(super) fn lead_bytes(pw: &PwFigures) -> u64 {
    match (cache_bytes(pw), pw.fell_after) {
        (Some(cache), Some(fell_after)) => (cache + cache / 4).min(fell_after),
        _ => 0,
    }
}
