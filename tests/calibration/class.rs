//! Issue 13 point 3 for `flash class`: every requirement of every class
//! (C2 to V90, A1, A2) judged on at least 500 cards of the seeded
//! population (`bench/calibration/class.rs`) and scored against the
//! simulator's own laws: no "high" verdict may be wrong, at least 95% of
//! the "medium" ones must be right, and at least 90% of the requirements
//! whose truth the law decides must get a verdict.

use crate::calibration;

use calibration::class::{all_classes, calibrate_class};
use calibration::flash::{assert_calibrated, split};

const CARDS: usize = 500;

#[test]
fn class_verdicts_are_never_wrong_when_sure_over_the_population() {
    let started = std::time::Instant::now();
    let r = split(0xc1a55, CARDS, 2, calibrate_class);
    eprintln!("{CARDS} cards in {:.1?}", started.elapsed());
    let per_card: usize = all_classes()
        .iter()
        .map(|c| iocurve::analysis::flash::class::requirements(c).map_or(0, |r| r.len()))
        .sum();
    assert_eq!(r.tally.cases, CARDS * per_card, "one case per requirement");
    assert_calibrated(&r);
}
