//! Where a chart's axis has its ticks and how their labels read: 10, 100,
//! 1k, 10k, 2.5, 0.1, never `100000.0`. Plotters draws the axes; these
//! choose the round values it is given as key points and write them short,
//! the same in every chart.

/// A number as a tick label: 10, 100, 1k, 10k, 1M; 2.5, 0.1; never
/// `100000.0`.
pub fn tick_label(value: f64) -> String {
    let magnitude = value.abs();
    let (scaled, suffix) = if magnitude >= 1e9 {
        (value / 1e9, "G")
    } else if magnitude >= 1e6 {
        (value / 1e6, "M")
    } else if magnitude >= 1e3 {
        (value / 1e3, "k")
    } else {
        (value, "")
    };
    format!("{}{suffix}", trimmed(scaled))
}

/// Up to three significant figures, without trailing zeros.
fn trimmed(value: f64) -> String {
    if value == 0.0 {
        return "0".into();
    }
    let digits = (3 - 1 - value.abs().log10().floor() as i32).clamp(0, 6) as usize;
    let text = format!("{value:.digits$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// Powers of ten from below `lo` to above `hi`: a log axis's ticks.
pub fn decade_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let lo = lo.max(1e-9);
    let first = lo.log10().floor() as i32;
    let last = hi.max(lo * 10.0).log10().ceil() as i32;
    (first..=last).map(|k| 10f64.powi(k)).collect()
}

/// About five round ticks from 0 to at least `hi` (steps of 1, 2 or 5
/// times a power of ten): a linear axis's ticks.
pub fn linear_ticks(hi: f64) -> Vec<f64> {
    let hi = if hi > 0.0 && hi.is_finite() { hi } else { 1.0 };
    let rough = hi / 5.0;
    let power = 10f64.powf(rough.log10().floor());
    let multiple = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .find(|m| m * power >= rough)
        .unwrap_or(10.0);
    let step = multiple * power;
    let count = (hi / step).ceil() as usize;
    // Below 1, divide by a whole power of ten: 6 / 10 is 0.6 exactly as
    // printed, where 6 × 0.1 is 0.6000000000000001.
    let at = |i: usize| match power < 1.0 {
        true => i as f64 * multiple / (1.0 / power).round(),
        false => i as f64 * step,
    };
    (0..=count).map(at).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_read_as_people_write_them() {
        let labels: Vec<String> = [10.0, 100.0, 1e3, 1e4, 1e5, 1e6, 2.5e3, 0.1, 1.0, 12.5]
            .iter()
            .map(|v| tick_label(*v))
            .collect();
        assert_eq!(
            labels,
            [
                "10", "100", "1k", "10k", "100k", "1M", "2.5k", "0.1", "1", "12.5"
            ]
        );
        assert_eq!(tick_label(0.0), "0");
        assert!(!tick_label(100000.0).contains('.'));
    }

    #[test]
    fn decades_cover_the_range() {
        assert_eq!(decade_ticks(42.0, 5300.0), vec![10.0, 100.0, 1e3, 1e4]);
        assert_eq!(decade_ticks(100.0, 100.0), vec![100.0, 1e3]);
    }

    #[test]
    fn linear_ticks_are_round_and_reach_the_top() {
        assert_eq!(linear_ticks(24.8), vec![0.0, 5.0, 10.0, 15.0, 20.0, 25.0]);
        assert_eq!(linear_ticks(7.98), vec![0.0, 2.0, 4.0, 6.0, 8.0]);
        assert_eq!(linear_ticks(0.0), vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
    }
}
