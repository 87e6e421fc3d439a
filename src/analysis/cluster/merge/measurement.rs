//! One repetition of one test, merged over the ranks that ran it: counts
//! summed, histograms added bucket by bucket, and the time from the first
//! rank's start to the last rank's end on the common clock.

use super::{RankResult, common_span};
use crate::result::verify::VerifyTally;
use crate::result::{Caveat, CpuUsage, DirectionResult, Measurement, RampInfo};
use crate::stats::LatencyHistogram;
use crate::units::mb_per_s;

/// The ranks' measurements of one repetition as one. A repetition only
/// one rank made is that rank's (its device counters kept only in a job
/// of one rank, where they describe the one device measured).
pub(super) fn merge_repetition(
    parts: &[(&RankResult, &Measurement)],
    single_rank: bool,
) -> Measurement {
    if let [(_, only)] = parts {
        return Measurement {
            raw: None,
            host: if single_rank { only.host } else { None },
            device_io: if single_rank {
                only.device_io.clone()
            } else {
                None
            },
            ..(*only).clone()
        };
    }
    let measurements = || parts.iter().map(|(_, m)| *m);
    let bytes = measurements().map(|m| m.bytes).sum();
    let ops = measurements().map(|m| m.ops).sum();
    let elapsed_ns = elapsed_ns(parts);
    let (read, write) = histograms(parts);
    let mut all = read.clone();
    all.merge(&write);
    let read_side = measurements().filter_map(|m| m.read.as_ref());
    let write_side = measurements().filter_map(|m| m.write.as_ref());
    let rate = mb_per_s(bytes, elapsed_ns);
    Measurement {
        bytes,
        ops,
        elapsed_ns,
        mb_per_s: rate,
        mib_per_s: rate * 1e6 / 1_048_576.0,
        iops: crate::units::per_second(ops, elapsed_ns),
        read: direction(read_side, &read, elapsed_ns),
        write: direction(write_side, &write, elapsed_ns),
        latency: all.summary(),
        cpu: cpu(measurements(), bytes),
        device_io: None,
        host: None,
        ramp: ramp(measurements()),
        sync_ns: measurements().map(|m| m.sync_ns).max().unwrap_or(0),
        verify: verify(measurements()),
        warnings: warnings(measurements()),
        interrupted: measurements().any(|m| m.interrupted),
        raw: None,
    }
}

/// Last end − first start on the common clock, over the ranks that sent
/// their times; without any, the longest rank's own elapsed time.
fn elapsed_ns(parts: &[(&RankResult, &Measurement)]) -> u64 {
    let spans: Vec<(i64, i64)> = parts
        .iter()
        .filter_map(|(r, m)| common_span(r, m))
        .collect();
    let first_start = spans.iter().map(|s| s.0).min();
    let last_end = spans.iter().map(|s| s.1).max();
    match (first_start, last_end) {
        (Some(start), Some(end)) => u64::try_from(i128::from(end) - i128::from(start)).unwrap_or(0),
        _ => parts.iter().map(|(_, m)| m.elapsed_ns).max().unwrap_or(0),
    }
}

/// The read and write histograms of every rank, added bucket by bucket.
fn histograms(parts: &[(&RankResult, &Measurement)]) -> (LatencyHistogram, LatencyHistogram) {
    let mut read = LatencyHistogram::new();
    let mut write = LatencyHistogram::new();
    for raw in parts.iter().filter_map(|(_, m)| m.raw.as_ref()) {
        read.add_buckets(&raw.read_buckets);
        write.add_buckets(&raw.write_buckets);
    }
    (read, write)
}

/// One direction's counts summed, its rate over the merged time and its
/// latency from the merged histogram; `None` when no request of it was
/// timed (as for one rank).
fn direction<'a>(
    sides: impl Iterator<Item = &'a DirectionResult>,
    hist: &LatencyHistogram,
    elapsed_ns: u64,
) -> Option<DirectionResult> {
    let latency = hist.summary()?;
    let (bytes, ops) = sides.fold((0, 0), |(b, o), d| (b + d.bytes, o + d.ops));
    Some(DirectionResult::over(bytes, ops, elapsed_ns, latency))
}

/// CPU seconds of every rank, and per 10^9 bytes of them all.
fn cpu<'a>(ms: impl Iterator<Item = &'a Measurement>, bytes: u64) -> CpuUsage {
    let (user_s, system_s) = ms.fold((0.0, 0.0), |(u, s), m| {
        (u + m.cpu.user_s, s + m.cpu.system_s)
    });
    CpuUsage::of(user_s, system_s, bytes)
}

/// Every rank's discarded warm-up: counts summed, the time the longest.
fn ramp<'a>(ms: impl Iterator<Item = &'a Measurement>) -> RampInfo {
    ms.fold(RampInfo::default(), |sum, m| RampInfo {
        ops: sum.ops + m.ramp.ops,
        bytes: sum.bytes + m.ramp.bytes,
        // The ranks warm up side by side: the longest is how long it took.
        elapsed_ns: sum.elapsed_ns.max(m.ramp.elapsed_ns),
    })
}

/// The verify tallies added, when any rank verified.
fn verify<'a>(ms: impl Iterator<Item = &'a Measurement>) -> Option<VerifyTally> {
    ms.filter_map(|m| m.verify.as_ref())
        .fold(None, |sum: Option<VerifyTally>, v| {
            let mut sum = sum.unwrap_or_default();
            sum.merge(v);
            Some(sum)
        })
}

/// Every rank's caveats, each kept once, in the order met.
fn warnings<'a>(ms: impl Iterator<Item = &'a Measurement>) -> Vec<Caveat> {
    let mut out: Vec<Caveat> = Vec::new();
    for w in ms.flat_map(|m| &m.warnings) {
        if !out.contains(w) {
            out.push(w.clone());
        }
    }
    out
}
