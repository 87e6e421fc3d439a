//! iocurve: a storage benchmark that tells how fast a device really is, and why.
//!
//! The crate is laid out as the measuring pipeline it implements:
//! [`cli`] turns arguments into a validated plain configuration, [`target`]
//! opens files, scratch files and block devices after checking it is safe to,
//! [`engine`] moves the bytes (the only home of `unsafe`), [`workload`] decides
//! which bytes to move and drives an engine, [`stats`] condenses what was timed,
//! and [`report`] turns the one result type, [`result::RunResult`], into bytes.

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
pub mod output;
pub mod probe;
pub mod report;
pub mod result;
pub mod safety;
pub mod stats;
pub mod store;
pub mod target;
pub mod units;
pub mod workload;

#[cfg(test)]
pub(crate) mod testdata;
