//! Unit tests of `units`, kept beside it so the module reads as the
//! code it is.

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
        (38.0, "38.0"),
        (950.2, "950"),
        (97_512.0, "97.5k"),
        (999_700.0, "1.00M"),
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
        let _ = (format_size(n), format_mbps(x), format_latency(x), mb_per_s(n, n / 3));
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

#[test]
fn each_latency_has_its_own_unit() {
    use crate::units::format_latency;
    for (ns, text) in [
        (0.0, "0 µs"),
        (815.0, "0.815 µs"),
        (1_630.0, "1.63 µs"),
        (815_000.0, "815 µs"),
        (999_400.0, "999 µs"),
        (999_600.0, "1.00 ms"),
        (1_204_000.0, "1.20 ms"),
        (249_481_900.0, "249 ms"),
        (999_600_000.0, "1.00 s"),
        (1_500_000_000.0, "1.50 s"),
        (125e9, "125 s"),
    ] {
        assert_eq!(format_latency(ns), text, "{ns}");
    }
}

proptest::proptest! {
    /// Every latency reads with at most three significant figures and a
    /// figure below 1000 in its unit (seconds excepted).
    #[test]
    fn a_latency_never_reaches_a_thousand_in_its_unit(ns in 0.0f64..999e9) {
        let text = crate::units::format_latency(ns);
        let (figure, unit) = text.split_once(' ').unwrap();
        let value: f64 = figure.parse().unwrap();
        proptest::prop_assert!(unit == "s" || value < 1000.0, "{text}");
        let digits = figure.chars().filter(|c| c.is_ascii_digit()).collect::<String>();
        proptest::prop_assert!(digits.trim_start_matches('0').len() <= 3, "{text}");
    }
}
