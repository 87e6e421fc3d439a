//! What a workload hands to its analysis: the raw figures of one run,
//! before they are read.
//!
//! Why in `result`: the workload that measures them and the analysis that
//! reads them must not import each other's layer the wrong way (analysis
//! sits below workload), so the figures they pass sit below both. None of
//! these is stored; the analysis turns them into the reports that are.

use crate::engine::IoError;
use crate::result::apps::{EvictionProof, IntervalSample, MarkSample, SavePoint, SkippedSave};

/// What one size's timing pass found, before the model is fitted.
pub struct SizeTimes {
    pub size: u64,
    pub times: Vec<u64>,
    pub eviction: EvictionProof,
    pub device_read_bytes: Option<u64>,
}

/// The saves made: the points measured, the sizes `--sync direct` could not
/// write, and the failure that cut the run short.
#[derive(Debug, Default)]
pub struct SaveRun {
    pub points: Vec<SavePoint>,
    pub skipped: Vec<SkippedSave>,
    pub failure: Option<String>,
}

/// A sustained write's figures: its samples, every request's completion,
/// and how it ended.
pub struct SustainRun {
    pub intervals: Vec<IntervalSample>,
    pub marks: Vec<MarkSample>,
    /// Completion time of each request, ns since the start (as many as
    /// the workload records; later requests are written, not timed).
    pub completions_ns: Vec<u64>,
    pub bytes: u64,
    /// Wall time of the write, ns (the final sync included).
    pub elapsed_ns: u64,
    pub error: Option<IoError>,
}

impl SustainRun {
    /// A write that failed before it began.
    pub fn failed(error: IoError) -> SustainRun {
        SustainRun {
            intervals: Vec::new(),
            marks: Vec::new(),
            completions_ns: Vec::new(),
            bytes: 0,
            elapsed_ns: 0,
            error: Some(error),
        }
    }
}
