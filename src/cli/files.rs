//! Checks of `iocurve files load` and `iocurve files save` beyond the
//! parser: the file sizes and the frame rate. Usage errors, before the
//! directory is touched.

use crate::cli::apps::{FilesLoadArgs, FilesSaveArgs};
use crate::error::usage;
use crate::result::config::{FilesLoadSettings, FilesSaveSettings};
use crate::vocab::config::default_seed;
use crate::workload::files::{LOAD_SIZES, SavePlan, check_sizes};
use anyhow::Result;

/// The settings of `files load`, checked; the seed from the clock when not given.
pub fn load_settings(args: &FilesLoadArgs) -> Result<FilesLoadSettings> {
    Ok(FilesLoadSettings {
        dir: args.dir.clone(),
        sizes: load_sizes(args)?,
        count: args.count,
        fps: args.fps,
        seed: args.seed.unwrap_or_else(default_seed),
        cpu_load: args.out.load.cpu_load,
        method: args.method,
        stdio_bs: args.stdio_bs,
    })
}

/// The settings of `files save`, checked; the seed from the clock when not given.
pub fn save_settings(args: &FilesSaveArgs) -> Result<FilesSaveSettings> {
    check_save(args)?;
    Ok(FilesSaveSettings {
        dir: args.dir.clone(),
        size: args.size,
        sizes: args.sizes.clone(),
        sync: args.sync,
        seed: args.seed.unwrap_or_else(default_seed),
        cpu_load: args.out.load.cpu_load,
    })
}

/// What `files save` writes, from its checked settings.
pub fn save_plan(settings: &FilesSaveSettings) -> SavePlan {
    SavePlan {
        file_size: settings.size,
        calls: settings.sizes.clone(),
        seed: settings.seed,
        sync: settings.sync,
    }
}

/// The file sizes `files load` measures (`--sizes`, or the default set),
/// checked along with `--fps`.
pub fn load_sizes(args: &FilesLoadArgs) -> Result<Vec<u64>> {
    let sizes = args.sizes.clone().unwrap_or_else(|| LOAD_SIZES.to_vec());
    check_sizes(&sizes, "--sizes")?;
    if args.fps.is_some_and(|f| !(f > 0.0 && f.is_finite())) {
        return Err(usage("--fps must be a positive number such as 60"));
    }
    Ok(sizes)
}

/// The sizes of `files save`: the saved sizes and the file's size.
pub fn check_save(args: &FilesSaveArgs) -> Result<()> {
    check_sizes(&args.sizes, "--sizes")?;
    check_sizes(&[args.size], "--size")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::apps::FilesAction;

    fn action(args: &[&str]) -> FilesAction {
        match crate::cli::command_of(&[&["files"], args]) {
            crate::cli::Command::Files(f) => f.action,
            _ => unreachable!("a files command line"),
        }
    }

    fn load(args: &[&str]) -> Result<Vec<u64>> {
        match action(&[&["load", "."], args].concat()) {
            FilesAction::Load(a) => load_sizes(&a),
            FilesAction::Save(_) => unreachable!("a load command line"),
        }
    }

    #[test]
    fn load_takes_the_default_sizes_or_the_given_ones() {
        assert_eq!(load(&[]).unwrap(), LOAD_SIZES.to_vec());
        assert_eq!(load(&["--sizes", "4k,64k"]).unwrap(), vec![4096, 65536]);
    }

    #[test]
    fn load_refuses_a_frame_rate_that_is_not_positive() {
        // The parser refuses these already; arguments built another way
        // meet the same check.
        let FilesAction::Load(mut a) = action(&["load", "."]) else {
            unreachable!("a load command line")
        };
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            a.fps = Some(bad);
            let e = load_sizes(&a).unwrap_err().to_string();
            assert!(e.contains("--fps must be a positive number"), "{bad}: {e}");
        }
    }

    #[test]
    fn save_checks_its_sizes() {
        match action(&["save", ".", "--size", "64k", "--sizes", "512,4k"]) {
            FilesAction::Save(a) => assert!(check_save(&a).is_ok()),
            FilesAction::Load(_) => unreachable!("a save command line"),
        }
    }

    #[test]
    fn a_given_seed_is_kept_and_a_missing_one_comes_from_the_clock() {
        let FilesAction::Load(a) = action(&["load", ".", "--seed", "42"]) else {
            unreachable!("a load command line")
        };
        assert_eq!(load_settings(&a).unwrap().seed, 42);
        let FilesAction::Save(a) = action(&["save", "."]) else {
            unreachable!("a save command line")
        };
        let seeds: std::collections::HashSet<u64> =
            (0..8).map(|_| save_settings(&a).unwrap().seed).collect();
        assert!(seeds.len() > 1, "eight runs without --seed drew {seeds:?}");
    }
}
