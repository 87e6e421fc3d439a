use super::*;
use crate::testdata;

/// The page of `run` alone, with no history.
fn page_of(run: RunResult) -> String {
    render(&ReportInput {
        runs: vec![run],
        ..ReportInput::default()
    })
}

fn sample() -> ReportInput {
    let run = testdata::sd_card_run();
    let id_key = run.device_identity.as_ref().unwrap().key.clone();
    let history = [(1, 21.0), (2, 20.1)]
        .iter()
        .map(|&(run_id, median)| HistoryPoint {
            device: id_key.clone(),
            run_id,
            started_at: format!("2024-0{run_id}-01T10:00:00Z"),
            test: "SEQ 1MiB Q8".into(),
            rw: "read".into(),
            median,
            min: median - 0.2,
            max: median + 0.1,
        })
        .collect();
    ReportInput {
        runs: vec![run],
        history,
        earlier: Vec::new(),
    }
}

/// `name="value"` of a tag, when present.
fn attribute(tag: &str, name: &str) -> Option<String> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    let len = tag[start..].find('"')?;
    Some(format!("{name}=\"{}\"", &tag[start..start + len]))
}

/// The page with text and attribute values dropped: tags, ids, classes and
/// data attributes only, so a snapshot pins the structure, not the numbers.
fn skeleton(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(start) = rest.find('<') {
        let end = rest[start..]
            .find('>')
            .map_or(rest.len(), |e| start + e + 1);
        let tag = &rest[start..end];
        rest = &rest[end..];
        let name: String = tag
            .trim_start_matches(['<', '/'])
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '!')
            .collect();
        if tag.starts_with("<svg") {
            // Charts are plotters' business; keep one marker for each.
            out.push_str("<svg/>\n");
            if let Some(close) = rest.find("</svg>") {
                rest = &rest[close + 6..];
            }
            continue;
        }
        let keep: Vec<String> = ["class", "data-chart", "data-command"]
            .iter()
            .filter_map(|a| attribute(tag, a))
            .collect();
        let close = if tag.starts_with("</") { "/" } else { "" };
        out.push_str(&format!(
            "<{close}{name}{}{}>\n",
            if keep.is_empty() { "" } else { " " },
            keep.join(" ")
        ));
    }
    out
}

#[test]
fn snapshot_structure() {
    insta::assert_snapshot!(skeleton(&render(&sample())));
}

#[test]
fn self_contained_and_escaped() {
    let mut input = sample();
    input.runs[0].target.path = "/dev/<sdx>&\"".into();
    let html = render(&input);
    assert!(html.contains("/dev/&lt;sdx&gt;&amp;&quot;"));
    for forbidden in ["<script", "@import", "url(", "<link", "<img"] {
        assert!(!html.contains(forbidden), "{forbidden} found");
    }
    let links = html.matches("http").count();
    let svg_namespaces = html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count();
    assert_eq!(
        links, svg_namespaces,
        "the only URLs are SVG namespace names"
    );
}

#[test]
fn headline_figures_carry_their_test_names() {
    let html = render(&sample());
    assert!(
        html.contains("data-figure=\"SEQ 1MiB Q8 read\">20.1"),
        "{html}"
    );
    assert!(html.contains("data-figure=\"SEQ 1MiB Q8 write\">15.0"));
    assert!(html.contains("data-chart=\"history\""));
    assert!(html.contains("units: MB/s = 10^6 bytes/s"));
}

/// A stored flash run of `report` on the sample's card.
fn flash_run(report: crate::result::flash::FlashReport) -> RunResult {
    let mut run = sample().runs.remove(0);
    run.tests.clear();
    run.payload = crate::result::Payload::Flash {
        config: crate::result::config::Recorded::Stored(serde_json::json!({})),
        flash: report,
    };
    run
}

fn fake_card() -> RunResult {
    use crate::result::flash::*;
    let usable = Finding::sure(
        Figure::UsableCapacity {
            bytes: 2 << 30,
            at_most_bytes: None,
        },
        Confidence::High,
    );
    let offsets = (0..40u64).map(|i| {
        vec![
            Cell::Bytes((2 << 30) + i * 29_400_000),
            Cell::Name("Corrupted".into()),
        ]
    });
    flash_run(FlashReport {
        test: crate::vocab::options::FlashTest::Capacity,
        outcome: Outcome::Fake {
            claimed_bytes: 8 << 30,
            real_bytes: 2 << 30,
            at_most_bytes: None,
            found_by: FoundBy::Aliased,
            rounds: 1,
            confidence: Confidence::High,
        },
        findings: vec![usable],
        table: FlashTable::Typed(TypedTable {
            columns: vec![Column::Offset, Column::Verdict],
            rows: offsets.collect(),
        }),
    })
}

fn failed_class() -> RunResult {
    use crate::result::flash::*;
    let check = |need: NeedKind, measured: f64, limit: f64, status: Status| ClassCheck {
        class: "C10".into(),
        need,
        measured,
        limit,
        status,
        confidence: Confidence::High,
        reason: None,
    };
    let requirement = |c: &ClassCheck| Finding {
        figure: Figure::Requirement {
            class: c.class.clone(),
            need: c.need,
            measured: c.measured,
            limit: c.limit,
        },
        confidence: Some(c.confidence),
        status: Some(c.status),
        reason: None,
    };
    let pw = check(NeedKind::SeqWrite, 9.96, 10.0, Status::Fail);
    let fat = check(NeedKind::FatMax, 1.8, 750.0, Status::Pass);
    let au = Finding::of(Figure::AuUsed {
        bytes: 4 << 20,
        source: AuSource::Chosen(AuFrom::Timing),
    });
    flash_run(FlashReport {
        test: crate::vocab::options::FlashTest::Class,
        outcome: Outcome::Classes {
            claim: ClaimSource::Given,
            claimed: vec!["C10".into()],
            families: vec![FamilyMet {
                family: Family::Speed,
                met: Vec::new(),
                highest: None,
            }],
            untold: Vec::new(),
            binding: Some(pw.clone()),
            weakest: None,
            host: Some(Box::new(crate::probe::bus::simulated(Some(12.5)))),
        },
        findings: vec![requirement(&pw), requirement(&fat), au],
        table: FlashTable::Typed(TypedTable {
            columns: vec![Column::Written, Column::AuMbS],
            rows: vec![vec![Cell::Bytes(4 << 20), Cell::MbS(9.96)]],
        }),
    })
}

/// The part of `html` from `marker` to the end of its section.
fn part<'a>(html: &'a str, marker: &str, end: &str) -> &'a str {
    let from = &html[html.find(marker).unwrap_or_else(|| panic!("{marker}"))..];
    &from[..from.find(end).unwrap()]
}

#[test]
fn a_fake_card_leads_the_summary_its_card_and_its_run_row() {
    let html = page_of(fake_card());
    let fake = "<span class=\"badge fail\" data-verdict=\"FAKE\">FAKE</span> claims 8 GiB, really holds 2 GiB";
    let summary = part(&html, "data-section=\"summary\"", "</section>");
    assert!(summary.contains(fake), "{summary}");
    assert!(!summary.contains("none yet"), "{summary}");
    assert!(summary.contains("<tr data-device=") && summary.contains("class=\"failed\""));
    let card = part(&html, "<dl class=\"card\">", "</dl>");
    assert!(card.contains(fake), "{card}");
    let row = part(&html, "<tr data-run=", "</tr>");
    assert!(row.contains(fake), "{row}");
    assert!(!row.contains("see the details"), "{row}");
    assert!(row.contains("data-verdict=\"FAILED\">FAILED</span> verdict: a fake card"));
    // The analysis is HTML, not pasted text: a findings table, and the 40
    // probes that failed in a folded, scrolling table.
    let flash = part(&html, "<section data-section=\"flash\">", "</section>");
    assert!(!flash.contains("<pre"), "{flash}");
    assert!(flash.contains("<table class=\"stack findings\">"));
    assert!(flash.contains("<details class=\"raw\"><summary>The raw table (40 rows)"));
    assert_eq!(flash.matches("<td>Corrupted</td>").count(), 40);
    assert!(flash.contains("<div class=\"scroll\"><table class=\"raw\">"));
}

#[test]
fn a_failed_class_names_the_requirement_in_its_units() {
    let html = page_of(failed_class());
    let summary = part(&html, "data-section=\"summary\"", "</section>");
    assert!(
        summary.contains(
            "<span class=\"badge fail\" data-verdict=\"FAIL\">FAIL</span> C10: Pw 9.96 MB/s, needs ≥ 10.0 MB/s"
        ),
        "{summary}"
    );
    assert!(
        summary.contains("data-verdict=\"AU\">AU</span> 4 MiB (detected by boundary timing)"),
        "{summary}"
    );
    let flash = part(&html, "<section data-section=\"flash\">", "</section>");
    assert!(
        flash.contains("T_FW max 1.80 ms, limit ≤ 750 ms"),
        "{flash}"
    );
    assert!(flash.contains("<details class=\"raw\" open>"), "{flash}");
    // The host the card ran on (issue 37).
    assert!(
        flash.contains("<p class=\"host-line\">Host: simulated card behind a 12.5 MB/s link, at most 12.5 MB/s, command queueing not modelled</p>"),
        "{flash}"
    );
}

#[test]
fn the_newest_verdict_of_each_kind_stands_and_failures_come_first() {
    let mut genuine = fake_card();
    if let crate::result::Payload::Flash { flash, .. } = &mut genuine.payload {
        flash.outcome = crate::result::flash::Outcome::Genuine {
            claimed_bytes: 8 << 30,
            probes: 64,
            confidence: crate::result::flash::Confidence::High,
        };
        flash.findings[0].figure = crate::result::flash::Figure::UsableCapacity {
            bytes: 8 << 30,
            at_most_bytes: None,
        };
    }
    let (fake, class) = (fake_card(), failed_class());
    let verdicts = super::flash::of_device(&[&fake, &class, &genuine]);
    let words: Vec<&str> = verdicts.iter().map(|v| v.word.as_str()).collect();
    assert_eq!(words, ["FAIL", "GENUINE", "AU"], "{verdicts:?}");
    assert_eq!(verdicts[1].text, "holds the 8 GiB it claims");
}

#[test]
fn latency_cells_carry_each_its_own_unit() {
    let mut input = sample();
    let t = &mut input.runs[0].tests[0];
    for m in &mut t.repetitions {
        m.latency = Some(crate::stats::LatencySummary {
            p50_ns: 1_630,
            p90_ns: 52_000,
            p99_ns: 1_200_000,
            p99_9_ns: 249_000_000,
            p99_99_ns: 900_000_000,
            max_ns: 1_500_000_000,
            count: 100,
            min_ns: 900,
            mean_ns: 2_000.0,
            stddev_ns: 10.0,
        });
    }
    let html = render(&input);
    assert!(
        html.contains(
            "<td>1.63 µs</td><td>52.0 µs</td><td>1.20 ms</td><td>249 ms</td><td>1.50 s</td>"
        ),
        "{html}"
    );
}
