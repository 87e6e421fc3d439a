//! Reading flash measurements: the pure half of `iocurve flash`.
//!
//! Why a module of its own: the `flash` measuring layer decides what to
//! write and read and times it through a `FlashIo`; the functions here only look at the
//! numbers that came back and say what they mean (an erase-block size, an
//! open-AU count, a cache size, a fake capacity, a class verdict), each
//! with a [`Confidence`]. Keeping them apart lets every threshold be a
//! named constant that cites where it comes from (the SD Association's
//! Physical Layer Simplified Specification, flashbench, f3probe), and lets
//! the decisions be tested on hand-made figures. No I/O here.

pub mod align;
pub mod cache;
pub mod capacity;
pub mod class;
pub mod class_verdict;
pub mod open_au;

use crate::result::flash::Confidence;

/// A signal this many times what stands nearest to it is a high-confidence
/// one: three times is the separation flashbench's readers look for before
/// they call a step in the timing table real.
pub const HIGH_RATIO: f64 = 3.0;

/// A signal this many times what stands nearest to it is a medium-confidence
/// one: half of [`HIGH_RATIO`], still well clear of run-to-run noise.
pub const MEDIUM_RATIO: f64 = 1.5;

// `Confidence` is defined in `result` (a finding records it); grading a
// ratio by the thresholds above is this analysis's, so that part of its
// implementation stays here.
impl Confidence {
    /// From the ratio between the signal and what stands nearest to it.
    pub fn of_ratio(ratio: f64) -> Confidence {
        if ratio >= HIGH_RATIO {
            Confidence::High
        } else if ratio >= MEDIUM_RATIO {
            Confidence::Medium
        } else {
            Confidence::Low
        }
    }
}
