//! `iocurve delete RUN...`: removes stored runs from the results database,
//! all of them or none.

use crate::cli::DeleteArgs;
use crate::store::{Settings, Store};
use anyhow::Result;

pub fn delete(args: &DeleteArgs, settings: &Settings) -> Result<i32> {
    // Opening for reading first gives the same "no database yet" message as
    // every reading command, without creating an empty file.
    let path = crate::store::select::open_existing(settings)?
        .path()
        .to_path_buf();
    let mut ids = args.runs.clone();
    ids.sort_unstable();
    ids.dedup();
    Store::open(&path)?.delete(&ids)?;
    let names: Vec<String> = ids.iter().map(|id| format!("run {id}")).collect();
    crate::output::print_fitted(&format!(
        "deleted {} from {}\n",
        names.join(", "),
        crate::units::escape::line(&path.display().to_string())
    ));
    Ok(0)
}
