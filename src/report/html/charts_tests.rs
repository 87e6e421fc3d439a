//! The report's charts as a browser reads them: parsed as XML, their texts
//! and their tooltips.

use super::*;

fn summary(p50: u64, max: u64) -> LatencySummary {
    LatencySummary {
        p50_ns: p50,
        p90_ns: p50 * 2,
        p99_ns: p50 * 4,
        p99_9_ns: p50 * 8,
        p99_99_ns: p50 * 9,
        max_ns: max,
        count: 1,
        min_ns: p50,
        mean_ns: p50 as f64,
        stddev_ns: 0.0,
    }
}

/// The texts of a chart, trimmed, in document order.
fn texts_of(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{e}: {svg}"));
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .map(|t| t.trim().to_string())
        .collect()
}

/// The tooltips of a chart.
fn titles(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("title"))
        .filter_map(|n| n.text())
        .map(str::to_string)
        .collect()
}

/// The smallest font size of a chart's text, in its own units.
fn smallest_font(svg: &str) -> f64 {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.attribute("font-size")?.parse::<f64>().ok())
        .fold(f64::INFINITY, f64::min)
}

#[test]
fn latency_names_every_row_and_ticks_in_short_form() {
    let rows: Vec<(String, LatencySummary)> = ["read", "write", "randread", "randwrite"]
        .iter()
        .map(|rw| (format!("RND 4KiB Q32 {rw}"), summary(80_000, 900_000_000)))
        .collect();
    let svg = latency(&rows);
    let texts = texts_of(&svg);
    for (name, _) in &rows {
        assert!(texts.contains(name), "{name}: {texts:?}");
    }
    for q in ["p50", "p90", "p99", "p99.9", "max"] {
        assert!(texts.iter().any(|t| t == q), "legend {q}");
    }
    // 80 µs to 900 ms: the middle is milliseconds, so are the ticks.
    for tick in [
        "0.01",
        "0.1",
        "1",
        "10",
        "100",
        "1k",
        "latency, ms (log scale)",
    ] {
        assert!(texts.iter().any(|t| t == tick), "{tick} missing: {texts:?}");
    }
    assert!(
        texts
            .iter()
            .all(|t| !t.ends_with(".0") && !t.contains("00000.0"))
    );
    let tips = titles(&svg);
    assert_eq!(tips.len(), 4 * 5, "a tooltip on every piece of every bar");
    assert!(tips[0].contains("p50 80.0 µs, p90 160 µs"), "{tips:?}");
    assert!(svg.contains("viewBox=\"0 0 640 "), "{svg}");
    // 20.2 units of 640: 11.4 px when the chart is 361 px wide.
    assert!(smallest_font(&svg) * 361.0 / 640.0 >= 11.0);
}

#[test]
fn latency_axes_take_the_unit_of_their_middle() {
    assert_eq!(latency_axis_unit(20e3, 900e3), (1e3, "µs"));
    assert_eq!(latency_axis_unit(80e3, 900e6), (1e6, "ms"));
    assert_eq!(latency_axis_unit(50e6, 30e9), (1e9, "s"));
    assert_eq!(latency_axis_unit(0.0, 0.0), (1e3, "µs"));
}

#[test]
fn history_draws_one_test_with_both_directions() {
    let points: Vec<HistoryPoint> = [(1, "read", 20.0), (1, "write", 8.0), (2, "read", 21.0)]
        .iter()
        .map(|&(run_id, rw, median)| HistoryPoint {
            device: "k".into(),
            run_id,
            started_at: "2026".into(),
            test: "SEQ 1MiB Q8".into(),
            rw: rw.into(),
            median,
            min: median - 1.0,
            max: median + 1.0,
        })
        .collect();
    let svg = history("SEQ 1MiB Q8", &points);
    let texts = texts_of(&svg);
    assert_eq!(texts[0], "SEQ 1MiB Q8", "the title comes first");
    for t in ["read", "write", "#1", "#2", "MB/s", "run, oldest to newest"] {
        assert!(texts.iter().any(|x| x == t), "{t}: {texts:?}");
    }
    assert!(texts.iter().all(|t| !t.ends_with(".0")), "{texts:?}");
    // One line, the reads'; the write's one point is a square.
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let lines = doc
        .descendants()
        .filter(|n| n.has_tag_name("polyline") && n.attribute("stroke") == Some("#0072B2"))
        .filter(|n| {
            // Neither a whisker (upright) nor the legend's mark (level).
            let p: Vec<Vec<&str>> = n
                .attribute("points")
                .unwrap()
                .split_whitespace()
                .map(|xy| xy.split(',').collect())
                .collect();
            p.len() == 2 && p[0][0] != p[1][0] && p[0][1] != p[1][1]
        })
        .count();
    assert_eq!(lines, 1, "one line through the reads");
    let tips = titles(&svg);
    assert_eq!(tips.len(), 3, "{tips:?}");
    assert!(
        tips.contains(&"run 1 (2026): write 8.00 MB/s (7.00–9.00)".to_string()),
        "{tips:?}"
    );
}

#[test]
fn bars_and_ranks_label_every_row_with_its_figure() {
    let svg = bars(
        &[("4 KiB".into(), 120.0), ("1 MiB".into(), 2500.0)],
        "time per file, µs (log scale)",
        "time per file",
        true,
    );
    let texts = texts_of(&svg);
    for t in [
        "time per file",
        "4 KiB: 120",
        "1 MiB: 2.5k",
        "100",
        "1k",
        "10k",
    ] {
        assert!(texts.iter().any(|x| x == t), "{t}: {texts:?}");
    }
    let ranks = [("a", 100.0, false), ("b", 40.0, true)].map(|(h, m, s)| RankBar {
        label: format!("{h} · rank 0"),
        mb_per_s: m,
        straggler: s,
    });
    let svg = rank_bars(&ranks, 70.0);
    let texts = texts_of(&svg);
    assert!(
        texts
            .iter()
            .any(|t| t == "b · rank 0: 40.0 MB/s (straggler)"),
        "{texts:?}"
    );
    assert!(texts.iter().any(|t| t == "median rank"), "{texts:?}");
    assert_eq!(titles(&svg).len(), 2);
}

#[test]
fn a_line_has_its_series_and_dots_with_tooltips() {
    let points: Vec<(f64, f64)> = (0..10).map(|i| (f64::from(i) * 16.0, 20.0)).collect();
    let svg = line(&points, "MiB written", "MB/s (10^6 B/s)", "write speed");
    let texts = texts_of(&svg);
    for t in ["write speed", "MiB written", "MB/s (10^6 B/s)"] {
        assert!(texts.iter().any(|x| x == t), "{t}: {texts:?}");
    }
    assert_eq!(titles(&svg).len(), 10);
    assert!(titles(&svg).contains(&"16: 20".to_string()));
}
