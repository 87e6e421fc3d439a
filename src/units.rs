//! Fixed units, parsed and printed the same way everywhere.
//!
//! Sizes: a bare number is bytes; `k`, `K`, `KiB`, `M`, `MiB`, `G`, `GiB`,
//! `T`, `TiB` are powers of 1024 (as fio and dd use them); `kB`, `KB`, `MB`,
//! `GB`, `TB` are powers of 1000 (their SI meaning). Throughput is always
//! MB/s = 10^6 bytes per second. Durations take `us`, `ms`, `s`, `m`, `h`.

use std::time::Duration;

/// Why a size, duration or number could not be read; the caller adds the
/// option name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParseError(pub String);

const SIZE_FORM: &str = "a byte count such as 512, 4k, 4KiB, 1M, 1MiB or 2G (k/M/G are 1024-based; kB/MB/GB are 1000-based)";
const DURATION_FORM: &str = "a duration such as 500ms, 5s, 2m or 1h (a bare number is seconds)";

/// Parses a byte count such as `4k`, `1MiB`, `64kB`, `1.5M` or `512`.
///
/// The arithmetic is exact (no floating point): a fraction is accepted only
/// when it comes to a whole number of bytes, and anything beyond 2^64 - 1
/// bytes is refused rather than rounded or saturated.
pub fn parse_size(text: &str) -> Result<u64, ParseError> {
    let text = one_word(text, "size")?;
    let form = || ParseError(format!("'{text}' is not {SIZE_FORM}"));
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let multiplier = size_multiplier(suffix.trim()).ok_or_else(form)?;
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
        return Err(form());
    }
    let too_large = || ParseError(format!("'{text}' is too large: at most 2^64 - 1 bytes"));
    let whole: u128 = match whole {
        "" => 0,
        digits => digits.parse::<u64>().map_err(|_| too_large())?.into(),
    };
    // The fraction as numerator / 10^places, trailing zeros dropped.
    let fraction = fraction.trim_end_matches('0');
    let not_whole = || ParseError(format!("'{text}' is not a whole number of bytes"));
    if fraction.len() > 19 {
        return Err(not_whole());
    }
    let numerator: u128 = match fraction {
        "" => 0,
        digits => digits.parse().map_err(|_| form())?,
    };
    let denominator = 10u128.pow(fraction.len() as u32);
    let scaled = numerator * u128::from(multiplier);
    if !scaled.is_multiple_of(denominator) {
        return Err(not_whole());
    }
    let bytes = whole * u128::from(multiplier) + scaled / denominator;
    u64::try_from(bytes).map_err(|_| too_large())
}

/// The value without the blanks around it; blanks inside are refused, so
/// that `4 k` is not read as `4k` when the user may have meant two values
/// (or a shell split one), and every value reads one way.
fn one_word<'a>(text: &'a str, what: &str) -> Result<&'a str, ParseError> {
    let text = text.trim();
    match text.contains(char::is_whitespace) {
        true => Err(ParseError(format!(
            "'{}' has a space inside: write a {what} as one word, such as {}",
            text.escape_debug(),
            text.split_whitespace().collect::<String>().escape_debug()
        ))),
        false => Ok(text),
    }
}

fn size_multiplier(suffix: &str) -> Option<u64> {
    const KI: u64 = 1024;
    Some(match suffix {
        "" | "B" | "b" => 1,
        "k" | "K" | "KiB" | "kiB" | "Ki" => KI,
        "m" | "M" | "MiB" | "Mi" => KI.pow(2),
        "g" | "G" | "GiB" | "Gi" => KI.pow(3),
        "t" | "T" | "TiB" | "Ti" => KI.pow(4),
        "kB" | "KB" => 1000,
        "MB" => 1000u64.pow(2),
        "GB" => 1000u64.pow(3),
        "TB" => 1000u64.pow(4),
        _ => return None,
    })
}

/// Parses a duration such as `500ms`, `5s`, `2m`, `1h` or `1.5` (seconds).
pub fn parse_duration(text: &str) -> Result<Duration, ParseError> {
    let text = one_word(text, "duration")?;
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let err = || ParseError(format!("'{text}' is not {DURATION_FORM}"));
    let value: f64 = number.parse().map_err(|_| err())?;
    let seconds_per_unit = match suffix.trim() {
        "" | "s" | "sec" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "ns" => 1e-9,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(err()),
    };
    let seconds = value * seconds_per_unit;
    if !seconds.is_finite() || seconds > 1e9 {
        return Err(err());
    }
    Ok(Duration::from_secs_f64(seconds))
}

const RATE_FORM: &str = "a rate such as 500kB/s, 5MB/s or 20MiB/s (a size per second; kB/MB are 1000-based, KiB/MiB 1024-based)";

/// Parses a transfer rate such as `5MB/s`, `20MiB/s` or `500kB/s` into bytes
/// per second. The unit before `/s` is read as [`parse_size`] reads sizes.
pub fn parse_rate(text: &str) -> Result<u64, ParseError> {
    let text = one_word(text, "rate")?;
    let err = || ParseError(format!("'{text}' is not {RATE_FORM}"));
    let size = text
        .strip_suffix("/s")
        .or_else(|| text.strip_suffix("/sec"))
        .or_else(|| text.strip_suffix("ps"))
        .ok_or_else(err)?;
    if size.trim().is_empty() {
        return Err(err());
    }
    let bytes = parse_size(size).map_err(|_| err())?;
    if bytes == 0 {
        return Err(ParseError(format!(
            "'{text}' is zero: give a positive rate such as 5MB/s"
        )));
    }
    Ok(bytes)
}

/// Checks a target given on the command line: a non-empty path without NUL
/// bytes (a directory, a file or a block device; whether it exists is
/// checked when it is opened).
pub fn parse_target(text: &str) -> Result<std::path::PathBuf, ParseError> {
    if text.trim().is_empty() {
        return Err(ParseError(
            "an empty target: give a directory (such as .), a file or a block device (such as /dev/sdb)".into(),
        ));
    }
    if text.contains('\0') {
        return Err(ParseError(format!(
            "'{}' contains a NUL byte, which no path can",
            text.escape_debug()
        )));
    }
    Ok(std::path::PathBuf::from(text))
}

/// Formats a byte count with a binary unit: `512 B`, `4 KiB`, `1.50 MiB`
/// (two decimals; device labels and stored identities are built with it).
pub fn format_size(bytes: u64) -> String {
    let (value, unit) = binary_units(bytes);
    if unit == "B" {
        format!("{bytes} B")
    } else if value.fract() == 0.0 {
        format!("{value:.0} {unit}")
    } else {
        format!("{value:.2} {unit}")
    }
}

/// Formats a measured or derived byte count with a binary unit to three
/// significant figures, as the text tables print sizes: `512 B`, `4 KiB`,
/// `1.50 MiB`, `189 KiB` (not `188.77 KiB`), `16.9 MiB`.
pub fn format_size_figure(bytes: u64) -> String {
    let (value, unit) = binary_units(bytes);
    if unit == "B" {
        format!("{bytes} B")
    } else if value.fract() == 0.0 {
        format!("{value:.0} {unit}")
    } else {
        format!("{} {unit}", three_figures(value))
    }
}

/// Formats a byte count exactly: whole binary units when it is one
/// (`4 KiB`, `1 MiB`), else bytes (`768 B`, `4100 B`), so that a size
/// chosen to the byte (a write-call size, an unaligned request) keeps its
/// odd bytes. Beyond 1 MiB a size that is not whole is rounded as
/// [`format_size`] does.
pub fn format_size_exact(bytes: u64) -> String {
    let (value, _) = binary_units(bytes);
    if value.fract() == 0.0 || bytes >= 1 << 20 {
        format_size_figure(bytes)
    } else {
        format!("{bytes} B")
    }
}

/// The largest binary unit that leaves at least 1 of it, and the value in it.
fn binary_units(bytes: u64) -> (f64, &'static str) {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    (value, UNITS[unit])
}

/// A measured figure to three significant figures, the precision a
/// repeated measurement of storage supports: `0.0215`, `4.46`, `39.8`,
/// `203`, `52691` (no decimals from 100 up: digits are never dropped
/// from the integer part). Zero is `0`.
pub fn three_figures(value: f64) -> String {
    if !value.is_finite() {
        return format!("{value}");
    }
    let magnitude = value.abs();
    if magnitude == 0.0 {
        return "0".into();
    }
    // Decimals from the magnitude after rounding, so 9.996 is "10.0".
    let decimals = if magnitude >= 99.95 {
        0
    } else if magnitude >= 9.995 {
        1
    } else if magnitude >= 0.9995 {
        2
    } else {
        let leading_zeros = (-magnitude.log10()).floor() as usize;
        (leading_zeros + 3).min(6)
    };
    let text = format!("{value:.decimals$}");
    // Below a millionth (a standard error of a perfect fit): zero.
    if text
        .trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        return "0".into();
    }
    text
}

/// Formats throughput in MB/s (10^6 B/s) to three significant figures.
pub fn format_mbps(mb_per_s: f64) -> String {
    three_figures(mb_per_s)
}

/// Formats I/O operations per second to three significant figures with a
/// `k` or `M` suffix from a thousand up: `38.0`, `950`, `4.94k`, `97.5k`,
/// `1.20M`. The same everywhere a rate of requests is printed.
pub fn format_iops(iops: f64) -> String {
    let magnitude = iops.abs();
    if magnitude >= 999_500.0 {
        format!("{}M", three_figures(iops / 1e6))
    } else if magnitude >= 999.5 {
        format!("{}k", three_figures(iops / 1e3))
    } else {
        three_figures(iops)
    }
}

/// The one unit of a column (or a line) of times: µs while every value is
/// below 10 ms, else ms, so that a column never mixes units and its header
/// can name the unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    Micros,
    Millis,
}

impl TimeUnit {
    /// The unit that suits the largest of `ns` (nanoseconds).
    pub fn for_ns(ns: impl IntoIterator<Item = f64>) -> TimeUnit {
        let largest = ns.into_iter().fold(0.0, f64::max);
        if largest >= 10e6 {
            TimeUnit::Millis
        } else {
            TimeUnit::Micros
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            TimeUnit::Micros => "µs",
            TimeUnit::Millis => "ms",
        }
    }

    /// A column header with this unit: `p50 µs`.
    pub fn header(self, name: &str) -> String {
        format!("{name} {}", self.symbol())
    }

    /// `ns` in this unit, three significant figures, without the unit.
    pub fn figure(self, ns: f64) -> String {
        let divisor = match self {
            TimeUnit::Micros => 1e3,
            TimeUnit::Millis => 1e6,
        };
        three_figures(ns / divisor)
    }
}

/// A single time with its unit, for prose: `0 µs`, `203 µs`, `13.1 ms`.
pub fn format_time_ns(ns: f64) -> String {
    let unit = TimeUnit::for_ns([ns]);
    format!("{} {}", unit.figure(ns), unit.symbol())
}

/// Megabytes (10^6 B) per second for `bytes` moved in `ns` nanoseconds.
pub fn mb_per_s(bytes: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        bytes as f64 * 1e3 / ns as f64
    }
}

/// The legend printed under every table.
pub const LEGEND: &str = "units: MB/s = 10^6 bytes/s; KiB = 1024 B, MiB = 1024^2 B, GiB = 1024^3 B; latency in µs unless marked";

/// The legend under every text table: each time column names its unit in
/// its header, so only the size and rate units are left to explain.
pub const TEXT_LEGEND: &str =
    "units: MB/s = 10^6 bytes/s; KiB = 1024 B, MiB = 1024^2 B, GiB = 1024^3 B";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iops_have_three_significant_figures() {
        for (iops, text) in [
            (4.5, "4.50"),
            (369.4, "369"),
            (4941.0, "4.94k"),
            (45_880.0, "45.9k"),
            (97_500.0, "97.5k"),
            (999_400.0, "999k"),
            (1_200_000.0, "1.20M"),
        ] {
            assert_eq!(format_iops(iops), text, "{iops}");
        }
    }
    use proptest::prelude::*;

    #[test]
    fn binary_and_si_suffixes() {
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("1M"), Ok(1 << 20));
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert_eq!(parse_size("64kB"), Ok(64_000));
        assert_eq!(parse_size("1MB"), Ok(1_000_000));
        assert_eq!(parse_size("2GB"), Ok(2_000_000_000));
        assert_eq!(parse_size("1.5M"), Ok(1_572_864));
    }

    #[test]
    fn rejects_nonsense() {
        assert!(parse_size("4q").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("k").is_err());
        assert!(parse_size("0.3").is_err());
        assert!(parse_size("-4k").is_err());
        assert!(parse_duration("5 parsecs").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
    }

    #[test]
    fn formats_sizes() {
        assert_eq!(format_size(512), "512 B");
        assert_eq!(format_size(4096), "4 KiB");
        assert_eq!(format_size(1536 * 1024), "1.50 MiB");
        assert_eq!(format_size(1 << 30), "1 GiB");
        assert_eq!(format_size_figure(193_300), "189 KiB");
        assert_eq!(format_size_figure(17_752_883), "16.9 MiB");
        assert_eq!(format_size_figure(1536 * 1024), "1.50 MiB");
        assert_eq!(format_size_exact(768), "768 B");
        assert_eq!(format_size_exact(4100), "4100 B");
        assert_eq!(format_size_exact(8192), "8 KiB");
    }

    #[test]
    fn figures_keep_three_significant_digits() {
        for (value, shown) in [
            (0.0, "0"),
            (0.02153, "0.0215"),
            (0.009312, "0.00931"),
            (3e-12, "0"),
            (4.456, "4.46"),
            (9.996, "10.0"),
            (39.81, "39.8"),
            (99.96, "100"),
            (203.4, "203"),
            (52691.2, "52691"),
        ] {
            assert_eq!(three_figures(value), shown, "{value}");
        }
        for (iops, shown) in [
            (38.0, "38.0"),
            (950.2, "950"),
            (4941.0, "4.94k"),
            (45880.0, "45.9k"),
            (97_512.0, "97.5k"),
            (999_700.0, "1.00M"),
        ] {
            assert_eq!(format_iops(iops), shown, "{iops}");
        }
    }

    #[test]
    fn a_time_column_keeps_one_unit() {
        assert_eq!(TimeUnit::for_ns([203_000.0, 9_000_000.0]), TimeUnit::Micros);
        let unit = TimeUnit::for_ns([203_000.0, 52_691_000.0]);
        assert_eq!(unit, TimeUnit::Millis);
        assert_eq!(unit.figure(203_000.0), "0.203");
        assert_eq!(unit.figure(52_691_000.0), "52.7");
        assert_eq!(unit.header("p50"), "p50 ms");
        assert_eq!(format_time_ns(0.0), "0 µs");
        assert_eq!(format_time_ns(13_107_000.0), "13.1 ms");
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("5MB/s"), Ok(5_000_000));
        assert_eq!(parse_rate("20MiB/s"), Ok(20 << 20));
        assert_eq!(parse_rate("500kB/s"), Ok(500_000));
        assert_eq!(parse_rate("4k/s"), Ok(4096));
        assert_eq!(parse_rate("1.5MB/s"), Ok(1_500_000));
        for bad in ["5MB", "/s", "0MB/s", "fast/s", "5MB/h", "", "-5MB/s"] {
            let e = parse_rate(bad).unwrap_err();
            assert!(e.0.contains("rate"), "{bad}: {e}");
        }
    }

    #[test]
    fn targets() {
        assert_eq!(
            parse_target("/dev/sdb").unwrap(),
            std::path::PathBuf::from("/dev/sdb")
        );
        assert_eq!(
            parse_target("my dir").unwrap(),
            std::path::PathBuf::from("my dir")
        );
        assert!(parse_target("").is_err());
        assert!(parse_target("  ").is_err());
        assert!(parse_target("a\0b").is_err());
    }

    proptest! {
        #[test]
        fn si_and_binary_rates_round_trip(n in 1u64..1_000_000, unit in 0usize..7) {
            let (suffix, mult) = [("", 1u64), ("kB", 1000), ("MB", 1_000_000), ("GB", 1_000_000_000),
                ("KiB", 1024), ("MiB", 1 << 20), ("GiB", 1 << 30)][unit];
            prop_assert_eq!(parse_rate(&format!("{n}{suffix}/s")), Ok(n * mult));
        }

        #[test]
        fn parse_rate_never_panics_and_names_the_form(s in "\\PC{0,14}") {
            if let Err(e) = parse_rate(&s) {
                prop_assert!(e.0.contains("rate"));
            }
        }

        #[test]
        fn a_rate_is_a_size_per_second(n in 1u64..1_000_000_000) {
            prop_assert_eq!(parse_rate(&format!("{n}/s")), parse_size(&n.to_string()));
        }

        #[test]
        fn sizes_are_whole_and_errors_name_the_form(s in "[0-9.]{0,6}[kKmMgGtTiBb]{0,3}") {
            match parse_size(&s) {
                Ok(bytes) => prop_assert!(s.chars().any(|c| c.is_ascii_digit()) || bytes == 0),
                Err(e) => prop_assert!(e.0.contains(&s) || e.0.contains("whole") || e.0.contains("large")),
            }
        }

        #[test]
        fn durations_round_trip_in_milliseconds(ms in 0u64..10_000_000) {
            prop_assert_eq!(parse_duration(&format!("{ms}ms")), Ok(Duration::from_millis(ms)));
        }

        #[test]
        fn durations_in_seconds_minutes_hours(n in 0u64..10_000, unit in 0usize..3) {
            let (suffix, secs) = [("s", 1u64), ("m", 60), ("h", 3600)][unit];
            prop_assert_eq!(parse_duration(&format!("{n}{suffix}")), Ok(Duration::from_secs(n * secs)));
        }

        #[test]
        fn targets_keep_any_nonblank_path(s in "[^\\x00]{1,40}") {
            prop_assume!(!s.trim().is_empty());
            prop_assert_eq!(parse_target(&s), Ok(std::path::PathBuf::from(&s)));
        }

        #[test]
        fn parse_target_never_panics(s in "\\PC{0,20}") {
            let _ = parse_target(&s);
        }

        #[test]
        fn binary_sizes_round_trip(n in 0u64..1_000_000, unit in 0usize..4) {
            let suffix = ["", "k", "M", "G"][unit];
            let parsed = parse_size(&format!("{n}{suffix}")).unwrap();
            prop_assert_eq!(parsed, n * 1024u64.pow(unit as u32));
        }

        #[test]
        fn parse_size_never_panics(s in "\\PC{0,12}") {
            let _ = parse_size(&s);
        }

        #[test]
        fn parse_duration_never_panics(s in "\\PC{0,12}") {
            let _ = parse_duration(&s);
        }

        #[test]
        fn every_u64_round_trips_as_bytes(n in any::<u64>()) {
            prop_assert_eq!(parse_size(&n.to_string()), Ok(n));
            prop_assert_eq!(parse_size(&format!("{n}B")), Ok(n));
        }

        #[test]
        fn suffixed_sizes_are_exact_or_refused(n in any::<u64>(), unit in 0usize..9) {
            let (suffix, mult) = [("k", 1u64 << 10), ("M", 1 << 20), ("G", 1 << 30), ("T", 1 << 40),
                ("kB", 1000), ("MB", 1_000_000), ("GB", 1_000_000_000), ("TB", 1_000_000_000_000),
                ("KiB", 1 << 10)][unit];
            let parsed = parse_size(&format!("{n}{suffix}"));
            match n.checked_mul(mult) {
                Some(bytes) => prop_assert_eq!(parsed, Ok(bytes)),
                None => prop_assert!(parsed.unwrap_err().0.contains("too large")),
            }
        }

        #[test]
        fn fractions_are_exact(whole in 0u64..1_000_000, half in any::<bool>()) {
            let text = format!("{whole}.{}k", if half { "5" } else { "25" });
            let extra = if half { 512 } else { 256 };
            prop_assert_eq!(parse_size(&text), Ok(whole * 1024 + extra));
        }

        #[test]
        fn odd_characters_never_panic_the_parsers(
            s in "[0-9.eE+\\- kKMGTiBbsmuµnhx\u{0660}-\u{0669}\u{FF10}-\u{FF19}/]{0,24}"
        ) {
            if let Ok(bytes) = parse_size(&s) {
                // Only ASCII digits count.
                prop_assert!(s.chars().any(|c| c.is_ascii_digit()), "{s:?} gave {bytes}");
            }
            if let Ok(d) = parse_duration(&s) {
                prop_assert!(d.as_secs_f64() <= 1e9);
            }
            if let Ok(rate) = parse_rate(&s) {
                prop_assert!(rate > 0);
            }
            let _ = parse_target(&s);
        }

        #[test]
        fn any_text_parses_or_fails_cleanly(s in any::<String>()) {
            let _ = (parse_size(&s), parse_duration(&s), parse_rate(&s), parse_target(&s));
        }

        #[test]
        fn durations_in_micro_and_nanoseconds(n in 0u64..1_000_000_000) {
            prop_assert_eq!(parse_duration(&format!("{n}us")), Ok(Duration::from_micros(n)));
            prop_assert_eq!(parse_duration(&format!("{n}ns")), Ok(Duration::from_nanos(n)));
        }

        #[test]
        fn a_blank_inside_any_value_is_refused(
            number in "[0-9]{1,4}", unit in "(k|M|GiB|s|ms|MB/s)", blank in "[ \t\u{a0}\u{3000}]{1,2}"
        ) {
            let text = format!("{number}{blank}{unit}");
            for refused in [parse_size(&text).err(), parse_duration(&text).err(), parse_rate(&text).err()] {
                let e = refused.expect("a value with a blank inside is refused");
                prop_assert!(e.0.contains("space inside"), "{text:?}: {e}");
            }
        }

        #[test]
        fn formatting_takes_any_number(n in any::<u64>(), x in any::<f64>()) {
            let _ = (format_size(n), format_mbps(x), format_time_ns(x), mb_per_s(n, n / 3));
        }
    }

    #[test]
    fn blanks_inside_a_value_are_refused_and_around_it_dropped() {
        for bad in ["4 k", "4\tk", "1 MiB", "1. 5M", "4k 4k"] {
            let e = parse_size(bad).unwrap_err();
            assert!(e.0.contains("space inside"), "{bad:?}: {e}");
        }
        let e = parse_size(" 4 k ").unwrap_err();
        assert!(e.0.contains("such as 4k"), "{e}");
        for bad in ["5 s", "500 ms", "1 h"] {
            assert!(
                parse_duration(bad).unwrap_err().0.contains("space inside"),
                "{bad:?}"
            );
        }
        for bad in ["5 MB/s", "5MB /s", "5MB/ s"] {
            assert!(
                parse_rate(bad).unwrap_err().0.contains("space inside"),
                "{bad:?}"
            );
        }
        assert_eq!(parse_size(" 4k\n"), Ok(4096));
        assert_eq!(parse_duration(" 5s "), Ok(Duration::from_secs(5)));
        assert_eq!(parse_rate(" 5MB/s "), Ok(5_000_000));
    }

    #[test]
    fn sizes_refuse_what_is_not_a_whole_byte_count() {
        for bad in [
            "nan",
            "inf",
            "-1",
            "1e9",
            "0x10",
            "١٢",
            "",
            " ",
            ".",
            "..5",
            "1.2.3",
            "4k4",
            "99999999999999999999G",
            "16777216T",
            "18446744073709551616",
            "0.1",
            "1.00000000000000000001k",
        ] {
            assert!(parse_size(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(parse_size("4k "), Ok(4096));
        assert_eq!(parse_size(".5k"), Ok(512));
        assert_eq!(parse_size("1.50000k"), Ok(1536));
        assert_eq!(parse_size("9007199254740993"), Ok(9_007_199_254_740_993));
    }
}
