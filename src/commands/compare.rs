//! `iocurve compare A B ...`: runs side by side, and every later run
//! against the first, test by test (like tests only; see
//! `report::compare`).

use crate::cli::CompareArgs;
use crate::error::usage;
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
        markdown: args.markdown,
    };
    let text = match (args.json, args.markdown) {
        (true, _) => compare::render_json(&entries, &opts).map(|j| j + "\n"),
        (false, true) => compare::render(&entries, &opts),
        // For a terminal: long verdicts wrapped to the width of every text output.
        (false, false) => compare::render(&entries, &opts)
            .map(|t| crate::report::table::fit(&t, crate::report::table::WIDTH)),
    };
    print!("{}", text.map_err(usage)?);
    Ok(0)
}
