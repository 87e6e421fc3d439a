//! Markdown: a table ready to paste into a forum post or a README, with
//! the device named above it and the range rule of
//! [`compare`](super::compare) applied to every figure.

use super::Export;
use super::compare::{figure_text, identity_text, markdown_table, spread_text};
use crate::result::{RunResult, TestResult};
use crate::units::format_iops;

pub struct Markdown;

/// One figure of a repetition: MB/s or IOPS.
#[derive(Clone, Copy)]
enum Quantity {
    MbPerS,
    Iops,
}

/// `quantity` of each complete repetition in one direction: the whole
/// figure of a pure read or write test, the direction's share of a mixed
/// one.
fn direction_reps(t: &TestResult, write: bool, quantity: Quantity) -> Vec<f64> {
    let pure = match t.workload.rw.as_str() {
        "read" | "randread" => Some(false),
        "write" | "randwrite" => Some(true),
        _ => None,
    };
    t.repetitions
        .iter()
        .filter(|m| !m.interrupted && m.ops > 0)
        .filter_map(|m| match pure {
            Some(w) if w == write => Some(match quantity {
                Quantity::MbPerS => m.mb_per_s,
                Quantity::Iops => m.iops,
            }),
            Some(_) => None,
            None => if write {
                m.write.as_ref()
            } else {
                m.read.as_ref()
            }
            .map(|d| match quantity {
                Quantity::MbPerS => d.mb_per_s,
                Quantity::Iops => d.iops,
            }),
        })
        .collect()
}

/// Row names in first-seen order: a read and a write test of one name
/// share a row; a mixed test has its own.
fn row_names(r: &RunResult) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for t in &r.tests {
        let name = row_name(t);
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

fn row_name(t: &TestResult) -> String {
    match t.workload.rw.as_str() {
        "read" | "randread" | "write" | "randwrite" => t.name.clone(),
        rw => format!("{} ({rw})", t.name),
    }
}

fn cell(r: &RunResult, name: &str, write: bool, quantity: Quantity) -> String {
    let reps: Vec<f64> = r
        .tests
        .iter()
        .filter(|t| row_name(t) == name && t.skipped.is_none())
        .flat_map(|t| direction_reps(t, write, quantity))
        .collect();
    match quantity {
        Quantity::MbPerS => figure_text(&reps),
        Quantity::Iops => spread_text(&reps, format_iops),
    }
}

impl Export for Markdown {
    fn render(&self, r: &RunResult) -> String {
        let label = r
            .device_identity
            .as_ref()
            .map_or_else(|| r.target.path.clone(), |i| i.label.clone());
        let mut out = format!(
            "**{label}** · iocurve {} {} · {}\n\n",
            r.iocurve_version,
            r.command(),
            r.started_at
        );
        let identity = identity_text(r.device_identity.as_ref());
        if !identity.is_empty() {
            out.push_str(&format!("{identity}\n\n"));
        }
        let mut rows = vec![vec![
            "Test".to_string(),
            "Read MB/s".into(),
            "Read IOPS".into(),
            "Write MB/s".into(),
            "Write IOPS".into(),
        ]];
        for name in row_names(r) {
            rows.push(vec![
                name.clone(),
                cell(r, &name, false, Quantity::MbPerS),
                cell(r, &name, false, Quantity::Iops),
                cell(r, &name, true, Quantity::MbPerS),
                cell(r, &name, true, Quantity::Iops),
            ]);
        }
        out.push_str(&markdown_table(&rows));
        out.push_str("\nMB/s = 10^6 bytes/s; IOPS = I/Os per second (k = 10^3).\n");
        out.push_str("Each figure is the median of the repetitions, with their range (min–max)\nwhere they spread by more than 10%.\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata;

    #[test]
    fn snapshot_markdown_export() {
        let id = testdata::sd_identity("SD08G", 3, "SD", "0x6051fd1c", "2008-12");
        let mut r = testdata::run(
            Some(id),
            "2024-03-01T10:00:00Z",
            &[20.1, 19.9, 20.2],
            &[12.2, 17.1, 15.0],
        );
        r.tests
            .push(testdata::test("RND 4KiB Q1", "randread", &[4.1, 4.0, 4.2]));
        insta::assert_snapshot!(Markdown.render(&r));
    }
}
