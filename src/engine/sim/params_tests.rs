//! The unit tests of [`super`]: the `sim:` options parse, default and are
//! refused by name.

use super::*;

#[test]
fn options_parse_with_documented_defaults() {
    let p = SimParams::parse("").unwrap();
    assert_eq!(p, SimParams::default());
    let p = SimParams::parse("size=8G,au=8M,page=32k,open_au=5,read=30MB/s,write=12MB/s,cmd=100us,cache=64M,real=1G,link=40MB/s").unwrap();
    assert_eq!(
        (p.size, p.au, p.page, p.open_au),
        (8 << 30, 8 << 20, 32 << 10, 5)
    );
    assert_eq!(
        (p.read, p.write, p.burst, p.cmd_ns),
        (30_000_000, 12_000_000, 48_000_000, 100_000)
    );
    assert_eq!(
        (p.cache, p.real, p.link),
        (64 << 20, 1 << 30, Some(40_000_000))
    );
    assert!(SimParams::parse("au=4M,page=3k").is_err());
    assert!(SimParams::parse("real=8G,size=4G").is_err());
    assert!(
        SimParams::parse("colour=blue")
            .unwrap_err()
            .contains("unknown")
    );
}

#[test]
fn move_and_fat_options_parse_and_are_off_by_default() {
    let p = SimParams::parse("move=3MB/s,fat=5ms,fat_max=300ms,fat_every=8").unwrap();
    assert_eq!(p.move_speed, Some(3_000_000));
    assert_eq!(
        (p.fat_ns, p.fat_max_ns, p.fat_every),
        (Some(5_000_000), 300_000_000, 8)
    );
    let d = SimParams::default();
    assert_eq!((d.move_speed, d.fat_ns, d.fat_max_ns), (None, None, 0));
    // Spikes alone: the FAT law with no base busy time.
    assert_eq!(SimParams::parse("fat_max=1s").unwrap().fat_ns, Some(0));
    assert!(SimParams::parse("fat_every=0").is_err());
    assert!(SimParams::parse("move=0B/s").is_err());
}

#[test]
fn the_laws_of_real_cards_parse_and_default_to_none() {
    let p = SimParams::parse("cache=64M,slow_end=0.6,cache_min=8M,drain=3MB/s,pause=50ms,pause_every=16M,jitter=30%,seed=7,through=1,read_step=0.25,read_jitter=40,hide_for=2s").unwrap();
    assert_eq!(
        (p.slow_end, p.cache_min, p.drain),
        (600, Some(8 << 20), Some(3_000_000))
    );
    assert_eq!(
        (p.pause_ns, p.pause_every, p.jitter, p.seed),
        (50_000_000, 16 << 20, 30, 7)
    );
    assert_eq!((p.through, p.read_step, p.read_jitter), (true, 250, 40));
    assert_eq!(p.hide_for_ns, Some(2_000_000_000));
    // Every default is the model as it was before these laws.
    let d = SimParams::default();
    assert_eq!(
        (d.slow_end, d.cache_min, d.drain, d.pause_ns),
        (1000, None, None, 0)
    );
    assert_eq!(
        (d.jitter, d.seed, d.through, d.read_step),
        (0, 0, false, 1000)
    );
    assert_eq!((d.read_jitter, d.hide_for_ns), (0, None));
    assert_eq!(SimParams::parse("read_step=0").unwrap().read_step, 0);
    assert_eq!(SimParams::parse("jitter=5").unwrap().jitter, 5);
    assert!(!SimParams::parse("through=0").unwrap().through);
}

#[test]
fn impossible_laws_are_refused_naming_the_option() {
    for (spec, start) in [
        ("slow_end=0", "sim option slow_end=0: must be above 0"),
        (
            "slow_end=1.5",
            "sim option slow_end=1.5: not a decimal number from 0 to 1",
        ),
        ("slow_end=fast", "sim option slow_end=fast: not a decimal"),
        ("slow_end=NaN", "sim option slow_end=NaN: not a decimal"),
        (
            "cache=4M,cache_min=8M",
            "sim option cache_min=8 MiB: must be at most the cache (cache=4 MiB)",
        ),
        (
            "cache_min=1M",
            "sim option cache_min=1 MiB: must be at most the cache (cache=0",
        ),
        ("drain=0B/s", "sim option drain=0B/s: "),
        ("pause_every=0", "sim option pause_every=0: must be above 0"),
        ("pause=soon", "sim option pause=soon: "),
        ("jitter=100", "sim option jitter=100%: must be below 100%"),
        ("jitter=-5", "sim option jitter=-5: not a whole percentage"),
        (
            "read_jitter=101%",
            "sim option read_jitter=101%: must be at most 100%",
        ),
        (
            "read_step=-1",
            "sim option read_step=-1: not a decimal number from 0 to 100",
        ),
        (
            "read_step=101",
            "sim option read_step=101: not a decimal number",
        ),
        ("through=yes", "sim option through=yes: not 0 or 1"),
        ("seed=x", "sim option seed=x: not a whole number"),
        ("hide_for=0s", "sim option hide_for=0: must be above 0"),
    ] {
        let e = SimParams::parse(spec).unwrap_err();
        assert!(e.starts_with(start), "{spec}: {e}");
    }
}

#[test]
fn describe_names_the_laws_a_card_has_and_only_those() {
    let plain = SimParams::default().describe();
    assert!(
        !plain.contains("pauses") && !plain.contains("through"),
        "{plain}"
    );
    let p = SimParams::parse("cache=8M,slow_end=0.5,pause=10ms,through=1,hide_for=1s").unwrap();
    let line = p.describe();
    for word in [
        "50% speed at the end",
        "pauses of 10.0 ms every 64 MiB",
        "through the cache",
        "hides for 1.0 s",
    ] {
        assert!(line.contains(word), "{line}");
    }
}

#[test]
fn fake_kinds_parse_and_default_to_wrap() {
    assert_eq!(SimParams::parse("real=1G").unwrap().fake, FakeKind::Wrap);
    for kind in FakeKind::ALL {
        let p = SimParams::parse(&format!("real=1G,fake={}", kind.name())).unwrap();
        assert_eq!(p.fake, kind);
    }
    assert!(SimParams::parse("fake=melt").unwrap_err().contains("wrap"));
}

#[test]
fn odd_options_are_refused_naming_the_key() {
    let e = SimParams::parse("size=1G,size=2G").unwrap_err();
    assert!(e.starts_with("sim option size is given twice"), "{e}");
    let e = SimParams::parse("size=4G,au=64G").unwrap_err();
    assert!(
        e.starts_with("sim option au=64 GiB is larger than the card (size=4 GiB)"),
        "{e}"
    );
    assert!(SimParams::parse("size=64M,au=64M,page=16k").is_ok());
    for (spec, key) in [
        ("size=4 G", "size=4 G"),
        ("read=5 MB/s", "read=5 MB/s"),
        ("cmd=200 us", "cmd=200 us"),
    ] {
        let e = SimParams::parse(spec).unwrap_err();
        assert!(e.starts_with(&format!("sim option {key}: ")), "{e}");
        assert!(e.contains("space inside"), "{e}");
    }
    // Every rule a value breaks names that value's option.
    for (spec, start) in [
        ("size=1X", "sim option size=1X: "),
        ("size=0", "sim option size is 0 bytes"),
        ("page=1000", "sim option page is 1000 bytes"),
        ("real=100", "sim option real is 100 bytes"),
        (
            "au=24k,page=16k",
            "sim option au=24 KiB: must be a whole number of pages",
        ),
        ("size=1G,real=2G", "sim option real=2 GiB: must be at most"),
        ("open_au=0", "sim option open_au=0: must be above 0"),
        ("fat_every=0", "sim option fat_every=0: must be above 0"),
    ] {
        let e = SimParams::parse(spec).unwrap_err();
        assert!(e.starts_with(start), "{spec}: {e}");
    }
}

proptest::proptest! {
    #[test]
    fn a_key_given_twice_is_refused_by_name(
        key in proptest::sample::select(vec!["size", "au", "page", "open_au", "read", "write", "burst", "cmd", "cache", "real", "link", "fake", "move", "fat", "fat_max", "fat_every", "slow_end", "cache_min", "drain", "pause", "pause_every", "jitter", "seed", "through", "read_step", "read_jitter", "hide_for"]),
        a in "[0-9a-z]{0,4}",
        b in "[0-9a-z]{0,4}",
    ) {
        let e = SimParams::parse(&format!("{key}={a},size=64M,{key}={b}"));
        let twice = format!("sim option {key} is given twice");
        // The first value may be refused on its own; else the repeat is.
        match e {
            Ok(_) => proptest::prop_assert!(false, "{key} twice was accepted"),
            Err(e) => proptest::prop_assert!(e.contains(&twice) || e.contains(&format!("{key}={a}")), "{e}"),
        }
    }

    #[test]
    fn an_au_beyond_the_card_is_refused(size_mib in 1u64..64, au_mib in 1u64..128) {
        let spec = format!("size={size_mib}M,au={au_mib}M,page=4k");
        match SimParams::parse(&spec) {
            Ok(p) => proptest::prop_assert!(p.au <= p.size),
            Err(e) => proptest::prop_assert!(au_mib <= size_mib || e.contains("au="), "{spec}: {e}"),
        }
    }

    #[test]
    fn the_option_parser_never_panics(spec in ".{0,80}") {
        let _ = SimParams::parse(&spec);
    }

    #[test]
    fn option_like_text_never_panics(
        key in proptest::sample::select(vec!["size", "au", "page", "real", "fake", "cache", "open_au", "link", "cmd", "slow_end", "cache_min", "drain", "pause", "pause_every", "jitter", "seed", "through", "read_step", "read_jitter", "hide_for", "x"]),
        value in "[0-9a-zA-Z/.]{0,12}",
    ) {
        let _ = SimParams::parse(&format!("{key}={value}"));
    }
}
