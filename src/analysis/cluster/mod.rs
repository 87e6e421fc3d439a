//! The pure half of a run on many hosts at once (`mpirun`/`srun`): how the
//! ranks' clocks relate, how their results merge into one, who reads whose
//! data under `--read-other-host`, and whether the ranks ran alike.
//!
//! Why here, on the analysis floor: everything the MPI spine
//! (`crate::cluster`) gathers from the ranks is turned into figures by
//! functions of their inputs alone, so they are tested without MPI,
//! without a clock and without a second host. The spine measures and
//! sends; these compute:
//!
//! - [`clock`]: each rank's clock offset from ping-pong samples (Cristian's
//!   method) and the map of its timestamps onto rank 0's clock;
//! - [`merge`]: every rank's [`RunResult`](crate::result::RunResult) into
//!   one, counts added as integers and latency histograms bucket by bucket;
//! - [`placement`]: read partners on other hosts, from the host names;
//! - [`identity`]: the one line naming hosts whose builds, kernels or file
//!   systems differ from rank 0's.

pub mod clock;
pub mod identity;
pub mod merge;
pub mod placement;
