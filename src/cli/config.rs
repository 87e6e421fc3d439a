//! Arguments checked and turned into the plain configurations of
//! [`crate::vocab::config`], before anything is opened. Checks that need the
//! target (its size, its block size) are in that module, called right after
//! the target is opened.

use super::{CurveArgs, ProfileArgs, RunArgs, TargetArgs};
use crate::error::usage;
use crate::units::format_size;
use crate::vocab::config::*;
use crate::vocab::options::EngineKind;
use crate::vocab::options::{BlockSize, IoMode, ProfilePreset, ReadMethod};
use crate::vocab::presets::{ProfileRow, preset_rows};
use crate::vocab::{Pattern, Rw};
use anyhow::Result;
use std::path::PathBuf;
use std::time::Duration;

/// The shared target settings of a command with no configuration of its
/// own beyond them: surface, copy and endure, which move one request at a
/// time with pread and pwrite, so io_uring's options are refused rather
/// than ignored.
pub fn target_config_of(args: &TargetArgs, command: &str) -> Result<TargetConfig> {
    let target = target_config(args)?;
    if target.engine == Some(EngineKind::Uring) {
        return Err(usage(format!(
            "{command} moves one request at a time with pread and pwrite: leave --engine at auto (or pass --engine sync) and --sqpoll off"
        )));
    }
    Ok(target)
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
        destructive: args.writes.destructive,
        preserve: args.writes.preserve,
        journal_dir: args.writes.journal_dir.clone(),
        offset: args.offset,
        span: args.span,
        threads: args.threads.unwrap_or(1),
        seed: args.seed.unwrap_or_else(default_seed),
        seed_given: args.seed.is_some(),
        json: args.output.json,
        report: args.report.clone(),
        engine: engine_with_polling(args)?,
        sqpoll: args.sqpoll,
        output: args.output.choice(),
    })
}

/// The engine asked for, given `--sqpoll`: polling is io_uring's, so it
/// takes io_uring and refuses the one-at-a-time engine.
fn engine_with_polling(args: &TargetArgs) -> Result<Option<EngineKind>> {
    match (args.sqpoll, args.engine.asked()) {
        (false, asked) => Ok(asked),
        (true, Some(EngineKind::Sync)) => Err(usage(
            "--sqpoll polls io_uring's submission queue, and --engine sync does not use io_uring: leave out one of them",
        )),
        (true, _) => Ok(Some(EngineKind::Uring)),
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
        if target.sqpoll && engine != EngineKind::Uring {
            return Err(usage(
                "--sqpoll polls io_uring's submission queue, and a --method other than pread reads without io_uring: leave out one of them",
            ));
        }
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
        match super::super::command_of(&[&["run", "."], args]) {
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
    fn sqpoll_takes_io_uring_and_refuses_what_runs_without_it() {
        let polled = run_config(&["--sqpoll"]).unwrap();
        assert_eq!(polled.engine, EngineKind::Uring);
        assert!(polled.target.sqpoll);
        let json = serde_json::to_value(&polled.target).unwrap();
        assert_eq!(json["sqpoll"], true);
        assert_eq!(json["engine"], "uring");
        let plain = run_config(&[]).unwrap();
        assert!(!plain.target.sqpoll);
        assert_eq!(plain.engine, EngineKind::Sync);
        for refused in [
            &["--sqpoll", "--engine", "sync"][..],
            &["--sqpoll", "--method", "mmap"][..],
        ] {
            let e = run_config(refused).unwrap_err().to_string();
            assert!(
                e.contains("--sqpoll") && e.contains("leave out"),
                "{refused:?}: {e}"
            );
        }
    }

    #[test]
    fn commands_of_one_request_at_a_time_refuse_io_uring_options() {
        for (command, needs) in [
            ("surface", &[][..]),
            ("endure", &["--cycles", "1"][..]),
            ("copy", &[][..]),
        ] {
            for given in [&["--sqpoll"][..], &["--engine", "uring"][..]] {
                let line: Vec<&str> = [command, "."]
                    .into_iter()
                    .chain(needs.iter().copied())
                    .chain(given.iter().copied())
                    .collect();
                let args = match super::super::command_of(&[&line]) {
                    super::super::Command::Surface(a) => a.target,
                    super::super::Command::Endure(a) => a.target,
                    super::super::Command::Copy(a) => a.target,
                    _ => unreachable!("{line:?}"),
                };
                let e = target_config_of(&args, command).unwrap_err().to_string();
                assert!(
                    e.starts_with(command) && e.contains("--sqpoll off"),
                    "{line:?}: {e}"
                );
            }
        }
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
