//! How many AUs the card keeps open for writing, in the manner of
//! flashbench's open-AU test (Arnd Bergmann, flashbench `--open-au`; LWN,
//! "Optimizing Linux with cheap flash drives", 2011): small writes go
//! round-robin into N AUs (spaced two AUs apart, beyond the FAT area), for
//! N = 1, 2, ...; while N is within what the controller keeps open, each
//! write costs a page program, and one AU more forces a garbage collection
//! (a copy of the rest of an AU) on nearly every write, so throughput
//! collapses. The first round of each N is a warm-up.
//!
//! Reading it (`crate::analysis::flash::open_au`): the count is the last N before a collapse (every later N,
//! at least two, slower than every N before by at least [`VISIBLE`]: past
//! the count every N thrashes), when going back to
//! that N after the sweep restores the throughput (a cache that fills
//! mid-sweep also slows every later N, but not because of N). How sure:
//! the collapse over the spread of the throughputs within the count, its
//! noise. A card whose writes all land in a write cache shows no collapse,
//! and a device too small for 12 AUs is tried with as many as fit.

use super::{FAT_AREA, FlashIo, mb_s};
use crate::analysis::flash::open_au::{self, collapse_at};
use crate::analysis::flash::open_au::{NoCount, Point};
use crate::error::usage_io;
use crate::result::flash::Confidence;
use crate::units::format_size;
use serde::Serialize;
use std::io;

/// The most AUs the test tries, and the fewest it runs with: two AUs past
/// a single open one, so that a collapse can show at all.
const MAX_N: u32 = 12;
const MIN_N: u32 = 3;

/// The test's shape.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct OpenAuPlan {
    pub au: u64,
    /// Bytes per write.
    pub chunk: u64,
    /// The most AUs tried.
    pub max_n: u32,
    /// Counted rounds per N.
    pub rounds: u32,
    /// The AU is a fallback, not the card's: the count is at most low.
    pub au_assumed: bool,
    /// The most the count may say, by how sure the AU is (one found by
    /// timing at medium makes the count at most medium: in AUs of the
    /// wrong size the collapse is not the controller's).
    pub au_cap: Confidence,
    /// A cache lies between the device and the medium (see
    /// [`crate::flash::device::cached_beneath`]): the count is at most low.
    pub cached_beneath: bool,
    /// Seed of the data written (`--seed`).
    /// Written as a string of digits, as every seed in the JSON is
    /// (readers round integers above 2^53).
    #[serde(serialize_with = "crate::vocab::wide::serialize")]
    pub seed: u64,
}

impl OpenAuPlan {
    pub fn new(au: u64) -> OpenAuPlan {
        OpenAuPlan {
            au,
            chunk: 16 << 10,
            max_n: MAX_N,
            rounds: 8,
            au_assumed: false,
            au_cap: Confidence::High,
            cached_beneath: false,
            seed: au,
        }
    }

    /// The plan for a device of `size` bytes: as many AUs as fit beyond
    /// the FAT area (12 of 64 MiB, two AUs apart, need 1.6 GiB), at least
    /// three. On a device too small even for three, [`detect`] refuses.
    pub fn fitting(au: u64, size: u64) -> OpenAuPlan {
        let plan = OpenAuPlan::new(au);
        let room = size.saturating_sub(plan.base());
        let fit = room / (2 * au).max(1);
        OpenAuPlan {
            max_n: fit.clamp(u64::from(MIN_N), u64::from(MAX_N)) as u32,
            ..plan
        }
    }

    /// The first byte written.
    pub fn base(&self) -> u64 {
        FAT_AREA.div_ceil(self.au.max(1)).saturating_mul(self.au)
    }

    /// The region the test may write.
    pub fn span(&self) -> u64 {
        (2 * u64::from(self.max_n)).saturating_mul(self.au)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct OpenAuResult {
    pub plan: OpenAuPlan,
    /// `None`: no count (see `why_none`).
    pub open_aus: Option<u32>,
    pub confidence: Confidence,
    pub why_none: Option<NoCount>,
    /// Throughput within the count over throughput past it (1 when none).
    pub collapse: f64,
    /// Spread (largest over smallest) of the throughputs within the count,
    /// the check included: the noise the collapse stands against.
    pub spread: f64,
    pub points: Vec<Point>,
    /// The last N within the count, measured again after the sweep.
    pub check: Option<Point>,
    /// The first N past the count, measured again after the check.
    pub past_check: Option<Point>,
}

pub fn detect(io: &mut dyn FlashIo, plan: OpenAuPlan) -> io::Result<OpenAuResult> {
    if !super::usable_au(plan.au) || plan.chunk == 0 || plan.chunk > plan.au {
        return Err(usage_io(format!(
            "an AU of {} is too small for the open-AU test, which writes {} at a time: give --au of at least {} (e.g. 4M)",
            format_size(plan.au),
            format_size(plan.chunk),
            format_size(super::MIN_AU)
        )));
    }
    if plan.max_n < MIN_N || plan.base().saturating_add(plan.span()) > io.size() {
        return Err(usage_io(format!(
            "this {} device is too small for {} AUs of {} beyond the first 16 MiB: give a smaller --au or a larger device",
            format_size(io.size()),
            plan.max_n.max(MIN_N),
            format_size(plan.au)
        )));
    }
    let mut sweep = Sweep::new(io, plan);
    let points = (1..=plan.max_n)
        .map(|n| sweep.point(io, n))
        .collect::<io::Result<Vec<Point>>>()?;
    // The sweep once more: a collapse that a cache in front of the AUs
    // made when it filled (at whatever N that was) comes at another N, or
    // at the first, when the cache starts full.
    let again = (1..=plan.max_n)
        .map(|n| sweep.point(io, n))
        .collect::<io::Result<Vec<Point>>>()?;
    let at = |p: &[Point]| collapse_at(p).map(|i| p[i].aus);
    if at(&points) != at(&again) {
        return Ok(decide(plan, points, None));
    }
    let (check, past_check) = match collapse_at(&points) {
        Some(i) => (
            Some(sweep.point(io, points[i - 1].aus)?),
            Some(sweep.point(io, points[i].aus)?),
        ),
        None => (None, None),
    };
    Ok(decide_checked(plan, points, check, past_check))
}

/// The writes of the test: one buffer, and where each AU's next write goes.
struct Sweep {
    plan: OpenAuPlan,
    buf: crate::sys::buffer::AlignedBuf,
    cursor: Vec<u64>,
}

impl Sweep {
    fn new(io: &dyn FlashIo, plan: OpenAuPlan) -> Sweep {
        let mut buf = io.buffer(plan.chunk as usize);
        fastrand::Rng::with_seed(plan.seed).fill(buf.as_mut_slice());
        Sweep {
            plan,
            buf,
            cursor: vec![0; plan.max_n as usize],
        }
    }

    /// Throughput of small writes into `n` AUs in turn: one round's bytes
    /// over the median round's time, the first round (which opens them)
    /// not counted. The median, not the total: a card that pauses now and
    /// then (garbage collection, heat; issue 37: 311 ms every 5 MiB) makes
    /// the one round a pause lands in slow, which in a total reads as a
    /// collapse at whichever N it fell on; past the count every round
    /// thrashes, so the median keeps the collapse.
    fn point(&mut self, io: &mut dyn FlashIo, n: u32) -> io::Result<Point> {
        let plan = self.plan;
        let mut rounds = Vec::with_capacity(plan.rounds as usize);
        for round in 0..=plan.rounds {
            let mut ns = 0;
            for (i, at) in self.cursor.iter_mut().enumerate().take(n as usize) {
                let offset = plan.base() + 2 * i as u64 * plan.au + *at;
                ns += io.write(offset, self.buf.as_slice())?;
                *at = (*at + plan.chunk) % plan.au;
            }
            if round > 0 {
                rounds.push(ns as f64);
            }
        }
        let bytes = u64::from(n) * plan.chunk;
        let median_ns = crate::stats::median(&rounds).unwrap_or(0.0);
        Ok(Point {
            aus: n,
            mb_per_s: mb_s(bytes, median_ns.round() as u64),
        })
    }
}

/// The result, as the analysis reads the throughputs.
pub fn decide(plan: OpenAuPlan, points: Vec<Point>, check: Option<Point>) -> OpenAuResult {
    decide_checked(plan, points, check, None)
}

/// [`decide`] with the first N past the count measured once more after
/// the check (see [`open_au::read_checked`]).
fn decide_checked(
    plan: OpenAuPlan,
    points: Vec<Point>,
    check: Option<Point>,
    past_check: Option<Point>,
) -> OpenAuResult {
    let cap = match plan.au_assumed || plan.cached_beneath {
        true => Confidence::Low,
        false => plan.au_cap,
    };
    let r = open_au::read_checked(&points, check, past_check, cap);
    OpenAuResult {
        plan,
        open_aus: r.open_aus,
        confidence: r.confidence,
        why_none: r.why_none,
        collapse: r.collapse,
        spread: r.spread,
        points,
        check,
        past_check,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sim::{SimDevice, SimParams};
    use crate::flash::SimIo;

    #[test]
    fn counts_the_exact_open_aus_of_simulated_cards() {
        for au_mib in [1u64, 4, 16] {
            for open in 1..=7u32 {
                let spec = format!("size=1G,au={au_mib}M,open_au={open}");
                let dev = SimDevice::new(SimParams::parse(&spec).unwrap());
                let r = detect(&mut SimIo(&dev), OpenAuPlan::new(au_mib << 20)).unwrap();
                assert_eq!(r.open_aus, Some(open), "{spec}: {:?}", r.points);
                assert_eq!(r.confidence, Confidence::High, "{spec}");
            }
        }
    }

    #[test]
    fn no_collapse_means_no_count() {
        let dev = SimDevice::new(SimParams::parse("size=1G,au=1M,open_au=64").unwrap());
        let r = detect(&mut SimIo(&dev), OpenAuPlan::new(1 << 20)).unwrap();
        assert_eq!((r.open_aus, r.confidence), (None, Confidence::Low));
        assert_eq!(r.why_none, Some(NoCount::NoCollapse));
    }

    fn run(spec: &str, plan: OpenAuPlan) -> OpenAuResult {
        let dev = SimDevice::timing_only(SimParams::parse(spec).unwrap());
        detect(&mut SimIo(&dev), plan).unwrap()
    }

    #[test]
    fn a_cache_filling_mid_sweep_is_not_read_as_a_count() {
        // 1 MiB of cache at 10× the medium's speed fills after a few N;
        // every later N is slower, but so is going back.
        let spec = "size=4G,au=4M,open_au=3,cache=1M,write=2MB/s,burst=20MB/s";
        let r = run(spec, OpenAuPlan::new(4 << 20));
        assert_eq!(r.open_aus, None, "{:?} then {:?}", r.points, r.check);
        assert_eq!(r.why_none, Some(NoCount::NotFromTheCount));
    }

    #[test]
    fn the_confidence_follows_the_size_of_the_collapse() {
        // Collecting a 32 KiB AU copies 16 KiB: at 5 ms a command the
        // collapse is about 1.3×, at 10 µs about 2× (16 KiB more to write
        // after 16 KiB): low and medium; a 4 MiB AU's is far above 3×.
        let cases = [
            ("au=32k,page=2k,cmd=5ms,write=4MB/s", Confidence::Low),
            ("au=32k,page=2k,cmd=10us,write=4MB/s", Confidence::Medium),
            ("au=4M,cmd=10us,write=4MB/s", Confidence::High),
        ];
        for (geometry, want) in cases {
            let spec = format!("size=4G,open_au=4,{geometry}");
            let au = SimParams::parse(&spec).unwrap().au;
            let r = run(&spec, OpenAuPlan::new(au));
            assert_eq!(r.open_aus, Some(4), "{spec}: {:?}", r.points);
            assert_eq!(r.confidence, want, "{spec}: collapse {}", r.collapse);
        }
    }

    #[test]
    fn an_assumed_au_gives_a_low_count_at_most() {
        let plan = OpenAuPlan {
            au_assumed: true,
            ..OpenAuPlan::new(4 << 20)
        };
        let r = run("size=4G,au=4M,open_au=2", plan);
        assert_eq!((r.open_aus, r.confidence), (Some(2), Confidence::Low));
    }

    #[test]
    fn large_aus_on_small_cards_are_tried_with_the_aus_that_fit() {
        let plan = OpenAuPlan::fitting(64 << 20, 1 << 30);
        assert_eq!(plan.max_n, 7, "(1 GiB - 64 MiB) / 128 MiB");
        assert!(plan.base() + plan.span() <= 1 << 30);
        let r = run("size=1G,au=64M,open_au=5", plan);
        assert_eq!(r.open_aus, Some(5), "two N past the count fit");
        let r = run("size=1G,au=64M,open_au=6", plan);
        assert_eq!(r.open_aus, None, "one N past the count is not enough");
        assert_eq!(OpenAuPlan::fitting(4 << 20, 64 << 30).max_n, MAX_N);
        let too_small = OpenAuPlan::fitting(64 << 20, 300 << 20);
        let dev = SimDevice::timing_only(SimParams::parse("size=300M,au=64M").unwrap());
        assert!(detect(&mut SimIo(&dev), too_small).is_err());
    }

    #[test]
    fn a_collapse_a_full_cache_and_a_pause_made_is_no_count() {
        // Issue 37: 5 MiB of cache in front of the AU work of 32 KiB AUs
        // (`through`), pausing 177 ms every 6 MiB: the cache filled at
        // N = 10 and a pause drained it before the check, "9 open AUs,
        // high" for a card that keeps 7. The sweep run again, starting
        // with the cache full, collapses elsewhere.
        let spec = "size=203194368,au=32768,page=32768,open_au=7,read=68010415B/s,write=37000494B/s,burst=154365592B/s,cmd=106750ns,cache=5242880,cache_min=1848832,drain=13432041B/s,pause=177481468ns,pause_every=6038016,seed=9141886932137779311,through=1";
        let r = run(spec, OpenAuPlan::fitting(32 << 10, 203194368));
        assert!(r.open_aus.is_none_or(|n| n == 7), "{:?}", r.open_aus);
        assert!(r.open_aus.is_some() || r.confidence == Confidence::Low);
    }
}
