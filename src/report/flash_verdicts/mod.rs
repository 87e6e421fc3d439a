//! The words of a flash result: the one-line answer of its outcome, each
//! finding's name, value and note, and the raw table's cells, made from
//! the typed result (`crate::result::flash`) by every format alike.
//!
//! Why a module of its own: the result holds figures and typed outcomes
//! (`crate::flash::findings` builds them); a wording can change here
//! without touching a measurement or a threshold, and text, HTML, CSV and
//! Markdown say the same. Runs stored by earlier releases keep their
//! words, shown as stored.

pub mod host;
pub mod outcome;
pub mod words;

pub use host::{host_line, host_of};
pub use outcome::{class_met, headline, need_name, need_text, need_unit, reason_text};

/// A time of the raw table in the unit that suits it (`1.25 µs`,
/// `123 µs`, `1.20 ms`; a negative difference keeps its sign).
fn ns_us(ns: i64) -> String {
    crate::units::format_latency(ns as f64)
}

/// What a card really holds: a size, or the interval a search left (one
/// narrower than a hundredth of its size would read "between 2 GiB and
/// 2.00 GiB", so it is written to the byte).
pub fn holds_text(at_least: u64, at_most: Option<u64>) -> String {
    use crate::units::format_size;
    match at_most.filter(|m| *m > at_least) {
        None => format_size(at_least),
        Some(m) if m - at_least <= at_least / 100 => {
            format!(
                "{} (between {at_least} and {m} bytes)",
                format_size(at_least)
            )
        }
        Some(m) => format!("between {} and {}", format_size(at_least), format_size(m)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_time_of_the_table_names_its_unit() {
        assert_eq!(ns_us(1_250), "1.25 µs");
        assert_eq!(ns_us(0), "0 µs");
        assert_eq!(ns_us(123_456), "123 µs");
        assert_eq!(ns_us(1_204_000), "1.20 ms");
        assert_eq!(ns_us(-3_200), "-3.20 µs");
    }
}
