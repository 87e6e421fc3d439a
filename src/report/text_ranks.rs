//! The ranks of a run on many hosts, under the merged table: what the
//! merge adds up (aggregate, first done, sum of ranks, skew), how well the
//! clocks were known, and one row per rank.
//!
//! Why a table of its own: a merged figure hides the slow node, and a
//! person running IOR looks for it first. Each rank's row keeps to 80
//! columns for up to 99 ranks (host names cut to [`HOST_WIDTH`]), so the
//! table reads in a default terminal like `profile`'s. The formulas are the
//! ones the result states ([`crate::result::cluster`]); the wording is
//! shared with the HTML report through [`crate::analysis::ranks`].

use super::cells::rank_figures;
use super::table::{Table, cut};
use crate::analysis::ranks;
use crate::result::RunResult;
use crate::result::cluster::{
    MergeNote, MergeNoteKind, MpiRepetition, MpiSection, NoPartner, NoPartnerKind,
};
use crate::units::{format_latency, format_mbps};
use std::fmt::Write;

/// The widest host name a row shows; longer ones end in an ellipsis.
pub const HOST_WIDTH: usize = 16;

/// Everything the text report says about the ranks; nothing for a run on
/// one host.
pub fn ranks_block(out: &mut String, r: &RunResult) {
    let Some(m) = &r.mpi else {
        return;
    };
    out.push('\n');
    test_lines(out, r, m);
    clock_line(out, m);
    mode_lines(out, r, m);
    let _ = writeln!(out, "{}", rank_table(m));
    straggler_line(out, m);
    lost_lines(out, m);
}

/// One line per rank the job went on without: its figures are missing.
fn lost_lines(out: &mut String, m: &MpiSection) {
    use crate::result::cluster::RankLoss;
    for lost in &m.lost {
        let secs = lost.silent_ns() as f64 / 1e9;
        let why = match lost.why {
            RankLoss::StoppedAnswering => format!("stopped answering for {secs:.1} s"),
            RankLoss::Stalled => format!("moved no data for {secs:.1} s"),
            RankLoss::Vanished => "did not answer once the job was stopped".to_string(),
        };
        let _ = writeln!(
            out,
            "lost        rank {} ({}): {why}; its figures are not in the merge",
            lost.rank, lost.host
        );
    }
}

/// The figures of one repetition across the ranks.
fn figures(rep: &MpiRepetition) -> String {
    format!(
        "aggregate {} MB/s · first done {} MB/s · sum of ranks {} MB/s · start skew {}, end skew {}",
        format_mbps(rep.aggregate_mb_per_s),
        format_mbps(rep.stonewall_mb_per_s),
        format_mbps(rep.sum_of_rank_mb_per_s),
        format_latency(rep.start_skew_ns() as f64),
        format_latency(rep.end_skew_ns() as f64)
    )
}

/// One line for a single test; else the job's shape and what the figures
/// mean, then a table with one row per test.
fn test_lines(out: &mut String, r: &RunResult, m: &MpiSection) {
    let shape = ranks::shape_of(m);
    let tests = ranks::test_figures(r, m);
    if let (true, Some(whole)) = (tests.is_empty(), &m.whole) {
        let _ = writeln!(
            out,
            "ranks       {shape} · {} {} (aggregate: total bytes over first start to last end)",
            r.command(),
            figures(whole)
        );
        return;
    }
    if let [(_, _, rep)] = tests.as_slice() {
        let _ = writeln!(
            out,
            "ranks       {shape} · {} (aggregate: total bytes over first start to last end)",
            figures(rep)
        );
        return;
    }
    let _ = writeln!(
        out,
        "ranks       {shape}; each test's median repetition. Aggregate: total bytes over first start to last end; first done: when the first rank finished; sum of ranks: each rank's own rate, added"
    );
    let mut table = Table::new(&[
        "test",
        "aggregate",
        "first done",
        "sum of ranks",
        "start",
        "end",
    ]);
    table.groups(&[("", 1), ("MB/s", 3), ("skew", 2)]);
    for (t, _, rep) in tests {
        table.add_row(vec![
            format!("{} {}", super::text_marks::row_label(t), t.workload.rw),
            format_mbps(rep.aggregate_mb_per_s),
            format_mbps(rep.stonewall_mb_per_s),
            format_mbps(rep.sum_of_rank_mb_per_s),
            format_latency(rep.start_skew_ns() as f64),
            format_latency(rep.end_skew_ns() as f64),
        ]);
    }
    let _ = writeln!(out, "{table}\n");
}

/// How well the clocks were known: the loosest rank's bound, and its
/// drift, or that the drift is noise when every rank's estimate is within
/// its own uncertainty.
fn clock_line(out: &mut String, m: &MpiSection) {
    let (bound, drift) = ranks::clock_bounds(m);
    let drift_text = match ranks::drift_within_noise(m) {
        Some(noise) => format!(
            "drift within noise (± {} µs/s)",
            crate::units::three_figures(noise / 1e3)
        ),
        None => format!("drift ≤ {} µs/s", crate::units::three_figures(drift / 1e3)),
    };
    let _ = writeln!(
        out,
        "clocks      offsets measured by ping-pong, bound ≤ {}, {drift_text}",
        format_latency(bound as f64)
    );
}

/// A merge's note in words.
pub fn note_text(note: &MergeNote, r: &RunResult) -> String {
    match note {
        MergeNote::Typed(MergeNoteKind::DetailOfRankZero) => {
            let host = r
                .mpi
                .as_ref()
                .and_then(|m| m.ranks.iter().find(|k| k.rank == 0))
                .map_or("", |k| k.host.as_str());
            format!(
                "the {} detail above is rank 0's ({}); each rank's totals are in the rank table",
                r.command(),
                cut(host, HOST_WIDTH)
            )
        }
        MergeNote::Legacy(words) => words.clone(),
    }
}

/// Why no rank read another host's data, in words.
pub fn no_partner_text(why: &NoPartner) -> String {
    match why {
        NoPartner::Typed(NoPartnerKind::OneHost { host, ranks }) => format!(
            "all {ranks} ranks ran on one host ({}): nothing to read from another host",
            cut(host, HOST_WIDTH)
        ),
        NoPartner::Typed(NoPartnerKind::NoRanks) => {
            "no ranks: nothing to read from another host".into()
        }
        NoPartner::Legacy(words) => words.clone(),
    }
}

/// `--stonewall`, `--shared-file` and `--read-other-host`, when used.
fn mode_lines(out: &mut String, r: &RunResult, m: &MpiSection) {
    if let Some(note) = &m.note {
        let _ = writeln!(out, "note        {}", note_text(note, r));
    }
    if m.stonewall {
        let _ = writeln!(
            out,
            "stonewall   every rank stopped when the first finished (--stonewall)"
        );
    }
    if m.shared_file {
        let _ = writeln!(
            out,
            "layout      one shared file, rank r at r × span (--shared-file)"
        );
    }
    if let Some(o) = &m.read_other_host {
        match (o.done, &o.why_not) {
            (true, _) => {
                let pairs: Vec<String> = o
                    .read_from
                    .iter()
                    .enumerate()
                    .map(|(rank, from)| format!("{rank}←{from}"))
                    .collect();
                let _ = writeln!(
                    out,
                    "reads       each rank read what a rank on another host wrote (reader←writer): {}",
                    pairs.join(", ")
                );
            }
            (false, why) => {
                let _ = writeln!(
                    out,
                    "reads       NOT from another host: {}; each rank read its own data",
                    why.as_ref()
                        .map_or("no reason given".into(), no_partner_text)
                );
            }
        }
    }
}

/// One row per rank, by rank; each latency and skew names its unit.
fn rank_table(m: &MpiSection) -> Table {
    let mut rows: Vec<_> = m.ranks.iter().collect();
    rows.sort_by_key(|r| r.rank);
    let mut table = Table::new(&[
        "host",
        "rank",
        "MB/s",
        "p50",
        "p99",
        "start skew",
        "end skew",
    ]);
    for r in rows {
        let mut row = vec![cut(&r.host, HOST_WIDTH), r.rank.to_string()];
        row.extend(rank_figures(r));
        table.add_row(row);
    }
    table
}

/// The ranks well below the median rank, named.
fn straggler_line(out: &mut String, m: &MpiSection) {
    let slow = ranks::stragglers(m);
    let Some(median) = ranks::median_rate(m) else {
        return;
    };
    if slow.is_empty() {
        return;
    }
    let named: Vec<String> = slow
        .iter()
        .map(|r| {
            format!(
                "rank {} on {} ({} MB/s)",
                r.rank,
                r.host,
                format_mbps(r.mb_per_s)
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "STRAGGLER   {} below {:.0}% of the median rank's {} MB/s",
        named.join(", "),
        ranks::STRAGGLER_SHARE * 100.0,
        format_mbps(median)
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::table::columns;
    use crate::report::{Export, Text};
    use crate::result::cluster::{RankRow, ReadOtherHost};
    use crate::testdata;

    #[test]
    fn snapshot_four_ranks_on_two_hosts() {
        insta::assert_snapshot!(Text.render(&testdata::mpi_result()));
    }

    #[test]
    fn a_run_on_one_host_says_nothing_of_ranks() {
        let r = testdata::run(None, "2024-03-01T10:00:00Z", &[20.0], &[10.0]);
        let mut out = String::new();
        ranks_block(&mut out, &r);
        assert!(out.is_empty());
        assert!(!Text.render(&r).contains("ranks"));
    }

    #[test]
    fn ninety_nine_ranks_with_long_host_names_keep_to_80_columns() {
        let mut r = testdata::mpi_result();
        let m = r.mpi.as_mut().unwrap();
        let template = m.ranks[3].clone();
        m.ranks = (0..99)
            .map(|i| RankRow {
                rank: i,
                host: format!("compute-node-with-a-long-name-{i:02}.cluster.example"),
                start_skew_ns: 1_234_567_890 + i as u64,
                end_skew_ns: 9_876_543_210,
                ..template.clone()
            })
            .collect();
        m.size = 99;
        let text = Text.render(&r);
        for line in text.lines() {
            assert!(columns(line) <= 80, "{} columns: {line}", columns(line));
        }
        assert!(text.contains("compute-node-wi… "), "{text}");
        assert!(text.contains("99 ranks on 99 hosts"), "{text}");
    }

    #[test]
    fn stonewall_shared_file_and_a_refused_read_are_said() {
        let mut r = testdata::mpi_result();
        let m = r.mpi.as_mut().unwrap();
        m.stonewall = true;
        m.shared_file = true;
        m.read_other_host = Some(ReadOtherHost {
            done: false,
            why_not: Some(NoPartner::Legacy("every rank is on one host".into())),
            read_from: vec![0, 1, 2, 3],
        });
        let text = Text.render(&r);
        assert!(
            text.contains("every rank stopped when the first finished"),
            "{text}"
        );
        assert!(text.contains("rank r at r × span"), "{text}");
        assert!(
            text.contains("NOT from another host: every rank is on one host"),
            "{text}"
        );
    }

    #[test]
    fn a_single_test_is_one_line() {
        let mut r = testdata::mpi_result();
        r.tests.truncate(1);
        r.mpi.as_mut().unwrap().tests.truncate(1);
        let text = Text.render(&r);
        let line = text.lines().find(|l| l.starts_with("ranks")).unwrap();
        assert!(
            line.starts_with("ranks       4 ranks on 2 hosts · aggregate "),
            "{line}"
        );
        assert!(!text.contains("each test's median"), "{text}");
    }
}
