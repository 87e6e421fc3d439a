//! Reading the ranks of a run on many hosts: how many ranks on how many
//! hosts, the median rank and the stragglers below it, the repetition a
//! test's headline figure stands for, and how well the clocks were known.
//!
//! Why here: the text table, the HTML chart, the exports and `compare` all
//! say these things, and must say them alike; computing them once, pure,
//! below every renderer keeps them from drifting apart. A straggler is a
//! rank well below the median rank's rate (elbencho and IOR users look for
//! the slow node first: one slow rank holds back every bulk-synchronous
//! step, so the aggregate hides it). Nothing here merges: these read a
//! result whose ranks were already merged.

use crate::result::cluster::{MpiRepetition, MpiSection, MpiTest, RankRow};
use crate::result::{RunResult, TestResult};

/// A rank below this share of the median rank's MB/s is a straggler.
pub const STRAGGLER_SHARE: f64 = 0.8;

/// The distinct hosts of the job, in the order of their first rank.
pub fn hosts(section: &MpiSection) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for r in &section.ranks {
        if !out.contains(&r.host.as_str()) {
            out.push(&r.host);
        }
    }
    out
}

/// `4 ranks on 2 hosts`, `1 rank on 1 host`.
pub fn shape(ranks: u32, hosts: usize) -> String {
    format!(
        "{ranks} rank{} on {hosts} host{}",
        plural(ranks as usize),
        plural(hosts)
    )
}

/// [`shape`] of a job.
pub fn shape_of(section: &MpiSection) -> String {
    shape(section.size, hosts(section).len())
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The median of the ranks' MB/s (the mean of the middle two for an even
/// count); `None` without ranks.
pub fn median_rate(section: &MpiSection) -> Option<f64> {
    let mut rates: Vec<f64> = section.ranks.iter().map(|r| r.mb_per_s).collect();
    if rates.is_empty() {
        return None;
    }
    rates.sort_by(f64::total_cmp);
    let mid = rates.len() / 2;
    Some(match rates.len() % 2 {
        0 => (rates[mid - 1] + rates[mid]) / 2.0,
        _ => rates[mid],
    })
}

/// The ranks below [`STRAGGLER_SHARE`] of the median rank's MB/s, by rank.
pub fn stragglers(section: &MpiSection) -> Vec<&RankRow> {
    let Some(median) = median_rate(section) else {
        return Vec::new();
    };
    section
        .ranks
        .iter()
        .filter(|r| r.mb_per_s < STRAGGLER_SHARE * median)
        .collect()
}

/// The index of the repetition whose MB/s is the test's median: the one
/// its headline figure stands for.
pub fn median_repetition(test: &TestResult) -> usize {
    let Some(median) = test.mb_per_s.map(|s| s.median) else {
        return 0;
    };
    test.repetitions
        .iter()
        .enumerate()
        .min_by(|(_, a), (_, b)| {
            (a.mb_per_s - median)
                .abs()
                .total_cmp(&(b.mb_per_s - median).abs())
        })
        .map_or(0, |(i, _)| i)
}

/// Each measured test of `r` beside its figures across the ranks, at its
/// median repetition: (test, its MPI figures, that repetition).
pub fn test_figures<'a>(
    r: &'a RunResult,
    section: &'a MpiSection,
) -> Vec<(&'a TestResult, &'a MpiTest, &'a MpiRepetition)> {
    r.tests
        .iter()
        .zip(&section.tests)
        .filter(|(t, _)| t.skipped.is_none())
        .filter_map(|(t, m)| {
            let rep = m
                .repetitions
                .get(median_repetition(t))
                .or(m.repetitions.first())?;
            Some((t, m, rep))
        })
        .collect()
}

/// When every rank's drift is within its own uncertainty (what the two
/// offsets' bounds allow): the largest uncertainty, ns per second, as the
/// noise the drift is lost in. `None` when some rank drifted beyond it
/// (or no rank has an uncertainty: runs stored before it was recorded).
pub fn drift_within_noise(section: &MpiSection) -> Option<f64> {
    let measured = section
        .ranks
        .iter()
        .filter(|r| r.clock_drift_uncertainty_ns_per_s > 0.0);
    let mut noise: Option<f64> = None;
    for r in measured {
        if r.clock_drift_ns_per_s.abs() > r.clock_drift_uncertainty_ns_per_s {
            return None;
        }
        noise = Some(noise.unwrap_or(0.0).max(r.clock_drift_uncertainty_ns_per_s));
    }
    noise
}

/// The loosest clock of the job: the largest offset bound (ns) and the
/// largest drift (ns per second) over the ranks.
pub fn clock_bounds(section: &MpiSection) -> (u64, f64) {
    section.ranks.iter().fold((0, 0.0), |(bound, drift), r| {
        (
            bound.max(r.clock_offset_bound_ns),
            drift.max(r.clock_drift_ns_per_s.abs()),
        )
    })
}

/// How a run was spread over hosts, for a comparison: its ranks and its
/// hosts, sorted (a run on one host has one rank on its own host).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spread {
    pub ranks: u32,
    pub hosts: Vec<String>,
}

impl Spread {
    pub fn of(r: &RunResult) -> Spread {
        match &r.mpi {
            Some(m) => {
                let mut hosts: Vec<String> = hosts(m).into_iter().map(String::from).collect();
                hosts.sort();
                Spread {
                    ranks: m.size,
                    hosts,
                }
            }
            None => Spread {
                ranks: 1,
                hosts: vec![r.host.hostname.clone()],
            },
        }
    }

    /// `8 ranks on 4 hosts`, or `one host` for a run without MPI.
    pub fn text(&self, mpi: bool) -> String {
        match mpi {
            true => shape(self.ranks, self.hosts.len()),
            false => "one host".into(),
        }
    }
}

/// The caveat of comparing runs spread differently over hosts (a
/// different number of ranks, or other hosts), naming each run's spread:
/// `run 12: 8 ranks on 4 hosts, run 15: 4 ranks on 2 hosts`. `None` when
/// no run used MPI or all were spread alike.
pub fn spread_caveat(runs: &[(&str, &RunResult)]) -> Option<String> {
    if runs.iter().all(|(_, r)| r.mpi.is_none()) {
        return None;
    }
    let spreads: Vec<(Spread, bool)> = runs
        .iter()
        .map(|(_, r)| (Spread::of(r), r.mpi.is_some()))
        .collect();
    let first = spreads.first()?;
    if spreads.iter().all(|s| s == first) {
        return None;
    }
    // Same counts but other hosts: name the hosts, else the counts say it.
    let counts_alike = spreads
        .iter()
        .all(|(s, _)| s.ranks == first.0.ranks && s.hosts.len() == first.0.hosts.len());
    let parts: Vec<String> = runs
        .iter()
        .zip(&spreads)
        .map(|((source, _), (s, mpi))| match counts_alike {
            true => format!("{source}: {} ({})", s.text(*mpi), s.hosts.join(", ")),
            false => format!("{source}: {}", s.text(*mpi)),
        })
        .collect();
    Some(format!(
        "the runs were spread over hosts differently ({}); their merged figures are compared",
        parts.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;

    #[test]
    fn the_fixture_has_two_hosts_and_one_straggler() {
        let r = testdata::mpi_result();
        let m = r.mpi.as_ref().unwrap();
        assert_eq!(hosts(m), ["node-a", "node-b"]);
        assert_eq!(shape_of(m), "4 ranks on 2 hosts");
        assert_eq!(shape(1, 1), "1 rank on 1 host");
        let slow: Vec<u32> = stragglers(m).iter().map(|r| r.rank).collect();
        assert_eq!(slow, [3]);
        let (bound, drift) = clock_bounds(m);
        assert_eq!((bound, drift), (21_000, 2.6));
    }

    #[test]
    fn the_ranks_add_up_to_the_merged_tests() {
        let r = testdata::mpi_result();
        let m = r.mpi.as_ref().unwrap();
        let bytes: u64 = r.tests.iter().map(|t| t.repetitions[0].bytes).sum();
        let ops: u64 = r.tests.iter().map(|t| t.repetitions[0].ops).sum();
        assert_eq!(m.ranks.iter().map(|r| r.bytes).sum::<u64>(), bytes);
        assert_eq!(m.ranks.iter().map(|r| r.ops).sum::<u64>(), ops);
        for (t, mt, rep) in test_figures(&r, m) {
            assert_eq!(t.name, mt.name);
            let span_bytes: u64 = rep.ranks.iter().map(|s| s.bytes).sum();
            assert_eq!(span_bytes, t.repetitions[0].bytes);
            let elapsed = (rep.last_end_ns - rep.first_start_ns) as u64;
            assert_eq!(elapsed, t.repetitions[0].elapsed_ns);
        }
    }

    #[test]
    fn a_median_rank_of_an_even_count_is_the_middle_pair() {
        let mut m = MpiSection::default();
        for (i, rate) in [10.0, 40.0, 20.0, 30.0].into_iter().enumerate() {
            m.ranks.push(RankRow {
                rank: i as u32,
                host: "h".into(),
                mb_per_s: rate,
                ..RankRow::default()
            });
        }
        assert_eq!(median_rate(&m), Some(25.0));
        // 10 is below 80% of 25 (20); 20 is not.
        let slow: Vec<u32> = stragglers(&m).iter().map(|r| r.rank).collect();
        assert_eq!(slow, [0]);
        assert_eq!(median_rate(&MpiSection::default()), None);
    }

    #[test]
    fn differently_spread_runs_get_one_caveat_naming_each() {
        let big = testdata::mpi_result();
        let mut small = testdata::mpi_result();
        let m = small.mpi.as_mut().unwrap();
        m.size = 2;
        m.ranks.truncate(2);
        let single = testdata::run(None, "2024-03-01T10:00:00Z", &[1.0], &[1.0]);
        let caveat = spread_caveat(&[("run 12", &big), ("run 15", &small)]).unwrap();
        assert!(
            caveat.contains("run 12: 4 ranks on 2 hosts, run 15: 2 ranks on 1 host"),
            "{caveat}"
        );
        let caveat = spread_caveat(&[("run 12", &big), ("run 3", &single)]).unwrap();
        assert!(caveat.contains("run 3: one host"), "{caveat}");
        assert_eq!(spread_caveat(&[("a", &big), ("b", &big.clone())]), None);
        assert_eq!(spread_caveat(&[("a", &single), ("b", &single)]), None);
        // Same counts on other hosts: the hosts are named.
        let mut moved = testdata::mpi_result();
        for r in &mut moved.mpi.as_mut().unwrap().ranks {
            r.host = r.host.replace("node", "gpu");
        }
        let caveat = spread_caveat(&[("a", &big), ("b", &moved)]).unwrap();
        assert!(caveat.contains("(gpu-a, gpu-b)"), "{caveat}");
    }
}
