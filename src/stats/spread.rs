//! Median and range of repeated measurements.

use serde::{Deserialize, Serialize};

/// The median, minimum and maximum of at least one finite value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub count: usize,
}

impl Spread {
    /// Returns `None` for an empty slice; NaNs are ignored.
    pub fn of(values: &[f64]) -> Option<Spread> {
        let sorted = super::finite_sorted(values);
        Some(Spread {
            median: super::quantile_of_sorted(&sorted, 0.5)?,
            min: *sorted.first()?,
            max: *sorted.last()?,
            count: sorted.len(),
        })
    }

    /// Half the range relative to the median, e.g. 0.05 for ±5%.
    pub fn relative_half_range(&self) -> f64 {
        if self.median == 0.0 {
            0.0
        } else {
            (self.max - self.min) / 2.0 / self.median
        }
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

    proptest! {
        #[test]
        fn median_between_min_and_max(v in prop::collection::vec(-1e12f64..1e12, 1..50)) {
            let s = Spread::of(&v).unwrap();
            prop_assert!(s.min <= s.median && s.median <= s.max);
            prop_assert_eq!(s.count, v.len());
        }
    }
}
