//! The write cache (or fast SLC region): sequential writes in recording
//! units beyond the FAT area, timed one by one, until the speed falls to
//! under 60 % of the burst speed and stays there (the SD Association's
//! method measures the write performance after such a cache is
//! exhausted). The burst speed is the median of the first three writes,
//! the sustained speed the median after the
//! fall, and the bytes absorbed what was written before it. While the
//! burst lasts the cache also drains at the sustained speed, so its size
//! is the bytes absorbed less what drained meanwhile:
//! absorbed × (1 − sustained / burst). This module writes and times;
//! `crate::analysis::flash::cache` reads the speeds.

use super::{FAT_AREA, FlashIo, mb_s};
use crate::analysis::flash::cache::AFTER;
use crate::analysis::flash::cache::{self, fall};
use crate::result::flash::Confidence;
use serde::Serialize;
use std::io;

#[derive(Debug, Clone, Copy, Serialize)]
pub struct CachePlan {
    /// Bytes per write.
    pub chunk: u64,
    /// The most bytes written.
    pub max_bytes: u64,
    /// Seed of the data written (`--seed`); written as a string of
    /// digits, as every seed in the JSON is.
    #[serde(serialize_with = "crate::vocab::wide::serialize")]
    pub seed: u64,
}

impl CachePlan {
    pub fn new(size: u64) -> CachePlan {
        CachePlan {
            chunk: 512 << 10,
            max_bytes: (size / 2).saturating_sub(FAT_AREA).min(1 << 30),
            seed: 7,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CacheResult {
    pub plan: CachePlan,
    pub burst_mb_s: f64,
    pub sustained_mb_s: Option<f64>,
    /// Bytes written at burst speed; `None`: no fall within `max_bytes`.
    pub absorbed: Option<u64>,
    /// The cache's size, net of what drained during the burst.
    pub cache_bytes: Option<u64>,
    pub confidence: Confidence,
    /// MB/s of each write, in order.
    pub speeds: Vec<f64>,
}

pub fn detect(io: &mut dyn FlashIo, plan: CachePlan) -> io::Result<CacheResult> {
    let mut buf = io.buffer(plan.chunk as usize);
    fastrand::Rng::with_seed(plan.seed).fill(buf.as_mut_slice());
    let mut speeds = Vec::new();
    let count = plan.max_bytes / plan.chunk;
    for i in 0..count {
        let ns = io.write(FAT_AREA + i * plan.chunk, buf.as_slice())?;
        speeds.push(mb_s(plan.chunk, ns));
        if let Some(at) = fall(&speeds) {
            if speeds.len() >= at + AFTER {
                break;
            }
        }
    }
    Ok(decide(plan, speeds))
}

/// The result, as the analysis reads the speeds.
pub fn decide(plan: CachePlan, speeds: Vec<f64>) -> CacheResult {
    let r = cache::read(&speeds, plan.chunk);
    CacheResult {
        plan,
        burst_mb_s: r.burst_mb_s,
        sustained_mb_s: r.sustained_mb_s,
        absorbed: r.absorbed,
        cache_bytes: r.cache_bytes,
        confidence: r.confidence,
        speeds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sim::{SimDevice, SimParams};
    use crate::flash::SimIo;

    #[test]
    fn measures_the_cache_of_simulated_cards_to_a_write() {
        for cache_mib in [4u64, 16, 64, 256] {
            let spec = format!("size=4G,cache={cache_mib}M,write=10MB/s,burst=40MB/s");
            let dev = SimDevice::new(SimParams::parse(&spec).unwrap());
            let r = detect(&mut SimIo(&dev), CachePlan::new(4 << 30)).unwrap();
            let got = r.cache_bytes.expect("a cache") as i64;
            let want = (cache_mib << 20) as i64;
            assert!((got - want).abs() <= 1 << 20, "{spec}: {got} vs {want}");
            assert!((r.burst_mb_s - 40.0).abs() < 4.0, "{}", r.burst_mb_s);
            assert!((r.sustained_mb_s.unwrap() - 10.0).abs() < 1.0);
            assert_eq!(r.confidence, Confidence::High);
        }
    }

    #[test]
    fn a_cache_of_two_writes_still_shows() {
        // 1 MiB fills after two 512 KiB writes: the burst speed must come
        // from the first writes alone.
        let spec = "size=4G,cache=1M,write=5MB/s,burst=50MB/s";
        let dev = SimDevice::timing_only(SimParams::parse(spec).unwrap());
        let r = detect(&mut SimIo(&dev), CachePlan::new(4 << 30)).unwrap();
        let got = r.cache_bytes.expect("a cache");
        assert!(got.abs_diff(1 << 20) <= 512 << 10, "{spec}: {got}");
    }

    #[test]
    fn a_card_without_cache_shows_none() {
        let dev = SimDevice::new(SimParams::parse("size=1G").unwrap());
        let r = detect(&mut SimIo(&dev), CachePlan::new(1 << 30)).unwrap();
        assert_eq!((r.cache_bytes, r.confidence), (None, Confidence::Low));
    }
}
