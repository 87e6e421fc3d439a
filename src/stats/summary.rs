//! The middle, mean and range of a set of whole-number timings, in one
//! pass over one sorted copy, so that a table's median and its min/max
//! always describe the same numbers.
//!
//! The median is [`super::median_u64`]'s (the mean of the middle two,
//! rounded down, for an even count); the mean is the plain arithmetic mean.

/// Count, median, mean, least and greatest of some nanosecond timings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NsSummary {
    pub count: u64,
    pub median: u64,
    pub mean: f64,
    pub min: u64,
    pub max: u64,
}

impl NsSummary {
    /// The summary of `times` in any order; `None` when there are none.
    pub fn of(times: &[u64]) -> Option<NsSummary> {
        let mut sorted = times.to_vec();
        sorted.sort_unstable();
        let median = super::median_u64(&sorted)?;
        Some(NsSummary {
            count: sorted.len() as u64,
            median,
            mean: sorted.iter().sum::<u64>() as f64 / sorted.len() as f64,
            min: sorted[0],
            max: sorted[sorted.len() - 1],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_even_count_has_the_lower_mean_of_the_middle_two_as_median() {
        let s = NsSummary::of(&[40, 10, 30, 25]).unwrap();
        assert_eq!(s.count, 4);
        assert_eq!(s.median, 27);
        assert_eq!(s.mean, 26.25);
        assert_eq!((s.min, s.max), (10, 40));
    }

    #[test]
    fn one_timing_is_its_own_summary_and_none_is_none() {
        let s = NsSummary::of(&[7]).unwrap();
        assert_eq!((s.count, s.median, s.mean, s.min, s.max), (1, 7, 7.0, 7, 7));
        assert_eq!(NsSummary::of(&[]), None);
    }
}
