//! Checks of `iocurve files load` and `iocurve files save` beyond the
//! parser: the file sizes and the frame rate. Usage errors, before the
//! directory is touched.

use crate::cli::apps::{FilesLoadArgs, FilesSaveArgs};
use crate::error::usage;
use crate::workload::files::{LOAD_SIZES, check_sizes};
use anyhow::Result;

/// The file sizes `files load` measures (`--sizes`, or the default set),
/// checked along with `--fps`.
pub fn load_sizes(args: &FilesLoadArgs) -> Result<Vec<u64>> {
    let sizes = args.sizes.clone().unwrap_or_else(|| LOAD_SIZES.to_vec());
    check_sizes(&sizes, "--sizes")?;
    if args.fps.is_some_and(|f| !(f > 0.0 && f.is_finite())) {
        return Err(usage("--fps must be a positive number such as 60"));
    }
    Ok(sizes)
}

/// The sizes of `files save`: the saved sizes and the file's size.
pub fn check_save(args: &FilesSaveArgs) -> Result<()> {
    check_sizes(&args.sizes, "--sizes")?;
    check_sizes(&[args.size], "--size")
}
