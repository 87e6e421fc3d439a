//! The unit tests of [`super`]: the kernel's `ios` text for each timing
//! mode, and any text at all without a panic.

use super::*;
use proptest::prelude::*;

/// `ios` as the kernel prints it, for a timing mode `code (name)`.
fn ios(clock: u64, actual: Option<u64>, width_code: u32, code: u32, name: &str) -> String {
    let mut s = format!("clock:\t\t{clock} Hz\n");
    if let Some(a) = actual {
        s += &format!("actual clock:\t{a} Hz\n");
    }
    s += "vdd:\t\t21 (3.3 ~ 3.4 V)\nbus mode:\t2 (push-pull)\nchip select:\t0 (don't care)\npower mode:\t2 (on)\n";
    s += &format!("bus width:\t{width_code} ({} bits)\n", 1u32 << width_code);
    s += &format!("timing spec:\t{code} ({name})\n");
    s += "signal voltage:\t1 (1.80 V)\ndriver type:\t0 (driver type B)\n";
    s
}

/// Every mode the kernel names: its number and name, a clock it runs at,
/// its data lines (as the width code) and the ceiling that gives, MB/s.
const MODES: [(u32, &str, MmcTiming, u64, u32, f64); 12] = [
    (0, "legacy", MmcTiming::Legacy, 25_000_000, 2, 11.3),
    (
        1,
        "mmc high-speed",
        MmcTiming::MmcHighSpeed,
        52_000_000,
        3,
        46.8,
    ),
    (
        2,
        "sd high-speed",
        MmcTiming::SdHighSpeed,
        50_000_000,
        2,
        22.5,
    ),
    (3, "sd uhs SDR12", MmcTiming::UhsSdr12, 25_000_000, 2, 11.3),
    (4, "sd uhs SDR25", MmcTiming::UhsSdr25, 50_000_000, 2, 22.5),
    (5, "sd uhs SDR50", MmcTiming::UhsSdr50, 100_000_000, 2, 45.0),
    (
        6,
        "sd uhs SDR104",
        MmcTiming::UhsSdr104,
        208_000_000,
        2,
        93.6,
    ),
    (7, "sd uhs DDR50", MmcTiming::UhsDdr50, 50_000_000, 2, 45.0),
    (8, "mmc DDR52", MmcTiming::MmcDdr52, 52_000_000, 3, 93.6),
    (9, "mmc HS200", MmcTiming::MmcHs200, 200_000_000, 3, 180.0),
    (10, "mmc HS400", MmcTiming::MmcHs400, 200_000_000, 3, 360.0),
    (
        10,
        "mmc HS400 enhanced strobe",
        MmcTiming::MmcHs400EnhancedStrobe,
        200_000_000,
        3,
        360.0,
    ),
];

#[test]
fn each_timing_mode_the_kernel_names_is_read_with_its_ceiling() {
    for (code, name, timing, clock, width, ceiling) in MODES {
        let m = parse(&ios(clock, None, width, code, name)).unwrap();
        assert_eq!(m.timing, timing, "{name}");
        assert_eq!(m.timing_code, Some(code), "{name}");
        assert_eq!(m.data_lines, Some(1 << width), "{name}");
        assert_eq!(m.clock_hz, Some(clock), "{name}");
        assert_eq!(m.ceiling_mb_s(), Some(ceiling), "{name}");
    }
}

#[test]
fn double_data_rate_modes_carry_twice_per_clock() {
    let sdr = parse(&ios(50_000_000, None, 2, 4, "sd uhs SDR25")).unwrap();
    let ddr = parse(&ios(50_000_000, None, 2, 7, "sd uhs DDR50")).unwrap();
    assert_eq!(sdr.link_mbit_s(), Some(200.0));
    assert_eq!(ddr.link_mbit_s(), Some(400.0));
}

#[test]
fn the_actual_clock_sets_the_ceiling_when_the_host_tells_it() {
    // SDR104 asked at 208 MHz, the host's divider gave 187.5 MHz.
    let m = parse(&ios(208_000_000, Some(187_500_000), 2, 6, "sd uhs SDR104")).unwrap();
    assert_eq!(m.actual_clock_hz, Some(187_500_000));
    assert_eq!(m.effective_clock_hz(), Some(187_500_000));
    assert_eq!(m.ceiling_mb_s(), Some(84.4));
}

#[test]
fn a_mode_not_known_keeps_its_number_and_a_stopped_clock_gives_no_ceiling() {
    let m = parse(&ios(0, None, 2, 14, "sd uhs2 speed A")).unwrap();
    assert_eq!(
        (m.timing, m.timing_code),
        (MmcTiming::Unrecognised, Some(14))
    );
    assert_eq!(m.ceiling_mb_s(), None);
    // An older kernel printing three lines only.
    let old =
        parse("clock:\t\t50000000 Hz\nbus width:\t2 (4 bits)\ntiming spec:\t2 (sd high-speed)\n");
    assert_eq!(old.unwrap().ceiling_mb_s(), Some(22.5));
}

#[test]
fn text_that_is_not_ios_has_no_mode() {
    assert_eq!(parse(""), None);
    assert_eq!(parse("clock: 5 Hz\n"), None);
    let bare = parse("timing spec:\n").unwrap();
    assert_eq!(
        (bare.timing, bare.timing_code, bare.data_lines),
        (MmcTiming::Unrecognised, None, None)
    );
}

proptest! {
    #[test]
    fn any_text_parses_without_a_panic(text in ".{0,400}") {
        let m = parse(&text);
        let _ = m.map(|m| m.ceiling_mb_s());
    }

    #[test]
    fn any_ios_shaped_text_parses_without_a_panic(
        clock in proptest::option::of(any::<u64>()),
        width in ".{0,12}",
        timing in ".{0,24}",
        actual in ".{0,24}",
    ) {
        let text = format!(
            "clock:\t\t{} Hz\nactual clock:\t{actual}\nbus width:\t{width}\ntiming spec:\t{timing}\n",
            clock.map_or(String::new(), |c| c.to_string())
        );
        if let Some(m) = parse(&text) {
            let c = m.ceiling_mb_s();
            prop_assert!(c.is_none_or(|c| c >= 0.0));
        }
    }
}
