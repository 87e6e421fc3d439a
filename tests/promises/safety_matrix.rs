//! The safety promise over the whole command surface, not by example.
//!
//! Every subcommand that the clap definition gives `--preserve` or
//! `--destructive` is found by walking the definition; each must have write
//! cases below (a new writing command without one fails
//! `every_writing_command_has_cases`). Each case runs on a loop device full
//! of random bytes three ways: with `--preserve` (the bytes must be the same
//! afterwards), with neither flag (refused, or a read-only command, and the
//! same bytes), and with `--destructive` (the bytes must change, which
//! proves the case really writes and the first two proved something). A
//! second test kills each `--preserve` case with SIGKILL at seeded random
//! moments, runs `iocurve recover`, and compares the bytes again. A third
//! runs every `flash` subcommand (found the same way) with `--preserve` on
//! a fake card, where the capacity search goes on past its first round and
//! journals as it learns where to write.

use crate::common;

use clap::CommandFactory;
use common::{LoopDevice, MIB, Tmpfs, iocurve, is_root, skipped};
use std::collections::BTreeSet;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// 40 MiB: `flash class --au 1M`, the largest writer here, needs that
/// much; every byte more is copied, journalled and compared again in each
/// of hundreds of runs.
const DEVICE: u64 = 40 * MIB;

/// One way of making a command write: the subcommand path and its
/// arguments, `{dev}` standing for the device, `{dev2}` for a second one,
/// `{img}` for an image file.
pub(crate) struct Case {
    pub(crate) leaf: &'static str,
    pub(crate) args: &'static str,
    /// Writes when allowed (false: a read-only analysis that still takes
    /// the flags).
    pub(crate) writes: bool,
    /// Refuses `--preserve` by design, with a reason (exit 2, nothing written).
    pub(crate) refuses_preserve: bool,
    /// Without a flag it measures reads only and says the writes were
    /// skipped (rather than refusing).
    reads_without_flag: bool,
}

const fn case(leaf: &'static str, args: &'static str) -> Case {
    Case {
        leaf,
        args,
        writes: true,
        refuses_preserve: false,
        reads_without_flag: false,
    }
}

pub(crate) fn cases() -> Vec<Case> {
    vec![
        case("run", "{dev} --rw write --size 2M --span 8M --ramp 0"),
        case(
            "run",
            "{dev} --rw randwrite --size 2M --span 8M --ramp 0 --bs 4k",
        ),
        case("run", "{dev} --rw rw --size 2M --span 8M --ramp 0 --mix 30"),
        case(
            "run",
            "{dev} --rw randrw --size 2M --span 8M --ramp 0 --engine uring --qd 4",
        ),
        case(
            "run",
            "{dev} --rw write --size 2M --span 8M --ramp 0 --buffered",
        ),
        case(
            "run",
            "{dev} --rw write --size 2M --span 8M --ramp 0 --verify --seed 7",
        ),
        case(
            "run",
            "{dev} --rw write --size 1M --ramp 0 --offset 3M --span 4M",
        ),
        case(
            "run",
            "{dev} {dev2} --parallel --rw write --size 2M --span 8M --ramp 0",
        ),
        Case {
            reads_without_flag: true,
            ..case("profile", "{dev} --size 8M --time 100ms --repeat 1")
        },
        Case {
            reads_without_flag: true,
            ..case(
                "curve",
                "{dev} --rw write,randwrite --sizes 4k,64k --repeat 1 --time 50ms",
            )
        },
        Case {
            reads_without_flag: true,
            ..case(
                "curve",
                "{dev} --rw write --sizes 512,768,4k --repeat 1 --time 50ms",
            )
        },
        case("stream", "{dev} --rw write --time 500ms --rate 4MB/s"),
        case("sustain", "{dev} --bytes 4M"),
        Case {
            reads_without_flag: true,
            ..case("surface", "{dev} --samples 4 --access-reads 0")
        },
        case("copy", "{img} {dev}"),
        case("copy", "{img} {dev} --sync each --bs 64k"),
        Case {
            refuses_preserve: true,
            ..case("endure", "{dev} --cycles 1 --span 2M")
        },
        // flash align only reads; it takes the write permissions so one
        // set of flags serves every flash test, and must write nothing
        // whichever it is given.
        Case {
            writes: false,
            ..case("flash align", "{dev}")
        },
        case("flash open-au", "{dev} --au 1M"),
        case("flash cache", "{dev}"),
        case("flash capacity", "{dev} --flush 4M"),
        case("flash class", "{dev} --au 1M"),
    ]
}

/// Every leaf subcommand (space-separated path) with `--preserve` or
/// `--destructive`, from the clap definition.
fn writing_commands() -> BTreeSet<String> {
    common::leaf_commands(|sub| {
        sub.get_arguments()
            .any(|a| matches!(a.get_long(), Some("preserve") | Some("destructive")))
    })
}

#[test]
fn every_writing_command_has_cases() {
    let listed: BTreeSet<String> = cases().iter().map(|c| c.leaf.to_string()).collect();
    let found = writing_commands();
    assert!(found.len() >= 10, "the walk found {found:?}");
    let missing: Vec<&String> = found.difference(&listed).collect();
    assert!(
        missing.is_empty(),
        "commands that take --preserve/--destructive without a case in tests/promises/safety_matrix.rs: {missing:?}"
    );
    let stale: Vec<&String> = listed.difference(&found).collect();
    assert!(
        stale.is_empty(),
        "cases for commands that no longer write: {stale:?}"
    );
}

/// What keeps the targets alive: loop devices, or a tmpfs holding files.
enum Holder {
    Devices { _held: Box<[LoopDevice; 2]> },
    Files { _held: Tmpfs },
}

/// The two targets a case runs on (block devices or regular files), an
/// image to copy, and the journal directory.
struct Bench {
    targets: [std::path::PathBuf; 2],
    _holder: Holder,
    img: tempfile::NamedTempFile,
    journals: tempfile::TempDir,
}

impl Bench {
    fn devices() -> Result<Bench, String> {
        let devs = [LoopDevice::new(DEVICE)?, LoopDevice::new(DEVICE + MIB)?];
        let targets = [devs[0].dev.clone(), devs[1].dev.clone()];
        Bench::new(
            targets,
            Holder::Devices {
                _held: Box::new(devs),
            },
        )
    }

    fn files() -> Result<Bench, String> {
        let tmpfs = Tmpfs::mount("size=160m")?;
        let targets = [tmpfs.path().join("card.img"), tmpfs.path().join("disk.img")];
        for (i, t) in targets.iter().enumerate() {
            std::fs::write(t, random(DEVICE + i as u64 * MIB, i as u64))
                .map_err(|e| e.to_string())?;
        }
        Bench::new(targets, Holder::Files { _held: tmpfs })
    }

    fn new(targets: [std::path::PathBuf; 2], holder: Holder) -> Result<Bench, String> {
        let mut img = tempfile::NamedTempFile::new().map_err(|e| e.to_string())?;
        std::io::Write::write_all(&mut img, &random(4 * MIB, 99)).map_err(|e| e.to_string())?;
        // Beside the repository's build, on a disk: the journal must not be
        // in memory (tmpfs) nor on the target.
        let journals =
            tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).map_err(|e| e.to_string())?;
        Ok(Bench {
            targets,
            _holder: holder,
            img,
            journals,
        })
    }

    fn shown(&self, i: usize) -> String {
        self.targets[i].display().to_string()
    }

    fn argv(&self, case: &Case) -> Vec<String> {
        let mut argv: Vec<String> = case.leaf.split(' ').map(String::from).collect();
        for a in case.args.split(' ') {
            argv.push(match a {
                "{dev}" => self.shown(0),
                "{dev2}" => self.shown(1),
                "{img}" => self.img.path().display().to_string(),
                other => other.to_string(),
            });
        }
        argv.push("--no-save".into());
        argv
    }

    fn with_preserve(&self, case: &Case) -> Vec<String> {
        let mut argv = self.argv(case);
        argv.extend(["--preserve".into(), "--journal-dir".into()]);
        argv.push(self.journals.path().display().to_string());
        argv
    }

    /// Both targets' bytes (a device's after its buffers are flushed).
    fn contents(&self) -> (Vec<u8>, Vec<u8>) {
        let read = |p: &std::path::Path| {
            if matches!(self._holder, Holder::Devices { .. }) {
                let _ = common::sh("blockdev", &["--flushbufs", p.to_str().unwrap()]);
            }
            std::fs::read(p).expect("read the target")
        };
        (read(&self.targets[0]), read(&self.targets[1]))
    }

    /// New random bytes on both targets (after a destructive case).
    fn refill(&self, seed: u64) {
        for (i, t) in self.targets.iter().enumerate() {
            let size = DEVICE + i as u64 * MIB;
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(t)
                .expect("open the target");
            std::io::Write::write_all(&mut f, &random(size, seed + i as u64)).expect("refill");
            if matches!(self._holder, Holder::Files { .. }) {
                f.set_len(size).expect("size");
            }
        }
    }
}

fn random(len: u64, seed: u64) -> Vec<u8> {
    let mut data = vec![0u8; len as usize];
    fastrand::Rng::with_seed(seed).fill(&mut data);
    data
}

fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    if a.len() != b.len() {
        return Some(a.len().min(b.len()));
    }
    a.iter().zip(b).position(|(x, y)| x != y)
}

/// Exit code, stdout and stderr together, and how long it took.
fn run(argv: &[String]) -> (Option<i32>, String, Duration) {
    let started = Instant::now();
    let out = iocurve().args(argv).output().expect("iocurve runs");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), said, started.elapsed())
}

fn assert_unchanged(bench: &Bench, before: &(Vec<u8>, Vec<u8>), what: &str) {
    let now = bench.contents();
    if let Some(at) = first_difference(&before.0, &now.0) {
        panic!("{what}: {} changed at byte {at}", bench.shown(0));
    }
    if let Some(at) = first_difference(&before.1, &now.1) {
        panic!("{what}: {} changed at byte {at}", bench.shown(1));
    }
}

/// The run completed. A flash command may end with exit code 5, a verdict
/// on what it measured (a loop device on a loaded host can miss A2's read
/// IOPS): this matrix judges what happened to the bytes, not the device.
fn assert_completed(code: Option<i32>, case: &Case, what: &str) {
    let verdict_only = case.leaf.starts_with("flash ") && code == Some(5);
    assert!(code == Some(0) || verdict_only, "exit {code:?}: {what}");
}

#[test]
fn preserve_restores_every_byte_and_no_flag_refuses_on_every_writing_command() {
    match Bench::devices() {
        Ok(bench) => every_case_on(&bench, "block devices"),
        Err(why) => skipped(&why),
    }
}

#[test]
fn the_same_on_regular_files() {
    match Bench::files() {
        Ok(bench) => every_case_on(&bench, "regular files"),
        Err(why) => skipped(&why),
    }
}

fn every_case_on(bench: &Bench, kind: &str) {
    let mut covered = 0;
    for (i, case) in cases().iter().enumerate() {
        let before = bench.contents();
        let shown = format!("iocurve {} {}", case.leaf, case.args);

        let (code, err, _) = run(&bench.with_preserve(case));
        match case.refuses_preserve {
            true => {
                assert_eq!(code, Some(2), "{shown} --preserve: {err}");
                assert!(err.contains("--preserve"), "{shown}: {err}");
            }
            false => assert_completed(code, case, &format!("{shown} --preserve: {err}")),
        }
        assert_unchanged(bench, &before, &format!("{shown} --preserve"));
        let left = std::fs::read_dir(bench.journals.path()).unwrap().count();
        assert_eq!(left, 0, "{shown} --preserve left a journal behind");

        let (code, err, _) = run(&bench.argv(case));
        match case.writes {
            true if case.reads_without_flag => {
                assert_completed(
                    code,
                    case,
                    &format!("{shown} without a flag reads only: {err}"),
                );
                assert!(
                    err.contains("write tests skipped") && err.contains("--preserve"),
                    "{shown}: says the writes were skipped and how to allow them: {err}"
                );
            }
            true => {
                assert_eq!(
                    code,
                    Some(2),
                    "{shown} without a flag must be refused: {err}"
                );
                assert!(
                    err.contains("--preserve") && err.contains("--destructive"),
                    "{shown}: the refusal names both fixes: {err}"
                );
            }
            false => assert_completed(code, case, &format!("{shown} reads only: {err}")),
        }
        assert_unchanged(bench, &before, &format!("{shown} (no flag)"));

        let mut argv = bench.argv(case);
        argv.push("--destructive".into());
        let (code, err, _) = run(&argv);
        assert!(
            matches!(code, Some(0) | Some(4) | Some(5)),
            "{shown} --destructive: {code:?} {err}"
        );
        let after = bench.contents();
        let changed = before != after;
        assert_eq!(
            changed, case.writes,
            "{shown} --destructive: the case must write (else the checks above prove nothing)"
        );
        if changed {
            bench.refill(1000 + i as u64);
        }
        covered += 1;
    }
    eprintln!(
        "safety matrix on {kind}: {covered} cases over {} commands, each with --preserve, no flag and --destructive",
        writing_commands().len()
    );
}

/// Seeded kill moments over each case's own duration; the seed is printed
/// so that a failure can be replayed.
#[test]
fn sigkill_at_any_moment_then_recover_restores_every_byte() {
    let bench = match Bench::devices() {
        Ok(b) => b,
        Err(why) => return skipped(&why),
    };
    if !is_root() {
        return skipped("not root");
    }
    let seed = std::env::var("IOCURVE_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5afe_u64);
    eprintln!("kill moments seeded with {seed} (IOCURVE_KILL_SEED replays)");
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut kills = 0;
    let mut tally = std::collections::BTreeMap::<String, u32>::new();
    for case in cases().iter().filter(|c| c.writes && !c.refuses_preserve) {
        let shown = format!("iocurve {} {}", case.leaf, case.args);
        let argv = bench.with_preserve(case);
        // How long the whole run takes here, so kill moments cover it.
        let (_, _, whole) = run(&argv);
        for _ in 0..3 {
            let before = bench.contents();
            let at = Duration::from_micros(rng.u64(0..=whole.as_micros() as u64));
            let mut child = common::iocurve_std()
                .args(&argv)
                .env("XDG_DATA_HOME", bench.journals.path().join("data"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn iocurve");
            std::thread::sleep(at);
            let _ = child.kill();
            let status = child.wait().expect("reap iocurve");
            let moment = match status.code() {
                Some(_) => "finished before the kill",
                None => "killed",
            };
            let out = recover_in(bench.journals.path());
            assert!(
                out.status.success(),
                "{shown} killed after {at:?}: recover failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_unchanged(
                &bench,
                &before,
                &format!("{shown} killed after {at:?}, then recovered"),
            );
            *tally.entry(moment.to_string()).or_default() += 1;
            kills += 1;
        }
    }
    eprintln!("sigkill: {kills} runs, {tally:?}");
    assert!(
        tally.get("killed").copied().unwrap_or(0) * 2 >= kills,
        "most kill moments must land while the command runs: {tally:?}"
    );
}

/// The `flash` subcommands, from the clap definition.
fn flash_commands() -> Vec<String> {
    iocurve::cli::Cli::command()
        .find_subcommand("flash")
        .map(|f| {
            f.get_subcommands()
                .map(|c| c.get_name().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The long options of `flash NAME`.
fn flash_options(name: &str) -> Vec<String> {
    iocurve::cli::Cli::command()
        .find_subcommand("flash")
        .and_then(|f| f.find_subcommand(name).cloned())
        .map(|c| {
            c.get_arguments()
                .filter_map(|a| a.get_long().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn every_flash_command_with_preserve_leaves_a_fake_card_as_it_was() {
    // 64 MiB claimed; writes beyond 40 MiB + 12 KiB fail with EIO while
    // reads there give back the old bytes.
    let (claimed, real) = (64 * MIB, 40 * MIB + 12 * 1024);
    let dev = match common::faultdev::FaultDevice::new(claimed, &[], &[(real, claimed - real)], 0) {
        Ok(d) => d,
        Err(why) => return skipped(&why),
    };
    let journals = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let before = std::fs::read(&dev.backing).unwrap();
    let commands = flash_commands();
    assert!(commands.len() >= 5, "{commands:?}");
    let journal_dir = journals.path().to_str().unwrap();
    for name in &commands {
        // Each subcommand gets the options it takes (align, which only
        // reads, takes none of these and must leave the card as it was too).
        let takes = flash_options(name);
        let wanted: [&[&str]; 5] = [
            &["--au", "1M"],
            &["--flush", "4M"],
            &["--seed", "3"],
            &["--preserve"],
            &["--journal-dir", journal_dir],
        ];
        let argv: Vec<String> = ["--no-save", "flash", name, dev.dev.to_str().unwrap()]
            .into_iter()
            .chain(
                wanted
                    .into_iter()
                    .filter(|o| takes.contains(&o[0][2..].to_string()))
                    .flatten()
                    .copied(),
            )
            .map(String::from)
            .collect();
        let (code, said, took) = run(&argv);
        // A fake card may fail a test's writes (exit 3) or be named (5);
        // either way the bytes must be back.
        assert!(
            matches!(code, Some(0) | Some(3) | Some(5)),
            "flash {name}: {code:?} {said}"
        );
        let now = std::fs::read(&dev.backing).unwrap();
        if let Some(at) = first_difference(&before, &now) {
            panic!("flash {name} --preserve on a fake card: byte {at} changed ({said})");
        }
        let left = std::fs::read_dir(journals.path()).unwrap().count();
        assert_eq!(left, 0, "flash {name} left a journal: {said}");
        eprintln!(
            "flash {name} --preserve on a fake card: exit {code:?} in {took:?}, every byte back"
        );
    }
}

/// `iocurve recover --journal-dir dir`, run to its end.
fn recover_in(dir: &std::path::Path) -> std::process::Output {
    // Wide: its sentences are searched for, and a narrow terminal would
    // break them wherever the (random) paths before them end.
    common::iocurve_wide()
        .args(["recover", "--journal-dir"])
        .arg(dir)
        .output()
        .expect("recover runs")
}

/// The state words of the journals in `dir` ("FILLING", "ARMED", "DONE"),
/// or "none" when there are none: which phase a `recover` ran beside.
fn journal_phase(dir: &std::path::Path) -> String {
    let mut states: Vec<String> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_else(|_| Vec::new())
        .into_iter()
        .filter(|p: &std::path::PathBuf| p.extension().is_some_and(|x| x == "iocj"))
        .map(|p| {
            let head = std::fs::read(&p).unwrap_or_default();
            let word = head.get(8..16).unwrap_or_default();
            String::from_utf8_lossy(word)
                .trim_end_matches('\0')
                .to_string()
        })
        .collect();
    states.sort();
    states.dedup();
    if states.is_empty() {
        "none".into()
    } else {
        states.join("+")
    }
}

/// Spawns iocurve with `argv`, each journal chunk slowed by `delay_ms` so
/// that saving and restoring last long enough to be met.
fn spawn_slowed(argv: &[String], delay_ms: u32) -> std::process::Child {
    common::iocurve_std()
        .args(argv)
        .env("IOCURVE_TEST_JOURNAL_DELAY_MS", delay_ms.to_string())
        // Sentences are searched for in what it says: no line breaks.
        .env("COLUMNS", "1000")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn iocurve")
}

/// Issue 24, point 1: `recover` run again and again beside every
/// `--preserve` case, at seeded moments while it saves, arms, writes and
/// restores, must leave the live test's journals alone: the test finishes
/// as if alone and every byte is as before.
#[test]
fn recover_beside_every_preserve_case_leaves_it_alone_and_loses_nothing() {
    let bench = match Bench::devices() {
        Ok(b) => b,
        Err(why) => return skipped(&why),
    };
    let seed = std::env::var("IOCURVE_RECOVER_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x2ec0_u64);
    eprintln!("recover moments seeded with {seed} (IOCURVE_RECOVER_SEED replays)");
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut phases = std::collections::BTreeMap::<String, u32>::new();
    let (mut recovers, mut cases_run) = (0, 0);
    let mut per_command = std::collections::BTreeMap::<&str, u32>::new();
    for case in cases().iter().filter(|c| c.writes && !c.refuses_preserve) {
        let shown = format!("iocurve {} {}", case.leaf, case.args);
        let before = bench.contents();
        let argv = bench.with_preserve(case);
        let mut child = spawn_slowed(&argv, 6);
        loop {
            std::thread::sleep(Duration::from_millis(rng.u64(1..25)));
            let phase = journal_phase(bench.journals.path());
            let out = recover_in(bench.journals.path());
            assert!(
                out.status.success(),
                "{shown}: recover beside it ({phase}) failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            *phases.entry(phase).or_default() += 1;
            *per_command.entry(case.leaf).or_default() += 1;
            recovers += 1;
            if child.try_wait().expect("poll iocurve").is_some() {
                break;
            }
        }
        let out = child.wait_with_output().expect("reap iocurve");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{shown} with recover beside it: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_unchanged(&bench, &before, &format!("{shown} with recover beside it"));
        assert_eq!(journal_phase(bench.journals.path()), "none", "{shown}");
        cases_run += 1;
    }
    eprintln!(
        "recover beside {cases_run} preserve cases: {recovers} recovers, by the journals' state then: {phases:?}; by command: {per_command:?}; 0 bytes lost"
    );
    for phase in ["FILLING", "ARMED"] {
        assert!(
            phases.keys().any(|k| k.contains(phase)),
            "no recover met a journal {phase}: {phases:?}"
        );
    }
}

/// A target of random bytes on its own tmpfs, and journals on a real ext4
/// file system of their own (a loop device), which a test can remount
/// read-only under a running command.
struct RoBench {
    target: std::path::PathBuf,
    _tmpfs: Tmpfs,
    journal_fs: std::path::PathBuf,
    journals: std::path::PathBuf,
    _journal_dev: LoopDevice,
}

impl RoBench {
    fn new() -> Result<RoBench, String> {
        let mut dev = LoopDevice::new(64 * MIB)?;
        let journal_fs = dev.mkfs_and_mount()?;
        let journals = journal_fs.join("journals");
        std::fs::create_dir(&journals).map_err(|e| e.to_string())?;
        let tmpfs = Tmpfs::mount("size=40m")?;
        let target = tmpfs.path().join("card.img");
        std::fs::write(&target, random(16 * MIB, 24)).map_err(|e| e.to_string())?;
        Ok(RoBench {
            target,
            _tmpfs: tmpfs,
            journal_fs,
            journals,
            _journal_dev: dev,
        })
    }

    fn remount(&self, how: &str) {
        common::sh(
            "mount",
            &[
                "-o",
                &format!("remount,{how}"),
                self.journal_fs.to_str().unwrap(),
            ],
        )
        .expect("remount the journal file system");
    }

    fn recover(&self) -> (Option<i32>, String) {
        let out = recover_in(&self.journals);
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code(), said)
    }

    /// Waits until a journal is armed (the test is writing); false if the
    /// command ended first.
    fn wait_armed(&self, child: &mut std::process::Child) -> bool {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(30) {
            if journal_phase(&self.journals) == "ARMED" {
                return true;
            }
            if child.try_wait().expect("poll").is_some() {
                return false;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        false
    }
}

/// Issue 24, point 2: the journal's file system turns read-only while the
/// test writes. The test still restores from it (it needs only to read),
/// says the journal could not be removed, and `recover` restores from the
/// read-only journal too (after a kill) and says the same, or (after the
/// test's own restore) finds it recorded and does not apply it again; no
/// byte is lost.
#[test]
fn a_journal_file_system_turning_read_only_mid_run_loses_nothing() {
    if !is_root() {
        return skipped("not root: mounting needs root");
    }
    for killed in [false, true] {
        let bench = match RoBench::new() {
            Ok(b) => b,
            Err(why) => return skipped(&why),
        };
        let before = std::fs::read(&bench.target).unwrap();
        let argv: Vec<String> = [
            "run",
            bench.target.to_str().unwrap(),
            "--rw",
            "write",
            "--time",
            "1s",
            "--ramp",
            "0",
            "--no-save",
            "--preserve",
            "--journal-dir",
            bench.journals.to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec();
        let mut child = spawn_slowed(&argv, 0);
        assert!(bench.wait_armed(&mut child), "the test never armed");
        std::thread::sleep(Duration::from_millis(200));
        bench.remount("ro");
        if killed {
            let _ = child.kill();
        }
        let out = child.wait_with_output().expect("reap");
        let said = String::from_utf8_lossy(&out.stderr).to_string()
            + &String::from_utf8_lossy(&out.stdout);
        if !killed {
            assert_eq!(out.status.code(), Some(0), "{said}");
            assert!(said.contains("was not removed"), "{said}");
            assert_eq!(std::fs::read(&bench.target).unwrap(), before, "restored");
        }
        let (code, recovered) = bench.recover();
        assert_eq!(
            code,
            Some(0),
            "recover from a read-only journal: {recovered}"
        );
        // A restore the test finished is recorded beside the read-only
        // journal and never applied again (issue 35); after a kill,
        // recover restores from the read-only journal.
        let expected: &[&str] = if killed {
            &["read back and verified", "was not removed"]
        } else {
            &["already restored", "not applied again"]
        };
        assert!(
            expected.iter().all(|e| recovered.contains(e)),
            "killed: {killed}: recover said: {recovered}\nthe run said: {said}"
        );
        assert_eq!(
            std::fs::read(&bench.target).unwrap(),
            before,
            "killed: {killed}: every byte back"
        );
        bench.remount("rw");
        let (code, again) = bench.recover();
        assert_eq!(code, Some(0), "{again}");
        assert_eq!(journal_phase(&bench.journals), "none", "{again}");
        assert_eq!(std::fs::read(&bench.target).unwrap(), before);
    }
}

/// Issue 24, point 1: two write tests on one medium exclude each other
/// wherever their journals are, on a regular file and on a block device;
/// the refusal names the running test's pid, and nothing is lost.
#[test]
fn a_second_write_test_on_one_medium_is_refused_whatever_its_journal_directory() {
    for bench in [Bench::files(), Bench::devices()] {
        let bench = match bench {
            Ok(b) => b,
            Err(why) => return skipped(&why),
        };
        let target = bench.shown(0);
        let before = bench.contents();
        let first_dir = bench.journals.path().join("first");
        let second_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let base = |dir: &std::path::Path, extra: &str| -> Vec<String> {
            let mut argv: Vec<String> = format!(
                "run {target} --rw write --size 2M --span 8M --ramp 0 --no-save --preserve --journal-dir"
            )
            .split(' ')
            .map(String::from)
            .collect();
            argv.push(dir.display().to_string());
            argv.extend(extra.split_whitespace().map(String::from));
            argv
        };
        for second_mode in ["--preserve", "--destructive"] {
            let first = spawn_slowed(&base(&first_dir, ""), 40);
            let started = Instant::now();
            while journal_phase(&first_dir) == "none" && started.elapsed() < Duration::from_secs(20)
            {
                std::thread::sleep(Duration::from_millis(2));
            }
            let mut second = base(second_dir.path(), "");
            if second_mode == "--destructive" {
                second.retain(|a| a != "--preserve");
                second.push("--destructive".into());
            }
            let (code, said, _) = run(&second);
            assert_eq!(code, Some(2), "{target} {second_mode}: {said}");
            let pid = first.id().to_string();
            assert!(
                said.contains(&format!("process {pid}")) || said.contains(&format!("pid {pid}")),
                "the refusal names the running test ({pid}): {said}"
            );
            let out = first.wait_with_output().unwrap();
            assert_eq!(
                out.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_unchanged(&bench, &before, &format!("{target}, two tests at once"));
        }
    }
}
