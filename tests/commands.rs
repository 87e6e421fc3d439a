//! What each command does, end to end through the built binary: one module
//! per command or command family (run, curve, sustain, flash, compare, the
//! stored runs, the application workloads, completions and man pages), on
//! simulated cards, files, directories, loop devices and FUSE fault devices.
//! A test of one command's answers lives here; a promise every command keeps
//! lives in `promises`. See tests/README.md.

#[path = "common/mod.rs"]
mod common;

#[path = "commands/apps.rs"]
mod apps;
#[path = "commands/compare.rs"]
mod compare;
#[path = "commands/curve.rs"]
mod curve;
#[path = "commands/ecosystem.rs"]
mod ecosystem;
#[path = "commands/every_output.rs"]
mod every_output;
#[path = "commands/flash.rs"]
mod flash;
#[path = "commands/hostile_names.rs"]
mod hostile_names;
#[path = "commands/life.rs"]
mod life;
#[path = "commands/mpi_results.rs"]
mod mpi_results;
#[path = "commands/results_db.rs"]
mod results_db;
#[path = "commands/run_directory.rs"]
mod run_directory;
#[path = "commands/sim_commands.rs"]
mod sim_commands;
#[path = "commands/stored_figures.rs"]
mod stored_figures;
#[path = "commands/stored_runs.rs"]
mod stored_runs;
#[path = "commands/sustain.rs"]
mod sustain;
