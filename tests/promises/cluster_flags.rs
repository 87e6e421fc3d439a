//! The many-hosts options outside a launcher: every command that takes
//! them (found in the clap tree, so a new one is not missed) refuses each
//! of them on one line that names the fix, before anything is opened.

use crate::common;
use clap::CommandFactory;
use iocurve::cli::Cli;

/// The options of `cli::cluster::ClusterArgs` (with a value where one is
/// needed).
const FLAGS: [&str; 5] = [
    "--stonewall",
    "--shared-file",
    "--read-other-host",
    "--mixed-hosts",
    "--rank-timeout=5s",
];

/// Every subcommand path (`["files", "load"]`) whose arguments include
/// `--stonewall`.
fn commands_with_cluster_flags() -> Vec<Vec<String>> {
    fn walk(cmd: &clap::Command, path: Vec<String>, out: &mut Vec<Vec<String>>) {
        if cmd
            .get_arguments()
            .any(|a| a.get_long() == Some("stonewall"))
        {
            out.push(path.clone());
        }
        for sub in cmd.get_subcommands() {
            let mut p = path.clone();
            p.push(sub.get_name().to_string());
            walk(sub, p, out);
        }
    }
    let mut out = Vec::new();
    walk(&Cli::command(), Vec::new(), &mut out);
    out
}

/// The least a command needs besides its target to get past clap.
fn required_args(path: &[String]) -> &'static [&'static str] {
    match path.first().map(String::as_str) {
        Some("run") => &["--rw", "read", "--bs", "4k"],
        _ => &[],
    }
}

#[test]
fn the_commands_that_run_on_every_rank_take_the_flags_and_no_other_does() {
    let found: Vec<String> = commands_with_cluster_flags()
        .iter()
        .map(|p| p.join(" "))
        .collect();
    assert_eq!(
        found,
        [
            "profile",
            "run",
            "curve",
            "files load",
            "files save",
            "sustain"
        ],
        "README and `commands::ranks` name these commands"
    );
}

#[test]
fn every_flag_outside_a_launcher_is_refused_on_one_line() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    for path in commands_with_cluster_flags() {
        for flag in FLAGS {
            let out = common::iocurve()
                .args(&path)
                .arg(dir.path())
                .args(required_args(&path))
                .arg(flag)
                .args(["--no-save"])
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            let what = format!("{} {flag}", path.join(" "));
            assert_eq!(out.status.code(), Some(2), "{what}: {stderr}");
            assert_eq!(stderr.lines().count(), 1, "{what}: one line: {stderr}");
            let name = flag.split('=').next().unwrap_or(flag);
            assert!(
                stderr.contains(name) && stderr.contains("under mpirun or srun"),
                "{what}: names the fix: {stderr}"
            );
            assert!(out.stdout.is_empty(), "{what}: nothing measured");
            let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
            assert!(left.is_empty(), "{what}: left {left:?}");
        }
    }
}
