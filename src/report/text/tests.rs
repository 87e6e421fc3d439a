//! Unit tests of `text`, kept beside it so the module reads as the
//! code it is.

use super::*;
use crate::testdata;

#[test]
fn unstable_figures_are_marked_in_profile_and_run_tables() {
    // Writes 12.2, 17.1 and 15.0 MB/s: a range of 33% of the median.
    let mut r = testdata::run(
        None,
        "2024-03-01T10:00:00Z",
        &[20.1, 19.9, 20.2],
        &[12.2, 17.1, 15.0],
    );
    let text = Text.render(&r);
    assert!(text.contains("~15.0"), "{text}");
    assert!(!text.contains("~20.1"), "{text}");
    assert_eq!(text.matches(UNSTABLE_LEGEND).count(), 1, "{text}");
    r = crate::testdata::as_run(r);
    let text = Text.render(&r);
    assert!(
        text.contains("median of 3: ~15.0 MB/s (12.2–17.1)"),
        "{text}"
    );
    assert!(text.contains("median of 3: 20.1 MB/s"), "{text}");
    assert_eq!(text.matches(UNSTABLE_LEGEND).count(), 1, "{text}");
    // Steady figures: no marker and no legend.
    let steady = testdata::run(None, "2024-03-01T10:00:00Z", &[20.1, 19.9], &[15.0, 15.2]);
    let text = Text.render(&steady);
    assert!(
        !text.contains(UNSTABLE_LEGEND) && !text.contains('~'),
        "{text}"
    );
}
