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

/// Parses a byte count such as `4k`, `1MiB`, `64kB` or `512`.
pub fn parse_size(text: &str) -> Result<u64, ParseError> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let multiplier = size_multiplier(suffix.trim())
        .ok_or_else(|| ParseError(format!("'{text}' is not {SIZE_FORM}")))?;
    let value: f64 = number
        .parse()
        .map_err(|_| ParseError(format!("'{text}' is not {SIZE_FORM}")))?;
    let bytes = value * multiplier as f64;
    if !bytes.is_finite() || bytes > u64::MAX as f64 {
        return Err(ParseError(format!("'{text}' is too large")));
    }
    if bytes.fract() != 0.0 {
        return Err(ParseError(format!(
            "'{text}' is not a whole number of bytes"
        )));
    }
    Ok(bytes as u64)
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
    let text = text.trim();
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

/// Parses a transfer rate such as `5MB/s`, `20MiB/s` or `1.5M/s` into bytes
/// per second: a size as [`parse_size`] reads it, followed by `/s`.
pub fn parse_rate(text: &str) -> Result<f64, ParseError> {
    let text = text.trim();
    let size = text
        .strip_suffix("/s")
        .or_else(|| text.strip_suffix("ps"))
        .ok_or_else(|| ParseError(format!("'{text}' is not a rate such as 5MB/s or 20MiB/s")))?;
    let bytes = parse_size(size)?;
    if bytes == 0 {
        return Err(ParseError(format!(
            "'{text}' moves nothing: give a rate above 0"
        )));
    }
    Ok(bytes as f64)
}

/// Formats a byte count with a binary unit: `512 B`, `4 KiB`, `1.5 MiB`.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else if value.fract() == 0.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.2} {}", UNITS[unit])
    }
}

/// Formats throughput in MB/s (10^6 B/s) with precision that suits the size.
pub fn format_mbps(mb_per_s: f64) -> String {
    if mb_per_s >= 100.0 {
        format!("{mb_per_s:.0}")
    } else if mb_per_s >= 10.0 {
        format!("{mb_per_s:.1}")
    } else {
        format!("{mb_per_s:.2}")
    }
}

/// Formats a latency given in nanoseconds as microseconds, or ms when long.
pub fn format_latency_ns(ns: f64) -> String {
    let us = ns / 1000.0;
    if us >= 100_000.0 {
        format!("{:.0} ms", us / 1000.0)
    } else if us >= 100.0 {
        format!("{us:.0}")
    } else if us >= 10.0 {
        format!("{us:.1}")
    } else {
        format!("{us:.2}")
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

/// The legend printed under every table.
pub const LEGEND: &str = "units: MB/s = 10^6 bytes/s; KiB = 1024 B, MiB = 1024^2 B, GiB = 1024^3 B; latency in µs unless marked";

#[cfg(test)]
mod tests {
    use super::*;
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
    fn rates() {
        assert_eq!(parse_rate("5MB/s"), Ok(5e6));
        assert_eq!(parse_rate("20MiB/s"), Ok(20.0 * 1048576.0));
        assert_eq!(parse_rate("64k/s"), Ok(65536.0));
        assert!(parse_rate("5MB").is_err());
        assert!(parse_rate("0MB/s").is_err());
    }

    #[test]
    fn formats_sizes() {
        assert_eq!(format_size(512), "512 B");
        assert_eq!(format_size(4096), "4 KiB");
        assert_eq!(format_size(1536 * 1024), "1.50 MiB");
        assert_eq!(format_size(1 << 30), "1 GiB");
    }

    proptest! {
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
    }
}
