//! The search itself: the write cut into stretches of one speed, joined
//! into the levels a reader sees, and the drop among their boundaries
//! placed by its best single step with its support set (see [`super`]).

use super::own_length::{Standing, drop_standing, field_periods, separate_levels, separation};
use super::rules::{
    CONFIDENT_REQUESTS, DROP_RATIO, MAX_SEGMENTS, MIN_SEGMENT, NOISE_SAMPLE, PENALTY_PER_LN_N,
    SAME_LEVEL, SPREAD_SAMPLES, STALL_SHARE, SUPPORT_RSS,
};
use super::series::{Series, Window};
use crate::result::apps::SpeedDrop;
use crate::result::flash::Confidence;
use crate::stats::Spread;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::ops::Range;

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
pub fn segment(series: &Series) -> Vec<Range<usize>> {
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
pub fn join_same_levels(series: &Series, mut segments: Vec<Range<usize>>) -> Vec<Range<usize>> {
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

/// Joins neighbours that are not separate at their own length (see
/// [`separate_levels`]), the most overlapping pair first: a short stretch
/// that a periodic cost or noise repeats elsewhere in its neighbour is no
/// level of its own.
pub fn join_inseparable(series: &Series, mut segments: Vec<Range<usize>>) -> Vec<Range<usize>> {
    let margin = |s: &[Range<usize>], i: usize| separation(series, s[i - 1].clone(), s[i].clone());
    let mut margins: Vec<f64> = (1..segments.len()).map(|i| margin(&segments, i)).collect();
    loop {
        let closest = margins
            .iter()
            .enumerate()
            .min_by(|x, y| x.1.total_cmp(y.1))
            .map(|(i, &m)| (i + 1, m));
        match closest {
            Some((i, _))
                if !separate_levels(series, segments[i - 1].clone(), segments[i].clone()) =>
            {
                let right = segments.remove(i);
                segments[i - 1].end = right.end;
                margins.remove(i - 1);
                if i >= 2 {
                    margins[i - 2] = margin(&segments, i - 1);
                }
                if i < segments.len() {
                    margins[i - 1] = margin(&segments, i);
                }
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
pub fn levels_of(series: &Series, segments: &[Range<usize>]) -> Vec<Range<usize>> {
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
pub fn choose_drop(series: &Series, segments: &[Range<usize>]) -> Option<(usize, usize)> {
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
            (segments[first].start, segments[i].start)
        })
        .filter(|&(a, b)| drop_standing(series, a, b).stands_out)
        .map(|(a, b)| (a, b, Window::new(series, a..n).gain(b)))
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
pub fn locate(series: &Series, a: usize, b: usize, request_bytes: u64) -> Option<SpeedDrop> {
    let n = series.len();
    let window = Window::new(series, a..n);
    let is_drop = |k: usize| {
        let before = series.speed(a..k, request_bytes);
        let after = series.speed(k..n, request_bytes);
        before.is_finite()
            && before > 0.0
            && after < before * DROP_RATIO
            && lasts(series, k, series.mean(a..k))
            && drop_standing(series, a, k).stands_out
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
        before_spread: speed_spread(series, a..k, request_bytes),
        after_spread: speed_spread(series, k..n, request_bytes),
        confidence: Some(confidence(
            drop_standing(series, a, k),
            (k - a).min(n - k),
            request_bytes,
        )),
    })
}

/// The spread of a side's speed over its own stretches: `r` cut into up
/// to [`SPREAD_SAMPLES`] stretches of (nearly) equal length, each its
/// bytes over its time.
fn speed_spread(series: &Series, r: Range<usize>, request_bytes: u64) -> Option<Spread> {
    let pieces = r.len().min(SPREAD_SAMPLES);
    let edge = |j: usize| r.start + j * r.len() / pieces.max(1);
    let speeds: Vec<f64> = (0..pieces)
        .map(|j| series.speed(edge(j)..edge(j + 1), request_bytes))
        .filter(|s| s.is_finite())
        .collect();
    Spread::of(&speeds)
}

/// How sure a drop is, capped by what the write could have shown: low when
/// its own-length test had no room for the longest period a page-tied cost
/// could have at this request size, medium when it had room for that but
/// not for an AU-tied one or a side is shorter than [`CONFIDENT_REQUESTS`],
/// high otherwise.
fn confidence(standing: Standing, shorter_side: usize, request_bytes: u64) -> Confidence {
    let (page_period, au_period) = field_periods(request_bytes);
    let seen = standing.shifts as u64;
    if seen < page_period {
        Confidence::Low
    } else if seen < au_period || shorter_side < CONFIDENT_REQUESTS {
        Confidence::Medium
    } else {
        Confidence::High
    }
}
