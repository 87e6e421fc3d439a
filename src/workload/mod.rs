//! What to measure and how to drive an engine through it: the measuring
//! loops of every command, which never read the clock themselves (the
//! engine's [`Clock`](crate::engine::Clock) does) and never print.
//!
//! [`spec`] describes one measurement (one validating constructor), [`job`]
//! turns it into a stream of operations, [`runner`] executes it and gathers
//! the figures, [`repeat`] does that `--repeat` times, [`prepare`] fills the
//! test area first, and [`crate::interrupt`] turns Ctrl-C into a clean stop. The
//! commands' own loops: [`run_spec`] and [`parallel`] (`run`), [`profile`]
//! (the CrystalDiskMark-style rows), [`sweep`] (`curve`), [`surface`],
//! [`endure`], [`copy`], [`files`], [`stream`] and [`region`], [`sustain`],
//! [`cpuload`] (`--cpu-load`), with [`verify`] and [`crate::vocab::pattern`] for the data.

pub mod coordinate;
pub mod copy;
pub mod cpuload;
pub mod endure;
pub mod files;
pub mod gauge;
pub mod job;
pub mod live;
pub mod parallel;
pub mod prepare;
pub mod profile;
pub mod record;
pub mod region;
pub mod repeat;
pub mod run_spec;
pub mod runner;
pub mod spec;
pub mod stream;
pub mod surface;
pub mod sustain;
pub mod sweep;
pub mod verify;

pub use spec::{MeasureSpec, SpecError, SpecRequest};
