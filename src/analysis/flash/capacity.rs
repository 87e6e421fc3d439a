//! Reading the evidence of `flash capacity`: whether the card holds what
//! it claims, and if not, where its real size lies.
//!
//! The method is f3probe's (Michel Machado's F3, "f3probe: the fastest way
//! to identify fake drives"), generalised: blocks carry their own address,
//! so a block read back at an alias names the real size exactly (the
//! common divisor of the distances); otherwise the last probe that held
//! and the first that did not bracket it. The `flash capacity` measuring
//! layer writes and reads the blocks; this module only judges what came back. No I/O.

use crate::result::flash::Confidence;
use crate::result::verify::Verdict;
use serde::Serialize;

/// The unit a probe writes (f3probe's bisection narrows to one such
/// block): 4 KiB, the smallest block a file system puts data in.
pub const BLOCK: u64 = 4096;

const MIB: u64 = 1 << 20;

/// Extra flush beyond twice the bytes after which the write cache was seen
/// full: the fall is seen over a few 1 MiB pieces, so it may be noticed a
/// few pieces late.
pub const FLUSH_LATE: u64 = 4 * MIB;

/// The flush's timed pieces: the burst time is the median of the first
/// this many.
pub const FLUSH_BURST_PIECES: usize = 8;

/// Pieces written before a fall is looked for at all.
pub const FLUSH_MIN_PIECES: usize = 12;

/// The last this many pieces must all be slow for the cache to count as
/// full: one slow piece is the host, not the card.
pub const FLUSH_FALL_RUN: usize = 4;

/// A piece is slow at under 6/10 of the burst speed, as in the cache test
/// (`super::cache::FALL`); kept as a ratio of integers so that the times
/// compare exactly.
pub const FLUSH_FALL: (u64, u64) = (6, 10);

/// The bad probes listed in a result, at most: enough to show the pattern
/// of a fake, few enough to print.
pub const MAX_BAD_LISTED: usize = 64;

/// The plan's figures a verdict needs.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    /// Bytes the device claims.
    pub claimed: u64,
    /// The densely stamped zone after the protected first MiB.
    pub zone_offset: u64,
    pub zone_end: u64,
    /// Probes of the first round.
    pub first_probes: usize,
    /// The flush bound asked for, and the one used: lower when the asked
    /// one exceeded what any cache of the card could need.
    pub flush_asked: u64,
    pub flush_bound: u64,
}

/// A probe block read back wrong.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct BadProbe {
    pub offset: u64,
    pub verdict: Verdict,
}

/// What became of one probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Held {
    Ok,
    /// Read back as something else (zeros, stale data, another block).
    Lost,
    /// The write or the read failed.
    Error,
}

#[derive(Debug, Clone, Serialize)]
pub struct CapacityResult {
    pub claimed: u64,
    pub genuine: bool,
    /// The bytes shown to hold data, when the card is fake.
    pub usable: Option<u64>,
    /// How far the search narrowed the real size: it lies in
    /// `usable..usable + precision` (0 when an alias gave it exactly).
    pub precision: u64,
    /// The interval the real size was found in, when the card is fake:
    /// at least `lower_bound` bytes (`usable`) and at most `upper_bound`
    /// (`usable + precision`); the two are equal when it is exact.
    pub lower_bound: Option<u64>,
    pub upper_bound: Option<u64>,
    /// Wrap-around: blocks read back at an alias of where they were written.
    pub wraps: bool,
    /// The probes that failed beyond the real size, by how.
    pub lost_kind: Option<Held>,
    /// Probes lost after the flush had all read back fine at once: a cache
    /// hid the fraud from an immediate read-back.
    pub cache_hid: bool,
    /// The flush saw the write cache fill (its speed fell) and beat it.
    pub cache_beaten: bool,
    /// Bytes of flush after which its speed fell (the write cache was
    /// full), when it did.
    pub cache_filled_at: Option<u64>,
    /// The speed fell but the flush reached its bound before writing as
    /// much again: the bound is below what the measured cache needs.
    pub flush_short: bool,
    pub flush_written: u64,
    /// The flush bound asked for (`--flush`, or the default) when it was
    /// shortened to `flush_bound`, the flush that beats a cache as large as
    /// the whole card: no cache of this card can need more.
    #[serde(default)]
    pub flush_asked: Option<u64>,
    #[serde(default)]
    pub flush_bound: u64,
    pub confidence: Confidence,
    pub probes: usize,
    pub rounds: u32,
    pub bad: Vec<BadProbe>,
    pub bad_at_once: usize,
    /// The last 512-byte sector shown to hold data (f3fix's `--last-sec`),
    /// when the card is fake: the one below the lower bound of the real
    /// size, so a partition that ends there holds only good sectors.
    #[serde(default)]
    pub last_good_sector: Option<u64>,
    /// The flush's write speed and the zone's read-back speed, MB/s, as
    /// H2testw states beside its verdict (`None`: nothing timed).
    #[serde(default)]
    pub write_mb_s: Option<f64>,
    #[serde(default)]
    pub read_mb_s: Option<f64>,
}

/// Bytes a fake card holds as its last good 512-byte sector: the sector
/// just below `usable` (`None` below one sector).
pub fn last_good_sector(usable: u64) -> Option<u64> {
    (usable / 512).checked_sub(1)
}

/// Everything the reads found, accumulated over the rounds.
#[derive(Debug, Default)]
pub struct Evidence {
    /// Probe address and what became of it, every round.
    pub probes: Vec<(u64, Held)>,
    pub bad: Vec<BadProbe>,
    /// Distances from an address to where the block read there was written.
    pub distances: Vec<u64>,
    /// The first place in the zone that lost its data, and the unit read
    /// there (a sector, or a block where a whole read failed).
    pub zone_first_lost: Option<(u64, u64)>,
    /// Data held in the zone above a place that lost it: no clean cut.
    pub zone_ragged: bool,
    pub flush_written: u64,
    pub cache_beaten: bool,
    pub cache_filled_at: Option<u64>,
    pub bad_at_once: usize,
    /// The first round's probes that did not hold after the flush.
    pub bad_after_flush: usize,
    pub rounds: u32,
    /// The first flush's bytes and time, and the zone's read-back: the
    /// speeds beside the verdict.
    pub flush_ns: u64,
    pub read_bytes: u64,
    pub read_ns: u64,
}

impl Evidence {
    /// A unit of the zone at `offset` read back wrong.
    pub fn zone_lost(&mut self, offset: u64, unit: u64) {
        if self.zone_first_lost.is_none_or(|(o, _)| offset < o) {
            self.zone_first_lost = Some((offset, unit));
        }
    }

    /// A sector of the zone at `offset` held its data.
    pub fn zone_held(&mut self, offset: u64) {
        if self.zone_first_lost.is_some_and(|(o, _)| offset > o) {
            self.zone_ragged = true;
        }
    }
}

/// The flush that beats a cache seen full after `fell_at` bytes: as much
/// again and [`FLUSH_LATE`], in case the fall was seen a few pieces late.
pub fn flush_needed(fell_at: u64) -> u64 {
    fell_at.saturating_mul(2).saturating_add(FLUSH_LATE)
}

/// Whether the flush, timed piece by piece (`ns` of each, in order), has
/// seen the write cache fill: at least [`FLUSH_MIN_PIECES`] pieces, and the
/// last [`FLUSH_FALL_RUN`] each slower than the burst by [`FLUSH_FALL`].
pub fn flush_fell(ns: &[u64]) -> bool {
    let burst = median_ns(&ns[..ns.len().min(FLUSH_BURST_PIECES)]);
    let (num, den) = FLUSH_FALL;
    ns.len() >= FLUSH_MIN_PIECES
        && ns[ns.len() - FLUSH_FALL_RUN..]
            .iter()
            .all(|t| *t * num > burst * den)
}

/// Whether the pieces written since the fall was seen (`ns[from..]`) stayed
/// slow, by their median: a cache that filled keeps the card at its
/// sustained speed, while a stall of the host (a loaded machine, a
/// descheduled FUSE daemon) passes and the speed comes back. A fall that
/// did not last is no proof the cache is full.
pub fn fall_lasted(ns: &[u64], from: usize) -> bool {
    let burst = median_ns(&ns[..ns.len().min(FLUSH_BURST_PIECES)]);
    let (num, den) = FLUSH_FALL;
    let since = &ns[from.min(ns.len())..];
    !since.is_empty() && median_ns(since) * num > burst * den
}

fn median_ns(v: &[u64]) -> u64 {
    let mut s = v.to_vec();
    s.sort_unstable();
    s.get(s.len() / 2).copied().unwrap_or(1)
}

/// The bracket of the real size from the probes so far: the highest probe
/// that held below the lowest that did not.
pub fn bracket(ev: &Evidence, floor: u64) -> Option<(u64, u64)> {
    let first_bad = ev
        .probes
        .iter()
        .filter(|p| p.1 != Held::Ok)
        .map(|p| p.0)
        .min()?;
    let good = ev
        .probes
        .iter()
        .filter(|p| p.1 == Held::Ok && p.0 < first_bad)
        .map(|p| p.0)
        .max()
        .unwrap_or(floor);
    Some((good, first_bad))
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Where the real size lies, `(at least, bytes more at most)`, and
/// whether that interval rests on a clean cut (nothing held above a loss).
fn interval(plan: &Layout, ev: &Evidence, wrap: u64) -> Option<(u64, u64, bool)> {
    let floor = plan.zone_end;
    let bracket = bracket(ev, floor);
    let held_above_zone = bracket.is_some_and(|(good, _)| good > floor);
    match (wrap, ev.zone_first_lost, bracket) {
        (w, _, _) if w > 0 => Some((w, 0, true)),
        // A clean cut inside the zone, no probe held above it: every
        // sector below the cut held, the one at it did not.
        (_, Some((at, unit)), _) if !ev.zone_ragged && !held_above_zone => {
            Some((at, unit - SECTOR, true))
        }
        // Data lost in the zone with no clean cut or no alias to say why:
        // the real size lies anywhere from the zone's start up to the
        // first probe lost.
        (_, Some(_), b) => {
            let top = b.map_or(plan.zone_end, |(_, bad)| bad + BLOCK - SECTOR);
            Some((plan.zone_offset, top - plan.zone_offset, false))
        }
        (_, None, Some((good, bad))) => {
            let proven = if good == floor { floor } else { good + BLOCK };
            Some((proven, bad + BLOCK - SECTOR - proven, true))
        }
        (_, None, None) => None,
    }
}

const SECTOR: u64 = 512;

/// The verdict: the real size from the aliases (their distances' common
/// divisor), else from a clean cut in the zone, else from the bracket of
/// the probes, and how sure it is.
pub fn decide(plan: &Layout, ev: Evidence) -> CapacityResult {
    let wrap = ev.distances.iter().fold(0, |g, d| gcd(g, *d));
    let found = interval(plan, &ev, wrap);
    let (usable, precision) = found.map_or((None, 0), |(u, p, _)| (Some(u), p));
    let clean = found.is_some_and(|f| f.2);
    let bracket = bracket(&ev, plan.zone_end);
    let genuine = usable.is_none();
    let lost_kind = bracket
        .and_then(|(_, bad)| ev.probes.iter().find(|p| p.0 == bad).map(|p| p.1))
        .or_else(|| ev.zone_first_lost.map(|_| Held::Lost));
    let monotone = bracket.is_none_or(|(good, bad)| {
        ev.probes.iter().all(|p| {
            (p.0 <= good && p.1 == Held::Ok)
                || (p.0 >= bad && p.1 != Held::Ok)
                || (p.0 > good && p.0 < bad)
        })
    });
    let flush_short = ev.cache_filled_at.is_some() && !ev.cache_beaten;
    let confidence = match (genuine, wrap > 0) {
        (false, true) => Confidence::High,
        // A cache seen to fill but not beaten may still hold probes; so may
        // one the flush never saw fill (larger than it), whose copies
        // drain with time rather than by size (issue 37: an eio fake with
        // a 43 GiB cache that keeps each write 1.7 s showed the probes
        // just read back as held, 2.3 GB above its real size, at high).
        (false, false) if monotone && clean && ev.cache_beaten => Confidence::High,
        (false, false) => Confidence::Medium,
        (true, _) if ev.cache_beaten => Confidence::High,
        (true, _) => Confidence::Low,
    };
    let first_probes = plan.first_probes;
    CapacityResult {
        claimed: plan.claimed,
        genuine,
        usable,
        precision,
        lower_bound: usable,
        upper_bound: usable.map(|u| u + precision),
        wraps: wrap > 0,
        lost_kind,
        // On a wrapping card the flush itself lands on aliases of probes:
        // what it erased says nothing of a cache.
        cache_hid: wrap == 0 && ev.bad_after_flush > 0 && ev.bad_at_once == 0,
        cache_beaten: ev.cache_beaten,
        cache_filled_at: ev.cache_filled_at,
        flush_short,
        flush_written: ev.flush_written,
        flush_asked: (plan.flush_asked > plan.flush_bound).then_some(plan.flush_asked),
        flush_bound: plan.flush_bound,
        confidence,
        probes: first_probes.max(ev.probes.len()),
        rounds: ev.rounds,
        bad: ev.bad.into_iter().take(MAX_BAD_LISTED).collect(),
        bad_at_once: ev.bad_at_once,
        last_good_sector: usable.and_then(last_good_sector),
        write_mb_s: speed(ev.flush_written, ev.flush_ns),
        read_mb_s: speed(ev.read_bytes, ev.read_ns),
    }
}

/// MB/s of `bytes` in `ns`, when anything was timed.
fn speed(bytes: u64, ns: u64) -> Option<f64> {
    (bytes > 0 && ns > 0).then(|| crate::units::mb_per_s(bytes, ns))
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_fall_that_passes_is_not_a_full_cache() {
        // Burst 1 ms a MiB, then four slow pieces (a stall), then fast again.
        let mut ns = vec![1_000_000u64; 12];
        ns.extend([5_000_000; 4]);
        assert!(flush_fell(&ns));
        ns.extend([1_000_000; 16]);
        assert!(!fall_lasted(&ns, 12), "the speed came back");
        // A real fill: slow from the fall on.
        let mut full = vec![1_000_000u64; 12];
        full.extend([5_000_000; 20]);
        assert!(fall_lasted(&full, 12));
    }

    use super::*;

    fn layout() -> Layout {
        Layout {
            claimed: 64 << 30,
            zone_offset: MIB,
            zone_end: 9 * MIB,
            first_probes: 3,
            flush_asked: 1 << 30,
            flush_bound: 1 << 30,
        }
    }

    #[test]
    fn aliases_give_the_real_size_exactly() {
        let ev = Evidence {
            distances: vec![8 << 30, 16 << 30],
            ..Evidence::default()
        };
        let r = decide(&layout(), ev);
        assert_eq!((r.usable, r.precision, r.wraps), (Some(8 << 30), 0, true));
        assert_eq!((r.genuine, r.confidence), (false, Confidence::High));
    }

    #[test]
    fn probes_bracket_the_real_size() {
        let ev = Evidence {
            probes: vec![
                (1 << 30, Held::Ok),
                (2 << 30, Held::Lost),
                (3 << 30, Held::Lost),
            ],
            ..Evidence::default()
        };
        assert_eq!(bracket(&ev, 9 * MIB), Some((1 << 30, 2 << 30)));
        let r = decide(&layout(), ev);
        assert_eq!(r.usable, Some((1 << 30) + BLOCK));
        assert_eq!(r.lost_kind, Some(Held::Lost));
        let genuine = decide(&layout(), Evidence::default());
        assert_eq!(
            (genuine.genuine, genuine.confidence),
            (true, Confidence::Low)
        );
    }

    #[test]
    fn the_flush_sees_a_lasting_fall_only() {
        let mut ns = vec![1000u64; 12];
        assert!(!flush_fell(&ns));
        ns.extend([2000; 4]);
        assert!(flush_fell(&ns));
        ns.push(1000);
        assert!(!flush_fell(&ns));
        assert_eq!(flush_needed(100 * MIB), 204 * MIB);
    }
}
