//! `sustain` against the simulator's own cache law: over a seeded
//! population of simulated cards, the drop found in the per-request
//! completion times lies within one request of the first write the law
//! makes wait, and inside the range the analysis states; and the command
//! itself runs on a `sim:` card on its virtual clock.

use crate::common;

use common::{MIB, iocurve, ok_json};
use iocurve::analysis::sustain::rules::DROP_RATIO;
use iocurve::engine::sim::{SimDevice, SimParams};
use iocurve::workload::sustain::drop_on_sim;

/// Cards in the population (issue 14 asks for at least 300).
const CARDS: u64 = 320;

/// SplitMix64: a seeded stream of draws, the same on every run.
struct Draws(u64);

impl Draws {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi)`.
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        let unit = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * unit
    }
}

/// One simulated card with a write cache, and the request size to write it
/// with.
struct Card {
    params: SimParams,
    request: u64,
}

/// Caches log-uniform from 1 MiB to 4 GiB (in 512-byte sectors), medium
/// 2–40 MB/s, burst 2–10 times that, command time 0–100 µs, requests of 64
/// KiB to 1 MiB.
fn draw_card(draws: &mut Draws) -> Card {
    let cache = (2f64.powf(draws.uniform(20.0, 32.0)) as u64 / 512).max(1) * 512;
    let write = draws.uniform(2e6, 40e6) as u64;
    let burst = (write as f64 * draws.uniform(2.0, 10.0)) as u64;
    let cmd_ns = draws.uniform(0.0, 100_000.0) as u64;
    let request = (64 << 10) << (draws.next() % 5);
    let params = SimParams {
        cache,
        write,
        burst,
        cmd_ns,
        ..SimParams::default()
    };
    Card { params, request }
}

fn xfer_ns(len: u64, rate: u64) -> u64 {
    (u128::from(len) * 1_000_000_000 / u128::from(rate)) as u64
}

/// The index of the first request that waits for room in the cache, by
/// replaying the simulator's documented law request by request: writes land
/// at `burst` after the command time while the cache drains at `write`;
/// a write waits once the level it brings exceeds `cache`.
fn first_waiting_request(p: &SimParams, request: u64) -> u64 {
    let (mut level, mut now, mut last) = (0u64, 0u64, 0u64);
    for i in 0.. {
        let drained = (u128::from(now - last) * u128::from(p.write) / 1_000_000_000) as u64;
        level = level.saturating_sub(drained) + request;
        let over = level.saturating_sub(p.cache);
        if over > 0 {
            return i;
        }
        last = now;
        now += p.cmd_ns + xfer_ns(request, p.burst);
    }
    unreachable!("the loop returns")
}

/// The closed form for comparison: the cache fills at the landing speed
/// minus the drain speed, so it holds `cache` after `cache · landing /
/// (landing − write)` bytes.
fn closed_form_bytes(p: &SimParams, request: u64) -> f64 {
    let landing = request as f64 * 1e9 / (p.cmd_ns + xfer_ns(request, p.burst)) as f64;
    p.cache as f64 * landing / (landing - p.write as f64)
}

#[test]
fn over_a_population_of_cards_the_drop_is_within_one_request_of_the_cache_law() {
    let mut draws = Draws(0x5_5741);
    let mut worst_requests_off = 0u64;
    let mut widest_range = 0u64;
    for index in 0..CARDS {
        let card = draw_card(&mut draws);
        let (p, request) = (&card.params, card.request);
        let truth = first_waiting_request(p, request);
        let closed = closed_form_bytes(p, request);
        assert!(
            (closed - (truth * request) as f64).abs() <= 3.0 * request as f64,
            "card {index}: the replay ({truth} requests) and the closed form ({closed:.0} B) disagree"
        );
        // A little past the drop: 5% more, and at least 32 slow requests.
        let requests = truth + (truth / 20).max(32);
        let bytes = requests * request;
        let size = bytes.div_ceil(4 * MIB) * 4 * MIB;
        let params = SimParams {
            size,
            real: size,
            ..p.clone()
        };
        let device = SimDevice::timing_only(params);
        let found = drop_on_sim(&device, request as u32, bytes)
            .unwrap_or_else(|e| panic!("card {index}: {e:?}"))
            .unwrap_or_else(|| panic!("card {index}: no drop found ({:?}, {request} B)", p));
        let at = found.at_request;
        assert!(
            at.abs_diff(truth) <= 1,
            "card {index}: drop at request {at}, the law says {truth} ({p:?}, {request} B)"
        );
        let law_bytes = truth * request;
        assert!(
            found.bytes_low <= law_bytes && law_bytes <= found.bytes_high,
            "card {index}: {law_bytes} B outside {}..{} ({p:?})",
            found.bytes_low,
            found.bytes_high
        );
        // The speeds on each side are the landing and the drain speed, but
        // for the one request during which the cache filled, which the fit
        // may count on either side: it can slow the side before by at most
        // one slow request in `at`, and speed up the side after by at most
        // one fast request.
        let landing = request as f64 * 1e3 / (p.cmd_ns + xfer_ns(request, p.burst)) as f64;
        let drain = p.write as f64 / 1e6;
        let (k, rest) = (at as f64, (found.requests - at) as f64);
        let before_floor = landing * k / (k - 1.0 + landing / drain);
        let after_ceiling = drain * rest / (rest - 1.0 + drain / landing);
        let before = found.mb_per_s_before;
        assert!(
            before <= landing * 1.001 && before >= before_floor * 0.999,
            "card {index}: before {before} MB/s, landing {landing}, floor {before_floor} ({p:?}, {request} B, found {found:?})"
        );
        let after = found.mb_per_s_after;
        assert!(
            after >= drain * 0.999 && after <= after_ceiling * 1.001,
            "card {index}: after {after} MB/s, drain {drain}, ceiling {after_ceiling}"
        );
        assert!(found.ratio < DROP_RATIO);
        worst_requests_off = worst_requests_off.max(at.abs_diff(truth));
        widest_range = widest_range.max((found.bytes_high - found.bytes_low) / request);
    }
    eprintln!(
        "{CARDS} cards: worst {worst_requests_off} request(s) from the law, widest range {widest_range} requests"
    );
}

#[test]
fn a_card_without_a_cache_shows_no_drop() {
    let device = SimDevice::timing_only(SimParams {
        size: 256 * MIB,
        real: 256 * MIB,
        ..SimParams::default()
    });
    let found = drop_on_sim(&device, MIB as u32, 128 * MIB).expect("written");
    assert_eq!(found, None);
}

#[test]
fn the_command_runs_on_a_simulated_card_on_its_virtual_clock() {
    // 16 MiB cache, 256 KiB writes landing in 50 µs + 6.55 ms while 66 036
    // bytes drain each: by the law the 86th write (after 21.25 MiB) waits.
    let spec = "sim:size=256M,cache=16M,write=10MB/s,burst=40MB/s,cmd=50us";
    let params = SimParams::parse(spec.trim_start_matches("sim:")).unwrap();
    let truth = first_waiting_request(&params, 256 << 10) * (256 << 10);
    let doc = ok_json(iocurve().args([
        "sustain",
        spec,
        "--bytes",
        "40M",
        "--bs",
        "256k",
        "--interval",
        "100ms",
        "--mark",
        "8M",
        "--no-save",
        "--json",
    ]));
    let s = &doc["sustain"];
    assert_eq!(s["bytes"], 40 * MIB);
    assert_eq!(s["ended_by"], "bytes");
    // Virtual time: 40 MiB at 10–40 MB/s takes seconds on the card's clock.
    let seconds = s["elapsed_ns"].as_f64().unwrap() / 1e9;
    assert!((1.0..10.0).contains(&seconds), "{seconds} s");
    assert_eq!(s["requests_recorded"], 160);
    let d = &s["drop"];
    let at = d["bytes_before_drop"].as_u64().expect("a drop");
    assert!(at.abs_diff(truth) <= 256 << 10, "{at} vs {truth}");
    let (low, high) = (
        d["bytes_low"].as_u64().unwrap(),
        d["bytes_high"].as_u64().unwrap(),
    );
    assert!(low <= truth && truth <= high, "{low}..{high} vs {truth}");
    assert_eq!(d["requests"], 160);
    let after = d["after_mb_per_s"].as_f64().unwrap();
    assert!((after - 10.0).abs() < 0.5, "after {after} MB/s");
}
