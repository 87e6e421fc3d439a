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
//! **Own length.** A cost that repeats from request to request fakes
//! stretches: 200 KiB writes on 256 KiB pages program one page or two by
//! where they start, a pattern of 32 writes (`lcm(200k, 256k) / 200k`), so
//! two neighbouring writes can average 40% below the write's speed though
//! the speed never changed, and the step fit above cuts them out, as it
//! should for a change of mean. So a boundary must also hold at the
//! shorter side's own length `L`: two neighbours are separate levels only
//! when every run of `L` consecutive requests in one is faster than every
//! run of `L` in the other by more than [`SAME_LEVEL`] (else they are
//! joined, the most overlapping first), and a drop only when the slowest
//! run of `L` of the fast stretch is below [`DROP_RATIO`] of the fastest
//! run of `L` after it, or in a slow start before it. The request next to
//! the boundary is left out of the longer side (the cache filled during
//! it). No period has to be known: once the other side spans a period
//! more than `L`, a periodic cost repeats the short stretch there (the same
//! requests in the same phase, the same mean), and it cannot pass. Tests
//! check any pattern over writes of six periods or more (six because
//! stretches of `K` periods give means within `(K−1)/(K+1)` of each other,
//! which exceeds [`DROP_RATIO`] from `K = 6` on). A share of the write is
//! not required: a real cache may be a small share of a long write, and
//! whether a stretch is real is read from the write itself. The price: a
//! fast side of a few requests in heavy noise, a little faster than the
//! rule, may not stand out of the noise of its neighbour's runs.
//!
//! **Confidence.** The runs compared had room for periods up to some
//! number of requests. A page-tied cost repeats every `u / gcd(request,
//! u)` requests for a page of `u` bytes, an AU-tied one likewise; over the
//! units the field has ([`rules::MAX_PAGE`], [`rules::MAX_AU`] and the SD
//! specification's 12 and 24 MB AUs) that bounds the period a cost could
//! have. A drop is low when the room was shorter than the page-tied bound,
//! medium when shorter than the AU-tied bound or when a side holds fewer
//! than [`rules::CONFIDENT_REQUESTS`], and high otherwise.
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
//! is reported on its own. Each carries its spread: the side cut into up
//! to [`rules::SPREAD_SAMPLES`] stretches of equal length, each stretch's
//! own throughput a sample (median, slowest, fastest).

mod own_length;
pub mod rules;
mod segment;
mod series;
#[cfg(test)]
mod tests;

use crate::result::EndedBy;
use crate::result::apps::SpeedDrop;
use crate::result::apps::SpeedLevel;
use crate::result::apps::SustainReport;
use crate::result::config::{SustainPlan, SustainSettings};
use crate::result::measured::SustainRun;
use crate::units::mb_per_s;
use segment::{choose_drop, join_inseparable, join_same_levels, levels_of, locate, segment};
use series::Series;

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
    let segments = join_inseparable(&series, join_same_levels(&series, segment(&series)));
    let drop =
        choose_drop(&series, &segments).and_then(|(a, b)| locate(&series, a, b, request_bytes));
    let levels = levels_of(&series, &segments)
        .into_iter()
        .map(|r| series.level(r, request_bytes))
        .collect();
    (drop, levels)
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
