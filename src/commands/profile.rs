//! `iocurve profile`: the main job. Four CrystalDiskMark-style rows, read
//! and write, each repeated; the test area prepared first; sizes and times
//! adapted so slow cards and fast drives both finish in a minute or two.
//! The plan and its measuring live in [`crate::workload::profile`].

use crate::cli::ProfileArgs;
use crate::output::Output;
use crate::store::Settings;
use crate::vocab::config::{DEFAULT_AREA, ProfileConfig};
use crate::workload::{parallel, profile};
use anyhow::Result;

pub fn profile(args: &ProfileArgs, store: &Settings) -> Result<i32> {
    let cfg = ProfileConfig::from_args(args)?;
    if cfg.parallel {
        return profile_parallel(&cfg, store);
    }
    let started_at = crate::workload::record::now_rfc3339();
    let area = cfg.size.unwrap_or(DEFAULT_AREA);
    // Writes are part of the profile where they are safe (see
    // `writes_may_be_asked`); elsewhere it measures reads and says why.
    let writes = !cfg.read_only && crate::medium::open::writes_may_be_asked(&cfg.target);
    let offset_asked = cfg.target.offset.unwrap_or(0);
    let mut target =
        crate::medium::open::open_target(&cfg.target, writes, offset_asked.saturating_add(area))?;
    let (offset, span) = profile::test_area(&cfg, &target, area)?;
    if writes {
        target.arm(&[(offset, span)])?;
    }
    let output = Output::for_target(store, &cfg.target);
    let announce = |r: &crate::result::RunResult| output.announce(r);
    let region = (offset, span);
    match profile::measure_all(&cfg, &mut target, region, writes, started_at, &announce) {
        Ok(mut result) => {
            crate::medium::restore::restore(&mut target, &mut result);
            let code = output.finish(&result);
            drop(target);
            code
        }
        Err(e) => Err(crate::medium::restore::restore_after_error(&mut target, e)),
    }
}

/// `iocurve profile A B ... --parallel`: every row of the profile, each
/// alone and together, on the same-sized test area of every target.
fn profile_parallel(cfg: &ProfileConfig, store: &Settings) -> Result<i32> {
    let output = Output::for_target(store, &cfg.target);
    let started_at = crate::workload::record::now_rfc3339();
    let result = parallel::profile_all(cfg, started_at, &|r| output.announce(r))?;
    output.finish(&result)
}
