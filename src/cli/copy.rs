//! The checked settings of `iocurve copy`, made before either end is
//! opened (arguments validated before resources open).

use crate::cli::CopyArgs;
use crate::cli::config::target_config_of;
use crate::error::usage;
use crate::result::config::CopySettings;
use crate::vocab::config::{MAX_BLOCK_SIZE, TargetConfig};
use crate::workload::copy::CopyRequest;
use anyhow::Result;

/// The destination's settings, once both ends and the block size are
/// known to be usable.
#[derive(Debug, Clone)]
pub struct CopyConfig {
    pub target: TargetConfig,
}

impl CopyConfig {
    pub fn from_args(args: &CopyArgs) -> Result<CopyConfig> {
        refuse_simulated(args)?;
        let target = target_config_of(&args.target, "copy")?;
        if args.bs == 0 || args.bs > MAX_BLOCK_SIZE {
            return Err(usage("--bs must be 1 byte to 1 GiB, e.g. 4M (dd bs=4M)"));
        }
        Ok(CopyConfig { target })
    }

    /// The settings recorded with the result.
    pub fn settings(&self, args: &CopyArgs) -> CopySettings {
        CopySettings {
            source: args.source.clone(),
            target: self.target.clone(),
            block_size: args.bs,
            sync: args.sync,
            verify: args.verify,
        }
    }

    /// What the copy is asked to do.
    pub fn request(args: &CopyArgs) -> CopyRequest {
        CopyRequest {
            bs: args.bs,
            sync: args.sync,
            verify: args.verify,
            alone: !args.no_alone,
        }
    }
}

/// A `sim:` card has no bytes to read an image from nor to keep one in.
fn refuse_simulated(args: &CopyArgs) -> Result<()> {
    crate::medium::open::refuse_simulated(&args.source, "copy (SRC)")?;
    crate::medium::open::refuse_simulated(&args.target.target, "copy (DST)")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(args: &[&str]) -> String {
        match crate::cli::command_of(&[&["copy"], args]) {
            crate::cli::Command::Copy(c) => crate::cli::refusal(CopyConfig::from_args(&c)),
            _ => unreachable!("a copy command line"),
        }
    }

    #[test]
    fn simulated_ends_are_refused() {
        assert!(message(&["sim:size=32M", "out.img"]).contains("copy (SRC)"));
        assert!(message(&["in.img", "sim:size=32M"]).contains("copy (DST)"));
    }

    #[test]
    fn a_usable_block_size_passes() {
        assert_eq!(message(&["in.img", "out.img", "--bs", "4M"]), "");
    }
}
