//! SD speed-class verdicts: the class limits of the SD Association and how
//! measured figures are held against them.
//!
//! The limits are those of the SD Association's Physical Layer Simplified
//! Specification, Part 1 ("Speed Class", "UHS Speed Class", "Video Speed
//! Class" and "Application Performance Class"); how the figures are
//! measured (Pw after the cache, Pr, T_FW, P(Nu), random IOPS) is the
//! `flash class` measuring layer's. Each requirement is PASS, FAIL or LINK with a
//! [`Confidence`] from the margin between the value and its limit relative
//! to the measurement's spread. No I/O here.

use super::{HIGH_RATIO, MEDIUM_RATIO};
use crate::result::flash::Confidence;
use crate::result::flash::Status;
use crate::result::flash::{Exhaustion, NeedKind, Reason};
use serde::Serialize;

/// Speed Class: Pw and Pr of at least the class number in MB/s, and the
/// FAT-update latency limits below (SD Physical Layer Specification,
/// "Speed Class" of Class 2, 4, 6 and 10).
pub const SD_SPEED_CLASSES: [(&str, f64); 4] =
    [("C2", 2.0), ("C4", 4.0), ("C6", 6.0), ("C10", 10.0)];

/// UHS Speed Class (U1, U3) and Video Speed Class (V6 to V90): Pw and Pr
/// of at least the class speed in MB/s, and [`UHS_FAT_MAX_MS`] (SD Physical
/// Layer Specification, "UHS Speed Class" and "Video Speed Class").
pub const UHS_VIDEO_SPEED_CLASSES: [(&str, f64); 7] = [
    ("U1", 10.0),
    ("V10", 10.0),
    ("V6", 6.0),
    ("U3", 30.0),
    ("V30", 30.0),
    ("V60", 60.0),
    ("V90", 90.0),
];

/// T_FW for Class 2 to 10: the worst mean of [`FAT_WINDOW`] consecutive
/// FAT writes is at most 100 ms (SD Physical Layer Specification, "Speed
/// Class": FAT update time).
pub const SD_FAT_MEAN_MS: f64 = 100.0;

/// T_FW for Class 2 to 10: no single FAT write over 750 ms (same section).
pub const SD_FAT_MAX_MS: f64 = 750.0;

/// T_FW for the UHS and Video classes: no single FAT write over 250 ms
/// (SD Physical Layer Specification, "UHS Speed Class").
pub const UHS_FAT_MAX_MS: f64 = 250.0;

/// The SD Association's window of consecutive FAT writes whose mean T_FW
/// is held against [`SD_FAT_MEAN_MS`].
pub const FAT_WINDOW: usize = 8;

/// Application Performance Class 1: 1,500 random 4 KiB reads and 500
/// writes per second (SD Physical Layer Specification, "Application
/// Performance Class").
pub const A1_READ_IOPS: f64 = 1500.0;
pub const A1_WRITE_IOPS: f64 = 500.0;

/// Application Performance Class 2: 4,000 reads and 2,000 writes per
/// second (same section).
pub const A2_READ_IOPS: f64 = 4000.0;
pub const A2_WRITE_IOPS: f64 = 2000.0;

/// Both application classes also ask a sustained sequential write of
/// 10 MB/s (Class 10's speed; same section).
pub const APP_SUSTAINED_MB_S: f64 = 10.0;

/// A fall of this much below the fastest AU means a cache was in front:
/// the SD Association measures Pw after such a cache is exhausted, and a
/// tenth is well above the AU-to-AU wobble of a medium written steadily.
pub const FALL: f64 = 0.10;

/// AUs in a row within this much of their mean are steady: Pw is then the
/// speed after the cache (the SD Association's Pw is an average over free
/// AUs; 3 % is the spread such an average holds still at).
pub const STEADY: f64 = 0.03;

/// The second half of a steady window may be slower than its first by at
/// most [`STEADY`] divided by this: a speed still drifting down is not
/// yet the speed after the cache.
pub const STEADY_TREND_PARTS: f64 = 3.0;

/// The largest write cache (SLC region) a card may carry, as a share of
/// its capacity: a dynamic SLC cache on MLC or TLC flash takes what is
/// free, a third to a half of the free space and more on some controllers,
/// and the free space of an empty card is all of it. Only a cache that is
/// seen to fill (a fall, then a steady speed) is ruled out.
pub const CACHE_SHARE_MAX: f64 = 1.0;

/// Bytes of writes after which no fall in speed rules out every cache
/// that could hide a speed below the limit, on a card of `card_bytes`
/// measured at `room` times the limit: such a cache takes writes at
/// `room` times its drain speed or more, so one of C bytes fills within
/// C·room/(room − 1) bytes, and C is at most [`CACHE_SHARE_MAX`] of the
/// card. Bursts barely above the drain speed fill slowly: a PASS close to
/// its limit needs many times the cache written (`u64::MAX` at or below
/// the limit).
pub fn largest_cache_fill(card_bytes: u64, room: f64) -> u64 {
    if room <= 1.0 {
        return u64::MAX;
    }
    let fill = card_bytes as f64 * CACHE_SHARE_MAX * room / (room - 1.0);
    fill.min(u64::MAX as f64) as u64
}

/// The most the cache-exhausting writes cover; on a smaller card they go
/// over it twice. 16 GiB rule out a cache as large as a card of up to
/// 8 GiB for a PASS at twice its limit; otherwise a speed that did not
/// fall within them is a PASS at most low ([`largest_cache_fill`]). The
/// measuring layer plans its writes with it.
pub const PW_CAP: u64 = 16 << 30;

/// A P(Nu) point this share of Pw or slower shows a move cost (SDHC's move
/// performance Pm); above it the curve is flat, as on SDXC-like cards.
pub const MOVE_VISIBLE: f64 = 0.95;

/// A PASS or FAIL this far from its limit (relative) is high-confidence,
/// whatever the spread: a tenth is beyond a rerun's difference on cards.
pub const HIGH_MARGIN: f64 = 0.10;

/// A PASS or FAIL this far from its limit is medium-confidence.
pub const MEDIUM_MARGIN: f64 = 0.03;

/// A stall that comes every P FAT writes is ruled out only by a run that
/// would have held this many of them: with one, the run could begin just
/// after a stall and end just before the next.
pub const FAT_PERIODS_SEEN: u32 = 3;

/// The rarest FAT-area stall (a merge of the card's FAT log block) a T_FW
/// PASS at high must rule out, in FAT writes: a card that logs its FAT
/// updates in a block of 1 MiB merges it once every 256 writes of 4 KiB,
/// and the cards of the survey that show merges show them at most that
/// rarely. Rarer stalls are "not ruled out" and the PASS is low.
pub const FIELD_FAT_PERIOD_MAX: u32 = 256;

/// Random 4 KiB writes are timed in windows of this many; the figure is
/// taken once two windows in a row agree (steady state, the cache's slack
/// used up), at most [`IOPS_WINDOWS_MAX`] windows.
pub const IOPS_WINDOW: u32 = 500;

/// The most windows of random writes before the figure is given as not
/// steady (16 MiB of writes, the method's region four times over).
pub const IOPS_WINDOWS_MAX: usize = 8;

/// Two windows of random writes agree when their rates differ by less
/// than this share of their mean, or by less than this many standard
/// errors of the difference, whichever is more.
pub const IOPS_AGREE_SE: f64 = 3.0;

/// Pr is a mean of many reads: its spread is the slowest read's distance
/// from the mean divided by this.
pub const PR_SPREAD_DIVISOR: f64 = 4.0;

/// A rate at this share of the link's ceiling or more ran at the link's
/// speed: the host, not the card, may have set it.
pub const AT_LINK: f64 = 0.9;

/// Random 4 KiB requests at this share of the link's bandwidth ceiling (its
/// MB/s over 4 KiB) or more may have run at the link's speed: each request
/// also carries its command and response across the link, which a stream
/// pays once, so the link's own ceiling for them lies below the bandwidth's.
pub const AT_LINK_IOPS: f64 = 0.5;

/// The transfer of one random request (A1/A2), bytes.
pub const SMALL_BYTES: f64 = 4096.0;

/// What a class asks for, with its limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Need {
    /// Pw, MB/s.
    SeqWrite(
        /// Least Pw, MB/s.
        f64,
    ),
    /// Pr, MB/s (Pr ≥ Pw ≥ the class speed).
    RuRead(
        /// Least Pr, MB/s.
        f64,
    ),
    /// T_FW, worst mean of 8 FAT writes, ms (at most).
    FatMean(
        /// Most T_FW mean of 8, ms.
        f64,
    ),
    /// T_FW, largest single FAT write, ms (at most).
    FatMax(
        /// Most T_FW single write, ms.
        f64,
    ),
    RandomReadIops(
        /// Least random 4 KiB reads per second (IOPS).
        f64,
    ),
    RandomWriteIops(
        /// Least random 4 KiB writes per second (IOPS).
        f64,
    ),
    /// Sustained sequential write, MB/s.
    Sustained(
        /// Least sustained write, MB/s.
        f64,
    ),
}

impl Need {
    /// The limit, and whether the measured value must be at least (true)
    /// or at most (false) it.
    pub fn limit(self) -> (f64, bool) {
        match self {
            Need::SeqWrite(v)
            | Need::RuRead(v)
            | Need::RandomReadIops(v)
            | Need::RandomWriteIops(v)
            | Need::Sustained(v) => (v, true),
            Need::FatMean(v) | Need::FatMax(v) => (v, false),
        }
    }

    /// What is measured, as the result names it.
    pub fn kind(self) -> NeedKind {
        match self {
            Need::SeqWrite(_) => NeedKind::SeqWrite,
            Need::RuRead(_) => NeedKind::RuRead,
            Need::FatMean(_) => NeedKind::FatMean,
            Need::FatMax(_) => NeedKind::FatMax,
            Need::RandomReadIops(_) => NeedKind::RandomReadIops,
            Need::RandomWriteIops(_) => NeedKind::RandomWriteIops,
            Need::Sustained(_) => NeedKind::Sustained,
        }
    }

    /// Whether the figure is a transfer rate, which a slow link can cap.
    pub fn is_rate(self) -> bool {
        matches!(
            self,
            Need::SeqWrite(_) | Need::RuRead(_) | Need::Sustained(_)
        )
    }

    /// Whether a write cache can inflate the figure.
    pub fn after_cache(self) -> bool {
        matches!(
            self,
            Need::SeqWrite(_) | Need::Sustained(_) | Need::RandomWriteIops(_)
        )
    }
}

/// The requirements of a class label (`C10`, `U3`, `V30`, `A1`, ...).
pub fn requirements(class: &str) -> Option<Vec<Need>> {
    let c = class
        .trim()
        .to_ascii_uppercase()
        .replace("CLASS", "C")
        .replace(' ', "");
    let speed = |mb| vec![Need::SeqWrite(mb), Need::RuRead(mb)];
    let speed_of = |table: &[(&str, f64)]| {
        let found = table.iter().find(|(name, _)| *name == c.as_str());
        found.map(|(_, mb)| *mb)
    };
    if let Some(mb) = speed_of(&SD_SPEED_CLASSES) {
        let mut v = speed(mb);
        v.extend([Need::FatMean(SD_FAT_MEAN_MS), Need::FatMax(SD_FAT_MAX_MS)]);
        return Some(v);
    }
    if let Some(mb) = speed_of(&UHS_VIDEO_SPEED_CLASSES) {
        let mut v = speed(mb);
        v.push(Need::FatMax(UHS_FAT_MAX_MS));
        return Some(v);
    }
    match c.as_str() {
        "A1" => Some(app(A1_READ_IOPS, A1_WRITE_IOPS)),
        "A2" => Some(app(A2_READ_IOPS, A2_WRITE_IOPS)),
        _ => None,
    }
}

fn app(read: f64, write: f64) -> Vec<Need> {
    vec![
        Need::RandomReadIops(read),
        Need::RandomWriteIops(write),
        Need::Sustained(APP_SUSTAINED_MB_S),
    ]
}

/// Every class the command knows, in order.
pub const CLASSES: [&str; 12] = [
    "C2", "C4", "C6", "C10", "U1", "U3", "V6", "V10", "V30", "V60", "V90", "A1",
];

/// The cache-exhausting writes and Pw.
#[derive(Debug, Clone, Serialize)]
pub struct PwFigures {
    /// Speed of the first AU, MB/s (the burst speed when there is a cache).
    pub burst_mb_s: f64,
    /// Mean and slowest of the AUs measured, MB/s.
    pub mean_mb_s: f64,
    pub min_mb_s: f64,
    /// AUs Pw is averaged over (the last steady ones).
    pub aus: u64,
    /// Bytes written whole AU by whole AU.
    pub written: u64,
    /// Bytes written when the speed first fell, if it did.
    pub fell_after: Option<u64>,
    pub exhaustion: Exhaustion,
    /// (bytes written, MB/s of the AU ending there), at most 64 of them.
    pub samples: Vec<(u64, f64)>,
}

impl PwFigures {
    /// (mean − min) / mean: how far the measured AUs spread.
    pub fn spread(&self) -> f64 {
        match self.mean_mb_s > 0.0 {
            true => (self.mean_mb_s - self.min_mb_s) / self.mean_mb_s,
            false => 1.0,
        }
    }
}

/// T_FW: FAT-area write latency.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct FatLatency {
    pub writes: u32,
    /// Worst mean of 8 consecutive writes, ms.
    pub worst_mean8_ms: f64,
    pub max_ms: f64,
    pub median_ms: f64,
    /// How far each figure moves between the quarters of the run: (largest
    /// − smallest) / largest of the quarters' worst means and maxima.
    pub mean8_spread: f64,
    pub max_spread: f64,
}

impl FatLatency {
    /// The longest period of stalls this run rules out, in writes.
    pub fn ruled_out_every(&self) -> u32 {
        self.writes / FAT_PERIODS_SEEN
    }
}

/// Random 4 KiB transfers timed in one window.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct IopsWindow {
    pub ops: u32,
    /// Sum of the transfers' times and of their squares, ns and ns².
    pub ns: f64,
    pub ns_squared: f64,
}

impl IopsWindow {
    pub fn add(&mut self, ns: u64) {
        let t = ns as f64;
        self.ops += 1;
        self.ns += t;
        self.ns_squared += t * t;
    }

    pub fn iops(&self) -> f64 {
        f64::from(self.ops) * 1e9 / self.ns.max(1.0)
    }

    /// The standard error of [`IopsWindow::iops`], from the spread of the
    /// transfers' times (the rate's error follows the mean time's).
    pub fn iops_error(&self) -> f64 {
        let n = f64::from(self.ops.max(2));
        let mean = self.ns / n;
        let var = (self.ns_squared / n - mean * mean).max(0.0) * n / (n - 1.0);
        let mean_error = (var / n).sqrt();
        self.iops() * mean_error / mean.max(1.0)
    }
}

/// Whether two windows agree ([`STEADY`] or [`IOPS_AGREE_SE`] errors).
pub fn windows_agree(a: &IopsWindow, b: &IopsWindow) -> bool {
    let (x, y) = (a.iops(), b.iops());
    let error = a.iops_error().hypot(b.iops_error());
    (x - y).abs() <= (STEADY * (x + y) / 2.0).max(IOPS_AGREE_SE * error)
}

/// Random 4 KiB transfers: the windows timed, the figure and its spread.
#[derive(Debug, Clone, Default, Serialize)]
pub struct IopsFigures {
    pub windows: Vec<IopsWindow>,
    /// The last two windows agreed (always true for reads, timed in one
    /// go over a cache-free path).
    pub steady: bool,
}

impl IopsFigures {
    /// The rate: over the last two windows (one when only one was timed).
    pub fn iops(&self) -> f64 {
        let tail = &self.windows[self.windows.len().saturating_sub(2)..];
        let ops: u32 = tail.iter().map(|w| w.ops).sum();
        let ns: f64 = tail.iter().map(|w| w.ns).sum();
        f64::from(ops) * 1e9 / ns.max(1.0)
    }

    /// Relative spread: the windows' standard error, or how far the last
    /// two differ, whichever is more.
    pub fn spread(&self) -> f64 {
        let iops = self.iops();
        if iops <= 0.0 {
            return 1.0;
        }
        let tail = &self.windows[self.windows.len().saturating_sub(2)..];
        let error = tail.iter().map(|w| w.iops_error()).fold(0.0, f64::max);
        let apart = match tail {
            [a, b] => (a.iops() - b.iops()).abs() / 2.0,
            _ => 0.0,
        };
        error.max(apart) / iops
    }
}

/// One point of the P(Nu) curve.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct PnuPoint {
    /// Nu / Nt.
    pub used_share: f64,
    pub used_rus: u64,
    pub mb_s: f64,
}

/// What was measured.
#[derive(Debug, Clone, Serialize)]
pub struct ClassFigures {
    pub ru: u64,
    /// Bytes of the device: the largest cache it may carry follows.
    pub card_bytes: u64,
    /// The AU the figures were measured with, when it was assumed (none
    /// given, reported or found): Pw and Pr in its recording units are
    /// then the card's for that AU only.
    pub au_assumed: Option<u64>,
    pub pw: PwFigures,
    /// Pr: mean speed of 256 random RU reads, MB/s, and the slowest.
    pub pr_mb_s: f64,
    pub pr_min_mb_s: f64,
    pub fat: FatLatency,
    /// P(Nu), empty when not measured.
    pub pnu: Vec<PnuPoint>,
    /// The move speed the curve implies, MB/s; `None` when flat (no move
    /// cost seen) or not measured.
    pub pm_mb_s: Option<f64>,
    pub random_reads: IopsFigures,
    pub random_writes: IopsFigures,
}

/// Whether an AU at `speed` has fallen below the fastest so far, `peak`,
/// by [`FALL`].
pub fn fell_from(speed: f64, peak: f64) -> bool {
    speed < (1.0 - FALL) * peak
}

/// The last `window` speeds are within [`STEADY`] of their mean, and their
/// second half is not slower than their first.
pub fn steady(speeds: &[f64], window: usize) -> bool {
    if speeds.len() < 2 * window {
        return false;
    }
    let tail = &speeds[speeds.len() - window..];
    let mean = tail.iter().sum::<f64>() / window as f64;
    let within = tail.iter().all(|s| (s - mean).abs() <= STEADY * mean);
    let half = |s: &[f64]| s.iter().sum::<f64>() / s.len().max(1) as f64;
    let (first, second) = tail.split_at(window / 2);
    within && half(second) >= (1.0 - STEADY / STEADY_TREND_PARTS) * half(first)
}

/// The worst sliding mean of [`FAT_WINDOW`], the largest and the median of
/// latencies, and how far the first two move between the run's quarters.
pub fn fat_figures(ms: &[f64]) -> FatLatency {
    let mut sorted = ms.to_vec();
    sorted.sort_by(f64::total_cmp);
    let quarters: Vec<&[f64]> = ms.chunks(ms.len().div_ceil(4).max(1)).collect();
    let moved = |figure: fn(&[f64]) -> f64| {
        let each: Vec<f64> = quarters.iter().map(|q| figure(q)).collect();
        let top = each.iter().copied().fold(0.0, f64::max);
        let bottom = each.iter().copied().fold(f64::INFINITY, f64::min);
        match top > 0.0 {
            true => (top - bottom) / top,
            false => 0.0,
        }
    };
    FatLatency {
        writes: ms.len() as u32,
        worst_mean8_ms: worst_mean8(ms),
        max_ms: sorted.last().copied().unwrap_or(0.0),
        median_ms: sorted.get(sorted.len() / 2).copied().unwrap_or(0.0),
        mean8_spread: moved(worst_mean8),
        max_spread: moved(|q| q.iter().copied().fold(0.0, f64::max)),
    }
}

/// The worst sliding mean of [`FAT_WINDOW`] latencies.
fn worst_mean8(ms: &[f64]) -> f64 {
    ms.windows(FAT_WINDOW.min(ms.len()).max(1))
        .map(|w| w.iter().sum::<f64>() / w.len() as f64)
        .fold(0.0, f64::max)
}

/// The move speed implied by the curve: each point's time beyond writing
/// its free RUs at Pw is the move of its used RUs; `None` when no point is
/// below [`MOVE_VISIBLE`] of Pw. `au` and `ru` are the AU and recording
/// unit the curve was measured with, bytes.
pub fn move_speed(points: &[PnuPoint], pw: f64, au: u64, ru: u64) -> Option<f64> {
    let nt = (au / ru.max(1)) as f64;
    let slow = points.iter().any(|p| p.mb_s < MOVE_VISIBLE * pw);
    if !slow || pw <= 0.0 {
        return None;
    }
    let ru = ru as f64 / 1e6;
    let estimates: Vec<f64> = points
        .iter()
        .filter_map(|p| {
            let nu = p.used_rus as f64;
            let free = (nt - nu) * ru;
            let extra = free / p.mb_s - free / pw;
            (extra > 0.0).then(|| nu * ru / extra)
        })
        .collect();
    (!estimates.is_empty()).then(|| estimates.iter().sum::<f64>() / estimates.len() as f64)
}

/// One requirement's verdict.
#[derive(Debug, Clone)]
pub struct Check {
    pub class: String,
    pub need: Need,
    pub measured: f64,
    pub limit: f64,
    pub status: Status,
    pub confidence: Confidence,
    /// Why the confidence is capped, when it is.
    pub reason: Option<Reason>,
}

/// The figure a need is checked against.
fn measured(need: Need, f: &ClassFigures) -> f64 {
    match need {
        Need::SeqWrite(_) | Need::Sustained(_) => f.pw.mean_mb_s,
        Need::RuRead(_) => f.pr_mb_s,
        Need::FatMean(_) => f.fat.worst_mean8_ms,
        Need::FatMax(_) => f.fat.max_ms,
        Need::RandomReadIops(_) => f.random_reads.iops(),
        Need::RandomWriteIops(_) => f.random_writes.iops(),
    }
}

/// The relative spread of the figure a need is checked against.
fn spread(need: Need, f: &ClassFigures) -> f64 {
    match need {
        Need::SeqWrite(_) | Need::Sustained(_) => f.pw.spread(),
        Need::RuRead(_) => match f.pr_mb_s > 0.0 {
            true => ((f.pr_mb_s - f.pr_min_mb_s) / f.pr_mb_s).max(0.0) / PR_SPREAD_DIVISOR,
            false => 1.0,
        },
        // A rerun can land the stalls elsewhere: how far the figure moved
        // between the run's quarters.
        Need::FatMean(_) => f.fat.mean8_spread,
        Need::FatMax(_) => f.fat.max_spread,
        Need::RandomReadIops(_) => f.random_reads.spread(),
        Need::RandomWriteIops(_) => f.random_writes.spread(),
    }
}

/// The ceiling a link of `link_mb_s` puts on what `need` measures, in the
/// need's own unit, and the share of it at which a figure may be the
/// link's; `None` for a latency, which a link lengthens by a transfer only.
fn link_ceiling(need: Need, link_mb_s: f64) -> Option<(f64, f64)> {
    match need {
        Need::SeqWrite(_) | Need::RuRead(_) | Need::Sustained(_) => Some((link_mb_s, AT_LINK)),
        Need::RandomReadIops(_) | Need::RandomWriteIops(_) => {
            Some((link_mb_s * 1e6 / SMALL_BYTES, AT_LINK_IOPS))
        }
        Need::FatMean(_) | Need::FatMax(_) => None,
    }
}

/// The link's reason, when the link is below the limit and the figure ran
/// at it.
fn link_caps(need: Need, value: f64, limit: f64, link_mb_s: Option<f64>) -> Option<Reason> {
    let l = link_mb_s?;
    let (ceiling, share) = link_ceiling(need, l)?;
    if ceiling >= limit || value < share * ceiling {
        return None;
    }
    Some(match need.is_rate() {
        true => Reason::LinkCaps {
            link_mb_per_s: l,
            limit,
        },
        false => Reason::LinkCapsIops {
            link_mb_per_s: l,
            ceiling_iops: ceiling,
            limit,
        },
    })
}

/// What the measurement could not have seen, for a PASS: stalls rarer
/// than the FAT writes rule out, or random writes not yet steady.
fn unseen(need: Need, f: &ClassFigures) -> Option<Reason> {
    match need {
        Need::FatMean(_) | Need::FatMax(_) if f.fat.ruled_out_every() < FIELD_FAT_PERIOD_MAX => {
            Some(Reason::RareStallsNotRuledOut {
                writes: u64::from(f.fat.writes),
                ruled_out_every: u64::from(f.fat.ruled_out_every()),
            })
        }
        Need::RandomWriteIops(_) if !f.random_writes.steady => Some(Reason::NotSteady {
            windows: f.random_writes.windows.len() as u64,
        }),
        _ => None,
    }
}

/// From the margin between a value and its limit, relative to the limit,
/// and the measurement's spread: at least [`HIGH_MARGIN`] and
/// [`HIGH_RATIO`] spreads clear is high, [`MEDIUM_MARGIN`] and
/// [`MEDIUM_RATIO`] spreads medium.
pub fn margin_confidence(measured: f64, limit: f64, spread: f64) -> Confidence {
    let margin = ((measured - limit) / limit.max(f64::MIN_POSITIVE)).abs();
    if margin >= (HIGH_RATIO * spread).max(HIGH_MARGIN) {
        Confidence::High
    } else if margin >= (MEDIUM_RATIO * spread).max(MEDIUM_MARGIN) {
        Confidence::Medium
    } else {
        Confidence::Low
    }
}

/// Checks the figures against each class's requirements; `link_mb_s` is
/// the link's practical ceiling when known.
pub fn judge(classes: &[String], f: &ClassFigures, link_mb_s: Option<f64>) -> Vec<Check> {
    let mut checks = Vec::new();
    for class in classes {
        for need in requirements(class).unwrap_or_default() {
            checks.push(check(class, need, f, link_mb_s));
        }
    }
    checks
}

fn check(class: &str, need: Need, f: &ClassFigures, link_mb_s: Option<f64>) -> Check {
    let value = measured(need, f);
    let (limit, at_least) = need.limit();
    let met = match at_least {
        true => value >= limit,
        false => value <= limit,
    };
    let link = link_caps(need, value, limit, link_mb_s);
    let (status, mut confidence) = match (met, &link) {
        (true, _) => (
            Status::Pass,
            margin_confidence(value, limit, spread(need, f)),
        ),
        // The card ran at the link's speed: what it does beyond the link
        // is not seen, so whether it meets the limit cannot be told.
        (false, Some(_)) => (Status::Link, Confidence::Low),
        (false, None) => (
            Status::Fail,
            margin_confidence(value, limit, spread(need, f)),
        ),
    };
    let mut reason = link;
    // A stall rarer than the run, or slack not yet used up, could turn a
    // PASS over; a FAIL rests on what was seen.
    if let Some(why) = unseen(need, f).filter(|_| status == Status::Pass) {
        confidence = Confidence::Low;
        reason = Some(why);
    }
    // A figure measured in the recording units of an assumed AU is the
    // card's for that AU only: another AU (the card's) can turn it over.
    if let Some(au) = f.au_assumed.filter(|_| need.is_rate()) {
        if confidence > Confidence::Low {
            confidence = Confidence::Low;
            reason = Some(Reason::AssumedAu {
                ru_bytes: f.ru,
                au_bytes: au,
            });
        }
    }
    // A write cache only makes a card look faster: a FAIL stands, a PASS
    // or LINK measured before the cache was exhausted does not.
    if need.after_cache() && status != Status::Fail {
        // Behind a link slower than the burst, a cache fills only at the
        // link's speed less the drain: no fall within the cap says little.
        let at_link = link_mb_s.is_some_and(|l| f.pw.mean_mb_s >= AT_LINK * l);
        // No fall within the writes rules out a cache only when they
        // would have filled the largest one this card's capacity allows
        // that could hide a speed below the limit.
        let covered = f.pw.written >= largest_cache_fill(f.card_bytes, value / limit);
        let cap = match f.pw.exhaustion {
            Exhaustion::Exhausted => Confidence::High,
            Exhaustion::NoFall if covered && !at_link => Confidence::Medium,
            _ => Confidence::Low,
        };
        if cap < confidence {
            confidence = cap;
            let (written_bytes, card_bytes) = (f.pw.written, f.card_bytes);
            let largest_cache_bytes = (f.card_bytes as f64 * CACHE_SHARE_MAX) as u64;
            reason = Some(match f.pw.exhaustion {
                Exhaustion::NoFall if covered && !at_link => Reason::NoFallCovered {
                    written_bytes,
                    largest_cache_bytes,
                    card_bytes,
                },
                Exhaustion::NoFall => Reason::NoFallOpen {
                    written_bytes,
                    largest_cache_bytes,
                    card_bytes,
                },
                _ => Reason::NotExhausted { written_bytes },
            });
        }
    }
    Check {
        class: class.to_string(),
        need,
        measured: value,
        limit,
        status,
        confidence,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_labels_give_the_sd_associations_limits() {
        use Need::*;
        let limits: [(&str, &[Need]); 3] = [
            (
                "class 10",
                &[SeqWrite(10.0), RuRead(10.0), FatMean(100.0), FatMax(750.0)],
            ),
            ("V30", &[SeqWrite(30.0), RuRead(30.0), FatMax(250.0)]),
            (
                "a2",
                &[
                    RandomReadIops(4000.0),
                    RandomWriteIops(2000.0),
                    Sustained(10.0),
                ],
            ),
        ];
        for (class, needs) in limits {
            assert_eq!(requirements(class).unwrap(), needs, "{class}");
        }
        assert!(requirements("C3").is_none());
        assert!(CLASSES.iter().all(|c| requirements(c).is_some()));
    }

    #[test]
    fn fat_figures_take_the_worst_mean_of_8() {
        let mut ms = vec![10.0; 20];
        ms[5] = 90.0;
        let f = fat_figures(&ms);
        assert_eq!(f.writes, 20);
        assert!((f.worst_mean8_ms - 20.0).abs() < 1e-9);
        assert_eq!((f.max_ms, f.median_ms), (90.0, 10.0));
    }

    #[test]
    fn the_population_draws_fat_stalls_as_rare_as_the_field_and_no_rarer() {
        assert_eq!(
            crate::engine::population::FAT_PERIOD_MAX,
            FIELD_FAT_PERIOD_MAX
        );
    }

    #[test]
    fn t_fw_spreads_come_from_the_quarters_of_the_run() {
        // A stall in one quarter only: the max moves by all of it between
        // quarters, so a PASS on it cannot be sure.
        let mut ms = vec![2.0; 768];
        ms[700] = 500.0;
        let f = fat_figures(&ms);
        assert!((f.max_spread - (500.0 - 2.0) / 500.0).abs() < 1e-9, "{f:?}");
        // A stall every 100 writes lands in every quarter: no movement.
        let mut ms = vec![2.0; 768];
        for i in (99..768).step_by(100) {
            ms[i] = 500.0;
        }
        let f = fat_figures(&ms);
        assert_eq!((f.max_spread, f.mean8_spread), (0.0, 0.0), "{f:?}");
        assert_eq!(f.ruled_out_every(), 256);
    }

    #[test]
    fn iops_windows_agree_within_their_noise_and_not_beyond() {
        let window = |ns: u64, jitter: u64| {
            let mut w = IopsWindow::default();
            for i in 0..500 {
                w.add(ns + (i % 2) * jitter);
            }
            w
        };
        assert!(windows_agree(&window(1000, 0), &window(1020, 0)));
        assert!(!windows_agree(&window(1000, 0), &window(1150, 0)));
        // Noisy windows agree further apart.
        assert!(windows_agree(&window(1000, 3000), &window(1150, 3000)));
        let f = IopsFigures {
            windows: vec![window(800, 0), window(1000, 0), window(1010, 0)],
            steady: true,
        };
        assert!((f.iops() - 1e9 / 1005.0).abs() < 1.0, "{}", f.iops());
        assert!(f.spread() > 0.0 && f.spread() < 0.01, "{}", f.spread());
    }

    proptest::proptest! {
        #[test]
        fn fat_and_iops_figures_are_finite_and_bounded_on_any_times(
            ms in proptest::collection::vec(0.0f64..1e7, 0..2000),
            times in proptest::collection::vec(proptest::collection::vec(0u64..u64::from(u32::MAX), 0..600), 0..9),
        ) {
            let f = fat_figures(&ms);
            proptest::prop_assert!(f.worst_mean8_ms <= f.max_ms + 1e-9);
            for spread in [f.mean8_spread, f.max_spread] {
                proptest::prop_assert!((0.0..=1.0).contains(&spread), "{f:?}");
            }
            let windows: Vec<IopsWindow> = times
                .iter()
                .map(|ts| {
                    let mut w = IopsWindow::default();
                    ts.iter().for_each(|t| w.add(*t));
                    w
                })
                .collect();
            let figures = IopsFigures { windows, steady: false };
            proptest::prop_assert!(figures.iops().is_finite() && figures.iops() >= 0.0);
            proptest::prop_assert!(figures.spread().is_finite() && figures.spread() >= 0.0);
            if let [a, b, ..] = figures.windows.as_slice() {
                let _ = windows_agree(a, b);
            }
        }
    }

    #[test]
    fn a_value_near_its_limit_is_low_confidence() {
        assert_eq!(margin_confidence(10.1, 10.0, 0.0), Confidence::Low);
        assert_eq!(margin_confidence(10.5, 10.0, 0.0), Confidence::Medium);
        assert_eq!(margin_confidence(12.0, 10.0, 0.0), Confidence::High);
        assert_eq!(margin_confidence(12.0, 10.0, 0.1), Confidence::Medium);
        assert_eq!(margin_confidence(8.0, 10.0, 0.0), Confidence::High);
    }
}
