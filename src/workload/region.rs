//! The region a streaming workload (`stream`, `sustain`) runs on: the target
//! opened, a scratch file filled when the stream reads it (a fresh file
//! holds no data to read), and `--offset`/`--span` resolved against the
//! target's size and block. One home for a step both commands take.

use crate::medium::OpenTarget;
use crate::vocab::config::{TargetConfig, resolve_region};
use crate::vocab::options::IoMode;
use anyhow::Result;

/// Opens the target, fills a scratch file, and resolves the region; returns
/// the target with the region's offset and span.
pub fn open_region(
    tcfg: &TargetConfig,
    want_write: bool,
    area: u64,
    block: u64,
) -> Result<(OpenTarget, u64, u64)> {
    let scratch_size = scratch_size(tcfg.offset, tcfg.span, area);
    let mut target = crate::medium::open::open_target(tcfg, want_write, scratch_size)?;
    let direct = target.info.mode == IoMode::Direct;
    if target.scratch().is_some() && !want_write {
        let fill = crate::workload::prepare::whole_fill(0, scratch_size, tcfg.seed);
        crate::workload::prepare::prepare(&mut target, fill, false)?;
    }
    let (offset, span) = resolve_region(
        tcfg.offset,
        tcfg.span,
        target.info.size_bytes,
        &target.info.path,
        block,
        u64::from(target.info.logical_block_size),
        direct,
    )?;
    Ok((target, offset, span))
}

/// Size of the scratch file a directory target gets: up to the end of the
/// asked span, or of `area` when no span was given.
fn scratch_size(offset: Option<u64>, span: Option<u64>, area: u64) -> u64 {
    offset.unwrap_or(0).saturating_add(span.unwrap_or(area))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scratch_file_reaches_the_end_of_the_span() {
        assert_eq!(scratch_size(None, None, 64 << 20), 64 << 20);
        assert_eq!(scratch_size(Some(1 << 20), None, 64 << 20), 65 << 20);
        assert_eq!(
            scratch_size(Some(1 << 20), Some(8 << 20), 64 << 20),
            9 << 20
        );
        assert_eq!(scratch_size(Some(u64::MAX), Some(1), 0), u64::MAX);
    }
}
