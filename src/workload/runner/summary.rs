//! One pass's records condensed into what a result shows: the jobs'
//! records merged, then the throughput, latency quantiles and counts of each
//! direction.

use super::*;

pub(super) fn merge_record(into: &mut JobRecord, from: &JobRecord) {
    into.read_latency.merge(&from.read_latency);
    into.write_latency.merge(&from.write_latency);
    into.read_bytes += from.read_bytes;
    into.read_ops += from.read_ops;
    into.write_bytes += from.write_bytes;
    into.write_ops += from.write_ops;
    into.start_ns = match (into.start_ns, from.start_ns) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    into.last_complete_ns = into.last_complete_ns.max(from.last_complete_ns);
    into.cpu.0 += from.cpu.0;
    into.cpu.1 += from.cpu.1;
}

/// CPU time is that of the measuring threads during the counted pass (and
/// of the final fdatasync), so the warm-up and the preparation are excluded.
pub(super) fn summarise(
    record: &JobRecord,
    ramp: RampInfo,
    sync_ns: u64,
    interrupted: bool,
) -> Measurement {
    let start = record.start_ns.unwrap_or(record.last_complete_ns);
    let elapsed_ns = record.last_complete_ns.saturating_sub(start) + sync_ns;
    let bytes = record.bytes();
    let ops = record.ops();
    let mut all = LatencyHistogram::new();
    all.merge(&record.read_latency);
    all.merge(&record.write_latency);
    let (user_s, system_s) = record.cpu;
    Measurement {
        bytes,
        ops,
        elapsed_ns,
        mb_per_s: mb_per_s(bytes, elapsed_ns),
        mib_per_s: mb_per_s(bytes, elapsed_ns) * 1e6 / 1_048_576.0,
        iops: crate::units::per_second(ops, elapsed_ns),
        read: direction(
            record.read_bytes,
            record.read_ops,
            elapsed_ns,
            &record.read_latency,
        ),
        write: direction(
            record.write_bytes,
            record.write_ops,
            elapsed_ns,
            &record.write_latency,
        ),
        latency: all.summary(),
        cpu: CpuUsage::of(user_s, system_s, bytes),
        device_io: None,
        host: None,
        ramp,
        sync_ns,
        verify: None,
        warnings: Vec::new(),
        interrupted,
        raw: None,
    }
}

fn direction(
    bytes: u64,
    ops: u64,
    elapsed_ns: u64,
    hist: &LatencyHistogram,
) -> Option<DirectionResult> {
    let latency = hist.summary()?;
    Some(DirectionResult::over(bytes, ops, elapsed_ns, latency))
}
