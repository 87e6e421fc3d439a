//! The text of `iocurve history` and `iocurve list`: the database's devices
//! and runs, one per line. Pure builders so the commands only fetch rows and
//! print what these return.
//!
//! Every text a row holds came from outside at some point (a device's
//! label, an imported fio job's name, the date fio wrote), so each is shown
//! through [`shown`]: escaped and cut, never as it is.

use crate::report::table::{columns, cut, fitted};
use crate::result::stored::{DeviceRow, RankCount, RunRow, RunStatus};
use crate::units::escape::NAME_COLUMNS;
use crate::units::format_mbps;

/// The closing line of `history`: what the figures mean.
pub const HISTORY_FOOTER: &str = "MB/s = 10^6 bytes/s; median (min-max) of the repetitions\n";

/// A stored text as a line may show it: control characters escaped, cut
/// at [`NAME_COLUMNS`].
fn shown(text: &str) -> String {
    cut(text, NAME_COLUMNS)
}

/// The heading of one device in `history`.
pub fn device_heading(d: &DeviceRow) -> String {
    // The device's name, not the store's key (`model:vda@vm|...`): the
    // key is in `--json`, and `history KEY` still finds it.
    let line = format!("{} · device {} · {} run(s)", shown(&d.label), d.id, d.runs);
    format!("{}\n", fitted(&line))
}

/// One run on one line: id, date, command, headline figures.
pub fn run_line(r: &RunRow) -> String {
    let figures: Vec<String> = r
        .figures
        .iter()
        .map(|f| {
            let range = if f.repetitions > 1 {
                format!(" ({}-{})", format_mbps(f.min), format_mbps(f.max))
            } else {
                String::new()
            };
            format!(
                "{} {} {}{range}",
                shown(&f.test),
                shown(f.rw.as_str()),
                format_mbps(f.median)
            )
        })
        .collect();
    let lead = lead(r);
    if figures.is_empty() {
        return format!("{lead}no figures\n");
    }
    figure_lines(&lead, &figures)
}

/// The start of a run's line: id, date, command, status (first, where a
/// long target cannot push it onto the next line), target, spread.
fn lead(r: &RunRow) -> String {
    format!(
        "  run {:>4}  {}  {:<8} {}{}{}",
        r.id,
        shown(&r.started_at),
        shown(&r.command),
        status_prefix(r.status),
        target_prefix(r.target.as_deref()),
        spread_prefix(r.ranks)
    )
}

/// One run whose outcome is a line of its own (a drop, misses, a curve's
/// bandwidths, a flash verdict; see [`crate::report::outcome::headline`])
/// in place of a figure per test, wrapped between its parts.
pub fn outcome_line(r: &RunRow, headline: &str) -> String {
    let parts: Vec<String> = headline
        .split(" · ")
        .flat_map(|p| p.split("; "))
        .map(shown)
        .collect();
    figure_lines(&lead(r), &parts)
}

/// The figures after `lead`, joined by ` · ` and wrapped between figures,
/// to fit the width. Further lines are indented under the first figure,
/// or by [`FIGURE_INDENT`] when the lead takes more than half the width
/// (a long target); a figure that does not fit after the lead starts the
/// next line.
fn figure_lines(lead: &str, figures: &[String]) -> String {
    let width = super::width::current();
    // A lead that names a target or a spread ends in ` · `: that
    // separator goes before the first figure only when they share a line.
    let lead = lead.trim_end();
    let (lead, first_sep) = match lead.strip_suffix('·') {
        Some(base) => (base.trim_end(), " · "),
        None => (lead, " "),
    };
    let indent = match columns(lead) + 1 {
        n if n <= width / 2 => n,
        _ => FIGURE_INDENT,
    };
    let indent = " ".repeat(indent);
    let mut out = String::new();
    let mut line = lead.to_string();
    let mut first = true;
    for f in figures {
        let sep = if first { first_sep } else { " · " };
        if columns(&line) + columns(sep) + columns(f) > width {
            out.push_str(&fitted(&line));
            out.push('\n');
            line = format!("{indent}{f}");
        } else {
            line.push_str(sep);
            line.push_str(f);
        }
        first = false;
    }
    out.push_str(&fitted(line.trim_end()));
    out.push('\n');
    out
}

/// The indent of a run's further figure lines under a long lead.
const FIGURE_INDENT: usize = 4;

/// `4 ranks / 2 hosts` for a run on many hosts.
fn spread(count: RankCount) -> String {
    let plural = |n: u32| if n == 1 { "" } else { "s" };
    format!(
        "{} rank{} / {} host{}",
        count.ranks,
        plural(count.ranks),
        count.hosts,
        plural(count.hosts)
    )
}

/// [`spread`] and a separator before a run's figures (nothing for a run
/// on one host).
fn spread_prefix(count: Option<RankCount>) -> String {
    count.map_or(String::new(), |c| format!("{} · ", spread(c)))
}

/// The run's target and a separator, so two files on one disk are told
/// apart (nothing when the run recorded none).
fn target_prefix(target: Option<&str>) -> String {
    target.map_or(String::new(), |t| format!("{} · ", shown(t)))
}

/// `INTERRUPTED ` or `FAILED ` before a partial run's figures.
fn status_prefix(status: RunStatus) -> String {
    match status {
        RunStatus::Complete => String::new(),
        other => format!("{} ", other.mark()),
    }
}

/// The newest change of each target of a device, as `compare` states it
/// of the same two runs: one line per pair of like tests.
pub fn change_lines(newest: &[crate::analysis::compare::series::Newest]) -> String {
    let mut out = String::new();
    for n in newest {
        for ch in &n.changes {
            let line = format!(
                "  newest change · {} · {}: {} (run of {} against {})",
                shown(&n.target),
                shown(&ch.test),
                crate::report::compare::statement(ch),
                shown(&n.after_started_at),
                shown(&n.before_started_at)
            );
            out.push_str(&fitted(&line));
            out.push('\n');
        }
    }
    out
}

/// `iocurve list`: every device, then every run with its device.
pub fn list(devices: &[DeviceRow], runs: &[RunRow]) -> String {
    list_with(devices, runs, |_| None)
}

/// [`list`], each run followed by its outcome (see [`outcome_line`]) on
/// an indented line when `headline` has one.
pub fn list_with(
    devices: &[DeviceRow],
    runs: &[RunRow],
    headline: impl Fn(&RunRow) -> Option<String>,
) -> String {
    let mut out = String::from("devices:\n");
    for d in devices {
        // The key and dates on a second line when one would not fit.
        let line = format!(
            "  {:>4}  {}  {} run(s), {} to {}",
            d.id,
            shown(&d.label),
            d.runs,
            shown(&d.first_seen),
            shown(&d.last_seen)
        );
        out.push_str(&fitted(&line));
        out.push('\n');
    }
    out.push_str("runs:\n");
    for r in runs {
        // A run on many hosts names its spread where a run names its device.
        let spread = r
            .ranks
            .map_or(String::new(), |c| format!("{}, ", spread(c)));
        let line = format!(
            "  run {:>4}  {}  {:<8} {:<8} {}{spread}{}device {} ({})",
            r.id,
            shown(&r.started_at),
            shown(&r.command),
            shown(&r.source),
            status_prefix(r.status),
            target_prefix(r.target.as_deref()),
            r.device_id,
            shown(&r.device_label)
        );
        out.push_str(&fitted(&line));
        out.push('\n');
        if let Some(h) = headline(r) {
            out.push_str(&fitted(&format!("            {}", shown(&h))));
            out.push('\n');
        }
    }
    out
}

/// `list --json`: `{"devices": [...], "runs": [...]}`, the rows as stored
/// (a run's `status` says whether its figures are partial).
pub fn list_json(devices: &[DeviceRow], runs: &[RunRow]) -> serde_json::Result<String> {
    serde_json::to_string_pretty(&crate::result::stored::Listing {
        devices: devices.to_vec(),
        runs: runs.to_vec(),
    })
}

/// `history --json`: `{"devices": [{"device": ..., "runs": [...]}]}`.
pub fn history_json(with_runs: &[(Vec<RunRow>, DeviceRow)]) -> serde_json::Result<String> {
    let devices = with_runs
        .iter()
        .map(|(runs, d)| crate::result::stored::DeviceHistory {
            device: d.clone(),
            runs: runs.clone(),
        })
        .collect();
    serde_json::to_string_pretty(&crate::result::stored::Histories { devices })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::stored::Figure;

    fn device() -> DeviceRow {
        DeviceRow {
            id: 3,
            key: "k1".into(),
            label: "Card".into(),
            first_seen: "2026-01-01".into(),
            last_seen: "2026-01-02".into(),
            runs: 2,
        }
    }

    fn run(figures: Vec<Figure>) -> RunRow {
        RunRow {
            target: Some("/dev/sdb".into()),
            id: 7,
            device_id: 3,
            device_label: "Card".into(),
            command: "run".into(),
            source: "local".into(),
            started_at: "2026-01-01T00:00:00Z".into(),
            status: RunStatus::Complete,
            figures,
            ranks: None,
        }
    }

    #[test]
    fn the_json_listing_carries_each_runs_status_and_figures() {
        let mut r = run(vec![]);
        r.status = RunStatus::Interrupted;
        let doc: serde_json::Value =
            serde_json::from_str(&list_json(&[device()], &[r.clone()]).unwrap()).unwrap();
        assert_eq!(doc["devices"][0]["key"], "k1");
        assert_eq!(doc["runs"][0]["id"], 7);
        assert_eq!(doc["runs"][0]["status"], "interrupted");
        let doc: serde_json::Value =
            serde_json::from_str(&history_json(&[(vec![r], device())]).unwrap()).unwrap();
        assert_eq!(doc["devices"][0]["device"]["id"], 3);
        assert_eq!(doc["devices"][0]["runs"][0]["command"], "run");
    }

    #[test]
    fn a_partial_run_is_marked_in_history_and_list() {
        let mut r = run(vec![]);
        r.status = RunStatus::Interrupted;
        assert_eq!(
            run_line(&r),
            "  run    7  2026-01-01T00:00:00Z  run      INTERRUPTED /dev/sdb · no figures\n"
        );
        r.status = RunStatus::Failed;
        let listed = super::super::width::with(100, || list(&[], &[r]));
        assert!(
            listed.contains("local    FAILED /dev/sdb · device 3 (Card)"),
            "{listed}"
        );
        assert_eq!(RunStatus::of(true, true), RunStatus::Failed);
    }

    #[test]
    fn a_run_without_figures_says_so() {
        assert_eq!(
            run_line(&run(vec![])),
            "  run    7  2026-01-01T00:00:00Z  run      /dev/sdb · no figures\n"
        );
    }

    #[test]
    fn repeated_figures_show_their_range_and_single_ones_do_not() {
        let fig = |repetitions| Figure {
            test: "seq".into(),
            rw: "read".into(),
            median: 2.0e6,
            min: 1.0e6,
            max: 3.0e6,
            repetitions,
        };
        let one = run_line(&run(vec![fig(1)]));
        assert!(!one.contains('('), "{one}");
        let many = super::super::width::with(100, || run_line(&run(vec![fig(3), fig(1)])));
        assert!(many.contains(" (") && many.contains(" · "), "{many}");
    }

    #[test]
    fn a_run_on_many_hosts_says_its_ranks_and_hosts() {
        let mut r = run(vec![]);
        r.ranks = Some(RankCount { ranks: 8, hosts: 4 });
        assert_eq!(
            run_line(&r),
            "  run    7  2026-01-01T00:00:00Z  run      /dev/sdb · 8 ranks / 4 hosts · no figures\n"
        );
        let listed = super::super::width::with(100, || list(&[], &[r.clone()]));
        assert!(
            listed.contains("local    8 ranks / 4 hosts, /dev/sdb · device 3 (Card)"),
            "{listed}"
        );
        let doc: serde_json::Value = serde_json::from_str(&list_json(&[], &[r]).unwrap()).unwrap();
        assert_eq!(doc["runs"][0]["ranks"]["hosts"], 4);
        // A run on one host: no key at all.
        let doc: serde_json::Value =
            serde_json::from_str(&list_json(&[], &[run(vec![])]).unwrap()).unwrap();
        assert!(doc["runs"][0].get("ranks").is_none());
    }

    #[test]
    fn the_heading_names_label_id_and_runs_not_the_key() {
        assert_eq!(device_heading(&device()), "Card · device 3 · 2 run(s)\n");
    }

    #[test]
    fn list_has_both_sections_in_order() {
        let text = list(&[device()], &[run(vec![])]);
        assert!(text.starts_with("devices:\n     3  Card  2 run(s), 2026-01-01 to 2026-01-02\n"));
        assert!(text.ends_with(
            "runs:\n  run    7  2026-01-01T00:00:00Z  run      local    /dev/sdb · device 3 (Card)\n"
        ));
    }

    /// A terminal obeys these; none may be printed raw.
    fn raw_controls(text: &str) -> Vec<char> {
        text.chars()
            .filter(|&c| crate::units::escape::is_unsafe(c) && c != '\n')
            .collect()
    }

    #[test]
    fn a_hostile_or_50_mb_name_is_escaped_and_cut_in_history_and_list() {
        let hostile = "seq\u{1b}]0;owned\u{7}\u{1b}[2J\rread\u{202e}\u{85}";
        let huge = "w".repeat(50_000_000);
        let figure = |test: &str| Figure {
            test: test.into(),
            rw: hostile.into(),
            median: 2.0e6,
            min: 1.0e6,
            max: 3.0e6,
            repetitions: 3,
        };
        let mut r = run(vec![figure(hostile), figure(&huge)]);
        r.device_label = huge.clone();
        r.command = hostile.into();
        r.target = Some(hostile.into());
        let mut d = device();
        d.label = huge.clone();
        d.key = hostile.into();
        let text = super::super::width::with(100, || {
            format!(
                "{}{}{}",
                device_heading(&d),
                run_line(&r),
                list(&[d.clone()], &[r.clone()])
            )
        });
        // Each name is read up to its cut, not whole: the output is a few
        // lines, whatever the names' length.
        assert!(text.len() < 4 * 1024, "{} bytes", text.len());
        assert!(raw_controls(&text).is_empty(), "{text}");
        assert!(text.contains("\\e]0;owned") && text.contains('…'), "{text}");
        for line in text.lines() {
            assert!(columns(line) <= NAME_COLUMNS + 100, "{line}");
        }
    }
}
