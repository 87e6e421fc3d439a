//! Weighted least squares for a straight line, y = a + b·x.
//!
//! Used for Hockney's transfer model t(n) = t0 + n/B (R. W. Hockney, "The
//! communication challenge for MPP", Parallel Computing 20, 1994): with
//! x = request size and y = time per request, the intercept is the fixed
//! cost t0 and the slope is 1/B. Sizes span five orders of magnitude, so
//! plain least squares would fit only the largest points; weighting each
//! point by 1/y² makes every point's *relative* error count the same.

/// A fitted line. Invariant: built only from at least two points with
/// distinct x, positive weights and finite values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LineFit {
    pub intercept: f64,
    pub slope: f64,
    /// Weighted coefficient of determination, 1 for a perfect fit.
    pub r_squared: f64,
}

impl LineFit {
    pub fn at(&self, x: f64) -> f64 {
        self.intercept + self.slope * x
    }
}

/// Fits y = a + b·x minimising Σ w·(y − a − b·x)². Returns `None` for fewer
/// than two usable points or when all x are equal. Points with a
/// non-finite value or a non-positive weight are ignored.
pub fn weighted_line(points: &[(f64, f64, f64)]) -> Option<LineFit> {
    let usable: Vec<(f64, f64, f64)> = points
        .iter()
        .copied()
        .filter(|&(x, y, w)| x.is_finite() && y.is_finite() && w.is_finite() && w > 0.0)
        .collect();
    if usable.len() < 2 {
        return None;
    }
    let sw: f64 = usable.iter().map(|p| p.2).sum();
    let mx = usable.iter().map(|p| p.2 * p.0).sum::<f64>() / sw;
    let my = usable.iter().map(|p| p.2 * p.1).sum::<f64>() / sw;
    let sxx: f64 = usable.iter().map(|&(x, _, w)| w * (x - mx).powi(2)).sum();
    if sxx <= f64::EPSILON * sw * mx.abs().max(1.0) {
        return None;
    }
    let sxy: f64 = usable
        .iter()
        .map(|&(x, y, w)| w * (x - mx) * (y - my))
        .sum();
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let ss_tot: f64 = usable.iter().map(|&(_, y, w)| w * (y - my).powi(2)).sum();
    let ss_res: f64 = usable
        .iter()
        .map(|&(x, y, w)| w * (y - intercept - slope * x).powi(2))
        .sum();
    let r_squared = if ss_tot > 0.0 {
        1.0 - ss_res / ss_tot
    } else {
        1.0
    };
    Some(LineFit {
        intercept,
        slope,
        r_squared,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn exact_line_is_recovered() {
        let pts: Vec<_> = (1..10)
            .map(|i| (i as f64, 3.0 + 2.0 * i as f64, 1.0))
            .collect();
        let f = weighted_line(&pts).unwrap();
        assert!((f.intercept - 3.0).abs() < 1e-9 && (f.slope - 2.0).abs() < 1e-9);
        assert!((f.r_squared - 1.0).abs() < 1e-12);
    }

    #[test]
    fn degenerate_inputs_have_no_fit() {
        assert!(weighted_line(&[]).is_none());
        assert!(weighted_line(&[(1.0, 2.0, 1.0)]).is_none());
        assert!(weighted_line(&[(1.0, 2.0, 1.0), (1.0, 3.0, 1.0)]).is_none());
        assert!(weighted_line(&[(1.0, f64::NAN, 1.0), (2.0, 3.0, 1.0)]).is_none());
    }

    proptest! {
        #[test]
        fn never_panics_and_r2_at_most_one(pts in prop::collection::vec((-1e6f64..1e6, -1e6f64..1e6, 0.0f64..10.0), 0..20)) {
            if let Some(f) = weighted_line(&pts) {
                prop_assert!(f.r_squared <= 1.0 + 1e-9);
            }
        }
    }
}
