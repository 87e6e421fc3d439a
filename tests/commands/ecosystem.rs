//! What users of other command-line tools expect to find: shell completion
//! that bash really loads and that offers the real subcommands, man pages
//! for the command and every subcommand that `man` really renders, and
//! fio's JSON imported safely whatever it names or holds.

use crate::common;

use clap::CommandFactory;
use common::{run_ok, skipped, text};
use iocurve::cli::Cli;
use std::path::Path;
use std::process::Command;

/// The page names clap's definition calls for, found by walking it:
/// `iocurve`, `iocurve-run`, `iocurve-flash-align`, ...
fn pages_of_the_definition() -> Vec<String> {
    fn walk(cmd: &clap::Command, prefix: Option<&str>, names: &mut Vec<String>) {
        let name = match prefix {
            None => cmd.get_name().to_string(),
            Some(p) => format!("{p}-{}", cmd.get_name()),
        };
        for sub in cmd.get_subcommands() {
            walk(sub, Some(&name), names);
        }
        names.push(name);
    }
    let mut names = Vec::new();
    walk(&Cli::command(), None, &mut names);
    names.sort();
    names
}

/// Runs `script` in bash after loading iocurve's completion from `file`.
fn bash_with_completion(file: &Path, script: &str) -> Result<String, String> {
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("source '{}'\n{script}", file.display()))
        .output()
        .map_err(|e| format!("bash cannot be run: {e}"))?;
    if !out.status.success() {
        return Err(format!("bash failed: {}", text(&out.stderr)));
    }
    Ok(text(&out.stdout))
}

/// What bash's completion function offers after `words` (the last one
/// being completed).
fn offered(file: &Path, words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let current = words.last().unwrap();
    let previous = words[words.len() - 2];
    let script = format!(
        "COMP_WORDS=({})\nCOMP_CWORD={}\nCOMP_LINE='{}'\nCOMP_POINT=${{#COMP_LINE}}\n\
         _iocurve iocurve '{current}' '{previous}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"",
        quoted.join(" "),
        words.len() - 1,
        words.join(" "),
    );
    let out = bash_with_completion(file, &script).unwrap();
    out.lines().map(str::to_string).collect()
}

#[test]
fn bash_loads_the_completion_and_it_offers_real_subcommands() {
    if Command::new("bash").arg("--version").output().is_err() {
        skipped("bash is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("iocurve.bash");
    let out = run_ok(["completions", "bash"]);
    std::fs::write(&file, &out.stdout).unwrap();

    let registered = bash_with_completion(&file, "complete -p iocurve").unwrap();
    assert!(
        registered.contains("-F _iocurve") && registered.trim_end().ends_with(" iocurve"),
        "{registered}"
    );
    let after_pro = offered(&file, &["iocurve", "pro"]);
    assert!(after_pro.contains(&"profile".to_string()), "{after_pro:?}");
    assert!(after_pro.contains(&"probe".to_string()), "{after_pro:?}");
    assert!(!after_pro.contains(&"run".to_string()), "{after_pro:?}");
    let flash = offered(&file, &["iocurve", "flash", "o"]);
    assert_eq!(flash, ["open-au"]);
    let run_options = offered(&file, &["iocurve", "run", "--q"]);
    assert!(run_options.contains(&"--qd".to_string()), "{run_options:?}");
}

#[test]
fn every_shell_gets_a_script_naming_the_subcommands() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = text(&run_ok(["completions", shell]).stdout);
        for word in ["profile", "flash", "open-au", "completions"] {
            assert!(script.contains(word), "{shell}: no {word}");
        }
    }
    let out = common::run_fail(["completions", "tcsh"], 2);
    assert!(text(&out.stderr).contains("tcsh"), "{}", text(&out.stderr));
}

#[test]
fn man_writes_one_page_per_command_of_the_definition() {
    let dir = tempfile::tempdir().unwrap();
    let pages = dir.path().join("man1");
    let out = run_ok(["man".as_ref(), pages.as_os_str()]);
    let expected = pages_of_the_definition();
    assert!(expected.contains(&"iocurve-flash-align".to_string()));
    assert!(expected.contains(&"iocurve-files-save".to_string()));
    let mut written: Vec<String> = std::fs::read_dir(&pages)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    written.sort();
    let mut wanted: Vec<String> = expected.iter().map(|n| format!("{n}.1")).collect();
    wanted.sort();
    assert_eq!(written, wanted);
    assert!(
        text(&out.stdout).contains(&format!("wrote {} man pages", expected.len())),
        "{}",
        text(&out.stdout)
    );
    // Each page names its own command.
    for name in &expected {
        let page = std::fs::read_to_string(pages.join(format!("{name}.1"))).unwrap();
        assert!(page.contains(&format!(".TH {name} 1")), "{name}");
    }
    render_with_man(&pages);
}

/// `man -l` renders iocurve.1 and a subcommand's page with their text.
fn render_with_man(pages: &Path) {
    if Command::new("man").arg("--version").output().is_err() {
        skipped("man is not installed (apt-get install man-db)");
        return;
    }
    for (page, says) in [
        ("iocurve.1", "how fast a storage device really is"),
        ("iocurve-flash-align.1", "AU and page size"),
    ] {
        let out = Command::new("man")
            .arg("-l")
            .arg(pages.join(page))
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .env("MANWIDTH", "100")
            .output()
            .unwrap();
        let shown = text(&out.stdout);
        assert!(out.status.success(), "{page}: {}", text(&out.stderr));
        let plain = without_overstrike(&shown);
        assert!(
            plain.contains("NAME") && plain.contains("SYNOPSIS"),
            "{page}: {shown}"
        );
        let collapsed = plain.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(collapsed.contains(says), "{page}: {shown}");
    }
}

/// Text without the `x\bx` bold and `_\bx` underline some `man` set-ups
/// emit even into a pipe.
fn without_overstrike(shown: &str) -> String {
    let mut plain = String::new();
    for c in shown.chars() {
        match c {
            '\u{8}' => {
                plain.pop();
            }
            c => plain.push(c),
        }
    }
    plain
}

#[test]
fn man_without_a_directory_prints_the_main_page() {
    let page = text(&run_ok(["man"]).stdout);
    assert!(page.contains(".TH iocurve 1"), "{page}");
    // The main page points at every subcommand's page.
    for sub in Cli::command().get_subcommands() {
        let name = sub.get_name().replace('-', "\\-");
        assert!(
            page.contains(&format!("iocurve\\-{name}(1)")),
            "{name}: {page}"
        );
    }
}

/// The fixture with `edit` applied, written to `dir`.
fn fio_document(dir: &Path, edit: impl FnOnce(&mut serde_json::Value)) -> std::path::PathBuf {
    let fixture = "tests/fixtures/fio-3.33-seqread-randwrite.json";
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    edit(&mut doc);
    let file = dir.join("fio.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    file
}

/// A FIFO named as a job's file (as the target, and without a size, so the
/// import would want its size) is looked at, never opened: an open would
/// wait for a writer forever. The import ends, within a minute however
/// busy the machine, and nobody holds the FIFO open after it.
#[test]
fn a_fifo_named_in_fio_json_does_not_hold_the_import() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let made = rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    );
    if let Err(e) = made {
        return common::skipped(&format!("cannot make a FIFO: {e}"));
    }
    let report = fio_document(dir.path(), |doc| {
        for job in doc["jobs"].as_array_mut().unwrap() {
            let opts = job["job options"].as_object_mut().unwrap();
            opts.remove("size");
            opts.insert("filename".into(), fifo.display().to_string().into());
        }
    });
    let mut child = common::iocurve_std()
        .arg("import")
        .arg(&report)
        .arg("--db")
        .arg(dir.path().join("results.db"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(60) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("import still running after a minute: it opened the FIFO");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("imported 2 fio job(s)"),
        "{}",
        text(&out.stdout)
    );
    // Opening the write end without waiting fails (ENXIO) when no one reads.
    let writer = rustix::fs::open(
        &fifo,
        rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::NONBLOCK,
        rustix::fs::Mode::empty(),
    );
    assert_eq!(writer.err(), Some(rustix::io::Errno::NXIO));
}

/// Figures no fio run writes are refused with exit 2 and one line naming
/// the job and the field, never a panic: a start time past the year 9999,
/// a block size of 0, bytes read in no time, a negative byte count.
#[test]
fn impossible_fio_figures_are_refused_by_name() {
    type Edit = fn(&mut serde_json::Value);
    let cases: [(Edit, &str); 4] = [
        (
            |doc| doc["timestamp"] = 1e300.into(),
            "fio JSON: \"timestamp\" is 1e+300; fio writes the start time as whole seconds since 1970",
        ),
        (
            |doc| doc["jobs"][0]["job options"]["bs"] = "0".into(),
            "fio JSON job 'seqread': \"bs\" is 0; a block size must be at least 1 byte",
        ),
        (
            |doc| doc["jobs"][0]["read"]["runtime"] = 0.into(),
            "fio JSON job 'seqread': \"read.runtime\" is 0; ",
        ),
        (
            |doc| doc["jobs"][1]["write"]["io_bytes"] = (-1).into(),
            "fio JSON job 'randwrite': \"write.io_bytes\" is -1; ",
        ),
    ];
    for (edit, said) in cases {
        let dir = tempfile::tempdir().unwrap();
        let report = fio_document(dir.path(), edit);
        let db = dir.path().join("results.db");
        let out = common::fails(
            common::iocurve()
                .arg("import")
                .arg(&report)
                .arg("--db")
                .arg(&db),
            2,
        );
        let err = text(&out.stderr);
        assert!(err.contains(said), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(!db.exists(), "nothing is stored");
    }
}
