//! The unit tests of the laws of real cards on [`super::SimDevice`]: each
//! law's exact costs on the virtual clock, and that a card without it
//! costs what it did.

use super::super::laws::{Coverage, at_position, xfer_ns};
use super::tests::card;
use super::*;

#[test]
fn speed_falls_linearly_to_slow_end_at_the_cards_end() {
    let d = card("size=64M,au=4M,page=16k,read=20MB/s,write=10MB/s,cmd=0us,slow_end=0.5");
    let mut buf = vec![0u8; 4096];
    assert_eq!(d.read(0, &mut buf).unwrap(), xfer_ns(4096, 20_000_000));
    // Half way: 1 - 0.5 × 0.5 = 0.75 of the speed.
    assert_eq!(
        d.read(32 << 20, &mut buf).unwrap(),
        xfer_ns(4096, 15_000_000)
    );
    assert_eq!(d.write(0, &buf).unwrap(), xfer_ns(16 << 10, 10_000_000));
    assert_eq!(
        d.write(32 << 20, &buf).unwrap(),
        xfer_ns(16 << 10, 7_500_000)
    );
    let p = d.params();
    assert_eq!(at_position(p, 20_000_000, 64 << 20), 10_000_000);
    // Without the law the speed is the same everywhere.
    let flat = SimParams::default();
    assert_eq!(at_position(&flat, 20_000_000, 3 << 30), 20_000_000);
}

#[test]
fn the_usable_cache_shrinks_to_cache_min_as_the_card_fills() {
    let spec = "size=64M,au=4M,cache=8M,cache_min=0,write=10MB/s,burst=40MB/s,cmd=0us";
    let p = SimParams::parse(spec).unwrap();
    let mut cover = Coverage::new(&p);
    assert_eq!(cover.usable_cache(&p), 8 << 20);
    cover.mark(&p, 0, 32 << 20);
    assert_eq!(cover.usable_cache(&p), 4 << 20);
    cover.mark(&p, 0, 64 << 20);
    assert_eq!(cover.usable_cache(&p), 0);
    // Half the card written at once: 4 MiB of cache left, the rest waits
    // for the drain.
    let d = card(spec);
    let t = d.write_zeros(0, 32 << 20).unwrap();
    assert_eq!(
        t,
        xfer_ns(32 << 20, 40_000_000) + xfer_ns(28 << 20, 10_000_000)
    );
    // Without cache_min the cache stays whole.
    let whole = card("size=64M,au=4M,cache=8M,write=10MB/s,burst=40MB/s,cmd=0us");
    let t = whole.write_zeros(0, 32 << 20).unwrap();
    assert_eq!(
        t,
        xfer_ns(32 << 20, 40_000_000) + xfer_ns(24 << 20, 10_000_000)
    );
}

#[test]
fn the_cache_drains_at_its_own_rate() {
    let d = card("size=64M,cache=1M,write=10MB/s,drain=2MB/s,burst=40MB/s,cmd=0us");
    let t = d.write_zeros(0, 2 << 20).unwrap();
    assert_eq!(
        t,
        xfer_ns(2 << 20, 40_000_000) + xfer_ns(1 << 20, 2_000_000)
    );
    // A second spent idle drains 2 MB: room for a MiB again.
    d.idle(1_000_000_000);
    assert_eq!(
        d.write_zeros(4 << 20, 1 << 20).unwrap(),
        xfer_ns(1 << 20, 40_000_000)
    );
}

/// The costs of `n` writes of 256 KiB, one after the other from 0.
fn quarter_mib_writes(d: &SimDevice, n: u64) -> Vec<u64> {
    (0..n)
        .map(|i| d.write_zeros(i * (256 << 10), 256 << 10).unwrap())
        .collect()
}

#[test]
fn a_pause_is_paid_every_pause_every_bytes() {
    let d =
        card("size=64M,au=4M,page=16k,open_au=8,write=10MB/s,cmd=0us,pause=50ms,pause_every=1M");
    let plain = 16 * xfer_ns(16 << 10, 10_000_000);
    for (i, t) in quarter_mib_writes(&d, 12).iter().enumerate() {
        let pause = if (i + 1) % 4 == 0 { 50_000_000 } else { 0 };
        assert_eq!(*t, plain + pause, "write {i}");
    }
    // One write over three periods pays three pauses.
    let d = card("size=64M,au=4M,open_au=8,write=10MB/s,cmd=0us,pause=1ms,pause_every=1M");
    let t = d.write_zeros(0, 3 << 20).unwrap();
    assert_eq!(t, 192 * xfer_ns(16 << 10, 10_000_000) + 3_000_000);
}

/// The indices of the writes that paid a pause.
fn paused(spec: &str) -> Vec<usize> {
    let d = card(spec);
    let plain = 16 * xfer_ns(16 << 10, 10_000_000);
    let times = quarter_mib_writes(&d, 64);
    times
        .iter()
        .enumerate()
        .filter(|(_, t)| **t > plain)
        .map(|(i, _)| i)
        .collect()
}

#[test]
fn jittered_pauses_come_at_irregular_periods_the_same_for_the_same_spec() {
    let spec = "size=64M,au=4M,page=16k,open_au=8,write=10MB/s,cmd=0us,pause=50ms,pause_every=1M,jitter=50,seed=3";
    let once = paused(spec);
    assert_eq!(once, paused(spec), "same spec, same pauses");
    assert_ne!(once, paused(&spec.replace("seed=3", "seed=4")));
    // Periods of 0.5–1.5 MiB: 2 to 6 writes of 256 KiB apart.
    let gaps: Vec<usize> = once.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.iter().all(|g| (1..=6).contains(g)), "{gaps:?}");
    assert!(gaps.iter().any(|g| *g != 4), "{gaps:?}");
}

#[test]
fn jitter_moves_the_fat_spikes_too() {
    let spikes = |spec: &str| {
        let d = card(spec);
        (0..200u64)
            .filter(|i| d.write(i * 4096, &[1u8; 4096]).unwrap() > 50_000_000)
            .collect::<Vec<u64>>()
    };
    let spec = "write=10MB/s,cmd=0us,fat=1ms,fat_max=100ms,fat_every=8,jitter=50,seed=1";
    let jittered = spikes(spec);
    assert_eq!(jittered, spikes(spec));
    let gaps: Vec<u64> = jittered.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.iter().all(|g| (4..=12).contains(g)), "{gaps:?}");
    assert!(gaps.iter().any(|g| *g != 8), "{gaps:?}");
    let regular = spikes("write=10MB/s,cmd=0us,fat=1ms,fat_max=100ms,fat_every=8");
    assert_eq!(regular, (0..25).map(|k| 7 + 8 * k).collect::<Vec<u64>>());
}

#[test]
fn through_the_cache_an_au_close_is_drained_behind_it() {
    let spec = "size=256M,au=4M,page=16k,open_au=1,write=10MB/s,burst=40MB/s,cmd=0us,cache=16k";
    let page = xfer_ns(16 << 10, 10_000_000);
    let close = xfer_ns((4 << 20) - 4096, 10_000_000);
    let d = card(&format!("{spec},through=1"));
    assert_eq!(
        d.write(32 << 20, &[1u8; 4096]).unwrap(),
        xfer_ns(4096, 40_000_000)
    );
    d.idle(10_000_000_000);
    // 64 KiB into 16 KiB of cache: the write waits until the medium has
    // done three quarters of its work, which includes closing the AU at
    // 32 MiB (4 pages and the copy).
    let work = u128::from(4 * page + close);
    let wait = (work * 3).div_ceil(4) as u64;
    let t = d.write(64 << 20, &vec![1u8; 64 << 10]).unwrap();
    assert_eq!(t, xfer_ns(64 << 10, 40_000_000) + wait);
    // Without `through` the cache bypasses the AU laws.
    let bypass = card(spec);
    bypass.write(32 << 20, &[1u8; 4096]).unwrap();
    bypass.idle(10_000_000_000);
    let t = bypass.write(64 << 20, &vec![1u8; 64 << 10]).unwrap();
    assert_eq!(
        t,
        xfer_ns(64 << 10, 40_000_000) + xfer_ns(48 << 10, 10_000_000)
    );
}

#[test]
fn through_the_cache_fat_busy_time_is_hidden_until_the_cache_is_full() {
    let d =
        card("size=256M,page=16k,write=10MB/s,burst=40MB/s,cmd=0us,cache=16k,fat=5ms,through=1");
    assert_eq!(d.write(0, &[1u8; 4096]).unwrap(), xfer_ns(4096, 40_000_000));
    d.idle(1_000_000_000);
    // 32 KiB in the FAT area: two pages and the busy time, half of which
    // must be done before the rest fits.
    let work = 2 * xfer_ns(16 << 10, 10_000_000) + 5_000_000;
    let t = d.write(8 << 20, &vec![1u8; 32 << 10]).unwrap();
    assert_eq!(t, xfer_ns(32 << 10, 40_000_000) + work.div_ceil(2));
}

#[test]
fn through_the_cache_pages_are_programmed_at_the_drain_speed() {
    let d = card(
        "size=256M,page=16k,write=10MB/s,drain=5MB/s,burst=40MB/s,cmd=0us,cache=16k,through=1",
    );
    let t = d.write(32 << 20, &vec![1u8; 32 << 10]).unwrap();
    let work = 2 * xfer_ns(16 << 10, 5_000_000);
    assert_eq!(t, xfer_ns(32 << 10, 40_000_000) + work.div_ceil(2));
}

#[test]
fn read_step_sets_the_au_boundary_cost_and_read_jitter_varies_it() {
    let step = |spec: &str, boundary: u64| {
        let d = card(spec);
        let mut buf = vec![0u8; 4096];
        let inside = d.read(boundary << 22, &mut buf).unwrap();
        d.read((boundary << 22) - 2048, &mut buf).unwrap() - inside
    };
    let base = "au=4M,page=16k,cmd=200us,read=20MB/s";
    assert_eq!(step(base, 1), 200_000);
    // A stick: no erase-block step, only the page's.
    assert_eq!(step(&format!("{base},read_step=0"), 1), 50_000);
    assert_eq!(step(&format!("{base},read_step=2.5"), 1), 500_000);
    let jittered = format!("{base},read_jitter=50,seed=9");
    let steps: Vec<u64> = (1..40).map(|b| step(&jittered, b)).collect();
    assert!(
        steps.iter().all(|s| (100_000..=300_000).contains(s)),
        "{steps:?}"
    );
    assert!(steps.iter().any(|s| *s != steps[0]), "{steps:?}");
    assert_eq!(
        steps[4],
        step(&jittered, 5),
        "the same boundary, the same cost"
    );
}

proptest::proptest! {
    #[test]
    fn a_card_with_any_laws_never_panics(
        slow in 1u32..=1000,
        cache_kib in 0u64..4096,
        least in 0u64..=100,
        drain in 1u64..50,
        pause in 0u64..20,
        every_kib in 1u64..4096,
        jitter in 0u32..100,
        through in proptest::bool::ANY,
        step in 0u32..5000,
        read_jitter in 0u32..=100,
        hide_ms in 1u64..5000,
        ops in proptest::collection::vec((proptest::bool::ANY, 0u64..8192, 1u64..256, 0u64..100), 1..60),
    ) {
        let spec = format!(
            "size=32M,real=16M,au=1M,page=16k,open_au=2,cache={}k,cache_min={}k,drain={drain}MB/s,pause={pause}ms,pause_every={every_kib}k,jitter={jitter},through={},read_step={}.{:03},read_jitter={read_jitter},hide_for={hide_ms}ms,fat=1ms,fat_max=9ms,fat_every=3,move=3MB/s,slow_end={}.{:03}",
            cache_kib,
            cache_kib * least / 100,
            u8::from(through),
            step / 1000,
            step % 1000,
            slow / 1000,
            slow % 1000,
        );
        let d = card(&spec);
        for (write, sector, sectors, idle_ms) in ops {
            let (at, len) = (sector * 4096, sectors * 512);
            if write {
                let _ = d.write_zeros(at, len);
            } else {
                let _ = d.read(at, &mut vec![0u8; len as usize]);
            }
            d.idle(idle_ms * 1_000_000);
        }
    }
}
