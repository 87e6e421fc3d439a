//! The options of a run on many hosts at once (`mpirun -n N iocurve …`),
//! and which commands take part in one.

use super::{Cli, Command, apps::FilesAction};
use crate::vocab::limits;
use clap::Args;
use std::path::Path;
use std::time::Duration;

/// The help heading of the many-hosts options, and of them only.
pub const HEADING: &str = "Many hosts (under mpirun or srun)";

/// How the ranks of an MPI job work together; each is refused outside one.
///
/// Each option names its heading itself: `next_help_heading` on the
/// struct would also put every option flattened after it (`--rw`,
/// `--time`, ...) under "Many hosts".
#[derive(Debug, Args, Clone, Default)]
pub struct ClusterArgs {
    /// End every rank's measurement when the first rank finishes (IOR's
    /// stonewalling): the figures then cover only time when all ranks ran.
    /// The others stop a few milliseconds after (a median 4 ms measured on
    /// a loaded machine; see README).
    #[arg(long, help_heading = HEADING)]
    pub stonewall: bool,

    /// All ranks use one scratch file in a shared directory, each in its
    /// own segment (rank r at r × span, IOR's segmented layout).
    #[arg(long, help_heading = HEADING)]
    pub shared_file: bool,

    /// Each rank reads what a rank on another host wrote (chosen from the
    /// host names the ranks report), so no host reads from its own cache.
    #[arg(long, help_heading = HEADING)]
    pub read_other_host: bool,

    /// Go on when the ranks' kernels or file systems differ (their iocurve
    /// builds must still be one).
    #[arg(long, help_heading = HEADING)]
    pub mixed_hosts: bool,

    /// How long a rank may be silent (stopped, hung, its host unreachable,
    /// or its measurement moving no data) before the job goes on without
    /// it: rank 0 names it and its host, every other rank stops and
    /// restores what it overwrote, and the job ends with the partial
    /// result within about 5 s more [default: 30s].
    #[arg(long, help_heading = HEADING, value_name = "DURATION", value_parser = limits::INTERVAL.parser())]
    pub rank_timeout: Option<Duration>,
}

impl ClusterArgs {
    /// The first option given, for the one-line refusal outside a job.
    pub fn first_given(&self) -> Option<&'static str> {
        [
            (self.stonewall, "--stonewall"),
            (self.shared_file, "--shared-file"),
            (self.read_other_host, "--read-other-host"),
            (self.mixed_hosts, "--mixed-hosts"),
            (self.rank_timeout.is_some(), "--rank-timeout"),
        ]
        .into_iter()
        .find_map(|(given, name)| given.then_some(name))
    }
}

impl Cli {
    /// The many-hosts options of a command that runs on every rank of a
    /// job (`run`, `profile`, `curve`, `sustain`, `files`); `None` for the
    /// commands that run on one host only.
    pub fn cluster_args(&self) -> Option<&ClusterArgs> {
        match &self.command {
            Command::Run(a) => Some(&a.cluster),
            Command::Profile(a) => Some(&a.cluster),
            Command::Curve(a) => Some(&a.cluster),
            Command::Sustain(a) => Some(&a.cluster),
            Command::Files(f) => Some(match &f.action {
                FilesAction::Load(a) => &a.out.cluster,
                FilesAction::Save(a) => &a.out.cluster,
            }),
            _ => None,
        }
    }

    /// The target a rank measures (the first, for `curve`), whose file
    /// system the ranks compare before anything is opened.
    pub fn measured_target(&self) -> Option<&Path> {
        match &self.command {
            Command::Run(a) => Some(&a.target.target),
            Command::Profile(a) => Some(&a.target.target),
            Command::Curve(a) => Some(&a.target.target),
            Command::Sustain(a) => Some(&a.target.target),
            Command::Files(f) => Some(match &f.action {
                FilesAction::Load(a) => &a.dir,
                FilesAction::Save(a) => &a.dir,
            }),
            _ => None,
        }
    }

    /// The command's name as typed (`files load`), for messages.
    pub fn command_name(&self) -> String {
        let name = format!("{:?}", self.command);
        name.split(['(', ' ']).next().unwrap_or("").to_lowercase()
    }
}

impl Cli {
    /// Builds the command's typed configuration and drops it: the checks
    /// every rank's command would make, made once by rank 0 before the
    /// job goes on (the configuration itself is rebuilt by every rank from
    /// the same arguments, its own placeholders filled in).
    pub fn check_config(&self) -> anyhow::Result<()> {
        match &self.command {
            Command::Run(a) => crate::vocab::config::RunConfig::from_args(a).map(drop),
            Command::Profile(a) => crate::vocab::config::ProfileConfig::from_args(a).map(drop),
            Command::Curve(a) => crate::vocab::config::CurveConfig::from_args(a).map(drop),
            Command::Sustain(a) => super::sustain::SustainConfig::from_args(a).map(drop),
            _ => Ok(()),
        }
    }
}
