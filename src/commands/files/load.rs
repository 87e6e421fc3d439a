//! `iocurve files load`: files of each size read whole from an evicted
//! cache, as a program loads its assets.

use crate::analysis::files::load_report;
use crate::cli::apps::FilesLoadArgs;
use crate::cli::files::load_settings;
use crate::result::Payload;
use crate::store::Settings;
use crate::workload::{cpuload, files};
use anyhow::Result;

pub fn load(args: &FilesLoadArgs, store: &Settings) -> Result<i32> {
    let settings = load_settings(args)?;
    let planned = Payload::FilesLoad {
        config: settings.clone().into(),
        files_load: Default::default(),
    };
    let (work, device, output, result) = super::started(&args.dir, &args.out, store, planned)?;
    let sets = files::create_sets(&work.path, &settings.sizes, args.count, settings.seed)?;
    let how = files::read_method(args.method, args.stdio_bs)?;
    let load = cpuload::start_if(args.out.load.cpu_load);
    let measured = files::measure_loads(&work.path, &sets, how, device.as_ref())?;
    let cpu_load = load.map(cpuload::CpuLoad::stop);
    drop(work);
    let files_load = load_report(measured, args.fps, files::describe_method(how));
    let payload = Payload::FilesLoad {
        config: settings.into(),
        files_load,
    };
    let result = super::files_result(result, payload, cpu_load);
    output.finish(&result)
}
