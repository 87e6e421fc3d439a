//! `iocurve probe [TARGET]`: who the device is, without measuring.

use crate::cli::ProbeArgs;
use crate::error::usage;
use anyhow::Result;

pub fn probe(args: &ProbeArgs) -> Result<i32> {
    crate::medium::open::refuse_simulated(&args.target, "probe")?;
    if !args.target.exists() {
        return Err(usage(format!(
            "{}: no such file, directory or device",
            args.target.display()
        )));
    }
    crate::medium::storage::refuse_unless_storage(&args.target)?;
    let id = crate::probe::identify(&args.target);
    if args.json {
        let doc = serde_json::to_string_pretty(&id)?;
        crate::output::print_json(&format!("{doc}\n"));
    } else {
        crate::output::print_text(&crate::report::probe::render_text(&id));
    }
    Ok(0)
}
