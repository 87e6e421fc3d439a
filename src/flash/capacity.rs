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
//!    the first round of probe blocks is written, spread evenly from above
//!    the flush region to the last block of the device;
//! 2. the flush, sized by the write cache it measures: zeros written in
//!    1 MiB pieces right after the zone and timed, until the speed has
//!    fallen (the cache is full, so everything before it has been pushed
//!    out; see [`super::cache`]) and as much again has been written, or up
//!    to the stated bound (`--flush`, else [`AUTO_FLUSH`]); a bound below
//!    what the measured cache needs is reported;
//! 3. everything is read back: the first MiB and the zone (a block of ours
//!    found there was written at an alias), a grid of reads one zone apart
//!    over the whole device (on a wrapping card one of them lands on the
//!    zone's alias, `real + zone`, and names it), and the probes;
//! 4. the search: the last probe that held and the first that did not
//!    bracket the real size; more rounds of probes inside the bracket, each
//!    followed by the same flush, narrow it to one 4 KiB block (f3probe's
//!    bisection, with 64 probes a round).
//!
//! Probe positions do not depend on the seed (only the salt does), so the
//! same card gives the same verdict whatever the seed. The first MiB (the
//! partition table) is never written, and the flush never lands on the zone
//! or a probe. With `--preserve` the first round's writes are journalled
//! before any is made, and each later round claims its blocks
//! ([`FlashIo::claim`]: journalled before it returns) before writing them,
//! so the search and its precision are the same as without.
//!
//! This module writes and reads; what the evidence says (the real size,
//! the bracket, the confidence) is `crate::analysis::flash::capacity`.

use super::FlashIo;
use crate::analysis::flash::capacity::{
    self, Evidence, Layout, bracket, proven_or_medium, refines,
};
pub use crate::analysis::flash::capacity::{BadProbe, CapacityResult, Held, flush_needed};
use crate::error::usage_io;
use crate::result::verify::Verdict;
use crate::units::format_size;
use crate::workload::verify;
use serde::Serialize;
use std::io;

/// Never written: the partition table lives here.
pub const PROTECTED: u64 = 1 << 20;
/// The unit a probe writes: eight stamped sectors.
pub use crate::analysis::flash::capacity::BLOCK;
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
/// [`CLAIM_STEP`] are claimed as the flush reaches them.
pub const LISTED_FLUSH: u64 = 128 << 20;
const CLAIM_STEP: u64 = 64 << 20;

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
    /// Where the flush goes, and the most it writes.
    pub flush_offset: u64,
    pub flush_bytes: u64,
    /// The first round's probe blocks, ascending.
    pub probes: Vec<u64>,
}

impl CapacityPlan {
    /// The plan for a device of `size` bytes; no probes below
    /// [`MIN_SIZE`], where [`detect`] refuses to run.
    pub fn new(size: u64, flush_bytes: u64, seed: u64) -> CapacityPlan {
        let zone_bytes = zone_for(size);
        let flush_offset = PROTECTED + zone_bytes;
        let room = size.saturating_sub(flush_offset) / 4;
        let flush_bytes = flush_bytes.min(room) / MIB * MIB;
        let low = flush_offset + flush_bytes;
        let probes = match size >= MIN_SIZE && low + BLOCK <= size {
            true => spread(low, size / BLOCK * BLOCK - BLOCK, FIRST_PROBES),
            false => Vec::new(),
        };
        CapacityPlan {
            size,
            seed,
            zone_offset: PROTECTED,
            zone_bytes,
            flush_offset,
            flush_bytes,
            probes,
        }
    }

    /// The byte ranges the first round is known to write, for the
    /// preserve journal: the zone, the probes and the flush's first
    /// [`LISTED_FLUSH`]; a flush that goes further claims each piece
    /// ([`FlashIo::claim`]) before writing it, so that a card with a small
    /// cache does not have a gigabyte journalled for nothing.
    pub fn regions(&self) -> Vec<(u64, u64)> {
        let mut v: Vec<(u64, u64)> = self.probes.iter().map(|p| (*p, BLOCK)).collect();
        v.push((self.zone_offset, self.zone_bytes));
        v.push((self.flush_offset, self.listed_flush()));
        v.sort_unstable();
        v.dedup();
        v
    }

    fn zone_end(&self) -> u64 {
        self.zone_offset + self.zone_bytes
    }

    /// The flush bytes [`CapacityPlan::regions`] lists.
    fn listed_flush(&self) -> u64 {
        self.flush_bytes.min(LISTED_FLUSH)
    }
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
    // A flush larger than the real size wraps over the zone and erases the
    // evidence, or leaves no probe below the real size: each retry flushes
    // an eighth as much (never more than the plan, so never beyond what
    // --preserve journalled). A smaller flush can only hide more behind a
    // cache, so a retry refines the first fake verdict only where its own
    // flush was seen to beat the cache and its range lies inside the first.
    let mut attempt = plan.clone();
    let mut first: Option<CapacityResult> = None;
    // The end of the flush region listed or claimed so far: never claimed
    // twice (a second journal entry would record our own zeros).
    let mut claimed_to = plan.flush_offset + plan.listed_flush();
    loop {
        let ev = run(io, &attempt, &mut claimed_to)?;
        let below_probes = ev.probes.iter().all(|p| p.1 != Held::Ok);
        let erased = (ev.zone_damaged || below_probes) && ev.distances.is_empty();
        let result = decide(&attempt, ev);
        let refines = |f: &CapacityResult| refines(&result, f);
        first = match first {
            None => Some(result),
            Some(f) if refines(&f) => Some(proven_or_medium(result)),
            keep => keep,
        };
        if !erased || attempt.flush_bytes == 0 {
            return Ok(first.unwrap_or_else(|| unreachable_result(plan)));
        }
        attempt.flush_bytes = attempt.flush_bytes / 8 / MIB * MIB;
    }
}

/// The verdict on the evidence, as the analysis reads it.
fn decide(plan: &CapacityPlan, ev: Evidence) -> CapacityResult {
    let layout = Layout {
        claimed: plan.size,
        zone_offset: plan.zone_offset,
        zone_end: plan.zone_end(),
        first_probes: plan.probes.len(),
    };
    capacity::decide(&layout, ev)
}

/// Never used (the loop always decides once); a genuine verdict of no
/// confidence rather than a panic.
fn unreachable_result(plan: &CapacityPlan) -> CapacityResult {
    decide(plan, Evidence::default())
}

fn run(io: &mut dyn FlashIo, plan: &CapacityPlan, claimed_to: &mut u64) -> io::Result<Evidence> {
    let mut ev = Evidence::default();
    write_zone(io, plan)?;
    let mut held = write_probes(io, plan, &plan.probes);
    ev.bad_at_once = read_probes(io, plan, &plan.probes, &mut held, &mut Evidence::default());
    let seen = flush(io, plan, plan.flush_bytes, true, claimed_to)?;
    ev.flush_written = seen.written;
    ev.flush_ns = seen.ns;
    ev.cache_beaten = seen.beaten;
    ev.cache_filled_at = seen.fell_at;
    scan_zone_and_grid(io, plan, &mut ev)?;
    ev.bad_after_flush = read_probes(io, plan, &plan.probes, &mut held, &mut ev);
    ev.probes.extend(held);
    ev.rounds = 1;
    bisect(io, plan, &mut ev, claimed_to)?;
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
        // A zone that cannot be written is a card failing below any
        // plausible real size: the read-back shows it.
        let _ = write(io, at, buf.as_slice());
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

/// What a flush wrote and saw.
#[derive(Debug, Clone, Copy, Default)]
struct Flushed {
    written: u64,
    /// The time the pieces took.
    ns: u64,
    /// The write cache was seen full and as much again written.
    beaten: bool,
    /// Bytes written when the speed fell.
    fell_at: Option<u64>,
}

/// Zeros in 1 MiB pieces from the flush offset, timed: stops once the
/// speed has fallen below 60 % of the first pieces' and as much again has
/// been written, or at `limit` (`adaptive` off: exactly `limit`): the
/// flush is sized by the cache it measures. A failing write ends the
/// flush (the card fails below its claim: the read-back shows it).
fn flush(
    io: &mut dyn FlashIo,
    plan: &CapacityPlan,
    limit: u64,
    adaptive: bool,
    claimed_to: &mut u64,
) -> io::Result<Flushed> {
    let mut speeds: Vec<u64> = Vec::new();
    let mut fell_at: Option<u64> = None;
    let mut written = 0;
    let mut total_ns = 0;
    let end = plan.flush_offset + limit;
    while written + MIB <= limit {
        let at = plan.flush_offset + written;
        if at + MIB > *claimed_to {
            let len = CLAIM_STEP.min(end - *claimed_to) / MIB * MIB;
            io.claim(&[(*claimed_to, len)])?;
            *claimed_to += len;
        }
        let Ok(ns) = io.write_zeros(at, MIB) else {
            break;
        };
        written += MIB;
        total_ns += ns;
        if !adaptive {
            continue;
        }
        speeds.push(ns.max(1));
        if fell_at.is_none() && capacity::flush_fell(&speeds) {
            fell_at = Some(written);
        }
        if let Some(f) = fell_at.filter(|f| written >= flush_needed(*f)) {
            let fell_piece = (f / MIB) as usize;
            if capacity::fall_lasted(&speeds, fell_piece.saturating_sub(capacity::FLUSH_FALL_RUN)) {
                return Ok(Flushed {
                    written,
                    ns: total_ns,
                    beaten: true,
                    fell_at,
                });
            }
            // A stall, not a full cache: look for the fall again.
            fell_at = None;
        }
    }
    Ok(Flushed {
        written,
        ns: total_ns,
        beaten: false,
        fell_at,
    })
}

/// Reads the first MiB and the zone back (aliases, damage), then a grid of
/// reads one zone apart over the rest of the device (aliases).
fn scan_zone_and_grid(
    io: &mut dyn FlashIo,
    plan: &CapacityPlan,
    ev: &mut Evidence,
) -> io::Result<()> {
    let mut big = io.buffer(MIB as usize);
    let mut at = 0;
    while at < plan.zone_end() {
        let read = io.read(at, big.as_mut_slice());
        if let Ok(ns) = read {
            ev.read_bytes += MIB;
            ev.read_ns += ns;
        }
        match read {
            Ok(_) if at < plan.zone_offset => note_aliases(big.as_slice(), at, plan.seed, ev),
            Ok(_) => ev.zone_damaged |= first_wrong(big.as_slice(), at, plan.seed, ev).is_some(),
            Err(_) => ev.zone_damaged |= at >= plan.zone_offset,
        }
        at += MIB;
    }
    let mut small = io.buffer(BLOCK as usize);
    let mut x = plan.zone_end();
    while x + BLOCK <= plan.size {
        if io.read(x, small.as_mut_slice()).is_ok() {
            note_aliases(small.as_slice(), x, plan.seed, ev);
        }
        x += plan.zone_bytes;
    }
    Ok(())
}

/// f3probe's bisection: rounds of probes inside the bracket, each claimed
/// before it is written and followed by the first round's flush (the same
/// bytes, so never beyond them), until it is one block wide or an alias
/// gave the real size.
fn bisect(
    io: &mut dyn FlashIo,
    plan: &CapacityPlan,
    ev: &mut Evidence,
    claimed_to: &mut u64,
) -> io::Result<()> {
    let floor = plan.flush_offset + ev.flush_written;
    while ev.distances.is_empty() {
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
        let blocks: Vec<(u64, u64)> = probes.iter().map(|p| (*p, BLOCK)).collect();
        io.claim(&blocks)?;
        let mut held = write_probes(io, plan, &probes);
        flush(io, plan, ev.flush_written, false, claimed_to)?;
        read_probes(io, plan, &probes, &mut held, ev);
        ev.probes.extend(held);
        ev.rounds += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
