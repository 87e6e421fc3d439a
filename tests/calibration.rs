//! Verdicts scored over populations: the analyses and every flash command
//! run on hundreds of seeded simulated cards (`bench/calibration/`), so that
//! "right" is a rate over cards drawn from the SD specification's ranges,
//! and a sure verdict is never wrong. See tests/README.md.

#[path = "../bench/calibration/mod.rs"]
mod calibration;
#[path = "common/mod.rs"]
mod common;

#[path = "calibration/analyses.rs"]
mod analyses;
#[path = "calibration/class.rs"]
mod class;
#[path = "calibration/flash.rs"]
mod flash;
#[path = "calibration/real.rs"]
mod real;
