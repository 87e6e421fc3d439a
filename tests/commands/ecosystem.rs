//! What users of other command-line tools expect to find: shell completion
//! that bash really loads and that offers the real subcommands, and man
//! pages for the command and every subcommand that `man` really renders.

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
