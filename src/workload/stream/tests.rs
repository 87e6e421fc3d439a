//! Unit tests of `stream`, kept beside it so the module reads as the
//! code it is.

use super::*;
use std::cell::Cell;

/// A clock tests move by hand: waiting jumps straight to the deadline.
struct FakePacer<'c>(&'c Cell<u64>);

impl Pacer for FakePacer<'_> {
    fn wait_until(&mut self, t_ns: u64) -> u64 {
        self.0.set(self.0.get().max(t_ns));
        self.0.get()
    }
}

const MS: u64 = 1_000_000;

fn plan(requests: u64) -> StreamPlan {
    StreamPlan {
        kind: OpKindName::Read,
        chunk: 65536,
        period_ns: 10 * MS,
        deadline_ns: 10 * MS,
        requests,
        offset: 0,
        span: 1 << 20,
    }
}

/// Drives the scheduler as an engine would, on the fake clock, with a
/// service time per request chosen by `service`.
fn drive(plan: StreamPlan, service: impl Fn(u64) -> u64) -> StreamOutcome {
    let clock = Cell::new(1_000 * MS);
    let stop = AtomicBool::new(false);
    let mut src = StreamSource::new(plan, FakePacer(&clock), &stop);
    while let Some(op) = src.next(clock.get()) {
        let start = clock.get();
        clock.set(start + service(op.seq));
        src.completed(&op, start, clock.get(), &[]);
    }
    src.outcome()
}

#[test]
fn a_fast_target_misses_nothing() {
    let out = drive(plan(100), |_| MS);
    assert_eq!(out.requests_done, 100);
    assert_eq!(out.misses, 0);
    assert_eq!(out.longest_stall_ns, 0);
    assert_eq!(out.late_starts, 0);
    // Waits kept the schedule: 99 periods plus the last service time.
    assert_eq!(out.elapsed_ns, 99 * 10 * MS + MS);
}

#[test]
fn one_stall_is_charged_to_every_request_queued_behind_it() {
    // Request 10 takes 55 ms: it and the requests due while it ran
    // complete late. Counted from their actual start they would look
    // fast (1 ms); counted from the schedule they do not.
    let out = drive(plan(100), |i| if i == 10 { 55 * MS } else { MS });
    // Request 10 ends at 100+55 = 155 ms (due 100, deadline 110): late by
    // 45 ms. Request 11 (due 110) starts at 155, ends 156, deadline 120.
    // Request 14 (due 140, deadline 150) ends 159: late. Request 15 (due
    // 150, deadline 160) ends 160: on time.
    assert_eq!(out.misses, 5);
    assert_eq!(out.longest_stall_ns, 45 * MS);
    assert_eq!(out.late_starts, 5);
    let lat = out.latency.unwrap();
    assert!(lat.max_ns >= 54 * MS && lat.max_ns <= 56 * MS);
    assert!(out.jitter_ns > MS as f64);
}

#[test]
fn a_slow_target_misses_almost_everything() {
    let out = drive(plan(50), |_| 15 * MS);
    assert!(out.misses >= 48, "{}", out.misses);
    assert!(out.miss_share > 0.9);
}

#[test]
fn stop_flag_ends_the_stream() {
    let clock = Cell::new(0);
    let stop = AtomicBool::new(true);
    let mut src = StreamSource::new(plan(10), FakePacer(&clock), &stop);
    assert!(src.next(0).is_none());
}

#[test]
fn offsets_wrap_inside_the_span() {
    let p = plan(0);
    assert_eq!(p.offset_of(0), 0);
    assert_eq!(p.offset_of(16), 0);
    assert_eq!(p.offset_of(17), 65536);
}

#[test]
fn find_max_brackets_the_limit() {
    let (best, tried) = find_max(1.0, 20, 6, |r| Some(r <= 37.0));
    assert!(best <= 37.0 && best > 37.0 * 0.9, "{best} {tried:?}");
    assert!(tried.iter().any(|&(_, ok)| !ok));
}

#[test]
fn find_max_first_rate_failing() {
    let (best, _) = find_max(10.0, 20, 3, |r| Some(r <= 2.0));
    assert!(best <= 2.0);
}

#[test]
fn a_schedule_fills_its_time_at_any_rate() {
    let schedule = Schedule {
        base: plan(0),
        deadline: None,
        time: Duration::from_secs(1),
        seed: 1,
    };
    // 64 KiB at 6.5536 MB/s: one request every 10 ms, 100 in a second.
    let p = schedule.plan_at(6_553_600.0);
    assert_eq!(
        (p.period_ns, p.deadline_ns, p.requests),
        (10 * MS, 10 * MS, 100)
    );
    assert_eq!((p.chunk, p.span), (65536, 1 << 20));
    let given = Schedule {
        deadline: Some(Duration::from_millis(40)),
        ..schedule
    };
    let q = given.plan_at(3_276_800.0);
    assert_eq!(
        (q.period_ns, q.deadline_ns, q.requests),
        (20 * MS, 40 * MS, 50)
    );
    // A rate too high for a whole nanosecond still plans one request at least.
    assert_eq!(schedule.plan_at(f64::INFINITY).period_ns, 1);
}

#[test]
fn the_search_reports_the_first_trial_and_the_best_clean_rate() {
    let trial = |rate: f64| {
        let mut o =
            StreamSource::new(plan(1), FakePacer(&Cell::new(0)), &AtomicBool::new(false)).outcome();
        o.rate_mb_s = rate / 1e6;
        o.requests_done = o.requests_planned;
        o.misses = u64::from(rate > 8e6);
        (o, None)
    };
    let (outcome, report, error) = search(1e6, trial);
    let report = report.unwrap();
    assert_eq!(outcome.rate_mb_s, 1.0);
    assert!(error.is_none());
    assert!(report.max_rate_mb_s >= 8.0 && report.max_rate_mb_s < 16.0);
    assert_eq!(
        report.trials[..5]
            .iter()
            .map(|t| t.rate_mb_s)
            .collect::<Vec<_>>(),
        [1.0, 2.0, 4.0, 8.0, 16.0]
    );
}
