//! Fake capacity, in the manner of f3probe (Michel Machado's F3): blocks
//! that carry their own address and a random salt (the self-describing
//! blocks of [`crate::workload::verify`]) are written at chosen positions,
//! then read back. A counterfeit card maps the addresses it claims beyond
//! its real size onto the ones it has (address mod 2^k on the controllers
//! f3 describes), so a block written later at a+R lands on a's storage and
//! a reads back a block that names a+R: the distance is a multiple of the
//! real size, and the greatest common divisor of the distances seen is the
//! real size. Blocks that read back foreign data or zeros (writes dropped)
//! mark the lowest address that does not hold data.
//!
//! The probe set: four blocks in the second MiB, the same four shifted by
//! every power of two up to the claimed size, and one random block per
//! power-of-two octave (none inside the flush region). They are read back twice: at once, and after a
//! flush of sequential writes larger than any plausible cache (a cache
//! answers an immediate read-back with what it still holds and so hides the
//! fraud; the two readings together show that it did). The first MiB (the
//! partition table) is never written.

use super::{Confidence, FlashIo};
use crate::error::usage_io;
use crate::units::format_size;
use crate::workload::verify::{self, Verdict};
use serde::Serialize;
use std::io;

/// Never written: the partition table lives here.
pub const PROTECTED: u64 = 1 << 20;
const BLOCK: u64 = 4096;
const LOW_PROBES: u64 = 4;
const FLUSH_CHUNK: u64 = 1 << 20;
/// The smallest device probed: the protected MiB, the low probes in the
/// second MiB and at least one shifted copy of them.
pub const MIN_SIZE: u64 = 4 * PROTECTED;

#[derive(Debug, Clone, Serialize)]
pub struct CapacityPlan {
    pub size: u64,
    pub seed: u64,
    /// Probe block addresses, in writing order.
    pub probes: Vec<u64>,
    /// Where the flush writes go, and how much.
    pub flush_offset: u64,
    pub flush_bytes: u64,
}

impl CapacityPlan {
    /// The probe set for a device of `size` bytes; empty below
    /// [`MIN_SIZE`], where [`detect`] refuses to run.
    pub fn new(size: u64, flush_bytes: u64, seed: u64) -> CapacityPlan {
        if size < MIN_SIZE {
            return CapacityPlan {
                size,
                seed,
                probes: Vec::new(),
                flush_offset: 2 * PROTECTED,
                flush_bytes: 0,
            };
        }
        let mut rng = fastrand::Rng::with_seed(seed);
        let blocks_in_mib = PROTECTED / BLOCK;
        let low: Vec<u64> = (0..LOW_PROBES)
            .map(|j| PROTECTED + (j * blocks_in_mib / LOW_PROBES + rng.u64(0..4)) * BLOCK)
            .collect();
        let mut probes = low.clone();
        let mut r = 2 * PROTECTED;
        while r < size {
            probes.extend(low.iter().map(|l| l + r).filter(|x| x + BLOCK <= size));
            let octave = r / BLOCK..r.saturating_mul(2).min(size) / BLOCK;
            if !octave.is_empty() {
                probes.push(rng.u64(octave) * BLOCK);
            }
            r = r.saturating_mul(2);
        }
        probes.push(size / BLOCK * BLOCK - BLOCK);
        let flush_offset = 2 * PROTECTED;
        let flush_bytes = flush_bytes.min(size / 4) / FLUSH_CHUNK * FLUSH_CHUNK;
        let flushed = flush_offset..flush_offset + flush_bytes;
        probes.retain(|p| !flushed.contains(p));
        CapacityPlan {
            size,
            seed,
            probes,
            flush_offset,
            flush_bytes,
        }
    }

    /// Every byte range the probe writes, for the preserve journal.
    pub fn regions(&self) -> Vec<(u64, u64)> {
        let mut v: Vec<(u64, u64)> = self.probes.iter().map(|p| (*p, BLOCK)).collect();
        v.push((self.flush_offset, self.flush_bytes));
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// A probe block read back wrong.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct BadProbe {
    pub offset: u64,
    pub verdict: Verdict,
}

#[derive(Debug, Clone, Serialize)]
pub struct CapacityResult {
    pub claimed: u64,
    pub genuine: bool,
    /// The bytes that really hold data, when the card is fake.
    pub usable: Option<u64>,
    /// Wrap-around: blocks read back naming another address.
    pub wraps: bool,
    /// An immediate read-back looked fine: a cache hid the fraud.
    pub cache_hid: bool,
    pub confidence: Confidence,
    pub probes: usize,
    pub bad: Vec<BadProbe>,
    pub bad_at_once: usize,
}

pub fn detect(io: &mut dyn FlashIo, plan: &CapacityPlan) -> io::Result<CapacityResult> {
    if plan.size < MIN_SIZE || plan.size > io.size() {
        return Err(usage_io(format!(
            "the capacity probe needs a device of at least {} (this one has {})",
            format_size(MIN_SIZE),
            format_size(io.size())
        )));
    }
    let mut buf = io.buffer(BLOCK as usize);
    for (seq, &at) in plan.probes.iter().enumerate() {
        verify::stamp(buf.as_mut_slice(), at, plan.seed, seq as u64);
        write(io, at, buf.as_slice())?;
    }
    let at_once = read_all(io, plan, buf.as_mut_slice())?;
    flush(io, plan)?;
    let bad = read_all(io, plan, buf.as_mut_slice())?;
    Ok(decide(plan, bad, at_once.len()))
}

/// The one place the probe writes; refuses the protected first MiB.
fn write(io: &mut dyn FlashIo, at: u64, data: &[u8]) -> io::Result<u64> {
    if at < PROTECTED {
        return Err(io::Error::other(
            "internal error: a write into the first MiB",
        ));
    }
    io.write(at, data)
}

fn flush(io: &mut dyn FlashIo, plan: &CapacityPlan) -> io::Result<()> {
    let mut chunk = io.buffer(FLUSH_CHUNK as usize);
    for i in 0..plan.flush_bytes / FLUSH_CHUNK {
        let at = plan.flush_offset + i * FLUSH_CHUNK;
        verify::stamp(chunk.as_mut_slice(), at, plan.seed ^ 1, i);
        write(io, at, chunk.as_slice())?;
    }
    Ok(())
}

fn read_all(
    io: &mut dyn FlashIo,
    plan: &CapacityPlan,
    buf: &mut [u8],
) -> io::Result<Vec<BadProbe>> {
    let mut bad = Vec::new();
    for &at in &plan.probes {
        io.read(at, buf)?;
        let verdict = verify::check(buf, at, plan.seed);
        if !verdict.is_ok() {
            bad.push(BadProbe {
                offset: at,
                verdict,
            });
        }
    }
    Ok(bad)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

pub fn decide(plan: &CapacityPlan, bad: Vec<BadProbe>, bad_at_once: usize) -> CapacityResult {
    let distance = bad.iter().fold(0, |g, b| match b.verdict {
        Verdict::Overwritten { found_offset } => gcd(g, found_offset.abs_diff(b.offset)),
        _ => g,
    });
    let lost = bad
        .iter()
        .filter(|b| !matches!(b.verdict, Verdict::Overwritten { .. }))
        .map(|b| b.offset / BLOCK * BLOCK)
        .min();
    let usable = match (distance, lost) {
        (0, None) => None,
        (0, Some(l)) => Some(l),
        (d, l) => Some(l.map_or(d, |l| l.min(d))),
    };
    let genuine = usable.is_none();
    CapacityResult {
        claimed: plan.size,
        genuine,
        usable,
        wraps: distance > 0,
        cache_hid: !genuine && bad_at_once == 0,
        confidence: match (genuine, distance > 0) {
            (true, _) => Confidence::Medium,
            (false, true) => Confidence::High,
            (false, false) => Confidence::Medium,
        },
        probes: plan.probes.len(),
        bad,
        bad_at_once,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sim::{SimDevice, SimParams};
    use crate::flash::SimIo;

    fn probe(spec: &str) -> CapacityResult {
        let dev = SimDevice::new(SimParams::parse(spec).unwrap());
        let plan = CapacityPlan::new(dev.params().size, 128 << 20, 42);
        let r = detect(&mut SimIo(&dev), &plan).unwrap();
        // The first MiB was never written.
        let mut buf = vec![0u8; 1 << 20];
        dev.read(0, &mut buf).unwrap();
        if !spec.contains("real") {
            assert!(
                buf.iter().all(|b| *b == 0),
                "{spec}: the first MiB was written"
            );
        }
        r
    }

    #[test]
    fn genuine_cards_pass() {
        for spec in ["size=8G", "size=1G", "size=4G,cache=64M"] {
            let r = probe(spec);
            assert!(
                r.genuine && r.usable.is_none() && r.bad.is_empty(),
                "{spec}"
            );
        }
    }

    #[test]
    fn fake_cards_show_their_real_size() {
        for (claimed, real) in [(8u64, 1u64), (16, 2), (32, 4), (64, 8), (2, 1)] {
            let spec = format!("size={claimed}G,real={real}G");
            let r = probe(&spec);
            assert!(!r.genuine && r.wraps, "{spec}");
            assert_eq!(r.usable, Some(real << 30), "{spec}");
            assert_eq!(r.confidence, Confidence::High);
            assert!(!r.cache_hid);
        }
    }

    #[test]
    fn a_cache_that_hides_the_fraud_is_seen_through() {
        let r = probe("size=8G,real=1G,cache=64M");
        assert_eq!(r.usable, Some(1 << 30));
        assert!(
            r.cache_hid,
            "the immediate read-back should have looked fine"
        );
    }
}
