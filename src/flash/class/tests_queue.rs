//! `flash class` on cards that queue the medium's work behind their cache
//! (`through=1`), where each write pays for the oldest work queued, not
//! its own (issue 37). The cards are ones the 2,000-card calibration
//! answered wrongly at high before.

use super::*;
use crate::analysis::flash::class::{Check, Need, judge};
use crate::engine::sim::{SimDevice, SimParams};
use crate::flash::SimIo;
use crate::result::flash::{Confidence, Reason, Status};

fn figures_with(spec: &str, seed: u64) -> ClassFigures {
    let p = SimParams::parse(spec).unwrap();
    let dev = SimDevice::timing_only(p);
    let plan = ClassPlan::new(dev.params().au, dev.params().size);
    measure(&mut SimIo(&dev), &plan, seed).unwrap()
}

fn fat_checks(spec: &str, class: &str, seed: u64) -> Vec<Check> {
    let p = SimParams::parse(spec).unwrap();
    let link = p.link.map(|l| l as f64 / 1e6);
    let f = figures_with(spec, seed);
    judge(&[class.to_string()], &f, link)
        .into_iter()
        .filter(|c| matches!(c.need, Need::FatMean(_) | Need::FatMax(_)))
        .collect()
}

/// FAT-area writes of 4.6 ms after random writes whose AU closes cost a
/// second and more each: they paid that work, 120 to 820 ms a write, and
/// failed C10 at high. The cache is filled again before them now.
#[test]
fn fat_writes_pay_their_own_work_not_the_random_writes_before_them() {
    let card = "size=57147392,au=524288,page=32768,open_au=4,read=1728848B/s,write=1005753B/s,burst=1411923B/s,cmd=20959ns,cache=14680064,move=360740B/s,fat=1262528ns,cache_min=9268224,jitter=23,seed=1426418827799369515,through=1";
    for seed in 1..=8 {
        let f = figures_with(card, seed);
        assert!(
            f.fat.worst_mean8_ms < 10.0,
            "seed {seed}: worst mean of 8 {} ms",
            f.fat.worst_mean8_ms
        );
    }
}

/// A card whose speed falls to 68% toward its end, that the Pw writes
/// cover to its end and start over: the steady mean is the second pass's
/// start (4.4 MB/s); the places within the region find the end's 3.0.
#[test]
fn a_card_covered_to_its_end_is_timed_at_its_end() {
    let card = "size=15029764096,au=524288,page=16384,open_au=6,read=16780680B/s,write=4412215B/s,burst=10213971B/s,cmd=82986ns,cache=175112192,fat=24868575ns,slow_end=0.676,cache_min=48392704,seed=6293006478130399061,through=1";
    let f = figures_with(card, 1);
    let end = f.pw.slowest_place_mb_s.expect("places within the region");
    assert!(f.pw.mean_mb_s > 4.0, "steady mean {}", f.pw.mean_mb_s);
    assert!((2.8..3.3).contains(&end), "slowest place {end}");
    assert!(f.pw.checked_mb_s() < 4.0);
}

/// Commands of 32 KiB RUs at 23 MB/s never fill a cache that drains at
/// 158 MB/s, so no fall shows it, yet it hides FAT stalls of 751 ms from
/// all 768 writes, which cost a command and 4 KiB at burst speed.
#[test]
fn fat_writes_as_cheap_as_a_bare_write_pass_at_low_only() {
    let card = "size=161611776,au=32768,page=2048,open_au=1,read=260331195B/s,write=158188128B/s,burst=174387030B/s,cmd=1244910ns,cache=22020096,fat=49326872ns,fat_max=751011150ns,seed=9713820064300036088,through=1";
    let checks = fat_checks(card, "U3", 1);
    assert!(!checks.is_empty());
    for c in checks {
        assert_eq!((c.status, c.confidence), (Status::Pass, Confidence::Low));
        assert!(
            matches!(c.reason, Some(Reason::NoMediumWorkSeen { .. })),
            "{:?}",
            c.reason
        );
    }
}

/// Behind a 1 MB/s link a cache fills from no sequential write, so none
/// is sized and refilled: the FAT-area writes (11 ms of their own) took
/// as long as the random writes before them and paid their work.
#[test]
fn a_fat_fail_that_paid_the_random_writes_work_is_low() {
    let card = "size=1072168960,au=262144,page=32768,open_au=5,read=3012412B/s,write=1637612B/s,burst=4911170B/s,cmd=471681ns,cache=9437184,link=1035796B/s,fat=11124345ns,cache_min=2451968,drain=1594515B/s,jitter=20,seed=14186986908963858512,through=1";
    let mean = fat_checks(card, "C10", 1)
        .into_iter()
        .find(|c| matches!(c.need, Need::FatMean(_)))
        .unwrap();
    assert_eq!(
        (mean.status, mean.confidence),
        (Status::Fail, Confidence::Low)
    );
    // The first FAT-area writes, before the random ones, say it first.
    assert!(
        matches!(
            mean.reason,
            Some(Reason::FirstFatWritesMet { .. } | Reason::OlderWorkPaid { .. })
        ),
        "{:?}",
        mean.reason
    );
}

/// A cache that drains faster than the sequential writes come shows no
/// fall, so nothing sizes a refill: the FAT-area writes at the end (1.1 ms
/// of their own) paid for the random writes' AU closes, 296 ms each. The
/// first ones, timed before the random writes, met the limits.
#[test]
fn a_fat_fail_the_first_fat_writes_did_not_show_is_low() {
    let card = "size=4050124800,au=524288,page=16384,open_au=4,read=5764792B/s,write=1795547B/s,burst=2207258B/s,cmd=2345751ns,cache=4194304,link=5510125B/s,fat=1088862ns,slow_end=0.945,drain=2641425B/s,seed=997253073232951147,through=1";
    let checks = fat_checks(card, "U3", 1);
    let fails: Vec<&Check> = checks.iter().filter(|c| c.status == Status::Fail).collect();
    assert!(!fails.is_empty(), "{checks:?}");
    for c in fails {
        assert_eq!(c.confidence, Confidence::Low);
        assert!(
            matches!(
                c.reason,
                Some(Reason::FirstFatWritesMet { writes: 256, .. })
            ),
            "{:?}",
            c.reason
        );
    }
}
