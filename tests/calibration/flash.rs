//! Issue 13 point 3: `flash align`, `flash capacity`, `flash open-au` and
//! `flash cache` scored over at least 500 cards each of the seeded population (`bench/calibration/flash.rs`):
//! no "high" verdict may be wrong, at least 95% of the "medium" ones must be
//! right, and each command must answer on at least 90% of the cards where
//! there is something to find.

use crate::calibration;

use calibration::flash::{
    FlashCalibration, calibrate_align, calibrate_cache, calibrate_capacity, calibrate_open_au,
    split,
};

const CARDS: usize = 500;

fn assert_calibrated(r: &FlashCalibration) {
    assert_eq!(r.tally.cases, CARDS);
    calibration::flash::assert_calibrated(r);
}

#[test]
fn align_names_the_au_of_the_population_and_is_never_wrong_when_sure() {
    assert_calibrated(&split(0xa119, CARDS, 2, calibrate_align));
}

#[test]
fn capacity_finds_every_kind_of_fake_and_is_never_wrong_when_sure() {
    assert_calibrated(&split(0xcafe, CARDS, 2, calibrate_capacity));
}

#[test]
fn open_au_counts_the_open_aus_of_the_population_and_is_never_wrong_when_sure() {
    assert_calibrated(&split(0x0a0, CARDS, 2, calibrate_open_au));
}

#[test]
fn cache_sizes_the_write_cache_of_the_population_and_is_never_wrong_when_sure() {
    assert_calibrated(&split(0xcac4e, CARDS, 2, calibrate_cache));
}
