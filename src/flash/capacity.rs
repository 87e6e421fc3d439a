//! Fake capacity, in the manner of f3probe (Michel Machado's F3, "f3probe:
//! the fastest way to identify fake drives"), generalised to every kind of
//! counterfeit its documentation and tracker describe: addresses that wrap
//! at any real size (not only a power of two, F3 issue 144), writes beyond
//! it dropped and read back as zeros or stale data, I/O errors beyond it,
//! and a write cache that hides all of these from an immediate read-back.
//!
//! Every block written carries its own address and a random salt (the
//! self-describing blocks of [`crate::workload::verify`], 512 bytes each so
//! that a real size in odd sectors still shows), so a block read back is
//! either the one written there, one written elsewhere (its address names
//! where: the distance is a multiple of the real size), or lost.
//!
//! The method:
//! 1. a zone just after the protected first MiB is stamped densely, then
//!    the first round of probe blocks is written, spread evenly from the
//!    zone's end to the last block of the device, and a grid of reads one
//!    zone apart looks for the zone's alias (`real + zone`): a card that
//!    wraps is named exactly before anything could write over the zone;
//! 2. the flush, sized by the write cache it measures: zeros written in
//!    1 MiB pieces across the card from the zone's end, around every probe
//!    block of the round and over again from the start once the end is
//!    reached, timed, until the speed has fallen (the cache is full, so
//!    everything before it has been pushed out; see [`super::cache`]) and
//!    as much again has been written, or up to the stated bound
//!    (`--flush`, else [`AUTO_FLUSH`]). The flush is not confined to a
//!    part of the card below the probes, so a cache larger than the real
//!    size (or than a quarter of the card) is beaten like any other; a
//!    bound below what the measured cache needs is reported, and one above
//!    what any cache of the card could need ([`flush_cap`]) is shortened
//!    and reported;
//! 3. everything is read back: the first MiB and the zone, sector by
//!    sector (a block of ours found there was written at an alias; a real
//!    size inside the zone shows as the first sector lost), the grid
//!    again, and the probes;
//! 4. the search: the last probe that held and the first that did not
//!    bracket the real size; more rounds of probes inside the bracket, each
//!    followed by a flush as large as the first round's and its probes
//!    (so it beats whatever the first one was seen to beat), narrow it to
//!    one 4 KiB block (f3probe's bisection, with 64 probes a round).
//!
//! Probe positions do not depend on the seed (only the salt does), so the
//! same card gives the same verdict whatever the seed. The first MiB (the
//! partition table) is never written, and the flush never lands on the zone
//! or a probe of its round. With `--preserve` the first round's writes are
//! journalled before any is made, and each later round claims its blocks
//! and the flush each piece ([`FlashIo::claim`]: journalled before it
//! returns, never twice) before writing them, so the search and its
//! precision are the same as without.
//!
//! This module writes and reads; what the evidence says (the real size,
//! the bracket, the confidence) is `crate::analysis::flash::capacity`.

use super::FlashIo;
use crate::analysis::flash::capacity::{self, Evidence, Layout, bracket};
// BLOCK, the unit a probe writes (eight stamped sectors), is the analysis's.
use crate::analysis::flash::capacity::{BLOCK, BadProbe, CapacityResult, Held, flush_needed};
use crate::error::usage_io;
use crate::result::verify::Verdict;
use crate::units::format_size;
use crate::workload::verify;
use flush::{Journal, flush, free_runs};
use serde::Serialize;
use std::collections::BTreeSet;
use std::io;

/// Never written: the partition table lives here.
pub const PROTECTED: u64 = 1 << 20;
/// The stamped unit: a sector, so an alias at any sector shows.
const SUB: u64 = 512;
const MIB: u64 = 1 << 20;
/// Probes in the first round (journalled by `--preserve`) and in each later one.
const FIRST_PROBES: u64 = 256;
const ROUND_PROBES: u64 = 64;
/// The smallest device probed: the protected MiB, the zone and a flush.
pub const MIN_SIZE: u64 = 4 * PROTECTED;
/// The most the flush writes when no bound is given (`--flush`): it stops
/// as soon as it has seen the write cache fill and written as much again,
/// so only a card whose speed never falls (no cache, or one larger than
/// about half of this) gets all of it.
pub const AUTO_FLUSH: u64 = 1 << 30;
/// The flush listed in the plan's regions; beyond it, pieces of
/// [`flush::CLAIM_STEP`] are claimed as the flush reaches them.
pub const LISTED_FLUSH: u64 = 128 << 20;

#[derive(Debug, Clone, Serialize)]
pub struct CapacityPlan {
    pub size: u64,
    /// Written as a string of digits, as every seed in the JSON is
    /// (readers round integers above 2^53).
    #[serde(serialize_with = "crate::vocab::wide::serialize")]
    pub seed: u64,
    /// The densely stamped zone after the protected MiB.
    pub zone_offset: u64,
    pub zone_bytes: u64,
    /// Where the flush starts (it runs on across the card, around the
    /// probes), and the most it writes.
    pub flush_offset: u64,
    pub flush_bytes: u64,
    /// The bound asked for (`--flush` or [`AUTO_FLUSH`]): above
    /// `flush_bytes` when it was shortened to [`flush_cap`].
    pub flush_asked: u64,
    /// The first round's probe blocks, ascending.
    pub probes: Vec<u64>,
}

impl CapacityPlan {
    /// The plan for a device of `size` bytes; no probes below
    /// [`MIN_SIZE`], where [`detect`] refuses to run.
    pub fn new(size: u64, flush_bytes: u64, seed: u64) -> CapacityPlan {
        let zone_bytes = zone_for(size);
        let flush_offset = PROTECTED + zone_bytes;
        let probes = match size >= MIN_SIZE {
            true => spread(flush_offset, size / BLOCK * BLOCK - BLOCK, FIRST_PROBES),
            false => Vec::new(),
        };
        CapacityPlan {
            size,
            seed,
            zone_offset: PROTECTED,
            zone_bytes,
            flush_offset,
            flush_bytes: flush_bound(flush_bytes, size),
            flush_asked: flush_bytes,
            probes,
        }
    }

    /// The byte ranges the first round is known to write, for the
    /// preserve journal: the zone, the probes and the flush's first
    /// [`LISTED_FLUSH`] (around the probes); a flush that goes further
    /// claims each piece ([`FlashIo::claim`]) before writing it, so that a
    /// card with a small cache does not have a gigabyte journalled for
    /// nothing.
    pub fn regions(&self) -> Vec<(u64, u64)> {
        let mut v: Vec<(u64, u64)> = self.probes.iter().map(|p| (*p, BLOCK)).collect();
        v.push((self.zone_offset, self.zone_bytes));
        let blocks: BTreeSet<u64> = self.probes.iter().copied().collect();
        v.extend(free_runs(self.flush_offset, self.listed_end(), &blocks));
        v.sort_unstable();
        v.dedup();
        v
    }

    fn zone_end(&self) -> u64 {
        self.zone_offset + self.zone_bytes
    }

    /// The end of the flush [`CapacityPlan::regions`] lists.
    fn listed_end(&self) -> u64 {
        (self.flush_offset + self.flush_bytes.min(LISTED_FLUSH)).min(self.size)
    }
}

/// The most any flush of a card of `size` bytes needs: the one that beats
/// a write cache as large as the card itself. A larger `--flush` is
/// shortened to this (and the result says so).
pub fn flush_cap(size: u64) -> u64 {
    flush_needed(size) / MIB * MIB
}

/// The one rule that shortens a flush: whole MiB, and never beyond
/// [`flush_cap`]. A `--flush` of a value it keeps is run as given.
pub fn flush_bound(asked: u64, size: u64) -> u64 {
    asked.min(flush_cap(size)) / MIB * MIB
}

/// The `--flush` to advise when the flush needs `needed` bytes and wrote
/// `flushed`: the whole MiB at or above `needed`, under [`flush_bound`]'s
/// rule, so that it runs as printed; `None` when that is no more than was
/// flushed (the flush reached the most any cache of the card needs).
pub fn flush_advice(needed: u64, flushed: u64, size: u64) -> Option<u64> {
    let whole = needed.div_ceil(MIB).saturating_mul(MIB);
    let advice = flush_bound(whole, size);
    (advice > flushed).then_some(advice)
}

/// The zone: about the square root of (size × 512 bytes), 1–8 MiB, so
/// that stamping it (one sector at a time) and the grid of reads one zone
/// apart cost about the same: 2 MiB and 4,096 reads for 8 GiB, 8 MiB and
/// 65,536 reads for 512 GiB. Not more than 8 MiB, so that the zone ends
/// below the smallest real size fakes are sold with (16 MiB): a real size
/// inside the zone can only be bracketed coarsely.
fn zone_for(size: u64) -> u64 {
    let root = ((size as f64) * SUB as f64).sqrt() as u64;
    root.checked_next_power_of_two()
        .unwrap_or(8 * MIB)
        .clamp(MIB, 8 * MIB)
}

/// `n` block addresses from `low` to `high` (both block-aligned, both
/// included), evenly spread and distinct.
fn spread(low: u64, high: u64, n: u64) -> Vec<u64> {
    let blocks = (high.saturating_sub(low)) / BLOCK;
    let n = n.max(2);
    let mut v: Vec<u64> = (0..n)
        .map(|i| low + (u128::from(blocks) * u128::from(i) / u128::from(n - 1)) as u64 * BLOCK)
        .collect();
    v.dedup();
    v
}

pub fn detect(io: &mut dyn FlashIo, plan: &CapacityPlan) -> io::Result<CapacityResult> {
    if plan.size < MIN_SIZE || plan.size > io.size() || plan.probes.is_empty() {
        return Err(usage_io(format!(
            "the capacity probe needs a device of at least {} (this one has {})",
            format_size(MIN_SIZE),
            format_size(io.size())
        )));
    }
    let ev = run(io, plan)?;
    let layout = Layout {
        claimed: plan.size,
        zone_offset: plan.zone_offset,
        zone_end: plan.zone_end(),
        first_probes: plan.probes.len(),
        flush_asked: plan.flush_asked,
        flush_bound: plan.flush_bytes,
    };
    Ok(capacity::decide(&layout, ev))
}

fn run(io: &mut dyn FlashIo, plan: &CapacityPlan) -> io::Result<Evidence> {
    let mut ev = Evidence::default();
    let mut journal = Journal::new(plan);
    write_zone(io, plan)?;
    let mut held = write_probes(io, plan, &plan.probes);
    ev.bad_at_once = read_probes(io, plan, &plan.probes, &mut held, &mut Evidence::default());
    // Before any flush: a card that wraps shows the zone at its alias now,
    // and the real size is known exactly; a flush would only wrap over
    // the zone and the probes below the real size.
    // The zone too: its sectors alias against many different writes, where
    // the grid alone may see one write at distances that are all a
    // multiple of the real size (the first probe sits where the zone
    // ends, one grid step from every read).
    let mut before = Evidence::default();
    scan_zone(io, plan, &mut before)?;
    ev.distances = before.distances;
    scan_grid(io, plan, &mut ev);
    let wraps = !ev.distances.is_empty();
    if !wraps {
        let round: BTreeSet<u64> = plan.probes.iter().copied().collect();
        let seen = flush(io, plan, plan.flush_bytes, true, &round, &mut journal)?;
        ev.flush_written = seen.written;
        ev.flush_ns = seen.ns;
        ev.cache_beaten = seen.beaten;
        ev.cache_filled_at = seen.fell_at;
        scan_zone(io, plan, &mut ev)?;
        scan_grid(io, plan, &mut ev);
    }
    ev.bad_after_flush = read_probes(io, plan, &plan.probes, &mut held, &mut ev);
    ev.probes.extend(held);
    ev.rounds = 1;
    if !wraps {
        bisect(io, plan, &mut ev, &mut journal)?;
    }
    Ok(ev)
}

/// The one place the probe writes; refuses the protected first MiB.
fn write(io: &mut dyn FlashIo, at: u64, data: &[u8]) -> io::Result<u64> {
    if at < PROTECTED {
        return Err(io::Error::other(
            "internal error: a write into the first MiB",
        ));
    }
    io.write(at, data)
}

/// Stamps `buf` as consecutive self-describing sectors starting at `at`.
fn stamp_sectors(buf: &mut [u8], at: u64, seed: u64) {
    for (i, sector) in buf.chunks_exact_mut(SUB as usize).enumerate() {
        let offset = at + i as u64 * SUB;
        verify::stamp(sector, offset, seed, offset / SUB);
    }
}

fn write_zone(io: &mut dyn FlashIo, plan: &CapacityPlan) -> io::Result<()> {
    let mut buf = io.buffer(MIB as usize);
    for i in 0..plan.zone_bytes / MIB {
        let at = plan.zone_offset + i * MIB;
        stamp_sectors(buf.as_mut_slice(), at, plan.seed);
        if write(io, at, buf.as_slice()).is_err() {
            // A card failing inside the zone: sector by sector, so that
            // every sector below its real size holds (the read-back cuts
            // there).
            for (i, sector) in buf.as_slice().chunks_exact(SUB as usize).enumerate() {
                let _ = write(io, at + i as u64 * SUB, sector);
            }
        }
    }
    Ok(())
}

/// Writes each probe; a write that fails marks it.
fn write_probes(io: &mut dyn FlashIo, plan: &CapacityPlan, probes: &[u64]) -> Vec<(u64, Held)> {
    let mut buf = io.buffer(BLOCK as usize);
    probes
        .iter()
        .map(|&at| {
            stamp_sectors(buf.as_mut_slice(), at, plan.seed);
            match write(io, at, buf.as_slice()) {
                Ok(_) => (at, Held::Ok),
                Err(_) => (at, Held::Error),
            }
        })
        .collect()
}

/// Reads the probes back, marks the ones that did not hold and records any
/// alias; returns how many did not hold.
fn read_probes(
    io: &mut dyn FlashIo,
    plan: &CapacityPlan,
    probes: &[u64],
    held: &mut [(u64, Held)],
    ev: &mut Evidence,
) -> usize {
    let mut buf = io.buffer(BLOCK as usize);
    let mut bad = 0;
    for (&at, h) in probes.iter().zip(held.iter_mut()) {
        if h.1 == Held::Error {
            bad += 1;
            continue;
        }
        let verdict = match io.read(at, buf.as_mut_slice()) {
            Ok(_) => first_wrong(buf.as_slice(), at, plan.seed, ev),
            Err(_) => {
                h.1 = Held::Error;
                bad += 1;
                continue;
            }
        };
        if let Some(verdict) = verdict {
            h.1 = Held::Lost;
            bad += 1;
            ev.bad.push(BadProbe {
                offset: at,
                verdict,
            });
        } else {
            h.1 = Held::Ok;
        }
    }
    bad
}

/// Checks each stamped sector of a block read at `at`; records aliases;
/// the first sector's verdict that is not Ok.
fn first_wrong(buf: &[u8], at: u64, seed: u64, ev: &mut Evidence) -> Option<Verdict> {
    let mut wrong = None;
    for (i, sector) in buf.chunks_exact(SUB as usize).enumerate() {
        let offset = at + i as u64 * SUB;
        let verdict = quick_check(sector, offset, seed);
        if let Verdict::Aliased { found_offset } = verdict {
            ev.distances.push(found_offset.abs_diff(offset));
        }
        if !verdict.is_ok() && wrong.is_none() {
            wrong = Some(verdict);
        }
    }
    wrong
}

/// [`verify::check`], short-cut for the common case: a sector whose header
/// names this address and this run's salt is taken as held (a fake loses
/// whole blocks, it does not flip bits in them; and the full check of
/// every sector of the zone would dominate the probe's time).
fn quick_check(sector: &[u8], offset: u64, seed: u64) -> Verdict {
    let named = sector
        .get(8..16)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes);
    match verify::header_seed(sector) == Some(seed) && named == Some(offset) {
        true => Verdict::Ok,
        false => verify::check(sector, offset, seed),
    }
}

/// Records aliases among blocks read where nothing of ours was written
/// (or where the zone was): a sector of ours naming another address.
fn note_aliases(buf: &[u8], at: u64, seed: u64, ev: &mut Evidence) {
    for (i, sector) in buf.chunks_exact(SUB as usize).enumerate() {
        if verify::header_seed(sector) != Some(seed) {
            continue;
        }
        let offset = at + i as u64 * SUB;
        if let Verdict::Aliased { found_offset } = verify::check(sector, offset, seed) {
            ev.distances.push(found_offset.abs_diff(offset));
        }
    }
}

/// Reads the first MiB and the zone back, sector by sector: aliases, and
/// where the zone's data was lost ([`Evidence::zone_lost`]). A MiB that
/// fails to read is read again a block at a time, so that a card failing
/// inside the zone is cut to a block.
fn scan_zone(io: &mut dyn FlashIo, plan: &CapacityPlan, ev: &mut Evidence) -> io::Result<()> {
    let mut big = io.buffer(MIB as usize);
    let mut small = io.buffer(BLOCK as usize);
    let mut at = 0;
    while at < plan.zone_end() {
        match io.read(at, big.as_mut_slice()) {
            Ok(ns) => {
                ev.read_bytes += MIB;
                ev.read_ns += ns;
                zone_sectors(big.as_slice(), at, plan, ev);
            }
            Err(_) => {
                for b in (at..at + MIB).step_by(BLOCK as usize) {
                    match io.read(b, small.as_mut_slice()) {
                        Ok(_) => zone_sectors(small.as_slice(), b, plan, ev),
                        Err(_) if b >= plan.zone_offset => lost_block(io, b, plan, ev),
                        Err(_) => {}
                    }
                }
            }
        }
        at += MIB;
    }
    Ok(())
}

/// A block of the zone that failed to read, read again sector by sector:
/// the cut lies at the first sector that fails.
fn lost_block(io: &mut dyn FlashIo, at: u64, plan: &CapacityPlan, ev: &mut Evidence) {
    let mut one = io.buffer(SUB as usize);
    for s in (at..at + BLOCK).step_by(SUB as usize) {
        match io.read(s, one.as_mut_slice()) {
            Ok(_) => zone_sectors(one.as_slice(), s, plan, ev),
            Err(_) => ev.zone_lost(s, SUB),
        }
    }
}

/// Checks the sectors of `buf`, read at `at`: aliases anywhere, losses in
/// the zone.
fn zone_sectors(buf: &[u8], at: u64, plan: &CapacityPlan, ev: &mut Evidence) {
    if at < plan.zone_offset {
        note_aliases(buf, at, plan.seed, ev);
        return;
    }
    for (i, sector) in buf.chunks_exact(SUB as usize).enumerate() {
        let offset = at + i as u64 * SUB;
        match quick_check(sector, offset, plan.seed) {
            Verdict::Ok => ev.zone_held(offset),
            Verdict::Aliased { found_offset } => {
                ev.distances.push(found_offset.abs_diff(offset));
                ev.zone_lost(offset, SUB);
            }
            _ => ev.zone_lost(offset, SUB),
        }
    }
}

/// A grid of reads one zone apart over the rest of the device: on a card
/// that wraps one of them lands on the zone's alias and names it.
fn scan_grid(io: &mut dyn FlashIo, plan: &CapacityPlan, ev: &mut Evidence) {
    let mut small = io.buffer(BLOCK as usize);
    let mut x = plan.zone_end();
    while x + BLOCK <= plan.size {
        if io.read(x, small.as_mut_slice()).is_ok() {
            note_aliases(small.as_slice(), x, plan.seed, ev);
        }
        x += plan.zone_bytes;
    }
}

/// f3probe's bisection: rounds of probes inside the bracket, each claimed
/// before it is written and followed by a flush as large as the first
/// round's and its probes together, around this round's probes: a cache
/// that lets the first lost probe go (it was written before the rest of
/// the first round and its flush) lets these go too. Until the bracket is
/// one block wide.
fn bisect(
    io: &mut dyn FlashIo,
    plan: &CapacityPlan,
    ev: &mut Evidence,
    journal: &mut Journal,
) -> io::Result<()> {
    let floor = plan.zone_end();
    let flush_bytes = ev.flush_written + plan.probes.len() as u64 * BLOCK;
    loop {
        let Some((good, bad)) = bracket(ev, floor) else {
            return Ok(());
        };
        let low = good.max(floor - BLOCK) + BLOCK;
        if bad <= low || ev.rounds >= 16 {
            return Ok(());
        }
        let probes: Vec<u64> = spread(low, bad - BLOCK, ROUND_PROBES)
            .into_iter()
            .filter(|p| *p >= floor && *p < bad)
            .collect();
        if probes.is_empty() {
            return Ok(());
        }
        journal.claim_blocks(io, &probes)?;
        let mut held = write_probes(io, plan, &probes);
        let round: BTreeSet<u64> = probes.iter().copied().collect();
        flush(io, plan, flush_bytes, false, &round, journal)?;
        read_probes(io, plan, &probes, &mut held, ev);
        ev.probes.extend(held);
        ev.rounds += 1;
    }
}

mod flush;
#[cfg(test)]
mod tests;
