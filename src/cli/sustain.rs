//! The checked settings of `iocurve sustain`, made from its command line
//! before the target is opened (arguments validated before resources open).

use crate::cli::apps::SustainArgs;
use crate::cli::config::{TargetConfig, target_config};
use crate::engine::EngineKind;
use crate::error::usage;
use crate::result::config::SustainSettings;
use anyhow::Result;

/// Largest write.
const MAX_BS: u64 = 64 << 20;

/// What `sustain` writes to, once its flags are known to make sense.
#[derive(Debug, Clone)]
pub struct SustainConfig {
    pub target: TargetConfig,
}

impl SustainConfig {
    pub fn from_args(args: &SustainArgs) -> Result<SustainConfig> {
        let mut target = target_config(&args.target)?;
        target.output = args.live.apply(target.output);
        check(args, target.engine, target.threads)?;
        Ok(SustainConfig { target })
    }

    /// The settings recorded with the result.
    pub fn settings(&self, args: &SustainArgs, offset: u64, span: u64) -> SustainSettings {
        SustainSettings {
            target: self.target.clone(),
            bytes: args.bytes,
            time_ns: args.time.map(|t| t.as_nanos() as u64),
            bs: args.bs,
            interval_ns: args.interval.as_nanos() as u64,
            mark: args.mark,
            offset,
            span,
            cpu_load: args.load.cpu_load,
        }
    }
}

fn check(args: &SustainArgs, engine: Option<EngineKind>, threads: u32) -> Result<()> {
    if engine == Some(EngineKind::Uring) || threads != 1 {
        return Err(usage(
            "sustain writes one sequential stream: leave --engine at auto and --threads at 1",
        ));
    }
    if args.bs == 0 || args.bs > MAX_BS {
        return Err(usage("--bs must be above 0 and at most 64 MiB"));
    }
    if args.bytes < args.bs {
        return Err(usage("--bytes must hold at least one --bs block"));
    }
    if args.interval.as_millis() < 10 {
        return Err(usage("--interval must be at least 10ms"));
    }
    if args.mark == 0 {
        return Err(usage("--mark must be above 0, such as 1G"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(args: &[&str]) -> String {
        use clap::Parser;
        let all = ["iocurve", "sustain", "sim:size=32M"]
            .into_iter()
            .chain(args.iter().copied());
        match crate::cli::Cli::try_parse_from(all).unwrap().command {
            crate::cli::Command::Sustain(s) => match SustainConfig::from_args(&s) {
                Ok(_) => String::new(),
                Err(e) => e.to_string(),
            },
            _ => unreachable!("a sustain command line"),
        }
    }

    #[test]
    fn defaults_are_accepted() {
        assert_eq!(message(&[]), "");
    }

    #[test]
    fn one_stream_of_sensible_blocks() {
        assert!(message(&["--threads", "2"]).contains("one sequential stream"));
        assert!(message(&["--bs", "1M", "--bytes", "4K"]).contains("at least one --bs block"));
    }
}
