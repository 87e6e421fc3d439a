//! Executes one measurement: jobs on threads, engines built, the counted
//! phase timed, and everything around it (device counters, CPU time, cache
//! eviction, verification read-back) gathered into a [`Measurement`].

use super::job::{Job, JobRecord, PaddedCounter, VerifyState};
use super::spec::MeasureSpec;
use super::verify::{self, VerifyTally};
use crate::engine::buffer::AlignedBuf;
use crate::engine::{Engine, EngineSetup, IoError, MonotonicClock, sys};
use crate::result::{CpuUsage, DeviceIo, DirectionResult, Measurement, RampInfo};
use crate::stats::LatencyHistogram;
use crate::target::sysfs::{BlockDevice, DiskStat};
use crate::units::{format_size, mb_per_s};
use std::num::NonZeroU64;
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicBool, Ordering};

/// Write data pool per job: large enough that a deduplicating device sees
/// distinct blocks across any window a cache could hold cheaply.
const MIN_POOL_BYTES: u64 = 16 << 20;

/// Below this the device counters are too coarse to judge a cache.
const CACHE_CHECK_MIN_BYTES: u64 = 1 << 20;

/// The opened target as a measurement needs it.
pub struct MeasureTarget<'a> {
    pub fd: BorrowedFd<'a>,
    /// Buffer alignment for O_DIRECT.
    pub align: usize,
    /// The block device beneath, whose counters show what reached it.
    pub device: Option<&'a BlockDevice>,
}

/// A measurement that ended with an I/O failure; what was measured up to
/// then is kept.
pub struct MeasureFailure {
    pub partial: Measurement,
    pub error: IoError,
}

/// Runs the workload of `spec` on `target`. `stop` is the user's Ctrl-C;
/// `progress` has one counter per job (bytes completed, warm-up included).
pub fn measure(
    target: &MeasureTarget<'_>,
    spec: &MeasureSpec,
    stop: &AtomicBool,
    progress: &[PaddedCounter],
) -> Result<Measurement, Box<MeasureFailure>> {
    let mut warnings = Vec::new();
    if spec.buffered && spec.rw.reads() {
        evict_and_prove(target.fd, spec, &mut warnings);
    }
    let stat_before = target.device.and_then(|d| d.read_stat().ok());
    let abort = AtomicBool::new(false);
    let clock = MonotonicClock::new();
    let outcomes = run_jobs(target, spec, stop, &abort, progress, clock);
    let mut sync_ns = 0;
    let sync_cpu_before = sys::thread_cpu_seconds();
    if spec.buffered && spec.rw.writes() {
        let start = clock.now_ns();
        if let Err(e) = rustix::fs::fdatasync(target.fd) {
            warnings.push(format!("fdatasync after the writes failed: {e}"));
        }
        sync_ns = clock.now_ns() - start;
    }
    let sync_cpu_after = sys::thread_cpu_seconds();
    let stat_after = target.device.and_then(|d| d.read_stat().ok());

    let mut error = None;
    let mut record = JobRecord::default();
    let mut tally: Option<VerifyTally> = None;
    let mut written = Vec::new();
    for (index, outcome) in outcomes.into_iter().enumerate() {
        merge_record(&mut record, &outcome.record);
        if let Some(v) = outcome.verify {
            tally
                .get_or_insert_with(VerifyTally::default)
                .merge(&v.tally);
            written.push((index as u32, v));
        }
        if error.is_none() {
            error = outcome.error;
        }
        if let Some(note) = outcome.note {
            if !warnings.contains(&note) {
                warnings.push(note);
            }
        }
    }
    let interrupted = stop.load(Ordering::Relaxed);
    if spec.verify && spec.rw.writes() && error.is_none() && !interrupted {
        let read_back = read_back_written(target, spec, &written);
        match read_back {
            Ok(t) => tally.get_or_insert_with(VerifyTally::default).merge(&t),
            Err(e) => warnings.push(format!("verification read-back failed: {e}")),
        }
    }
    record.cpu_counted.0 += sync_cpu_after.0 - sync_cpu_before.0;
    record.cpu_counted.1 += sync_cpu_after.1 - sync_cpu_before.1;
    let mut m = summarise(&record, sync_ns, interrupted);
    m.verify = tally;
    m.device_io = device_io(
        target.device,
        stat_before,
        stat_after,
        &record,
        &mut warnings,
    );
    m.warnings = warnings;
    match error {
        None => Ok(m),
        Some(error) => Err(Box::new(MeasureFailure { partial: m, error })),
    }
}

struct JobOutcome {
    record: JobRecord,
    verify: Option<VerifyState>,
    error: Option<IoError>,
    note: Option<String>,
}

/// Splits the region among the jobs: sequential jobs get consecutive slices
/// (so together they sweep the region once), random jobs share all of it.
fn job_region(spec: &MeasureSpec, index: u32) -> (u64, u64) {
    if spec.rw.is_random() || spec.threads == 1 {
        return (spec.offset, spec.span);
    }
    let blocks = spec.span / spec.block_size;
    let per_job = (blocks / u64::from(spec.threads)).max(1);
    let start = spec.offset + u64::from(index) * per_job * spec.block_size;
    (start, per_job * spec.block_size)
}

/// Splits the byte budget into whole blocks; the first job takes the rest.
fn job_budget(spec: &MeasureSpec, index: u32) -> Option<u64> {
    let size = spec.size?;
    let blocks = size / spec.block_size;
    let threads = u64::from(spec.threads);
    let share = blocks / threads + u64::from(index == 0) * (blocks % threads);
    Some(share * spec.block_size)
}

fn run_jobs(
    target: &MeasureTarget<'_>,
    spec: &MeasureSpec,
    stop: &AtomicBool,
    abort: &AtomicBool,
    progress: &[PaddedCounter],
    clock: MonotonicClock,
) -> Vec<JobOutcome> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..spec.threads)
            .map(|index| {
                let counter = &progress[index as usize % progress.len()];
                scope.spawn(move || run_one_job(target, spec, index, stop, abort, counter, clock))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a measuring thread panicked"))
            .collect()
    })
}

fn run_one_job(
    target: &MeasureTarget<'_>,
    spec: &MeasureSpec,
    index: u32,
    stop: &AtomicBool,
    abort: &AtomicBool,
    counter: &PaddedCounter,
    clock: MonotonicClock,
) -> JobOutcome {
    let (start, len) = job_region(spec, index);
    let mut job = Job::new(
        spec,
        index,
        start,
        len,
        job_budget(spec, index),
        stop,
        abort,
        counter,
    );
    let bs = spec.block_size;
    let pool_bytes = (MIN_POOL_BYTES.max(2 * bs * u64::from(spec.queue_depth)) / bs) * bs;
    let mut pool = AlignedBuf::new(pool_bytes as usize, target.align);
    spec.pattern.fill(
        pool.as_mut_slice(),
        spec.seed.wrapping_add(u64::from(index)),
    );
    let setup = EngineSetup {
        fd: target.fd,
        block_size: bs as usize,
        queue_depth: spec.queue_depth as usize,
        align: target.align,
        pool,
        clock,
    };
    let mut engine = match Engine::build(spec.engine, setup) {
        Ok(engine) => engine,
        Err(error) => {
            abort.store(true, Ordering::Relaxed);
            let error = IoError {
                kind: crate::engine::OpKind::Read,
                offset: start,
                len: 0,
                error,
            };
            return JobOutcome {
                record: job.record,
                verify: job.verify,
                error: Some(error),
                note: None,
            };
        }
    };
    let result = engine.run(&mut job);
    job.finish_cpu();
    if result.is_err() {
        abort.store(true, Ordering::Relaxed);
    }
    JobOutcome {
        record: job.record,
        verify: job.verify,
        error: result.err(),
        note: engine.note(),
    }
}

fn merge_record(into: &mut JobRecord, from: &JobRecord) {
    into.read_latency.merge(&from.read_latency);
    into.write_latency.merge(&from.write_latency);
    into.read_bytes += from.read_bytes;
    into.read_ops += from.read_ops;
    into.write_bytes += from.write_bytes;
    into.write_ops += from.write_ops;
    into.ramp_ops += from.ramp_ops;
    into.ramp_read_bytes += from.ramp_read_bytes;
    into.ramp_write_bytes += from.ramp_write_bytes;
    into.ramp_start_ns = min_opt(into.ramp_start_ns, from.ramp_start_ns);
    into.counted_start_ns = min_opt(into.counted_start_ns, from.counted_start_ns);
    into.last_complete_ns = into.last_complete_ns.max(from.last_complete_ns);
    into.cpu_counted.0 += from.cpu_counted.0;
    into.cpu_counted.1 += from.cpu_counted.1;
}

fn min_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// CPU time is that of the measuring threads during the counted phase (and
/// of the final fdatasync), so the warm-up and the preparation are excluded.
fn summarise(record: &JobRecord, sync_ns: u64, interrupted: bool) -> Measurement {
    let counted_start = record.counted_start_ns.unwrap_or(record.last_complete_ns);
    let elapsed_ns = record.last_complete_ns.saturating_sub(counted_start) + sync_ns;
    let bytes = record.read_bytes + record.write_bytes;
    let ops = record.read_ops + record.write_ops;
    let mut all = LatencyHistogram::new();
    all.merge(&record.read_latency);
    all.merge(&record.write_latency);
    let (user_s, system_s) = record.cpu_counted;
    let ramp_start = record.ramp_start_ns.unwrap_or(counted_start);
    Measurement {
        bytes,
        ops,
        elapsed_ns,
        mb_per_s: mb_per_s(bytes, elapsed_ns),
        mib_per_s: mb_per_s(bytes, elapsed_ns) * 1e6 / 1_048_576.0,
        iops: per_second(ops, elapsed_ns),
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
        cpu: CpuUsage {
            user_s,
            system_s,
            cpu_s_per_gb: if bytes == 0 {
                0.0
            } else {
                (user_s + system_s) / (bytes as f64 / 1e9)
            },
        },
        device_io: None,
        ramp: RampInfo {
            ops: record.ramp_ops,
            bytes: record.ramp_read_bytes + record.ramp_write_bytes,
            elapsed_ns: counted_start.saturating_sub(ramp_start),
        },
        sync_ns,
        verify: None,
        warnings: Vec::new(),
        interrupted,
    }
}

fn per_second(count: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        count as f64 * 1e9 / ns as f64
    }
}

fn direction(
    bytes: u64,
    ops: u64,
    elapsed_ns: u64,
    hist: &LatencyHistogram,
) -> Option<DirectionResult> {
    let latency = hist.summary()?;
    Some(DirectionResult {
        bytes,
        ops,
        mb_per_s: mb_per_s(bytes, elapsed_ns),
        iops: per_second(ops, elapsed_ns),
        latency,
    })
}

/// The device counters over the measurement, and the verdict on caching:
/// when the device served clearly fewer bytes than were read, a cache
/// answered and the figure is not the device's.
fn device_io(
    device: Option<&BlockDevice>,
    before: Option<DiskStat>,
    after: Option<DiskStat>,
    record: &JobRecord,
    warnings: &mut Vec<String>,
) -> Option<DeviceIo> {
    let (device, before, after) = (device?, before?, after?);
    let d = after.since(&before);
    let read_bytes = d.read_sectors * 512;
    let write_bytes = d.write_sectors * 512;
    let ours_read = record.read_bytes + record.ramp_read_bytes;
    let ours_write = record.write_bytes + record.ramp_write_bytes;
    let served = if ours_read >= CACHE_CHECK_MIN_BYTES {
        (1.0 - read_bytes as f64 / ours_read as f64).max(0.0)
    } else {
        0.0
    };
    if served > 0.1 {
        warnings.push(format!(
            "CACHE: the device ({}) delivered only {} of the {} iocurve read ({:.0}% came from a cache): the read figures are not the device's speed",
            device.name,
            format_size(read_bytes),
            format_size(ours_read),
            served * 100.0
        ));
    }
    let avg = |bytes: u64, reqs: u64| (reqs > 0).then(|| bytes as f64 / reqs as f64);
    Some(DeviceIo {
        device: device.name.clone(),
        read_requests: d.read_ios,
        write_requests: d.write_ios,
        read_merges: d.read_merges,
        write_merges: d.write_merges,
        read_bytes,
        write_bytes,
        busy_ms: d.io_ticks_ms,
        avg_read_request_bytes: avg(read_bytes, d.read_ios),
        avg_write_request_bytes: avg(write_bytes, d.write_ios),
        iocurve_read_bytes: ours_read,
        iocurve_write_bytes: ours_write,
        cache_served_fraction: served,
    })
}

/// Drops the region from the page cache and checks with mincore(2) that
/// nothing of it stayed; a buffered read test would otherwise time memory.
fn evict_and_prove(fd: BorrowedFd<'_>, spec: &MeasureSpec, warnings: &mut Vec<String>) {
    let _ = rustix::fs::fdatasync(fd);
    let len = NonZeroU64::new(spec.span);
    if let Err(e) = rustix::fs::fadvise(fd, spec.offset, len, rustix::fs::Advice::DontNeed) {
        warnings.push(format!("could not evict the page cache (posix_fadvise: {e}); buffered reads may come from memory"));
        return;
    }
    match sys::resident_pages(fd, spec.offset, spec.span) {
        Ok((0, _)) => {}
        Ok((resident, total)) => warnings.push(format!(
            "CACHE: {resident} of {total} pages of the region stayed in the page cache after eviction; buffered read figures include memory speed"
        )),
        Err(e) => warnings.push(format!("could not prove the page cache was evicted (mincore: {e})")),
    }
}

/// Reads back every block the jobs wrote with stamps and checks it. Not
/// timed: verification is about integrity, not speed.
fn read_back_written(
    target: &MeasureTarget<'_>,
    spec: &MeasureSpec,
    jobs: &[(u32, VerifyState)],
) -> std::io::Result<VerifyTally> {
    let bs = spec.block_size;
    let mut tally = VerifyTally::default();
    let mut buf = AlignedBuf::new(bs as usize, target.align);
    for (index, state) in jobs {
        let (start, _) = job_region(spec, *index);
        for (word_index, &word) in state.written.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let bit = bits.trailing_zeros() as u64;
                bits &= bits - 1;
                let offset = start + (word_index as u64 * 64 + bit) * bs;
                let n = rustix::io::pread(target.fd, buf.as_mut_slice(), offset)?;
                let verdict = if n == bs as usize {
                    verify::check(buf.as_slice(), offset, state.seed)
                } else {
                    verify::Verdict::Corrupted
                };
                tally.record(offset, verdict);
            }
        }
    }
    Ok(tally)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device() -> BlockDevice {
        BlockDevice {
            name: "sdz".into(),
            major: 8,
            minor: 0,
            disk: "sdz".into(),
            partition: false,
            size_bytes: 1 << 30,
            logical_block_size: 512,
            physical_block_size: 512,
            read_only: false,
            rotational: Some(false),
            model: None,
            loop_backing_file: None,
        }
    }

    fn read_record(bytes: u64) -> JobRecord {
        JobRecord {
            read_bytes: bytes,
            read_ops: bytes / 4096,
            ..JobRecord::default()
        }
    }

    #[test]
    fn a_device_that_saw_fewer_bytes_than_were_read_means_a_cache_answered() {
        let before = DiskStat::default();
        let after = DiskStat {
            read_sectors: (8 << 20) / 512,
            read_ios: 64,
            ..DiskStat::default()
        };
        let mut warnings = Vec::new();
        let io = device_io(
            Some(&device()),
            Some(before),
            Some(after),
            &read_record(64 << 20),
            &mut warnings,
        )
        .unwrap();
        assert!((io.cache_served_fraction - 0.875).abs() < 1e-9);
        assert_eq!(io.avg_read_request_bytes, Some(131072.0));
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].starts_with("CACHE:") && warnings[0].contains("88%"),
            "{}",
            warnings[0]
        );
    }

    #[test]
    fn a_device_that_saw_every_byte_raises_no_warning() {
        let after = DiskStat {
            read_sectors: (64 << 20) / 512,
            read_ios: 512,
            ..DiskStat::default()
        };
        let mut warnings = Vec::new();
        let io = device_io(
            Some(&device()),
            Some(DiskStat::default()),
            Some(after),
            &read_record(64 << 20),
            &mut warnings,
        )
        .unwrap();
        assert_eq!(io.cache_served_fraction, 0.0);
        assert!(warnings.is_empty());
    }

    #[test]
    fn budgets_and_regions_split_exactly() {
        let spec = MeasureSpec {
            rw: super::super::Rw::Read,
            mix_read_percent: 0,
            block_size: 4096,
            queue_depth: 1,
            threads: 3,
            engine: crate::engine::EngineKind::Sync,
            offset: 8192,
            span: 100 * 4096,
            align: 4096,
            size: Some(10 * 4096),
            time: None,
            ramp: None,
            pattern: super::super::Pattern::Zeros,
            seed: 1,
            verify: false,
            buffered: false,
        };
        let total: u64 = (0..3).map(|i| job_budget(&spec, i).unwrap()).sum();
        assert_eq!(total, 10 * 4096);
        let regions: Vec<_> = (0..3).map(|i| job_region(&spec, i)).collect();
        assert_eq!(regions[0], (8192, 33 * 4096));
        assert_eq!(regions[1].0, 8192 + 33 * 4096);
        assert!(regions[2].0 + regions[2].1 <= spec.offset + spec.span);
    }
}
