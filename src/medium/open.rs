//! Opening a command's target: the one place the write-safety rules run
//! for a measuring command, and the refusals that name their fix.

use crate::interrupt;
use crate::medium;
use crate::medium::{OpenTarget, TargetRequest};
use crate::vocab::config::TargetConfig;
use anyhow::Result;

/// Opens the target of a command after its arguments were validated. The
/// safety rules run here, once, and decide what the target's write gate
/// allows (see [`crate::medium::gate`]).
pub fn open_target(cfg: &TargetConfig, want_write: bool, scratch_size: u64) -> Result<OpenTarget> {
    interrupt::install();
    medium::open(&TargetRequest {
        path: cfg.path.clone(),
        want_write,
        buffered: cfg.buffered(),
        destructive: cfg.destructive,
        preserve: cfg.preserve,
        journal_dir: cfg.journal_dir.clone(),
        scratch_size,
    })
}

/// Refuses a `sim:` target where `what` needs a real file or device (the
/// simulator answers only on its own virtual clock, through the engines).
pub fn refuse_simulated(path: &std::path::Path, what: &str) -> Result<()> {
    match medium::is_simulated(path) {
        true => Err(crate::error::usage(format!(
            "{what} needs a real file, directory or device, and {} is a simulated card (its whole identity is the text after sim:): measure it with profile, run, curve, stream, sustain, surface, endure or the flash commands",
            path.display()
        ))),
        false => Ok(()),
    }
}

/// Whether the writes of a test may be asked for on this target at all: in
/// a directory (a scratch file), on a simulated card (nobody's data), or
/// with `--destructive` or `--preserve` (the safety check has the last word).
pub fn writes_may_be_asked(cfg: &TargetConfig) -> bool {
    cfg.path.is_dir() || medium::is_simulated(&cfg.path) || cfg.destructive || cfg.preserve
}

/// Why a command that was not allowed to write skipped its write tests, and
/// what would allow them: `--preserve` or `--destructive`, or nothing at all
/// while the device is in use (both would be refused then).
pub fn writes_skipped_because(target: &OpenTarget) -> crate::result::SkipReason {
    let busy = target
        .info
        .device
        .as_ref()
        .filter(|_| target.info.kind == crate::result::TargetKind::BlockDevice)
        .and_then(|d| crate::medium::write_rules::why_busy(d).ok().flatten());
    crate::result::SkipReason::WritesNotAllowed {
        path: target.info.path.clone(),
        busy,
    }
}
