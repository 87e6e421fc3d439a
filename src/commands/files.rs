//! `iocurve files load` and `iocurve files save`: whole files in a
//! directory, the way applications use them. The loops are in
//! [`crate::workload::files`], the reading of their times in
//! [`crate::analysis::files`].

use crate::analysis::files::{bytes_wrong, load_report, save_report};
use crate::cli::apps::{FilesAction, FilesArgs, FilesLoadArgs, FilesSaveArgs};
use crate::cli::files::{check_save, load_sizes};
use crate::output::Output;
use crate::result::Payload;
use crate::result::config::{FilesLoadSettings, FilesSaveSettings};
use crate::store::Settings;
use crate::workload::files;
use crate::workload::{cpuload, interrupt};
use anyhow::Result;
use std::sync::atomic::Ordering;

pub fn files(args: &FilesArgs, store: &Settings) -> Result<i32> {
    match &args.action {
        FilesAction::Load(a) => load(a, store),
        FilesAction::Save(a) => save(a, store),
    }
}

fn load(args: &FilesLoadArgs, store: &Settings) -> Result<i32> {
    let sizes = load_sizes(args)?;
    let started_at = crate::probe::record::now_rfc3339();
    crate::target::open::refuse_simulated(&args.dir, "files")?;
    let (work, device, info) = files::open_dir(&args.dir)?;
    let seed = args.seed.unwrap_or_else(|| fastrand::u64(..));
    let sets = files::create_sets(&work.path, &sizes, args.count, seed)?;
    let how = files::read_method(args.method, args.stdio_bs)?;
    let load = cpuload::start_if(args.load.cpu_load);
    let measured = files::measure_loads(&work.path, &sets, how, device.as_ref())?;
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
    let files_load = load_report(measured, args.fps, files::describe_method(how));
    let payload = Payload::FilesLoad { config, files_load };
    let mut result = crate::probe::record::new_result_for(payload, info, started_at);
    result.cpu_load = cpu_load;
    result.interrupted = interrupt::stop_flag().load(Ordering::Relaxed);
    Output::new(store, &args.output.choice(), args.report.as_ref()).finish(&result)
}

fn save(args: &FilesSaveArgs, store: &Settings) -> Result<i32> {
    check_save(args)?;
    let started_at = crate::probe::record::now_rfc3339();
    crate::target::open::refuse_simulated(&args.dir, "files")?;
    let (work, device, info) = files::open_dir(&args.dir)?;
    let seed = args.seed.unwrap_or_else(|| fastrand::u64(..));
    let load = cpuload::start_if(args.load.cpu_load);
    let (points, failure) =
        files::measure_saves(&work.path, args.size, &args.sizes, seed, device.as_ref());
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
    let files_save = save_report(args.size, points);
    let bad = bytes_wrong(&files_save);
    let payload = Payload::FilesSave { config, files_save };
    let mut result = crate::probe::record::new_result_for(payload, info, started_at);
    result.cpu_load = cpu_load;
    result.error = failure;
    result.interrupted = interrupt::stop_flag().load(Ordering::Relaxed);
    Output::new(store, &args.output.choice(), args.report.as_ref()).finish_files_save(&result, bad)
}
