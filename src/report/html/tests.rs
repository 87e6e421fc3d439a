use super::*;
use crate::testdata;

fn sample() -> ReportInput {
    let id = testdata::sd_identity("SD08G", 3, "SD", "0x6051fd1c", "2008-12");
    let id_key = id.key.clone();
    let run = testdata::run(
        Some(id),
        "2024-03-01T10:00:00Z",
        &[20.1, 19.9, 20.2],
        &[12.2, 17.1, 15.0],
    );
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
