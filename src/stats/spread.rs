//! Median and range of repeated measurements, and whether they agree.

use serde::{Deserialize, Serialize};

/// Repetitions whose range (max − min) exceeds this share of their median
/// are unstable: the figure would not come out the same on a rerun.
pub const UNSTABLE_RANGE_SHARE: f64 = 0.30;

/// The median, minimum and maximum of at least one finite value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Spread {
    /// Median of the values, in the unit of the figure (MB/s, IOPS).
    pub median: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Values counted (complete repetitions).
    pub count: usize,
    /// At least two values whose range exceeds [`UNSTABLE_RANGE_SHARE`] of
    /// the median (see [`Spread::is_unstable`]). Absent in results stored
    /// before it existed; [`Spread::is_unstable`] recomputes it.
    #[serde(default)]
    pub unstable: bool,
}

impl Spread {
    /// Returns `None` for an empty slice; NaNs are ignored.
    pub fn of(values: &[f64]) -> Option<Spread> {
        let sorted = super::finite_sorted(values);
        let mut s = Spread {
            median: super::quantile_of_sorted(&sorted, 0.5)?,
            min: *sorted.first()?,
            max: *sorted.last()?,
            count: sorted.len(),
            unstable: false,
        };
        s.unstable = s.is_unstable();
        Some(s)
    }

    /// Half the range relative to the median, e.g. 0.05 for ±5%.
    pub fn relative_half_range(&self) -> f64 {
        if self.median == 0.0 {
            0.0
        } else {
            (self.max - self.min) / 2.0 / self.median
        }
    }

    /// Whether the repetitions disagree: at least two of them, and their
    /// range (max − min) is more than 30% of their median. One value cannot
    /// be judged; a zero median with a range is unstable.
    pub fn is_unstable(&self) -> bool {
        let range = self.max - self.min;
        self.count >= 2 && range > UNSTABLE_RANGE_SHARE * self.median.abs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn odd_and_even() {
        let s = Spread::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
        assert_eq!(Spread::of(&[1.0, 2.0, 3.0, 10.0]).unwrap().median, 2.5);
        assert!(Spread::of(&[]).is_none());
    }

    #[test]
    fn a_range_above_thirty_percent_of_the_median_is_unstable() {
        // Range 0.29 and 0.31 of a median of 1.
        assert!(!Spread::of(&[0.9, 1.0, 1.19]).unwrap().unstable);
        let s = Spread::of(&[0.9, 1.0, 1.21]).unwrap();
        assert!(s.unstable && s.is_unstable());
        // One repetition cannot disagree with itself.
        assert!(!Spread::of(&[5.0]).unwrap().unstable);
        assert!(Spread::of(&[0.0, 0.0, 1.0]).unwrap().unstable);
        assert!(!Spread::of(&[0.0, 0.0]).unwrap().unstable);
    }

    #[test]
    fn a_stored_spread_without_the_flag_loads_and_is_judged_again() {
        let old: Spread =
            serde_json::from_str(r#"{"median":1.0,"min":0.5,"max":1.5,"count":3}"#).unwrap();
        assert!(!old.unstable, "absent: false");
        assert!(old.is_unstable(), "but the method judges the figures");
        let json = serde_json::to_value(Spread::of(&[1.0, 2.0]).unwrap()).unwrap();
        assert_eq!(json["unstable"], true);
    }

    proptest! {
        #[test]
        fn median_between_min_and_max(v in prop::collection::vec(-1e12f64..1e12, 1..50)) {
            let s = Spread::of(&v).unwrap();
            prop_assert!(s.min <= s.median && s.median <= s.max);
            prop_assert_eq!(s.count, v.len());
            prop_assert_eq!(s.unstable, s.is_unstable());
        }
    }
}
