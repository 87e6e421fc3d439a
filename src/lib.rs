//! iocurve: a storage benchmark that tells how fast a device really is, and why.
//!
//! The modules are floors. Each names only modules on its own floor or
//! below, modules on one floor never name each other in a circle, and the
//! peers of floor 6 never name each other at all; `tests/promises/floors.rs` declares
//! the floors and holds every file to them. Read from the bottom up, the
//! floors are the measuring pipeline: closed sets and system calls, then the
//! engines that move bytes, the pure data of a result, the pure reading of it,
//! opening a medium safely, the workloads that measure, and the peers that
//! keep and render results; the command line and the commands sit on top and
//! only sequence.
//!
//! | floor | modules | what they hold |
//! |---|---|---|
//! | 8 | [`output`], [`commands`] | the one output step (print, save, `--report`, exit code); each command as a short sequence of validate, open, measure, result, output |
//! | 7 | [`cli`] | clap's arguments, turned into the vocabulary's types before anything is opened |
//! | 6 | [`store`], [`report`] | peers reading results: the SQLite results database; text, JSON, CSV, Markdown, SVG and HTML |
//! | 5 | [`live`], [`workload`], [`flash`], [`import`], [`cluster`] | the progress bar and JSON lines; the loops that measure and assemble results; the flash tests; fio's JSON; many hosts at once under MPI |
//! | 4 | [`safety`], [`medium`] | the `--preserve` journal, its locks and `recover`; opening files, scratch files and block devices, and the write gate |
//! | 3 | [`analysis`] | reading what was measured, pure: curve models, crossovers, sustain, surface, compare's verdicts, the flash detectors |
//! | 2 | [`result`] | the one result type, [`result::RunResult`], as pure data, with the rows store and report share |
//! | 1 | [`vocab`], [`engine`], [`stats`], [`probe`] | closed sets and typed configurations; the engines and clocks; histograms and the bootstrap; who a device and a host are |
//! | 0 | [`units`], [`error`], [`sys`], [`interrupt`] | units and their formats; exit codes and one-line errors; every foreign call and every `unsafe` block; Ctrl-C |

// Nested `if let` reads more plainly here than let-chains.
#![allow(clippy::collapsible_if)]

pub mod analysis;
pub mod cli;
pub mod cluster;
pub mod commands;
pub mod engine;
pub mod error;
pub mod flash;
pub mod import;
pub mod interrupt;
pub mod live;
pub mod medium;
pub mod output;
pub mod probe;
pub mod report;
pub mod result;
pub mod safety;
pub mod stats;
pub mod store;
// Every foreign call, and the only home of `unsafe` (Cargo.toml denies it
// everywhere else).
#[allow(unsafe_code)]
pub mod sys;
pub mod units;
pub mod vocab;
pub mod workload;

#[cfg(test)]
pub(crate) mod testdata;
