//! The flush of the capacity probe: zeros written across the card until
//! its write cache has been seen full and beaten, and the `--preserve`
//! claims that journal each piece before it is written. Kept apart from
//! the probe's reads and writes of its own blocks, which only call it.

use super::{CapacityPlan, MIB, SUB};
use crate::analysis::flash::capacity::{self, BLOCK, flush_needed};
use crate::flash::FlashIo;
use std::collections::BTreeSet;
use std::io;

/// How much of the flush one claim journals beyond the plan's regions.
pub(super) const CLAIM_STEP: u64 = 64 << 20;

/// The runs of `from..to` outside the `BLOCK`-long `blocks` (ascending):
/// where a flush may write, or what a claim may journal.
pub(super) fn free_runs(from: u64, to: u64, blocks: &BTreeSet<u64>) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut at = from;
    for &b in blocks.range(from.saturating_sub(BLOCK - 1)..to) {
        if b > at {
            out.push((at, b - at));
        }
        at = at.max(b + BLOCK);
    }
    if to > at {
        out.push((at, to - at));
    }
    out
}

/// What `--preserve` has journalled beyond the listed regions: the flush
/// up to `claimed_to`, and every probe block written. A claim never covers
/// either again (a second journal entry would record our own writes).
pub(super) struct Journal {
    claimed_to: u64,
    blocks: BTreeSet<u64>,
}

impl Journal {
    pub(super) fn new(plan: &CapacityPlan) -> Journal {
        Journal {
            claimed_to: plan.listed_end(),
            blocks: plan.probes.iter().copied().collect(),
        }
    }

    /// Claims a later round's probe blocks that are not journalled yet.
    pub(super) fn claim_blocks(&mut self, io: &mut dyn FlashIo, probes: &[u64]) -> io::Result<()> {
        let new: Vec<(u64, u64)> = probes
            .iter()
            .filter(|p| **p + BLOCK > self.claimed_to && !self.blocks.contains(p))
            .map(|p| (*p, BLOCK))
            .collect();
        self.blocks.extend(new.iter().map(|b| b.0));
        match new.is_empty() {
            true => Ok(()),
            false => io.claim(&new),
        }
    }

    /// Claims the flush up to at least `end`, [`CLAIM_STEP`] at a time,
    /// around the probe blocks journalled already.
    fn claim_to(&mut self, io: &mut dyn FlashIo, end: u64, size: u64) -> io::Result<()> {
        while self.claimed_to < end {
            let to = (self.claimed_to + CLAIM_STEP).min(size).max(end);
            let runs = free_runs(self.claimed_to, to, &self.blocks);
            if !runs.is_empty() {
                io.claim(&runs)?;
            }
            self.claimed_to = to;
        }
        Ok(())
    }
}

/// What a flush wrote and saw.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Flushed {
    pub(super) written: u64,
    /// The time the pieces took.
    pub(super) ns: u64,
    /// The write cache was seen full and as much again written.
    pub(super) beaten: bool,
    /// Bytes written when the speed fell.
    pub(super) fell_at: Option<u64>,
}

/// Zeros in 1 MiB pieces from the flush offset across the card, around
/// the blocks in `skip` (the probes of the round), timed; from the start
/// again once the end is reached (a cache larger than the rest of the card
/// is then pushed out by writing it over). Stops once the speed has fallen
/// below 60 % of the first pieces' and as much again has been written, or
/// at `limit` (`adaptive` off: at `limit`): the flush is sized by the cache
/// it measures. A write that fails (beyond the real size of a card that
/// fails there) starts the next pass; a pass that writes nothing ends the
/// flush.
pub(super) fn flush(
    io: &mut dyn FlashIo,
    plan: &CapacityPlan,
    limit: u64,
    adaptive: bool,
    skip: &BTreeSet<u64>,
    journal: &mut Journal,
) -> io::Result<Flushed> {
    let mut speeds: Vec<u64> = Vec::new();
    // Bytes written when the speed fell, and the piece it fell at.
    let mut fell: Option<(u64, usize)> = None;
    let (mut written, mut total_ns, mut pass_written) = (0, 0, 0);
    let mut at = plan.flush_offset;
    while written + SUB <= limit {
        if at >= plan.size {
            if pass_written == 0 {
                break;
            }
            (at, pass_written) = (plan.flush_offset, 0);
        }
        let end = (at + MIB).min(plan.size).min(at + (limit - written));
        journal.claim_to(io, end, plan.size)?;
        let Some((bytes, ns)) = write_piece(io, at, end, skip) else {
            at = plan.size;
            continue;
        };
        at = end;
        if bytes == 0 {
            continue;
        }
        (written, total_ns, pass_written) = (written + bytes, total_ns + ns, pass_written + bytes);
        if !adaptive {
            continue;
        }
        // Per MiB, so that a piece cut short by probes compares.
        speeds.push((u128::from(ns.max(1)) * u128::from(MIB) / u128::from(bytes)) as u64);
        if fell.is_none() && capacity::flush_fell(&speeds) {
            fell = Some((written, speeds.len()));
        }
        if let Some((f, piece)) = fell.filter(|f| written >= flush_needed(f.0)) {
            let from = piece.saturating_sub(capacity::FLUSH_FALL_RUN);
            if capacity::fall_lasted(&speeds, from) {
                return Ok(Flushed {
                    written,
                    ns: total_ns,
                    beaten: true,
                    fell_at: Some(f),
                });
            }
            // A stall, not a full cache: look for the fall again.
            fell = None;
        }
    }
    Ok(Flushed {
        written,
        ns: total_ns,
        beaten: false,
        fell_at: fell.map(|f| f.0),
    })
}

/// Zeros over `at..end` around the blocks in `skip`: the bytes written and
/// their time, or `None` when a write failed.
fn write_piece(
    io: &mut dyn FlashIo,
    at: u64,
    end: u64,
    skip: &BTreeSet<u64>,
) -> Option<(u64, u64)> {
    let (mut bytes, mut ns) = (0, 0);
    for (o, len) in free_runs(at, end, skip) {
        let len = len / SUB * SUB;
        if len == 0 {
            continue;
        }
        ns += io.write_zeros(o, len).ok()?;
        bytes += len;
    }
    Some((bytes, ns))
}
