//! Where a long write slows down: the bytes written before a fast cache
//! (SLC cache, DRAM buffer, host memory) filled or the device throttled, the
//! speeds before and after, located to the request; and, when nothing
//! dropped, whether the speed held or changed in some other way (a slow
//! start, a rise), so that "held" is never said of a write whose own
//! stretches differ.
//!
//! **Data.** The completion time of every write request, in order, all of
//! one size (a sequential write at queue depth 1). The duration of request
//! `i` is the gap since the previous completion (`t[i] - t[i-1]`, the first
//! from the start), so the durations add up to the whole write and any host
//! time between requests is charged to the request that followed it. The
//! completion times are themselves the running sums of the durations, so
//! the sum over any stretch costs O(1) and no copy is made.
//!
//! **Segments.** The durations are cut into stretches of one mean by binary
//! segmentation (A. J. Scott and M. Knott, "A cluster analysis method for
//! grouping means in the analysis of variance", Biometrics 30, 1974;
//! L. Vostrikova, "Detecting disorder in multidimensional random
//! processes", Soviet Math. Dokl. 24, 1981), best split first: a stretch is
//! cut where the least-squares step fit (Hinkley, Biometrika 57, 1970)
//! lowers its residual sum of squares most, while that gain exceeds a
//! Schwarz-type penalty of [`PENALTY_PER_LN_N`]` · σ̂² · ln n` per change
//! (Yao, "Estimating the number of change-points via Schwarz' criterion",
//! Stat. Prob. Letters 6, 1988, with a stricter constant because real
//! durations have heavier tails than Gaussian noise). σ̂ is the median
//! absolute difference of successive durations over `√2 · 0.6745`, which
//! level changes and isolated stalls hardly move (the estimate of
//! Fryzlewicz's wild binary segmentation, Ann. Statist. 42, 2014), floored
//! at [`NOISE_FLOOR`] of the median duration so that a noise-free series is
//! not cut at every rounding. Neighbours whose speeds differ by less than
//! [`SAME_LEVEL`] are then joined: they are one level to a reader.
//!
//! **The drop.** A boundary is a drop when the stretch after it, and
//! everything after it together, run below [`DROP_RATIO`] of the stretch
//! before it, and so do most of the requests after it one by one (their
//! lower median): a fall that lasts, not a few stalls. Of those, the one whose
//! two-part split of the write from the start of the fast stretch on gains
//! most is kept, and that suffix is fitted again with a single step (the
//! same fit, so a slow start before the fast stretch, such as a FAT area
//! that every write to it keeps busy, no longer hides the drop after it).
//!
//! **Uncertainty.** A likelihood support set on that suffix: for Gaussian
//! noise of variance σ², the log-likelihood of split `k` is `-RSS(k)/2σ²`,
//! so the splits whose RSS exceeds the best by at most `2·ln 32·σ̂²` are
//! those at least 1/32 as likely as the best: Royall's "1/32 support
//! interval" (R. Royall, *Statistical Evidence: A Likelihood Paradigm*,
//! 1997, §1.12; the same likelihood-ratio set as D. Siegmund, "Confidence
//! sets in change-point problems", Int. Stat. Review 56, 1988, with its
//! threshold fixed instead of calibrated). σ̂² is the residual variance of
//! the best fit, `RSS/(n - 2)`. It is a statement of relative support, not
//! a coverage probability. The set is then widened by one request on each
//! side, because a cache fills *during* a request: that request is slower
//! than the fast ones and faster than the slow ones, and the fit puts it on
//! whichever side it is nearer, so the first wholly slow request may be the
//! one after the first slow one.
//!
//! **Speeds.** Before and after are the bytes of the requests on each side
//! over their summed durations (throughput, not a mean of rates); before
//! counts from the start of the fast stretch, and a slow start ahead of it
//! is reported on its own.

use crate::result::EndedBy;
use crate::result::apps::SpeedDrop;
use crate::result::apps::SpeedLevel;
use crate::result::apps::SustainReport;
use crate::result::config::{SustainPlan, SustainSettings};
use crate::result::measured::SustainRun;
use crate::units::mb_per_s;
use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::ops::Range;

/// A drop is reported when the later speed is below this share of the
/// earlier one.
pub const DROP_RATIO: f64 = 0.7;
/// Fewest requests on each side of a split.
pub const MIN_SEGMENT: usize = 2;
/// Splits whose residual sum of squares exceeds the best by at most this
/// many residual variances are kept as plausible: `2·ln 32`, Royall's 1/32
/// likelihood support set.
pub const SUPPORT_RSS: f64 = 6.931_471_805_599_453;
/// Penalty of one more change point, in noise variances per `ln n`
/// (Schwarz's criterion charges 2; durations with stalls need more).
pub const PENALTY_PER_LN_N: f64 = 3.0;
/// The least noise assumed, as a share of the median duration: a simulated
/// card's durations differ only by rounding.
pub const NOISE_FLOOR: f64 = 0.005;
/// Neighbouring stretches whose speeds differ by less than this share are
/// one level.
pub const SAME_LEVEL: f64 = 0.1;
/// Most stretches the segmentation makes (the largest gains come first, so
/// the cap only drops the smallest changes, such as single stalls).
pub const MAX_SEGMENTS: usize = 64;
/// A stretch slower than both neighbours and shorter than this share of
/// the requests is a stall (a garbage collection, a FAT update), folded
/// into a neighbour when the levels are described.
pub const STALL_SHARE: f64 = 0.01;
/// Most successive differences the noise estimate looks at (evenly spread).
const NOISE_SAMPLE: usize = 1 << 17;

/// The best drop in a write of `request_bytes` requests, if there is one.
/// `completions_ns[i]` is when request `i` completed, ns since the start.
pub fn find_drop(completions_ns: &[u64], request_bytes: u64) -> Option<SpeedDrop> {
    analyse(completions_ns, request_bytes).0
}

/// The drop, if any, and the levels of the write.
pub fn analyse(completions_ns: &[u64], request_bytes: u64) -> (Option<SpeedDrop>, Vec<SpeedLevel>) {
    if request_bytes == 0 || completions_ns.is_empty() {
        return (None, Vec::new());
    }
    let series = Series::of(completions_ns);
    let segments = join_same_levels(&series, segment(&series));
    let drop =
        choose_drop(&series, &segments).and_then(|(a, b)| locate(&series, a, b, request_bytes));
    let levels = levels_of(&series, &segments)
        .into_iter()
        .map(|r| series.level(r, request_bytes))
        .collect();
    (drop, levels)
}

/// Completion times made monotone (a clock that went backwards adds no
/// time), with the sum of the durations of any stretch in O(1).
struct Series<'a> {
    t: Cow<'a, [u64]>,
}

impl<'a> Series<'a> {
    fn of(completions_ns: &'a [u64]) -> Series<'a> {
        let t = match completions_ns.windows(2).all(|w| w[0] <= w[1]) {
            true => Cow::Borrowed(completions_ns),
            false => Cow::Owned(
                completions_ns
                    .iter()
                    .scan(0u64, |high, &t| {
                        *high = (*high).max(t);
                        Some(*high)
                    })
                    .collect(),
            ),
        };
        Series { t }
    }

    fn len(&self) -> usize {
        self.t.len()
    }

    /// When request `i` started: the completion before it, 0 for the first.
    fn start(&self, i: usize) -> u64 {
        match i {
            0 => 0,
            _ => self.t[i - 1],
        }
    }

    /// Summed durations of the requests in `a..b`, ns.
    fn ns(&self, r: Range<usize>) -> u64 {
        self.start(r.end) - self.start(r.start)
    }

    fn duration(&self, i: usize) -> f64 {
        self.ns(i..i + 1) as f64
    }

    /// Mean duration of the requests in `r`, ns.
    fn mean(&self, r: Range<usize>) -> f64 {
        self.ns(r.clone()) as f64 / r.len() as f64
    }

    /// Throughput of the requests in `r`, MB/s.
    fn speed(&self, r: Range<usize>, request_bytes: u64) -> f64 {
        match self.ns(r.clone()) {
            0 => f64::INFINITY,
            ns => r.len() as f64 * request_bytes as f64 * 1e3 / ns as f64,
        }
    }

    fn level(&self, r: Range<usize>, request_bytes: u64) -> SpeedLevel {
        let ns = self.ns(r.clone());
        SpeedLevel {
            first_request: r.start as u64,
            requests: r.len() as u64,
            bytes_before: (r.start as u64).saturating_mul(request_bytes),
            bytes: (r.len() as u64).saturating_mul(request_bytes),
            start_ns: self.start(r.start),
            ns,
            mb_per_s: mb_per_s((r.len() as u64).saturating_mul(request_bytes), ns),
        }
    }

    /// σ̂: the robust noise of the durations (see the module's notes).
    fn noise(&self) -> f64 {
        let n = self.len();
        let stride = (n / NOISE_SAMPLE).max(1);
        let mut steps: Vec<f64> = (1..n)
            .step_by(stride)
            .map(|i| (self.duration(i) - self.duration(i - 1)).abs())
            .collect();
        let mut durations: Vec<f64> = (0..n).step_by(stride).map(|i| self.duration(i)).collect();
        let mad = median(&mut steps) / (std::f64::consts::SQRT_2 * 0.6745);
        mad.max(NOISE_FLOOR * median(&mut durations)).max(1.0)
    }
}

fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mid = values.len() / 2;
    *values.select_nth_unstable_by(mid, f64::total_cmp).1
}

/// The two-part splits of the requests `r`, scored by how much each lowers
/// the residual sum of squares of one mean: `m/(k(m-k)) · (S_k - k·S/m)²`
/// for `k` requests of `m` on the left, whose sums are `S_k` and `S`.
struct Window<'s, 'a> {
    series: &'s Series<'a>,
    r: Range<usize>,
    total: f64,
}

impl<'s, 'a> Window<'s, 'a> {
    fn new(series: &'s Series<'a>, r: Range<usize>) -> Self {
        let total = series.ns(r.clone()) as f64;
        Window { series, r, total }
    }

    fn gain(&self, k: usize) -> f64 {
        let m = self.r.len() as f64;
        let left = (k - self.r.start) as f64;
        let dev = self.series.ns(self.r.start..k) as f64 - left * self.total / m;
        dev * dev * m / (left * (m - left))
    }

    /// `(k, gain)` for every split leaving [`MIN_SEGMENT`] on each side.
    fn splits(&self) -> impl Iterator<Item = (usize, f64)> + '_ {
        let first = self.r.start + MIN_SEGMENT;
        let last = self.r.end.saturating_sub(MIN_SEGMENT);
        (first..=last)
            .filter(move |_| last >= first)
            .map(|k| (k, self.gain(k)))
            .filter(|(_, g)| g.is_finite())
    }

    /// The split with the largest gain; the earliest on ties.
    fn best(&self) -> Option<(usize, f64)> {
        self.splits().fold(None, |best, (k, g)| match best {
            Some((_, bg)) if bg >= g => best,
            _ => Some((k, g)),
        })
    }

    /// First and last split whose gain is within `slack` of the best.
    fn support(&self, best_gain: f64, slack: f64) -> Option<(usize, usize)> {
        self.splits().filter(|(_, g)| best_gain - g <= slack).fold(
            None,
            |range, (k, _)| match range {
                None => Some((k, k)),
                Some((lo, hi)) => Some((lo.min(k), hi.max(k))),
            },
        )
    }

    /// Residual sum of squares of one mean over the window.
    fn rss(&self) -> f64 {
        let mean = self.total / self.r.len() as f64;
        self.r
            .clone()
            .map(|i| (self.series.duration(i) - mean).powi(2))
            .sum()
    }
}

/// A stretch waiting to be split, ordered by the gain of its best split.
struct Pending {
    gain: f64,
    r: Range<usize>,
    at: usize,
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Pending {
    fn cmp(&self, other: &Self) -> Ordering {
        self.gain.total_cmp(&other.gain)
    }
}

/// Stretches of one mean duration, in order: binary segmentation with the
/// largest gain split first, while a split pays its penalty.
fn segment(series: &Series) -> Vec<Range<usize>> {
    let n = series.len();
    let sigma = series.noise();
    let penalty = PENALTY_PER_LN_N * sigma * sigma * (n as f64).ln().max(1.0);
    let mut done = Vec::new();
    let mut pending = BinaryHeap::new();
    let consider =
        |r: Range<usize>, pending: &mut BinaryHeap<Pending>, done: &mut Vec<_>| match Window::new(
            series,
            r.clone(),
        )
        .best()
        {
            Some((at, gain)) if gain > penalty => pending.push(Pending { gain, r, at }),
            _ => done.push(r),
        };
    consider(0..n, &mut pending, &mut done);
    while let Some(p) = pending.pop() {
        if done.len() + pending.len() + 2 > MAX_SEGMENTS {
            done.push(p.r);
            continue;
        }
        consider(p.r.start..p.at, &mut pending, &mut done);
        consider(p.at..p.r.end, &mut pending, &mut done);
    }
    done.sort_by_key(|r| r.start);
    done
}

/// How far apart two stretches' speeds are: `|ln(mean a / mean b)|`.
fn apart(series: &Series, a: Range<usize>, b: Range<usize>) -> f64 {
    let (x, y) = (series.mean(a).max(1e-9), series.mean(b).max(1e-9));
    (x / y).ln().abs()
}

/// Joins the closest neighbours while they are within [`SAME_LEVEL`].
fn join_same_levels(series: &Series, mut segments: Vec<Range<usize>>) -> Vec<Range<usize>> {
    let limit = (1.0 + SAME_LEVEL).ln();
    loop {
        let closest = (1..segments.len())
            .map(|i| {
                (
                    i,
                    apart(series, segments[i - 1].clone(), segments[i].clone()),
                )
            })
            .min_by(|x, y| x.1.total_cmp(&y.1));
        match closest {
            Some((i, d)) if d < limit => {
                let right = segments.remove(i);
                segments[i - 1].end = right.end;
            }
            _ => return segments,
        }
    }
}

/// The levels a reader sees: stalls (stretches shorter than
/// [`STALL_SHARE`] of the requests and slower than both neighbours) are
/// left out when neighbours are compared, so that a steady write with a
/// garbage collection now and then stays one level; the rest are grouped
/// in order while each is within [`SAME_LEVEL`] of its group. A level runs
/// from its first stretch to the next level's, stalls included.
fn levels_of(series: &Series, segments: &[Range<usize>]) -> Vec<Range<usize>> {
    let n = series.len();
    let short = (STALL_SHARE * n as f64).max(MIN_SEGMENT as f64);
    let mean = |i: usize| series.mean(segments[i].clone());
    let stall = |i: usize| {
        segments.len() > 1
            && (segments[i].len() as f64) < short
            && (i == 0 || mean(i) > mean(i - 1))
            && (i + 1 == segments.len() || mean(i) > mean(i + 1))
    };
    let limit = (1.0 + SAME_LEVEL).ln();
    // Each group: its first core's start, and its cores' ns and requests.
    let mut groups: Vec<(usize, u64, usize)> = Vec::new();
    for (i, r) in segments.iter().enumerate().filter(|&(i, _)| !stall(i)) {
        let (ns, count) = (series.ns(r.clone()), r.len());
        let joins = groups.last().is_some_and(|&(_, gns, gcount)| {
            let group = (gns as f64 / gcount as f64).max(1e-9);
            let this = (ns as f64 / count as f64).max(1e-9);
            (group / this).ln().abs() < limit
        });
        match groups.last_mut() {
            Some(g) if joins => {
                g.1 += ns;
                g.2 += count;
            }
            _ => groups.push((if i == 0 { 0 } else { r.start }, ns, count)),
        }
    }
    let mut starts: Vec<usize> = groups.iter().map(|g| g.0).collect();
    match starts.first_mut() {
        Some(first) => *first = 0,
        None => starts.push(0),
    }
    let ends = starts.iter().skip(1).copied().chain([n]);
    starts.iter().zip(ends).map(|(&a, b)| a..b).collect()
}

/// The start of the fast stretch and the boundary of the drop that ends
/// it, if any boundary is a lasting drop. The fast stretch reaches back
/// over every stretch before the boundary that is fast against what comes
/// after it: a short stretch at an in-between speed (the request during
/// which the cache filled, cut out on its own) belongs to it, and a slow
/// start does not.
fn choose_drop(series: &Series, segments: &[Range<usize>]) -> Option<(usize, usize)> {
    let n = series.len();
    (1..segments.len())
        .filter(|&i| {
            let fast = series.mean(segments[i - 1].clone());
            fast < DROP_RATIO * series.mean(segments[i].clone())
                && fast < DROP_RATIO * series.mean(segments[i].start..n)
                && lasts(series, segments[i].start, fast)
        })
        .map(|i| {
            let slow = series.mean(segments[i].clone());
            let first = (0..i)
                .rev()
                .take_while(|&j| series.mean(segments[j].clone()) < DROP_RATIO * slow)
                .last()
                .unwrap_or(i - 1);
            let (a, b) = (segments[first].start, segments[i].start);
            (a, b, Window::new(series, a..n).gain(b))
        })
        .filter(|c| c.2.is_finite())
        .fold(None, |best: Option<(usize, usize, f64)>, c| match best {
            Some(b) if b.2 >= c.2 => best,
            _ => Some(c),
        })
        .map(|(a, b, _)| (a, b))
}

/// Whether most requests from `k` to the end are slow, not only a few
/// stalls among them: their lower median duration is beyond `fast_mean`
/// over [`DROP_RATIO`].
fn lasts(series: &Series, k: usize, fast_mean: f64) -> bool {
    let n = series.len();
    let stride = ((n - k) / NOISE_SAMPLE).max(1);
    let mut after: Vec<f64> = (k..n).step_by(stride).map(|i| series.duration(i)).collect();
    if after.is_empty() {
        return false;
    }
    let lower = (after.len() - 1) / 2;
    let median = *after.select_nth_unstable_by(lower, f64::total_cmp).1;
    fast_mean < DROP_RATIO * median
}

/// The drop in the suffix from `a`, placed by its best single step (or at
/// `b` when that step is not a drop), with its support set.
fn locate(series: &Series, a: usize, b: usize, request_bytes: u64) -> Option<SpeedDrop> {
    let n = series.len();
    let window = Window::new(series, a..n);
    let is_drop = |k: usize| {
        let before = series.speed(a..k, request_bytes);
        let after = series.speed(k..n, request_bytes);
        before.is_finite()
            && before > 0.0
            && after < before * DROP_RATIO
            && lasts(series, k, series.mean(a..k))
    };
    let (k, gain) = match window.best() {
        Some((k, g)) if is_drop(k) => (k, g),
        _ => (b, window.gain(b)),
    };
    if !is_drop(k) {
        return None;
    }
    let residual_variance =
        (window.rss() - gain).max(0.0) / (n - a).saturating_sub(2).max(1) as f64;
    let (low, high) = window
        .support(gain, SUPPORT_RSS * residual_variance)
        .unwrap_or((k, k));
    let (low, high) = (low.min(k), high.max(k));
    let before = series.speed(a..k, request_bytes);
    let after = series.speed(k..n, request_bytes);
    let bytes = |split: usize| (split as u64).saturating_mul(request_bytes);
    Some(SpeedDrop {
        at_interval: 0,
        bytes_before_drop: bytes(k),
        seconds_before_drop: series.start(k) as f64 / 1e9,
        mb_per_s_before: before,
        mb_per_s_after: after,
        ratio: after / before,
        at_request: k as u64,
        requests: n as u64,
        bytes_low: bytes(low.saturating_sub(1)),
        bytes_high: bytes((high + 1).min(n)),
        fast_from_bytes: bytes(a),
        mb_per_s_start: match a {
            0 => 0.0,
            _ => series.speed(0..a, request_bytes),
        },
    })
}

/// The shape of a write without a drop, from its levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One level (or no levels to tell from: a run stored before them).
    Held,
    /// A slower first level over at most a third of the bytes, then one
    /// faster level to the end.
    SlowStart,
    /// Every level faster than the one before.
    Rose,
    /// Levels that fell (by less than a drop) or went up and down.
    Changed,
}

/// The shape of the levels of a write.
pub fn shape(levels: &[SpeedLevel]) -> Shape {
    let rising = levels.windows(2).all(|w| w[1].mb_per_s > w[0].mb_per_s);
    let total: u64 = levels.iter().map(|l| l.bytes).sum();
    match levels {
        [] | [_] => Shape::Held,
        [first, _] if rising && first.bytes.saturating_mul(3) <= total => Shape::SlowStart,
        _ if rising => Shape::Rose,
        _ => Shape::Changed,
    }
}

/// What a sustained write knows when it stops, to say why it stopped.
#[derive(Debug, Clone, Copy)]
pub struct Ending {
    /// A transfer failed.
    pub failed: bool,
    /// Ctrl-C.
    pub interrupted: bool,
    /// Bytes written.
    pub written: u64,
    /// Bytes the plan allowed: `--bytes` bounded by the span, in whole blocks.
    pub planned: u64,
    /// `--bytes` as asked.
    pub asked: u64,
    /// Bytes of the target's region.
    pub span: u64,
    /// Bytes per request.
    pub block: u64,
}

impl Ending {
    /// What the settings asked and the run did, with Ctrl-C's flag.
    pub fn of(
        asked: &SustainSettings,
        plan: &SustainPlan,
        run: &SustainRun,
        interrupted: bool,
    ) -> Ending {
        Ending {
            failed: run.error.is_some(),
            interrupted,
            written: run.bytes,
            planned: plan.bytes,
            asked: asked.bytes,
            span: asked.span,
            block: asked.bs,
        }
    }

    /// Why the write stopped, as the result names it: an error, Ctrl-C, the
    /// planned bytes (`bytes`, or `end of target` when more was asked than
    /// the target holds), or else the time limit.
    pub fn reason(&self) -> EndedBy {
        if self.failed {
            EndedBy::Error
        } else if self.interrupted {
            EndedBy::Interrupted
        } else if self.written >= self.planned
            && self.planned < self.asked.min(self.span) + self.block
        {
            if self.asked > self.span {
                EndedBy::EndOfTarget
            } else {
                EndedBy::Bytes
            }
        } else {
            EndedBy::Time
        }
    }
}

/// The drop in a run's requests, with the interval it fell in (the
/// chart's resolution).
pub fn drop_in(run: &SustainRun, block_size: u32) -> Option<SpeedDrop> {
    analyse_run(run, block_size).0
}

/// The drop (placed in its interval) and the levels of a run.
fn analyse_run(run: &SustainRun, block_size: u32) -> (Option<SpeedDrop>, Vec<SpeedLevel>) {
    let (drop, levels) = analyse(&run.completions_ns, u64::from(block_size));
    let drop = drop.map(|mut drop| {
        drop.at_interval = run
            .intervals
            .iter()
            .position(|i| i.bytes_before + i.bytes > drop.bytes_before_drop)
            .unwrap_or(run.intervals.len().saturating_sub(1));
        drop
    });
    (drop, levels)
}

/// The report of a sustained write: its figures, overall speed, drop and
/// levels.
pub fn report(plan: &SustainPlan, run: SustainRun, ended_by: EndedBy) -> SustainReport {
    let (drop, levels) = analyse_run(&run, plan.block_size);
    SustainReport {
        block_size: plan.block_size,
        interval_ns: plan.interval_ns,
        mark_bytes: plan.mark_bytes,
        bytes: run.bytes,
        elapsed_ns: run.elapsed_ns,
        mb_per_s: mb_per_s(run.bytes, run.elapsed_ns),
        ended_by,
        drop,
        requests_recorded: run.completions_ns.len() as u64,
        intervals: run.intervals,
        marks: run.marks,
        levels,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Completion times of requests of the given durations.
    fn completions(durations: &[u64]) -> Vec<u64> {
        durations
            .iter()
            .scan(0u64, |t, d| {
                *t += d;
                Some(*t)
            })
            .collect()
    }

    /// A deterministic noise factor in `1 ± amplitude` (SplitMix64).
    fn noise(seed: u64, i: u64, amplitude: f64) -> f64 {
        let mut z = seed.wrapping_add(i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        let unit = (z >> 11) as f64 / (1u64 << 53) as f64;
        1.0 + amplitude * (2.0 * unit - 1.0)
    }

    fn step(fast_ns: u64, slow_ns: u64, k: usize, extra: usize) -> Vec<u64> {
        let mut d = vec![fast_ns; k];
        d.extend(vec![slow_ns; extra]);
        d
    }

    #[test]
    fn finds_a_cache_filling_at_its_request_with_the_speeds_of_each_side() {
        // 1 MiB at 2.5 ms (419 MB/s) for 24 requests, then at 200 ms.
        let t = completions(&step(2_500_000, 200_000_000, 24, 10));
        let d = find_drop(&t, 1 << 20).expect("a drop");
        assert_eq!(d.at_request, 24);
        assert_eq!(d.requests, 34);
        assert_eq!(d.bytes_before_drop, 24 << 20);
        assert!((d.mb_per_s_before - (1 << 20) as f64 / 2_500.0).abs() < 1e-6);
        assert!((d.mb_per_s_after - (1 << 20) as f64 / 200_000.0).abs() < 1e-6);
        assert!((d.seconds_before_drop - 0.06).abs() < 1e-9);
        // Noise-free: only the one-request widening remains.
        assert_eq!((d.bytes_low, d.bytes_high), (23 << 20, 25 << 20));
        assert_eq!(d.uncertainty_bytes(), 1 << 20);
    }

    #[test]
    fn a_request_that_is_half_slow_is_inside_the_range_on_either_side() {
        let mut durations = step(1_000, 10_000, 20, 20);
        durations[20] = 2_000; // the cache filled early in request 20
        let d = find_drop(&completions(&durations), 4096).expect("a drop");
        assert_eq!(d.at_request, 21, "the mostly fast request counts as fast");
        assert!(
            d.bytes_low <= 20 * 4096 && 20 * 4096 <= d.bytes_high,
            "{d:?}"
        );
    }

    #[test]
    fn flat_noise_is_no_drop() {
        let durations: Vec<u64> = (0..200).map(|i| (1e6 * noise(7, i, 0.2)) as u64).collect();
        assert_eq!(find_drop(&completions(&durations), 1 << 20), None);
    }

    #[test]
    fn a_rise_is_no_drop() {
        let t = completions(&step(4_000, 1_000, 10, 10));
        assert_eq!(find_drop(&t, 4096), None);
    }

    #[test]
    fn too_few_requests_or_empty_ones_say_nothing() {
        assert_eq!(find_drop(&[], 4096), None);
        assert_eq!(find_drop(&[5], 4096), None);
        assert_eq!(find_drop(&completions(&[1, 10, 10]), 4096), None);
        assert_eq!(find_drop(&completions(&step(1, 10, 5, 5)), 0), None);
    }

    /// The card in request durations (64 KiB writes): 256 writes
    /// in the FAT area at 33.2 ms, 147 into the cache at 1.74 ms, then the
    /// medium's 13.1 ms.
    fn slow_start_then_cache(extra: usize) -> Vec<u64> {
        let mut d = vec![33_207_200; 256];
        d.extend(vec![1_738_400; 147]);
        d.extend(vec![13_107_200; extra]);
        d
    }

    #[test]
    fn a_drop_behind_a_slow_start_is_found_where_the_cache_fills() {
        let t = completions(&slow_start_then_cache(7789));
        let (d, levels) = analyse(&t, 64 << 10);
        let d = d.expect("the drop after the FAT area");
        assert_eq!(d.at_request, 403, "{d:?}");
        assert_eq!(d.fast_from_bytes, 256 << 16);
        assert!((d.mb_per_s_before - 37.7).abs() < 0.1, "{d:?}");
        assert!((d.mb_per_s_start - 1.97).abs() < 0.01, "{d:?}");
        assert!(
            d.bytes_low <= 403 << 16 && 403 << 16 <= d.bytes_high,
            "{d:?}"
        );
        assert_eq!(levels.len(), 3, "{levels:?}");
        assert_eq!(shape(&levels), Shape::Changed);
    }

    #[test]
    fn a_slow_start_then_steady_is_no_drop_and_not_held() {
        let mut durations = vec![33_207_200; 256];
        durations.extend(vec![13_107_200; 7936]);
        let (d, levels) = analyse(&completions(&durations), 64 << 10);
        assert_eq!(d, None);
        assert_eq!(levels.len(), 2, "{levels:?}");
        assert_eq!((levels[1].first_request, levels[1].requests), (256, 7936));
        assert_eq!(shape(&levels), Shape::SlowStart);
    }

    #[test]
    fn fat_spikes_in_the_slow_start_neither_hide_the_drop_nor_make_one() {
        // Every 8th FAT write busy for 400 ms instead of 20 ms.
        let mut durations = slow_start_then_cache(2000);
        for i in (7..256).step_by(8) {
            durations[i] = 413_107_200;
        }
        let d = find_drop(&completions(&durations), 64 << 10).expect("a drop");
        assert!(d.at_request.abs_diff(403) <= 1, "{d:?}");
        // Without a cache: spikes, then steady; nothing dropped.
        let steady: Vec<u64> = durations[..256]
            .iter()
            .copied()
            .chain(std::iter::repeat_n(13_107_200, 4000))
            .collect();
        assert_eq!(find_drop(&completions(&steady), 64 << 10), None);
    }

    #[test]
    fn stalls_in_a_steady_write_leave_it_held() {
        // 1 ms writes with a 50 ms garbage collection every 500.
        let durations: Vec<u64> = (0..20_000u64)
            .map(|i| match i % 500 {
                499 => 50_000_000,
                _ => (1e6 * noise(3, i, 0.05)) as u64,
            })
            .collect();
        let (d, levels) = analyse(&completions(&durations), 1 << 20);
        assert_eq!(d, None);
        assert_eq!(shape(&levels), Shape::Held, "{levels:?}");
    }

    #[test]
    fn a_single_level_is_held_and_a_rise_rose() {
        let flat: Vec<u64> = (0..1000).map(|i| (1e6 * noise(9, i, 0.1)) as u64).collect();
        let (_, levels) = analyse(&completions(&flat), 4096);
        assert_eq!(shape(&levels), Shape::Held, "{levels:?}");
        let (_, levels) = analyse(&completions(&step(4_000, 1_000, 500, 500)), 4096);
        assert_eq!(shape(&levels), Shape::Rose, "{levels:?}");
    }

    proptest! {
        #[test]
        fn a_step_after_any_prefix_is_found_at_its_request(
            prefix in 0usize..300, slow_start in 1.0f64..5.0, k in 4usize..300,
            extra in 2usize..300, fast in 1_000u64..10_000_000, slowdown in 1.5f64..50.0,
        ) {
            let slow = (fast as f64 * slowdown).ceil() as u64;
            // The prefix is never faster than the slow tail (a FAT area).
            let mut durations = vec![(slow as f64 * slow_start).ceil() as u64; prefix];
            durations.extend(step(fast, slow, k, extra));
            let d = find_drop(&completions(&durations), 4096).expect("a drop");
            prop_assert_eq!(d.at_request, (prefix + k) as u64);
            // A one-request start is below the fewest a stretch holds, so
            // the fast stretch may be found to begin one request late.
            prop_assert!(d.fast_from_bytes.abs_diff(prefix as u64 * 4096) <= 4096, "{:?}", d);
        }

        #[test]
        fn a_noise_free_step_is_found_at_its_request(
            k in 2usize..300, extra in 2usize..300,
            fast in 1_000u64..10_000_000, slowdown in 1.5f64..50.0,
            bytes in 512u64..(64 << 20),
        ) {
            let slow = (fast as f64 * slowdown).ceil() as u64;
            let d = find_drop(&completions(&step(fast, slow, k, extra)), bytes)
                .expect("a drop");
            prop_assert_eq!(d.at_request, k as u64);
            prop_assert_eq!(d.bytes_before_drop, k as u64 * bytes);
            prop_assert!(d.bytes_low < d.bytes_before_drop && d.bytes_before_drop < d.bytes_high);
            prop_assert!((d.ratio - fast as f64 / slow as f64).abs() < 1e-9);
        }

        #[test]
        fn a_noisy_step_lies_within_the_stated_range(
            k in 2usize..300, extra in 2usize..300, seed in any::<u64>(),
            fast in 1_000u64..10_000_000, slowdown in 2.0f64..50.0, amplitude in 0.0f64..0.3,
        ) {
            let durations: Vec<u64> = step(fast, (fast as f64 * slowdown) as u64, k, extra)
                .iter()
                .enumerate()
                .map(|(i, &d)| (d as f64 * noise(seed, i as u64, amplitude)) as u64)
                .collect();
            let d = find_drop(&completions(&durations), 4096).expect("a drop");
            let truth = k as u64 * 4096;
            prop_assert!(d.bytes_low <= truth && truth <= d.bytes_high, "{:?}", d);
        }

        #[test]
        fn a_flat_series_has_no_drop(
            n in 0usize..500, seed in any::<u64>(), level in 1u64..1_000_000_000,
            amplitude in 0.0f64..0.15,
        ) {
            let durations: Vec<u64> = (0..n as u64)
                .map(|i| (level as f64 * noise(seed, i, amplitude)).max(1.0) as u64)
                .collect();
            let (d, levels) = analyse(&completions(&durations), 1 << 20);
            prop_assert_eq!(d, None);
            prop_assert!(levels.len() <= 1 || amplitude > 0.0, "{:?}", levels);
        }

        #[test]
        fn any_input_is_answered_without_panic(
            times in proptest::collection::vec(any::<u64>(), 0..64), bytes in any::<u64>(),
        ) {
            if let Some(d) = find_drop(&times, bytes) {
                prop_assert!(d.bytes_low <= d.bytes_high);
                prop_assert!(d.at_request < d.requests);
            }
        }
    }

    fn ending() -> Ending {
        Ending {
            failed: false,
            interrupted: false,
            written: 1 << 30,
            planned: 1 << 30,
            asked: 1 << 30,
            span: 8 << 30,
            block: 1 << 20,
        }
    }

    #[test]
    fn a_write_says_why_it_stopped() {
        assert_eq!(ending().reason(), EndedBy::Bytes);
        let cut = Ending {
            written: 1 << 29,
            ..ending()
        };
        assert_eq!(cut.reason(), EndedBy::Time);
        let past_the_end = Ending {
            asked: 16 << 30,
            planned: 8 << 30,
            written: 8 << 30,
            ..ending()
        };
        assert_eq!(past_the_end.reason(), EndedBy::EndOfTarget);
        assert_eq!(
            Ending {
                interrupted: true,
                ..ending()
            }
            .reason(),
            EndedBy::Interrupted
        );
        let both = Ending {
            failed: true,
            interrupted: true,
            ..ending()
        };
        assert_eq!(both.reason(), EndedBy::Error);
    }

    #[test]
    fn the_report_carries_the_run_and_its_speed() {
        let plan = SustainPlan {
            block_size: 1 << 20,
            offset: 0,
            bytes: 4 << 20,
            time_ns: None,
            interval_ns: 1_000_000_000,
            mark_bytes: 1 << 30,
        };
        let run = SustainRun {
            intervals: Vec::new(),
            marks: Vec::new(),
            completions_ns: vec![250_000_000, 500_000_000, 750_000_000, 1_000_000_000],
            bytes: 4 << 20,
            elapsed_ns: 1_000_000_000,
            error: None,
        };
        let r = report(&plan, run, EndedBy::Bytes);
        assert_eq!(
            (r.bytes, r.block_size, r.requests_recorded),
            (4 << 20, 1 << 20, 4)
        );
        assert_eq!((r.mark_bytes, r.interval_ns), (1 << 30, 1_000_000_000));
        assert_eq!(r.ended_by, EndedBy::Bytes);
        assert!((r.mb_per_s - 4.194_304).abs() < 1e-9);
        assert!(r.drop.is_none());
    }
}
