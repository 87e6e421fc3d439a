//! The checked settings of `iocurve sustain`, made from its command line
//! before the target is opened (arguments validated before resources open).

use crate::cli::apps::SustainArgs;
use crate::cli::config::target_config;
use crate::error::usage;
use crate::result::Payload;
use crate::result::apps::SustainReport;
use crate::result::config::SustainPlan;
use crate::result::config::SustainSettings;
use crate::vocab::config::TargetConfig;
use crate::vocab::options::EngineKind;
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

    /// The result's payload: the settings, and what the write found
    /// (nothing yet, for the header printed before it starts).
    pub fn payload(settings: SustainSettings, sustain: SustainReport) -> Payload {
        let config = settings.into();
        Payload::Sustain { config, sustain }
    }

    /// What the run writes once the target's region is known: `--bytes`
    /// bounded by the region, in whole blocks, from its start.
    pub fn plan(settings: &SustainSettings) -> SustainPlan {
        SustainPlan {
            block_size: settings.bs as u32,
            offset: settings.offset,
            bytes: settings.bytes.min(settings.span) / settings.bs * settings.bs,
            time_ns: settings.time_ns,
            interval_ns: settings.interval_ns,
            mark_bytes: settings.mark,
        }
    }
}

fn check(args: &SustainArgs, engine: Option<EngineKind>, threads: u32) -> Result<()> {
    if engine == Some(EngineKind::Uring) || threads != 1 {
        return Err(usage(
            "sustain writes one sequential stream: leave --engine at auto, --threads at 1 and --sqpoll off",
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
        match crate::cli::command_of(&[&["sustain", "sim:size=32M"], args]) {
            crate::cli::Command::Sustain(s) => crate::cli::refusal(SustainConfig::from_args(&s)),
            _ => unreachable!("a sustain command line"),
        }
    }

    #[test]
    fn defaults_are_accepted() {
        assert_eq!(message(&[]), "");
    }

    #[test]
    fn the_plan_writes_whole_blocks_within_the_region() {
        let cli = [
            "iocurve",
            "sustain",
            "sim:size=32M",
            "--bs",
            "3M",
            "--bytes",
            "1G",
        ];
        let crate::cli::Command::Sustain(args) =
            <crate::cli::Cli as clap::Parser>::try_parse_from(cli)
                .unwrap()
                .command
        else {
            unreachable!("a sustain command line")
        };
        let cfg = SustainConfig::from_args(&args).unwrap();
        let plan = SustainConfig::plan(&cfg.settings(&args, 1 << 20, 31 << 20));
        assert_eq!(plan.offset, 1 << 20);
        assert_eq!(plan.bytes, 30 << 20, "ten 3 MiB blocks fit in 31 MiB");
        assert_eq!(plan.block_size, 3 << 20);
        assert_eq!(plan.mark_bytes, args.mark);
    }

    #[test]
    fn one_stream_of_sensible_blocks() {
        assert!(message(&["--threads", "2"]).contains("one sequential stream"));
        assert!(message(&["--bs", "1M", "--bytes", "4K"]).contains("at least one --bs block"));
    }
}
