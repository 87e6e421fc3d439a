//! The options of a run on many hosts at once (`mpirun -n N iocurve …`),
//! refused outside one; which commands take part is in [`super::cluster_job`].

use crate::vocab::limits;
use clap::Args;
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
