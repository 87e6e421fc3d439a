//! Arguments checked and turned into plain configurations, before anything
//! is opened. Checks that need the target (its size, its block size) are in
//! [`resolve_region`], called right after the target is opened; the one
//! value only the device knows, `--bs max`, is turned into sizes by
//! [`RunConfig::resolve_blocks`], which returns them and leaves the
//! configuration as it was.

use super::options::{BlockSize, ProfilePreset, ReadMethod};
use super::{CurveArgs, ProfileArgs, RunArgs, TargetArgs};
use crate::engine::EngineKind;
use crate::error::usage;
use crate::target::IoMode;
use crate::units::format_size;
use crate::workload::profile::{ProfileRow, preset_rows};
use crate::workload::{Pattern, Rw};
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
#[derive(Debug, Clone, Serialize)]
pub struct TargetConfig {
    pub path: PathBuf,
    /// O_DIRECT, or the page cache (`--buffered`). Recorded as `buffered`.
    #[serde(rename = "buffered", serialize_with = "is_buffered")]
    pub io_mode: IoMode,
    pub destructive: bool,
    /// Journal what a write test overwrites and restore it afterwards.
    pub preserve: bool,
    /// Where journals live (`None`: iocurve's data directory).
    pub journal_dir: Option<PathBuf>,
    pub offset: Option<u64>,
    pub span: Option<u64>,
    pub threads: u32,
    pub seed: u64,
    /// True when `--seed` was given (a verify read can then trust it).
    pub seed_given: bool,
    /// `--json` was given (recorded; what is printed is `output`).
    pub json: bool,
    /// Write an HTML report of the run here when it ends.
    pub report: Option<PathBuf>,
    /// The engine asked for; `None` means auto.
    pub engine: Option<EngineKind>,
    /// How and where the result is printed (not recorded with it).
    #[serde(skip)]
    pub output: crate::output::OutputChoice,
}

/// A validated `iocurve run`.
#[derive(Debug, Clone, Serialize)]
pub struct RunConfig {
    pub target: TargetConfig,
    pub rw: Rw,
    pub mix_read_percent: u8,
    /// `--bs` as given; `max` becomes a size only once the device is open
    /// ([`RunConfig::resolve_blocks`]). Recorded as `bs_max`.
    #[serde(rename = "bs_max", serialize_with = "is_device_max")]
    pub bs: BlockSize,
    /// Block size, alignment and byte count as checked before opening
    /// (1 MiB stands in for `--bs max`).
    #[serde(flatten)]
    pub blocks: RunBlocks,
    pub queue_depth: u32,
    pub engine: EngineKind,
    #[serde(serialize_with = "opt_secs")]
    pub time: Option<Duration>,
    #[serde(serialize_with = "secs")]
    pub ramp: Duration,
    pub pattern: Pattern,
    pub verify: bool,
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
    pub align_asked: Option<u64>,
    /// Every target of a `--parallel` run, the first included.
    pub targets: Vec<PathBuf>,
    pub parallel: bool,
}

/// The sizes of a run's requests: fixed by the arguments, except after
/// `--bs max`, where the device decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RunBlocks {
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
#[derive(Debug, Clone, Serialize)]
pub struct ProfileConfig {
    pub target: TargetConfig,
    #[serde(serialize_with = "opt_secs")]
    pub time: Option<Duration>,
    pub size: Option<u64>,
    pub repeat: u32,
    pub read_only: bool,
    /// Every target of a `--parallel` profile, the first included.
    pub targets: Vec<PathBuf>,
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

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

fn opt_secs<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_f64(d.as_secs_f64()),
        None => s.serialize_none(),
    }
}

/// The shared target settings of a command with no configuration of its
/// own beyond them.
pub fn target_config_of(args: &TargetArgs) -> Result<TargetConfig> {
    target_config(args)
}

pub(crate) fn target_config(args: &TargetArgs) -> Result<TargetConfig> {
    if args.span == Some(0) {
        return Err(usage("--span 0 is empty: give a length such as 64M or 1G"));
    }
    Ok(TargetConfig {
        path: args.target.clone(),
        io_mode: match args.buffered {
            true => IoMode::Buffered,
            false => IoMode::Direct,
        },
        destructive: args.destructive,
        preserve: args.preserve,
        journal_dir: args.journal_dir.clone(),
        offset: args.offset,
        span: args.span,
        threads: args.threads.unwrap_or(1),
        seed: args.seed.unwrap_or_else(default_seed),
        seed_given: args.seed.is_some(),
        json: args.output.json,
        report: args.report.clone(),
        engine: args.engine.asked(),
        output: args.output.choice(),
    })
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

impl RunConfig {
    pub fn from_args(args: &RunArgs) -> Result<RunConfig> {
        let mut target = target_config(&args.target)?;
        target.output = args.live.apply(target.output);
        let targets = several_targets(&args.target.target, &args.more_targets, args.parallel)?;
        let bs = checked_block_size(args.bs)?;
        check_run_limits(args.size, args.time, bs)?;
        let engine = method_engine(args.method, args.stdio_bs, args.rw, args.qd)?
            .map_or_else(|| choose_engine(target.engine, args.qd), Ok)?;
        check_queue_memory(engine, bs, args.qd)?;
        let align = checked_align(args.align, bs)?;
        if args.verify {
            check_verify(args.rw, bs, align)?;
        }
        let pattern =
            Pattern::parse(&args.pattern).map_err(|e| usage(format!("--pattern: {e}")))?;
        Ok(RunConfig {
            target,
            rw: args.rw,
            mix_read_percent: args.mix,
            bs: args.bs,
            blocks: RunBlocks {
                block_size: bs,
                align,
                size: args.size,
            },
            queue_depth: args.qd,
            engine,
            time: run_time(args.size, args.time),
            ramp: args.ramp,
            pattern,
            verify: args.verify,
            repeat: args.repeat,
            default_limits: args.size.is_none() && args.time.is_none(),
            method: args.method,
            stdio_bs: args.stdio_bs,
            align_asked: args.align,
            targets,
            parallel: args.parallel,
        })
    }

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

/// The block size the checks before opening use; `max` stands in as 1 MiB.
fn checked_block_size(bs: BlockSize) -> Result<u64> {
    let bytes = bs.before_open();
    if bytes == 0 {
        return Err(usage(
            "--bs 0 moves nothing: give a transfer size such as 4k or 1M",
        ));
    }
    if bytes > MAX_BLOCK_SIZE {
        return Err(usage(format!(
            "--bs {} is larger than the largest transfer, 1 GiB",
            format_size(bytes)
        )));
    }
    Ok(bytes)
}

/// `--size` must move whole blocks, and neither limit may be zero.
fn check_run_limits(size: Option<u64>, time: Option<Duration>, bs: u64) -> Result<()> {
    if let Some(size) = size {
        if size == 0 {
            return Err(usage(
                "--size 0 moves nothing: give a byte count such as 64M, or use --time",
            ));
        }
        if size % bs != 0 {
            return Err(usage(format!(
                "--size {} is not a whole number of --bs {} blocks: use a multiple of the block size",
                size, bs
            )));
        }
    }
    if time == Some(Duration::ZERO) {
        return Err(usage(
            "--time 0 measures nothing: give a duration such as 5s",
        ));
    }
    Ok(())
}

/// The counted time: as given, or capped when neither limit was given.
fn run_time(size: Option<u64>, time: Option<Duration>) -> Option<Duration> {
    match (size, time) {
        (None, None) => Some(DEFAULT_RUN_TIME_CAP),
        (_, t) => t,
    }
}

/// io_uring pins every buffer of the queue; keep that memory bounded.
fn check_queue_memory(engine: EngineKind, bs: u64, qd: u32) -> Result<()> {
    let bytes = bs * u64::from(qd);
    if engine == EngineKind::Uring && bytes > MAX_QUEUE_BYTES {
        return Err(usage(format!(
            "--qd {qd} × --bs {} needs {} of buffers per job; keep it at most 1 GiB",
            format_size(bs),
            format_size(bytes)
        )));
    }
    Ok(())
}

/// `--align`, defaulting to the block size.
fn checked_align(align: Option<u64>, bs: u64) -> Result<u64> {
    match align.unwrap_or(bs) {
        0 => Err(usage(
            "--align 0 is not a granularity: give one such as 4k (default: --bs)",
        )),
        align => Ok(align),
    }
}

/// `--verify` stamps whole 512-byte sectors, one direction at a time.
fn check_verify(rw: Rw, bs: u64, align: u64) -> Result<()> {
    if !align.is_multiple_of(bs) {
        return Err(usage(
            "--verify checks whole blocks, so --align must be a multiple of --bs",
        ));
    }
    if !bs.is_multiple_of(512) {
        return Err(usage(format!(
            "--verify stamps 512-byte sectors, so --bs must be a multiple of 512 (got {bs})"
        )));
    }
    if rw.is_mixed() {
        return Err(usage(
            "--verify works with one direction at a time: write with --rw write or randwrite, then check with --rw read",
        ));
    }
    Ok(())
}

/// Every target of a command that takes more than one with `--parallel`.
pub fn several_targets(
    first: &std::path::Path,
    more: &[PathBuf],
    parallel: bool,
) -> Result<Vec<PathBuf>> {
    if !more.is_empty() && !parallel {
        return Err(usage(format!(
            "{} targets were given: pass --parallel to run them at the same time (or name one target)",
            more.len() + 1
        )));
    }
    let mut all = vec![first.to_path_buf()];
    all.extend(more.iter().cloned());
    if parallel && all.len() < 2 {
        return Err(usage(
            "--parallel needs at least two targets, e.g. /dev/sdb /dev/sdc",
        ));
    }
    Ok(all)
}

/// The engine of a `--method` other than pread (which leaves the choice to
/// `--engine`); those methods read only, one request at a time.
fn method_engine(method: ReadMethod, stdio_bs: u64, rw: Rw, qd: u32) -> Result<Option<EngineKind>> {
    let method_name = method.as_str();
    if method == ReadMethod::Pread {
        return Ok(None);
    }
    if rw.writes() {
        return Err(usage(format!(
            "--method {method_name} only reads: use --rw read or randread, or --method pread for writes"
        )));
    }
    if qd > 1 {
        return Err(usage(format!(
            "--method {method_name} does one read at a time: leave --qd at 1"
        )));
    }
    if method == ReadMethod::Mmap {
        return Ok(Some(EngineKind::Mmap));
    }
    match u32::try_from(stdio_bs) {
        Ok(call) if call > 0 => Ok(Some(EngineKind::Stdio(call))),
        _ => Err(usage("--stdio-bs must be 1 byte to 4 GiB, e.g. 1 or 4k")),
    }
}

impl ProfileConfig {
    pub fn from_args(args: &ProfileArgs) -> Result<ProfileConfig> {
        let mut target = target_config(&args.target)?;
        target.output = args.live.apply(target.output);
        let (preset, rows) = profile_rows(args, args.target.threads);
        if target.engine == Some(EngineKind::Sync) && rows.iter().any(|r| r.queue_depth > 1) {
            return Err(usage(
                "the profile's rows with a queue depth above 1 need io_uring: leave --engine at auto or pass --engine uring",
            ));
        }
        if args.time == Some(Duration::ZERO) {
            return Err(usage(
                "--time 0 measures nothing: give a duration such as 2s",
            ));
        }
        if let Some(size) = args.size {
            if size < (2 << 20) {
                return Err(usage(format!(
                    "--size {} is too small for a profile: give at least 2 MiB (2M)",
                    format_size(size)
                )));
            }
        }
        Ok(ProfileConfig {
            target,
            time: args.time,
            size: args.size,
            repeat: args.repeat,
            read_only: args.read_only,
            targets: several_targets(&args.target.target, &args.more_targets, args.parallel)?,
            parallel: args.parallel,
            preset,
            rows,
        })
    }
}

/// The rows of `--tests`, else of `--preset`; `--threads N` gives every
/// row N jobs (1 too: a preset's T16 row then runs one job).
fn profile_rows(
    args: &ProfileArgs,
    threads: Option<u32>,
) -> (Option<ProfilePreset>, Vec<ProfileRow>) {
    let (preset, rows) = match &args.tests {
        Some(tests) => (None, tests.0.clone()),
        None => (Some(args.preset), preset_rows(args.preset)),
    };
    let rows = match threads {
        None => rows,
        Some(n) => rows.into_iter().map(|r| r.with_threads(n)).collect(),
    };
    (preset, rows)
}

/// A validated `iocurve curve`.
#[derive(Debug, Clone, Serialize)]
pub struct CurveConfig {
    pub target: TargetConfig,
    /// Every target, the first included.
    pub targets: Vec<PathBuf>,
    pub patterns: Vec<Rw>,
    pub sizes: Option<Vec<u64>>,
    pub queue_depth: u32,
    pub engine: EngineKind,
    pub repeat: u32,
    #[serde(serialize_with = "secs")]
    pub time: Duration,
    #[serde(serialize_with = "secs")]
    pub ramp: Duration,
    pub point_bytes: u64,
    pub csv: bool,
    pub svg: Option<PathBuf>,
}

impl CurveConfig {
    pub fn from_args(args: &CurveArgs) -> Result<CurveConfig> {
        let mut target = target_config(&args.target)?;
        target.output = args.live.apply(target.output);
        let mut patterns = Vec::new();
        for name in args.rw.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match Rw::parse(name) {
                Some(rw) if !rw.is_mixed() => {
                    if !patterns.contains(&rw) {
                        patterns.push(rw);
                    }
                }
                _ => {
                    return Err(usage(format!(
                        "--rw {name} is not a curve pattern: give a comma list of read, write, randread, randwrite"
                    )));
                }
            }
        }
        if patterns.is_empty() {
            return Err(usage(
                "--rw is empty: give a comma list of read, write, randread, randwrite",
            ));
        }
        if let Some(sizes) = &args.sizes {
            if let Some(bad) = sizes.iter().find(|&&s| s == 0 || s > MAX_BLOCK_SIZE) {
                return Err(usage(format!("--sizes: {bad} is outside 1 byte to 1 GiB")));
            }
        }
        if args.time.is_zero() {
            return Err(usage(
                "--time 0 measures nothing: give a duration such as 800ms",
            ));
        }
        let engine = choose_engine(target.engine, args.qd)?;
        let mut targets = vec![args.target.target.clone()];
        targets.extend(args.more_targets.iter().cloned());
        let mut sizes = args.sizes.clone();
        if let Some(s) = sizes.as_mut() {
            s.sort_unstable();
            s.dedup();
        }
        Ok(CurveConfig {
            target,
            targets,
            patterns,
            sizes,
            queue_depth: args.qd,
            engine,
            repeat: args.repeat,
            time: args.time,
            ramp: (args.time / 4).min(Duration::from_millis(200)),
            point_bytes: args.point_bytes.max(1),
            csv: args.target.output.csv,
            svg: args.svg.clone(),
        })
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_defaults_to_the_rest_of_the_target() {
        assert_eq!(
            resolve_region(None, None, 1 << 20, "t", 4096, 512, true).unwrap(),
            (0, 1 << 20)
        );
        assert_eq!(
            resolve_region(Some(4096), None, 1 << 20, "t", 4096, 512, true).unwrap(),
            (4096, (1 << 20) - 4096)
        );
    }

    #[test]
    fn region_errors_name_the_option() {
        let e = resolve_region(None, Some(2 << 20), 1 << 20, "t", 4096, 512, true).unwrap_err();
        assert!(e.to_string().contains("--span"), "{e}");
        let e = resolve_region(None, None, 1 << 20, "t", 768, 512, true).unwrap_err();
        assert!(e.to_string().contains("--bs 768"), "{e}");
        assert!(resolve_region(None, None, 1 << 20, "t", 768, 512, false).is_ok());
        let e = resolve_region(None, Some(4096), 1 << 20, "t", 8192, 512, true).unwrap_err();
        assert!(e.to_string().contains("larger than the region"), "{e}");
    }

    fn run_config(args: &[&str]) -> Result<RunConfig> {
        use clap::Parser;
        let all = ["iocurve", "run", "."]
            .into_iter()
            .chain(args.iter().copied());
        match super::super::Cli::try_parse_from(all).unwrap().command {
            super::super::Command::Run(run) => RunConfig::from_args(&run),
            _ => unreachable!("a run command line"),
        }
    }

    #[test]
    fn block_size_is_checked_before_opening() {
        assert!(checked_block_size(BlockSize::Bytes(0)).is_err());
        assert!(checked_block_size(BlockSize::Bytes(MAX_BLOCK_SIZE + 1)).is_err());
        assert_eq!(checked_block_size(BlockSize::DeviceMax).unwrap(), 1 << 20);
    }

    #[test]
    fn run_limits_need_whole_blocks_and_time() {
        assert!(check_run_limits(Some(0), None, 4096).is_err());
        assert!(check_run_limits(Some(6000), None, 4096).is_err());
        assert!(check_run_limits(None, Some(Duration::ZERO), 4096).is_err());
        assert!(check_run_limits(Some(8192), None, 4096).is_ok());
        assert_eq!(run_time(None, None), Some(DEFAULT_RUN_TIME_CAP));
        assert_eq!(run_time(Some(4096), None), None);
    }

    #[test]
    fn queue_memory_is_bounded_for_io_uring_only() {
        assert!(check_queue_memory(EngineKind::Uring, 1 << 30, 2).is_err());
        assert!(check_queue_memory(EngineKind::Sync, 1 << 30, 1).is_ok());
    }

    #[test]
    fn align_and_verify_checks() {
        assert!(checked_align(Some(0), 4096).is_err());
        assert_eq!(checked_align(None, 4096).unwrap(), 4096);
        assert!(check_verify(Rw::Write, 4096, 6144).is_err());
        assert!(check_verify(Rw::Write, 1000, 1000).is_err());
        assert!(check_verify(Rw::RandRw, 4096, 4096).is_err());
        assert!(check_verify(Rw::Read, 4096, 8192).is_ok());
    }

    #[test]
    fn methods_other_than_pread_only_read_one_at_a_time() {
        assert_eq!(
            method_engine(ReadMethod::Pread, 4096, Rw::Write, 8).unwrap(),
            None
        );
        assert_eq!(
            method_engine(ReadMethod::Mmap, 4096, Rw::Read, 1).unwrap(),
            Some(EngineKind::Mmap)
        );
        assert_eq!(
            method_engine(ReadMethod::Stdio, 1, Rw::Read, 1).unwrap(),
            Some(EngineKind::Stdio(1))
        );
        let e = method_engine(ReadMethod::Stdio, 1, Rw::Write, 1).unwrap_err();
        assert!(e.to_string().contains("--method stdio only reads"), "{e}");
        assert!(method_engine(ReadMethod::Mmap, 1, Rw::Read, 2).is_err());
    }

    #[test]
    fn bs_max_is_resolved_by_the_device_without_changing_the_config() {
        let cfg = run_config(&["--bs", "max", "--size", "8M"]).unwrap();
        assert_eq!(cfg.blocks.block_size, 1 << 20);
        let blocks = cfg.resolve_blocks(Some(3 << 20), "t").unwrap();
        assert_eq!(blocks.block_size, 3 << 20);
        assert_eq!(blocks.align, 3 << 20);
        assert_eq!(blocks.size, Some(6 << 20));
        assert_eq!(cfg.blocks.block_size, 1 << 20);
        let e = cfg.resolve_blocks(None, "t").unwrap_err();
        assert!(e.to_string().contains("--bs max needs"), "{e}");
        let fixed = run_config(&["--bs", "8k", "--align", "4k"]).unwrap();
        assert_eq!(fixed.resolve_blocks(None, "t").unwrap(), fixed.blocks);
        let asked = run_config(&["--bs", "max", "--align", "4k"]).unwrap();
        assert_eq!(
            asked.resolve_blocks(Some(1 << 17), "t").unwrap().align,
            4096
        );
    }

    #[test]
    fn the_recorded_run_config_keeps_its_keys() {
        let cfg = run_config(&["--bs", "max", "--buffered", "--method", "stdio"]).unwrap();
        let blocks = cfg.resolve_blocks(Some(1 << 17), "t").unwrap();
        let json = serde_json::to_value(cfg.with_blocks(blocks)).unwrap();
        assert_eq!(json["bs_max"], true);
        assert_eq!(json["block_size"], 1 << 17);
        assert_eq!(json["align"], 1 << 17);
        assert_eq!(json["align_given"], false);
        assert_eq!(json["method"], "stdio");
        assert_eq!(json["rw"], "read");
        assert_eq!(json["target"]["buffered"], true);
        assert!(json.get("bs").is_none() && json.get("blocks").is_none());
    }

    #[test]
    fn engine_choice() {
        assert_eq!(choose_engine(None, 1).unwrap(), EngineKind::Sync);
        assert_eq!(choose_engine(None, 32).unwrap(), EngineKind::Uring);
        assert!(choose_engine(Some(EngineKind::Sync), 8).is_err());
        assert_eq!(
            choose_engine(Some(EngineKind::Uring), 1).unwrap(),
            EngineKind::Uring
        );
    }
}
