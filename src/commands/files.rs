//! `iocurve files load` and `iocurve files save`: whole files in a
//! directory, the way applications use them (see [`crate::workload::files`]).

use super::common;
use crate::analysis::curve::{SizePoint, fit_model};
use crate::cli::apps::{FilesAction, FilesArgs, FilesLoadArgs, FilesSaveArgs};
use crate::cli::options::FileReadMethod;
use crate::engine::MonotonicClock;
use crate::engine::access::FileRead;
use crate::error::{IoFailure, usage};
use crate::probe::sysfs::{self, BlockDevice, DiskStat};
use crate::result::Payload;
use crate::result::apps::{FilesLoadReport, FilesSaveReport, LoadPoint, SaveDeviceIo, SavePoint};
use crate::result::config::{FilesLoadSettings, FilesSaveSettings};
use crate::target::{IoMode, TargetInfo, TargetKind};
use crate::units::{format_size, mb_per_s};
use crate::workload::files::{self, EvictionProof, WorkDir};
use crate::workload::{Pattern, cpuload, interrupt};
use anyhow::Result;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

/// Default file sizes of `files load`: 1.5 KiB up to 16 MiB.
pub const LOAD_SIZES: [u64; 6] = [1536, 8 << 10, 32 << 10, 128 << 10, 1 << 20, 16 << 20];
/// Default bytes of files per size (the count is at least 4, at most 200).
const LOAD_BYTES_PER_SIZE: u64 = 16 << 20;

pub fn files(args: &FilesArgs) -> Result<i32> {
    match &args.action {
        FilesAction::Load(a) => load(a),
        FilesAction::Save(a) => save(a),
    }
}

fn load(args: &FilesLoadArgs) -> Result<i32> {
    common::report_to(args.report.as_ref());
    let sizes = args.sizes.clone().unwrap_or_else(|| LOAD_SIZES.to_vec());
    check_sizes(&sizes, "--sizes")?;
    if args.fps.is_some_and(|f| !(f > 0.0 && f.is_finite())) {
        return Err(usage("--fps must be a positive number such as 60"));
    }
    let started_at = common::now_rfc3339();
    let (work, device, info) = open_dir(&args.dir)?;
    let seed = args.seed.unwrap_or_else(|| fastrand::u64(..));
    let mut sets = Vec::new();
    for &size in &sizes {
        let count = args.count.unwrap_or_else(|| default_count(size));
        let paths = files::create_files(&work.path, size, count, seed)
            .map_err(|e| io_failure(&work.path, "cannot create the test files", e))?;
        sets.push((size, paths));
    }
    let how = read_method(args)?;
    let largest = sizes.iter().copied().max().unwrap_or(1);
    let mut buf = vec![0u8; largest as usize];
    let load = cpuload::start_if(args.load.cpu_load);
    let mut measured = Vec::new();
    for (size, paths) in &sets {
        if interrupt::stop_flag().load(Ordering::Relaxed) {
            break;
        }
        let m = load_one_size(*size, paths, &mut buf, how, device.as_ref())
            .map_err(|e| io_failure(&work.path, "cannot read the test files", e))?;
        measured.push(m);
    }
    let cpu_load = load.map(cpuload::CpuLoad::stop);
    drop(work);
    let config = FilesLoadSettings {
        dir: args.dir.clone(),
        sizes,
        count: args.count,
        fps: args.fps,
        seed,
        cpu_load: args.load.cpu_load,
        method: args.method,
        stdio_bs: args.stdio_bs,
    }
    .into();
    let mut files_load = load_report(measured, args.fps);
    files_load.method = Some(describe_method(how));
    let payload = Payload::FilesLoad { config, files_load };
    let mut result = common::new_result_for(payload, info, started_at);
    result.cpu_load = cpu_load;
    result.interrupted = interrupt::stop_flag().load(Ordering::Relaxed);
    common::finish(&result, args.json)
}

/// The read method asked for.
fn read_method(args: &FilesLoadArgs) -> Result<FileRead> {
    Ok(match args.method {
        FileReadMethod::Mmap => FileRead::Mmap,
        FileReadMethod::Stdio => {
            let call = usize::try_from(args.stdio_bs)
                .ok()
                .filter(|&c| c > 0 && c <= 1 << 30);
            FileRead::Stdio(
                call.ok_or_else(|| {
                    usage("--stdio-bs must be from 1 byte to 1 GiB, such as 1 or 4k")
                })?,
            )
        }
        FileReadMethod::Read | FileReadMethod::Pread => FileRead::Read,
    })
}

/// The method as the result records it.
fn describe_method(how: FileRead) -> String {
    match how {
        FileRead::Read => "read(2) into one buffer".into(),
        FileRead::Mmap => "mmap page faults".into(),
        FileRead::Stdio(call) => format!("stdio fread of {call} bytes per call"),
    }
}

/// What one size's timing pass found, before the model is fitted.
struct SizeTimes {
    size: u64,
    times: Vec<u64>,
    eviction: EvictionProof,
    device_read_bytes: Option<u64>,
}

fn load_one_size(
    size: u64,
    paths: &[PathBuf],
    buf: &mut [u8],
    how: FileRead,
    device: Option<&BlockDevice>,
) -> std::io::Result<SizeTimes> {
    let eviction = files::evict_all(paths);
    let mut times = Vec::with_capacity(paths.len());
    let before = files::stat_of(device);
    files::time_loads(
        paths,
        buf,
        &mut times,
        how,
        interrupt::stop_flag(),
        MonotonicClock::new(),
    )?;
    let after = files::stat_of(device);
    let device_read_bytes = before
        .zip(after)
        .map(|(b, a): (DiskStat, DiskStat)| a.since(&b).read_bytes());
    Ok(SizeTimes {
        size,
        times,
        eviction,
        device_read_bytes,
    })
}

fn load_report(measured: Vec<SizeTimes>, fps: Option<f64>) -> FilesLoadReport {
    let mut points: Vec<LoadPoint> = measured
        .into_iter()
        .filter(|m| !m.times.is_empty())
        .map(|m| load_point(m, fps))
        .collect();
    let model = fit_model(
        &points
            .iter()
            .map(|p| SizePoint {
                size: p.size,
                time_per_op_ns: p.median_ns as f64,
                mb_per_s: p.mb_per_s,
                buffered: false,
            })
            .collect::<Vec<_>>(),
    );
    let best = points
        .iter()
        .max_by_key(|p| p.size)
        .map_or(0.0, |p| p.mb_per_s);
    for p in &mut points {
        p.efficiency = if best > 0.0 { p.mb_per_s / best } else { 0.0 };
        p.model_ratio = model.map(|m| p.mb_per_s / m.mb_per_s_at(p.size as f64));
    }
    FilesLoadReport {
        method: None,
        eviction_proved: points.iter().all(|p| p.eviction.proved),
        points,
        model,
        fps,
    }
}

fn load_point(m: SizeTimes, fps: Option<f64>) -> LoadPoint {
    let mut sorted = m.times.clone();
    sorted.sort_unstable();
    let median = crate::stats::median_u64(&sorted).unwrap_or(0);
    let mbps = mb_per_s(m.size, median);
    LoadPoint {
        size: m.size,
        files: sorted.len() as u64,
        median_ns: median,
        mean_ns: sorted.iter().sum::<u64>() as f64 / sorted.len() as f64,
        min_ns: sorted[0],
        max_ns: sorted[sorted.len() - 1],
        mb_per_s: mbps,
        efficiency: 0.0,
        model_ratio: None,
        bytes_per_frame: fps.map(|f| mbps * 1e6 / f),
        frames_per_file: fps.map(|f| median as f64 / 1e9 * f),
        eviction: m.eviction,
        device_read_bytes: m.device_read_bytes,
    }
}

fn save(args: &FilesSaveArgs) -> Result<i32> {
    common::report_to(args.report.as_ref());
    check_sizes(&args.sizes, "--sizes")?;
    check_sizes(&[args.size], "--size")?;
    let started_at = common::now_rfc3339();
    let (work, device, info) = open_dir(&args.dir)?;
    let seed = args.seed.unwrap_or_else(|| fastrand::u64(..));
    let mut data = vec![0u8; args.size as usize];
    let load = cpuload::start_if(args.load.cpu_load);
    let mut points = Vec::new();
    let mut failure = None;
    for &w in &args.sizes {
        if interrupt::stop_flag().load(Ordering::Relaxed) {
            break;
        }
        Pattern::Random.fill(&mut data, seed ^ w);
        let path = work.path.join(format!("save-{w}.bin"));
        let point = save_one(&path, &data, w, device.as_ref());
        let _ = std::fs::remove_file(&path);
        match point {
            Ok(point) => points.push(point),
            // The sizes already measured are still worth printing.
            Err(e) => {
                failure = Some(save_failure(&path, w, &e));
                break;
            }
        }
    }
    let cpu_load = load.map(cpuload::CpuLoad::stop);
    drop(work);
    let config = FilesSaveSettings {
        dir: args.dir.clone(),
        size: args.size,
        sizes: args.sizes.clone(),
        seed,
        cpu_load: args.load.cpu_load,
    }
    .into();
    let all_verified = points.iter().all(|p| p.check.ok());
    let bad: u64 = points.iter().map(|p| p.check.bytes_wrong).sum();
    let files_save = FilesSaveReport {
        file_size: args.size,
        points,
        all_verified,
    };
    let payload = Payload::FilesSave { config, files_save };
    let mut result = common::new_result_for(payload, info, started_at);
    result.cpu_load = cpu_load;
    result.error = failure;
    result.interrupted = interrupt::stop_flag().load(Ordering::Relaxed);
    let code = common::finish(&result, args.json)?;
    if code == 0 && bad > 0 {
        eprintln!("Error: {bad} byte(s) read back differ from what was written");
        return Ok(crate::error::EXIT_VERIFY);
    }
    Ok(code)
}

fn save_one(
    path: &Path,
    data: &[u8],
    w: u64,
    device: Option<&BlockDevice>,
) -> std::io::Result<SavePoint> {
    let before = files::stat_of(device);
    let times = files::save_with_calls(path, data, w as usize, MonotonicClock::new())?;
    let after = files::stat_of(device);
    let check = files::check_saved(path, data)?;
    let total_ns = times.total_ns();
    let device = device.zip(before.zip(after)).map(|(d, (b, a))| {
        let delta = a.since(&b);
        SaveDeviceIo {
            device: d.name.clone(),
            write_requests: delta.write_ios,
            write_bytes: delta.write_bytes(),
            avg_request_bytes: (delta.write_ios > 0)
                .then(|| delta.write_bytes() as f64 / delta.write_ios as f64),
        }
    });
    Ok(SavePoint {
        write_size: w,
        mb_per_s: mb_per_s(data.len() as u64, total_ns),
        total_ns,
        times,
        device,
        check,
    })
}

fn default_count(size: u64) -> u32 {
    (LOAD_BYTES_PER_SIZE / size.max(1)).clamp(4, 200) as u32
}

fn check_sizes(sizes: &[u64], option: &str) -> Result<()> {
    if sizes.is_empty() || sizes.contains(&0) {
        return Err(usage(format!(
            "{option} needs sizes above 0, such as 8k or 1M"
        )));
    }
    if let Some(&big) = sizes.iter().find(|&&s| s > 1 << 30) {
        return Err(usage(format!(
            "{option}: {} is larger than the 1 GiB iocurve holds in memory",
            format_size(big)
        )));
    }
    Ok(())
}

/// Checks the directory, makes the working directory inside it, and finds
/// the block device beneath it.
fn open_dir(dir: &Path) -> Result<(WorkDir, Option<BlockDevice>, TargetInfo)> {
    common::refuse_simulated(dir, "files")?;
    interrupt::install();
    if !dir.exists() {
        return Err(usage(format!(
            "{} does not exist: give a directory",
            dir.display()
        )));
    }
    let meta =
        std::fs::metadata(dir).map_err(|e| io_failure(dir, "cannot use the directory", e))?;
    if !meta.is_dir() {
        return Err(usage(format!(
            "{} is not a directory: files load/save work in a directory",
            dir.display()
        )));
    }
    let work = WorkDir::create(dir)
        .map_err(|e| io_failure(dir, "cannot create a working directory in", e))?;
    let device = BlockDevice::from_path(dir).ok().flatten();
    let mut notes = vec![
        "files go through the file system and the page cache; reads start from an evicted cache"
            .to_string(),
    ];
    if device.is_none() {
        notes.push("no single block device beneath this directory: device request counts are not available".into());
    }
    let info = TargetInfo {
        path: dir.display().to_string(),
        kind: TargetKind::Directory,
        scratch_file: Some(work.path.display().to_string()),
        size_bytes: 0,
        logical_block_size: device.as_ref().map_or(512, |d| d.logical_block_size),
        device: device.clone(),
        filesystem: sysfs::mount_of(dir).ok().flatten(),
        mode: IoMode::Buffered,
        writable: true,
        notes,
    };
    Ok((work, device, info))
}

/// Why saving with `w`-byte calls stopped, with the fix; the sizes before
/// it are kept in the result.
fn save_failure(path: &Path, w: u64, e: &std::io::Error) -> String {
    let fix = match e.raw_os_error() {
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => {
            "the file system is full: free some space or give a smaller --size"
        }
        Some(libc::EROFS) => "the file system became read-only (check `dmesg`)",
        Some(libc::EIO) => "the device reported an error: check `dmesg`",
        _ => "the sizes measured before it are shown above",
    };
    format!(
        "saving {} with {w}-byte write calls failed: {e}; {fix}",
        path.display()
    )
}

fn io_failure(path: &Path, what: &str, e: std::io::Error) -> anyhow::Error {
    IoFailure::new(format!("{what} {}: {e}", path.display()), Some(e)).into()
}
