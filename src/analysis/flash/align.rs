//! Reading the boundary timings of `flash align`: where the steps in the
//! read-time differences are, and so the AU and the page.
//!
//! The method is flashbench's (Arnd Bergmann, flashbench `--align`; LWN,
//! "Optimizing Linux with cheap flash drives", 2011): diff(A) = t(on) −
//! (t(before) + t(after)) / 2 is high at multiples of the AU, lower at
//! multiples of the page only, flat elsewhere. flashbench leaves the table
//! to its reader; here the steps are found as sets: the AU is the smallest
//! candidate of the high group when that group is exactly the candidates
//! that are multiples of it, the page likewise among the smaller ones.

use crate::result::flash::Confidence;
use serde::Serialize;

/// One candidate alignment and its timings (minimum over samples), ns.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Row {
    pub align: u64,
    pub before_ns: u64,
    pub on_ns: u64,
    pub after_ns: u64,
    pub diff_ns: i64,
}

/// What the boundary timing found.
#[derive(Debug, Clone, Serialize)]
pub struct AlignResult {
    pub block: u64,
    pub au: Option<u64>,
    pub au_confidence: Confidence,
    pub page: Option<u64>,
    pub page_confidence: Confidence,
    pub rows: Vec<Row>,
}

/// The noise floor never goes below this, ns: a few microseconds is the
/// jitter of a single small read through a USB reader, below which
/// flashbench's tables show no meaningful step.
pub const FLOOR_MIN_NS: f64 = 3000.0;

/// The noise floor as a share of the plain read time: a step smaller than
/// 3 % of a read is within the run-to-run wobble of the minimum.
pub const FLOOR_SHARE: f64 = 0.03;

/// The AU group: candidates whose diff is at least this share of the
/// largest diff (an erase-block boundary costs a second block's lookup,
/// about as much as the largest step; half of it keeps the group apart
/// from the page's).
pub const AU_STEP_SHARE: f64 = 0.5;

/// The page group: candidates below the AU whose diff is at least this
/// share of the largest diff (a page boundary costs far less than an AU
/// boundary, and an eighth still stands clear of the floor).
pub const PAGE_STEP_SHARE: f64 = 0.125;

/// The largest page the field shows (flashbench's survey of cards and
/// sticks): a lone step no larger could be one.
pub const MAX_PAGE: u64 = 64 << 10;

/// The first round's findings where the second agrees, at the lower of the
/// two confidences; what they disagree on is not claimed.
pub fn agreed(mut first: AlignResult, second: &AlignResult) -> AlignResult {
    if first.au != second.au {
        first.au = None;
        first.au_confidence = Confidence::Low;
        first.page = None;
        first.page_confidence = Confidence::Low;
        return first;
    }
    first.au_confidence = first.au_confidence.min(second.au_confidence);
    if first.page != second.page {
        first.page = None;
        first.page_confidence = Confidence::Low;
    } else {
        first.page_confidence = first.page_confidence.min(second.page_confidence);
    }
    first
}

/// The noise floor: [`FLOOR_MIN_NS`] or [`FLOOR_SHARE`] of the plain read
/// time, whichever is more.
fn floor_ns(rows: &[Row]) -> f64 {
    let base = rows.iter().map(|r| r.before_ns).min().unwrap_or(0) as f64;
    (FLOOR_SHARE * base).max(FLOOR_MIN_NS)
}

/// Finds the steps in the diffs (rows from the largest alignment down).
pub fn decide(block: u64, rows: Vec<Row>) -> AlignResult {
    let mut result = AlignResult {
        block,
        au: None,
        au_confidence: Confidence::Low,
        page: None,
        page_confidence: Confidence::Low,
        rows,
    };
    let rows = &result.rows;
    let floor = floor_ns(rows);
    let max = rows.iter().map(|r| r.diff_ns as f64).fold(0.0, f64::max);
    if max < floor || rows.len() < 2 {
        return result;
    }
    let Some((au, au_conf)) = step(rows, max * AU_STEP_SHARE, floor) else {
        return result;
    };
    let smaller: Vec<Row> = rows.iter().copied().filter(|r| r.align < au).collect();
    let page = step(&smaller, (max * PAGE_STEP_SHARE).max(floor), floor);
    result.au = Some(au);
    result.au_confidence = match page {
        None if au <= MAX_PAGE => Confidence::Low,
        _ => au_conf,
    };
    if let Some((page, conf)) = page {
        result.page = Some(page);
        result.page_confidence = conf;
    }
    result
}

/// The step of the rows whose diff is at least `threshold`: the smallest
/// such alignment, when those rows are exactly the candidates that are its
/// multiples and some candidate lies below it; with the confidence of the
/// group's smallest diff over the largest outside it.
fn step(rows: &[Row], threshold: f64, floor: f64) -> Option<(u64, Confidence)> {
    let high = |r: &Row| r.diff_ns as f64 >= threshold;
    let unit = rows.iter().filter(|r| high(r)).map(|r| r.align).min()?;
    let consistent = rows.iter().all(|r| high(r) == r.align.is_multiple_of(unit));
    let below = rows.iter().any(|r| r.align < unit);
    if !consistent || !below {
        return None;
    }
    let group_min = rows
        .iter()
        .filter(|r| high(r))
        .map(|r| r.diff_ns as f64)
        .fold(f64::MAX, f64::min);
    let others = rows
        .iter()
        .filter(|r| !high(r))
        .map(|r| r.diff_ns as f64)
        .fold(floor, f64::max);
    let confidence = Confidence::of_ratio(group_min / others);
    (confidence > Confidence::Low).then_some((unit, confidence))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn rounds_that_disagree_claim_nothing() {
        let found = |au: Option<u64>, page: Option<u64>| AlignResult {
            block: 1024,
            au,
            au_confidence: if au.is_some() {
                Confidence::High
            } else {
                Confidence::Low
            },
            page,
            page_confidence: if page.is_some() {
                Confidence::Medium
            } else {
                Confidence::Low
            },
            rows: Vec::new(),
        };
        let noise = agreed(found(Some(64 << 20), None), &found(None, None));
        assert_eq!((noise.au, noise.au_confidence), (None, Confidence::Low));
        let same = agreed(
            found(Some(4 << 20), Some(16 << 10)),
            &found(Some(4 << 20), Some(8 << 10)),
        );
        assert_eq!(
            (same.au, same.au_confidence),
            (Some(4 << 20), Confidence::High)
        );
        assert_eq!((same.page, same.page_confidence), (None, Confidence::Low));
    }

    #[test]
    fn flat_timings_claim_nothing() {
        let rows = (0..10)
            .map(|i| Row {
                align: 1 << (30 - i),
                before_ns: 40_000,
                on_ns: 40_000 + (i % 3) * 500,
                after_ns: 40_000,
                diff_ns: (i as i64 % 3) * 500,
            })
            .collect();
        let r = decide(1024, rows);
        assert_eq!(
            (r.au, r.page, r.au_confidence),
            (None, None, Confidence::Low)
        );
    }

    #[test]
    fn a_noise_peak_below_the_largest_alignment_claims_nothing() {
        let rows = [0i64, 9000, 0, 0]
            .iter()
            .enumerate()
            .map(|(i, d)| Row {
                align: 1 << (20 - i),
                before_ns: 40_000,
                on_ns: 40_000 + *d as u64,
                after_ns: 40_000,
                diff_ns: *d,
            })
            .collect();
        assert_eq!(decide(1024, rows).au, None);
    }
}
