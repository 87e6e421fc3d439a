//! Fixed units, parsed and printed the same way everywhere.
//!
//! Sizes: a bare number is bytes; `k`, `K`, `KiB`, `M`, `MiB`, `G`, `GiB`,
//! `T`, `TiB` are powers of 1024 (as fio and dd use them); `kB`, `KB`, `MB`,
//! `GB`, `TB` are powers of 1000 (their SI meaning). Throughput is always
//! MB/s = 10^6 bytes per second. Durations take `us`, `ms`, `s`, `m`, `h`.

use std::time::Duration;

pub mod escape;
pub mod wire;

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
    size_with(bytes, |value| format!("{value:.2}"))
}

/// Formats a measured or derived byte count with a binary unit to three
/// significant figures, as the text tables print sizes: `512 B`, `4 KiB`,
/// `1.50 MiB`, `189 KiB` (not `188.77 KiB`), `16.9 MiB`.
pub fn format_size_figure(bytes: u64) -> String {
    size_with(bytes, three_figures)
}

/// `bytes` in its binary unit: whole bytes and whole units as they are, a
/// fraction of a unit as `fraction` writes it.
fn size_with(bytes: u64, fraction: impl Fn(f64) -> String) -> String {
    let (value, unit) = binary_units(bytes);
    if unit == "B" {
        format!("{bytes} B")
    } else if value.fract() == 0.0 {
        format!("{value:.0} {unit}")
    } else {
        format!("{} {unit}", fraction(value))
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

/// One latency in the unit that suits it alone, three significant
/// figures: `0.815 µs`, `1.63 µs`, `815 µs`, `1.20 ms`, `249 ms`, `1.50 s`.
/// Every latency cell of a table is written with this, so a fast device's
/// `0.00163 ms` never appears: a column may mix units, and each cell names
/// its own (the unit changes where the figure would reach 1000).
pub fn format_latency(ns: f64) -> String {
    let (value, unit) = latency_in_unit(ns);
    format!("{} {unit}", three_figures(value))
}

/// `ns` scaled to µs, ms or s: the largest unit in which the figure,
/// rounded to three significant figures, is at least 1 (µs below that).
pub fn latency_in_unit(ns: f64) -> (f64, &'static str) {
    let magnitude = ns.abs();
    if magnitude >= 999.5e6 {
        (ns / 1e9, "s")
    } else if magnitude >= 999.5e3 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e3, "µs")
    }
}

/// Megabytes (10^6 B) per second for `bytes` moved in `ns` nanoseconds.
pub fn mb_per_s(bytes: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        bytes as f64 * 1e3 / ns as f64
    }
}

/// `count` per second over `ns` nanoseconds, 0 for no time.
pub fn per_second(count: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        count as f64 * 1e9 / ns as f64
    }
}

/// The legend printed under every table.
pub const LEGEND: &str = "units: MB/s = 10^6 bytes/s; KiB = 1024 B, MiB = 1024^2 B, GiB = 1024^3 B; each latency names its unit (µs, ms, s)";

/// The legend under every text table: the size and rate units, and that
/// each latency cell names its own unit (see [`format_latency`]). Two
/// lines, so that each fits `profile`'s 80 columns.
pub const TEXT_LEGEND: &str = "units: MB/s = 10^6 bytes/s; KiB = 1024 B, MiB = 1024^2 B, GiB = 1024^3 B\n       latency: each value names its unit (µs, ms, s)";

#[cfg(test)]
mod tests;
