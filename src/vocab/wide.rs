//! Whole numbers a JSON reader would round: seeds (a seed given no
//! `--seed` is the clock in nanoseconds, about 1.8 * 10^18) are written as
//! decimal strings, so a run can be repeated from its own JSON.
//!
//! JSON numbers are IEEE doubles for most readers (jq, JavaScript, Python's
//! `json` with floats): integers above 2^53 come back rounded, so
//! `1795635103696162242` reads as `...162300`. A string keeps every digit.
//! Reading accepts the string and also a plain number, as results stored
//! before schema 4 hold.
//!
//! Used as `#[serde(with = "crate::vocab::wide")]` beside
//! `#[schemars(schema_with = "crate::vocab::wide::schema")]`.

use serde::{Deserialize, Deserializer, Serializer};

/// Writes `value` as its decimal digits in a JSON string.
pub fn serialize<S: Serializer>(value: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(value)
}

/// A number as written now (a string of digits) or before schema 4 (a
/// JSON number).
#[derive(Deserialize)]
#[serde(untagged)]
enum Either {
    Number(u64),
    Text(String),
}

/// Reads a string of decimal digits, or a plain JSON number.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    match Either::deserialize(d)? {
        Either::Number(n) => Ok(n),
        Either::Text(text) => parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "expected a whole number of at most 20 decimal digits, found {text:?}"
            ))
        }),
    }
}

/// Decimal digits only (no sign, no spaces), within u64.
fn parse(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// The schema of such a number: a string of decimal digits, and why.
pub fn schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "pattern": "^[0-9]+$",
        "description": "An unsigned 64-bit integer written as its decimal digits in a string: JSON readers that hold numbers as doubles (jq, JavaScript) round integers above 2^53, and this value must survive exactly (pass a seed back with --seed to repeat the run). Documents before schema_version 4 hold a plain number here."
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Holder {
        #[serde(with = "super")]
        seed: u64,
    }

    #[test]
    fn a_seed_above_2_53_is_written_as_a_string_and_read_back_exactly() {
        let h = Holder {
            seed: 1_795_635_103_696_162_242,
        };
        let text = serde_json::to_string(&h).unwrap();
        assert_eq!(text, r#"{"seed":"1795635103696162242"}"#);
        assert_eq!(serde_json::from_str::<Holder>(&text).unwrap(), h);
    }

    #[test]
    fn a_plain_number_of_an_older_document_still_reads() {
        let h: Holder = serde_json::from_str(r#"{"seed":1795635103696162242}"#).unwrap();
        assert_eq!(h.seed, 1_795_635_103_696_162_242);
    }

    #[test]
    fn anything_but_digits_is_refused() {
        for bad in [
            r#""""#,
            r#""-1""#,
            r#"" 7""#,
            r#""0x10""#,
            r#""18446744073709551616""#,
            "1.5",
            "-3",
            "null",
        ] {
            let doc = format!(r#"{{"seed":{bad}}}"#);
            assert!(serde_json::from_str::<Holder>(&doc).is_err(), "{doc}");
        }
    }

    proptest! {
        /// Every u64 survives as a string, and its digits as a number too.
        #[test]
        fn every_u64_round_trips(seed in any::<u64>()) {
            let h = Holder { seed };
            let text = serde_json::to_string(&h).unwrap();
            prop_assert_eq!(serde_json::from_str::<Holder>(&text).unwrap(), Holder { seed });
            let old = format!(r#"{{"seed":{seed}}}"#);
            prop_assert_eq!(serde_json::from_str::<Holder>(&old).unwrap().seed, seed);
        }

        /// Any string either reads as the number its digits spell or is refused.
        #[test]
        fn any_string_reads_as_its_digits_or_not_at_all(text in "\\PC{0,24}") {
            let doc = serde_json::to_string(&serde_json::json!({ "seed": text })).unwrap();
            let read = serde_json::from_str::<Holder>(&doc).ok().map(|h| h.seed);
            let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
            prop_assert_eq!(read, if digits { text.parse().ok() } else { None });
        }
    }
}
