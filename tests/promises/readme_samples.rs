//! README's sample outputs are real: each one is what the command named
//! above it prints on a simulated card (a virtual clock and seeded data, so
//! the same bytes on any machine), checked here by running it again.
//!
//! In README.md, a fenced block without a language is a sample of output,
//! and the HTML comments right above it say where it comes from:
//! `<!-- run: iocurve ... -->` prepares (its output is not shown),
//! `<!-- sample: iocurve ... -->` must print exactly the block, and
//! `<!-- excerpt: iocurve ... -->` must print the block's lines somewhere,
//! one after another. Only what truly varies is normalised: the header's
//! version, time, host and kernel, and the CPU seconds.

use crate::common;

use common::{iocurve, text};

/// Where a sample comes from, as its comments say.
#[derive(Debug, Default)]
struct Sample {
    /// The line of README.md where the block starts.
    line: usize,
    setup: Vec<String>,
    command: Option<(Check, String)>,
    body: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Check {
    Whole,
    Excerpt,
}

/// Every untagged fenced block of `readme`, with the comments above it.
fn samples(readme: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    let mut pending = Sample::default();
    // The output block being read, and whether inside a block of commands.
    let mut inside: Option<Sample> = None;
    let mut in_commands = false;
    for (i, line) in readme.lines().enumerate() {
        let fence = line.trim_end();
        if in_commands {
            in_commands = fence != "```";
            continue;
        }
        if let Some(sample) = inside.as_mut() {
            if fence == "```" {
                out.push(inside.take().unwrap());
            } else {
                sample.body.push(line.to_string());
            }
            continue;
        }
        if let Some(rest) = line.trim().strip_prefix("<!--") {
            let rest = rest.trim_end_matches("-->").trim();
            let command = |p: &str| {
                rest.strip_prefix(p)
                    .map(|c| c.trim().trim_start_matches("iocurve ").to_string())
            };
            if let Some(c) = command("run:") {
                pending.setup.push(c);
            } else if let Some(c) = command("sample:") {
                pending.command = Some((Check::Whole, c));
            } else if let Some(c) = command("excerpt:") {
                pending.command = Some((Check::Excerpt, c));
            }
        } else if fence == "```" {
            let mut sample = std::mem::take(&mut pending);
            sample.line = i + 1;
            inside = Some(sample);
        } else if fence.starts_with("```") {
            // A block of commands to type, not of output.
            pending = Sample::default();
            in_commands = true;
        } else if !line.trim().is_empty() {
            pending = Sample::default();
        }
    }
    out
}

/// A line with what differs from run to run replaced.
fn normalise(line: &str) -> String {
    if line.starts_with("iocurve ") && line.matches(" · ").count() == 2 {
        let command = line.split(" · ").nth(1).unwrap_or("?");
        return format!("iocurve [version] · {command} · [time]");
    }
    if line.starts_with("host        ") {
        return "host        [host] ([kernel])".into();
    }
    if line.starts_with("cpu         ") {
        return "cpu         [cpu seconds]".into();
    }
    line.trim_end().to_string()
}

fn run(data: &std::path::Path, command: &str) -> String {
    let args: Vec<&str> = command.split_whitespace().collect();
    let out = iocurve()
        .env("XDG_DATA_HOME", data)
        .args(&args)
        .output()
        .expect("the command runs");
    assert!(
        out.status.success(),
        "{command}: exit {:?}\n{}",
        out.status.code(),
        text(&out.stderr)
    );
    text(&out.stdout)
}

#[test]
fn every_sample_in_the_readme_is_what_its_command_prints() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let samples = samples(&readme);
    assert!(samples.len() >= 3, "found only {samples:?}");
    let mut failures = Vec::new();
    for s in &samples {
        let Some((check, command)) = &s.command else {
            failures.push(format!(
                "README.md:{}: a sample of output with no <!-- sample: ... --> or <!-- excerpt: ... --> above it",
                s.line
            ));
            continue;
        };
        assert!(
            command.contains("sim:") || !s.setup.is_empty(),
            "README.md:{}: a sample must come from a simulated card to be reproducible",
            s.line
        );
        let data = tempfile::tempdir().unwrap();
        for setup in &s.setup {
            run(data.path(), setup);
        }
        let printed: Vec<String> = run(data.path(), command).lines().map(normalise).collect();
        let shown: Vec<String> = s.body.iter().map(|l| normalise(l)).collect();
        let matches = match check {
            Check::Whole => printed == shown,
            Check::Excerpt => printed.windows(shown.len()).any(|w| w == shown.as_slice()),
        };
        if !matches {
            failures.push(format!(
                "README.md:{}: `iocurve {command}` prints\n{}\n\nbut the README shows\n{}",
                s.line,
                printed.join("\n"),
                shown.join("\n")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_reader_finds_blocks_and_their_commands() {
    let md = "text\n<!-- run: iocurve a -->\n<!-- excerpt: iocurve b sim: -->\n```\nx\n```\n```sh\nnot output\n```\n";
    let s = samples(md);
    assert_eq!(s.len(), 1, "{s:?}");
    assert_eq!(s[0].setup, vec!["a".to_string()]);
    assert_eq!(
        s[0].command.as_ref().map(|(c, x)| (*c, x.as_str())),
        Some((Check::Excerpt, "b sim:"))
    );
    assert_eq!(s[0].body, vec!["x".to_string()]);
}
