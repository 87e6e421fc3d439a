//! Checks of `iocurve run` that need the whole [`RunConfig`]: the area the
//! run may touch, and what `--parallel` cannot do. Usage errors, before any
//! target is opened.

use crate::vocab::config::{DEFAULT_AREA, RunConfig};
use crate::vocab::options::ReadMethod;
use anyhow::Result;

/// The end of the region the run may touch (`--offset` + `--span`), which
/// the target must be at least as large as.
pub fn area(cfg: &RunConfig) -> Result<u64> {
    cfg.target
        .offset
        .unwrap_or(0)
        .checked_add(cfg.target.span.unwrap_or(DEFAULT_AREA))
        .ok_or_else(|| {
            crate::error::usage("--offset + --span is beyond any device: give smaller values")
        })
}

/// `--parallel` reads with pread only: mmap and stdio measure one target
/// at a time.
pub fn check_parallel(cfg: &RunConfig) -> Result<()> {
    if cfg.method != ReadMethod::Pread {
        return Err(crate::error::usage(
            "--method mmap or stdio measures one target at a time: leave out --parallel",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(args: &[&str]) -> RunConfig {
        match crate::cli::command_of(&[&["run", "sim:size=64M"], args]) {
            crate::cli::Command::Run(r) => RunConfig::from_args(&r).unwrap(),
            _ => unreachable!("a run command line"),
        }
    }

    #[test]
    fn the_area_ends_at_offset_plus_span() {
        assert_eq!(
            area(&config(&["--offset", "1M", "--span", "8M"])).unwrap(),
            9 << 20
        );
        assert_eq!(area(&config(&[])).unwrap(), DEFAULT_AREA);
    }

    #[test]
    fn parallel_reads_only_with_pread() {
        assert!(check_parallel(&config(&[])).is_ok());
        let e = check_parallel(&config(&["--method", "mmap"])).unwrap_err();
        assert!(e.to_string().contains("leave out --parallel"), "{e}");
    }
}
