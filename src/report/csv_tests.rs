//! The CSV export's promises: its snapshot, the rank columns, no text
//! cell that runs as a formula, numbers that stay numbers, and enough
//! significant figures.

use super::*;
use crate::report::Json;
use crate::testdata;

#[test]
fn snapshot_csv_export() {
    let mut r = testdata::sd_card_run();
    r.tests[1].name = "SEQ \"1MiB\", Q8".into();
    insta::assert_snapshot!(Csv.render(&r));
}

#[test]
fn snapshot_csv_of_four_ranks() {
    let csv = Csv.render(&testdata::mpi_result());
    let rows = records(&csv);
    assert_eq!(&rows[0][21..], ["rank", "host"], "{csv}");
    assert!(rows.iter().all(|r| r.len() == rows[0].len()), "{csv}");
    // The header, 2 merged rows, then 2 tests × 4 ranks.
    assert_eq!(rows.len(), 1 + 2 + 8, "{csv}");
    assert_eq!(&rows[1][21..], ["", ""]);
    assert_eq!(&rows[3][21..], ["0", "node-a"]);
    assert_eq!(&rows[10][21..], ["3", "node-b"]);
    insta::assert_snapshot!(csv);
}

#[test]
fn a_run_on_one_host_beside_many_gets_the_rank_columns_empty() {
    let one = testdata::run(None, "2024-03-01T10:00:00Z", &[20.1], &[12.2]);
    assert!(!Csv.render(&one).contains("rank"));
    let rows = records(&Csv::rows(&one, true));
    assert_eq!(&rows[0][21..], ["rank", "host"]);
    assert!(rows.iter().all(|r| r.len() == 23));
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
        r.tests[1].skipped = Some(crate::result::SkipReason::Stored(hostile.to_string()));
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
        // The text is kept (its control characters escaped), behind
        // its quote.
        assert_eq!(
            rows[1][4].trim_start_matches('\''),
            escape::cell(hostile, NAME_COLUMNS)
        );
        assert!(!csv.contains('\r'), "{csv:?}");
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

#[test]
fn a_formula_behind_blanks_or_invisible_characters_is_neutralised() {
    for lead in [
        " ",
        "  ",
        "\u{a0}",
        "\u{1680}",
        "\u{2000}",
        "\u{2007}",
        "\u{200a}",
        "\u{200b}",
        "\u{200c}",
        "\u{200d}",
        "\u{202f}",
        "\u{205f}",
        "\u{2060}",
        "\u{3000}",
        "\u{feff}",
        "\n",
        " \u{feff}\u{3000}",
    ] {
        for trigger in ["=", "+", "-", "@", "\t"] {
            let text = format!("{lead}{trigger}HYPERLINK(\"x\")");
            let read = &cells(&field(&text))[0];
            assert!(read.starts_with('\''), "{text:?} came out as {read:?}");
        }
    }
    // Blanks before a number make it text to a spreadsheet: quoted too.
    assert!(field(" -1.5").starts_with("\"'"));
    // Text that merely holds such characters is left alone.
    assert_eq!(field("a\u{3000}=b"), "a\u{3000}=b");
    // A control character is shown escaped, so it starts nothing.
    assert_eq!(field("\u{2028}=1"), "\\u{2028}=1");
    assert_eq!(field("\r=1"), "\\r=1");
}

#[test]
fn a_long_cell_is_cut_and_bounded() {
    let long = format!("={}", "x".repeat(4 << 20));
    let cell = field(&long);
    assert!(cell.chars().count() <= NAME_COLUMNS + 3, "{}", cell.len());
    assert!(cell.starts_with("\"'=") && cell.ends_with("…\""));
}

proptest::proptest! {
    #[test]
    fn any_text_is_one_cell_that_runs_nothing(
        lead in "[=+\\-@\t\r0-9a \u{a0}\u{200b}\u{3000}\u{feff}]{0,3}",
        rest in "[=+\\-@\t\r\n,\"'.eE0-9a |<>\u{1b}\u{202e}]{0,10}"
    ) {
        let text = format!("{lead}{rest}");
        let shown = escape::cell(&text, NAME_COLUMNS);
        let cell = field(&text);
        let read = cells(&cell);
        proptest::prop_assert_eq!(read.len(), 1, "{:?} split into {:?}", text, read);
        let read = &read[0];
        match is_number(&text) {
            true => proptest::prop_assert_eq!(read, &text),
            false => {
                proptest::prop_assert!(!starts_formula(read), "{:?}", read);
                // The text itself, or behind the neutralising quote,
                // which every cell that could start a formula has.
                match starts_formula(&shown) {
                    true => proptest::prop_assert_eq!(read, &format!("'{shown}")),
                    false => proptest::prop_assert_eq!(read, &shown),
                }
            }
        }
        proptest::prop_assert!(!read.contains(['\r', '\u{1b}', '\u{202e}']), "{:?}", read);
    }

    #[test]
    fn no_text_panics_and_numbers_stay_numbers(text in "\\PC{0,30}", n in -1e9f64..1e9) {
        let cell = field(&text);
        if starts_formula(&escape::cell(&text, NAME_COLUMNS)) && !is_number(&text) {
            proptest::prop_assert!(cell.starts_with("\"'"), "{:?}", cell);
        }
        let figure = format!("{n}");
        proptest::prop_assert_eq!(field(&figure), figure.clone());
        proptest::prop_assert_eq!(num(Some(n)).parse::<f64>().is_ok(), true);
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

#[test]
fn a_small_figure_keeps_its_significant_figures() {
    assert_eq!(num(Some(0.00973)), "0.00973");
    assert_eq!(num(Some(39.698_486_328)), "39.6985");
    assert_eq!(num(Some(20.1)), "20.1");
    assert_eq!(num(Some(15.0)), "15");
    // Never fewer decimals than releases before schema 5 wrote.
    assert_eq!(num(Some(4_940.710_654)), "4940.711");
    assert_eq!(num(Some(1_234_567.8)), "1234567.8");
    assert_eq!(num(Some(0.0)), "0");
    assert_eq!(num(None), "");
}
