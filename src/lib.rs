//! iocurve: a storage benchmark that tells how fast a device really is, and why.
//!
//! The crate is laid out as the measuring pipeline it implements, one
//! folder a stage:
//!
//! - [`cli`] turns arguments into typed, validated configurations before
//!   anything is opened (closed sets of values are enums);
//! - [`target`] opens files, scratch files and block devices, and its write
//!   rules decide what a test may write ([`target::write_rules`], the gate);
//! - [`safety`] journals what `--preserve` overwrites and puts it back;
//! - [`engine`] moves the bytes (sync, io_uring, mmap/stdio, the simulated
//!   card on a virtual clock) and owns every clock read and every `unsafe`;
//! - [`workload`] decides which bytes to move and runs the loops: runs,
//!   profile rows, curve sweeps, surface scans, parallel runs, streams,
//!   sustained writes, files, copies, endurance cycles;
//! - [`flash`] measures SD cards and USB sticks through the same engines;
//! - [`stats`] condenses what was timed and [`analysis`] reads it (curve
//!   models, crossovers, surface and sustain verdicts, the flash detectors):
//!   both pure, no I/O;
//! - [`result`] is the one result type, [`result::RunResult`], whose
//!   per-command part is the tagged [`result::Payload`];
//! - [`store`] keeps results in SQLite, [`report`] renders them (text, JSON,
//!   CSV, Markdown, SVG, HTML), and [`output`] is the one step that prints,
//!   saves, writes `--report` and picks the exit code;
//! - [`probe`] says who a device is and which host measured it; [`import`]
//!   reads fio's JSON;
//! - [`commands`] only sequences these: validate, open, measure, result,
//!   output.

// Nested `if let` reads more plainly here than let-chains.
#![allow(clippy::collapsible_if)]

pub mod analysis;
pub mod cli;
pub mod commands;
// The only home of `unsafe` (Cargo.toml denies it everywhere else).
#[allow(unsafe_code)]
pub mod engine;
pub mod error;
pub mod flash;
pub mod import;
pub mod interrupt;
pub mod live;
pub mod output;
pub mod probe;
pub mod report;
pub mod result;
pub mod safety;
pub mod stats;
pub mod store;
// The only home of `unsafe` besides the engine (Cargo.toml denies it
// everywhere else).
#[allow(unsafe_code)]
pub mod sys;
pub mod target;
pub mod units;
pub mod vocab;
pub mod workload;

#[cfg(test)]
pub(crate) mod testdata;
