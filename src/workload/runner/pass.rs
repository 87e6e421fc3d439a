//! One pass of a measurement's jobs over the target: every job built on a
//! thread of its own, all started at one shared instant and stopped by one
//! deadline, their records merged. Apart from [`super`], which sequences
//! the passes and gathers what surrounds them.

use super::spare_pools::{self, PoolKey};
use super::summary::merge_record;
use super::{MIN_POOL_BYTES, SharedByPasses};
use crate::engine::sim::SimEngine;
use crate::engine::{AnyClock, AnyEngine, Clock, Engine, EngineSetup, IoError, OpKind};
use crate::medium::MeasureTarget;
use crate::result::Caveat;
use crate::sys::buffer::AlignedBuf;
use crate::workload::gauge::Gauge;
use crate::workload::job::{Job, JobPlan, JobRecord, Stops};
use crate::workload::spec::MeasureSpec;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The merged outcome of one pass.
pub(super) struct PassOutcome {
    pub(super) record: JobRecord,
    pub(super) error: Option<IoError>,
    pub(super) notes: Vec<Caveat>,
}

impl PassOutcome {
    pub(super) fn elapsed_ns(&self) -> u64 {
        self.record
            .start_ns
            .map_or(0, |s| self.record.last_complete_ns.saturating_sub(s))
    }
}

/// Splits the region among the jobs: sequential jobs get consecutive slices
/// (so together they sweep the region once), random jobs share all of it.
/// Validation guarantees at least one block per sequential job.
pub(super) fn job_region(spec: &MeasureSpec, index: u32) -> (u64, u64) {
    if spec.rw.is_random() || spec.threads == 1 {
        return (spec.offset, spec.span);
    }
    let blocks = spec.span / spec.block_size;
    let per_job = blocks / u64::from(spec.threads);
    let start = spec.offset + u64::from(index) * per_job * spec.block_size;
    (start, per_job * spec.block_size)
}

/// Splits the byte budget into whole blocks; the first job takes the rest.
pub(super) fn job_budget(spec: &MeasureSpec, size: u64, index: u32) -> u64 {
    let blocks = size / spec.block_size;
    let threads = u64::from(spec.threads);
    let share = blocks / threads + u64::from(index == 0) * (blocks % threads);
    share * spec.block_size
}

/// One pass of every job over the target: counted or not, bounded by
/// `time_ns`, `size` or both, reporting to `progress`.
pub(super) fn run_pass(
    shared: &SharedByPasses<'_, '_>,
    counted: bool,
    time_ns: Option<u64>,
    size: Option<u64>,
    progress: &[Gauge],
) -> PassOutcome {
    let SharedByPasses {
        target,
        spec,
        stop,
        written,
        clock,
        ready,
        peers_stop,
    } = *shared;
    let own_abort = AtomicBool::new(false);
    let abort = match peers_stop {
        Some(flag) if counted => flag,
        _ => &own_abort,
    };
    let stops = Stops { user: stop, abort };
    let barrier = Barrier::new(spec.threads as usize);
    let start = AtomicU64::new(0);
    let outcomes: Vec<std::thread::Result<JobOutcome>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..spec.threads)
            .map(|index| {
                let (region_start, region_len) = job_region(spec, index);
                let plan = JobPlan {
                    index,
                    region_start,
                    region_len,
                    budget: size.map(|s| job_budget(spec, s, index)),
                    time_ns,
                    counted,
                };
                let counter = &progress[index as usize % progress.len()];
                let shared = Shared {
                    barrier: &barrier,
                    start: &start,
                    stops,
                    written,
                    clock,
                    ready: ready.filter(|_| counted),
                };
                scope.spawn(move || run_one_job(target, spec, plan, counter, shared))
            })
            .collect();
        handles.into_iter().map(|h| h.join()).collect()
    });
    merge_outcomes(outcomes)
}

/// The jobs' outcomes as one: their records merged, the first error (a
/// thread that panicked counts as one) and every note.
fn merge_outcomes(outcomes: Vec<std::thread::Result<JobOutcome>>) -> PassOutcome {
    let mut merged = PassOutcome {
        record: JobRecord::default(),
        error: None,
        notes: Vec::new(),
    };
    for outcome in outcomes {
        match outcome {
            Ok(o) => {
                merge_record(&mut merged.record, &o.record);
                if merged.error.is_none() {
                    merged.error = o.error;
                }
                merged
                    .notes
                    .extend(o.note.map(|r| Caveat::UringUnregistered {
                        buffers: r.buffers,
                        file: r.file,
                    }));
            }
            Err(_) => {
                let error = std::io::Error::other(
                    "internal error: a measuring thread panicked; please report this",
                );
                merged.error.get_or_insert(IoError {
                    kind: OpKind::Read,
                    offset: 0,
                    len: 0,
                    error,
                });
            }
        }
    }
    merged
}

/// What the jobs of a pass share.
#[derive(Clone, Copy)]
struct Shared<'a> {
    barrier: &'a Barrier,
    start: &'a AtomicU64,
    stops: Stops<'a>,
    written: &'a [AtomicU64],
    clock: AnyClock<'a>,
    ready: Option<&'a (dyn Fn() + Sync)>,
}

struct JobOutcome {
    record: JobRecord,
    error: Option<IoError>,
    note: Option<crate::engine::Registered>,
}

fn run_one_job<'a>(
    target: &MeasureTarget<'a>,
    spec: &MeasureSpec,
    plan: JobPlan,
    counter: &Gauge,
    shared: Shared<'a>,
) -> JobOutcome {
    let mut job = Job::new(spec, plan, shared.stops, counter, Some(shared.written));
    let engine = build_engine(target, spec, plan.index, shared.clock);
    // Every job waits here, built or not, so no one waits forever.
    if shared.barrier.wait().is_leader() {
        if let Some(ready) = shared.ready {
            ready();
        }
        shared.start.store(shared.clock.now_ns(), Ordering::SeqCst);
    }
    shared.barrier.wait();
    let mut engine = match engine {
        Ok(engine) => engine,
        Err(error) => {
            shared.stops.abort.store(true, Ordering::Relaxed);
            let error = IoError {
                kind: OpKind::Read,
                offset: plan.region_start,
                len: 0,
                error,
            };
            return JobOutcome {
                record: job.record,
                error: Some(error),
                note: None,
            };
        }
    };
    job.start_at(shared.start.load(Ordering::SeqCst));
    let result = engine.run(&mut job);
    job.finish();
    if result.is_err() {
        shared.stops.abort.store(true, Ordering::Relaxed);
    }
    let note = engine.note();
    // The clock has stopped: the pool goes back for the next pass.
    if let (Some(key), Some(pool)) = (pool_key(target, spec, plan.index), engine.into_pool()) {
        spare_pools::give_back(key, pool);
    }
    JobOutcome {
        record: job.record,
        error: result.err(),
        note,
    }
}

/// What the write data pool of job `index` holds; None for reads, which
/// have no pool to speak of.
fn pool_key(target: &MeasureTarget<'_>, spec: &MeasureSpec, index: u32) -> Option<PoolKey> {
    let bs = spec.block_size;
    spec.rw.writes().then(|| PoolKey {
        pattern: spec.pattern,
        seed: spec.seed.wrapping_add(u64::from(index)),
        len: ((MIN_POOL_BYTES.max(2 * bs * u64::from(spec.queue_depth)) / bs) * bs) as usize,
        align: target.align,
    })
}

fn build_engine<'a>(
    target: &MeasureTarget<'a>,
    spec: &MeasureSpec,
    index: u32,
    clock: AnyClock<'a>,
) -> std::io::Result<AnyEngine<'a>> {
    let bs = spec.block_size;
    let pool = match pool_key(target, spec, index) {
        Some(key) => spare_pools::take(key),
        // Reads never touch the pool: one block keeps the engines' layout.
        None => AlignedBuf::new(bs as usize, target.align),
    };
    if let Some(device) = target.sim {
        return Ok(AnyEngine::Sim(SimEngine::new(device, bs as usize, pool)));
    }
    let setup = EngineSetup {
        fd: target.fd,
        block_size: bs as usize,
        queue_depth: spec.queue_depth as usize,
        align: target.align,
        pool,
        clock,
    };
    AnyEngine::build(spec.engine, setup, spec.sqpoll)
}
