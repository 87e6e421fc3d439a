//! The typed configurations of the measuring commands, with the checks that
//! need no argument parser: what `run`, `profile` and `curve` (and every
//! command's shared target settings) were asked to do, as plain values.
//! `cli` fills them from the command line; workloads, results and reports
//! read them. Checks that need the opened target (its size, its block size)
//! are [`resolve_region`] and [`check_layout`], called right after opening.

use crate::error::usage;
use crate::units::format_size;
use crate::vocab::options::EngineKind;
use crate::vocab::options::{BlockSize, IoMode, ProfilePreset, ReadMethod};
use crate::vocab::output::OutputChoice;
use crate::vocab::presets::ProfileRow;
use crate::vocab::{Pattern, Rw};
use anyhow::Result;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;

/// The default scratch file and test area: 1 GiB.
pub const DEFAULT_AREA: u64 = 1 << 30;
/// `run` without --size or --time stops after this long.
pub const DEFAULT_RUN_TIME_CAP: Duration = Duration::from_secs(10);
/// Largest transfer: the engines describe lengths with 32 bits.
pub const MAX_BLOCK_SIZE: u64 = 1 << 30;
/// Largest buffer memory one io_uring job may pin.
pub const MAX_QUEUE_BYTES: u64 = 1 << 30;

/// Target settings every measuring command shares.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TargetConfig {
    /// The target as given: a directory (measured through a scratch file), a
    /// regular file or a block device.
    pub path: PathBuf,
    /// O_DIRECT, or the page cache (`--buffered`). Recorded as `buffered`.
    #[serde(rename = "buffered", serialize_with = "is_buffered")]
    #[schemars(with = "bool")]
    pub io_mode: IoMode,
    /// `--destructive`: writes may destroy the data on the target.
    pub destructive: bool,
    /// Journal what a write test overwrites and restore it afterwards.
    pub preserve: bool,
    /// Where journals live (`None`: iocurve's data directory).
    pub journal_dir: Option<PathBuf>,
    /// `--offset`: start of the measured region, bytes; null: 0.
    pub offset: Option<u64>,
    /// `--span`: length of the measured region, bytes; null: the rest of the
    /// target (1 GiB for a directory).
    pub span: Option<u64>,
    /// Parallel jobs, each with its own queue.
    pub threads: u32,
    /// Seed of offsets, data and verify stamps (`--seed`; from the clock
    /// when not given). A string of
    /// decimal digits: JSON readers round integers above 2^53.
    /// Recorded at `config.seed`, beside the command's other settings (see
    /// `result::config::SeedPlace`), not under `target`.
    #[serde(skip)]
    pub seed: u64,
    /// True when `--seed` was given (a verify read can then trust it).
    pub seed_given: bool,
    /// `--json` was given (recorded; what is printed is `output`).
    pub json: bool,
    /// Write an HTML report of the run here when it ends.
    pub report: Option<PathBuf>,
    /// The engine asked for; `None` means auto.
    pub engine: Option<EngineKind>,
    /// `--sqpoll`: io_uring submits through a kernel thread polling its
    /// queue (the engine is then io_uring).
    pub sqpoll: bool,
    /// How and where the result is printed (not recorded with it).
    #[serde(skip)]
    pub output: OutputChoice,
}

/// A validated `iocurve run`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RunConfig {
    /// The target and its shared settings.
    pub target: TargetConfig,
    /// Access pattern: `read`, `write`, `randread`, `randwrite`, `rw` or
    /// `randrw`.
    pub rw: Rw,
    /// Read share of a mixed (`rw`, `randrw`) workload, percent.
    #[serde(rename = "mix_read_pct")]
    pub mix_read_percent: u8,
    /// `--bs` as given; `max` becomes a size only once the device is open
    /// ([`RunConfig::resolve_blocks`]). Recorded as `bs_max`.
    #[serde(rename = "bs_max", serialize_with = "is_device_max")]
    #[schemars(with = "bool")]
    pub bs: BlockSize,
    /// Block size, alignment and byte count as checked before opening
    /// (1 MiB stands in for `--bs max`).
    #[serde(flatten)]
    pub blocks: RunBlocks,
    /// I/Os in flight per job.
    pub queue_depth: u32,
    /// The engine used: `sync` (pread/pwrite), `uring` (io_uring), `mmap` or
    /// `stdio`.
    pub engine: EngineKind,
    /// Counted time, seconds; null: until `size` bytes moved.
    #[serde(serialize_with = "opt_secs")]
    #[schemars(with = "Option<f64>")]
    pub time: Option<Duration>,
    /// Warm-up before counting (executed, then discarded), seconds.
    #[serde(serialize_with = "secs")]
    #[schemars(with = "f64")]
    pub ramp: Duration,
    /// What write buffers were filled with.
    pub pattern: Pattern,
    /// `--verify`: blocks written self-describing and checked on reading.
    pub verify: bool,
    /// Repetitions of the measurement.
    pub repeat: u32,
    /// Neither --size nor --time was given: move the span once, for at most
    /// [`DEFAULT_RUN_TIME_CAP`].
    pub default_limits: bool,
    /// How reads reach the data (see [`crate::engine::access`]).
    pub method: ReadMethod,
    /// Bytes per fread call of the stdio method.
    pub stdio_bs: u64,
    /// `--align` as given (else it follows the block size). Recorded as
    /// `align_given`.
    #[serde(rename = "align_given", serialize_with = "is_given")]
    #[schemars(with = "bool")]
    pub align_asked: Option<u64>,
    /// Every target of a `--parallel` run, the first included.
    pub targets: Vec<PathBuf>,
    /// `--parallel`: the workload ran on every target at once (and each alone).
    pub parallel: bool,
}

/// The sizes of a run's requests: fixed by the arguments, except after
/// `--bs max`, where the device decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct RunBlocks {
    /// Transfer size per I/O, bytes.
    pub block_size: u64,
    /// Offset granularity of random I/O.
    pub align: u64,
    /// Bytes to move in the counted phase, a whole number of blocks.
    pub size: Option<u64>,
}

fn is_device_max<S: serde::Serializer>(bs: &BlockSize, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bool(*bs == BlockSize::DeviceMax)
}

fn is_given<S: serde::Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bool(v.is_some())
}

/// A validated `iocurve profile`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ProfileConfig {
    /// The target and its shared settings.
    pub target: TargetConfig,
    /// `--time`: counted time of each row, seconds; null: chosen so the profile
    /// takes about a minute (see `time_per_test_s`).
    #[serde(serialize_with = "opt_secs")]
    #[schemars(with = "Option<f64>")]
    pub time: Option<Duration>,
    /// `--size`: size of the test area, bytes; null: the default (see
    /// `test_area_bytes`).
    pub size: Option<u64>,
    /// Repetitions of each row.
    pub repeat: u32,
    /// `--read-only`: the write rows were skipped.
    pub read_only: bool,
    /// Every target of a `--parallel` profile, the first included.
    pub targets: Vec<PathBuf>,
    /// `--parallel`: each row ran on every target at once (and each alone).
    pub parallel: bool,
    /// The preset the rows come from, or none when `--tests` named them.
    pub preset: Option<ProfilePreset>,
    /// The rows measured, in order (`SEQ1M Q8T1`, ...).
    pub rows: Vec<ProfileRow>,
}

fn is_buffered<S: serde::Serializer>(mode: &IoMode, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bool(*mode == IoMode::Buffered)
}

impl TargetConfig {
    /// Through the page cache instead of O_DIRECT.
    pub fn buffered(&self) -> bool {
        self.io_mode == IoMode::Buffered
    }
}

pub(crate) fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

pub(crate) fn opt_secs<S: serde::Serializer>(
    d: &Option<Duration>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_f64(d.as_secs_f64()),
        None => s.serialize_none(),
    }
}

/// The seed of a run given no `--seed`: from the clock, as every option's
/// help says (recorded with the result, so the run can be repeated).
pub fn default_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
}

/// Picks the engine: io_uring is needed for more than one I/O in flight.
pub fn choose_engine(asked: Option<EngineKind>, queue_depth: u32) -> Result<EngineKind> {
    match (asked, queue_depth) {
        (Some(EngineKind::Sync), qd) if qd > 1 => Err(usage(format!(
            "--engine sync does one I/O at a time, so --qd {qd} needs --engine uring (or leave --engine at auto)"
        ))),
        (Some(kind), _) => Ok(kind),
        (None, 1) => Ok(EngineKind::Sync),
        (None, _) => Ok(EngineKind::Uring),
    }
}

/// A validated `iocurve curve`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CurveConfig {
    /// The first target and its shared settings.
    pub target: TargetConfig,
    /// Every target, the first included.
    pub targets: Vec<PathBuf>,
    /// Patterns swept: `read`, `write`, `randread`, `randwrite`.
    pub patterns: Vec<Rw>,
    /// `--sizes`: transfer sizes, bytes; null: the logical block size up to 16
    /// MiB, doubling.
    pub sizes: Option<Vec<u64>>,
    /// I/Os in flight per job.
    pub queue_depth: u32,
    /// The engine used: `sync` (pread/pwrite) or `uring` (io_uring).
    pub engine: EngineKind,
    /// Repetitions of each point.
    pub repeat: u32,
    /// Counted time of each point, seconds.
    #[serde(serialize_with = "secs")]
    #[schemars(with = "f64")]
    pub time: Duration,
    /// Warm-up before each point, seconds.
    #[serde(serialize_with = "secs")]
    #[schemars(with = "f64")]
    pub ramp: Duration,
    /// Most bytes one point moves, whichever of this and `time` ends first.
    pub point_bytes: u64,
    /// `--csv` was given (recorded; not part of the measurement).
    pub csv: bool,
    /// `--svg`: where the chart was written; null: no chart.
    pub svg: Option<PathBuf>,
}

/// The default sweep: the logical block size up to 16 MiB, doubling.
pub fn default_sizes(logical_block: u64) -> Vec<u64> {
    let mut sizes = Vec::new();
    let mut size = logical_block.max(1);
    while size <= 16 << 20 {
        sizes.push(size);
        size *= 2;
    }
    sizes
}

/// The measured region of an opened target, checked against its size and
/// block size: `(offset, span)`.
pub fn resolve_region(
    offset: Option<u64>,
    span: Option<u64>,
    target_size: u64,
    target_name: &str,
    block_size: u64,
    logical_block: u64,
    direct: bool,
) -> Result<(u64, u64)> {
    if target_size == 0 {
        return Err(usage(format!(
            "{target_name} is empty (0 bytes): there is nothing to measure"
        )));
    }
    let offset = offset.unwrap_or(0);
    if offset >= target_size {
        return Err(usage(format!(
            "--offset {} is beyond the end of {target_name} ({}); give an offset below its size",
            format_size(offset),
            format_size(target_size)
        )));
    }
    let span = span.unwrap_or(target_size - offset);
    if offset.checked_add(span).is_none_or(|end| end > target_size) {
        return Err(usage(format!(
            "--offset + --span ({}) exceeds the size of {target_name} ({}): the target is smaller than the region asked for",
            format_size(offset.saturating_add(span)),
            format_size(target_size)
        )));
    }
    if block_size > span {
        return Err(usage(format!(
            "--bs {} is larger than the region measured ({}): choose a smaller --bs or a larger --span",
            format_size(block_size),
            format_size(span)
        )));
    }
    if direct {
        for (name, value) in [("--bs", block_size), ("--offset", offset)] {
            if value % logical_block != 0 {
                return Err(usage(format!(
                    "{name} {value} is not a multiple of the logical block size {logical_block} of {target_name}, which O_DIRECT needs: use a multiple of {logical_block}, or pass --buffered to go through the page cache"
                )));
            }
        }
    }
    Ok((offset, span))
}

/// Checks of a run's layout that need the opened target: random offsets
/// must stay aligned for O_DIRECT, and parallel sequential jobs each need a
/// block of the region.
pub fn check_layout(
    cfg: &RunConfig,
    blocks: RunBlocks,
    span: u64,
    logical_block: u64,
    direct: bool,
) -> Result<()> {
    if direct && !blocks.align.is_multiple_of(logical_block) {
        return Err(usage(format!(
            "--align {} is not a multiple of the logical block size {logical_block}, which O_DIRECT needs: use a multiple of {logical_block}, or pass --buffered",
            blocks.align
        )));
    }
    let blocks = span / blocks.block_size;
    if !cfg.rw.is_random() && blocks < u64::from(cfg.target.threads) {
        return Err(usage(format!(
            "--threads {} sequential jobs need at least one --bs block each, but the region holds {blocks}: use fewer threads or a larger --span",
            cfg.target.threads
        )));
    }
    Ok(())
}

impl RunConfig {
    /// The request sizes once the target is open: `--bs max` takes the
    /// device's largest request (`device_max`, from max_sectors_kb), and the
    /// alignment and byte count follow it; a fixed `--bs` keeps what was
    /// checked before opening.
    pub fn resolve_blocks(&self, device_max: Option<u64>, target_name: &str) -> Result<RunBlocks> {
        if self.bs != BlockSize::DeviceMax {
            return Ok(self.blocks);
        }
        let bs = device_max.filter(|&b| b > 0).ok_or_else(|| {
            usage(format!(
                "--bs max needs the largest request size (queue/max_sectors_kb) of the device beneath {target_name}, and none was found: give a size such as 1M"
            ))
        })?;
        Ok(RunBlocks {
            block_size: bs,
            align: self.align_asked.unwrap_or(bs),
            size: self.blocks.size.map(|size| (size / bs).max(1) * bs),
        })
    }

    /// This configuration as it ran, with the request sizes resolved.
    pub fn with_blocks(&self, blocks: RunBlocks) -> RunConfig {
        RunConfig {
            blocks,
            ..self.clone()
        }
    }
}
