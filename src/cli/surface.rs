//! The checked settings of `iocurve surface`, made from its command line
//! before the device is opened (arguments validated before resources open).

use crate::cli::SurfaceArgs;
use crate::cli::config::target_config_of;
use crate::result::config::SurfaceSettings;
use crate::vocab::config::TargetConfig;
use crate::workload::surface::{ScanAsk, ScanPlan};
use anyhow::Result;

/// What `surface` scans and whether it may write.
#[derive(Debug, Clone)]
pub struct SurfaceConfig {
    pub target: TargetConfig,
    /// Each sample is written too: only with `--preserve` (the data is put
    /// back) or `--destructive`; otherwise the scan only reads.
    pub writes: bool,
}

impl SurfaceConfig {
    pub fn from_args(args: &SurfaceArgs) -> Result<SurfaceConfig> {
        let target = target_config_of(&args.target, "surface")?;
        crate::cli::more::check_threshold(args.threshold)?;
        let writes = target.preserve || target.destructive;
        Ok(SurfaceConfig { target, writes })
    }

    /// What the scan is asked to do, before the device's size shapes it.
    pub fn ask(&self, args: &SurfaceArgs) -> ScanAsk {
        ScanAsk {
            samples: args.samples,
            sample_size: args.sample_size,
            bs: args.bs,
            access_reads: args.access_reads,
            seed: self.target.seed,
            writes: self.writes,
        }
    }

    /// The settings recorded with the result: the sizes the plan settled on.
    pub fn settings(&self, args: &SurfaceArgs, plan: &ScanPlan) -> SurfaceSettings {
        SurfaceSettings {
            target: self.target.clone(),
            samples: args.samples,
            sample_bytes: plan.sample,
            block_size: plan.bs,
            access_reads: args.access_reads,
            threshold_percent: args.threshold,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(extra: &[&str]) -> Result<SurfaceConfig> {
        let cli = ["iocurve", "surface", "sim:size=64M"]
            .into_iter()
            .chain(extra.iter().copied());
        match <crate::cli::Cli as clap::Parser>::try_parse_from(cli)?.command {
            crate::cli::Command::Surface(args) => SurfaceConfig::from_args(&args),
            _ => unreachable!("a surface command line"),
        }
    }

    #[test]
    fn a_scan_writes_only_when_the_data_is_preserved_or_given_up() {
        assert!(!config(&[]).unwrap().writes);
        assert!(config(&["--preserve"]).unwrap().writes);
        assert!(config(&["--destructive"]).unwrap().writes);
    }

    #[test]
    fn a_threshold_outside_1_to_100_percent_is_refused_before_opening() {
        let e = config(&["--threshold", "150"]).unwrap_err().to_string();
        assert!(e.contains("--threshold"), "{e}");
    }
}
