//! Unit tests of `text`, kept beside it so the module reads as the
//! code it is.

use super::*;
use crate::testdata;

#[test]
fn unstable_figures_are_marked_in_profile_and_run_tables() {
    // Writes 12.2, 17.1 and 15.0 MB/s: a range of 33% of the median.
    let mut r = testdata::run(
        None,
        "2024-03-01T10:00:00Z",
        &[20.1, 19.9, 20.2],
        &[12.2, 17.1, 15.0],
    );
    let text = Text.render(&r);
    assert!(text.contains("~15.0"), "{text}");
    assert!(!text.contains("~20.1"), "{text}");
    assert_eq!(text.matches(UNSTABLE_LEGEND).count(), 1, "{text}");
    r = crate::testdata::as_run(r);
    let text = Text.render(&r);
    assert!(
        text.contains("median of 3: ~15.0 MB/s (12.2–17.1)"),
        "{text}"
    );
    assert!(text.contains("median of 3: 20.1 MB/s"), "{text}");
    assert_eq!(text.matches(UNSTABLE_LEGEND).count(), 1, "{text}");
    // Steady figures: no marker and no legend.
    let steady = testdata::run(None, "2024-03-01T10:00:00Z", &[20.1, 19.9], &[15.0, 15.2]);
    let text = Text.render(&steady);
    assert!(
        !text.contains(UNSTABLE_LEGEND) && !text.contains('~'),
        "{text}"
    );
}

/// A repetition's direction with the given p50 and p99 (ns).
fn direction(p50_ns: u64, p99_ns: u64) -> crate::result::DirectionResult {
    crate::result::DirectionResult {
        bytes: 64 << 20,
        ops: 16384,
        mb_per_s: 2000.0,
        iops: 494_000.0,
        latency: LatencySummary {
            count: 16384,
            min_ns: p50_ns / 2,
            mean_ns: p50_ns as f64,
            stddev_ns: 1.0,
            p50_ns,
            p90_ns: p50_ns,
            p99_ns,
            p99_9_ns: p99_ns,
            p99_99_ns: p99_ns,
            max_ns: p99_ns * 3,
        },
    }
}

/// A profile whose reads take 1.63 µs and writes 249 ms: one unit for
/// the table would print one of them unreadably.
fn fast_and_slow() -> RunResult {
    let mut r = testdata::run(None, "2024-03-01T10:00:00Z", &[20.1], &[12.2]);
    for t in &mut r.tests {
        let writes = t.workload.rw.writes();
        for m in &mut t.repetitions {
            match writes {
                true => m.write = Some(direction(249_481_900, 1_500_000_000)),
                false => m.read = Some(direction(1_630, 815_000)),
            }
        }
    }
    r
}

#[test]
fn every_latency_cell_names_its_own_unit() {
    let r = fast_and_slow();
    let text = Text.render(&r);
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("latency"))
        .collect();
    let header = table.first().copied().unwrap_or_default();
    assert!(
        header.contains("p50") && !header.contains("µs") && !header.contains("ms"),
        "{text}"
    );
    let row = table.get(2).copied().unwrap_or_default();
    for cell in ["1.63 µs", "815 µs", "249 ms", "1.50 s"] {
        assert!(row.contains(cell), "{cell} not in {row:?}\n{text}");
    }
    assert!(!text.contains("0.00163"), "{text}");
    assert!(
        text.contains("latency: each value names its unit"),
        "{text}"
    );
    // `run`'s table too: every percentile in its own unit.
    let run = Text.render(&testdata::as_run(r));
    assert!(run.contains("1.63 µs") && run.contains("4.50 s"), "{run}");
    assert!(!run.contains("p50 µs") && !run.contains("p50 ms"), "{run}");
}

/// A host name of 60 characters and a long kernel release.
fn on_a_long_named_host(mut r: RunResult) -> RunResult {
    r.host.hostname = format!("build-{}", "x".repeat(54));
    r.host.kernel = "6.11.4-301.fc41.x86_64+debug-extra-long".into();
    r
}

#[test]
fn the_first_lines_fit_80_columns_whatever_the_host_is_called() {
    let profile = on_a_long_named_host(testdata::run(
        None,
        "2024-03-01T10:00:00Z",
        &[20.1],
        &[12.2],
    ));
    let run = testdata::as_run(profile.clone());
    let ranks = on_a_long_named_host(testdata::mpi_result());
    for r in [&profile, &run, &ranks] {
        let text = Text.render(r);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            format!(
                "iocurve {} · {} · {}",
                r.iocurve_version,
                r.command(),
                r.started_at
            ),
            "{text}"
        );
        assert!(lines[1].starts_with("host        build-xxx"), "{text}");
        assert!(lines[1].contains('…'), "{text}");
        for line in &lines[..2] {
            assert!(
                table::columns(line) <= 80,
                "{} columns: {line}",
                table::columns(line)
            );
        }
        let widest = lines.iter().map(|l| table::columns(l)).max().unwrap_or(0);
        assert!(
            widest <= super::super::width::current(),
            "{widest} columns:\n{text}"
        );
        // The header printed before measuring is the start of the report.
        assert!(text.starts_with(&Text::header(r)), "{text}");
    }
    // A short name is shown whole.
    let short = testdata::run(None, "2024-03-01T10:00:00Z", &[20.1], &[12.2]);
    let text = Text.render(&short);
    let host = text.lines().nth(1).unwrap_or_default();
    assert!(
        host.starts_with("host        ") && !host.contains('…'),
        "{text}"
    );
}

#[test]
fn files_save_with_many_sizes_and_slow_calls_fits_100_columns() {
    use crate::result::apps::{
        EvictionProof, FilesSaveReport, SaveCheck, SaveDeviceIo, SavePoint, SaveTimes,
    };
    use crate::vocab::options::CopySync;
    // A FUSE-backed disk: every call synchronous and slow, seconds per
    // size, for 13 sizes from 512 B to 2 MiB.
    let file_size: u64 = 64 << 20;
    let points = (9..22)
        .map(|shift| {
            let size = 1u64 << shift;
            let calls = file_size / size;
            let times = SaveTimes {
                open_ns: 123_456,
                write_ns: 249_481_900 * (calls / 64 + 1),
                fsync_ns: 1_234_567,
                close_ns: 987,
                calls,
            };
            SavePoint {
                write_size: size,
                total_ns: times.total_ns(),
                mb_per_s: 0.00618,
                times,
                device: Some(SaveDeviceIo {
                    device: "fuse0".into(),
                    write_requests: calls * 3,
                    write_bytes: file_size * 3 + 12_345,
                    avg_request_bytes: None,
                }),
                check: SaveCheck {
                    bytes_checked: file_size,
                    bytes_wrong: 0,
                    first_wrong_offset: None,
                    eviction: EvictionProof {
                        files: 1,
                        resident_pages: 0,
                        total_pages: 1,
                        proved: true,
                        problem: None,
                    },
                },
            }
        })
        .collect();
    let mut report = FilesSaveReport {
        file_size,
        sync: CopySync::Each,
        points,
        skipped: Vec::new(),
        all_verified: true,
    };
    let widest = |r: &FilesSaveReport| {
        let mut out = String::new();
        super::super::text_files::save_table(&mut out, r);
        let widest = out.lines().map(table::columns).max().unwrap_or(0);
        (widest, out)
    };
    let (columns, out) = widest(&report);
    assert!(
        columns <= super::super::width::current(),
        "{columns} columns:\n{out}"
    );
    assert!(
        out.contains(" s ") || out.contains(" s\n") || out.contains(" ms"),
        "{out}"
    );
    // A size that read back wrong brings its column back, still fitting.
    report.points[3].check.bytes_wrong = 4096;
    report.all_verified = false;
    let (columns, out) = widest(&report);
    assert!(out.contains("4096 B WRONG"), "{out}");
    assert!(
        columns <= super::super::width::current(),
        "{columns} columns:\n{out}"
    );
}
