//! The exchanges of a job, on ranks that are threads of one process.

use super::*;
use crate::cluster::threads::ThreadWire;
use crate::result::cluster::RankIdentity;
use crate::workload::coordinate::Coordinator;
use std::sync::atomic::{AtomicU32, AtomicU64};

/// Runs `each` on every rank of an in-process job whose ranks sit on
/// the given hosts; returns what each rank returned, by rank.
fn on_ranks<T: Send>(hosts: &[&str], each: impl Fn(Job) -> T + Sync) -> Vec<T> {
    let wires = ThreadWire::job(hosts.len() as u32);
    std::thread::scope(|s| {
        let handles: Vec<_> = wires
            .into_iter()
            .zip(hosts)
            .map(|(wire, host)| {
                let each = &each;
                s.spawn(move || each(Job::join(Box::new(wire), host.to_string())))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn ranks_learn_every_host_and_their_place_on_theirs() {
    let got = on_ranks(&["b", "a", "b", "a", "b"], |job| {
        (job.hosts().to_vec(), job.local_rank(), job.who())
    });
    for (rank, (hosts, _, _)) in got.iter().enumerate() {
        assert_eq!(hosts, &["b", "a", "b", "a", "b"], "rank {rank}");
    }
    let local: Vec<u32> = got.iter().map(|g| g.1).collect();
    assert_eq!(local, [0, 0, 1, 1, 2]);
    assert_eq!(got[3].2, "rank 3 (a)");
}

#[test]
fn rank_zeros_verdict_reaches_every_rank_and_only_rank_zero_prints_it() {
    let got = on_ranks(&["h", "h", "h"], |job| {
        let verdict = job.is_root().then(|| {
            Err(Stop {
                code: 2,
                line: Some("Error: no".into()),
            })
        });
        job.agree(verdict).unwrap_err()
    });
    assert!(got.iter().all(|s| s.code == 2));
    assert_eq!(got[0].line.as_deref(), Some("Error: no"));
    assert!(got[1].line.is_none() && got[2].line.is_none());
}

#[test]
fn the_targets_of_every_rank_reach_every_rank_and_a_difference_stops_all() {
    let got = on_ranks(&["a", "b"], |job| {
        let id = RankIdentity {
            rank: job.rank(),
            host: job.host().into(),
            build: ["x", "y"][job.rank() as usize].into(),
            target: format!("/t/{}", job.rank()),
            ..RankIdentity::default()
        };
        let verdict = job.check_identities(&id, |ids| {
            (ids[0].build != ids[1].build).then(|| "builds differ".to_string())
        });
        (verdict.map_err(|s| (s.code, s.line)), job.targets())
    });
    assert_eq!(
        got[0].0,
        Err((EXIT_USAGE_CODE, Some("builds differ".into())))
    );
    assert_eq!(got[1].0, Err((EXIT_USAGE_CODE, None)));
    assert_eq!(got[1].1, ["/t/0", "/t/1"]);
}

const EXIT_USAGE_CODE: i32 = crate::error::EXIT_USAGE;

#[test]
fn clocks_of_threads_in_one_process_agree_within_their_bound() {
    let got = on_ranks(&["a", "b", "c"], |job| job.measure_clocks());
    let at_root = &got[0];
    assert_eq!(at_root.len(), 3);
    for estimate in &at_root[1..] {
        // One clock for all threads: the true offset is 0.
        assert!(
            estimate.offset_ns.unsigned_abs() <= estimate.bound_ns,
            "{estimate:?}"
        );
    }
}

#[test]
fn a_stonewall_stops_the_slower_ranks_when_the_first_finishes() {
    let finished = AtomicU32::new(0);
    let got = on_ranks(&["a", "b", "c"], |job| {
        job.set_options(JobOptions {
            stonewall: true,
            ..JobOptions::default()
        });
        let stop = AtomicBool::new(false);
        let moved = AtomicU64::new(0);
        let read_moved = || moved.load(Ordering::Relaxed);
        let at_first = job.during_counted("pass", &stop, &read_moved, &mut |ready| {
            // Held until every rank is built.
            ready();
            // Rank 0 finishes at once; the others would run for a
            // minute unless stopped.
            let limit = if job.rank() == 0 { 1 } else { 60_000 };
            for _ in 0..limit {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                moved.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(1));
            }
            finished.fetch_add(1, Ordering::Relaxed);
            false
        });
        (at_first, read_moved(), stop.load(Ordering::Relaxed))
    });
    assert_eq!(finished.load(Ordering::Relaxed), 3);
    assert_eq!(got[0], (1, 1, false), "the first rank counts its own total");
    for (at_first, total, stopped) in &got[1..] {
        assert!(stopped, "{got:?}");
        assert!(at_first <= total && *total < 60_000, "{got:?}");
    }
}

#[test]
fn ranks_at_the_same_steps_pass_them_together() {
    let got = on_ranks(&["a", "a", "b"], |job| {
        for step in ["one", "two", "three"] {
            job.arrive(step);
        }
        job.share_exit(job.is_root().then_some(7))
    });
    assert_eq!(got, [7, 7, 7]);
}
