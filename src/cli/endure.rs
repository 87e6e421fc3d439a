//! The checked settings of `iocurve endure`, made before the device is
//! opened: wearing a device out needs an explicit `--destructive`, and
//! `--preserve` is refused because restoring data cannot restore wear.

use crate::cli::EndureArgs;
use crate::cli::config::target_config_of;
use crate::error::usage;
use crate::result::config::EndureSettings;
use crate::vocab::config::TargetConfig;
use anyhow::Result;

/// What `endure` wears, once the user has agreed to it.
#[derive(Debug, Clone)]
pub struct EndureConfig {
    pub target: TargetConfig,
}

impl EndureConfig {
    pub fn from_args(args: &EndureArgs) -> Result<EndureConfig> {
        let target = target_config_of(&args.target, "endure")?;
        refuse(&target, args.cycles)?;
        Ok(EndureConfig { target })
    }

    /// The settings recorded with the result.
    pub fn settings(&self, args: &EndureArgs) -> EndureSettings {
        EndureSettings {
            target: self.target.clone(),
            cycles: args.cycles,
            block_size: args.bs,
            stop_on_error: args.stop_on_error,
        }
    }
}

fn refuse(cfg: &TargetConfig, cycles: u32) -> Result<()> {
    if cfg.preserve {
        return Err(usage(
            "endure cannot be undone with --preserve: restoring the data does not restore the wear. Pass --destructive if the device may be erased and worn",
        ));
    }
    if !cfg.destructive {
        return Err(usage(format!(
            "endure writes the whole span of {} {cycles} time(s): everything on it is DESTROYED and a flash device WEARS with every cycle. Pass --destructive to confirm (--preserve cannot undo wear, so endure does not take it)",
            cfg.path.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(args: &[&str]) -> String {
        let words: &[&str] = &["endure", "sim:size=32M", "--cycles", "3"];
        match crate::cli::command_of(&[words, args]) {
            crate::cli::Command::Endure(e) => crate::cli::refusal(EndureConfig::from_args(&e)),
            _ => unreachable!("an endure command line"),
        }
    }

    #[test]
    fn wear_needs_destructive() {
        let msg = message(&[]);
        assert!(msg.contains("sim:size=32M 3 time(s)"), "{msg}");
        assert!(msg.contains("Pass --destructive to confirm"));
        assert_eq!(message(&["--destructive"]), "");
    }

    #[test]
    fn preserve_cannot_undo_wear() {
        let msg = message(&["--preserve"]);
        assert!(
            msg.starts_with("endure cannot be undone with --preserve"),
            "{msg}"
        );
    }
}
