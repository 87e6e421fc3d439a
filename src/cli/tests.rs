//! Unit tests of the argument parser, kept beside it so the module reads as
//! the arguments it defines.

use super::clap_errors::one_line_error;
use super::*;
use clap::CommandFactory;

fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
    Cli::try_parse_from(std::iter::once("iocurve").chain(args.iter().copied()))
}

fn line(args: &[&str]) -> Option<String> {
    one_line_error(&parse(args).unwrap_err())
}

#[test]
fn the_definition_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn every_default_passes_its_own_check() {
    for args in [
        &["run"][..],
        &["profile"],
        &["curve"],
        &["surface"],
        &["stream"],
        &["sustain"],
        &["endure", "x", "--cycles", "1"],
        &["copy", "a", "b"],
        &["files", "load"],
        &["files", "save"],
        &["flash", "class", "x"],
        &["compare", "1"],
        &["report"],
        &["history"],
    ] {
        assert!(parse(args).is_ok(), "{args:?}: {:?}", parse(args).err());
    }
}

#[test]
fn a_rejected_value_is_one_line_with_option_value_and_range() {
    assert_eq!(
        line(&["flash", "class", "sim:size=64M", "--au", "511"]).as_deref(),
        Some("--au 511: an AU is a multiple of 16 KiB from 16 KiB to 64 GiB (e.g. 4M)")
    );
    assert_eq!(
        line(&["run", ".", "--engine", "foo"]).as_deref(),
        Some("--engine foo: not one of auto, sync, uring")
    );
    let empty = line(&["run", ""]).unwrap();
    assert!(empty.starts_with("TARGET \"\": an empty target"), "{empty}");
    let padded = line(&["run", ".", "--time= 0 "]).unwrap();
    assert!(
        padded.starts_with("--time \" 0 \": a duration above 0"),
        "{padded}"
    );
    assert!(line(&["run", "--no-such-option"]).is_none());
    assert!(line(&["--help"]).is_none());
}

/// Every option that takes one of a closed set of values, with the
/// command line it belongs to.
const ENUM_OPTIONS: [(&[&str], &str); 8] = [
    (&["run", "."], "--engine"),
    (&["run", "."], "--rw"),
    (&["run", "."], "--method"),
    (&["run", "."], "--bs"),
    (&["files", "load"], "--method"),
    (&["stream", "."], "--rw"),
    (&["copy", "a", "b"], "--sync"),
    (&["export"], "--format"),
];

proptest::proptest! {
    #[test]
    fn arbitrary_enum_values_parse_or_are_refused(text in proptest::prelude::any::<String>()) {
        for (command, option) in ENUM_OPTIONS {
            let value = format!("{option}={text}");
            let args: Vec<&str> = command.iter().copied().chain([value.as_str()]).collect();
            if let Err(e) = parse(&args) {
                // A refusal names the option when it is about the value.
                if let Some(line) = one_line_error(&e) {
                    proptest::prop_assert!(line.starts_with(option), "{}", line);
                }
            }
        }
    }
}

#[test]
fn enum_options_take_their_spellings() {
    let cli = parse(&[
        "run", ".", "--rw", "randrw", "--method", "mmap", "--bs", "max",
    ])
    .unwrap();
    let Command::Run(run) = cli.command else {
        panic!("not run")
    };
    assert_eq!(run.rw, crate::vocab::Rw::RandRw);
    assert_eq!(run.method, options::ReadMethod::Mmap);
    assert_eq!(run.bs, options::BlockSize::DeviceMax);
    assert_eq!(run.target.engine, options::EngineChoice::Auto);
    assert!(parse(&["run", ".", "--rw", "readwrite"]).is_err());
    assert!(parse(&["export", "--format", "md"]).is_ok());
}
