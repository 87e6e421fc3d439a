//! Checks of `iocurve run` that need the whole [`RunConfig`]: the area the
//! run may touch, and what `--parallel` cannot do. Usage errors, before any
//! target is opened.

use crate::cli::config::{DEFAULT_AREA, RunConfig};
use crate::cli::options::ReadMethod;
use anyhow::Result;

/// The end of the region the run may touch (`--offset` + `--span`), which
/// the target must be at least as large as.
pub fn area(cfg: &RunConfig) -> Result<u64> {
    cfg.target
        .offset
        .unwrap_or(0)
        .checked_add(cfg.target.span.unwrap_or(DEFAULT_AREA))
        .ok_or_else(|| {
            crate::error::usage("--offset + --span is beyond any device: give smaller values")
        })
}

/// `--parallel` reads with pread only: mmap and stdio measure one target
/// at a time.
pub fn check_parallel(cfg: &RunConfig) -> Result<()> {
    if cfg.method != ReadMethod::Pread {
        return Err(crate::error::usage(
            "--method mmap or stdio measures one target at a time: leave out --parallel",
        ));
    }
    Ok(())
}
