//! What to measure and how to drive an engine through it.
//!
//! [`spec`] describes one measurement, [`job`] turns it into a stream of
//! operations, [`runner`] executes it and gathers the figures, [`interrupt`]
//! turns Ctrl-C into a clean stop, and [`profile`] is the CrystalDiskMark-style
//! sequence of measurements behind `iocurve profile`.

pub mod copy;
pub mod cpuload;
pub mod endure;
pub mod files;
pub mod interrupt;
pub mod job;
pub mod parallel;
pub mod pattern;
pub mod prepare;
pub mod profile;
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

pub use pattern::Pattern;
pub use spec::{MeasureSpec, Rw, SpecError, SpecRequest};
