//! The messages of `iocurve db check` and `iocurve db repair`: what was found
//! and what was done, as text. Pure builders; the command prints them.

use crate::result::stored::{
    Findings, Fixed, ForeignObject, ObjectKind, OddStamp, Replaced, Sound,
};
use std::path::Path;

/// `db check` on a sound database.
pub fn check_ok(path: &Path, sound: &Sound) -> String {
    // The path on a line of its own: a long one would push the verdict
    // past the width of a terminal.
    format!(
        "ok: the results database passed quick_check ({} run(s), schema version {})\ndatabase    {}\n",
        sound.runs,
        sound.version,
        path.display()
    )
}

/// `db check` on a database that passed quick_check but holds what
/// iocurve did not put there: one line for each finding, then the file.
pub fn check_findings(path: &Path, sound: &Sound, f: &Findings) -> String {
    let mut out = format!(
        "the results database passed quick_check ({} run(s), schema version {}), but:\n",
        sound.runs, sound.version
    );
    for line in finding_lines(f) {
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(&format!("database    {}\n", path.display()));
    out
}

/// The one-line error `db check` ends with when it found something;
/// `repair` is the command that fixes it.
pub fn findings_error(path: &Path, f: &Findings, repair: &str) -> String {
    let n = f.foreign.len() + f.unreadable.len() + usize::from(f.stamp.is_some());
    let fix = match &f.stamp {
        Some(odd) if odd.tables_of.is_none() => {
            "upgrade iocurve to read it (`db repair` leaves a newer database as it is)".to_string()
        }
        _ => format!("run `{repair}` to fix it (it keeps a copy of the file as it was)"),
    };
    format!(
        "the results database {} has {n} problem(s), listed above: {fix}",
        path.display()
    )
}

/// Each finding on a line of its own, with why it matters.
fn finding_lines(f: &Findings) -> Vec<String> {
    let mut lines: Vec<String> = f.foreign.iter().map(foreign_line).collect();
    lines.extend(f.unreadable.iter().map(|u| {
        format!(
            "run {}: its stored document cannot be read ({}); export, compare and the listings stop at it",
            u.id, u.why
        )
    }));
    lines.extend(f.stamp.iter().map(stamp_line));
    lines
}

fn foreign_line(o: &ForeignObject) -> String {
    match o.kind {
        ObjectKind::Trigger => format!(
            "trigger {} on {}: not made by iocurve; it would run inside every write, so nothing is saved until it is removed",
            o.name, o.table
        ),
        ObjectKind::View => format!(
            "view {}: not made by iocurve; nothing is saved until it is removed",
            o.name
        ),
        ObjectKind::Index => format!("index {} on {}: not made by iocurve", o.name, o.table),
        ObjectKind::Table => format!("table {}: not made by iocurve", o.name),
    }
}

fn stamp_line(odd: &OddStamp) -> String {
    let what = if odd.stamp < 0 {
        "negative, which no iocurve writes".to_string()
    } else {
        format!("newer than this iocurve knows ({})", odd.latest)
    };
    match odd.tables_of {
        Some(v) => format!(
            "schema version {}: {what}; the tables are those of version {v}",
            odd.stamp
        ),
        None => format!(
            "schema version {}: {what}; its tables are of no version this iocurve knows",
            odd.stamp
        ),
    }
}

/// `db repair` of a sound database with findings: what was found, what
/// was done with each, and where the removed things are kept.
pub fn fixed(path: &Path, r: &Fixed) -> String {
    let mut out = format!(
        "the results database {} passed quick_check, but held what iocurve did not put there:\n",
        path.display()
    );
    for line in finding_lines(&r.findings) {
        out.push_str(&format!("  {line}\n"));
    }
    out.push_str(&format!("copied it as it was to {}\n", r.copy.display()));
    let dropped: Vec<String> = r
        .findings
        .foreign
        .iter()
        .map(|o| format!("{} {}", kind_word(o.kind), o.name))
        .collect();
    if !dropped.is_empty() {
        out.push_str(&format!("removed {}\n", dropped.join(", ")));
    }
    if let Some(file) = &r.set_aside {
        let ids: Vec<i64> = r.findings.unreadable.iter().map(|u| u.id).collect();
        out.push_str(&format!(
            "set aside {} unreadable run(s){} to {}\n",
            ids.len(),
            id_list(&ids),
            file.display()
        ));
    }
    if let (Some(v), Some(odd)) = (r.restamped, &r.findings.stamp) {
        out.push_str(&format!("set schema version {} back to {v}\n", odd.stamp));
    }
    out.push_str(&format!("{} run(s) left in it\n", r.runs));
    out
}

fn kind_word(kind: ObjectKind) -> &'static str {
    match kind {
        ObjectKind::Trigger => "trigger",
        ObjectKind::View => "view",
        ObjectKind::Index => "index",
        ObjectKind::Table => "table",
    }
}

/// `db repair` on a sound database: nothing was changed.
pub fn healthy(path: &Path, sound: &Sound) -> String {
    format!(
        "the results database is sound (quick_check ok, {} run(s)): nothing to repair, nothing changed\ndatabase    {}\n",
        sound.runs,
        path.display()
    )
}

/// `db repair` on a damaged database: where it went, what was saved, what
/// may be lost.
pub fn replaced(path: &Path, r: &Replaced) -> String {
    let p = path.display();
    let mut out = format!("the results database {p} was damaged ({})\n", r.problem);
    out.push_str(&format!(
        "moved it aside to {}{}\n",
        r.aside.display(),
        companions(&r.companions)
    ));
    if let Some(why) = &r.unsalvageable {
        out.push_str(&format!("nothing could be read from it ({why})\n"));
    }
    out.push_str(&format!(
        "salvaged {} run(s) into a new {p}{}\n",
        r.salvaged.len(),
        id_list(&r.salvaged)
    ));
    if !r.unreadable.is_empty() {
        out.push_str(&format!(
            "{} run(s) could not be read{} and stay only in the damaged copy\n",
            r.unreadable.len(),
            id_list(&r.unreadable)
        ));
    }
    if r.list_damaged && r.unsalvageable.is_none() {
        out.push_str(
            "the list of runs itself is damaged: runs that nothing above names may be lost too\n",
        );
    }
    out
}

/// ` (with x-wal, x-shm)`: the companion files moved along, by name.
fn companions(files: &[std::path::PathBuf]) -> String {
    if files.is_empty() {
        return String::new();
    }
    let names: Vec<String> = files
        .iter()
        .filter_map(|c| c.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    format!(" (with {})", names.join(", "))
}

/// ` (run 1-4, 7)`: ids as ranges, the first dozen of them.
pub fn id_list(ids: &[i64]) -> String {
    if ids.is_empty() {
        return String::new();
    }
    let mut ranges: Vec<(i64, i64)> = Vec::new();
    for &id in ids {
        match ranges.last_mut() {
            Some((_, end)) if *end + 1 == id => *end = id,
            _ => ranges.push((id, id)),
        }
    }
    let shown: Vec<String> = ranges
        .iter()
        .take(12)
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    let more = if ranges.len() > 12 { ", ..." } else { "" };
    format!(" (run {}{more})", shown.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn ids_collapse_into_ranges() {
        assert_eq!(id_list(&[]), "");
        assert_eq!(id_list(&[1, 2, 3, 4, 7]), " (run 1-4, 7)");
    }

    #[test]
    fn only_the_first_dozen_ranges_are_shown() {
        let ids: Vec<i64> = (0..13).map(|i| i * 2).collect();
        let text = id_list(&ids);
        assert!(text.ends_with(", 22, ...)"), "{text}");
    }

    #[test]
    fn sound_messages_carry_the_counts() {
        let sound = Sound {
            runs: 4,
            version: 3,
        };
        let p = Path::new("r.db");
        assert_eq!(
            check_ok(p, &sound),
            "ok: the results database passed quick_check (4 run(s), schema version 3)\ndatabase    r.db\n"
        );
        assert!(healthy(p, &sound).contains("(quick_check ok, 4 run(s))"));
    }

    #[test]
    fn a_replacement_names_companions_and_losses() {
        let r = Replaced {
            problem: "bad page".into(),
            aside: PathBuf::from("r.db.damaged"),
            companions: vec![PathBuf::from("dir/r.db-wal")],
            salvaged: vec![1, 2],
            unreadable: vec![5],
            list_damaged: true,
            unsalvageable: None,
        };
        let text = replaced(Path::new("r.db"), &r);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "the results database r.db was damaged (bad page)",
                "moved it aside to r.db.damaged (with r.db-wal)",
                "salvaged 2 run(s) into a new r.db (run 1-2)",
                "1 run(s) could not be read (run 5) and stay only in the damaged copy",
                "the list of runs itself is damaged: runs that nothing above names may be lost too",
            ]
        );
    }
    fn planted() -> Findings {
        Findings {
            foreign: vec![ForeignObject {
                kind: ObjectKind::Trigger,
                name: "t".into(),
                table: "runs".into(),
            }],
            unreadable: vec![crate::result::stored::UnreadableRun {
                id: 2,
                why: "EOF while parsing".into(),
            }],
            stamp: Some(OddStamp {
                stamp: -5,
                latest: 3,
                tables_of: Some(3),
            }),
        }
    }

    #[test]
    fn every_finding_has_a_line_and_the_error_names_the_repair() {
        let f = planted();
        let text = check_findings(
            Path::new("r.db"),
            &Sound {
                runs: 3,
                version: 3,
            },
            &f,
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "{text}");
        assert!(lines[1].starts_with("trigger t on runs: not made by iocurve"));
        assert!(
            lines[2].starts_with("run 2: its stored document cannot be read (EOF while parsing)")
        );
        assert_eq!(
            lines[3],
            "schema version -5: negative, which no iocurve writes; the tables are those of version 3"
        );
        let err = findings_error(Path::new("r.db"), &f, "iocurve db repair --db r.db");
        assert!(err.contains("has 3 problem(s)") && err.contains("`iocurve db repair --db r.db`"));
    }

    #[test]
    fn a_fix_says_where_everything_removed_went() {
        let r = Fixed {
            findings: planted(),
            copy: PathBuf::from("r.db.before-repair-X"),
            set_aside: Some(PathBuf::from("r.db.unreadable-X.jsonl")),
            restamped: Some(3),
            runs: 2,
        };
        let text = fixed(Path::new("r.db"), &r);
        for line in [
            "copied it as it was to r.db.before-repair-X",
            "removed trigger t",
            "set aside 1 unreadable run(s) (run 2) to r.db.unreadable-X.jsonl",
            "set schema version -5 back to 3",
            "2 run(s) left in it",
        ] {
            assert!(text.lines().any(|l| l == line), "{line}: {text}");
        }
    }
}
