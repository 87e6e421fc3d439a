//! The reading of a transfer-size curve as the result records it: the
//! fitted model, whether it can be trusted, the advice, the points off the
//! model, the unaligned sizes' penalties, the crossovers and the link's
//! ceiling.
//!
//! Why these types live in `result` and not beside the curve analysis
//! (`analysis::curve`) that fills them: they are fields of
//! [`CurveSeries`](super::CurveSeries), which store and report read, and
//! `result` sits below `analysis`. The analysis computes them; the few
//! methods here only evaluate what the figures already say (the model's
//! time at a size) or name a verdict.

use serde::{Deserialize, Serialize};

/// The fitted model t(n) = t0 + max(n, U)/B (U absent: t0 + n/B).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ModelFit {
    /// Fixed cost per request, µs (written as seconds, `t0_s`). Below zero
    /// only in a poor fit.
    #[serde(rename = "t0_s", with = "crate::units::wire::us_as_s")]
    #[schemars(with = "f64")]
    pub t0_us: f64,
    /// Asymptotic bandwidth, MB/s (10^6 B/s).
    #[serde(rename = "bandwidth_mb_per_s", alias = "bandwidth_mb_s")]
    pub bandwidth_mb_s: f64,
    /// Size reaching half the bandwidth in the model, bytes.
    pub n_half_bytes: f64,
    /// Size reaching 90% of the bandwidth in the model, bytes.
    pub n90_bytes: f64,
    /// Weighted R² (weights 1/t²) of the line over the points it was
    /// fitted to (those at or above U).
    pub r_squared: f64,
    /// Largest |measured − model| / model over the direct points.
    pub max_relative_error: f64,
    /// Points the line t0 + n/B was fitted to (those at or above U).
    pub points_used: usize,
    /// U: every request smaller than this costs as much as one of this
    /// size (a page program, or an erase block for random writes). Absent
    /// when no such unit was found: the plain line.
    #[serde(default)]
    pub unit_bytes: Option<u64>,
    /// Standard error of t0, µs, written as seconds (`t0_se_s`; absent
    /// with only two points).
    #[serde(default, rename = "t0_se_s", with = "crate::units::wire::opt_us_as_s")]
    #[schemars(with = "Option<f64>")]
    pub t0_se_us: Option<f64>,
    /// Standard error of B, MB/s (absent with only two points).
    #[serde(default)]
    #[serde(rename = "bandwidth_se_mb_per_s", alias = "bandwidth_se_mb_s")]
    pub bandwidth_se_mb_s: Option<f64>,
    /// Largest relative change of t0 when any one point of the line is
    /// left out (absent with only two points).
    #[serde(default)]
    pub t0_sensitivity: Option<f64>,
    /// The same for B.
    #[serde(default)]
    pub bandwidth_sensitivity: Option<f64>,
    /// The best MB/s measured among the direct points.
    #[serde(default)]
    #[serde(rename = "best_measured_mb_per_s", alias = "best_measured_mb_s")]
    pub best_measured_mb_s: Option<f64>,
}

impl ModelFit {
    /// Model time per request of `size` bytes, ns.
    pub fn time_ns_at(&self, size: f64) -> f64 {
        let charged = self.unit_bytes.map_or(size, |u| size.max(u as f64));
        self.t0_us * 1e3 + charged / (self.bandwidth_mb_s * 1e-3)
    }

    /// Model throughput at `size`, MB/s.
    pub fn mb_per_s_at(&self, size: f64) -> f64 {
        size / self.time_ns_at(size) * 1e3
    }

    /// The size at which the model reaches `share` of B, bytes: on the
    /// line t0 + n/B above U, or on the flat part below it.
    pub fn size_reaching(&self, share: f64) -> f64 {
        let t0_b = self.t0_us.max(0.0) * self.bandwidth_mb_s;
        let on_line = share * t0_b / (1.0 - share);
        match self.unit_bytes.map(|u| u as f64) {
            Some(u) if on_line < u => share * (t0_b + u),
            _ => on_line,
        }
    }
}

/// Whether a fit can be trusted, and why not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum FitQuality {
    /// Every check passed: t0 and B describe the device.
    Good,
    /// At least one check failed. `reason` is the most basic failure, with
    /// its figures; `also` the other checks that failed, if any.
    Poor {
        /// The most basic check that failed, with its figures.
        reason: FitReason,
        /// The other checks that failed, if any.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        also: Vec<FitReason>,
    },
}

impl FitQuality {
    pub fn is_good(&self) -> bool {
        matches!(self, FitQuality::Good)
    }

    /// A poor fit for one reason and no other.
    pub fn poor(reason: FitReason) -> FitQuality {
        FitQuality::Poor {
            reason,
            also: Vec::new(),
        }
    }
}

/// A check of the fit that failed, with the figures it failed on (the
/// limits are the analysis's constants at the time of the run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "check", rename_all = "snake_case")]
pub enum FitReason {
    /// No model at all: fewer than two direct sizes, or the time per
    /// request did not grow with size.
    NoModel,
    /// Too few sizes at or above where the line starts.
    TooFewPoints {
        /// Sizes measured there.
        measured: usize,
        /// Sizes a line needs to be judged.
        needed: usize,
        /// The unit the line starts at, bytes; null: the smallest size.
        #[serde(default)]
        from_unit_bytes: Option<u64>,
    },
    /// A point lies too far from the model.
    PointOffModel {
        /// The largest |measured − model| / model, percent.
        off_pct: f64,
        /// The most allowed, percent.
        allowed_pct: f64,
    },
    /// The weighted R² is too low.
    RSquaredLow {
        /// The fit's weighted R².
        r_squared: f64,
        /// The least allowed.
        min: f64,
    },
    /// B is well above the best measured: the sweep stopped before the
    /// plateau.
    PlateauNotReached {
        /// The fitted bandwidth, MB/s.
        bandwidth_mb_per_s: f64,
        /// The best measured, MB/s.
        best_mb_per_s: f64,
    },
    /// The larger sizes follow a line with a clearly smaller fixed cost.
    FixedCostCapped {
        /// The smallest size of the larger half, bytes.
        from_bytes: u64,
        /// t0 of that half, seconds.
        t0_s: f64,
        /// Its standard error, seconds.
        t0_se_s: f64,
        /// t0 over all sizes, seconds.
        overall_t0_s: f64,
    },
    /// The fixed cost came out at or below zero.
    FixedCostNotPositive {
        /// t0, seconds.
        t0_s: f64,
    },
    /// The fixed cost's standard error is too large.
    FixedCostUncertain {
        /// t0, seconds.
        t0_s: f64,
        /// Its standard error, seconds.
        se_s: f64,
    },
    /// Leaving out one size moves the fixed cost too much.
    FixedCostSensitive {
        /// t0, seconds.
        t0_s: f64,
        /// The largest relative move, percent.
        shift_pct: f64,
    },
    /// The bandwidth's standard error is too large.
    BandwidthUncertain {
        /// B, MB/s.
        bandwidth_mb_per_s: f64,
        /// Its standard error, MB/s.
        se_mb_per_s: f64,
    },
    /// Leaving out one size moves the bandwidth too much.
    BandwidthSensitive {
        /// B, MB/s.
        bandwidth_mb_per_s: f64,
        /// The largest relative move, percent.
        shift_pct: f64,
    },
    /// A reason as a run of an earlier release worded it, shown as stored.
    #[serde(untagged)]
    Stored(String),
}

/// A request size worth using, among those measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Advice {
    /// The smallest measured size from which every measured size reaches
    /// a set share (`ADVICE_SHARE`, 90%) of the peak.
    pub size: u64,
    /// Measured MB/s at `size`.
    pub mb_per_s: f64,
    /// The peak: the best measured MB/s among the direct points.
    #[serde(rename = "peak_mb_per_s", alias = "peak_mb_s")]
    pub peak_mb_s: f64,
    /// `mb_per_s / peak_mb_s`.
    pub share_of_peak: f64,
}

/// A point far from the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Deviation {
    /// Transfer size, bytes.
    pub size: u64,
    /// Measured MB/s over model MB/s.
    pub ratio: f64,
    /// What the deviation suggests (runs of earlier releases: `note`, in
    /// words).
    #[serde(alias = "note")]
    pub cause: DeviationCause,
}

/// What the shape of a deviation suggests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "shape", rename_all = "snake_case")]
pub enum DeviationCause {
    /// Slower above the largest transfer the kernel sends: requests split.
    SplitAboveMaxTransfer {
        /// The kernel's largest request (max_sectors_kb), bytes.
        max_transfer_bytes: u64,
    },
    /// This size alone is off (its neighbours fit): no cause evident.
    Lone,
    /// Slower from this size on: a knee (page, erase block, controller).
    Knee,
    /// Faster over neighbouring sizes: a cache or read-ahead.
    CacheHelps,
    /// The words of a run of an earlier release, shown as stored.
    #[serde(untagged)]
    Stored(String),
}

/// How much slower an unaligned size is than its aligned neighbours imply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AlignmentPenalty {
    /// The unaligned transfer size, bytes.
    pub size: u64,
    /// Median MB/s over the repetitions.
    #[serde(rename = "measured_mb_per_s", alias = "measured_mb_s")]
    pub measured_mb_s: f64,
    /// MB/s interpolated between the aligned neighbours' medians.
    #[serde(rename = "expected_mb_per_s", alias = "expected_mb_s")]
    pub expected_mb_s: f64,
    /// expected / measured (medians): 15 means fifteen times slower than
    /// expected. Only a finding when `verdict` says so.
    pub slowdown: f64,
    /// The aligned size measured below it, bytes.
    pub lower_neighbour: u64,
    /// The aligned size measured above it, bytes.
    pub upper_neighbour: u64,
    /// MB/s over the repetitions of the unaligned size. Absent in runs
    /// stored before ranges were compared.
    #[serde(default)]
    pub measured_range: Option<MbRange>,
    /// MB/s the neighbours imply, interpolated from their slowest and their
    /// fastest repetitions alike.
    #[serde(default)]
    pub expected_range: Option<MbRange>,
    /// Whether the ranges say there is a penalty.
    #[serde(default)]
    pub verdict: Option<Penalty>,
}

/// The lowest, median and highest MB/s of a size over its repetitions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MbRange {
    /// Slowest repetition, MB/s.
    pub min: f64,
    /// Median repetition, MB/s.
    pub median: f64,
    /// Fastest repetition, MB/s.
    pub max: f64,
}

/// What an unaligned size's repetitions say against its neighbours'.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Penalty {
    /// Every repetition was slower than anything the neighbours imply.
    /// `factor` compares medians, `at_least` the nearest ends of the ranges.
    Slower {
        /// Measured over expected median time: 15 means fifteen times slower.
        factor: f64,
        /// The smallest slowdown the ranges allow (their nearest ends).
        at_least: f64,
    },
    /// The ranges overlap: the difference is within the noise.
    NoPenaltySeen,
    /// Every repetition was faster than anything the neighbours imply.
    Faster {
        /// Expected over measured median time: 2 means twice as fast.
        factor: f64,
        /// The smallest speed-up the ranges allow (their nearest ends).
        at_least: f64,
    },
    /// A point measured once has no range to judge by.
    SingleRepetition,
}

/// Where one curve overtakes another.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Crossover {
    /// The access pattern of the two curves.
    pub pattern: crate::vocab::Rw,
    /// Faster below the crossing.
    pub faster_below: String,
    /// Faster above the crossing.
    pub faster_above: String,
    /// The two measured transfer sizes the crossing lies between, bytes.
    pub between: (u64, u64),
    /// Estimated size of the crossing (log-size interpolation), bytes.
    pub at_bytes: f64,
}

/// What the link says about the curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CeilingVerdict {
    /// The link, in words (`USB 2.0 High Speed`).
    pub interface: String,
    /// What the link can carry at most, MB/s (10^6 bytes per second).
    #[serde(rename = "limit_mb_per_s", alias = "limit_mb_s")]
    pub limit_mb_s: f64,
    /// The plateau sits at the link's ceiling: the link, not the medium,
    /// limits this curve.
    pub plateau_is_interface: bool,
    /// Sizes whose MB/s exceed the ceiling: a cache answered.
    pub impossible: Vec<(u64, f64)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_fits_and_qualities_load() {
        // Schema 4's keys and units (t0 in µs), brought to the current ones
        // as every stored document is.
        let mut doc = serde_json::json!({"t0_us":200.0,"bandwidth_mb_s":20.0,"n_half_bytes":4000.0,"n90_bytes":36000.0,"r_squared":0.99,"max_relative_error":0.01,"points_used":16});
        super::super::upgrade::to_current(&mut doc);
        let old: ModelFit = serde_json::from_value(doc).unwrap();
        assert_eq!(old.unit_bytes, None);
        assert!((old.mb_per_s_at(4000.0) - 10.0).abs() < 1e-9);
        let now = serde_json::to_value(old).unwrap();
        assert!(
            (now["t0_s"].as_f64().unwrap() - 0.0002).abs() < 1e-15,
            "{now}"
        );
        assert_eq!(now["bandwidth_mb_per_s"], 20.0);
        let q = serde_json::to_value(FitQuality::poor(FitReason::NoModel)).unwrap();
        assert_eq!(
            q,
            serde_json::json!({"verdict": "poor", "reason": {"check": "no_model"}})
        );
        // Earlier releases stored the reasons and the notes as words.
        let old: FitQuality = serde_json::from_value(
            serde_json::json!({"verdict": "poor", "reason": "why", "also": ["and"]}),
        )
        .unwrap();
        assert_eq!(
            old,
            FitQuality::Poor {
                reason: FitReason::Stored("why".into()),
                also: vec![FitReason::Stored("and".into())],
            }
        );
        let d: Deviation =
            serde_json::from_str(r#"{"size":4096,"ratio":0.5,"note":"50% slower"}"#).unwrap();
        assert_eq!(d.cause, DeviationCause::Stored("50% slower".into()));
        let new = serde_json::to_value(Deviation {
            cause: DeviationCause::Knee,
            ..d
        })
        .unwrap();
        assert_eq!(new["cause"], serde_json::json!({"shape": "knee"}));
        assert_eq!(
            serde_json::to_value(FitQuality::Good).unwrap(),
            serde_json::json!({"verdict": "good"})
        );
    }
}
