//! Issue 37 point 5: the flash verdicts scored over real cards
//! (`bench/real_cards.tsv`: each card simulated from what a public source
//! measured on it, `bench/calibration/real.rs`) against those published
//! facts: no "high" verdict may be wrong, at least 95% of the "medium"
//! ones must be right, and the commands must answer where a published
//! fact is to be found. The data file itself must read, and each card's
//! spec must say what its facts say.

use crate::calibration;

use calibration::flash::FlashCalibration;
use calibration::real::{self, cards};
use proptest::prelude::*;

fn by_name<'a>(all: &'a [FlashCalibration], prefix: &str) -> &'a FlashCalibration {
    all.iter()
        .find(|r| r.tally.analysis.starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix} calibration"))
}

#[test]
fn every_real_card_reads_and_its_spec_keeps_its_published_facts() {
    let all = cards::cards().expect("bench/real_cards.tsv reads");
    assert!(all.len() >= 28, "{} cards", all.len());
    for c in &all {
        assert!(!c.source.is_empty(), "{}: no source", c.name);
        assert!(
            cards::disagreements(c).is_empty(),
            "{}: {:?}",
            c.name,
            cards::disagreements(c)
        );
    }
}

#[test]
fn flash_verdicts_on_real_cards_match_their_published_facts() {
    let started = std::time::Instant::now();
    let results = real::calibrate_real().expect("the real cards read");
    eprintln!("real cards in {:.1?}", started.elapsed());
    eprintln!("{}", calibration::flash::confidence_table(&results));
    for r in &results {
        for e in &r.tally.wrong_examples {
            eprintln!("wrong ({}): {e}", r.tally.analysis);
        }
        for e in &r.tally.declined_examples {
            eprintln!("declined ({}): {e}", r.tally.analysis);
        }
        assert_eq!(
            r.high.wrong, 0,
            "{}: {:#?}",
            r.tally.analysis, r.tally.wrong_examples
        );
        assert!(
            r.medium.right_rate() >= 0.95,
            "{}: medium right {:.1}%",
            r.tally.analysis,
            100.0 * r.medium.right_rate()
        );
    }
    // Measured: align 6 of 6 answered, open-au 3 of 4 (the fourth card
    // kept 64+ AUs open, beyond the 12 the test tries), class 560 of 584
    // (the 24 declined are the 32 MB card, too small for the class test
    // with its 128 KiB AU).
    let align = by_name(&results, "flash align");
    assert!(align.tally.cases >= 6, "{} align cases", align.tally.cases);
    assert_eq!(
        align.tally.answered(),
        align.tally.cases,
        "{:#?}",
        align.tally.declined_examples
    );
    let exact_counts = cards::cards()
        .expect("the real cards read")
        .iter()
        .filter(|c| matches!(c.facts.open_aus, Some(cards::OpenAus::Exactly(_))))
        .count();
    let open_au = by_name(&results, "flash open-au");
    assert!(
        open_au.tally.answered() >= exact_counts,
        "open-au answered {} of the {exact_counts} cards with an exact published count",
        open_au.tally.answered()
    );
    let class = by_name(&results, "flash class");
    assert!(
        class.tally.cases >= 500,
        "{} class cases",
        class.tally.cases
    );
    assert!(
        class.tally.answer_rate() >= 0.9,
        "class answered {:.1}%",
        100.0 * class.tally.answer_rate()
    );
}

proptest! {
    #[test]
    fn the_card_reader_never_panics(text in "\\PC{0,400}") {
        let _ = cards::parse(&text);
    }

    #[test]
    fn the_card_reader_never_panics_on_tab_separated_lines(
        fields in proptest::collection::vec("[-0-9a-zA-Z.+:=,]{0,12}", 0..14)
    ) {
        let _ = cards::parse(&fields.join("\t"));
    }
}
