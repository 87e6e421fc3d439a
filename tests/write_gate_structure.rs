//! The write gate holds by construction: outside a short list of modules,
//! each with its reason, no source file opens anything for writing. A new
//! `OpenOptions::write(true)` in a command makes this test fail, so every
//! write to a user's target keeps going through `target::gate`.
//!
//! (The engines write with pwrite and io_uring on descriptors they are
//! given; the descriptors are what this test guards.)

use std::path::{Path, PathBuf};

/// Files allowed to open files for writing, and why.
const ALLOWED: &[(&str, &str)] = &[
    ("src/target/gate.rs", "the write gate itself"),
    (
        "src/target/mod.rs",
        "opens the gate's writable descriptor after the safety check; /dev/null for sim:",
    ),
    ("src/target/scratch.rs", "iocurve's own scratch file"),
    ("src/safety/journal.rs", "the --preserve journals"),
    (
        "src/safety/preserve.rs",
        "writes back the original data from an armed journal; probes the journal directory",
    ),
    ("src/store/mod.rs", "the results database"),
    (
        "src/workload/files.rs",
        "files load/save in a working directory iocurve creates",
    ),
    (
        "src/output.rs",
        "output files the user names (--svg, --report, -o); block devices refused",
    ),
    (
        "src/target/copy_ends.rs",
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
        if rel.ends_with("/tests.rs") {
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
