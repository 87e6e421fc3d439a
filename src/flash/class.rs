//! SD speed-class verdicts, measured the way the SD Association's
//! Physical Layer Simplified Specification describes its performance
//! model (the "Speed Class" and "Performance" sections of Part 1, and the
//! "Application Performance Class" section for A1/A2):
//!
//! * the card is cut into allocation units (AUs) and each AU into
//!   recording units (RU = 512 KiB for Class 10, UHS and Video classes,
//!   here `min(512 KiB, AU)`). The write performance **Pw** is the average
//!   speed of writing whole *free* AUs as consecutive RUs. A card with a
//!   write cache (an SLC region) first takes writes at its burst speed:
//!   Pw is the speed after that cache is exhausted, so the test writes
//!   whole AUs beyond the FAT area, timing each, until the speed has
//!   fallen and stays steady (or until a cap of 16 GiB, or two passes over
//!   a smaller card; then the speed is "after N MiB, cache not exhausted").
//!   A dynamic SLC cache may take the whole free space of a card, so a
//!   PASS with no fall is trusted only when the writes would have filled a
//!   cache as large as the card;
//! * the read performance **Pr** is the average of 256 random single-RU
//!   reads, and the specification asks Pr ≥ Pw;
//! * **T_FW**, the FAT-update latency, is the busy time of small writes in
//!   the FAT area: the worst sliding mean of 8 consecutive ones and the
//!   largest single one (Class 2–10: mean ≤ 100 ms, each ≤ 750 ms; UHS
//!   and Video classes: each ≤ 250 ms). A card stalls when it merges its
//!   FAT log, once every so many writes; a run rules out only stalls it
//!   would have seen three times, so it times three times the rarest period
//!   the field shows (768 writes), and a PASS over fewer is low;
//! * **P(Nu)**, the performance of an AU in which Nu of its Nt RUs are
//!   already used, is what writing the free RUs of such AUs costs when the
//!   card must move the used ones (SDHC's move performance Pm): the
//!   "performance curve" from share used to MB/s. Cards without a move
//!   cost (SDXC-like) show a flat curve;
//! * A1/A2 add random 4 KiB reads over the card and writes in a 16 MiB
//!   region and a sustained sequential speed (Pw). The writes come after
//!   the cache is exhausted, in windows of 500 until two in a row agree:
//!   the first after the sequential writes use what the cache drained
//!   meanwhile, and are faster than the card's steady state. A rate that
//!   never settles is at most low; each rate's spread is its windows'.
//! * A card may queue the medium's work behind its cache, so that each
//!   write waits for the oldest work queued, not its own: what a write
//!   costs then depends on what was written a cache's worth before it.
//!   The random and FAT-area writes are meant to meet the work of
//!   sequential recording, so when other writes (the places timed out to
//!   the card's end, the random and P(Nu) writes) may have reached the
//!   front of a cache sized from the fall, it is filled again with whole
//!   AUs in the region the Pw writes covered before them. The FAT-area
//!   writes are timed twice, 256 right after the sequential writes and
//!   768 at the end: a cache that drains faster than sequential writes
//!   come shows no fall to size it by, and a FAIL of the later ones that
//!   the first met may be the random writes' work (it is low).
//!
//! Each requirement is PASS, FAIL or LINK with the measured value and the
//! limit beside it, and a [`Confidence`](crate::result::flash::Confidence) from the margin between the two
//! relative to the spread of the measurement. LINK: the link (reader, bus)
//! cannot carry the requirement and the card ran at about the link's
//! speed, so whether the card itself meets it cannot be told (a USB 2
//! reader cannot show U3); it is always low. No verdict is stronger than
//! its weakest input: Pw and Pr measured in the recording units of an
//! assumed AU (none given, reported or found) are at most low and say so.
//!
//! This module writes, reads and times; the verdicts (limits, margins,
//! confidence) are `crate::analysis::flash::class`.

use super::{FAT_AREA, FlashIo, mb_s};
use crate::analysis::flash::class::{
    AuCap, ClassFigures, FatLatency, PnuPoint, PwFigures, fat_figures,
};
use crate::analysis::flash::class::{FAT_PERIODS_SEEN, FIELD_FAT_PERIOD_MAX, IOPS_WINDOWS_MAX};
use crate::analysis::flash::class::{IopsFigures, IopsWindow, windows_agree};
use crate::analysis::flash::class::{PW_CAP, fell_from, move_speed, steady};
use crate::error::usage_io;
use crate::result::flash::{AuFrom, Confidence, Exhaustion};
use crate::units::format_size;
use serde::Serialize;
use std::io;

/// Bytes of each random read and write (A1/A2) and FAT-area write.
const SMALL: u64 = 4096;
/// The largest recording unit (Class 10, UHS, Video).
const RU_MAX: u64 = 512 << 10;
/// Writes beyond the regions listed up front are announced in steps this
/// large.
const CLAIM_STEP: u64 = 256 << 20;
/// FAT-area writes timed right after the sequential ones: a stall period
/// of the field's at most once, and no more work queued for the random
/// writes after them than a quarter of the later timing (with 768, those
/// then paid for the FAT stalls on 6 of 6,000 cards).
const FAT_FIRST_WRITES: u32 = 256;
/// Where the FAT-area writes go: 4 MiB, where a formatted card's FAT
/// usually starts, cycling over 16 small blocks.
const FAT_SPOT: u64 = 4 << 20;
const FAT_SPOT_BLOCKS: u64 = 16;
/// AUs with Nu used RUs written per point of the P(Nu) curve, and whole
/// fresh AUs written around them to push them out of the card's open AUs
/// (more than the 8 open AUs cards are seen to keep).
const PNU_AUS: u64 = 3;
const PNU_EVICT: u64 = 9;
/// The shares of used RUs of the P(Nu) curve.
const PNU_SHARES: [f64; 3] = [0.25, 0.5, 0.75];
/// The most the P(Nu) AUs may cover.
const PNU_BUDGET: u64 = 2 << 30;

/// Where and how much the test writes. Regions, from the FAT area on:
/// the FAT spot (inside it), then AU-aligned the random-write region, the
/// P(Nu) AUs, and the cache-exhausting AUs up to the cap.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ClassPlan {
    pub au: u64,
    pub ru: u64,
    pub random_ops: u32,
    pub random_region: u64,
    /// Random single-RU reads (Pr).
    pub ru_reads: u32,
    pub fat_writes: u32,
    /// Points of the P(Nu) curve (0: not measured, the device or the AU
    /// too small or too large).
    pub pnu_points: usize,
    /// Most bytes of whole-AU writes to exhaust the cache and measure Pw.
    pub pw_cap: u64,
    /// Bytes of the region those writes go over, from [`ClassPlan::pw_offset`]
    /// to the device's end (or [`PW_CAP`]); they start over at its
    /// beginning when the cap is larger.
    pub pw_room: u64,
    /// Bytes of the device (the largest cache it may carry follows).
    pub card_bytes: u64,
    /// The AU is a fallback, not the card's (none given, reported or
    /// found): the verdicts from its recording units are at most low.
    pub au_assumed: bool,
    /// Where the AU came from and how sure it is, when not given.
    pub au_cap: Option<(AuFrom, Confidence)>,
}

impl ClassPlan {
    /// The plan for an AU of `au` bytes on a device of `size`; any AU gives
    /// a plan, and [`ClassPlan::unusable`] says whether it can run.
    pub fn new(au: u64, size: u64) -> ClassPlan {
        let unit = au.max(1);
        let mut plan = ClassPlan {
            au,
            ru: RU_MAX.min(au),
            random_ops: crate::analysis::flash::class::IOPS_WINDOW,
            random_region: (16u64 << 20).div_ceil(unit).saturating_mul(unit),
            ru_reads: 256,
            fat_writes: FIELD_FAT_PERIOD_MAX * FAT_PERIODS_SEEN,
            pnu_points: 0,
            pw_cap: 0,
            pw_room: 0,
            card_bytes: size,
            au_assumed: false,
            au_cap: None,
        };
        let shares = pnu_used(au / plan.ru.max(1)).len();
        for points in [shares, 1, 0] {
            plan.pnu_points = points.min(shares);
            let room = size.saturating_sub(plan.pw_offset());
            plan.pw_room = PW_CAP.min(room) / unit * unit;
            plan.pw_cap = PW_CAP.min(plan.pw_room.saturating_mul(PW_PASSES)) / unit * unit;
            let fits = plan.pnu_len() <= PNU_BUDGET.min(size / 4);
            if fits && plan.pw_room >= plan.min_pw() {
                break;
            }
        }
        plan
    }

    /// The first AU boundary beyond the FAT area.
    pub fn seq_offset(&self) -> u64 {
        FAT_AREA.div_ceil(self.au.max(1)).saturating_mul(self.au)
    }

    pub fn random_offset(&self) -> u64 {
        self.seq_offset()
    }

    pub fn pnu_offset(&self) -> u64 {
        self.random_offset().saturating_add(self.random_region)
    }

    /// Bytes of the P(Nu) AUs: per point, the AUs measured and two rounds
    /// of whole AUs pushing them out of the open ones.
    pub fn pnu_len(&self) -> u64 {
        let aus = (PNU_AUS + 2 * PNU_EVICT).saturating_mul(self.pnu_points as u64);
        aus.saturating_mul(self.au)
    }

    pub fn pw_offset(&self) -> u64 {
        self.pnu_offset().saturating_add(self.pnu_len())
    }

    /// The fewest bytes of the cache-exhausting writes that can show a
    /// steady speed: two windows of the fewest AUs one can hold.
    fn min_pw(&self) -> u64 {
        self.au.saturating_mul(2 * MIN_WINDOW)
    }

    /// AUs in a row that must agree to call the speed steady: 64 MiB of
    /// them, or half of what the device leaves room for, and at least
    /// [`MIN_WINDOW`].
    pub fn window(&self) -> u64 {
        let unit = self.au.max(1);
        let room = self.pw_cap / unit / 2;
        (64u64 << 20).div_ceil(unit).min(room).max(MIN_WINDOW)
    }

    /// The regions known before the test starts: the FAT spot, the random
    /// writes, the P(Nu) AUs and the first step of the cache-exhausting
    /// writes (the rest are claimed as they are reached).
    pub fn regions(&self) -> Vec<(u64, u64)> {
        vec![
            (FAT_SPOT, FAT_SPOT_BLOCKS * SMALL),
            (self.random_offset(), self.random_region),
            (self.pnu_offset(), self.pnu_len()),
            (self.pw_offset(), self.first_claim()),
        ]
        .into_iter()
        .filter(|r| r.1 > 0)
        .collect()
    }

    fn first_claim(&self) -> u64 {
        self.pw_room.min(claim_step(self.au))
    }

    /// Why this plan cannot run on a device of `size` bytes: an AU too
    /// small to hold the test's recording units and 4 KiB transfers, or a
    /// device too small for the regions written.
    pub fn unusable(&self, size: u64) -> Option<String> {
        if !super::usable_au(self.au) {
            return Some(format!(
                "an AU of {} is too small for the class test: it writes 4 KiB and recording units in whole AUs of at least {}, in 512-byte sectors (give --au, e.g. 4M)",
                format_size(self.au),
                format_size(super::MIN_AU)
            ));
        }
        let end = self.pw_offset().saturating_add(self.min_pw());
        (self.pw_room < self.min_pw() || end > size).then(|| {
            format!(
                "the class test with AUs of {} writes up to {}, beyond the end of this {} device: give a smaller --au or a larger device",
                format_size(self.au),
                format_size(end),
                format_size(size)
            )
        })
    }
}

/// The fewest AUs in a row that can show a steady speed.
const MIN_WINDOW: u64 = 4;

/// Passes the cache-exhausting writes may make over their region. A cache
/// may be as large as the card; one taking writes at twice its drain
/// speed or faster fills within two passes, so on a card smaller than
/// [`PW_CAP`] the writes go over it again rather than stop at its end
/// with the cache still taking them (a 2 GiB cache on a 4 GiB card).
const PW_PASSES: u64 = 2;

fn claim_step(au: u64) -> u64 {
    CLAIM_STEP.div_ceil(au.max(1)).saturating_mul(au)
}

pub fn measure(io: &mut dyn FlashIo, plan: &ClassPlan, seed: u64) -> io::Result<ClassFigures> {
    if let Some(why) = plan.unusable(io.size()) {
        return Err(usage_io(why));
    }
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut buf = io.buffer(plan.ru as usize);
    rng.fill(buf.as_mut_slice());
    let (mut pw, claimed) = exhaust_and_measure(io, plan, buf.as_slice())?;
    let mut at_places = Counted { io, written: 0 };
    pw.slowest_place_mb_s = slowest_place(
        &mut at_places,
        plan,
        buf.as_slice(),
        claimed,
        lead_bytes(&pw),
    )?;
    let (io, places) = (at_places.io, at_places.written);
    // Behind a cache that queues the medium's work, the random writes
    // would pay for the places' (a card's slower end, issue 37).
    refill(io, plan, buf.as_slice(), &pw, places)?;
    // FAT-area writes before the random and P(Nu) writes, whose work a
    // cache no fall sized may still hold when the later ones are timed.
    let mut first = Counted { io, written: 0 };
    let fat_first = fat_writes(&mut first, FAT_FIRST_WRITES, buf.as_slice())?;
    let (io, first_bytes) = (first.io, first.written);
    refill(io, plan, buf.as_slice(), &pw, first_bytes)?;
    // The cache is full of the sequential writes' work.
    let mut since = Counted { io, written: 0 };
    let random_writes = random_writes(&mut since, plan, &mut rng, buf.as_slice())?;
    let pnu = performance_curve(&mut since, plan, buf.as_slice(), pw.mean_mb_s)?;
    let (io, written_since) = (since.io, since.written);
    refill(io, plan, buf.as_slice(), &pw, written_since)?;
    let fat = fat_latency(io, plan, buf.as_slice())?;
    let (pr_mb_s, pr_min_mb_s) = ru_reads(io, plan, &mut rng, buf.as_mut_slice())?;
    let random_reads = random_reads(io, plan, &mut rng, buf.as_mut_slice())?;
    Ok(ClassFigures {
        ru: plan.ru,
        card_bytes: plan.card_bytes,
        au_assumed: plan.au_assumed.then_some(plan.au),
        au_cap: plan.au_cap.map(|(from, confidence)| AuCap {
            au_bytes: plan.au,
            from,
            confidence,
        }),
        pm_mb_s: move_speed(&pnu, pw.mean_mb_s, plan.au, plan.ru),
        pw,
        pr_mb_s,
        pr_min_mb_s,
        fat,
        fat_first: Some(fat_first),
        pnu,
        random_reads,
        random_writes,
    })
}

/// Writes one whole AU at `at` as consecutive RUs; the time taken, ns.
fn write_au(io: &mut dyn FlashIo, plan: &ClassPlan, at: u64, ru: &[u8]) -> io::Result<u64> {
    write_rus(io, plan, at, plan.au / plan.ru, ru)
}

fn write_rus(
    io: &mut dyn FlashIo,
    plan: &ClassPlan,
    at: u64,
    n: u64,
    ru: &[u8],
) -> io::Result<u64> {
    let mut ns = 0;
    for i in 0..n {
        ns += io.write(at + i * plan.ru, ru)?;
    }
    Ok(ns)
}

/// Whole AUs from the P(Nu) region's end until the speed has fallen and
/// holds steady, or the cap.
/// With the bytes of the region claimed; Pw at the card's slowest place
/// is timed later (see [`slowest_place`]).
fn exhaust_and_measure(
    io: &mut dyn FlashIo,
    plan: &ClassPlan,
    ru: &[u8],
) -> io::Result<(PwFigures, u64)> {
    let mut window = plan.window() as usize;
    let most = ((plan.pw_cap / plan.au.max(1)) / 2).max(window as u64) as usize;
    let mut speeds: Vec<f64> = Vec::new();
    let (mut peak, mut fell_after, mut claimed) = (0.0f64, None, plan.first_claim());
    let mut exhaustion = Exhaustion::NoFall;
    let mut written = 0;
    let mut times: Vec<u64> = Vec::new();
    let mut falling = false;
    while written + plan.au <= plan.pw_cap {
        // The region is claimed once; a second pass writes over what the
        // first wrote (journalled already under --preserve).
        let at = written % plan.pw_room.max(plan.au);
        if at + plan.au > claimed && claimed < plan.pw_room {
            let step = claim_step(plan.au).min(plan.pw_room - claimed);
            io.claim(&[(plan.pw_offset() + claimed, step)])?;
            claimed += step;
        }
        let ns = write_au(io, plan, plan.pw_offset() + at, ru)?;
        written += plan.au;
        times.push(ns);
        let speed = mb_s(plan.au, ns);
        speeds.push(speed);
        peak = peak.max(speed);
        if !falling && fell_from(speed, peak) {
            fell_after = fell_after.or(Some(written));
            exhaustion = Exhaustion::StillFalling;
            falling = true;
        } else if falling && !fell_from(speed, peak) {
            // Back at the burst speed: what fell was a pause (garbage
            // collection, throttling), not the cache filling. A steady
            // speed must then hold over more AUs than a run of pauses.
            falling = false;
            window = (window * 2).min(most);
        }
        let every = (window / 4).max(1);
        let check = falling && speeds.len().is_multiple_of(every);
        if check && steady(&speeds, window) {
            exhaustion = Exhaustion::Exhausted;
            break;
        }
    }
    let tail = &speeds[speeds.len().saturating_sub(window)..];
    let mean = tail.iter().sum::<f64>() / tail.len().max(1) as f64;
    let pw = PwFigures {
        burst_mb_s: speeds.first().copied().unwrap_or(0.0),
        mean_mb_s: mean,
        min_mb_s: tail.iter().copied().fold(f64::INFINITY, f64::min).min(mean),
        aus: tail.len() as u64,
        written,
        fell_after,
        exhaustion,
        samples: samples(&speeds, plan.au),
        stall_ms: stall_ms(&times),
        slowest_place_mb_s: None,
    };
    Ok((pw, claimed))
}

/// The longest a write took beyond both its neighbours, ms (nil when no
/// write stands out: a speed that falls for good is no stall).
pub(crate) fn stall_ms(times: &[u64]) -> f64 {
    let beyond = |i: usize| {
        let before = i.checked_sub(1).map_or(times[i], |b| times[b]);
        let after = times.get(i + 1).copied().unwrap_or(times[i]);
        times[i].saturating_sub(before.max(after))
    };
    let most = (0..times.len()).map(beyond).max().unwrap_or(0);
    most as f64 / 1e6
}

/// At most 64 (bytes written, MB/s) points of the per-AU speeds.
fn samples(speeds: &[f64], au: u64) -> Vec<(u64, f64)> {
    let step = speeds.len().div_ceil(64).max(1);
    speeds
        .iter()
        .enumerate()
        .filter(|(i, _)| (i + 1) % step == 0 || i + 1 == speeds.len())
        .map(|(i, s)| ((i as u64 + 1) * au, *s))
        .collect()
}

/// One window of `plan.random_ops` small transfers, each one call of `op`
/// (which returns the ns it took).
fn random_window(
    plan: &ClassPlan,
    mut op: impl FnMut() -> io::Result<u64>,
) -> io::Result<IopsWindow> {
    let mut window = IopsWindow::default();
    for _ in 0..plan.random_ops {
        window.add(op()?);
    }
    Ok(window)
}

/// Small random writes within the plan's random region, window after
/// window until two in a row agree (steady state: what the cache drained
/// during the writes before is used up), at most [`IOPS_WINDOWS_MAX`].
fn random_writes(
    io: &mut dyn FlashIo,
    plan: &ClassPlan,
    rng: &mut fastrand::Rng,
    buf: &[u8],
) -> io::Result<IopsFigures> {
    let mut figures = IopsFigures::default();
    while figures.windows.len() < IOPS_WINDOWS_MAX && !figures.steady {
        let window = random_window(plan, || {
            let at = plan.random_offset() + rng.u64(0..plan.random_region / SMALL) * SMALL;
            io.write(at, &buf[..SMALL as usize])
        })?;
        figures.steady = figures
            .windows
            .last()
            .is_some_and(|before| windows_agree(before, &window));
        figures.windows.push(window);
    }
    Ok(figures)
}

/// Small random reads over the whole card, in one window: no cache stands
/// in front of reads, so there is no state to wait out.
fn random_reads(
    io: &mut dyn FlashIo,
    plan: &ClassPlan,
    rng: &mut fastrand::Rng,
    buf: &mut [u8],
) -> io::Result<IopsFigures> {
    let window = random_window(plan, || {
        let at = rng.u64(0..io.size() / SMALL) * SMALL;
        io.read(at, &mut buf[..SMALL as usize])
    })?;
    Ok(IopsFigures {
        windows: vec![window],
        steady: true,
    })
}

/// Pr: RU-aligned random reads over the card; mean and slowest, MB/s.
fn ru_reads(
    io: &mut dyn FlashIo,
    plan: &ClassPlan,
    rng: &mut fastrand::Rng,
    buf: &mut [u8],
) -> io::Result<(f64, f64)> {
    let (mut total, mut slowest) = (0, 0);
    for _ in 0..plan.ru_reads {
        let at = rng.u64(0..io.size() / plan.ru) * plan.ru;
        let ns = io.read(at, buf)?;
        total += ns;
        slowest = slowest.max(ns);
    }
    let bytes = plan.ru * u64::from(plan.ru_reads);
    Ok((mb_s(bytes, total), mb_s(plan.ru, slowest)))
}

/// T_FW: small writes cycling over a few blocks of the FAT area, like the
/// FAT and directory updates of a file system.
fn fat_latency(io: &mut dyn FlashIo, plan: &ClassPlan, buf: &[u8]) -> io::Result<FatLatency> {
    fat_writes(io, plan.fat_writes, buf)
}

fn fat_writes(io: &mut dyn FlashIo, writes: u32, buf: &[u8]) -> io::Result<FatLatency> {
    let mut ms = Vec::with_capacity(writes as usize);
    for i in 0..u64::from(writes) {
        let at = FAT_SPOT + (i % FAT_SPOT_BLOCKS) * SMALL;
        ms.push(io.write(at, &buf[..SMALL as usize])? as f64 / 1e6);
    }
    Ok(fat_figures(&ms))
}

/// P(Nu), per share of used RUs: fill Nu RUs of a few fresh AUs, push
/// them out of the card's open AUs with whole fresh AUs, then write their
/// free RUs, and push those out too. A move (or merge) of the used RUs is
/// paid when the card closes an AU, so it lands on the writes after it:
/// the time of the free RUs and of the whole AUs after them, less those
/// whole AUs at Pw, is what the free RUs cost.
fn performance_curve(
    io: &mut dyn FlashIo,
    plan: &ClassPlan,
    ru: &[u8],
    pw_mb_s: f64,
) -> io::Result<Vec<PnuPoint>> {
    let nt = plan.au / plan.ru;
    let mut points = Vec::new();
    let mut at = plan.pnu_offset();
    for nu in pnu_used(nt).into_iter().take(plan.pnu_points) {
        let aus: Vec<u64> = (0..PNU_AUS).map(|i| at + i * plan.au).collect();
        at += PNU_AUS * plan.au;
        for &a in &aus {
            write_rus(io, plan, a, nu, ru)?;
        }
        for _ in 0..PNU_EVICT {
            write_au(io, plan, at, ru)?;
            at += plan.au;
        }
        let mut ns = 0;
        for &a in &aus {
            ns += write_rus(io, plan, a + nu * plan.ru, nt - nu, ru)?;
        }
        for _ in 0..PNU_EVICT {
            ns += write_au(io, plan, at, ru)?;
            at += plan.au;
        }
        let whole = PNU_EVICT as f64 * plan.au as f64 / (pw_mb_s.max(1e-9) * 1e6);
        let free_bytes = (PNU_AUS * (nt - nu) * plan.ru) as f64;
        let secs = (ns as f64 / 1e9 - whole).max(free_bytes / 1e12);
        points.push(PnuPoint {
            used_share: nu as f64 / nt as f64,
            used_rus: nu,
            mb_s: free_bytes / secs / 1e6,
        });
    }
    Ok(points)
}

/// The distinct numbers of used RUs of the curve's points, for an AU of
/// `nt` RUs (none when it has a single RU).
fn pnu_used(nt: u64) -> Vec<u64> {
    let mut used: Vec<u64> = PNU_SHARES
        .iter()
        .map(|s| (s * nt as f64).round() as u64)
        .filter(|nu| (1..nt).contains(nu))
        .collect();
    used.dedup();
    used
}

#[path = "class/places.rs"]
mod places;
#[path = "class/refill.rs"]
mod refill;
use places::slowest_place;
use refill::{Counted, lead_bytes, refill};

#[cfg(test)]
mod tests;

#[cfg(test)]
#[path = "class/tests_real.rs"]
mod tests_real;

#[cfg(test)]
#[path = "class/tests_queue.rs"]
mod tests_queue;
