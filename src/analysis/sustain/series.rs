//! The completion times of a sustained write as durations (the sum of any
//! stretch in O(1)), and the two-part splits of a stretch scored by how
//! much each lowers its residual sum of squares (see [`super`]).

use super::rules::{MIN_SEGMENT, NOISE_FLOOR, NOISE_SAMPLE};
use crate::result::apps::SpeedLevel;
use crate::stats::median;
use crate::units::mb_per_s;
use std::borrow::Cow;
use std::ops::Range;

/// Completion times made monotone (a clock that went backwards adds no
/// time), with the sum of the durations of any stretch in O(1).
pub struct Series<'a> {
    t: Cow<'a, [u64]>,
}

impl<'a> Series<'a> {
    pub fn of(completions_ns: &'a [u64]) -> Series<'a> {
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

    pub fn len(&self) -> usize {
        self.t.len()
    }

    /// When request `i` started: the completion before it, 0 for the first.
    pub fn start(&self, i: usize) -> u64 {
        match i {
            0 => 0,
            _ => self.t[i - 1],
        }
    }

    /// Summed durations of the requests in `a..b`, ns.
    pub fn ns(&self, r: Range<usize>) -> u64 {
        self.start(r.end) - self.start(r.start)
    }

    pub fn duration(&self, i: usize) -> f64 {
        self.ns(i..i + 1) as f64
    }

    /// Mean duration of the requests in `r`, ns.
    pub fn mean(&self, r: Range<usize>) -> f64 {
        self.ns(r.clone()) as f64 / r.len() as f64
    }

    /// Throughput of the requests in `r`, MB/s.
    pub fn speed(&self, r: Range<usize>, request_bytes: u64) -> f64 {
        match self.ns(r.clone()) {
            0 => f64::INFINITY,
            ns => r.len() as f64 * request_bytes as f64 * 1e3 / ns as f64,
        }
    }

    pub fn level(&self, r: Range<usize>, request_bytes: u64) -> SpeedLevel {
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
    pub fn noise(&self) -> f64 {
        let n = self.len();
        let stride = (n / NOISE_SAMPLE).max(1);
        let steps: Vec<f64> = (1..n)
            .step_by(stride)
            .map(|i| (self.duration(i) - self.duration(i - 1)).abs())
            .collect();
        let durations: Vec<f64> = (0..n).step_by(stride).map(|i| self.duration(i)).collect();
        let mad = median(&steps).unwrap_or(0.0) / (std::f64::consts::SQRT_2 * 0.6745);
        mad.max(NOISE_FLOOR * median(&durations).unwrap_or(0.0))
            .max(1.0)
    }
}

/// The two-part splits of the requests `r`, scored by how much each lowers
/// the residual sum of squares of one mean: `m/(k(m-k)) · (S_k - k·S/m)²`
/// for `k` requests of `m` on the left, whose sums are `S_k` and `S`.
pub struct Window<'s, 'a> {
    series: &'s Series<'a>,
    r: Range<usize>,
    total: f64,
}

impl<'s, 'a> Window<'s, 'a> {
    pub fn new(series: &'s Series<'a>, r: Range<usize>) -> Self {
        let total = series.ns(r.clone()) as f64;
        Window { series, r, total }
    }

    pub fn gain(&self, k: usize) -> f64 {
        let m = self.r.len() as f64;
        let left = (k - self.r.start) as f64;
        let dev = self.series.ns(self.r.start..k) as f64 - left * self.total / m;
        dev * dev * m / (left * (m - left))
    }

    /// `(k, gain)` for every split leaving [`MIN_SEGMENT`] on each side.
    pub fn splits(&self) -> impl Iterator<Item = (usize, f64)> + '_ {
        let first = self.r.start + MIN_SEGMENT;
        let last = self.r.end.saturating_sub(MIN_SEGMENT);
        (first..=last)
            .filter(move |_| last >= first)
            .map(|k| (k, self.gain(k)))
            .filter(|(_, g)| g.is_finite())
    }

    /// The split with the largest gain; the earliest on ties.
    pub fn best(&self) -> Option<(usize, f64)> {
        self.splits().fold(None, |best, (k, g)| match best {
            Some((_, bg)) if bg >= g => best,
            _ => Some((k, g)),
        })
    }

    /// First and last split whose gain is within `slack` of the best.
    pub fn support(&self, best_gain: f64, slack: f64) -> Option<(usize, usize)> {
        self.splits().filter(|(_, g)| best_gain - g <= slack).fold(
            None,
            |range, (k, _)| match range {
                None => Some((k, k)),
                Some((lo, hi)) => Some((lo.min(k), hi.max(k))),
            },
        )
    }

    /// Residual sum of squares of one mean over the window.
    pub fn rss(&self) -> f64 {
        let mean = self.total / self.r.len() as f64;
        self.r
            .clone()
            .map(|i| (self.series.duration(i) - mean).powi(2))
            .sum()
    }
}
