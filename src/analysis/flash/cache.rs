//! Reading the timed writes of `flash cache`: where the speed falls for
//! good, and how large the cache in front of the medium is.
//!
//! The SD Association's method (Physical Layer Simplified Specification,
//! "Performance" section) measures the write performance after such a
//! cache is exhausted; here the fall itself is the finding. The burst
//! speed is the median of the first writes, the sustained speed the median
//! after the fall, and since the cache drains at the sustained speed while
//! the burst lasts, its size is what the writes before the fall absorbed
//! less what drained at the sustained speed over the time they took
//! (absorbed × (1 − sustained / burst) when they all ran at the burst).

use crate::result::flash::Confidence;
use crate::stats::median;

/// Writes after the fall that confirm it and measure the sustained speed.
pub const AFTER: usize = 16;

/// The fall: a write slower than this share of the burst speed. An SLC
/// cache gives way to TLC or QLC programming, several times slower; 60 %
/// stays clear of the wobble of a steady medium.
pub const FALL: f64 = 0.6;

/// Writes in a row below [`FALL`] that make a fall lasting rather than
/// one slow write.
pub const FALL_RUN: usize = 4;

/// Writes whose median is the burst speed: few, so that a cache of only
/// two writes (1 MiB) still shows, and a median, so that one slow first
/// write does not set it.
pub const BURST_WRITES: usize = 3;

/// A write before the fall counts as at burst speed at this share of it or
/// more.
pub const STEADY_SHARE: f64 = 0.8;

/// Nine writes in ten before the fall at burst speed make the size sure: a
/// lone slow write (the first, or one the host's scheduler delayed) does
/// not move where the lasting fall is.
pub const STEADY_TENTHS: usize = 9;

/// What the writes say about the cache.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CacheReading {
    pub burst_mb_s: f64,
    pub sustained_mb_s: Option<f64>,
    /// Bytes written at burst speed; `None`: no fall.
    pub absorbed: Option<u64>,
    /// The cache's size, net of what drained during the burst.
    pub cache_bytes: Option<u64>,
    pub confidence: Confidence,
}

/// The speed of the first writes.
pub fn burst(speeds: &[f64]) -> f64 {
    median(&speeds[..speeds.len().min(BURST_WRITES)]).unwrap_or(0.0)
}

/// The first write of a lasting fall below [`FALL`] of the burst speed.
pub fn fall(speeds: &[f64]) -> Option<usize> {
    let burst = burst(speeds);
    (1..speeds.len()).find(|&i| {
        let end = (i + FALL_RUN).min(speeds.len());
        end - i == FALL_RUN && speeds[i..end].iter().all(|s| *s < FALL * burst)
    })
}

/// Whether the writes before the fall went at about the burst speed: at
/// least [`STEADY_TENTHS`] in ten at [`STEADY_SHARE`] of it or more. A card
/// whose speed wanders before the fall makes the size less sure.
fn steady_before(speeds: &[f64], burst: f64) -> bool {
    let fast = speeds
        .iter()
        .filter(|s| **s >= STEADY_SHARE * burst)
        .count();
    fast * 10 >= speeds.len() * STEADY_TENTHS
}

/// The bytes the writes before the fall left in the cache: what they
/// absorbed less what drained, at the sustained speed, over the time they
/// took. Over their own time, not the burst speed's: a card that pauses
/// now and then (garbage collection, heat) drains during the pauses too,
/// and absorbed × (1 − sustained / burst) would count that as cache.
fn net_of_drain(before: &[f64], chunk: u64, sustained_mb_s: f64) -> u64 {
    let absorbed = before.len() as f64 * chunk as f64;
    let seconds: f64 = before
        .iter()
        .map(|mb_s| chunk as f64 / (mb_s.max(f64::MIN_POSITIVE) * 1e6))
        .sum();
    (absorbed - sustained_mb_s * 1e6 * seconds).max(0.0) as u64
}

/// Reads the MB/s of writes of `chunk` bytes each, in order.
pub fn read(speeds: &[f64], chunk: u64) -> CacheReading {
    let burst = burst(speeds);
    let mut r = CacheReading {
        burst_mb_s: burst,
        sustained_mb_s: None,
        absorbed: None,
        cache_bytes: None,
        confidence: Confidence::Low,
    };
    let Some(at) = fall(speeds) else {
        return r;
    };
    let sustained = median(&speeds[(at + 2).min(speeds.len() - 1)..]).unwrap_or(0.0);
    let absorbed = at as u64 * chunk;
    r.sustained_mb_s = Some(sustained);
    r.absorbed = Some(absorbed);
    r.cache_bytes = Some(net_of_drain(&speeds[..at], chunk, sustained));
    r.confidence = match steady_before(&speeds[..at - 1], burst) {
        true => Confidence::of_ratio(burst / sustained),
        false => Confidence::Low,
    };
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lasting_fall_gives_the_cache_net_of_what_drained() {
        let mut speeds = vec![40.0; 8];
        speeds.extend([10.0; 20]);
        let r = read(&speeds, 1 << 20);
        assert_eq!(fall(&speeds), Some(8));
        assert_eq!(r.absorbed, Some(8 << 20));
        assert_eq!(r.cache_bytes, Some(6 << 20));
        assert_eq!(r.sustained_mb_s, Some(10.0));
        assert_eq!(r.confidence, Confidence::High);
    }

    #[test]
    fn a_single_slow_write_is_not_a_fall() {
        let mut speeds = vec![40.0; 30];
        speeds[10] = 5.0;
        assert_eq!(fall(&speeds), None);
        assert_eq!(read(&speeds, 1 << 20).cache_bytes, None);
    }

    #[test]
    fn a_pause_during_the_burst_drains_the_cache_and_is_not_counted_as_cache() {
        // 1 MiB writes at 40 MB/s, one in eight paused to 2 MB/s (a card
        // collecting garbage), then 10 MB/s sustained.
        let mut speeds: Vec<f64> = (0..32)
            .map(|i| if i % 8 == 3 { 2.0 } else { 40.0 })
            .collect();
        speeds.extend([10.0; 20]);
        let r = read(&speeds, 1 << 20);
        let mib = (1u64 << 20) as f64;
        let seconds = 28.0 * mib / 40e6 + 4.0 * mib / 2e6;
        let want = 32.0 * mib - 10e6 * seconds;
        let got = r.cache_bytes.unwrap() as f64;
        assert!((got - want).abs() < 2.0, "{got} vs {want}");
        // The burst-speed formula would have said 24 MiB.
        assert!(got < 20.0 * mib, "{got}");
    }
}
