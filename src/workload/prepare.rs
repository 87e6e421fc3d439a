//! The preparation pass: the test area filled with incompressible data
//! before anything is timed, so that no figure reads unwritten blocks.

use crate::interrupt;
use crate::live::progress;
use crate::medium::OpenTarget;
use crate::medium::scratch::{FillPlan, fill_region};
use anyhow::Result;

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
