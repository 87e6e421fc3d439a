//! Generated command lines: no input makes iocurve panic, hang or call its
//! own failure an internal error.
//!
//! The cases come from the clap definition itself: every subcommand is
//! walked, and every option that takes a value and every positional slot
//! gets odd values (zero, one, sector edges, negative, NaN, infinity,
//! empty, huge, non-ASCII digits, trailing blanks, hex; odd simulated
//! cards for targets), one slot at a time and then two at once, on top of
//! a short, harmless command line. An option added later is covered
//! without touching this file.
//!
//! A command line the parser refuses (most of them) is refused in this
//! process, through the same parser and the same one-line error the binary
//! prints before it exits 2, under `catch_unwind`; one in
//! [`SPAWN_REFUSED_EVERY`] of them, and every line the parser takes, runs
//! as a process of its own. Spawning all 7,000 took three and a half
//! minutes of a two-core CI's time, almost all of it in refusals.
//!
//! Nothing outside a temporary directory is written: every process runs in
//! a directory of its own (which is also its HOME and XDG_DATA_HOME), its
//! targets are files made there, a directory made there or a simulated
//! card, results go to a database there (or nowhere, with --no-save), and
//! the only permission ever given is --destructive on a file made for that
//! one case. The generator is seeded: IOCURVE_FUZZ_SEED repeats a run (or
//! tries another), IOCURVE_FUZZ_VALUES limits the values per slot,
//! IOCURVE_FUZZ_PAIRS sets the two-slot cases per command, and
//! IOCURVE_FUZZ_SHOW prints every command line that did not end with a
//! usage error, with its error.

use crate::common;

use clap::CommandFactory;
use iocurve::cli::Cli;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const DEFAULT_SEED: u64 = 0x10c0_12fe;
/// Odd values tried per slot (all of [`odd_values`]), unless overridden.
const DEFAULT_VALUES_PER_SLOT: usize = usize::MAX;
/// Cases per command with odd values in two slots at once.
const DEFAULT_PAIRS_PER_COMMAND: usize = 30;
/// A process still running after this long is a hang.
const TIMEOUT: Duration = Duration::from_secs(20);
/// Exit codes a command may end with (130 only on a signal, none is sent).
const ALLOWED: [i32; 5] = [0, 2, 3, 4, 5];

/// Cases run at once.
const WORKERS: usize = 4;

/// One in this many command lines the parser refuses in this process also
/// runs as a process, so that the binary's own path to exit 2 is walked
/// with odd values too.
const SPAWN_REFUSED_EVERY: usize = 16;

/// Whether the parser refuses `args` (as the binary would, with exit 2),
/// reached in this process with the binary's own parser and error
/// wording; Err when either panicked.
fn refused_by_parser(args: &[String]) -> Result<bool, String> {
    use clap::error::ErrorKind;
    let all: Vec<&str> = std::iter::once("iocurve")
        .chain(args.iter().map(String::as_str))
        .collect();
    // Built once: making the whole command tree again for each of 7,000
    // lines took longer than parsing them.
    static PARSER: std::sync::OnceLock<clap::Command> = std::sync::OnceLock::new();
    let parser = PARSER.get_or_init(Cli::command);
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let parsed = parser
            .clone()
            .try_get_matches_from(&all)
            .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m));
        let Err(err) = parsed else {
            return false;
        };
        let shown = matches!(
            err.kind(),
            ErrorKind::DisplayHelp
                | ErrorKind::DisplayVersion
                | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
        );
        if let Some(line) = iocurve::cli::clap_errors::one_line_error(&err) {
            let _ = iocurve::units::escape::line(&line).len();
        } else if let Some(text) = iocurve::cli::clap_errors::plain_usage(&err) {
            let _ = iocurve::units::escape::text(&text).len();
        }
        !shown
    }))
    .map_err(|_| "the parser or its error panicked".to_string())
}

/// Values every kind of option should survive.
fn odd_values() -> Vec<&'static str> {
    vec![
        "0",
        "1",
        "511",
        "512",
        "513",
        "-1",
        "1e9",
        "nan",
        "inf",
        "-inf",
        "",
        " ",
        "99999999999999999999G",
        "18446744073709551615",
        "16777216T",
        "١٢",
        "4k ",
        "0x10",
        "1.5k",
        "3k",
        "0.0001",
        "4M",
    ]
}

/// A valid value that would only make a case run long (a duration of
/// minutes, hundreds of write-and-verify cycles) is made short; every other
/// odd value stays as it is.
fn keep_short(slot: &Slot, value: &str) -> String {
    if slot.value_name == "DURATION" {
        if let Ok(n) = value.parse::<u64>()
            && n > 1
        {
            return format!("{n}ms");
        }
        return match value {
            "4M" | "3k" | "1.5k" => value.replace(['M', 'k'], "") + "ms",
            other => other.to_string(),
        };
    }
    if slot.long.as_deref() == Some("cycles") && value.parse::<u32>().is_ok_and(|n| n > 4) {
        return "4".to_string();
    }
    value.to_string()
}

/// Odd simulated cards: a bad value for each of its keys.
fn odd_sims() -> Vec<&'static str> {
    vec![
        "sim:",
        "sim:size=0",
        "sim:size=511",
        "sim:size=3000",
        "sim:size=1M",
        "sim:size=99999999999999999999G",
        "sim:size=64M,au=0",
        "sim:size=64M,au=512",
        "sim:size=64M,page=0",
        "sim:size=64M,page=3k",
        "sim:size=64M,open_au=0",
        "sim:size=64M,read=0MB/s",
        "sim:size=64M,write=1B/s",
        "sim:size=64M,cmd=nan",
        "sim:size=64M,cache=99999999999999999999G",
        "sim:size=64M,real=0",
        "sim:size=64M,link=1B/s",
        "sim:size=64M,burst=inf",
    ]
}

/// Values that keep a run short where a command has the option; replaced
/// when the slot itself is the one being tried.
const LIMITS: [(&str, &str); 21] = [
    ("span", "1M"),
    ("time", "50ms"),
    ("ramp", "0"),
    ("repeat", "1"),
    ("pass-time", "50ms"),
    ("sample-size", "64k"),
    ("samples", "4"),
    ("access-reads", "2"),
    ("cycles", "1"),
    ("bytes", "1M"),
    ("interval", "10ms"),
    ("point-bytes", "256k"),
    ("sizes", "4k"),
    ("count", "2"),
    ("flush", "1M"),
    ("size", "2M"),
    ("last", "1"),
    ("rw", "read"),
    ("bs", "64k"),
    ("chunk", "64k"),
    ("mark", "512k"),
];

/// One option that takes a value, or one positional slot.
#[derive(Debug, Clone)]
struct Slot {
    /// `--name`, or empty for a positional.
    long: Option<String>,
    value_name: String,
    required: bool,
}

#[derive(Debug)]
struct Leaf {
    path: Vec<String>,
    options: Vec<Slot>,
    positionals: Vec<Slot>,
    /// Long names of the options that take no value.
    flags: Vec<String>,
}

/// Every runnable (sub)command, with its slots; globals included.
fn leaves(cmd: &clap::Command, path: &[String], out: &mut Vec<Leaf>) {
    let subs: Vec<&clap::Command> = cmd.get_subcommands().collect();
    if !path.is_empty() && (subs.is_empty() || !cmd.is_subcommand_required_set()) {
        let mut leaf = Leaf {
            path: path.to_vec(),
            options: Vec::new(),
            positionals: Vec::new(),
            flags: Vec::new(),
        };
        for arg in cmd.get_arguments() {
            if !arg.get_action().takes_values() {
                leaf.flags.extend(arg.get_long().map(str::to_string));
                continue;
            }
            let slot = Slot {
                long: arg.get_long().map(str::to_string),
                value_name: arg
                    .get_value_names()
                    .and_then(|v| v.first())
                    .map_or_else(|| arg.get_id().to_string(), |s| s.to_string())
                    .to_uppercase(),
                required: arg.is_required_set(),
            };
            match arg.is_positional() {
                true => leaf.positionals.push(slot),
                false if slot.long.is_some() => leaf.options.push(slot),
                false => {}
            }
        }
        out.push(leaf);
    }
    for sub in subs {
        if sub.get_name() == "help" {
            continue;
        }
        let mut p = path.to_vec();
        p.push(sub.get_name().to_string());
        leaves(sub, &p, out);
    }
}

/// What a case runs against.
#[derive(Debug, Clone, Copy)]
enum Target {
    /// A file of this many bytes, made for the case.
    File(usize),
    Sim,
    Dir,
    /// The test's loop device of random bytes (never given a write flag;
    /// its bytes are compared at the end).
    Loop,
}

/// The loop device every `Target::Loop` case names, when one could be made.
static LOOP: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// The targets cases are drawn from: the loop device only where it exists.
fn targets() -> Vec<Target> {
    let mut all = vec![
        Target::File(3000),
        Target::File(1 << 20),
        Target::Sim,
        Target::Dir,
    ];
    if LOOP.get().is_some() {
        all.push(Target::Loop);
    }
    all
}

/// An odd value in one slot: an option (by index in the leaf) or a
/// positional.
#[derive(Debug, Clone)]
enum Probe {
    Option(usize, String),
    Positional(usize, String),
}

#[derive(Debug, Clone)]
struct Case {
    leaf: usize,
    target: Target,
    /// None: the short command line alone.
    probes: Vec<Probe>,
    destructive: bool,
    no_save: bool,
    /// `--option=value` rather than `--option value`.
    joined: bool,
}

/// Whether a positional slot is where the target goes.
fn is_target_slot(slot: &Slot) -> bool {
    matches!(slot.value_name.as_str(), "TARGET" | "SRC" | "DIR" | "FILE")
}

/// The target's name on the command line, made in `dir`.
/// How a case names its target (relative to the case's directory).
fn target_name(target: Target) -> String {
    match target {
        Target::File(_) => "target.bin".to_string(),
        Target::Sim => "sim:size=64M".to_string(),
        Target::Loop => LOOP.get().expect("made before the cases").clone(),
        Target::Dir => "d".to_string(),
    }
}

/// Makes the case's directory and, in it, the file or directory its
/// target names: only for the cases that run as a process (making a
/// 1 MiB file for each of the thousands the parser refuses in this
/// process took longer than refusing them).
fn make_target(target: Target, dir: &Path) {
    std::fs::create_dir_all(dir).expect("make the case directory");
    match target {
        Target::File(len) => {
            std::fs::write(dir.join(target_name(target)), vec![0x5a; len])
                .expect("write the target file");
        }
        Target::Dir => {
            std::fs::create_dir_all(dir.join(target_name(target)))
                .expect("make the target directory");
        }
        Target::Sim | Target::Loop => {}
    }
}

/// The argument list of a case, run in `dir`.
fn command_line(leaves: &[Leaf], case: &Case) -> Vec<String> {
    let leaf = &leaves[case.leaf];
    let mut args: Vec<String> = leaf.path.clone();
    let target = target_name(case.target);
    let positional = |i: usize| {
        case.probes.iter().find_map(|p| match p {
            Probe::Positional(at, v) if *at == i => Some(v.clone()),
            _ => None,
        })
    };
    let last_probed = case
        .probes
        .iter()
        .filter_map(|p| match p {
            Probe::Positional(at, _) => Some(*at),
            _ => None,
        })
        .max();
    let mut target_given = false;
    for (i, slot) in leaf.positionals.iter().enumerate() {
        let value = match positional(i) {
            Some(v) => Some(v),
            None if is_target_slot(slot) && !target_given => Some(target.clone()),
            // A second target (copy's destination) is a file not made yet.
            None if is_target_slot(slot) => Some("new.bin".into()),
            // A slot left out before a probed one would take its value.
            None if slot.required || last_probed.is_some_and(|at| at > i) => Some("1".into()),
            None => None,
        };
        target_given |= is_target_slot(slot);
        args.extend(value);
    }
    let option = |i: usize| {
        case.probes.iter().find_map(|p| match p {
            Probe::Option(at, v) if *at == i => Some(v.clone()),
            _ => None,
        })
    };
    let mut probing_db = false;
    for (i, slot) in leaf.options.iter().enumerate() {
        let long = slot.long.as_deref().expect("an option has a long name");
        let probed = option(i);
        probing_db |= long == "db" && probed.is_some();
        let joined = probed.is_some()
            && (case.joined || probed.as_ref().is_some_and(|v| v.starts_with('-')));
        let value = probed.or_else(|| {
            LIMITS
                .iter()
                .find(|(name, _)| *name == long)
                .map(|(_, v)| v.to_string())
        });
        match (value, joined) {
            (Some(v), true) => args.push(format!("--{long}={v}")),
            (Some(v), false) => args.extend([format!("--{long}"), v]),
            (None, _) => {}
        }
    }
    // Only the commands that save take --no-save, only those that save or
    // read runs take --db.
    let takes_db = leaf.options.iter().any(|o| o.long.as_deref() == Some("db"));
    let takes_no_save = leaf.flags.iter().any(|f| f == "no-save");
    if !probing_db {
        match (case.no_save && takes_no_save, takes_db) {
            (true, _) => args.push("--no-save".into()),
            (false, true) => args.extend(["--db".into(), "r.db".into()]),
            (false, false) => {}
        }
    }
    let positional_probed = last_probed.is_some();
    let file_target = matches!(case.target, Target::File(_)) && !positional_probed;
    if case.destructive && file_target && leaf.flags.iter().any(|f| f == "destructive") {
        args.push("--destructive".into());
    }
    args
}

/// What one process did.
struct Outcome {
    code: Option<i32>,
    stderr: String,
    elapsed: Duration,
    hung: bool,
}

fn run(args: &[String], dir: &Path) -> Outcome {
    let start = Instant::now();
    let mut child = common::iocurve_std()
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start iocurve");
    let stderr = child.stderr.take().expect("piped stderr");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut std::io::BufReader::new(stderr), &mut text);
        text
    });
    let mut hung = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for iocurve") {
            break status;
        }
        if start.elapsed() > TIMEOUT {
            hung = true;
            let _ = child.kill();
            break child.wait().expect("reap iocurve");
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    Outcome {
        code: status.code(),
        stderr: reader.join().unwrap_or_default(),
        elapsed: start.elapsed(),
        hung,
    }
}

/// Every slot of every leaf gets `per_slot` odd values (each on a target
/// chosen at random); then `pairs` cases per leaf put odd values in two
/// slots at once. Shuffled, so that slow cases spread over the workers.
fn plan(leaves: &[Leaf], rng: &mut fastrand::Rng, per_slot: usize, pairs: usize) -> Vec<Case> {
    let targets = targets();
    let mut cases = Vec::new();
    let mut case = |leaf: usize, target: Target, probes: Vec<Probe>, rng: &mut fastrand::Rng| {
        cases.push(Case {
            leaf,
            target,
            probes,
            destructive: rng.u8(..4) == 0,
            no_save: rng.bool(),
            joined: rng.bool(),
        });
    };
    for (li, leaf) in leaves.iter().enumerate() {
        let mut probes = Vec::new();
        for (i, slot) in leaf.options.iter().enumerate() {
            let mut values = odd_values();
            rng.shuffle(&mut values);
            for v in values.into_iter().take(per_slot) {
                probes.push(Probe::Option(i, keep_short(slot, v)));
            }
        }
        for (i, slot) in leaf.positionals.iter().enumerate() {
            let mut values: Vec<&str> = odd_values();
            if is_target_slot(slot) {
                values.extend(odd_sims());
            }
            rng.shuffle(&mut values);
            for v in values.into_iter().take(per_slot.saturating_mul(2)) {
                probes.push(Probe::Positional(i, v.to_string()));
            }
        }
        for &target in &targets {
            case(li, target, Vec::new(), rng);
        }
        let mut pair_pool = probes.clone();
        for probe in probes {
            case(li, targets[rng.usize(..targets.len())], vec![probe], rng);
        }
        if pair_pool.len() >= 2 {
            for _ in 0..pairs {
                rng.shuffle(&mut pair_pool);
                let (a, b) = (pair_pool[0].clone(), pair_pool[1].clone());
                let same = match (&a, &b) {
                    (Probe::Option(x, _), Probe::Option(y, _)) => x == y,
                    (Probe::Positional(x, _), Probe::Positional(y, _)) => x == y,
                    _ => false,
                };
                if !same {
                    case(li, targets[rng.usize(..targets.len())], vec![a, b], rng);
                }
            }
        }
    }
    rng.shuffle(&mut cases);
    cases
}

/// Why a process's end counts as a failure, if it does.
fn verdict(out: &Outcome) -> Option<String> {
    if out.hung {
        return Some(format!("hung (killed after {TIMEOUT:?})"));
    }
    // The panic hook's line, a measuring thread's, or the default hook's.
    let panicked = out.stderr.contains("a bug in iocurve") || out.stderr.contains("panicked");
    if panicked || out.code == Some(101) {
        return Some("panicked".into());
    }
    match out.code {
        Some(c) if ALLOWED.contains(&c) => None,
        Some(c) => Some(format!("exit code {c}")),
        None => Some("killed by a signal".into()),
    }
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Everything the workers gather.
#[derive(Default)]
struct Tally {
    counts: BTreeMap<String, usize>,
    failures: Vec<String>,
    slowest: Vec<(Duration, String)>,
}

#[test]
fn no_generated_command_line_panics_hangs_or_fails_internally() {
    let seed = env_or("IOCURVE_FUZZ_SEED", DEFAULT_SEED);
    let per_slot = env_or("IOCURVE_FUZZ_VALUES", DEFAULT_VALUES_PER_SLOT);
    let pairs = env_or("IOCURVE_FUZZ_PAIRS", DEFAULT_PAIRS_PER_COMMAND);
    let show = std::env::var_os("IOCURVE_FUZZ_SHOW").is_some();
    let mut cmd = Cli::command();
    cmd.build();
    let mut all = Vec::new();
    leaves(&cmd, &[], &mut all);
    assert!(all.len() > 20, "the walk found only {} commands", all.len());
    let device = match common::LoopDevice::new(16 << 20) {
        Ok(d) => {
            let _ = LOOP.set(d.path().to_string());
            Some(d)
        }
        Err(why) => {
            eprintln!("no loop device among the targets: {why}");
            None
        }
    };
    let device_bytes = device.as_ref().map(|d| d.contents());
    let mut rng = fastrand::Rng::with_seed(seed);
    let cases = plan(&all, &mut rng, per_slot, pairs);
    let slots: usize = all
        .iter()
        .map(|l| l.options.len() + l.positionals.len())
        .sum();
    eprintln!(
        "fuzz seed {seed}: {} commands, {slots} slots, {} cases",
        all.len(),
        cases.len()
    );

    let root = tempfile::tempdir().expect("a temporary directory");
    let queue = Mutex::new(cases.into_iter().enumerate());
    let tally = Mutex::new(Tally::default());
    let work = || {
        loop {
            // Taken in a statement of its own: in `while let` the guard
            // would live through the body, and the workers ran one at a
            // time.
            let next = queue.lock().unwrap().next();
            let Some((n, case)) = next else { break };
            let args = command_line(&all, &case);
            let shown = format!("iocurve {}", quoted(&args));
            match refused_by_parser(&args) {
                Ok(true) if n % SPAWN_REFUSED_EVERY != 0 => {
                    *tally
                        .lock()
                        .unwrap()
                        .counts
                        .entry("2 (parser, in this process)".into())
                        .or_default() += 1;
                    continue;
                }
                Ok(_) => {}
                Err(why) => {
                    tally
                        .lock()
                        .unwrap()
                        .failures
                        .push(format!("{why}: {shown}"));
                    continue;
                }
            }
            let dir: PathBuf = root.path().join(format!("case{n}"));
            make_target(case.target, &dir);
            let out = run(&args, &dir);
            let _ = std::fs::remove_dir_all(&dir);
            let code = out.code.map_or("signal".to_string(), |c| c.to_string());
            if show && out.code != Some(2) {
                let errors: Vec<&str> = out
                    .stderr
                    .lines()
                    .filter(|l| l.starts_with("Error"))
                    .collect();
                eprintln!("exit {code}: {shown} => {}", errors.join(" | "));
            }
            let mut t = tally.lock().unwrap();
            *t.counts.entry(code).or_default() += 1;
            if let Some(why) = verdict(&out) {
                let tail: Vec<&str> = out.stderr.lines().rev().take(6).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                t.failures
                    .push(format!("{why}: {shown}\n    {}", tail.join("\n    ")));
            }
            t.slowest.push((out.elapsed, shown));
        }
    };
    // Four at a time: most cases wait on a process or its I/O, not on a
    // CPU, and two workers left the CPUs half idle.
    std::thread::scope(|s| {
        for _ in 0..WORKERS {
            s.spawn(work);
        }
    });
    let mut t = tally.into_inner().unwrap();
    t.slowest.sort_by_key(|s| std::cmp::Reverse(s.0));
    for (elapsed, line) in t.slowest.iter().take(3) {
        eprintln!("slowest: {:.2}s {line}", elapsed.as_secs_f64());
    }
    let total: usize = t.counts.values().sum();
    let summary: Vec<String> = t
        .counts
        .iter()
        .map(|(c, n)| format!("exit {c}: {n}"))
        .collect();
    eprintln!("{total} invocations; {}", summary.join(", "));
    if let (Some(d), Some(bytes)) = (&device, &device_bytes) {
        assert!(
            d.contents() == *bytes,
            "the loop device {} changed, though no case gave it a write flag",
            d.path()
        );
    }
    assert!(
        t.failures.is_empty(),
        "{} of {total} generated command lines failed (seed {seed}; IOCURVE_FUZZ_SEED={seed} repeats them):\n{}",
        t.failures.len(),
        t.failures.join("\n")
    );
}

/// The argument list as a shell would take it.
fn quoted(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.:=,/".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
