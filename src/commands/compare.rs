//! `iocurve compare A B ...`: runs side by side, and every later run
//! against the first (or `--baseline`), test by test (like tests only; see
//! `analysis::compare`); `--fail-above` turns a slowdown into exit code 6,
//! and a pair it cannot judge (a disturbed run) into exit code 7.
//! The device's other stored runs go along as history: their spread is the
//! noise between runs that every verdict's interval includes.

use crate::analysis;
use crate::cli::CompareArgs;
use crate::error::{EXIT_REGRESSION, EXIT_UNDECIDED, usage};
use crate::output::Output;
use crate::report::compare::{self, Options};
use crate::store::{Settings, select};
use crate::vocab::output::Format;
use anyhow::Result;

pub fn compare(args: &CompareArgs, settings: &Settings) -> Result<i32> {
    if !(0.0..100.0).contains(&args.threshold) {
        return Err(usage("--threshold is a percentage between 0 and 100"));
    }
    let mut store = None;
    let entries = args
        .baseline
        .iter()
        .chain(&args.runs)
        .map(|spec| select::entry(spec, settings, &mut store))
        .collect::<Result<Vec<_>>>()?;
    let history = select::history(&entries, settings, &mut store);
    let opts = Options {
        test: args.test.clone(),
        threshold: args.threshold / 100.0,
        markdown: args.output.markdown,
        history,
    };
    let output = Output::new(settings, &args.output.choice(), None);
    let render = |format: Format| match format {
        Format::Json => compare::render_json(&entries, &opts).map(|j| j + "\n"),
        Format::Csv => Ok(crate::output::runs_csv(entries.iter().map(|e| &e.result))),
        Format::Markdown => compare::render(
            &entries,
            &Options {
                markdown: true,
                ..opts.clone()
            },
        ),
        // For a terminal: long verdicts wrapped to the width of every text output.
        _ => compare::render(&entries, &opts).map(|t| crate::report::table::fitted(&t)),
    };
    output.show(&render(output.choice.format).map_err(usage)?)?;
    output.write_exports(render)?;
    let Some(fail_above) = args.fail_above.map(|p| p / 100.0) else {
        return Ok(0);
    };
    let comparison =
        analysis::compare::compare(&entries, opts.threshold, &opts.history).map_err(usage)?;
    // Runs shown by their outcomes alone have no verdict a gate could read.
    if comparison.changes.is_empty() && !comparison.outcomes.is_empty() {
        return Err(usage(
            "--fail-above needs runs of repeated tests (profile, run, curve): these runs' outcomes are shown, not tested for a change",
        ));
    }
    let regressions = analysis::compare::regressions(&comparison, fail_above);
    for r in &regressions {
        let line = compare::regression_line(&comparison, r, fail_above);
        eprintln!("REGRESSION: {line}");
    }
    if !regressions.is_empty() {
        return Ok(EXIT_REGRESSION);
    }
    let undecided = analysis::compare::undecided(&comparison);
    for u in &undecided {
        eprintln!("CANNOT TELL: {}", compare::undecided_line(&comparison, u));
    }
    Ok(if undecided.is_empty() {
        0
    } else {
        EXIT_UNDECIDED
    })
}
