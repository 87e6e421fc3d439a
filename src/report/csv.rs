//! CSV: one line per test, or for a curve one line per measured point,
//! for spreadsheets and scripts; units are in the column names.
//!
//! Text cells carry what a run or an imported fio file said (test names,
//! device labels, paths), and a spreadsheet runs a cell that begins with
//! `=`, `+`, `-` or `@` as a formula. So every text cell is neutralised as
//! OWASP's CSV-injection rule says (see [`field`]); figures are written by
//! [`num`] and stay numbers.

use super::Export;
use crate::result::RunResult;
use std::fmt::Write;

pub struct Csv;

const HEADER: &str = "started_at,device,device_key,command,test,rw,block_size,queue_depth,threads,repetitions,mb_per_s_median,mb_per_s_min,mb_per_s_max,iops_median,skipped";

/// A text cell: quoted when it holds a comma, quote or line break (RFC
/// 4180), and, when a spreadsheet would read it as a formula, prefixed with
/// a single quote and quoted (OWASP), unless it is a plain number.
fn field(v: &str) -> String {
    let formula = v.starts_with(['=', '+', '-', '@', '\t', '\r']) && !is_number(v);
    if formula {
        format!("\"'{}\"", v.replace('"', "\"\""))
    } else if v.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", v.replace('"', "\"\""))
    } else {
        v.to_string()
    }
}

/// A decimal number such as `-3.2` or `-1e-3`, which a spreadsheet reads
/// as a value, never a formula (`-inf`, `-nan` and `-1+2` are not).
fn is_number(v: &str) -> bool {
    v.bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'))
        && v.bytes().any(|b| b.is_ascii_digit())
        && v.parse::<f64>().is_ok_and(f64::is_finite)
}

fn num(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.3}")).unwrap_or_default()
}

impl Export for Csv {
    fn render(&self, r: &RunResult) -> String {
        if r.payload.curve().is_some() {
            return curve_rows(r);
        }
        let (label, key) = r
            .device_identity
            .as_ref()
            .map_or((String::new(), String::new()), |i| {
                (i.label.clone(), i.key.clone())
            });
        let mut out = format!("{HEADER}\n");
        for t in &r.tests {
            let w = &t.workload;
            let cells = [
                field(&r.started_at),
                field(&label),
                field(&key),
                field(&r.command()),
                field(&t.name),
                field(w.rw.as_str()),
                w.block_size.to_string(),
                w.queue_depth.to_string(),
                w.threads.to_string(),
                t.mb_per_s.map_or(0, |s| s.count).to_string(),
                num(t.mb_per_s.map(|s| s.median)),
                num(t.mb_per_s.map(|s| s.min)),
                num(t.mb_per_s.map(|s| s.max)),
                num(t.iops.map(|s| s.median)),
                field(t.skipped.as_deref().unwrap_or("")),
            ];
            out.push_str(&cells.join(","));
            out.push('\n');
        }
        out
    }
}

fn curve_rows(r: &RunResult) -> String {
    let mut out = String::from(
        "target,pattern,size_bytes,buffered,reference,mb_per_s_median,mb_per_s_min,mb_per_s_max,iops_median,p50_us,p99_us,model_ratio\n",
    );
    let Some(curve) = r.payload.curve() else {
        return out;
    };
    for s in &curve.series {
        // The unaligned section follows the series; `buffered` and
        // `reference` tell its rows apart.
        for p in s.points.iter().chain(&s.unaligned) {
            let (med, min, max) = p.mb_per_s.map_or((None, None, None), |m| {
                (Some(m.median), Some(m.min), Some(m.max))
            });
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{},{}",
                field(&s.target),
                s.pattern.name(),
                p.size,
                p.buffered,
                p.reference,
                num(med),
                num(min),
                num(max),
                num(p.iops.map(|i| i.median)),
                num(p.p50_ns.map(|n| n as f64 / 1e3)),
                num(p.p99_ns.map(|n| n as f64 / 1e3)),
                num(p.model_ratio)
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Json;
    use crate::testdata;

    #[test]
    fn snapshot_csv_export() {
        let id = testdata::sd_identity("SD08G", 3, "SD", "0x6051fd1c", "2008-12");
        let mut r = testdata::run(
            Some(id),
            "2024-03-01T10:00:00Z",
            &[20.1, 19.9, 20.2],
            &[12.2, 17.1, 15.0],
        );
        r.tests[1].name = "SEQ \"1MiB\", Q8".into();
        insta::assert_snapshot!(Csv.render(&r));
    }

    /// Every way a text cell can start a formula, in every text column.
    const HOSTILE: [&str; 9] = [
        "=cmd|' /C calc'!A0",
        "+1+cmd",
        "-2+3",
        "@SUM(A1)",
        "\tx",
        "\rx",
        "<script>alert(1)</script>",
        "a|b",
        "line\nbreak",
    ];

    /// The cells of one CSV line, unquoted (RFC 4180), for checking what a
    /// spreadsheet would see.
    fn cells(line: &str) -> Vec<String> {
        let mut out = vec![String::new()];
        let (mut quoted, mut chars) = (false, line.chars().peekable());
        while let Some(c) = chars.next() {
            match (c, quoted) {
                ('"', true) if chars.peek() == Some(&'"') => {
                    chars.next();
                    out.last_mut().unwrap().push('"');
                }
                ('"', _) => quoted = !quoted,
                (',', false) => out.push(String::new()),
                (c, _) => out.last_mut().unwrap().push(c),
            }
        }
        out
    }

    /// Records as a CSV reader splits them: line breaks inside quotes stay.
    fn records(csv: &str) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        let mut record = String::new();
        for line in csv.split_inclusive('\n') {
            record.push_str(line);
            if record.matches('"').count().is_multiple_of(2) {
                out.push(cells(record.trim_end_matches('\n')));
                record.clear();
            }
        }
        out
    }

    #[test]
    fn no_text_cell_starts_a_formula() {
        for hostile in HOSTILE {
            let mut id = testdata::sd_identity("SD08G", 3, "SD", "0x6051fd1c", "2008-12");
            id.label = hostile.to_string();
            id.key = hostile.to_string();
            let mut r = testdata::run(Some(id), hostile, &[20.1], &[12.2]);
            r.tests[0].name = hostile.to_string();
            r.tests[1].skipped = Some(hostile.to_string());
            let csv = Csv.render(&r);
            let rows = records(&csv);
            assert_eq!(rows.len(), 3, "{csv:?}");
            for row in &rows {
                assert_eq!(row.len(), rows[0].len(), "{hostile:?}: {csv:?}");
                for cell in row {
                    assert!(
                        !cell.starts_with(['=', '+', '-', '@', '\t', '\r']),
                        "{hostile:?} came out as the cell {cell:?}"
                    );
                }
            }
            // The text is kept, behind its quote.
            assert_eq!(rows[1][4].trim_start_matches('\''), hostile);
        }
    }

    #[test]
    fn numbers_stay_numbers() {
        for n in ["-3.2", "-1e-3", "+7", "0", "-0.5E+2"] {
            assert_eq!(field(n), n);
        }
        for not_number in ["-inf", "-nan", "-1+2", "-", "+", "-e", "--1"] {
            assert_eq!(field(not_number), format!("\"'{not_number}\""));
        }
        assert_eq!(field("=1"), "\"'=1\"");
        assert_eq!(field("=\"x\",1"), "\"'=\"\"x\"\",1\"");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("plain"), "plain");
    }

    proptest::proptest! {
        #[test]
        fn any_text_is_one_cell_that_runs_nothing(
            lead in "[=+\\-@\t\r0-9a ]?", rest in "[=+\\-@\t\r\n,\"'.eE0-9a |<>]{0,10}"
        ) {
            let text = format!("{lead}{rest}");
            let cell = field(&text);
            let read = cells(&cell);
            proptest::prop_assert_eq!(read.len(), 1, "{:?} split into {:?}", text, read);
            let read = &read[0];
            match is_number(&text) {
                true => proptest::prop_assert_eq!(read, &text),
                false => {
                    proptest::prop_assert!(!read.starts_with(['=', '+', '-', '@', '\t', '\r']), "{:?}", read);
                    // The text itself, or behind the neutralising quote.
                    proptest::prop_assert!(*read == text || *read == format!("'{text}"), "{:?}", read);
                }
            }
        }
    }

    #[test]
    fn json_export_reads_back() {
        let id = testdata::sd_identity("SD08G", 3, "SD", "0x6051fd1c", "2008-12");
        let r = testdata::run(Some(id), "2024-03-01T10:00:00Z", &[20.1], &[12.2]);
        let back: RunResult = serde_json::from_str(&Json.render(&r)).unwrap();
        assert_eq!(Csv.render(&back), Csv.render(&r));
        assert_eq!(back.device_identity, r.device_identity);
    }
}
