//! Each option of every command sits under its own heading in `--help` and
//! the man pages: the "Many hosts" heading holds the many-hosts options and
//! nothing else. (clap's `next_help_heading` on a flattened struct carries
//! its heading on to every option flattened after it; `run --help` once
//! listed `--rw`, `--time` and `--size` there.) Walked over the whole clap
//! tree, so a new command or option is checked without a line here.

use crate::common;

use clap::{Args, CommandFactory};
use iocurve::cli::cluster::{ClusterArgs, HEADING};
use std::collections::BTreeSet;

/// The ids of the many-hosts options, read from their own definition.
fn cluster_ids() -> BTreeSet<String> {
    ClusterArgs::augment_args(clap::Command::new("ids"))
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .collect()
}

/// Every command with its path (`flash capacity`), the root included.
fn commands() -> Vec<(String, clap::Command)> {
    fn walk(cmd: &clap::Command, path: &str, out: &mut Vec<(String, clap::Command)>) {
        out.push((path.to_string(), cmd.clone()));
        for sub in cmd.get_subcommands() {
            let p = format!("{path} {}", sub.get_name()).trim().to_string();
            walk(sub, &p, out);
        }
    }
    let mut out = Vec::new();
    let mut root = iocurve::cli::Cli::command();
    root.build();
    walk(&root, "", &mut out);
    out
}

#[test]
fn only_the_many_hosts_options_sit_under_many_hosts() {
    let ours = cluster_ids();
    assert!(ours.contains("stonewall") && ours.len() >= 5, "{ours:?}");
    let mut wrong = Vec::new();
    let mut homed = 0;
    for (path, cmd) in commands() {
        for arg in cmd.get_arguments() {
            let id = arg.get_id().to_string();
            let under_many_hosts = arg.get_help_heading() == Some(HEADING);
            match (ours.contains(&id), under_many_hosts) {
                (false, true) => wrong.push(format!("{path}: --{id} under {HEADING:?}")),
                (true, false) => wrong.push(format!("{path}: --{id} not under {HEADING:?}")),
                (true, true) => homed += 1,
                (false, false) => {}
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // run, profile, curve, sustain, files load and save take them.
    assert!(homed >= 6 * ours.len(), "{homed} many-hosts options found");
}

/// What `--help` prints under the heading, read as a person reads it.
fn options_under_heading(help: &str) -> Vec<String> {
    let mut inside = false;
    let mut found = Vec::new();
    for line in help.lines() {
        if !line.starts_with(' ') && line.ends_with(':') {
            inside = line.trim_end_matches(':') == HEADING;
            continue;
        }
        if inside && let Some(flag) = line.trim_start().strip_prefix("--") {
            found.push(flag.split([' ', '=']).next().unwrap_or("").to_string());
        }
    }
    found
}

#[test]
fn help_and_man_pages_list_only_many_hosts_options_under_it() {
    let ours: BTreeSet<String> = cluster_ids()
        .iter()
        .map(|id| id.replace('_', "-"))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    common::run_ok(["man", dir.path().to_str().unwrap()]);
    for command in ["run", "profile", "curve", "sustain", "files load"] {
        let mut args: Vec<&str> = command.split(' ').collect();
        args.push("--help");
        let help = common::text(&common::run_ok(&args).stdout);
        let listed = options_under_heading(&help);
        assert!(!listed.is_empty(), "{command}: no {HEADING:?} in\n{help}");
        let strays: Vec<&String> = listed.iter().filter(|f| !ours.contains(*f)).collect();
        assert!(
            strays.is_empty(),
            "{command} --help: {strays:?} under {HEADING:?}"
        );
        // The man page: the section of the heading holds the same options.
        let page = dir
            .path()
            .join(format!("iocurve-{}.1", command.replace(' ', "-")));
        let man = std::fs::read_to_string(&page).unwrap();
        let section = man
            .split(".SH ")
            .find(|s| {
                s.trim_start_matches('"')
                    .starts_with(&HEADING.to_uppercase())
            })
            .unwrap_or_else(|| panic!("{page:?}: no {HEADING:?} section"));
        let in_man: Vec<String> = section
            .lines()
            .filter_map(|l| l.strip_prefix("\\fB\\-\\-"))
            .map(|l| l.split("\\fR").next().unwrap_or("").replace("\\-", "-"))
            .collect();
        assert!(!in_man.is_empty(), "{page:?}:\n{section}");
        let strays: Vec<&String> = in_man.iter().filter(|f| !ours.contains(*f)).collect();
        assert!(strays.is_empty(), "{page:?}: {strays:?} under {HEADING:?}");
    }
}
