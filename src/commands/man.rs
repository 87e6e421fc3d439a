//! `iocurve man [DIR]`: manual pages from the clap definition, one for
//! `iocurve` and one for every subcommand (`iocurve-run.1`,
//! `iocurve-flash-align.1`, ...), so `man iocurve-run` says what
//! `iocurve run --help` says. Without DIR only iocurve.1 is printed, for
//! `iocurve man | man -l -`.
//!
//! Each page ends with EXAMPLES and EXIT STATUS, which clap does not know:
//! the examples are README's own command lines (its `sh` blocks, compiled
//! in, so a page cannot show an example README lost; a test parses each
//! with the clap definition), a subcommand's page those that run it and
//! iocurve.1 the first of each; the exit codes come from the one table in
//! [`crate::error::EXIT_CODES`].

use crate::cli::Cli;
use crate::error::{EXIT_CODES, IoFailure};
use anyhow::Result;
use clap::CommandFactory;
use std::path::Path;

/// Prints iocurve.1, or writes every page into `dir` and lists them.
pub fn man(dir: Option<&Path>) -> Result<i32> {
    match dir {
        None => {
            let page = render(&built())
                .map_err(|e| IoFailure::new(format!("cannot render the man page: {e}"), Some(e)))?;
            crate::output::print_text(&String::from_utf8_lossy(&page));
        }
        Some(dir) => {
            let written = write_pages(dir)?;
            println!("wrote {written} man pages to {}", dir.display());
            println!("{}", how_to_read(dir));
        }
    }
    Ok(0)
}

/// Writes the page of every command into `dir` (created when missing);
/// how many.
fn write_pages(dir: &Path) -> Result<usize> {
    let failed = |e: std::io::Error| -> anyhow::Error {
        IoFailure::new(
            format!("cannot write man pages to {}: {e}", dir.display()),
            Some(e),
        )
        .into()
    };
    std::fs::create_dir_all(dir).map_err(failed)?;
    fn each(cmd: &clap::Command, dir: &Path) -> std::io::Result<usize> {
        let mut n = 0;
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            n += each(sub, dir)?;
        }
        let name = cmd.get_display_name().unwrap_or_else(|| cmd.get_name());
        std::fs::write(dir.join(format!("{name}.1")), render(cmd)?)?;
        Ok(n + 1)
    }
    each(&built(), dir).map_err(failed)
}

/// The clap tree with the names its pages carry (`iocurve-flash-align`).
fn built() -> clap::Command {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// One page: clap's sections, then EXAMPLES and EXIT STATUS.
fn render(cmd: &clap::Command) -> std::io::Result<Vec<u8>> {
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut page)?;
    let name = cmd.get_display_name().unwrap_or_else(|| cmd.get_name());
    let words: Vec<&str> = name.split('-').skip(1).collect();
    let examples = examples_for(&words);
    let mut extra = String::new();
    if !examples.is_empty() {
        extra.push_str(".SH EXAMPLES\n");
        for e in examples {
            extra.push_str(&format!(".TP\n\\fB{}\\fR\n", roff(&e.line)));
            extra.push_str(&format!(
                "{}\n",
                roff(e.what.as_deref().unwrap_or("(README)"))
            ));
        }
    }
    extra.push_str(".SH \"EXIT STATUS\"\n");
    for (code, meaning) in EXIT_CODES {
        extra.push_str(&format!(".TP\n\\fB{code}\\fR\n{}\n", roff(meaning)));
    }
    page.extend_from_slice(extra.as_bytes());
    Ok(page)
}

/// Text safe in roff: backslashes and hyphens escaped, no line starting
/// with a control character.
fn roff(text: &str) -> String {
    let t = text.replace('\\', "\\e").replace('-', "\\-");
    match t.starts_with('.') || t.starts_with('\'') {
        true => format!("\\&{t}"),
        false => t,
    }
}

/// One example command line of README, with its comment.
#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    pub line: String,
    pub what: Option<String>,
}

const README: &str = include_str!("../../README.md");

/// Every `iocurve ...` line of README's `sh` blocks, without what the
/// shell adds (a pipe or a redirection) and with its `# comment` apart.
pub fn examples() -> Vec<Example> {
    let mut out = Vec::new();
    let mut in_sh = false;
    for line in README.lines() {
        let fence = line.trim_end();
        if fence.starts_with("```") {
            in_sh = fence == "```sh";
            continue;
        }
        if !in_sh || !line.starts_with("iocurve ") {
            continue;
        }
        let (command, what) = match line.split_once(" #") {
            Some((c, w)) => (c, Some(w.trim().to_string())),
            None => (line, None),
        };
        let command = command.split(['|', '>']).next().unwrap_or("").trim();
        out.push(Example {
            line: command.to_string(),
            what,
        });
    }
    out
}

/// The examples of one page: those that run `words` (iocurve's own page,
/// `words` empty, gets the first of each command).
fn examples_for(words: &[&str]) -> Vec<Example> {
    let all = examples();
    let argv = |e: &Example| -> Vec<String> {
        e.line
            .split_whitespace()
            .skip(1)
            .map(str::to_string)
            .collect()
    };
    if words.is_empty() {
        let mut seen = std::collections::BTreeSet::new();
        return all
            .into_iter()
            .filter(|e| argv(e).first().is_some_and(|w| seen.insert(w.clone())))
            .collect();
    }
    all.into_iter()
        .filter(|e| {
            let a = argv(e);
            a.len() >= words.len() && a.iter().zip(words).all(|(x, w)| x == w)
        })
        .collect()
}

/// How to read pages written to `dir`: `man NAME` finds them only when
/// `dir` is a `man1` directory under man's path.
fn how_to_read(dir: &Path) -> String {
    let d = dir.display();
    let read = format!("read them with: man -l {d}/iocurve.1");
    match (dir.file_name(), dir.parent()) {
        (Some(n), Some(parent)) if n == "man1" => format!(
            "{read}, or man iocurve once {} is on man's path (MANPATH={}:$MANPATH)",
            parent.display(),
            parent.display()
        ),
        _ => format!("{read} (man iocurve looks only in man1 directories on man's path)"),
    }
}
