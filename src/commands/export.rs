//! `iocurve export`: a stored run (or a result file) as JSON, CSV or
//! Markdown.

use crate::cli::ExportArgs;
use crate::error::usage;
use crate::output::Output;
use crate::report::{Csv, Export, Json, Markdown};
use crate::store::{Settings, select};
use crate::vocab::options::ExportFormat;
use crate::vocab::output::Format;
use anyhow::Result;

pub fn export(args: &ExportArgs, settings: &Settings) -> Result<i32> {
    let mut store = None;
    let entry = match &args.run {
        Some(spec) => select::entry(spec, settings, &mut store)?,
        None => {
            let db = select::open_existing(settings)?;
            let last = db.runs(None)?.into_iter().map(|r| r.id).max();
            let id = last.ok_or_else(|| usage("the results database has no runs yet"))?;
            select::entry(&id.to_string(), settings, &mut Some(db))?
        }
    };
    let (format, shown_as): (&dyn Export, Format) = match (args.output.format(), args.format) {
        (Format::Json, _) | (Format::Text, ExportFormat::Json) => (&Json, Format::Json),
        (Format::Csv, _) | (Format::Text, ExportFormat::Csv) => (&Csv, Format::Csv),
        _ => (&Markdown, Format::Markdown),
    };
    let text = format.render(&entry.result);
    // The output step escapes JSON as JSON and the rest as text: it is
    // told which this is.
    let mut choice = args.output.choice();
    choice.format = shown_as;
    let output = Output::new(settings, &choice, None);
    output.show(&text)?;
    output.write_exports(|format| {
        Ok(match format {
            Format::Json => Json.render(&entry.result),
            Format::Csv => Csv.render(&entry.result),
            _ => Markdown.render(&entry.result),
        })
    })?;
    Ok(0)
}
