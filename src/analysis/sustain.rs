//! Where a long write slows down: the bytes written before a fast cache
//! (SLC cache, DRAM buffer, host memory) filled or the device throttled, and
//! the speeds before and after, located to the request.
//!
//! **Data.** The completion time of every write request, in order, all of
//! one size (a sequential write at queue depth 1). The duration of request
//! `i` is the gap since the previous completion (`t[i] - t[i-1]`, the first
//! from the start), so the durations add up to the whole write and any host
//! time between requests is charged to the request that followed it.
//!
//! **Change point.** A single change in the mean duration, found with the
//! least-squares step fit (Hinkley, "Inference about the change-point in a
//! sequence of random variables", Biometrika 57, 1970): every split `k`
//! (requests `..k` before, `k..` after) is tried and the one whose two
//! segment means leave the smallest residual sum of squares (RSS) wins.
//! With running sums the cost of every split follows in O(n) time and O(1)
//! memory: `RSS(k) = Q - S_k²/k - (S - S_k)²/(n - k)`, on durations centred
//! on their mean so that the sums stay well conditioned.
//!
//! **Uncertainty.** A likelihood support set: for Gaussian noise of
//! variance σ², the log-likelihood of split `k` is `-RSS(k)/2σ²`, so the
//! splits whose RSS exceeds the best by at most `2·ln 32·σ̂²` are those at
//! least 1/32 as likely as the best: Royall's "1/32 support interval"
//! (R. Royall, *Statistical Evidence: A Likelihood Paradigm*, 1997, §1.12;
//! the same likelihood-ratio set as D. Siegmund, "Confidence sets in
//! change-point problems", Int. Stat. Review 56, 1988, with its threshold
//! fixed instead of calibrated). σ̂² is the residual variance of the best
//! fit, `RSS/(n - 2)`. It is a statement of relative support, not a
//! coverage probability. The set is then widened by one request on each
//! side, because a cache fills *during* a request: that request is slower
//! than the fast ones and faster than the slow ones, and the fit puts it on
//! whichever side it is nearer, so the first wholly slow request may be the
//! one after the first slow one. The support set of noise-free data is the
//! best split alone, so the widening is the whole uncertainty there.
//!
//! **Speeds.** Before and after are the bytes of the requests on each side
//! over their summed durations (throughput, not a mean of rates). The split
//! counts as a drop only when the speed after is below [`DROP_RATIO`] of the
//! speed before, so noise around a flat curve is not reported as a cache.

use crate::result::EndedBy;
use crate::result::apps::SpeedDrop;
use crate::result::apps::SustainReport;
use crate::result::config::{SustainPlan, SustainSettings};
use crate::result::measured::SustainRun;
use crate::units::mb_per_s;

/// A drop is reported when the later speed is below this share of the
/// earlier one.
pub const DROP_RATIO: f64 = 0.7;
/// Fewest requests on each side of a split.
pub const MIN_SEGMENT: usize = 2;
/// Splits whose residual sum of squares exceeds the best by at most this
/// many residual variances are kept as plausible: `2·ln 32`, Royall's 1/32
/// likelihood support set.
pub const SUPPORT_RSS: f64 = 6.931_471_805_599_453;

/// The best single split of the per-request durations, if it is a drop.
/// `completions_ns[i]` is when request `i` completed, ns since the start;
/// every request moved `request_bytes`.
pub fn find_drop(completions_ns: &[u64], request_bytes: u64) -> Option<SpeedDrop> {
    let n = completions_ns.len();
    if n < 2 * MIN_SEGMENT || request_bytes == 0 {
        return None;
    }
    let steps = Steps::of(completions_ns);
    let (k, best_gain) = steps.best_split()?;
    let (before, after) = speeds(completions_ns, request_bytes, k);
    if !before.is_finite() || before <= 0.0 || after.is_nan() || after >= before * DROP_RATIO {
        return None;
    }
    let residual_variance = (steps.total_ss - best_gain).max(0.0) / (n - 2) as f64;
    let (low, high) = steps
        .support(best_gain, SUPPORT_RSS * residual_variance)
        .unwrap_or((k, k));
    let bytes = |split: usize| (split as u64).saturating_mul(request_bytes);
    Some(SpeedDrop {
        at_interval: 0,
        bytes_before_drop: bytes(k),
        seconds_before_drop: completions_ns[k - 1] as f64 / 1e9,
        mb_per_s_before: before,
        mb_per_s_after: after,
        ratio: after / before,
        at_request: k as u64,
        requests: n as u64,
        bytes_low: bytes(low.saturating_sub(1)),
        bytes_high: bytes((high + 1).min(n)),
    })
}

/// Throughput of requests `..k` and `k..`, MB/s.
fn speeds(completions_ns: &[u64], request_bytes: u64, k: usize) -> (f64, f64) {
    let n = completions_ns.len();
    let split_ns = completions_ns[k - 1];
    let after_ns = completions_ns[n - 1].saturating_sub(split_ns);
    let rate = |requests: usize, ns: u64| match ns {
        0 => f64::INFINITY,
        _ => requests as f64 * request_bytes as f64 * 1e3 / ns as f64,
    };
    (rate(k, split_ns), rate(n - k, after_ns))
}

/// Per-request durations, centred on their mean, with the sums the split
/// costs need.
struct Steps<'a> {
    completions_ns: &'a [u64],
    mean: f64,
    /// Sum of squared centred durations (the RSS of no split at all).
    total_ss: f64,
    /// Sum of centred durations (zero but for rounding).
    total: f64,
}

impl<'a> Steps<'a> {
    fn of(completions_ns: &'a [u64]) -> Steps<'a> {
        let n = completions_ns.len() as f64;
        let durations = || durations(completions_ns);
        let mean = durations().sum::<f64>() / n;
        let total_ss = durations().map(|d| (d - mean) * (d - mean)).sum();
        let total = durations().map(|d| d - mean).sum();
        Steps {
            completions_ns,
            mean,
            total_ss,
            total,
        }
    }

    /// `(k, gain)` for every allowed split, where the split's RSS is
    /// `total_ss - gain`.
    fn gains(&self) -> impl Iterator<Item = (usize, f64)> + '_ {
        let n = self.completions_ns.len();
        let mut running = 0.0;
        durations(self.completions_ns)
            .enumerate()
            .take(n - MIN_SEGMENT)
            .filter_map(move |(i, d)| {
                running += d - self.mean;
                let k = i + 1;
                (k >= MIN_SEGMENT).then(|| {
                    let rest = self.total - running;
                    let gain = running * running / k as f64 + rest * rest / (n - k) as f64;
                    (k, gain)
                })
            })
    }

    /// The split with the largest gain (smallest RSS); the earliest on ties.
    fn best_split(&self) -> Option<(usize, f64)> {
        self.gains()
            .filter(|(_, g)| g.is_finite())
            .fold(None, |best, (k, g)| match best {
                Some((_, bg)) if bg >= g => best,
                _ => Some((k, g)),
            })
    }

    /// First and last split whose RSS is within `slack` of the best.
    fn support(&self, best_gain: f64, slack: f64) -> Option<(usize, usize)> {
        self.gains()
            .filter(|(_, g)| best_gain - g <= slack)
            .fold(None, |range, (k, _)| match range {
                None => Some((k, k)),
                Some((lo, hi)) => Some((lo.min(k), hi.max(k))),
            })
    }
}

/// Gaps between successive completions, the first from the start; a clock
/// that went backwards gives 0.
fn durations(completions_ns: &[u64]) -> impl Iterator<Item = f64> + '_ {
    let previous = std::iter::once(0).chain(completions_ns.iter().copied());
    completions_ns
        .iter()
        .zip(previous)
        .map(|(&t, p)| t.saturating_sub(p) as f64)
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
    let mut drop = find_drop(&run.completions_ns, u64::from(block_size))?;
    drop.at_interval = run
        .intervals
        .iter()
        .position(|i| i.bytes_before + i.bytes > drop.bytes_before_drop)
        .unwrap_or(run.intervals.len().saturating_sub(1));
    Some(drop)
}

/// The report of a sustained write: its figures, overall speed and drop.
pub fn report(plan: &SustainPlan, run: SustainRun, ended_by: EndedBy) -> SustainReport {
    SustainReport {
        block_size: plan.block_size,
        interval_ns: plan.interval_ns,
        mark_bytes: plan.mark_bytes,
        bytes: run.bytes,
        elapsed_ns: run.elapsed_ns,
        mb_per_s: mb_per_s(run.bytes, run.elapsed_ns),
        ended_by,
        drop: drop_in(&run, plan.block_size),
        requests_recorded: run.completions_ns.len() as u64,
        intervals: run.intervals,
        marks: run.marks,
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

    proptest! {
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
            prop_assert_eq!(find_drop(&completions(&durations), 1 << 20), None);
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
