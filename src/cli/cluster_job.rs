//! Which commands take part in a job on many hosts, and what each brings
//! to it (its many-hosts options, the target the ranks compare, its
//! checked configuration). Apart from [`super::cluster`] so that the
//! options, which every such command's arguments hold, name no command.

use super::{Cli, Command, apps::FilesAction, cluster::ClusterArgs};
use std::path::Path;

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
