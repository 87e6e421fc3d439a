//! `iocurve compare A B ...`: runs side by side, and every later run
//! against the first, test by test (like tests only; see
//! `report::compare`).

use crate::cli::CompareArgs;
use crate::error::usage;
use crate::output::{Format, Output};
use crate::report::compare::{self, Options};
use crate::store::{Settings, select};
use anyhow::Result;

pub fn compare(args: &CompareArgs, settings: &Settings) -> Result<i32> {
    if !(0.0..100.0).contains(&args.threshold) {
        return Err(usage("--threshold is a percentage between 0 and 100"));
    }
    let mut store = None;
    let entries = args
        .runs
        .iter()
        .map(|spec| select::entry(spec, settings, &mut store))
        .collect::<Result<Vec<_>>>()?;
    let opts = Options {
        test: args.test.clone(),
        threshold: args.threshold / 100.0,
        markdown: args.output.markdown,
    };
    let output = Output::new(settings, &args.output.choice(), None);
    let text = match output.choice.format {
        Format::Json => compare::render_json(&entries, &opts).map(|j| j + "\n"),
        Format::Csv => Ok(crate::output::runs_csv(entries.iter().map(|e| &e.result))),
        _ => compare::render(&entries, &opts),
    };
    output.show(&text.map_err(usage)?)?;
    Ok(0)
}
