//! Many hosts at once: `mpirun -n N iocurve …` (or `srun`), each rank
//! measuring its own target, rank 0 merging the ranks' results exactly.
//!
//! MPI is the transport because it is what every cluster already launches
//! with: process placement, failure handling and collectives come from the
//! launcher (IOR and mdtest do the same). This module speaks to the other
//! ranks through one small wire (rsmpi behind the `mpi` feature;
//! threads in one process for the unit tests), measures the clocks, holds
//! every rank at the start of each counted pass, and hands rank 0 what the
//! pure merge in [`crate::analysis::cluster`] needs. No wait is for good:
//! a rank silent for `--rank-timeout` is named and the job goes on
//! without it to a clean end ([`liveness`]).

mod codec;
mod counted;
pub mod job;
pub mod liveness;
#[cfg(feature = "mpi")]
pub mod mpi_wire;
pub mod placeholders;
mod pulse;
pub mod steps;
#[cfg(test)]
pub mod threads;
pub mod wire;

use crate::result::cluster::RankIdentity;
use job::Job;
use std::path::Path;
use std::sync::OnceLock;

static JOB: OnceLock<Job> = OnceLock::new();

/// Makes `job` this process's job for the rest of its life, holds every
/// measurement's counted pass with the other ranks', and starts the
/// liveness beat.
pub fn install(job: Job) -> &'static Job {
    let _ = JOB.set(job);
    let job = JOB.get().expect("set just above");
    crate::workload::coordinate::install(job);
    job.start_beating();
    job
}

/// The job this process is a rank of, once installed.
pub fn job() -> Option<&'static Job> {
    JOB.get()
}

/// True on a rank other than 0 of an installed job: it measures, but
/// prints and saves nothing (rank 0 speaks for the job).
pub fn is_silent_rank() -> bool {
    job().is_some_and(|j| !j.is_root())
}

/// True when a launcher started this process as a rank: Open MPI's
/// `mpirun` (`OMPI_COMM_WORLD_SIZE`), or a PMI/PMIx launcher such as
/// `srun --mpi=pmix` (`PMIX_RANK`, `PMI_SIZE`).
pub fn launched() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

/// Initialises MPI and joins the job, when built with the `mpi` feature.
#[cfg(feature = "mpi")]
pub fn join() -> Option<Job> {
    let wire = mpi_wire::MpiWire::init()?;
    Some(Job::join(Box::new(wire), this_host()))
}

/// Leaves MPI before the process exits: cleanly (`MPI_Finalize`), or,
/// for a rank that gave up on the job or went on without a lost rank,
/// without it (finalize would wait for the lost rank).
pub fn leave() {
    if let Some(job) = job() {
        job.close();
    }
    #[cfg(feature = "mpi")]
    match job().is_some_and(|j| j.abandoned() || j.lost_any()) {
        false => mpi_wire::MpiWire::finalize(),
        true => mpi_wire::MpiWire::forsake(),
    }
}

/// Leaves without `MPI_Finalize` (the job is being ended by the launcher).
pub fn leave_abandoned() {
    if let Some(job) = job() {
        job.close();
    }
    #[cfg(feature = "mpi")]
    mpi_wire::MpiWire::forsake();
}

/// This host's name, as `uname -n` gives it.
pub fn this_host() -> String {
    crate::probe::host::this_host().hostname
}

/// What this rank says about itself before anything is opened.
pub fn identity(job: &Job, target: &Path) -> RankIdentity {
    let host = crate::probe::host::this_host();
    RankIdentity {
        rank: job.rank(),
        host: job.host().to_string(),
        local_rank: job.local_rank(),
        version: host.iocurve_version,
        build: build_id(),
        kernel: host.kernel,
        file_system: file_system_of(target),
        target: target.display().to_string(),
    }
}

/// A checksum of the running executable: one version built twice (other
/// sources, other options) gives two builds. `IOCURVE_TEST_BUILD` stands
/// in for it in the tests of a mismatch.
fn build_id() -> String {
    if let Some(fake) = std::env::var_os("IOCURVE_TEST_BUILD") {
        return fake.to_string_lossy().into_owned();
    }
    match std::fs::read("/proc/self/exe") {
        Ok(bytes) => format!("{:08x}", crc32c::crc32c(&bytes)),
        Err(_) => "unknown".into(),
    }
}

/// The file system type under `path` (`ext4`, `nfs4`, `lustre`), or
/// `block device` for a device node.
fn file_system_of(path: &Path) -> String {
    use std::os::unix::fs::FileTypeExt;
    if std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device()) {
        return "block device".into();
    }
    match crate::probe::sysfs::mount_of(path) {
        Ok(Some(mount)) => mount.fstype,
        _ => "unknown".into(),
    }
}

/// Under `--read-other-host`: once every rank has written its own scratch
/// file, the file of the rank this one reads from (a rank on another host,
/// see [`crate::analysis::cluster::placement`]), opened for reading. `None`
/// outside a job, without the option, or when every rank is on one host
/// (the result says why).
pub fn partner_target(
    cfg: &crate::vocab::config::RunConfig,
    area: u64,
) -> anyhow::Result<Option<crate::medium::OpenTarget>> {
    let Some(job) = job() else { return Ok(None) };
    let Some(partners) = job.partners() else {
        return Ok(None);
    };
    if cfg.rw.writes() {
        return Err(crate::error::usage(
            "--read-other-host measures reads of another host's data: give --rw read or --rw randread",
        ));
    }
    job.arrive("written for --read-other-host");
    let from = partners.read_from.get(job.rank() as usize).copied();
    let Some(from) = from.filter(|f| *f != job.rank()) else {
        return Ok(None);
    };
    let dir = job
        .targets()
        .get(from as usize)
        .cloned()
        .unwrap_or_default();
    let Some(path) = crate::medium::scratch::rank_scratch_path(Path::new(&dir), from) else {
        return Err(crate::error::usage(
            "--read-other-host reads another rank's scratch file: give a directory target on a file system every host sees",
        ));
    };
    let target = crate::vocab::config::TargetConfig {
        path,
        ..cfg.target.clone()
    };
    crate::medium::open::open_target(&target, false, area).map(Some)
}
