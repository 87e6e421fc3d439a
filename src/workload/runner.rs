//! Executes one measurement: jobs on threads, engines built, the counted
//! phase timed, and everything around it (device counters, CPU time, cache
//! eviction, verification read-back) gathered into a [`Measurement`].
//!
//! A measurement is two passes of the same jobs: a warm-up pass, whose
//! figures are kept apart, then the counted pass. Between them buffered
//! writes are synced, so the warm-up's dirty pages are not charged to the
//! counted time. In each pass every job is built first (buffers filled,
//! rings set up), then all jobs start at one shared instant and share one
//! deadline, so the window of the pass is the same for all of them.

use super::coordinate::{self, Coordinator};
use super::gauge::{Gauge, total_bytes};
use super::job::JobRecord;
use super::spec::MeasureSpec;
use super::verify;
use crate::engine::{AnyClock, Clock, IoError, MonotonicClock, OpKind};
use crate::medium::MeasureTarget;
use crate::probe::sysfs::{BlockDevice, DiskStat};
use crate::result::cluster::RawCounts;
use crate::result::host::HostConditions;
use crate::result::verify::VerifyTally;
use crate::result::{Caveat, CpuUsage, DeviceIo, DirectionResult, Measurement, RampInfo};
use crate::stats::LatencyHistogram;
use crate::sys;
use crate::sys::buffer::AlignedBuf;
use crate::units::{format_size, mb_per_s};
use std::num::NonZeroU64;
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

pub(crate) mod cache;
mod pass;
mod read_back;
mod spare_pools;
mod summary;

use cache::{device_io, evict_and_prove};
use pass::run_pass;
use read_back::read_back;
use summary::summarise;

/// Write data pool per job: large enough that a deduplicating device sees
/// distinct blocks across any window a cache could hold cheaply.
const MIN_POOL_BYTES: u64 = 16 << 20;

/// Below this the device counters are too coarse to judge a cache.
const CACHE_CHECK_MIN_BYTES: u64 = 1 << 20;

impl<'a> MeasureTarget<'a> {
    /// The clock a measurement on this target times with.
    fn clock(&self) -> AnyClock<'a> {
        match self.sim {
            Some(device) => AnyClock::Sim(device.clock()),
            None => AnyClock::Wall(MonotonicClock::new()),
        }
    }

    /// One untimed read (verification read-back).
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        match self.sim {
            Some(device) => device
                .read(offset, buf)
                .map(|_| buf.len())
                .map_err(std::io::Error::other),
            None => Ok(rustix::io::pread(self.fd, buf, offset)?),
        }
    }
}

/// A measurement that ended with an I/O failure; what was measured up to
/// then is kept.
pub struct MeasureFailure {
    pub partial: Measurement,
    pub error: IoError,
}

/// Runs the workload of `spec` on `target`. `stop` is the user's Ctrl-C;
/// `progress` has one gauge per job (what it completed).
pub fn measure(
    target: &MeasureTarget<'_>,
    spec: &MeasureSpec,
    stop: &AtomicBool,
    progress: &[Gauge],
) -> Result<Measurement, Box<MeasureFailure>> {
    if let Some(why) = unrunnable(spec) {
        return Err(refusal(spec, why));
    }
    let mut warnings = Vec::new();
    if spec.buffered() && spec.rw.reads() {
        evict_and_prove(target.fd, spec, &mut warnings);
    }
    let written = written_bitmap(spec);
    let shared = SharedByPasses {
        target,
        spec,
        stop,
        written: &written,
        clock: target.clock(),
        ready: None,
        peers_stop: None,
    };
    let host_before = host_snapshot(target, spec);
    // The layer beneath a stacked device (a loop device's backing file):
    // its page cache can serve what the device's own does not.
    let backing_before = target
        .sim
        .is_none()
        .then(|| target.device?.loop_backing_file.as_deref())
        .flatten()
        .and_then(|f| crate::sys::page_cache::resident_share_of_file(std::path::Path::new(f)));
    let stat_before = target.device.and_then(|d| d.read_stat().ok());
    let passes = run_passes(&shared, progress, &mut warnings);
    let stat_after = target.device.and_then(|d| d.read_stat().ok());
    let host_after = host_snapshot(target, spec);
    let mut m = assemble(&shared, passes, stat_before, stat_after, warnings);
    let with_host = |m: &mut Measurement| {
        m.host = host_before.zip(host_after).map(|((a, resident), (b, _))| {
            let mut c = HostConditions::between(&a, &b, m.device_io.as_ref(), resident);
            c.backing_resident_share = backing_before;
            c
        });
    };
    match &mut m {
        Ok(m) => with_host(m),
        Err(f) => with_host(&mut f.partial),
    }
    m
}

/// The machine's state now, with the share of the measured region in the
/// page cache for buffered I/O over a region small enough to map (1 GiB);
/// `None` on a simulated card, whose clock no host load reaches.
fn host_snapshot(
    target: &MeasureTarget<'_>,
    spec: &MeasureSpec,
) -> Option<(crate::probe::host::HostSnapshot, Option<f64>)> {
    if target.sim.is_some() {
        return None;
    }
    let resident = (spec.buffered() && spec.span <= 1 << 30)
        .then(|| crate::sys::page_cache::resident_pages(target.fd, spec.offset, spec.span).ok())
        .flatten()
        .filter(|(_, pages)| *pages > 0)
        .map(|(r, pages)| r as f64 / pages as f64);
    Some((crate::probe::host::snapshot(), resident))
}

/// The failure of a spec that cannot be run: nothing was measured.
fn refusal(spec: &MeasureSpec, why: String) -> Box<MeasureFailure> {
    let kind = match spec.rw.reads() {
        true => OpKind::Read,
        false => OpKind::Write,
    };
    Box::new(MeasureFailure {
        partial: summarise(&JobRecord::default(), RampInfo::default(), 0, false),
        error: IoError::refused(kind, spec.offset, &why),
    })
}

/// One bit per block of the region, set as it is written, so verification
/// reads back only what was written; empty when nothing is verified.
fn written_bitmap(spec: &MeasureSpec) -> Vec<AtomicU64> {
    if spec.verify && spec.rw.writes() {
        (0..(spec.span / spec.block_size).div_ceil(64))
            .map(|_| AtomicU64::new(0))
            .collect()
    } else {
        Vec::new()
    }
}

/// What the warm-up and the counted pass of one measurement share.
struct SharedByPasses<'s, 'a> {
    target: &'s MeasureTarget<'a>,
    spec: &'s MeasureSpec,
    stop: &'s AtomicBool,
    written: &'s [AtomicU64],
    clock: AnyClock<'a>,
    /// Under MPI, for the counted pass: called once every job is built,
    /// right before the clock starts (the ranks leave it together).
    ready: Option<&'s (dyn Fn() + Sync)>,
    /// Under MPI, for the counted pass: set when the other ranks end it
    /// (a failure, `--stonewall`). It is the flag the jobs already poll
    /// when one of them fails, so stopping for a peer costs the timed path
    /// nothing.
    peers_stop: Option<&'s AtomicBool>,
}

/// What the two passes left behind, before it is summarised.
#[derive(Default)]
struct PassesOutcome {
    ramp: RampInfo,
    record: JobRecord,
    sync_ns: u64,
    /// The first I/O failure; the counted pass does not run after one in
    /// the warm-up.
    error: Option<IoError>,
    notes: Vec<Caveat>,
    /// Under MPI: what rank 0's merge needs.
    raw: Option<RawCounts>,
}

/// The warm-up (when asked for), then the counted pass unless the warm-up
/// failed or the user stopped.
fn run_passes(
    shared: &SharedByPasses<'_, '_>,
    progress: &[Gauge],
    warnings: &mut Vec<Caveat>,
) -> PassesOutcome {
    let mut outcome = PassesOutcome::default();
    if let Some(ramp_time) = shared.spec.ramp.filter(|d| !d.is_zero()) {
        warm_up(shared, ramp_time, progress.len(), &mut outcome, warnings);
    }
    let runs = outcome.error.is_none() && !shared.stop.load(Ordering::Relaxed);
    match coordinate::current() {
        None if runs => counted_pass(shared, progress, &mut outcome, warnings),
        None => {}
        Some(c) => coordinated_pass(c, shared, progress, &mut outcome, warnings, runs),
    }
    outcome
}

/// The counted pass of one rank of an MPI job: held until every rank is
/// at it, watched for the first rank to finish, and followed by what an
/// exact merge on rank 0 needs (histogram buckets, start and end on this
/// host's CLOCK_MONOTONIC). `runs` is false when this rank will not
/// measure (a failed warm-up, a signal): it still meets the others.
fn coordinated_pass(
    coordinator: &dyn Coordinator,
    shared: &SharedByPasses<'_, '_>,
    progress: &[Gauge],
    outcome: &mut PassesOutcome,
    warnings: &mut Vec<Caveat>,
    runs: bool,
) {
    let spec = shared.spec;
    let label = format!(
        "{} {} Q{}T{}",
        spec.rw.name(),
        format_size(spec.block_size),
        spec.queue_depth,
        spec.threads
    );
    let wall = AtomicBool::new(false);
    let (mono_at, clock_at) = (crate::engine::monotonic_now_ns(), shared.clock.now_ns());
    let moved = || total_bytes(progress);
    let first_done = coordinator.during_counted(&label, &wall, &moved, &mut |ready| {
        match runs {
            true => {
                let walled = SharedByPasses {
                    peers_stop: Some(&wall),
                    ready: Some(ready),
                    ..*shared
                };
                counted_pass(&walled, progress, outcome, warnings);
            }
            false => ready(),
        }
        outcome.error.is_some()
    });
    let record = &outcome.record;
    let start = record.start_ns.map_or(mono_at, |s| {
        mono_at.saturating_add(s.saturating_sub(clock_at))
    });
    let elapsed = record
        .start_ns
        .map_or(0, |s| record.last_complete_ns.saturating_sub(s))
        + outcome.sync_ns;
    outcome.raw = Some(RawCounts {
        read_buckets: record.read_latency.buckets(),
        write_buckets: record.write_latency.buckets(),
        start_mono_ns: start,
        end_mono_ns: start + elapsed,
        bytes_at_first_done: first_done,
        ops: 0,
    });
}

/// The warm-up pass: its figures are kept apart, its progress is not shown,
/// and what it left in the page cache is flushed or evicted before the
/// counted pass.
fn warm_up(
    shared: &SharedByPasses<'_, '_>,
    ramp_time: std::time::Duration,
    jobs: usize,
    outcome: &mut PassesOutcome,
    warnings: &mut Vec<Caveat>,
) {
    let SharedByPasses { target, spec, .. } = *shared;
    let idle = Gauge::many(jobs, false);
    let time = Some(ramp_time.as_nanos() as u64);
    let pass = run_pass(shared, false, time, None, &idle);
    outcome.ramp = RampInfo {
        ops: pass.record.ops(),
        bytes: pass.record.bytes(),
        elapsed_ns: pass.elapsed_ns(),
    };
    outcome.error = pass.error;
    outcome.notes = pass.notes;
    if spec.buffered() && spec.rw.writes() {
        let _ = rustix::fs::fdatasync(target.fd);
    }
    if spec.buffered() && spec.rw.reads() {
        // The warm-up filled the page cache with what the counted pass
        // is about to read.
        evict_and_prove(target.fd, spec, warnings);
    }
}

/// The counted pass, and for buffered writes the timed sync that charges
/// their write-back to it.
fn counted_pass(
    shared: &SharedByPasses<'_, '_>,
    progress: &[Gauge],
    outcome: &mut PassesOutcome,
    warnings: &mut Vec<Caveat>,
) {
    let SharedByPasses {
        target,
        spec,
        clock,
        ..
    } = *shared;
    let time = spec.time.map(|d| d.as_nanos() as u64);
    let pass = run_pass(shared, true, time, spec.size, progress);
    outcome.record = pass.record;
    outcome.error = pass.error;
    outcome.notes.extend(pass.notes);
    if spec.buffered() && spec.rw.writes() {
        outcome.sync_ns = timed_fdatasync(target.fd, clock, &mut outcome.record, warnings);
    }
}

/// Builds the measurement from the passes: the summary, what the device
/// saw, the verification read-back, and every warning once.
fn assemble(
    shared: &SharedByPasses<'_, '_>,
    passes: PassesOutcome,
    stat_before: Option<DiskStat>,
    stat_after: Option<DiskStat>,
    mut warnings: Vec<Caveat>,
) -> Result<Measurement, Box<MeasureFailure>> {
    let SharedByPasses { target, spec, .. } = *shared;
    for note in passes.notes {
        if !warnings.contains(&note) {
            warnings.push(note);
        }
    }
    let interrupted = shared.stop.load(Ordering::Relaxed);
    let (record, ramp) = (&passes.record, passes.ramp);
    let mut m = summarise(record, ramp, passes.sync_ns, interrupted);
    let ours_read = record.read_bytes + ramp_read_bytes(spec, ramp);
    let ours_write = record.write_bytes + (ramp.bytes - ramp_read_bytes(spec, ramp));
    m.device_io = device_io(
        target.device,
        stat_before,
        stat_after,
        ours_read,
        ours_write,
        &mut warnings,
    );
    if spec.verify && passes.error.is_none() && !interrupted {
        verify_written(shared, &mut m, &mut warnings);
    }
    m.warnings = warnings;
    m.raw = passes.raw;
    match passes.error {
        None => Ok(m),
        Some(error) => Err(Box::new(MeasureFailure { partial: m, error })),
    }
}

/// Reads back what was written, past the page cache for buffered I/O, and
/// records the tally (or a warning when the read-back itself failed).
fn verify_written(
    shared: &SharedByPasses<'_, '_>,
    m: &mut Measurement,
    warnings: &mut Vec<Caveat>,
) {
    let SharedByPasses {
        target,
        spec,
        stop,
        written,
        ..
    } = *shared;
    if spec.buffered() {
        let _ = rustix::fs::fadvise(
            target.fd,
            spec.offset,
            NonZeroU64::new(spec.span),
            rustix::fs::Advice::DontNeed,
        );
    }
    match read_back(target, spec, written, stop) {
        Ok(tally) => m.verify = Some(tally),
        Err(e) => warnings.push(Caveat::VerifyFailed {
            os_error: e.to_string(),
        }),
    }
    m.interrupted = stop.load(Ordering::Relaxed);
}

/// Why a spec cannot be run at all (the commands check their options, so
/// this is the last guard against a division by zero or a block that does
/// not fit its region).
fn unrunnable(spec: &MeasureSpec) -> Option<String> {
    if spec.block_size == 0 || spec.block_size > spec.span {
        return Some(format!(
            "a transfer of {} does not fit the region of {} measured",
            format_size(spec.block_size),
            format_size(spec.span)
        ));
    }
    if spec.threads == 0 || spec.queue_depth == 0 {
        return Some("a measurement needs at least one job and one I/O in flight".into());
    }
    if spec.offset.checked_add(spec.span).is_none() {
        return Some("the measured region ends beyond the largest offset".into());
    }
    None
}

/// Warm-up bytes that were reads: all of them for a read workload, none for
/// a write workload; mixed warm-ups are split by the mix.
fn ramp_read_bytes(spec: &MeasureSpec, ramp: RampInfo) -> u64 {
    match (spec.rw.reads(), spec.rw.writes()) {
        (true, false) => ramp.bytes,
        (false, true) => 0,
        _ => ramp.bytes * u64::from(spec.mix_read_percent) / 100,
    }
}

fn timed_fdatasync(
    fd: BorrowedFd<'_>,
    clock: AnyClock<'_>,
    record: &mut JobRecord,
    warnings: &mut Vec<Caveat>,
) -> u64 {
    let cpu_before = sys::thread_cpu_seconds();
    let start = clock.now_ns();
    if let Err(e) = rustix::fs::fdatasync(fd) {
        warnings.push(Caveat::SyncFailed {
            os_error: e.to_string(),
        });
    }
    let cpu_after = sys::thread_cpu_seconds();
    record.cpu.0 += cpu_after.0 - cpu_before.0;
    record.cpu.1 += cpu_after.1 - cpu_before.1;
    clock.now_ns() - start
}

#[cfg(test)]
mod tests;
