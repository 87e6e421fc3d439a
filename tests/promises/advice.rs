//! A refusal advises only what the command in use can do: every `--option`
//! a refusal names exists on that command, and the way to measure reads
//! only is given in the command's own options (`--rw read` to `run`,
//! `--read-only` to `profile`) or not at all (`copy`, `flash capacity`,
//! `sustain` cannot). Each refusal is triggered for real, command by
//! command: a missing target, an existing file, a loop device holding
//! data, mounted, or read-only, a file on tmpfs (which refuses O_DIRECT).

use crate::common;

use clap::CommandFactory;
use common::{LoopDevice, Tmpfs, iocurve, skipped, text};
use std::collections::BTreeSet;
use std::path::Path;

/// Options of other programs a message quotes with the command that ends a
/// use (`mdadm --stop`, `blockdev --setrw`) or builds iocurve: not
/// iocurve's, so not looked up.
const FOREIGN: [&str; 5] = [
    "--stop",
    "--setrw",
    "--features",
    "--output-format",
    "--mpi",
];

/// The long options of the command at `path` (`flash capacity`).
fn options_of(path: &str) -> BTreeSet<String> {
    let mut cmd = iocurve::cli::Cli::command();
    cmd.build();
    let mut at = &cmd;
    for name in path.split(' ') {
        at = at
            .find_subcommand(name)
            .expect("a command of the clap tree");
    }
    at.get_arguments()
        .filter_map(|a| a.get_long())
        .map(|l| format!("--{l}"))
        .collect()
}

/// Every `--option` in `message`.
fn flags_in(message: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (i, _) in message.match_indices("--") {
        let before = message[..i].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '-') {
            continue;
        }
        let name: String = message[i + 2..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if !name.is_empty() {
            found.push(format!("--{name}"));
        }
    }
    found
}

/// The commands each refusal is tried on, with the arguments that make
/// them write (`{t}` the target, `{image}` an image to copy), and how the
/// command measures reads only, if it can.
fn writers() -> Vec<(&'static str, Vec<&'static str>, Option<&'static str>)> {
    vec![
        (
            "run",
            vec!["{t}", "--rw", "write", "--size", "1M"],
            Some("--rw read"),
        ),
        (
            "profile",
            vec!["{t}", "--time", "100ms", "--repeat", "1"],
            Some("--read-only"),
        ),
        (
            "curve",
            vec![
                "{t}", "--rw", "write", "--sizes", "4k", "--time", "100ms", "--repeat", "1",
            ],
            Some("--rw read"),
        ),
        (
            "stream",
            vec!["{t}", "--rw", "write", "--time", "1s"],
            Some("--rw read"),
        ),
        ("sustain", vec!["{t}", "--bytes", "1M"], None),
        (
            "surface",
            vec!["{t}", "--samples", "2"],
            Some("without --preserve"),
        ),
        ("endure", vec!["{t}", "--cycles", "1"], None),
        ("copy", vec!["{image}", "{t}"], None),
        ("flash capacity", vec!["{t}"], None),
        ("flash class", vec!["{t}"], None),
        ("flash cache", vec!["{t}"], None),
        ("flash open-au", vec!["{t}"], None),
    ]
}

/// One refusal: what was run and what it said.
struct Said {
    command: &'static str,
    argv: Vec<String>,
    reads_only: Option<&'static str>,
    stderr: String,
    code: Option<i32>,
}

fn try_each(target: &Path, image: &Path, extra: &[&str]) -> Vec<Said> {
    writers()
        .into_iter()
        .map(|(command, args, reads_only)| {
            let mut argv: Vec<String> = command.split(' ').map(String::from).collect();
            argv.extend(args.iter().map(|a| {
                a.replace("{t}", target.to_str().unwrap())
                    .replace("{image}", image.to_str().unwrap())
            }));
            argv.extend(extra.iter().map(|e| e.to_string()));
            let out = iocurve()
                .args(&argv)
                .arg("--no-save")
                .output()
                .expect("iocurve runs");
            Said {
                command,
                argv,
                reads_only,
                stderr: text(&out.stderr),
                code: out.status.code(),
            }
        })
        .collect()
}

fn refused(s: &Said) -> bool {
    s.code.is_some_and(|c| c != 0 && c != 5)
}

/// What is wrong with the refusals in `said`: an option the command lacks,
/// a way to read only that is not the command's own.
fn wrong_advice(said: &[Said]) -> Vec<String> {
    let mut wrong = Vec::new();
    // A refusal (2), an I/O failure that names its fix (3): anything but
    // a result.
    for s in said.iter().filter(|s| refused(s)) {
        let own = options_of(s.command);
        for flag in flags_in(&s.stderr) {
            if !own.contains(&flag) && !FOREIGN.contains(&flag.as_str()) {
                wrong.push(format!("{:?}: advises {flag}: {}", s.argv, s.stderr.trim()));
            }
        }
        let reads = s.stderr.contains("reads only");
        match s.reads_only {
            Some(how) if reads && !s.stderr.contains(how) => wrong.push(format!(
                "{:?}: reads only without {how}: {}",
                s.argv,
                s.stderr.trim()
            )),
            None if reads => wrong.push(format!(
                "{:?}: cannot read only: {}",
                s.argv,
                s.stderr.trim()
            )),
            _ => {}
        }
    }
    wrong
}

#[test]
fn the_checker_reads_options_as_a_person_does() {
    assert_eq!(
        flags_in("give --rw read, or --read-only; not a-- b--x (mdadm --stop)"),
        ["--rw", "--read-only", "--stop"]
    );
    assert!(options_of("run").contains("--rw"));
    assert!(!options_of("copy").contains("--rw"));
}

#[test]
fn refusals_without_a_device_name_only_the_commands_options() {
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("image.bin");
    std::fs::write(&image, vec![0xa5; 1 << 20]).unwrap();
    // An existing file that is not iocurve's, written without a flag.
    let file = dir.path().join("data.bin");
    std::fs::write(&file, vec![0x11; 4 << 20]).unwrap();
    let mut said = try_each(&file, &image, &[]);
    said.extend(try_each(Path::new("/no/such/place"), &image, &[]));
    let refused = said.iter().filter(|s| refused(s)).count();
    assert!(refused >= 10, "only {refused} refusals");
    let wrong = wrong_advice(&said);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn refusals_on_a_device_name_only_the_commands_options() {
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("image.bin");
    std::fs::write(&image, vec![0xa5; 1 << 20]).unwrap();
    let held = match LoopDevice::new(16 << 20) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let dev = Path::new(held.path());
    // A device that holds data, written without a flag.
    let mut said = try_each(dev, &image, &[]);
    drop(held);
    // Mounted, with --destructive: in use.
    let mut mounted = LoopDevice::new(32 << 20).unwrap();
    if let Err(why) = mounted.mkfs_and_mount() {
        return skipped(&why);
    }
    said.extend(try_each(
        Path::new(mounted.path()),
        &image,
        &["--destructive"],
    ));
    drop(mounted);
    // Read-only, with --destructive.
    let read_only = LoopDevice::with_options(16 << 20, &["-r"]).unwrap();
    said.extend(try_each(
        Path::new(read_only.path()),
        &image,
        &["--destructive"],
    ));
    let refused = said.iter().filter(|s| refused(s)).count();
    assert!(refused >= 25, "only {refused} refusals");
    // The mounted device's refusal reached every command.
    let busy = said.iter().filter(|s| s.stderr.contains("mounted")).count();
    assert!(busy >= 10, "{busy} refusals named the mount");
    let wrong = wrong_advice(&said);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_file_system_without_o_direct_advises_buffered_only_where_it_exists() {
    let tmpfs = match Tmpfs::mount("size=8m") {
        Ok(t) => t,
        Err(why) => return skipped(&why),
    };
    let file = tmpfs.path().join("data.bin");
    std::fs::write(&file, vec![0x22; 2 << 20]).unwrap();
    let image = tmpfs.path().join("image.bin");
    std::fs::write(&image, vec![0x33; 1 << 20]).unwrap();
    let said = try_each(&file, &image, &["--destructive"]);
    let direct = said
        .iter()
        .filter(|s| s.stderr.contains("O_DIRECT"))
        .count();
    if direct == 0 {
        // Linux 6.6 and later take O_DIRECT on tmpfs.
        skipped("this kernel's tmpfs accepts O_DIRECT");
    }
    let wrong = wrong_advice(&said);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
