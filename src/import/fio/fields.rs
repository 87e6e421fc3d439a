//! fio's numbers and options, each read with its range checked.
//!
//! A fio document comes from another program, another machine or a hand
//! edit, and iocurve stores what it reads and later does arithmetic on it
//! (sums, rates, dates). So every figure is checked where it is read: of the
//! type fio writes, finite, not negative, and below a bound no real run
//! reaches (one that also keeps every sum and product iocurve makes of it in
//! range). A field out of range is refused with one line naming the job and
//! the field: never stored, never a panic.

use anyhow::{Error, Result, anyhow};
use serde_json::{Map, Value};

/// The most characters of a name or a value an error line shows.
const SHOWN_CHARS: usize = 40;

/// The range of a whole-number field, and the rule its refusal states.
pub(super) struct Whole {
    pub max: u64,
    pub rule: &'static str,
}

/// The range of a fractional field (always from 0), and its rule.
pub(super) struct Real {
    pub max: f64,
    pub rule: &'static str,
}

/// Bytes one direction of a job moved: at most 2^62, so that the sum of
/// its two directions fits in 64 bits.
pub(super) const BYTES: Whole = Whole {
    max: 1 << 62,
    rule: "a byte count is a whole number from 0 to 2^62",
};

/// Operations one direction of a job made.
pub(super) const COUNT: Whole = Whole {
    max: 1 << 62,
    rule: "a count is a whole number from 0 to 2^62",
};

/// A run time in milliseconds: 10^12 is 31 years, and in nanoseconds it
/// still fits in 64 bits.
pub(super) const MILLIS: Whole = Whole {
    max: 1_000_000_000_000,
    rule: "a time in milliseconds is a whole number from 0 to 10^12 (31 years)",
};

/// A latency in nanoseconds: 10^18 is 31 years, as long as a run can be.
pub(super) const NANOS: Whole = Whole {
    max: 1_000_000_000_000_000_000,
    rule: "a latency in nanoseconds is a whole number from 0 to 10^18",
};

/// The start of the run: RFC 3339, which iocurve stores, has four-digit
/// years.
pub(super) const SECONDS_SINCE_1970: Whole = Whole {
    max: 253_402_300_799,
    rule: "fio writes the start time as whole seconds since 1970, before the year 10000",
};

/// A job's error: an errno, or 0.
pub(super) const ERRNO: Whole = Whole {
    max: i32::MAX as u64,
    rule: "fio writes a job's error as an errno, a whole number from 0",
};

pub(super) const NANOS_REAL: Real = Real {
    max: 1e18,
    rule: "a latency in nanoseconds is a number from 0 to 10^18",
};

pub(super) const BYTES_PER_S: Real = Real {
    max: 1e18,
    rule: "a bandwidth is a number of bytes per second from 0 to 10^18",
};

pub(super) const IOPS: Real = Real {
    max: 1e15,
    rule: "an IOPS figure is a number from 0 to 10^15",
};

/// A CPU share in percent: fio runs at most 4096 jobs, each at most 100%.
pub(super) const CPU_PERCENT: Real = Real {
    max: 409_600.0,
    rule: "a CPU share is a percentage from 0 to 409600",
};

/// Where fields are read: one job of the document, or the document itself.
pub(super) struct Source<'a> {
    value: &'a Value,
    /// `job 'seqread'`, `job 3`, or empty for the document.
    label: String,
}

impl<'a> Source<'a> {
    pub fn document(doc: &'a Value) -> Self {
        Source {
            value: doc,
            label: String::new(),
        }
    }

    /// Job `index` (from 1) of the document, named `name` when fio gave
    /// it one.
    pub fn job(job: &'a Value, index: usize, name: Option<&str>) -> Self {
        let label = match name {
            Some(name) => format!(" job '{}'", clip(name)),
            None => format!(" job {index}"),
        };
        Source { value: job, label }
    }

    /// The refusal of `field`, whose value is `shown`, for breaking `rule`.
    pub fn refuse(&self, field: &str, shown: &str, rule: &str) -> Error {
        anyhow!("fio JSON{}: \"{field}\" is {shown}; {rule}", self.label)
    }

    /// The value at `path` below the job; `None` when a key on the way is
    /// absent.
    fn at(&self, path: &[&str]) -> Result<Option<&'a Value>> {
        let mut here = self.value;
        for (depth, key) in path.iter().enumerate() {
            let Some(object) = here.as_object() else {
                let field = match depth {
                    0 => "job".to_string(),
                    _ => path[..depth].join("."),
                };
                return Err(self.refuse(&field, &shown(here), "fio writes an object there"));
            };
            match object.get(*key) {
                Some(value) => here = value,
                None => return Ok(None),
            }
        }
        Ok(Some(here))
    }

    /// A whole number in `range` at `path`; `None` when it is absent.
    pub fn whole(&self, path: &[&str], range: &Whole) -> Result<Option<u64>> {
        let Some(value) = self.at(path)? else {
            return Ok(None);
        };
        match whole_of(value) {
            Some(n) if n <= range.max => Ok(Some(n)),
            _ => Err(self.refuse(&path.join("."), &shown(value), range.rule)),
        }
    }

    /// A whole number in `range` at `path`, which must be there.
    pub fn need(&self, path: &[&str], range: &Whole) -> Result<u64> {
        self.whole(path, range)?
            .ok_or_else(|| self.refuse(&path.join("."), "missing", range.rule))
    }

    /// A finite number in `range` at `path`; `None` when it is absent.
    pub fn real(&self, path: &[&str], range: &Real) -> Result<Option<f64>> {
        let Some(value) = self.at(path)? else {
            return Ok(None);
        };
        match value.as_f64() {
            // + 0.0 turns a -0 into 0.
            Some(x) if x.is_finite() && (0.0..=range.max).contains(&x) => Ok(Some(x + 0.0)),
            _ => Err(self.refuse(&path.join("."), &shown(value), range.rule)),
        }
    }

    /// A finite number in `range` at `path`, which must be there.
    pub fn need_real(&self, path: &[&str], range: &Real) -> Result<f64> {
        self.real(path, range)?
            .ok_or_else(|| self.refuse(&path.join("."), "missing", range.rule))
    }

    /// Every option among `keys` in `opts` is a string, as fio writes its
    /// options (a number or an object there is a hand edit or another tool).
    pub fn check_options(&self, opts: &Map<String, Value>, keys: &[&str]) -> Result<()> {
        for key in keys {
            match opts.get(*key) {
                None | Some(Value::String(_)) => {}
                Some(other) => {
                    return Err(self.refuse(
                        key,
                        &shown(other),
                        "fio writes its options as strings",
                    ));
                }
            }
        }
        Ok(())
    }

    /// Every percentile fio wrote at `path` (`"99.000000": ns`): each key a
    /// percentage, each value a latency, and the values rising with the
    /// percentage (as they do in every histogram).
    pub fn check_percentiles(&self, path: &[&str]) -> Result<()> {
        let Some(value) = self.at(path)? else {
            return Ok(());
        };
        let field = path.join(".");
        let Some(object) = value.as_object() else {
            return Err(self.refuse(&field, &shown(value), "fio writes an object there"));
        };
        let mut points = Vec::with_capacity(object.len());
        for (key, value) in object {
            let at = format!("{field}.{}", clip(key));
            let percent = key
                .parse::<f64>()
                .ok()
                .filter(|p| (0.0..=100.0).contains(p));
            let Some(percent) = percent else {
                return Err(self.refuse(
                    &at,
                    "there",
                    "fio names a percentile by its percentage, from 0 to 100",
                ));
            };
            match whole_of(value) {
                Some(ns) if ns <= NANOS.max => points.push((percent, ns, at)),
                _ => return Err(self.refuse(&at, &shown(value), NANOS.rule)),
            }
        }
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        for pair in points.windows(2) {
            let ((_, below, lower), (_, above, higher)) = (&pair[0], &pair[1]);
            if above < below {
                return Err(self.refuse(
                    higher,
                    &format!("{above}, below {lower} ({below})"),
                    "a higher percentile is never a shorter latency",
                ));
            }
        }
        Ok(())
    }
}

/// A whole number fio wrote, as an integer or as a float with no fraction;
/// `None` for anything else (a negative, a fraction, a string, null).
fn whole_of(value: &Value) -> Option<u64> {
    value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|x| x.fract() == 0.0 && (0.0..18_446_744_073_709_551_616.0).contains(x))
            .map(|x| x as u64)
    })
}

/// A JSON value as an error line shows it: a number or a short string as
/// it is, anything longer or nested by its kind.
pub(super) fn shown(value: &Value) -> String {
    match value {
        Value::String(text) => format!("\"{}\"", clip(text)),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
        scalar => clip(&scalar.to_string()),
    }
}

/// `text` kept to one line of at most [`SHOWN_CHARS`] characters: control
/// characters escaped, the rest cut with an ellipsis.
pub(super) fn clip(text: &str) -> String {
    // A line separator or a tab is not a control character, and would
    // still break or stretch the line.
    let odd = |c: char| c.is_control() || (c.is_whitespace() && c != ' ');
    let mut chars = text.chars().flat_map(|c| {
        let escaped = odd(c).then(|| c.escape_unicode());
        escaped.into_iter().flatten().chain((!odd(c)).then_some(c))
    });
    let mut kept: String = chars.by_ref().take(SHOWN_CHARS).collect();
    if chars.next().is_some() {
        kept.push('…');
    }
    kept
}

/// A size as fio writes it: per direction (`4k,64k` is 4 KiB reads and
/// 64 KiB writes; the first one given stands for the job), and with fio's
/// spellings of a unit (`4kb`, `4KiB`, `1m`), all powers of 1024 as fio
/// reads them by default.
pub(super) fn fio_size(text: &str) -> std::result::Result<u64, crate::units::ParseError> {
    let first = text
        .split(',')
        .map(str::trim)
        .find(|p| !p.is_empty())
        .unwrap_or(text);
    crate::units::parse_size(first).or_else(|e| {
        let digits = first.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        let unit = first[digits.len()..].to_ascii_lowercase();
        let unit = match unit.as_str() {
            "" | "b" => "",
            "k" | "kb" | "kib" => "K",
            "m" | "mb" | "mib" => "M",
            "g" | "gb" | "gib" => "G",
            "t" | "tb" | "tib" => "T",
            _ => return Err(e),
        };
        crate::units::parse_size(&format!("{digits}{unit}")).map_err(|_| e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_field_out_of_range_is_named_with_its_job() {
        let job = json!({"read": {"io_bytes": -1, "runtime": 1.5, "iops": "NaN"}});
        let src = Source::job(&job, 1, Some("seqread"));
        let err = src.whole(&["read", "io_bytes"], &BYTES).unwrap_err();
        assert_eq!(
            err.to_string(),
            "fio JSON job 'seqread': \"read.io_bytes\" is -1; a byte count is a whole number from 0 to 2^62"
        );
        assert!(src.whole(&["read", "runtime"], &MILLIS).is_err());
        let err = src.real(&["read", "iops"], &IOPS).unwrap_err();
        assert!(
            err.to_string().contains("\"read.iops\" is \"NaN\""),
            "{err}"
        );
        assert_eq!(src.whole(&["write", "io_bytes"], &BYTES).unwrap(), None);
        let err = src.need(&["write", "runtime"], &MILLIS).unwrap_err();
        assert!(err.to_string().contains("is missing"), "{err}");
    }

    #[test]
    fn whole_floats_are_whole_numbers_and_negative_zero_is_zero() {
        let job = json!({"a": 3.0, "b": -0.0, "c": 1e300, "d": 18446744073709551615u64});
        let src = Source::job(&job, 2, None);
        assert_eq!(src.whole(&["a"], &COUNT).unwrap(), Some(3));
        assert_eq!(src.real(&["b"], &IOPS).unwrap().unwrap().to_bits(), 0);
        let err = src.real(&["c"], &IOPS).unwrap_err().to_string();
        assert_eq!(
            err,
            "fio JSON job 2: \"c\" is 1e+300; an IOPS figure is a number from 0 to 10^15"
        );
        assert!(src.whole(&["d"], &COUNT).is_err());
        assert_eq!(
            src.whole(
                &["d"],
                &Whole {
                    max: u64::MAX,
                    rule: ""
                }
            )
            .unwrap(),
            Some(u64::MAX)
        );
    }

    #[test]
    fn a_value_where_an_object_belongs_is_refused() {
        let job = json!({"read": 5});
        let err = Source::job(&job, 1, Some("j"))
            .whole(&["read", "io_bytes"], &BYTES)
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("\"read\" is 5; fio writes an object there")
        );
    }

    #[test]
    fn percentiles_must_rise() {
        let job = json!({"p": {"50.000000": 10, "99.000000": 20, "90.000000": 15}});
        let src = Source::job(&job, 1, Some("j"));
        src.check_percentiles(&["p"]).unwrap();
        let job = json!({"p": {"50.000000": 10, "99.000000": 5}});
        let err = Source::job(&job, 1, Some("j"))
            .check_percentiles(&["p"])
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "fio JSON job 'j': \"p.99.000000\" is 5, below p.50.000000 (10); a higher percentile is never a shorter latency"
        );
        for bad in [
            json!({"p": {"x": 1}}),
            json!({"p": {"101": 1}}),
            json!({"p": {"50": -1}}),
        ] {
            assert!(
                Source::job(&bad, 1, None)
                    .check_percentiles(&["p"])
                    .is_err()
            );
        }
    }

    #[test]
    fn names_and_values_are_shown_on_one_short_line() {
        let long = "x".repeat(1000);
        assert_eq!(clip(&long).chars().count(), SHOWN_CHARS + 1);
        assert_eq!(clip("a\nb\u{2028}"), "a\\u{a}b\\u{2028}");
        assert_eq!(shown(&json!({"a": 1})), "an object");
        assert_eq!(shown(&json!("NaN")), "\"NaN\"");
        let err = Source::job(&json!({}), 1, Some("evil\nname")).refuse("bs", "0", "r");
        assert_eq!(
            err.to_string(),
            "fio JSON job 'evil\\u{a}name': \"bs\" is 0; r"
        );
    }
}
