//! One way to take a median and quantiles, used by every figure iocurve
//! prints, so that two parts of a report never disagree about the middle of
//! the same numbers.
//!
//! The q-quantile interpolates linearly between the two nearest ranks
//! (Hyndman and Fan's type 7, the default of R and NumPy): q = 0 is the
//! minimum, q = 1 the maximum, and q = 0.5 the median, which for an even
//! count is the mean of the middle two. Values that are not finite are
//! left out, so one failed measurement cannot move the middle.

/// The q-quantile (q in 0..=1, clamped) of values already in ascending
/// order; `None` when there are none.
pub fn quantile_of_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let q = if q.is_nan() { 0.5 } else { q.clamp(0.0, 1.0) };
    let rank = q * last as f64;
    let below = rank.floor() as usize;
    let above = (below + 1).min(last);
    let weight = rank - below as f64;
    Some(sorted[below] + (sorted[above] - sorted[below]) * weight)
}

/// The q-quantile of the finite values, in any order.
pub fn quantile(values: &[f64], q: f64) -> Option<f64> {
    quantile_of_sorted(&finite_sorted(values), q)
}

/// The median of the finite values; `None` when there are none.
pub fn median(values: &[f64]) -> Option<f64> {
    quantile(values, 0.5)
}

/// The median of whole numbers (nanoseconds, bytes): the middle value, or
/// the mean of the middle two rounded down.
pub fn median_u64(values: &[u64]) -> Option<u64> {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => {
            let (a, b) = (sorted[n / 2 - 1], sorted[n / 2]);
            Some(a / 2 + b / 2 + (a % 2 + b % 2) / 2)
        }
    }
}

/// The finite values in ascending order.
pub fn finite_sorted(values: &[f64]) -> Vec<f64> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    sorted
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[1.0, 2.0, 3.0, 10.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[f64::NAN, f64::INFINITY]), None);
        assert_eq!(median(&[f64::NAN, 4.0]), Some(4.0));
        assert_eq!(median_u64(&[1, 2, 3, 10]), Some(2));
        assert_eq!(median_u64(&[u64::MAX, u64::MAX]), Some(u64::MAX));
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.25), Some(2.0));
    }

    proptest! {
        #[test]
        fn the_median_lies_between_min_and_max_and_ignores_order(
            mut v in prop::collection::vec(-1e12f64..1e12, 1..60),
            seed in any::<u64>(),
        ) {
            let m = median(&v).unwrap();
            let (lo, hi) = (quantile(&v, 0.0).unwrap(), quantile(&v, 1.0).unwrap());
            prop_assert!(lo <= m && m <= hi);
            prop_assert_eq!(lo, v.iter().copied().fold(f64::INFINITY, f64::min));
            prop_assert_eq!(hi, v.iter().copied().fold(f64::NEG_INFINITY, f64::max));
            fastrand::Rng::with_seed(seed).shuffle(&mut v);
            prop_assert_eq!(median(&v), Some(m));
        }

        #[test]
        fn as_many_values_lie_on_each_side_of_the_median(
            v in prop::collection::vec(-1e6f64..1e6, 1..60),
        ) {
            let m = median(&v).unwrap();
            let below = v.iter().filter(|x| **x < m).count();
            let above = v.iter().filter(|x| **x > m).count();
            prop_assert!(below <= v.len() / 2 && above <= v.len() / 2);
        }

        #[test]
        fn quantiles_rise_with_q(
            v in prop::collection::vec(-1e9f64..1e9, 1..40),
            a in 0.0f64..=1.0,
            b in 0.0f64..=1.0,
        ) {
            let (lo, hi) = (a.min(b), a.max(b));
            prop_assert!(quantile(&v, lo).unwrap() <= quantile(&v, hi).unwrap());
        }

        #[test]
        fn the_whole_number_median_is_the_real_one_rounded_down(
            v in prop::collection::vec(0u64..1u64 << 50, 1..60),
        ) {
            let as_f64: Vec<f64> = v.iter().map(|x| *x as f64).collect();
            let real = median(&as_f64).unwrap();
            let whole = median_u64(&v).unwrap() as f64;
            prop_assert!(whole <= real && real - whole <= 0.5 + real * 1e-15);
        }
    }
}
