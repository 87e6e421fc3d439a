//! The write gate holds by construction: outside a short list of modules,
//! each with its reason, no source file opens anything for writing. A new
//! `OpenOptions::write(true)` in a command makes this test fail, so every
//! write to a user's target keeps going through `medium::gate`.
//!
//! (The engines write with pwrite and io_uring on descriptors they are
//! given; the descriptors are what this test guards.)

use crate::common;

use std::path::{Path, PathBuf};

/// Files allowed to open files for writing, and why.
/// Files compiled only under `#[cfg(test)]` that are not named as tests,
/// each with the module file that declares it (checked below).
const TEST_ONLY: &[&str] = &["src/safety/scratch.rs"];

#[test]
fn the_test_only_files_are_compiled_only_for_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for file in TEST_ONLY {
        let path = Path::new(file);
        let name = path.file_stem().unwrap().to_str().unwrap();
        let parent = root.join(path.parent().unwrap()).join("mod.rs");
        let text = std::fs::read_to_string(&parent).unwrap();
        let declared = text
            .lines()
            .zip(text.lines().skip(1))
            .any(|(a, b)| a.trim() == "#[cfg(test)]" && b.trim() == format!("mod {name};"));
        assert!(
            declared,
            "{file} is exempt but not declared under #[cfg(test)] in {}",
            parent.display()
        );
    }
}

const ALLOWED: &[(&str, &str)] = &[
    ("src/medium/gate.rs", "the write gate itself"),
    (
        "src/medium/descriptors.rs",
        "opens the gate's writable descriptor after the safety check; /dev/null for sim:",
    ),
    ("src/medium/scratch.rs", "iocurve's own scratch file"),
    (
        "src/safety/journal/writer.rs",
        "makes the --preserve journals",
    ),
    (
        "src/safety/journal/reader.rs",
        "reopens a journal (through its descriptor) to record its state or table of hashes",
    ),
    (
        "src/safety/trust/check.rs",
        "opens a journal recover may use (read-write to mark it done), checked before any use",
    ),
    (
        "src/safety/preserve/medium.rs",
        "writes back the original data from an armed journal",
    ),
    (
        "src/safety/preserve/heart.rs",
        "writes a running test's heartbeat into its journal (a reopen of the journal held)",
    ),
    (
        "src/safety/preserve/marker.rs",
        "records a restore whose journal could not be marked done, in iocurve's data directory",
    ),
    (
        "src/safety/preserve/hooks.rs",
        "a test hook's `.waiting` file, only when the integration tests ask for it",
    ),
    (
        "src/safety/preserve/directory.rs",
        "probes that the journal directory can be written",
    ),
    (
        "src/safety/preserve/fixture.rs",
        "the unit tests' journal fixture (compiled only for tests) writes its temporary target",
    ),
    ("src/store/open.rs", "the results database"),
    (
        "src/store/fix.rs",
        "db repair's copy of the database and the file of unreadable runs, beside the database",
    ),
    (
        "src/output/file.rs",
        "output files the user names, opened O_NOFOLLOW|O_NONBLOCK and checked to be regular files",
    ),
    (
        "src/sys/test_pause.rs",
        "the handshake file an integration test names in the environment",
    ),
    (
        "src/workload/files.rs",
        "files load/save in a working directory iocurve creates",
    ),
    (
        "src/commands/man.rs",
        "man pages into the directory the user names (`iocurve man DIR`)",
    ),
    (
        "src/medium/copy_ends.rs",
        "copy creates a destination file that did not exist (create_new: nothing to lose)",
    ),
];

const OPENS_FOR_WRITING: &[&str] = &[
    ".write(true)",
    "O_RDWR",
    "O_WRONLY",
    "File::create(",
    "create_new(",
    "fs::write(",
    "OFlags::RDWR",
    "OFlags::WRONLY",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The file's text before its unit tests (which may write temp files).
fn production_part(text: &str) -> &str {
    text.find("#[cfg(test)]").map_or(text, |at| &text[..at])
}

#[test]
fn only_the_listed_modules_open_anything_for_writing() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    assert!(files.len() > 50, "found {} source files", files.len());
    let mut offenders = Vec::new();
    let mut seen_allowed = std::collections::BTreeSet::new();
    for file in &files {
        let rel = file
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        // Unit tests in files of their own (`tests.rs`, `x_tests.rs`) and
        // the tests' fixtures are compiled only for tests.
        if rel.ends_with("/tests.rs")
            || rel.ends_with("_tests.rs")
            || TEST_ONLY.contains(&rel.as_str())
        {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in production_part(&text).lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if !OPENS_FOR_WRITING.iter().any(|p| code.contains(p)) {
                continue;
            }
            match ALLOWED.iter().find(|(f, _)| *f == rel) {
                Some((f, _)) => {
                    seen_allowed.insert(*f);
                }
                None => offenders.push(format!("{rel}:{}: {}", n + 1, line.trim())),
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "these open files for writing outside the write gate; go through \
         OpenTarget::arm/writer, or add the file to ALLOWED with its reason:\n{}",
        offenders.join("\n")
    );
    // The list stays honest: every entry still opens something.
    let stale: Vec<&str> = ALLOWED
        .iter()
        .map(|(f, _)| *f)
        .filter(|f| !seen_allowed.contains(f))
        .collect();
    assert!(
        stale.is_empty(),
        "ALLOWED lists files that open nothing for writing: {stale:?}"
    );
}

/// What starts the built binary without `tests/common`'s helpers: its path
/// from Cargo, or a path or name of it handed to `Command::new`.
const STARTS_THE_BINARY: &[&str] = &["CARGO_BIN_EXE", "cargo_bin"];

/// Where the one helper that builds every spawned iocurve lives.
const SPAWN_HELPER: &str = "tests/common/mod.rs";

/// This file, which names the patterns in order to find them.
const THIS_CHECK: &str = "tests/promises/write_gate_structure.rs";

/// The test sources: every `.rs` under tests/, and the files the tests pull
/// in from elsewhere with `#[path = ...]` (for a `mod.rs`, its whole
/// directory, whose submodules come along).
fn test_sources(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    rust_files(&root.join("tests"), &mut files);
    let mut included = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for line in text.lines() {
            let Some(rest) = line.trim().strip_prefix("#[path = \"") else {
                continue;
            };
            let target = file.parent().unwrap().join(rest.split('"').next().unwrap());
            let target = target.canonicalize().unwrap_or(target);
            if target.starts_with(root.join("tests")) {
                continue;
            }
            match target.file_name().is_some_and(|n| n == "mod.rs") {
                true => rust_files(target.parent().unwrap(), &mut included),
                false => included.push(target),
            }
        }
    }
    files.extend(included);
    files.sort();
    files.dedup();
    files
}

/// `line` starts iocurve another way than through the helper: names the
/// binary's Cargo path, or hands `Command::new` something named iocurve.
fn starts_the_binary(line: &str) -> bool {
    let code = line.split("//").next().unwrap_or("");
    if STARTS_THE_BINARY.iter().any(|p| code.contains(p)) {
        return true;
    }
    code.split("Command::new(")
        .skip(1)
        .any(|arg| arg.split(')').next().unwrap_or("").contains("iocurve"))
}

/// Issue 24: no test writes outside its own temporary directory. Every
/// iocurve a test starts gets HOME and the XDG directories of the tests'
/// own (`common::iocurve`, `iocurve_std`, `iocurve_wrapped`), so a test that
/// forgets `--db` or `--no-save` still leaves the user's results database
/// alone; this fails, naming file and line, on any other way to start it.
#[test]
fn every_spawned_iocurve_goes_through_the_test_helper() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = test_sources(root);
    assert!(files.len() > 30, "found {} test sources", files.len());
    let mut offenders = Vec::new();
    let mut helper_seen = false;
    for file in &files {
        let rel = file
            .strip_prefix(root)
            .unwrap_or(file)
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(file).unwrap();
        if rel == SPAWN_HELPER {
            helper_seen = text.contains("fn iocurve_std()");
            continue;
        }
        if rel == THIS_CHECK {
            continue;
        }
        for (n, line) in text.lines().enumerate() {
            if starts_the_binary(line) {
                offenders.push(format!("{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(helper_seen, "{SPAWN_HELPER} has no iocurve_std()");
    assert!(
        offenders.is_empty(),
        "these start iocurve without the isolated HOME and XDG directories; \
         use common::iocurve(), iocurve_std() or iocurve_wrapped():\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_structure_check_sees_the_ways_to_start_the_binary() {
    for line in [
        r#"let c = Command::new(env!("CARGO_BIN_EXE_iocurve"));"#,
        r#"Std::new(assert_cmd::cargo::cargo_bin("iocurve"))"#,
        r#"assert_cmd::Command::cargo_bin("iocurve").unwrap()"#,
        r#"std::process::Command::new("target/debug/iocurve")"#,
        r#"Command::new(&iocurve_path).arg("run")"#,
    ] {
        assert!(starts_the_binary(line), "{line}");
    }
    for line in [
        r#"let c = common::iocurve_std().arg("run");"#,
        r#"Command::new("setpriv").arg(bin) // not CARGO_BIN_EXE"#,
        r#"Command::new("script").args(["-c", &inner])"#,
    ] {
        assert!(!starts_the_binary(line), "{line}");
    }
}

/// The helper's promise, by experiment: a run saved without `--db` goes
/// to the database under the tests' own home in Cargo's target directory.
#[test]
fn a_run_saved_without_db_lands_in_the_tests_own_home() {
    let home = common::test_home();
    assert!(home.starts_with(env!("CARGO_TARGET_TMPDIR")), "{home:?}");
    let db = home.join(".local/share/iocurve/results.db");
    common::ok(common::iocurve().args([
        "run",
        "sim:size=64M",
        "--rw",
        "read",
        "--size",
        "1M",
        "--ramp",
        "0",
        "--json",
    ]));
    assert!(db.is_file(), "no database at {}", db.display());
    let listed = common::ok_json(common::iocurve().args(["list", "--json"]));
    let runs = listed["runs"].as_array().map_or(0, Vec::len);
    assert!(runs >= 1, "the saved run is listed: {listed}");
}

/// The files that handle a target after the safety checks: from there on,
/// every byte moves through the descriptor that was checked, or through a
/// reopen of it (`crate::sys::reopen`, through `/proc/self/fd`), never
/// through its name, which may name another file by then (issue 35).
const AFTER_THE_CHECK: &[&str] = &[
    "src/medium/mod.rs",
    "src/medium/kinds.rs",
    "src/medium/descriptors.rs",
    "src/medium/gate.rs",
    "src/medium/copy_ends.rs",
    "src/medium/restore.rs",
    "src/medium/open.rs",
    "src/safety/preserve/save.rs",
    "src/safety/preserve/restore.rs",
    "src/safety/preserve/writeback.rs",
];

/// What opens or looks up a file by its name.
const OPENS_BY_NAME: &[&str] = &[
    "File::open(",
    "File::create",
    "OpenOptions::new(",
    "rustix::fs::open(",
    "fs::read(",
    "fs::read_to_string(",
    "fs::metadata(",
    "symlink_metadata(",
    "rustix::fs::stat(",
    "canonicalize(",
    "open_reader(path",
    "open_writer(path",
];

/// The opens by name these files may make, each with its reason.
const NAMED_OPENS_ALLOWED: &[(&str, &str, &str)] = &[
    (
        "src/safety/preserve/save.rs",
        "symlink_metadata(journal)",
        "the journal's own name, checked to still name the journal written",
    ),
    (
        "src/safety/preserve/restore.rs",
        "symlink_metadata(&journal.path)",
        "the journal's own name, checked before the journal is removed",
    ),
    (
        "src/safety/preserve/restore.rs",
        "rustix::fs::stat(name)",
        "a stat, never an open, to say whether the name still names the object restored",
    ),
    (
        "src/medium/descriptors.rs",
        "open(\"/dev/null\")",
        "a simulated card's stand-in descriptor: no user file",
    ),
    (
        "src/medium/descriptors.rs",
        "ScratchFile::create(",
        "a directory's scratch file is made new (O_EXCL, nothing to lose) and then checked to be on the examined directory's file system",
    ),
    (
        "src/medium/copy_ends.rs",
        "File::create_new(",
        "copy makes a destination that did not exist; check_destination then proves the target opened is that file",
    ),
];

#[test]
fn nothing_after_the_check_opens_the_target_by_name() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut offenders = Vec::new();
    for rel in AFTER_THE_CHECK {
        let text = std::fs::read_to_string(root.join(rel))
            .unwrap_or_else(|e| panic!("{rel}: {e}: update AFTER_THE_CHECK"));
        for (n, line) in production_part(&text).lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let Some(needle) = OPENS_BY_NAME.iter().find(|p| code.contains(*p)) else {
                continue;
            };
            let allowed = NAMED_OPENS_ALLOWED
                .iter()
                .any(|(f, what, _)| f == rel && code.contains(what));
            if !allowed {
                offenders.push(format!("{rel}:{}: {needle} in {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "these open or look up a target by name after the safety checks; \
         use the descriptor that was checked or crate::sys::reopen of it:\n{}",
        offenders.join("\n")
    );
}
