//! A run on many hosts in the report: each test's figures across the
//! ranks, a chart of MB/s per rank with the median rank and the
//! stragglers, the stragglers named in a sentence, and every rank's row.
//!
//! Why a chart of ranks: the merged figure is what the job achieved, but
//! what a cluster's owner acts on is the node that held it back; a bar per
//! rank against the median shows it at a glance (stragglers are
//! [`ranks::stragglers`], the same rule as the text table). As everywhere
//! in the report, the chart sits beside a table of the same numbers.

use super::charts::{self, RankBar};
use super::esc;
use crate::analysis::ranks;
use crate::result::RunResult;
use crate::result::cluster::MpiSection;
use crate::units::{format_latency, format_mbps};
use std::fmt::Write;

/// The ranks' section of one run; nothing for a run on one host.
pub fn section(out: &mut String, run: &RunResult) {
    let Some(m) = &run.mpi else {
        return;
    };
    let _ = writeln!(
        out,
        "<section data-section=\"ranks\"><h4>Ranks: {}</h4>",
        esc(&ranks::shape_of(m))
    );
    tests_table(out, run, m);
    chart(out, m);
    ranks_table(out, m);
    let _ = writeln!(out, "</section>");
}

/// Each test's aggregate, first-done and sum-of-ranks MB/s and its skew.
fn tests_table(out: &mut String, run: &RunResult, m: &MpiSection) {
    let tests = ranks::test_figures(run, m);
    let _ = writeln!(
        out,
        "<p>Each test's median repetition. Aggregate: total bytes over first start to last end, on rank 0's clock; first done: when the first rank finished; sum of ranks: each rank's own rate, added.</p>\n<div class=\"scroll\"><table><thead><tr><th>test</th><th>aggregate MB/s</th><th>first done MB/s</th><th>sum of ranks MB/s</th><th>start skew</th><th>end skew</th></tr></thead><tbody>"
    );
    let whole = m.whole.as_ref().filter(|_| tests.is_empty());
    let rows = tests
        .iter()
        .map(|(t, _, rep)| (format!("{} {}", t.name, t.workload.rw.as_str()), *rep))
        .chain(whole.map(|w| (run.command(), w)));
    for (name, rep) in rows {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&name),
            format_mbps(rep.aggregate_mb_per_s),
            format_mbps(rep.stonewall_mb_per_s),
            format_mbps(rep.sum_of_rank_mb_per_s),
            format_latency(rep.start_skew_ns() as f64),
            format_latency(rep.end_skew_ns() as f64)
        );
    }
    let _ = writeln!(out, "</tbody></table></div>");
}

/// The chart, its caption, and the stragglers in a sentence.
fn chart(out: &mut String, m: &MpiSection) {
    let Some(median) = ranks::median_rate(m) else {
        return;
    };
    let slow: Vec<u32> = ranks::stragglers(m).iter().map(|r| r.rank).collect();
    let mut rows: Vec<_> = m.ranks.iter().collect();
    rows.sort_by_key(|r| r.rank);
    let bars: Vec<RankBar> = rows
        .iter()
        .map(|r| RankBar {
            label: format!("{} · rank {}", r.host, r.rank),
            mb_per_s: r.mb_per_s,
            straggler: slow.contains(&r.rank),
        })
        .collect();
    let share = ranks::STRAGGLER_SHARE * 100.0;
    let _ = writeln!(
        out,
        "<figure data-chart=\"ranks\">{}<figcaption>MB/s of each rank over the whole command; the dark line is the median rank ({} MB/s); stragglers, below {share:.0}% of it, in the second colour.</figcaption></figure>",
        charts::rank_bars(&bars, median),
        format_mbps(median)
    );
    let sentence = match slow.is_empty() {
        true => format!("No straggler: every rank reached {share:.0}% of the median rank's MB/s."),
        false => {
            let named: Vec<String> = rows
                .iter()
                .filter(|r| slow.contains(&r.rank))
                .map(|r| {
                    format!(
                        "rank {} on {} ({} MB/s, {:.0}% of the median)",
                        r.rank,
                        r.host,
                        format_mbps(r.mb_per_s),
                        r.mb_per_s / median * 100.0
                    )
                })
                .collect();
            format!(
                "Straggler{}: {}.",
                if named.len() == 1 { "" } else { "s" },
                named.join("; ")
            )
        }
    };
    let class = if slow.is_empty() {
        ""
    } else {
        " class=\"warn\""
    };
    let _ = writeln!(
        out,
        "<p data-section=\"stragglers\"{class}>{}</p>",
        esc(&sentence)
    );
}

/// One row per rank: where it ran, its clock, its figures.
fn ranks_table(out: &mut String, m: &MpiSection) {
    let mut rows: Vec<_> = m.ranks.iter().collect();
    rows.sort_by_key(|r| r.rank);
    let _ = writeln!(
        out,
        "<div class=\"scroll\"><table data-table=\"ranks\"><thead><tr><th>host</th><th>rank</th><th>target</th><th>MB/s</th><th>p50</th><th>p99</th><th>start skew</th><th>end skew</th><th>clock offset ± bound</th></tr></thead><tbody>"
    );
    // Each time in the unit that suits it alone.
    let time = |ns: Option<u64>| ns.map_or("-".into(), |ns| format_latency(ns as f64));
    for r in rows {
        let _ = writeln!(
            out,
            "<tr data-rank=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} s ± {}</td></tr>",
            r.rank,
            esc(&r.host),
            r.rank,
            esc(&r.target),
            format_mbps(r.mb_per_s),
            time(r.p50_ns),
            time(r.p99_ns),
            time(Some(r.start_skew_ns)),
            time(Some(r.end_skew_ns)),
            crate::units::three_figures(r.clock_offset_ns as f64 / 1e9),
            crate::units::format_latency(r.clock_offset_bound_ns as f64)
        );
    }
    let _ = writeln!(out, "</tbody></table></div>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;

    fn section_of(run: &RunResult) -> String {
        let mut out = String::new();
        section(&mut out, run);
        out
    }

    #[test]
    fn the_chart_has_one_bar_per_rank_and_names_the_straggler() {
        let html = section_of(&testdata::mpi_result());
        // The section is well-formed XML, its chart a valid SVG document.
        let doc = roxmltree::Document::parse(&html).expect("the section parses");
        let svg = doc
            .descendants()
            .find(|n| n.has_tag_name("svg"))
            .expect("a chart");
        let bars: Vec<String> = svg
            .descendants()
            .filter(|n| n.has_tag_name("rect"))
            .filter_map(|n| n.children().find(|c| c.has_tag_name("title")))
            .filter_map(|t| t.text().map(str::to_string))
            .collect();
        assert_eq!(bars.len(), 4, "{bars:?}");
        assert!(
            bars[0].starts_with("node-a · rank 0: 76.5 MB/s"),
            "{bars:?}"
        );
        assert!(bars[3].ends_with("(straggler)"), "{bars:?}");
        // Each tooltip lies over its bar: the drawn box at the same place.
        let place = |n: &roxmltree::Node| {
            ["x", "y", "width", "height"].map(|a| n.attribute(a).map(str::to_string))
        };
        let drawn: Vec<_> = svg
            .descendants()
            .filter(|n| n.has_tag_name("rect") && n.first_element_child().is_none())
            .collect();
        let fills: Vec<&str> = svg
            .descendants()
            .filter(|n| n.has_tag_name("rect") && n.children().any(|c| c.has_tag_name("title")))
            .filter_map(|tip| drawn.iter().find(|d| place(d) == place(&tip)))
            .filter_map(|n| n.attribute("fill"))
            .collect();
        assert_eq!(fills[..3], [crate::report::palette::colour(0); 3]);
        assert_eq!(fills[3], crate::report::palette::colour(1));
        let said = doc
            .descendants()
            .find(|n| n.attribute("data-section") == Some("stragglers"))
            .and_then(|n| n.text())
            .unwrap();
        assert_eq!(
            said,
            "Straggler: rank 3 on node-b (48.2 MB/s, 64% of the median)."
        );
        let rows = doc
            .descendants()
            .filter(|n| n.attribute("data-rank").is_some())
            .count();
        assert_eq!(rows, 4);
        // node-b's clock, thousands of seconds off, with its bound.
        assert!(html.contains("<td>4812 s ± 18.5 µs</td>"), "{html}");
    }

    #[test]
    fn ranks_alike_have_no_straggler_and_one_host_has_no_section() {
        let mut r = testdata::mpi_result();
        for k in &mut r.mpi.as_mut().unwrap().ranks {
            k.mb_per_s = 75.0;
        }
        let html = section_of(&r);
        assert!(html.contains("No straggler"), "{html}");
        assert!(!html.contains("class=\"warn\""), "{html}");
        let one = testdata::run(None, "2024-03-01T10:00:00Z", &[20.0], &[10.0]);
        assert_eq!(section_of(&one), "");
    }

    #[test]
    fn the_whole_page_shows_the_ranks_of_a_run_on_many_hosts() {
        let page = super::super::render(&super::super::ReportInput {
            runs: vec![testdata::mpi_result()],
            history: Vec::new(),
            earlier: Vec::new(),
        });
        assert_eq!(page.matches("data-chart=\"ranks\"").count(), 1);
        assert!(
            page.contains("<h4>Ranks: 4 ranks on 2 hosts</h4>"),
            "{page}"
        );
    }
}
