//! Issue 14 point 6: the analyses scored over a seeded population of
//! simulated cards (`bench/calibration/mod.rs`), so that "right" is a rate
//! measured over cards drawn from the SD specification's ranges, not a
//! property of the handful of cards the other tests name. The same code
//! prints the larger table of `bench/calibrate.sh`.

use crate::calibration;
use crate::common;

use calibration::{Tally, calibrate_sustain};

/// Cards per analysis (the issue asks for at least 300).
const CARDS: usize = 300;

fn report(t: &Tally) {
    eprintln!("{}", calibration::table(std::slice::from_ref(t)));
    for e in &t.wrong_examples {
        eprintln!("wrong: {e}");
    }
    for e in &t.declined_examples {
        eprintln!("declined: {e}");
    }
}

#[test]
fn sustain_places_the_drop_within_one_request_of_the_cache_on_every_card() {
    let t = calibrate_sustain(0xca11b, CARDS);
    report(&t);
    assert_eq!(t.cases, CARDS);
    assert_eq!(t.wrong, 0, "{:#?}", t.wrong_examples);
    assert!(
        t.answer_rate() >= 0.9,
        "answered {:.0}% of the cards with a visible drop: {:#?}",
        100.0 * t.answer_rate(),
        t.declined_examples
    );
}

#[test]
fn curve_recovers_the_fixed_cost_and_bandwidth_or_declines_on_every_card() {
    // Two threads: each card is a process of its own.
    let seeds: Vec<u64> = vec![0xc0, 0xc1];
    let tallies = calibration::in_parallel(&seeds, 2, |&seed| {
        calibration::calibrate_curve(&common::iocurve_std, seed, CARDS / 2)
    });
    for t in &tallies {
        report(t);
        assert_eq!(t.wrong, 0, "{}: {:#?}", t.analysis, t.wrong_examples);
    }
    let cases: usize = tallies.iter().map(|t| t.cases).sum();
    assert_eq!(cases, 2 * CARDS, "a read and a write series per card");
    // Declining is always allowed, but an analysis that declines everything
    // would pass the line above: on cards whose curve is the model's shape
    // (no cache, no link) it must answer a fair share (measured: 46–49% of
    // the series here, 49% with `bench/calibrate.sh` at seed 1; the rest are
    // declined with a reason, mostly a fixed cost too uncertain to state on
    // a sweep in steps of four).
    let plain = tallies
        .iter()
        .find(|t| t.analysis == calibration::CURVE_PLAIN)
        .expect("cards without cache or link were drawn");
    assert!(
        plain.answer_rate() >= 0.4,
        "answered {:.0}% of the plain cards' series",
        100.0 * plain.answer_rate()
    );
}
