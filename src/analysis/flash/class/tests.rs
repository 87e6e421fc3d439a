use super::*;

#[test]
fn class_labels_give_the_sd_associations_limits() {
    use Need::*;
    let limits: [(&str, &[Need]); 3] = [
        (
            "class 10",
            &[SeqWrite(10.0), RuRead(10.0), FatMean(100.0), FatMax(750.0)],
        ),
        ("V30", &[SeqWrite(30.0), RuRead(30.0), FatMax(250.0)]),
        (
            "a2",
            &[
                RandomReadIops(4000.0),
                RandomWriteIops(2000.0),
                Sustained(10.0),
            ],
        ),
    ];
    for (class, needs) in limits {
        assert_eq!(requirements(class).unwrap(), needs, "{class}");
    }
    assert!(requirements("C3").is_none());
    assert!(CLASSES.iter().all(|c| requirements(c).is_some()));
}

#[test]
fn fat_figures_take_the_worst_mean_of_8() {
    let mut ms = vec![10.0; 20];
    ms[5] = 90.0;
    let f = fat_figures(&ms);
    assert_eq!(f.writes, 20);
    assert!((f.worst_mean8_ms - 20.0).abs() < 1e-9);
    assert_eq!((f.max_ms, f.median_ms), (90.0, 10.0));
}

#[test]
fn the_population_draws_fat_stalls_as_rare_as_the_field_and_no_rarer() {
    assert_eq!(
        crate::engine::population::FAT_PERIOD_MAX,
        FIELD_FAT_PERIOD_MAX
    );
}

#[test]
fn t_fw_spreads_come_from_the_quarters_of_the_run() {
    // A stall in one quarter only: the max moves by all of it between
    // quarters, so a PASS on it cannot be sure.
    let mut ms = vec![2.0; 768];
    ms[700] = 500.0;
    let f = fat_figures(&ms);
    assert!((f.max_spread - (500.0 - 2.0) / 500.0).abs() < 1e-9, "{f:?}");
    // A stall every 100 writes lands in every quarter: no movement.
    let mut ms = vec![2.0; 768];
    for i in (99..768).step_by(100) {
        ms[i] = 500.0;
    }
    let f = fat_figures(&ms);
    assert_eq!((f.max_spread, f.mean8_spread), (0.0, 0.0), "{f:?}");
    assert_eq!(f.ruled_out_every(), 256);
}

#[test]
fn iops_windows_agree_within_their_noise_and_not_beyond() {
    let window = |ns: u64, jitter: u64| {
        let mut w = IopsWindow::default();
        for i in 0..500 {
            w.add(ns + (i % 2) * jitter);
        }
        w
    };
    assert!(windows_agree(&window(1000, 0), &window(1020, 0)));
    assert!(!windows_agree(&window(1000, 0), &window(1150, 0)));
    // Noisy windows agree further apart.
    assert!(windows_agree(&window(1000, 3000), &window(1150, 3000)));
    let f = IopsFigures {
        windows: vec![window(800, 0), window(1000, 0), window(1010, 0)],
        steady: true,
    };
    assert!((f.iops() - 1e9 / 1005.0).abs() < 1.0, "{}", f.iops());
    assert!(f.spread() > 0.0 && f.spread() < 0.01, "{}", f.spread());
}

proptest::proptest! {
    #[test]
    fn fat_and_iops_figures_are_finite_and_bounded_on_any_times(
        ms in proptest::collection::vec(0.0f64..1e7, 0..2000),
        times in proptest::collection::vec(proptest::collection::vec(0u64..u64::from(u32::MAX), 0..600), 0..9),
    ) {
        let f = fat_figures(&ms);
        proptest::prop_assert!(f.worst_mean8_ms <= f.max_ms + 1e-9);
        for spread in [f.mean8_spread, f.max_spread] {
            proptest::prop_assert!((0.0..=1.0).contains(&spread), "{f:?}");
        }
        let windows: Vec<IopsWindow> = times
            .iter()
            .map(|ts| {
                let mut w = IopsWindow::default();
                ts.iter().for_each(|t| w.add(*t));
                w
            })
            .collect();
        let figures = IopsFigures { windows, steady: false };
        proptest::prop_assert!(figures.iops().is_finite() && figures.iops() >= 0.0);
        proptest::prop_assert!(figures.spread().is_finite() && figures.spread() >= 0.0);
        if let [a, b, ..] = figures.windows.as_slice() {
            let _ = windows_agree(a, b);
        }
    }
}

#[test]
fn a_value_near_its_limit_is_low_confidence() {
    assert_eq!(margin_confidence(10.1, 10.0, 0.0), Confidence::Low);
    assert_eq!(margin_confidence(10.5, 10.0, 0.0), Confidence::Medium);
    assert_eq!(margin_confidence(12.0, 10.0, 0.0), Confidence::High);
    assert_eq!(margin_confidence(12.0, 10.0, 0.1), Confidence::Medium);
    assert_eq!(margin_confidence(8.0, 10.0, 0.0), Confidence::High);
}
