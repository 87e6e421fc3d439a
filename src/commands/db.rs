//! `iocurve db check` and `iocurve db repair`: is the results database
//! sound, and if not, a new one with what could be saved of the old.

use crate::cli::db::DbCommand;
use crate::error::usage;
use crate::store::{
    self,
    fail::{self, Access},
    repair::{self, Repair},
};
use anyhow::Result;

pub fn db(cmd: &DbCommand, settings: &store::Settings) -> Result<i32> {
    let path = settings.path()?;
    if !path.exists() {
        return Err(usage(format!(
            "no results database at {}: nothing to check (pass --db PATH for another file)",
            path.display()
        )));
    }
    let p = path.display();
    match cmd {
        DbCommand::Check => match repair::check(&path)? {
            Ok(sound) => {
                println!(
                    "ok: the results database {p} passed quick_check ({} run(s), schema version {})",
                    sound.runs, sound.version
                );
                Ok(0)
            }
            Err(problem) => Err(fail::damaged(&path, &problem, Access::Read)),
        },
        DbCommand::Repair => {
            match repair::repair(&path)? {
                Repair::Healthy(sound) => println!(
                    "the results database {p} is sound (quick_check ok, {} run(s)): nothing to repair, nothing changed",
                    sound.runs
                ),
                Repair::Replaced(r) => {
                    println!("the results database {p} was damaged ({})", r.problem);
                    let with = if r.companions.is_empty() {
                        String::new()
                    } else {
                        let names: Vec<String> = r
                            .companions
                            .iter()
                            .filter_map(|c| c.file_name())
                            .map(|n| n.to_string_lossy().into_owned())
                            .collect();
                        format!(" (with {})", names.join(", "))
                    };
                    println!("moved it aside to {}{with}", r.aside.display());
                    if let Some(why) = &r.unsalvageable {
                        println!("nothing could be read from it ({why})");
                    }
                    println!(
                        "salvaged {} run(s) into a new {p}{}",
                        r.salvaged.len(),
                        id_list(&r.salvaged)
                    );
                    if !r.unreadable.is_empty() {
                        println!(
                            "{} run(s) could not be read{} and stay only in the damaged copy",
                            r.unreadable.len(),
                            id_list(&r.unreadable)
                        );
                    }
                    if r.list_damaged && r.unsalvageable.is_none() {
                        println!(
                            "the list of runs itself is damaged: runs that nothing above names may be lost too"
                        );
                    }
                }
            }
            Ok(0)
        }
    }
}

/// ` (run 1-4, 7)`: ids as ranges, the first dozen of them.
fn id_list(ids: &[i64]) -> String {
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
