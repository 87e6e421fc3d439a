//! `iocurve files save`: one file saved with each write-call size, then read
//! back and compared, as a program saves its data.

use crate::analysis::files::{bytes_wrong, save_report};
use crate::cli::apps::FilesSaveArgs;
use crate::cli::files::{save_plan, save_settings};
use crate::result::Payload;
use crate::store::Settings;
use crate::workload::{cpuload, files};
use anyhow::Result;

pub fn save(args: &FilesSaveArgs, store: &Settings) -> Result<i32> {
    let settings = save_settings(args)?;
    let planned = Payload::FilesSave {
        config: settings.clone().into(),
        files_save: save_report(args.size, args.sync, Default::default()),
    };
    let (work, device, output, result) = super::started(&args.dir, &args.out, store, planned)?;
    let load = cpuload::start_if(args.out.load.cpu_load);
    let plan = save_plan(&settings);
    let mut run = files::measure_saves(&work.path, &plan, device.as_ref());
    let cpu_load = load.map(cpuload::CpuLoad::stop);
    drop(work);
    let failure = run.failure.take();
    let files_save = save_report(args.size, args.sync, run);
    let bad = bytes_wrong(&files_save);
    let payload = Payload::FilesSave {
        config: settings.into(),
        files_save,
    };
    let mut result = super::files_result(result, payload, cpu_load);
    result.error = failure;
    output.finish_files_save(&result, bad)
}
