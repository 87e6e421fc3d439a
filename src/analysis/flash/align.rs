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
//!
//! A step names its size only when the sizes it could otherwise be were
//! tried and ruled out. Below it: for every prime p of the step, a
//! candidate that is a multiple of step/p and not of the step was tried
//! and stayed out of the group (had the boundary been any divisor of the
//! step, that candidate would have shown it). Above it, a boundary that is
//! a multiple of the step cannot be told from the step's own unless it was
//! tried: a lone step (no second, higher group) no larger than
//! [`MAX_PAGE`] may be the page of an AU of a size not tried, and is an AU
//! at low confidence only; and an AU with no candidate above it that is
//! not its multiple is at most medium.

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

/// The largest page a card may show: a lone step no larger could be one,
/// the page of an AU of a size the candidates did not try. Flashbench's
/// survey of cards and sticks found pages of up to 64 KiB; issue 37's card
/// shows 128 KiB; and TLC flash that programs the three pages of a word
/// line together on four planes of 16 KiB pages would show 192 KiB. 256
/// KiB is the next size the candidates try above 192 KiB, so every size
/// such a program unit can take is covered; a larger lone step is an AU
/// (no page is that large). Old SDSC cards with AUs of 128 or 256 KiB
/// whose page step is too small to see are then named at low only.
pub const MAX_PAGE: u64 = 256 << 10;

/// The largest AU any card has: the SD specification's AU_SIZE stops at
/// 64 MiB, TLC erase blocks at 36 MiB, and a controller writing four
/// planes' blocks together as one unit at a few hundred MiB. A step above
/// this is not an erase block (issue 37: on a 1.65 TB card behind a
/// 4.6 MB/s link whose reads slow toward its end, only the far positions
/// of the largest candidate rose above the link's floor and made it
/// "AU 1.5 TiB, medium"): it is named at low only.
pub const MAX_AU: u64 = 1 << 30;

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
    // Something above the AU that is not its multiple was tried and is not
    // in its group: without it the group is its multiples alone.
    let above = rows
        .iter()
        .any(|r| r.align > au && !r.align.is_multiple_of(au));
    result.au = Some(au);
    result.au_confidence = match page {
        // A lone step of a page's size: the page of an AU not tried, or
        // an AU of one page.
        None if au <= MAX_PAGE => Confidence::Low,
        _ if au > MAX_AU => Confidence::Low,
        _ if !above => au_conf.min(Confidence::Medium),
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
/// multiples, some candidate lies below it and every smaller size it could
/// be was ruled out ([`divisors_ruled_out`]); with the confidence of the
/// group's smallest diff over the largest outside it.
fn step(rows: &[Row], threshold: f64, floor: f64) -> Option<(u64, Confidence)> {
    let high = |r: &Row| r.diff_ns as f64 >= threshold;
    let unit = rows.iter().filter(|r| high(r)).map(|r| r.align).min()?;
    let consistent = rows.iter().all(|r| high(r) == r.align.is_multiple_of(unit));
    let below = rows.iter().any(|r| r.align < unit);
    if !consistent || !below || !divisors_ruled_out(rows, unit) {
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

/// Whether no divisor of `unit` can be the boundary instead: for each
/// prime p of it, a row is a multiple of unit/p and not of unit (so, in a
/// consistent group, not in it). Every divisor d < unit divides some
/// unit/p, so such a row is a multiple of d: had the boundary been d, it
/// would have been in the group.
fn divisors_ruled_out(rows: &[Row], unit: u64) -> bool {
    primes_of(unit).into_iter().all(|p| {
        let part = unit / p;
        rows.iter()
            .any(|r| r.align.is_multiple_of(part) && !r.align.is_multiple_of(unit))
    })
}

/// The distinct primes of `n` (0 and 1 have none), by trial division up
/// to 2^20; a cofactor left above that is taken as one prime (the
/// candidates are 2^a·3^b·5^c, far from it).
fn primes_of(mut n: u64) -> Vec<u64> {
    let mut primes = Vec::new();
    if n < 2 {
        return primes;
    }
    let mut d = 2u64;
    while d <= 1 << 20 && d.saturating_mul(d) <= n {
        if n.is_multiple_of(d) {
            primes.push(d);
            while n.is_multiple_of(d) {
                n /= d;
            }
        }
        d += if d == 2 { 1 } else { 2 };
    }
    if n > 1 {
        primes.push(n);
    }
    primes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every 2^k and 3·2^k (`odd` 1 and 3), or every 9·2^k (`odd` 9), of
    /// at least 2 KiB that fits in `size`, in whole KiB.
    fn sizes(odd: &[u64], size: u64) -> Vec<u64> {
        let mut v: Vec<u64> = odd
            .iter()
            .flat_map(|o| (0..40).map(move |k| o << k))
            .filter(|a| (2048..size).contains(a) && a.is_multiple_of(1024))
            .collect();
        v.sort_unstable_by(|x, y| y.cmp(x));
        v
    }

    /// Rows by the simulator's law: a read across an AU boundary costs a
    /// command (`cmd` ns) more, one across a page boundary a quarter of
    /// one (a `page` of 0: no page step).
    fn law(aligns: &[u64], au: u64, page: u64, cmd: u64) -> Vec<Row> {
        let mut v: Vec<Row> = aligns
            .iter()
            .map(|&align| {
                let extra = match () {
                    _ if align.is_multiple_of(au) => cmd,
                    _ if page > 0 && align.is_multiple_of(page) => cmd / 4,
                    _ => 0,
                };
                Row {
                    align,
                    before_ns: 40_000,
                    on_ns: 40_000 + extra,
                    after_ns: 40_000,
                    diff_ns: extra as i64,
                }
            })
            .collect();
        v.sort_unstable_by_key(|r| std::cmp::Reverse(r.align));
        v
    }

    fn both_stages(size: u64) -> Vec<u64> {
        let mut v = sizes(&[1, 3], size);
        v.extend(sizes(&[9], size));
        v
    }

    #[test]
    fn a_lone_step_of_a_page_size_is_an_au_at_low_only() {
        // Issue 37: an 18 MiB AU divides no 2^k or 3·2^k, and its 128 KiB
        // page's step stands alone.
        let first = sizes(&[1, 3], 8 << 30);
        for page in [16u64 << 10, 64 << 10, 128 << 10, 256 << 10] {
            let r = decide(1024, law(&first, 18 << 20, page, 200_000));
            assert_eq!((r.au, r.au_confidence), (Some(page), Confidence::Low));
            assert_eq!(r.page, None);
        }
        // A lone step no page can be is the AU (the page step under the
        // floor).
        for au in [384u64 << 10, 4 << 20, 12 << 20] {
            let r = decide(1024, law(&first, au, 0, 200_000));
            assert_eq!((r.au, r.au_confidence), (Some(au), Confidence::High));
        }
    }

    #[test]
    fn with_the_9_times_2k_rows_the_au_over_its_page_is_named() {
        let rows = both_stages(8 << 30);
        for (au, page) in [
            (18u64 << 20, 128u64 << 10),
            (9 << 20, 16 << 10),
            (36 << 20, 64 << 10),
            (12 << 20, 128 << 10),
            (1536 << 10, 16 << 10),
        ] {
            let r = decide(1024, law(&rows, au, page, 200_000));
            assert_eq!((r.au, r.au_confidence), (Some(au), Confidence::High));
            assert_eq!((r.page, r.page_confidence), (Some(page), Confidence::High));
        }
    }

    #[test]
    fn a_step_whose_divisors_were_not_all_tried_is_not_named() {
        // 9·2^k from 18 MiB only: 9 MiB, which an AU dividing 18 MiB
        // could be, was never timed.
        let mut rows = sizes(&[1, 3], 8 << 30);
        rows.extend(sizes(&[9], 8 << 30).into_iter().filter(|a| *a >= 18 << 20));
        let r = decide(1024, law(&rows, 18 << 20, 128 << 10, 200_000));
        assert_eq!(r.au, None);
        assert_eq!(primes_of(18 << 20), [2, 3]);
        assert_eq!(primes_of(0), Vec::<u64>::new());
        assert_eq!(primes_of(1), Vec::<u64>::new());
        assert_eq!(primes_of(u64::MAX), [3, 5, 17, 257, 641, 65537, 6_700_417]);
    }

    #[test]
    fn an_au_with_only_its_multiples_above_is_at_most_medium() {
        // Candidates up to 8 MiB, the largest 4 MiB's multiple: nothing
        // above the AU that is not its multiple was tried.
        let rows: Vec<u64> = sizes(&[1, 3], 8 << 30)
            .into_iter()
            .filter(|a| *a <= 8 << 20 && (*a <= 4 << 20 || a.is_power_of_two()))
            .collect();
        let r = decide(1024, law(&rows, 4 << 20, 16 << 10, 200_000));
        assert_eq!((r.au, r.au_confidence), (Some(4 << 20), Confidence::Medium));
    }

    proptest::proptest! {
        /// Whatever the timings, a step of a page's size is an AU at high
        /// only over a page step, and never panics.
        #[test]
        fn a_lone_page_sized_step_is_never_an_au_at_high(
            timings in proptest::collection::vec((proptest::bool::ANY, 0i64..400_000), 64),
        ) {
            // Any subset of the candidates, with any diffs.
            let rows = both_stages(8 << 30)
                .into_iter()
                .zip(timings)
                .filter(|(_, (kept, _))| *kept)
                .map(|(align, (_, d))| Row {
                    align,
                    before_ns: 40_000,
                    on_ns: (40_000 + d) as u64,
                    after_ns: 40_000,
                    diff_ns: d,
                })
                .collect();
            let r = decide(1024, rows);
            if let Some(au) = r.au.filter(|_| r.au_confidence == Confidence::High) {
                proptest::prop_assert!(au > MAX_PAGE || r.page.is_some_and(|p| p < au));
            }
        }
    }
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

    #[test]
    fn a_step_larger_than_any_erase_block_is_named_at_low_only() {
        // Only the largest candidates rise above the floor: a 1.5 TiB
        // "AU" is no card's erase block.
        let mut rows = law(&sizes(&[1, 3], 2 << 40), 3 << 39, 16 << 10, 200_000);
        rows.retain(|r| r.align <= 3 << 39);
        let r = decide(1024, rows);
        assert_eq!((r.au, r.au_confidence), (Some(3 << 39), Confidence::Low));
    }
}
