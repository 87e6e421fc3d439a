//! The unit tests of [`super`]: the drawn cards cover the ranges promised.

use super::*;

#[test]
fn every_drawn_card_is_a_valid_sim_target_that_round_trips() {
    let mix = Mix {
        fat_and_move: true,
        ..Mix::default()
    };
    let mut pop = Population::with_mix(7, mix);
    for _ in 0..2_000 {
        let card = pop.draw();
        let spec = spec_of(&card);
        let parsed = SimParams::parse(spec.trim_start_matches("sim:"))
            .unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(parsed, card, "{spec}");
    }
}

/// The cards both range tests read: 2000 of the full mix.
fn drawn_cards() -> Vec<SimParams> {
    let mix = Mix {
        fat_and_move: true,
        ..Mix::default()
    };
    let mut pop = Population::with_mix(11, mix);
    (0..2_000).map(|_| pop.draw()).collect()
}

#[test]
fn capacities_come_with_the_aus_their_class_allows() {
    let cards = drawn_cards();
    // Capacities from 32 MiB to 2 TiB, each with an AU its capacity
    // class allows: old small cards with 16–256 KiB AUs, SDXC cards
    // with 4–64 MiB ones.
    assert!(
        cards
            .iter()
            .all(|c| (16 * c.au..=2 << 40).contains(&c.size) && c.size % c.au == 0)
    );
    assert!(cards.iter().any(|c| c.size < 64 << 20));
    assert!(cards.iter().any(|c| c.size > 1 << 40));
    assert!(cards.iter().any(|c| c.size < 2 << 30 && c.au <= 256 << 10));
    assert!(
        cards
            .iter()
            .filter(|c| c.au < 512 << 10)
            .all(|c| c.size <= 2 << 30)
    );
    assert!(
        cards
            .iter()
            .filter(|c| c.size <= 64 << 20)
            .all(|c| c.au <= 512 << 10)
    );
    assert!(
        cards
            .iter()
            .filter(|c| c.size > 32 << 30)
            .all(|c| c.au >= 4 << 20)
    );
    assert!(
        cards
            .iter()
            .filter(|c| c.size <= 32 << 30)
            .all(|c| c.au <= 4 << 20)
    );
    assert!(cards.iter().any(|c| c.au == 12 << 20 || c.au == 24 << 20));
}

#[test]
fn the_population_covers_the_ranges_it_promises() {
    let cards = drawn_cards();
    for kib in SD_AU_SIZES_KIB {
        assert!(
            cards.iter().any(|c| c.au == kib << 10),
            "no card with a {kib} KiB AU"
        );
    }
    let share = |f: &dyn Fn(&SimParams) -> bool| {
        cards.iter().filter(|c| f(c)).count() as f64 / cards.len() as f64
    };
    assert!((0.4..0.6).contains(&share(&|c| c.cache > 0)));
    assert!((0.15..0.35).contains(&share(&|c| c.link.is_some())));
    assert!(
        cards
            .iter()
            .all(|c| (10_000..=5_000_000).contains(&c.cmd_ns))
    );
    assert!(
        cards
            .iter()
            .all(|c| (1_000_000..=300_000_000).contains(&c.write) && c.read >= c.write)
    );
    assert!(cards.iter().any(|c| c.cache >= 2 << 30));
    // Caches up to a third of the capacity, some of a quarter or more;
    // bursts from barely above the medium's speed.
    assert!(cards.iter().all(|c| c.cache <= c.size / 3));
    assert!(cards.iter().any(|c| c.cache >= c.size / 4));
    let cached = || cards.iter().filter(|c| c.cache > 0);
    assert!(cached().all(|c| c.burst * 100 >= c.write * 104 && c.burst <= c.write * 10 + 10));
    assert!(cached().any(|c| (c.burst as f64) < 1.2 * c.write as f64));
    // Links slower than the card's own read, and than its write.
    assert!(cards.iter().any(|c| c.link.is_some_and(|l| l < c.read)));
    assert!(cards.iter().any(|c| c.link.is_some_and(|l| l < c.write)));
    assert!(cards.iter().any(|c| c.link.is_some_and(|l| l >= c.read)));
    assert!(cards.iter().all(|c| (2 << 10..=64 << 10).contains(&c.page)));
    assert!(cards.iter().all(|c| (1..=8).contains(&c.open_au)));
    let fat = |c: &SimParams| c.fat_ns.unwrap_or(0);
    assert!(
        cards
            .iter()
            .all(|c| (500_000..=150_000_000).contains(&fat(c)))
    );
    assert!((0.75..0.95).contains(&share(&|c| fat(c) < 20_000_000)));
    assert!((0.2..0.4).contains(&share(&|c| c.fat_max_ns > 0)));
    assert!(
        cards
            .iter()
            .filter(|c| c.fat_max_ns > 0)
            .all(|c| (100_000_000..=800_000_000).contains(&c.fat_max_ns)
                && (2..=super::FAT_PERIOD_MAX).contains(&c.fat_every))
    );
    // Stalls as rare as the field's rarest are drawn too.
    let stalling = || cards.iter().filter(|c| c.fat_max_ns > 0);
    assert!(stalling().any(|c| c.fat_every > super::FAT_PERIOD_MAX / 2));
    assert!(stalling().any(|c| c.fat_every <= 8));
    assert!((0.3..0.5).contains(&share(&|c| c.move_speed.is_some())));
}

#[test]
fn the_fat_and_move_draws_leave_the_other_parameters_as_before() {
    // Another stream for the FAT latency and move speed: every other
    // field of every card stays the same.
    let mix = Mix {
        fat_and_move: true,
        ..Mix::default()
    };
    let (mut a, mut b) = (Population::with_mix(3, mix), Population::new(3));
    let mut c = Population::with_mix(3, mix);
    c.extra = fastrand::Rng::with_seed(99);
    let strip = |c: SimParams| SimParams {
        move_speed: None,
        fat_ns: None,
        fat_max_ns: 0,
        fat_every: SimParams::default().fat_every,
        ..c
    };
    for _ in 0..200 {
        let (x, y, z) = (a.draw_mixed(), b.draw_mixed(), c.draw_mixed());
        assert!(x.fat_ns.is_some() && y.fat_ns.is_none());
        assert_eq!(strip(x.clone()), y);
        assert_eq!(strip(x), strip(z));
    }
}

#[test]
fn fakes_of_every_kind_at_any_real_size_round_trip() {
    let mut pop = Population::new(5);
    let fakes: Vec<SimParams> = (0..2_000).map(|_| pop.draw_fake()).collect();
    for card in &fakes {
        let spec = spec_of(card);
        let parsed = SimParams::parse(spec.trim_start_matches("sim:"))
            .unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(&parsed, card, "{spec}");
        assert!(card.real < card.size && card.real >= 2 << 20, "{spec}");
        assert!(
            card.real.is_multiple_of(SECTOR) && card.cache <= (card.real / 2).max(FAKE_OWN_CACHE)
        );
    }
    for kind in FakeKind::ALL {
        assert!(fakes.iter().any(|c| c.fake == kind), "no {kind:?} fake");
    }
    let odd = |c: &&SimParams| !c.real.is_power_of_two();
    assert!(
        fakes.iter().filter(odd).count() > 1_000,
        "most reals are not powers of two"
    );
    assert!(fakes.iter().any(|c| c.real.is_power_of_two()));
    assert!(
        fakes.iter().any(|c| c.real > c.size / 100 * 95),
        "some just under the claim"
    );
    assert!(
        fakes.iter().any(|c| !c.real.is_multiple_of(4096)),
        "some not in whole 4 KiB"
    );
    assert!(
        fakes.iter().filter(|c| c.real < 16 << 20).count() > 100,
        "tiny fakes, below the zone's end"
    );
    assert!(
        fakes.iter().filter(|c| c.cache > c.real).count() > 50,
        "fakes whose cache outgrows their real size"
    );
}

#[test]
fn draw_mixed_draws_the_share_of_fakes_asked() {
    let mix = Mix {
        fakes: 0.3,
        ..Mix::default()
    };
    let mut pop = Population::with_mix(9, mix);
    let share = (0..2_000)
        .filter(|_| {
            let c = pop.draw_mixed();
            c.real < c.size
        })
        .count() as f64
        / 2_000.0;
    assert!((0.25..0.35).contains(&share), "{share}");
}

#[test]
fn the_same_seed_draws_the_same_cards() {
    let (mut a, mut b) = (Population::new(3), Population::new(3));
    for _ in 0..100 {
        assert_eq!(a.draw(), b.draw());
    }
}

#[test]
fn tlc_erase_blocks_replace_the_au_of_the_share_asked_and_nothing_else() {
    // Issue 37: AUs of 9·2^k (9, 18, 36 MiB) are in the population when
    // the mix asks for erase blocks, on SDHC and SDXC cards only; the
    // cards not chosen, and every other parameter but the size (whole
    // AUs) and the cache (at most a third of it), are drawn as before.
    let mix = Mix {
        fat_and_move: true,
        erase_blocks: 0.25,
        ..Mix::default()
    };
    let plain = Mix {
        fat_and_move: true,
        ..Mix::default()
    };
    let (mut a, mut b) = (
        Population::with_mix(13, mix),
        Population::with_mix(13, plain),
    );
    let blocks: Vec<u64> = TLC_ERASE_BLOCK_PAGES.iter().map(|p| p * TLC_PAGE).collect();
    let mut chosen = 0;
    for _ in 0..2_000 {
        let (x, y) = (a.draw(), b.draw());
        let spec = spec_of(&x);
        let parsed = SimParams::parse(spec.trim_start_matches("sim:")).unwrap();
        assert_eq!(parsed, x, "{spec}");
        if x.au == y.au && x.page == y.page {
            assert_eq!(x, y);
            continue;
        }
        chosen += 1;
        assert!(blocks.contains(&x.au) && x.size + x.au > 2 << 30, "{spec}");
        assert!((16 << 10..=128 << 10).contains(&x.page) && x.au.is_multiple_of(x.page));
        assert!(x.size.is_multiple_of(x.au) && x.size >= 16 * x.au && x.cache <= x.size / 3);
        let rest = |c: &SimParams| (c.read, c.write, c.cmd_ns, c.open_au, c.link, c.fat_ns);
        assert_eq!(rest(&x), rest(&y));
    }
    let share = chosen as f64 / 2_000.0;
    // A quarter of the four fifths that are SDHC or SDXC (a chosen block
    // may equal the SD AU drawn, 12 or 24 MiB, with the same page).
    assert!((0.15..0.25).contains(&share), "{share}");
    let mut pop = Population::with_mix(17, mix);
    let aus: Vec<u64> = (0..2_000).map(|_| pop.draw().au).collect();
    for au in blocks {
        assert!(aus.contains(&au), "no card with a {au}-byte erase block");
    }
}

/// The cards of the laws tests: 2000 of the full mix with the laws of
/// real cards, genuine and fake.
fn real_world_cards(seed: u64) -> Vec<SimParams> {
    let mix = Mix {
        fat_and_move: true,
        real_world: true,
        ..Mix::default()
    };
    let mut pop = Population::with_mix(seed, mix);
    (0..2_000).map(|_| pop.draw_mixed()).collect()
}

#[test]
fn cards_with_the_laws_of_real_cards_round_trip_and_cover_their_ranges() {
    let cards = real_world_cards(19);
    for card in &cards {
        let spec = spec_of(card);
        let parsed = SimParams::parse(spec.trim_start_matches("sim:"))
            .unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(&parsed, card, "{spec}");
    }
    let share = |f: &dyn Fn(&SimParams) -> bool| {
        cards.iter().filter(|c| f(c)).count() as f64 / cards.len() as f64
    };
    assert!(cards.iter().all(|c| (500..=1000).contains(&c.slow_end)));
    assert!((0.2..0.4).contains(&share(&|c| c.slow_end < 1000)));
    let cached: Vec<&SimParams> = cards.iter().filter(|c| c.cache > 0).collect();
    let of_cached = |f: &dyn Fn(&SimParams) -> bool| {
        cached.iter().filter(|c| f(c)).count() as f64 / cached.len() as f64
    };
    assert!((0.7..0.9).contains(&of_cached(&|c| c.cache_min.is_some())));
    assert!((0.6..0.8).contains(&of_cached(&|c| c.drain.is_some())));
    assert!((0.65..0.85).contains(&of_cached(&|c| c.through)));
    assert!(
        cards
            .iter()
            .all(|c| c.cache_min.is_none_or(|m| m <= c.cache))
    );
    assert!(
        cached
            .iter()
            .any(|c| c.cache_min.is_some_and(|m| m < c.cache / 10))
    );
    assert!(cards.iter().all(|c| {
        c.drain
            .is_none_or(|d| d * 10 >= c.write * 3 - 10 && d * 10 <= c.write * 15 + 10)
    }));
    let uncached = || cards.iter().filter(|c| c.cache == 0);
    assert!(uncached().all(|c| c.cache_min.is_none() && c.drain.is_none() && !c.through));
    let pausing = || cards.iter().filter(|c| c.pause_ns > 0);
    assert!((0.2..0.4).contains(&share(&|c| c.pause_ns > 0)));
    assert!(
        pausing().all(|c| (5_000_000..=500_000_000).contains(&c.pause_ns)
            && (4 << 20..=256 << 20).contains(&c.pause_every))
    );
    assert!(cards.iter().all(|c| c.jitter <= 50));
    assert!((0.4..0.6).contains(&share(&|c| c.jitter > 0)));
    assert!(
        cards
            .iter()
            .all(|c| c.read_step <= 2000 && c.read_jitter <= 50)
    );
    assert!(
        cards.iter().filter(|c| c.read_step == 0).count() > 50,
        "sticks"
    );
    assert!(
        cards
            .iter()
            .any(|c| c.read_step > 1000 && c.read_jitter > 0)
    );
    let hiding: Vec<&SimParams> = cards.iter().filter(|c| c.hide_for_ns.is_some()).collect();
    assert!(hiding.iter().all(|c| c.real < c.size && c.cache > 0));
    assert!(hiding.iter().all(|c| {
        c.hide_for_ns
            .is_some_and(|h| (500_000_000..=60_000_000_000).contains(&h))
    }));
    assert!(hiding.len() > 100, "{}", hiding.len());
}

#[test]
fn the_laws_of_real_cards_come_from_their_own_stream() {
    // Same seed, same cards; and with the laws stripped, the cards of the
    // mix without them, so every calibration's cards stay as they were.
    assert_eq!(real_world_cards(23), real_world_cards(23));
    let plain = Mix {
        fat_and_move: true,
        ..Mix::default()
    };
    let mut old = Population::with_mix(23, plain);
    // The laws of real cards at their defaults (off), the rest as drawn.
    let off = SimParams::default();
    let strip = |c: &SimParams| SimParams {
        slow_end: off.slow_end,
        cache_min: off.cache_min,
        drain: off.drain,
        pause_ns: off.pause_ns,
        pause_every: off.pause_every,
        jitter: off.jitter,
        seed: off.seed,
        through: off.through,
        read_step: off.read_step,
        read_jitter: off.read_jitter,
        hide_for_ns: off.hide_for_ns,
        ..c.clone()
    };
    for card in real_world_cards(23) {
        assert_eq!(strip(&card), old.draw_mixed());
    }
    // The default mix draws none of them.
    assert!(!Mix::default().real_world);
    let mut pop = Population::with_mix(23, plain);
    assert!((0..500).map(|_| pop.draw_mixed()).all(|c| c == strip(&c)));
}
