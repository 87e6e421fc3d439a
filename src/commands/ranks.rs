//! A rank of `mpirun -n N iocurve …` (or `srun`): the steps every rank
//! takes together before its command runs, and how a failure on one rank
//! ends them all.
//!
//! Rank 0 reads the command line and decides: a usage error, a command
//! that runs on one host only, or options that contradict each other stop
//! the job with one line before anything is opened. Every rank then fills
//! its placeholders into rank 0's arguments (not its own: one command line
//! for the job), the ranks compare their builds, kernels and file systems,
//! rank 0 measures their clocks, and the command runs on every rank with
//! its counted passes held together (see [`crate::cluster`]). An error or a
//! panic on any rank prints one line naming the rank and host, then ends
//! the whole job through the launcher (`MPI_Abort`), so no rank is left
//! waiting.

use crate::cli::Cli;
use crate::cli::cluster::ClusterArgs;
use crate::cluster::job::{Job, JobOptions, Stop};
use crate::cluster::placeholders::expand;
use crate::cluster::steps::Agreed;
use crate::error::{EXIT_USAGE, exit_code, render};
use crate::medium::scratch::{ScratchNaming, name_scratch_files};
use clap::Parser;

/// When a launcher started this process: its exit code as a rank of the
/// job (MPI joined, the command run, MPI left). `None` when no launcher
/// did, and the binary runs as a single process.
pub fn main_if_launched() -> Option<i32> {
    if !crate::cluster::launched() {
        return None;
    }
    Some(launched_main())
}

#[cfg(feature = "mpi")]
fn launched_main() -> i32 {
    let Some(job) = crate::cluster::join() else {
        eprintln!(
            "Error: started by a launcher, but MPI did not start (or gives no serialized threading): check the launcher and the MPI library"
        );
        return crate::error::EXIT_INTERNAL;
    };
    let code =
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || main_of_rank(job))) {
            Ok(code) => code,
            // The panic hook printed the line (with this rank's name); the
            // unwinding put preserved data back. Now end every rank.
            Err(_) => match crate::cluster::job() {
                Some(job) => job.end_job(crate::error::EXIT_INTERNAL),
                None => crate::error::EXIT_INTERNAL,
            },
        };
    if let Some(job) = crate::cluster::job()
        && job.ended_by().is_some()
    {
        // Another rank ended the job; this one has wound down and exits
        // with that rank's code, so the launcher reports the failure's own
        // code whichever rank it hears from first.
        job.say_left();
        crate::cluster::leave_abandoned();
        return job.end_code();
    }
    crate::cluster::leave();
    code
}

/// A build without MPI under a launcher of more than one rank would run N
/// independent copies that each print a result: refused, by rank 0 only.
#[cfg(not(feature = "mpi"))]
fn launched_main() -> i32 {
    let var = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u32>().ok());
    let size = var("OMPI_COMM_WORLD_SIZE")
        .or_else(|| var("PMI_SIZE"))
        .unwrap_or(1);
    if size <= 1 {
        let cli = Cli::from_args();
        return match super::dispatch(cli) {
            Ok(code) => code,
            Err(e) => {
                eprintln!("Error: {}", render(&e));
                exit_code(&e)
            }
        };
    }
    let rank = var("OMPI_COMM_WORLD_RANK")
        .or_else(|| var("PMIX_RANK"))
        .or_else(|| var("PMI_RANK"));
    if rank.unwrap_or(0) == 0 {
        eprintln!(
            "Error: this iocurve was built without MPI, so {size} ranks would run {size} separate tests: build it with `cargo build --release --features mpi`"
        );
    }
    EXIT_USAGE
}

/// Runs this rank's part of the job; returns its exit code (rank 0's code,
/// shared with every rank).
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
fn main_of_rank(job: Job) -> i32 {
    let job = crate::cluster::install(job);
    let raw: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let verdict = job.is_root().then(|| decide(job, raw));
    let agreed = match job.agree(verdict) {
        Ok(agreed) => agreed,
        Err(stop) => return stopped(stop),
    };
    let args: Vec<String> = agreed
        .args
        .iter()
        .map(|a| expand(a, &job.names()))
        .collect();
    let mut cli = match parse(&args) {
        Ok(cli) => cli,
        Err(stop) => fail(job, stop.code, &stop.line.unwrap_or_default()),
    };
    let Some(options) = cli.cluster_args().cloned() else {
        // One rank only (rank 0 refused any other size): the command runs
        // as it would without the launcher.
        return run(job, cli);
    };
    if let Err(stop) = prepare(job, &mut cli, &options, &agreed.job_key) {
        return stopped(stop);
    }
    run(job, cli)
}

/// Rank 0's verdict on the command line.
fn decide(job: &Job, raw: Vec<String>) -> Result<Agreed, Stop> {
    let own: Vec<String> = raw.iter().map(|a| expand(a, &job.names())).collect();
    let cli = parse(&own)?;
    let name = cli.command_name();
    let Some(options) = cli.cluster_args() else {
        if job.size() == 1 {
            return Ok(agreed(raw, job));
        }
        return Err(usage(format!(
            "`iocurve {name}` runs on one host: under mpirun or srun only run, profile, curve, sustain and files run on every rank; run `iocurve {name}` without the launcher"
        )));
    };
    check_options(&cli, options, job)?;
    cli.check_config().map_err(|e| Stop {
        code: exit_code(&e),
        line: Some(format!("Error: {}", render(&e))),
    })?;
    Ok(agreed(raw, job))
}

fn agreed(args: Vec<String>, job: &Job) -> Agreed {
    Agreed {
        args,
        job_key: format!("{}-{}", job.host(), std::process::id()),
    }
}

/// The many-hosts options that cannot work together or on this command.
fn check_options(cli: &Cli, options: &ClusterArgs, job: &Job) -> Result<(), Stop> {
    let name = cli.command_name();
    let target_args = target_args(cli);
    if options.shared_file {
        let Some(t) = target_args else {
            return Err(usage(format!(
                "--shared-file: `iocurve {name}` makes its own files; give --shared-file to run, profile, curve or sustain"
            )));
        };
        if t.span.is_none() || t.offset.is_some() {
            return Err(usage(
                "--shared-file needs --span and no --offset: rank r measures SPAN bytes at r × SPAN of one file in the shared directory"
                    .to_string(),
            ));
        }
        if !t.target.is_dir() {
            return Err(usage(format!(
                "--shared-file needs a directory (the file is made there and shared), not {}",
                t.target.display()
            )));
        }
    }
    let parallel = match &cli.command {
        crate::cli::Command::Run(a) => a.parallel,
        crate::cli::Command::Profile(a) => a.parallel,
        _ => false,
    };
    if parallel && job.size() > 1 {
        return Err(usage(
            "--parallel measures one host's targets together; under mpirun every rank measures its own target at once already: drop --parallel (name each rank's target with {rank}, {host} or {local_rank})"
                .to_string(),
        ));
    }
    if options.read_other_host && !matches!(cli.command, crate::cli::Command::Run(_)) {
        return Err(usage(format!(
            "--read-other-host is for `iocurve run` with a read pattern, not `iocurve {name}`"
        )));
    }
    Ok(())
}

fn target_args(cli: &Cli) -> Option<&crate::cli::TargetArgs> {
    use crate::cli::Command;
    match &cli.command {
        Command::Run(a) => Some(&a.target),
        Command::Profile(a) => Some(&a.target),
        Command::Curve(a) => Some(&a.target),
        Command::Sustain(a) => Some(&a.target),
        _ => None,
    }
}

/// What every rank does before its command: the options, how scratch
/// files are named, the identity check, the read partners and the clocks.
fn prepare(job: &Job, cli: &mut Cli, options: &ClusterArgs, job_key: &str) -> Result<(), Stop> {
    job.set_options(JobOptions {
        stonewall: options.stonewall,
        shared_file: options.shared_file,
        read_other_host: options.read_other_host,
    });
    job.set_rank_timeout(
        options
            .rank_timeout
            .unwrap_or(crate::cluster::liveness::DEFAULT_TIMEOUT),
    );
    name_scratch_files(scratch_naming(job, cli, options, job_key));
    let target = cli
        .measured_target()
        .map(|p| p.to_path_buf())
        .unwrap_or_default();
    let simulated = target.as_os_str().to_string_lossy().starts_with("sim:");
    if !simulated && !target.exists() {
        fail(
            job,
            EXIT_USAGE,
            &format!(
                "{} does not exist on this host: give every rank an existing directory, file or block device ({{rank}}, {{host}} and {{local_rank}} may name them)",
                target.display()
            ),
        );
    }
    let mine = crate::cluster::identity(job, &target);
    let mixed = options.mixed_hosts;
    job.check_identities(&mine, |ids| {
        crate::analysis::cluster::identity::differences(&loosened(ids, mixed))
            .map(|line| format!("Error: {line}"))
    })?;
    if options.read_other_host {
        job.set_partners(crate::analysis::cluster::placement::read_partners(
            job.hosts(),
        ));
    }
    job.clocks_before_tests();
    Ok(())
}

/// With `--mixed-hosts` kernels and file systems may differ; builds not.
fn loosened(
    ids: &[crate::result::cluster::RankIdentity],
    mixed: bool,
) -> Vec<crate::result::cluster::RankIdentity> {
    ids.iter()
        .cloned()
        .map(|mut id| {
            if mixed {
                id.kernel.clear();
                id.file_system.clear();
            }
            id
        })
        .collect()
}

/// Scratch files of a job: one per rank, named by the job and the rank, or
/// with `--shared-file` one for all, this rank's segment at rank × span
/// (its `--offset` set to match).
fn scratch_naming(job: &Job, cli: &mut Cli, options: &ClusterArgs, job_key: &str) -> ScratchNaming {
    let key = crate::units::escape::file_name(job_key);
    if !options.shared_file {
        return ScratchNaming::Rank {
            job: key,
            rank: job.rank(),
        };
    }
    let own_from = set_segment(cli, job.rank());
    ScratchNaming::Shared { job: key, own_from }
}

/// Sets this rank's `--offset` to rank × span; returns it.
fn set_segment(cli: &mut Cli, rank: u32) -> u64 {
    use crate::cli::Command;
    let t = match &mut cli.command {
        Command::Run(a) => &mut a.target,
        Command::Profile(a) => &mut a.target,
        Command::Curve(a) => &mut a.target,
        Command::Sustain(a) => &mut a.target,
        _ => return 0,
    };
    let from = t.span.unwrap_or(0).saturating_mul(u64::from(rank));
    t.offset = Some(from);
    from
}

/// Runs the command; an error on this rank ends the job.
fn run(job: &Job, cli: Cli) -> i32 {
    match super::dispatch(cli) {
        Ok(code) => code,
        Err(e) => fail(job, exit_code(&e), &render(&e)),
    }
}

/// Prints one line naming this rank and its host, then ends every rank.
/// A rank other than 0 first gives rank 0 a moment: an error every rank
/// meets (a refused target, say) is then printed once, by rank 0, whose
/// abort ends the others before they print.
fn fail(job: &Job, code: i32, line: &str) -> ! {
    let grace = match job.is_root() {
        true => std::time::Duration::ZERO,
        false => std::time::Duration::from_millis(300),
    };
    if job.ended_elsewhere_within(grace) {
        // Another rank ended the job and printed why.
        job.say_left();
        crate::cluster::leave_abandoned();
        std::process::exit(code);
    }
    eprintln!("Error: {}: {line}", job.who());
    job.end_job(code)
}

/// A stop every rank agreed on: rank 0 prints its line.
fn stopped(stop: Stop) -> i32 {
    if let Some(line) = stop.line {
        match stop.code {
            0 => print!("{line}"),
            _ => eprintln!("{line}"),
        }
    }
    stop.code
}

fn usage(line: String) -> Stop {
    Stop {
        code: EXIT_USAGE,
        line: Some(format!("Error: {line}")),
    }
}

/// The command line, or the stop it calls for (help and version are
/// stops with code 0).
fn parse(args: &[String]) -> Result<Cli, Stop> {
    Cli::try_parse_from(args).map_err(|err| {
        let code = err.exit_code();
        let line = match crate::cli::clap_errors::one_line_error(&err) {
            Some(line) => format!("Error: {line}"),
            None => err.render().to_string(),
        };
        Stop {
            code,
            line: Some(line),
        }
    })
}

/// Under `mpirun`: this rank's span and requests for a command whose
/// figures are not tests (`sustain`, `files`), so that rank 0's rank rows
/// and the job's aggregate hold them. The span ends now and lasts the
/// time the command measured (the evictions and file creation between
/// sizes are left out); requests are the writes of `sustain`, the files of
/// `files load`, the write calls of `files save`. `None` alone.
pub fn span_for_merge(
    result: &crate::result::RunResult,
) -> Option<crate::result::cluster::RawCounts> {
    use crate::result::Payload;
    crate::cluster::job()?;
    let (_, took_ns) = result.payload.moved()?;
    let ops = match &result.payload {
        Payload::Sustain { sustain, .. } => {
            sustain.bytes.div_ceil(u64::from(sustain.block_size.max(1)))
        }
        Payload::FilesLoad { files_load, .. } => files_load.points.iter().map(|p| p.files).sum(),
        Payload::FilesSave { files_save, .. } => {
            files_save.points.iter().map(|p| p.times.calls).sum()
        }
        _ => 0,
    };
    let end = crate::engine::monotonic_now_ns();
    Some(crate::result::cluster::RawCounts {
        start_mono_ns: end.saturating_sub(took_ns),
        end_mono_ns: end,
        ops,
        ..Default::default()
    })
}
