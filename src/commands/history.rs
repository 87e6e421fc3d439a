//! `iocurve history [DEVICE]` and `iocurve list`: what the database holds.

use crate::cli::HistoryArgs;
use crate::error::usage;
use crate::report::compare::format_mb;
use crate::store::RunRow;
use crate::store::{Settings, select};
use anyhow::Result;

/// One run on one line: id, date, command, headline figures.
fn run_line(r: &RunRow) -> String {
    let figures: Vec<String> = r
        .figures
        .iter()
        .map(|f| {
            let range = if f.repetitions > 1 {
                format!(" ({}-{})", format_mb(f.min), format_mb(f.max))
            } else {
                String::new()
            };
            format!("{} {} {}{range}", f.test, f.rw, format_mb(f.median))
        })
        .collect();
    let figures = if figures.is_empty() {
        "no figures".to_string()
    } else {
        figures.join(" · ")
    };
    format!(
        "  run {:>4}  {}  {:<8} {figures}\n",
        r.id, r.started_at, r.command
    )
}

pub fn history(args: &HistoryArgs, store: &Settings) -> Result<i32> {
    // The parser refuses a blank name too; this keeps the command safe when
    // it is called with arguments built some other way.
    if args.device.as_deref().is_some_and(|d| d.trim().is_empty()) {
        return Err(usage(
            "an empty device name: give a device id, key or name from `iocurve list`, or none for every device",
        ));
    }
    let db = select::open_existing(store)?;
    let devices = match &args.device {
        Some(name) => vec![
            db.find_device(name)?
                .ok_or_else(|| usage(format!("no device matches {name:?}: see `iocurve list`")))?,
        ],
        None => db.devices()?,
    };
    let mut out = String::new();
    for d in devices {
        out.push_str(&format!(
            "{} [{}] · device {} · {} run(s)\n",
            d.label, d.key, d.id, d.runs
        ));
        for r in db.runs(Some(d.id))? {
            out.push_str(&run_line(&r));
        }
    }
    out.push_str("MB/s = 10^6 bytes/s; median (min-max) of the repetitions\n");
    print!("{out}");
    Ok(0)
}

pub fn list(store: &Settings) -> Result<i32> {
    let db = select::open_existing(store)?;
    let mut out = String::from("devices:\n");
    for d in db.devices()? {
        out.push_str(&format!(
            "  {:>4}  {}  [{}]  {} run(s), {} to {}\n",
            d.id, d.label, d.key, d.runs, d.first_seen, d.last_seen
        ));
    }
    out.push_str("runs:\n");
    for r in db.runs(None)? {
        out.push_str(&format!(
            "  run {:>4}  {}  {:<8} {:<8} device {} ({})\n",
            r.id, r.started_at, r.command, r.source, r.device_id, r.device_label
        ));
    }
    print!("{out}");
    Ok(0)
}
