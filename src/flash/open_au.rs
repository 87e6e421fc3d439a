//! How many AUs the card keeps open for writing, in the manner of
//! flashbench's open-AU test: small writes go round-robin into N AUs
//! (spaced two AUs apart, beyond the FAT area), for N = 1, 2, ...; while N
//! is within what the controller keeps open, each write costs a page
//! program, and one AU more forces a garbage collection (a whole-AU copy)
//! on nearly every write, so throughput collapses. The count is the last N
//! before a collapse to under a third of the one-AU throughput that lasts
//! for the next N too. The first round of each N is a warm-up.

use super::{Confidence, FAT_AREA, FlashIo, mb_s};
use crate::error::usage_io;
use crate::units::format_size;
use serde::Serialize;
use std::io;

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
}

impl OpenAuPlan {
    pub fn new(au: u64) -> OpenAuPlan {
        OpenAuPlan {
            au,
            chunk: 16 << 10,
            max_n: 12,
            rounds: 8,
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

/// Throughput with N AUs in turn.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Point {
    pub aus: u32,
    pub mb_per_s: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct OpenAuResult {
    pub plan: OpenAuPlan,
    /// `None`: no collapse up to `max_n`.
    pub open_aus: Option<u32>,
    pub confidence: Confidence,
    pub points: Vec<Point>,
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
    if plan.base().saturating_add(plan.span()) > io.size() {
        return Err(usage_io(format!(
            "this {} device is too small for {} AUs of {} beyond the first 16 MiB: give a smaller --au or a larger device",
            format_size(io.size()),
            plan.max_n,
            format_size(plan.au)
        )));
    }
    let mut buf = io.buffer(plan.chunk as usize);
    fastrand::Rng::with_seed(plan.au).fill(buf.as_mut_slice());
    let mut cursor = vec![0u64; plan.max_n as usize];
    let mut points = Vec::new();
    for n in 1..=plan.max_n {
        let (mut bytes, mut ns) = (0, 0);
        for round in 0..=plan.rounds {
            for (i, at) in cursor.iter_mut().enumerate().take(n as usize) {
                let offset = plan.base() + 2 * i as u64 * plan.au + *at;
                let t = io.write(offset, buf.as_slice())?;
                *at = (*at + plan.chunk) % plan.au;
                if round > 0 {
                    bytes += plan.chunk;
                    ns += t;
                }
            }
        }
        points.push(Point {
            aus: n,
            mb_per_s: mb_s(bytes, ns),
        });
    }
    Ok(decide(plan, points))
}

pub fn decide(plan: OpenAuPlan, points: Vec<Point>) -> OpenAuResult {
    let one = points.first().map_or(0.0, |p| p.mb_per_s);
    let collapsed = |i: usize| points.get(i).is_none_or(|p| p.mb_per_s < one / 3.0);
    let at = (1..points.len()).find(|&i| collapsed(i) && collapsed(i + 1));
    let (open_aus, confidence) = match at {
        Some(i) => {
            let ratio = points[i - 1].mb_per_s / points[i].mb_per_s.max(1e-9);
            let steady = points[..i].iter().all(|p| p.mb_per_s >= one / 1.5);
            let conf = Confidence::of_ratio(ratio / 3.0).min(match steady {
                true => Confidence::High,
                false => Confidence::Low,
            });
            (Some(points[i - 1].aus), conf)
        }
        None => (None, Confidence::Low),
    };
    OpenAuResult {
        plan,
        open_aus,
        confidence,
        points,
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
    }
}
