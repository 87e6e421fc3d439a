//! `iocurve import FILE`: fio's JSON output saved as a run, so it sits
//! beside iocurve's own in history and compare.

use crate::cli::ImportArgs;
use crate::import::fio;
use crate::store;
use anyhow::{Context, Result};
use std::path::Path;

/// The size of a file or block device a fio job named, when it exists
/// here: fio covered all of it unless the job said otherwise. The path
/// comes from the document, so it is only looked at, never opened (a FIFO
/// there would block an open, a device file could answer one): a regular
/// file's size is in its metadata, a block device's in sysfs under its
/// device number. Anything else has no size.
fn size_here(path: &str) -> Option<u64> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let meta = std::fs::metadata(path).ok()?;
    if meta.is_file() {
        return Some(meta.len());
    }
    if !meta.file_type().is_block_device() {
        return None;
    }
    let dev = meta.rdev();
    crate::probe::sysfs::BlockDevice::from_dev_t(rustix::fs::major(dev), rustix::fs::minor(dev))
        .ok()
        .map(|d| d.size_bytes)
}

pub fn import(args: &ImportArgs, settings: &store::Settings) -> Result<i32> {
    // A file that is not there, or not a file, is a mistake on the command
    // line (exit 2); one that cannot be read is an I/O failure (exit 3).
    if !args.file.is_file() {
        let what = match args.file.exists() {
            true => "is not a file",
            false => "does not exist",
        };
        return Err(crate::error::usage(format!(
            "{} {what}: give the JSON file fio wrote (fio --output-format=json --output=FILE)",
            args.file.display()
        )));
    }
    let text = std::fs::read_to_string(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let mut result = fio::parse_sized(&text, &size_here)
        .map_err(|e| crate::error::usage(format!("{}: {e:#}", args.file.display())))?;
    let device = args.device.clone().or_else(|| {
        let p = Path::new(&result.target.path).to_path_buf();
        p.exists().then_some(p)
    });
    result.device_identity = device.map(|d| crate::probe::identify(&d));
    let (label, key) = result
        .device_identity
        .as_ref()
        .map_or(("unknown device".to_string(), "unknown".to_string()), |i| {
            (i.label.clone(), i.key.clone())
        });
    let path = settings.path()?;
    let id = store::Store::open(&path)?.save(&result, "fio")?;
    let shown = |text: &str| crate::units::escape::name(text, crate::units::escape::NAME_COLUMNS);
    crate::output::print_fitted(&format!(
        "imported {} fio job(s) as run {id} of {} ({}) in {}\n",
        result.tests.len(),
        shown(&label),
        shown(&key),
        crate::units::escape::line(&path.display().to_string())
    ));
    Ok(0)
}
