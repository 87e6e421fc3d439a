//! Unit tests of `class` on cards with the laws of real cards (issue 37):
//! what a run cannot see of them lowers a PASS.

use super::*;
use crate::analysis::flash::class::{Need, judge};
use crate::engine::sim::{SimDevice, SimParams};
use crate::flash::SimIo;
use crate::result::flash::{Confidence, Reason, Status};

fn figures(spec: &str) -> ClassFigures {
    let p = SimParams::parse(spec).unwrap();
    let dev = SimDevice::timing_only(p);
    let plan = ClassPlan::new(dev.params().au, dev.params().size);
    measure(&mut SimIo(&dev), &plan, 1).unwrap()
}

#[test]
fn a_fat_stall_behind_a_full_cache_is_no_sure_pass() {
    // The medium's FAT work queues behind an 8 MiB cache the sequential
    // writes filled: the FAT writes pay older work, not their stalls.
    let spec = "size=4G,au=4M,write=20MB/s,burst=80MB/s,cmd=20us,cache=8M,through=1,fat=2ms,fat_max=400ms,fat_every=4";
    let f = figures(spec);
    assert!(f.pw.fell_after.is_some(), "{:?}", f.pw.fell_after);
    let c = judge(&["U1".into()], &f, None)
        .into_iter()
        .find(|c| matches!(c.need, Need::FatMax(_)))
        .unwrap();
    assert!(f.fat.max_ms < 250.0, "{:?}", f.fat);
    assert_eq!((c.status, c.confidence), (Status::Pass, Confidence::Low));
    assert!(
        matches!(c.reason, Some(Reason::BehindCache { .. })),
        "{:?}",
        c.reason
    );
}

#[test]
fn a_pause_seen_in_the_sequential_writes_lowers_a_fat_pass_it_would_turn() {
    // 600 ms pauses every 64 MiB: a FAT write meeting one exceeds 250 ms.
    let spec = "size=4G,au=4M,write=20MB/s,cmd=20us,fat=2ms,pause=600ms,pause_every=64M";
    let f = figures(spec);
    assert!(f.pw.stall_ms > 500.0, "{}", f.pw.stall_ms);
    let c = judge(&["U1".into()], &f, None)
        .into_iter()
        .find(|c| matches!(c.need, Need::FatMax(_)))
        .unwrap();
    assert_eq!((c.status, c.confidence), (Status::Pass, Confidence::Low));
    assert!(
        matches!(c.reason, Some(Reason::PausesSeen { .. })),
        "{:?}",
        c.reason
    );
}

#[test]
fn pauses_at_burst_speed_are_not_the_cache_filling() {
    // From the calibration: a 14 GiB cache at 345 MB/s that the writes do
    // not fill, pauses every 33 MiB slowing most AUs of 24 MiB. The speed
    // comes back to the burst between pauses, so it is no exhaustion.
    let spec = "size=49551507456,au=25165824,page=32768,open_au=6,read=83765850B/s,write=34581415B/s,burst=345593544B/s,cmd=19324ns,cache=15259926528,fat=13384665ns,fat_max=214784119ns,fat_every=3,cache_min=1801331712,drain=46227456B/s,pause=37703676ns,pause_every=34678272,jitter=25,seed=3731519984930590527,through=1";
    let f = figures(spec);
    assert_ne!(
        f.pw.exhaustion,
        Exhaustion::Exhausted,
        "{:?}",
        f.pw.fell_after
    );
    let c = judge(&["V60".into()], &f, None)
        .into_iter()
        .find(|c| matches!(c.need, Need::SeqWrite(_)))
        .unwrap();
    assert_eq!(c.confidence, Confidence::Low, "{c:?}");
}

#[test]
fn a_card_slower_toward_its_end_is_checked_where_it_is_slowest() {
    // Issue 37: 12 MB/s at its start, 30% of that at its end: C10 was met
    // at medium from the region near the start (10.5 MB/s).
    let f = figures("size=8G,au=4M,write=12MB/s,read=40MB/s,cmd=100us,slow_end=0.3");
    let slowest =
        f.pw.slowest_place_mb_s
            .unwrap_or_else(|| panic!("{:?}", f.pw));
    assert!(slowest < 4.0 && f.pw.mean_mb_s > 10.0, "{:?}", f.pw);
    assert_eq!(f.pw.checked_mb_s(), slowest);
    let c10 = judge(&["C10".into()], &f, None);
    let pw = c10
        .iter()
        .find(|c| matches!(c.need, Need::SeqWrite(_)))
        .unwrap();
    assert_eq!(pw.status, Status::Fail, "{pw:?}");
    // A card the same everywhere: its writes go over all of it (no fall),
    // leaving no place untimed, or its places are no slower than its mean.
    let flat = figures("size=8G,au=4M,write=12MB/s,read=40MB/s,cmd=100us");
    let mean = flat.pw.mean_mb_s;
    let same = |place: f64| (place - mean).abs() < 0.02 * mean;
    assert!(flat.pw.slowest_place_mb_s.is_none_or(same), "{:?}", flat.pw);
}
