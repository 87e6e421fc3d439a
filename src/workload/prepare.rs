//! The preparation pass: the test area filled with incompressible data
//! before anything is timed, so that no figure reads unwritten blocks.

use crate::interrupt;
use crate::live::progress;
use crate::medium::OpenTarget;
use crate::medium::scratch::{FillPlan, fill_region};
use crate::vocab::Pattern;
use anyhow::Result;
use std::time::Duration;

/// A capped pass stops after this long...
pub const PREP_TIME_LIMIT: Duration = Duration::from_secs(15);
/// ...but always writes at least this much (or the whole area if smaller).
pub const PREP_MIN_BYTES: u64 = 64 << 20;

/// The pass writes with a seed of its own, so that what it leaves differs
/// from what a measurement with the run's seed writes over it.
fn fill_seed(seed: u64) -> u64 {
    seed ^ 0x5eed
}

/// A pass over all `bytes` from `offset`, however long it takes: a scratch
/// file a measurement reads must hold data everywhere it reads.
pub fn whole_fill(offset: u64, bytes: u64, seed: u64) -> FillPlan {
    FillPlan {
        offset,
        bytes,
        min_bytes: bytes,
        time_limit: None,
        pattern: Pattern::Random,
        seed: fill_seed(seed),
    }
}

/// A pass over the test area of a sweep or profile, cut short after
/// [`PREP_TIME_LIMIT`] once it has written [`PREP_MIN_BYTES`]: a slow card
/// then measures a smaller area instead of filling for minutes.
pub fn capped_fill(offset: u64, span: u64, seed: u64) -> FillPlan {
    FillPlan {
        offset,
        bytes: span,
        min_bytes: PREP_MIN_BYTES.min(span),
        time_limit: Some(PREP_TIME_LIMIT),
        pattern: Pattern::Random,
        seed: fill_seed(seed),
    }
}

/// The preparation pass: fills the region with random data before anything
/// is measured. A scratch file is always filled; another target only when
/// `writable_too` is set and writes to it are allowed. Returns the bytes
/// written, or `None` when nothing was.
pub fn prepare(target: &mut OpenTarget, plan: FillPlan, writable_too: bool) -> Result<Option<u64>> {
    let bar = progress::bar("preparing test area", progress::Goal::Bytes(plan.bytes));
    let stop = interrupt::stop_flag();
    let stats = if let Some(scratch) = target.scratch() {
        let stats = scratch.fill(&plan, |n| bar.set_position(n), stop)?;
        let size = scratch.size();
        target.set_size(size);
        stats
    } else if writable_too && target.may_write() {
        fill_region(
            target.writer()?.file(),
            &plan,
            |n| bar.set_position(n),
            stop,
        )?
    } else {
        return Ok(None);
    };
    bar.finish_and_clear();
    Ok(Some(stats.bytes))
}
