//! The figures `flash class` measures, and the reductions the measuring
//! layer applies to its samples: Pw and the write cache, T_FW, random
//! IOPS in windows, P(Nu). Kept apart from the verdicts so that each file
//! holds one thing: what was measured here, how it is held against the
//! SD Association's limits in the parent.

use crate::result::flash::{AuFrom, Confidence, Exhaustion};
use serde::Serialize;

/// A stall that comes every P FAT writes is ruled out only by a run that
/// would have held this many of them: with one, the run could begin just
/// after a stall and end just before the next.
pub const FAT_PERIODS_SEEN: u32 = 3;

/// The SD Association's window of consecutive FAT writes whose mean T_FW
/// is held against [`SD_FAT_MEAN_MS`].
pub const FAT_WINDOW: usize = 8;

/// A fall of this much below the fastest AU means a cache was in front:
/// the SD Association measures Pw after such a cache is exhausted, and a
/// tenth is well above the AU-to-AU wobble of a medium written steadily.
pub const FALL: f64 = 0.10;

/// Two windows of random writes agree when their rates differ by less
/// than this share of their mean, or by less than this many standard
/// errors of the difference, whichever is more.
pub const IOPS_AGREE_SE: f64 = 3.0;

/// A P(Nu) point this share of Pw or slower shows a move cost (SDHC's move
/// performance Pm); above it the curve is flat, as on SDXC-like cards.
pub const MOVE_VISIBLE: f64 = 0.95;

/// AUs in a row within this much of their mean are steady: Pw is then the
/// speed after the cache (the SD Association's Pw is an average over free
/// AUs; 3 % is the spread such an average holds still at).
pub const STEADY: f64 = 0.03;

/// The second half of a steady window may be slower than its first by at
/// most [`STEADY`] divided by this: a speed still drifting down is not
/// yet the speed after the cache.
pub const STEADY_TREND_PARTS: f64 = 3.0;

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
    /// The longest a single AU write took beyond both its neighbours, ms:
    /// a pause of the card (garbage collection, throttling) that any
    /// write, a FAT-area one too, may meet.
    pub stall_ms: f64,
    /// Pw at the slowest of the places spread over the rest of the card
    /// (the better of two AUs at each), MB/s: a card whose speed falls
    /// toward its end meets a class only where it is slowest. `None`:
    /// the card had no room beyond the region written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowest_place_mb_s: Option<f64>,
}

impl PwFigures {
    /// The Pw a class is checked against: the steady mean, or the
    /// slowest place on the card when that is lower.
    pub fn checked_mb_s(&self) -> f64 {
        self.slowest_place_mb_s
            .map_or(self.mean_mb_s, |s| s.min(self.mean_mb_s))
    }

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
    /// The worst mean of 8 were the stalls seen to come as close together
    /// throughout as the closest two did, ms: stalls at jittered periods
    /// pack closer, sooner or later, than one run shows.
    pub clustered_mean8_ms: f64,
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

/// The AU a class test worked in, where it came from and how sure it is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AuCap {
    pub au_bytes: u64,
    pub from: AuFrom,
    /// The most a figure measured in its recording units may say.
    pub confidence: Confidence,
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
    /// How sure the AU the figures were measured in is, when it was not
    /// given: one found by timing, or stated by the kernel and checked
    /// against timing. Pw and Pr are no surer than it.
    pub au_cap: Option<AuCap>,
    pub pw: PwFigures,
    /// Pr: mean speed of 256 random RU reads, MB/s, and the slowest.
    pub pr_mb_s: f64,
    pub pr_min_mb_s: f64,
    pub fat: FatLatency,
    /// The FAT-area writes timed right after the sequential ones, before
    /// the random and P(Nu) writes: behind a cache that queues the
    /// medium's work, the later ones may pay for those writes' work.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fat_first: Option<FatLatency>,
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
        clustered_mean8_ms: clustered_mean8(ms, &sorted),
    }
}

/// [`FatLatency::clustered_mean8_ms`]: a stall is a write over twice the
/// median and a millisecond above it; with the closest two `gap` writes
/// apart, a window of [`FAT_WINDOW`] holds up to ⌈window / gap⌉ of them,
/// the largest seen, the rest at the median.
fn clustered_mean8(ms: &[f64], sorted: &[f64]) -> f64 {
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or(0.0);
    let stalls: Vec<usize> = (0..ms.len())
        .filter(|&i| ms[i] > 2.0 * median && ms[i] > median + 1.0)
        .collect();
    let seen = worst_mean8(ms);
    let Some(gap) = stalls.windows(2).map(|w| w[1] - w[0]).min() else {
        return seen;
    };
    let window = FAT_WINDOW.min(ms.len()).max(1);
    let k = window.div_ceil(gap.max(1)).min(stalls.len()).min(window);
    let mut largest: Vec<f64> = stalls.iter().map(|&i| ms[i]).collect();
    largest.sort_by(|a, b| b.total_cmp(a));
    let packed = largest[..k].iter().sum::<f64>() + (window - k) as f64 * median;
    (packed / window as f64).max(seen)
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
