//! `iocurve recover`: finishing what a journal started after a crash, for
//! every armed journal of the test it belongs to, and what came of it.

use super::holder::{Opened, is_live_iocurve, open_held};
use super::medium::{medium_free, open_writer, opened_is};
use super::messages::{recover_command, refusal, restore_failure};
use super::restore::{apply, remove_own};
use super::save::discard;
use super::unfinished::list;
use crate::error::{IoFailure, usage};
use crate::safety::identity::{self, Identity};
use crate::safety::journal::{self, EXTENSION, Journal, State};
use crate::safety::lock;
use anyhow::Result;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// What `recover` did with one journal.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The original data was written back and verified, from this journal
    /// and the other armed ones of the same test (`journals` in all).
    Restored {
        target: String,
        bytes: u64,
        journals: usize,
        /// Why journals are still there after the verified restore (a
        /// read-only file system), one line each.
        left: Vec<String>,
    },
    /// Never armed: the target was never written; the journal was removed.
    Discarded { target: Option<String> },
    /// Already restored earlier; the leftover file was removed.
    AlreadyDone,
    /// A running test holds the journal (its lock, or its pid is a live
    /// iocurve): left alone, since that test restores it itself.
    InUse { pid: Option<u32> },
}

/// Finishes one journal: restores an armed one (after checking that the
/// medium is the same one and the journal is whole), removes a never-armed
/// or finished one, and leaves alone one a running test holds. The
/// journal's lock is taken before anything is read, so a test that is
/// still copying its original data is never mistaken for one that died
/// before arming. An armed journal is restored with the other armed
/// journals of its test, latest first (see [`restore_test`]), so that the
/// one path any message names finishes the whole test.
pub fn recover(path: &Path) -> Result<Outcome> {
    if std::fs::symlink_metadata(path).is_err_and(|e| e.kind() == io::ErrorKind::NotFound) {
        return Err(usage(format!(
            "there is no journal at {}: it was already recovered, or the path is wrong (`iocurve recover` without a path finishes every journal in the journal directory)",
            path.display()
        )));
    }
    // Only a journal iocurve could have made, read from the descriptor
    // checked; from here on its real path (no links to swap). Its lock is
    // taken before anything is read: a live test keeps its journals.
    let trusted = match open_held(path)? {
        Opened::Ours(trusted) => trusted,
        Opened::Held(pid) => return Ok(Outcome::InUse { pid }),
    };
    let path = trusted.path.as_path();
    let journal = match Journal::from_open_file(path, trusted.file) {
        Ok(j) => j,
        Err(e) if raw_state(path) == Some(State::Filling) => {
            let _ = e;
            discard(path);
            return Ok(Outcome::Discarded { target: None });
        }
        Err(e) => return Err(refusal(path, &e)),
    };
    if let Some(pid) = journal.meta.as_ref().map(|m| m.pid) {
        if is_live_iocurve(pid) {
            return Ok(Outcome::InUse { pid: Some(pid) });
        }
    }
    match journal.state {
        State::Filling => {
            let target = journal.meta.as_ref().map(|m| m.identity.path.clone());
            let _ = remove_own(&journal);
            Ok(Outcome::Discarded { target })
        }
        State::Done => {
            let _ = remove_own(&journal);
            Ok(Outcome::AlreadyDone)
        }
        State::Armed => restore_test(journal),
    }
}

/// Opens another journal of a test through [`trust`] and takes its lock;
/// refused while a live process holds it.
fn open_part(path: &Path) -> Result<Journal> {
    match open_held(path)? {
        Opened::Ours(trusted) => {
            Journal::from_open_file(&trusted.path, trusted.file).map_err(|e| refusal(path, &e))
        }
        Opened::Held(pid) => Err(usage(format!(
            "{} is held by {}, which is still running: let it finish, then run `{}` again",
            path.display(),
            lock::holder_name(pid),
            recover_command(path)
        ))),
    }
}

/// Restores every armed journal of the test `journal` belongs to (same
/// process, same medium, same directory), the latest part first. Order
/// matters where the medium aliases addresses (a wrapping fake card): a
/// later journal may have copied bytes an earlier part's writes had
/// already changed, and the earlier journal, written back last, puts the
/// originals over them. The first failure stops: earlier parts stay armed.
fn restore_test(journal: Journal) -> Result<Outcome> {
    let parts = parts_of_test(&journal)?;
    let count = parts.len();
    let (mut target, mut bytes, mut left) = (String::new(), 0, Vec::new());
    let mut given = Some(journal);
    for path in &parts {
        let mut part = match given.take_if(|j| &j.path == path) {
            Some(j) => j,
            None => open_part(path)?,
        };
        if part.state != State::Armed {
            continue;
        }
        let (t, b, l) = restore_armed(&mut part)?;
        target = t;
        bytes += b;
        left.extend(l.map(|why| format!("{}: {why}", path.display())));
    }
    Ok(Outcome::Restored {
        target,
        bytes,
        journals: count,
        left,
    })
}

/// The armed journals of `journal`'s test beside it, itself included,
/// latest part first. A damaged one named after the same device and
/// process refuses them all: it may be a later part, whose place in the
/// order is unknown (one that never got past filling is no part).
fn parts_of_test(journal: &Journal) -> Result<Vec<PathBuf>> {
    let Some(meta) = journal.meta.as_ref() else {
        return Ok(vec![journal.path.clone()]);
    };
    let dir = journal.path.parent().unwrap_or(Path::new("."));
    let own = format!("-{}_{}-", meta.identity.major, meta.identity.minor);
    let pid = format!("-{}.{EXTENSION}", meta.pid);
    let mut parts = vec![(meta.part, journal.path.clone())];
    for p in list(dir).unwrap_or_default() {
        if p == journal.path {
            continue;
        }
        let other = match Journal::peek(&p) {
            Ok(other) => other,
            Err(e) => {
                let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
                let sibling = name.is_some_and(|n| n.contains(&own) && n.ends_with(&pid));
                if sibling && raw_state(&p) != Some(State::Filling) {
                    return Err(refusal(&p, &e));
                }
                continue;
            }
        };
        if let Some(m) = other.meta.as_ref().filter(|m| {
            other.state == State::Armed && m.pid == meta.pid && m.identity == meta.identity
        }) {
            parts.push((m.part, p));
        }
    }
    parts.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| b.1.cmp(&a.1)));
    Ok(parts.into_iter().map(|(_, p)| p).collect())
}

/// Writes one armed journal back; the target and the bytes restored.
fn restore_armed(journal: &mut Journal) -> Result<(String, u64, Option<String>)> {
    let meta = journal.meta.clone().expect("an armed journal has metadata");
    let target = identity::locate(&meta.identity).map_err(|e| {
        IoFailure::new(
            format!("cannot find {} to restore it: {e}; the journal {} is kept: reconnect the device and run `{}` again", meta.identity.path, journal.path.display(), recover_command(&journal.path)),
            None,
        )
    })?;
    let now = Identity::of_path(&target).map_err(|e| {
        IoFailure::new(
            format!(
                "cannot examine {} to restore it: {e}; the journal {} is kept",
                target.display(),
                journal.path.display()
            ),
            None,
        )
    })?;
    if !meta.identity.is_same_medium(&now) {
        let why = meta.identity.mismatch(&now).unwrap_or_default();
        return Err(usage(format!(
            "refusing to restore {} onto {}: it is not the medium the journal was taken from ({why}). The journal is kept",
            journal.path.display(),
            target.display()
        )));
    }
    journal
        .verify_all()
        .map_err(|e| refusal(&journal.path, &e))?;
    let writer = open_writer(&target, meta.identity.kind == "block_device").map_err(|e| {
        IoFailure::new(
            format!("cannot open {} to restore it: {e}", target.display()),
            Some(e),
        )
    })?;
    opened_is(&writer, &now, &target)?;
    medium_free(&writer, &target, &journal.path)?;
    let done = apply(journal, &writer, &target).map_err(|e| restore_failure(&journal.path, e))?;
    Ok((target.display().to_string(), done.bytes, done.journal_left))
}

/// The state word of a journal whose rest may be damaged.
fn raw_state(path: &Path) -> Option<State> {
    let journal = Journal::peek(path);
    if let Ok(j) = journal {
        return Some(j.state);
    }
    let f = File::open(path).ok()?;
    let mut p = [0u8; 16];
    f.read_exact_at(&mut p, 0).ok()?;
    (&p[0..8] == journal::MAGIC && p[8..16] == *b"FILLING\0").then_some(State::Filling)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::safety::journal::{JournalWriter, Region};
    use crate::safety::lock::Lock;
    use crate::safety::preserve::fixture::{SIZE, Setup, contents, ended, setup, unlocked};
    use crate::safety::preserve::save::{new_meta, write_journal};
    use proptest::prelude::*;
    use std::sync::atomic::AtomicBool;

    #[test]
    fn recover_restores_and_a_second_run_finds_nothing() {
        let s = setup(1);
        assert_eq!(Journal::peek(&s.journal).unwrap().state, State::Armed);
        let out = recover(&s.journal).unwrap();
        assert_eq!(
            out,
            Outcome::Restored {
                target: s.target.display().to_string(),
                bytes: 9000 + (SIZE as u64 - 20480),
                journals: 1,
                left: Vec::new(),
            }
        );
        assert_eq!(contents(&s), s.original);
        assert!(list(&s.journals).unwrap().is_empty());
        let again = recover(&s.journal).unwrap_err();
        assert!(again.to_string().contains("already recovered"), "{again}");
        assert_eq!(contents(&s), s.original);
    }

    /// A second journal of the same test over bytes the first part's writes
    /// had changed (what an aliasing fake card gives): written back first,
    /// so that the first part's originals end up on the medium.
    #[test]
    fn the_journals_of_one_test_are_restored_together_latest_first() {
        for named in [0, 1] {
            let s = setup(10 + named);
            let later = Region {
                offset: 4096,
                length: 8192,
            };
            let mut meta = new_meta(Identity::of_path(&s.target).unwrap(), vec![later], 4096);
            meta.part = 1;
            // Dropped at once: its test is over (its lock gone), as after a kill.
            let p1 = ended(
                write_journal(&s.target, meta, &s.journals, &AtomicBool::new(false)).unwrap(),
            );
            let mut now = s.written.clone();
            now[4096..12288].fill(0xDD);
            std::fs::write(&s.target, &now).unwrap();
            let path = [&s.journal, &p1][named as usize];
            let out = recover(path).unwrap();
            assert!(
                matches!(out, Outcome::Restored { journals: 2, .. }),
                "{out:?}"
            );
            assert_eq!(contents(&s), s.original, "naming part {named}");
            assert!(list(&s.journals).unwrap().is_empty());
        }
    }

    #[test]
    fn a_damaged_journal_of_the_same_test_holds_back_the_others() {
        // Its header (unreadable, known by its name) or its data.
        for (seed, header) in [(12, true), (13, false)] {
            let s = setup(seed);
            let later = Region {
                offset: 20480,
                length: 4096,
            };
            let mut meta = new_meta(Identity::of_path(&s.target).unwrap(), vec![later], 4096);
            meta.part = 1;
            // Dropped at once: its test is over (its lock gone), as after a kill.
            let p1 = ended(
                write_journal(&s.target, meta, &s.journals, &AtomicBool::new(false)).unwrap(),
            );
            let mut bytes = std::fs::read(&p1).unwrap();
            let at = if header { 16 } else { bytes.len() - 1 };
            bytes[at] ^= 0x10;
            std::fs::write(&p1, &bytes).unwrap();
            let e = recover(&s.journal).unwrap_err();
            assert!(e.to_string().contains("refusing to use the journal"), "{e}");
            assert_eq!(contents(&s), s.written, "nothing was written back");
            assert!(s.journal.exists() && p1.exists());
        }
    }

    #[test]
    fn an_interrupted_restore_is_finished_and_a_done_journal_removed() {
        let s = setup(2);
        // A restore that died half-way: the journal is still armed.
        std::fs::write(
            &s.target,
            [&s.original[..10_000], &s.written[10_000..]].concat(),
        )
        .unwrap();
        assert!(matches!(
            recover(&s.journal).unwrap(),
            Outcome::Restored { .. }
        ));
        assert_eq!(contents(&s), s.original);

        // One that died after marking the journal done, before deleting it.
        let s = setup(3);
        let mut j = Journal::open(&s.journal).unwrap();
        j.set_state(State::Done).unwrap();
        assert_eq!(recover(&s.journal).unwrap(), Outcome::AlreadyDone);
        assert_eq!(
            contents(&s),
            s.written,
            "a done journal is not applied again"
        );
        assert!(!s.journal.exists());
    }

    #[test]
    fn a_never_armed_journal_is_discarded_without_writing() {
        let s = setup(4);
        let j = Journal::open(&s.journal).unwrap();
        journal::set_state(&j.file, State::Filling).unwrap();
        let out = recover(&s.journal).unwrap();
        assert!(matches!(out, Outcome::Discarded { .. }), "{out:?}");
        assert_eq!(contents(&s), s.written);
        assert!(!s.journal.exists());
    }

    #[test]
    fn a_journal_its_test_still_holds_is_left_alone_in_every_state() {
        for state in [State::Filling, State::Armed, State::Done] {
            let s = setup(40);
            let j = Journal::open(&s.journal).unwrap();
            journal::set_state(&j.file, state).unwrap();
            // The test is alive: it holds the journal's lock.
            let held = File::open(&s.journal).unwrap();
            assert_eq!(lock::try_exclusive(&held).unwrap(), Lock::Taken);
            let out = recover(&s.journal).unwrap();
            assert!(matches!(out, Outcome::InUse { .. }), "{state:?}: {out:?}");
            assert_eq!(contents(&s), s.written, "{state:?}: nothing written");
            assert!(s.journal.exists(), "{state:?}: journal kept");
            drop(held);
            unlocked(&s.journal);
            let out = recover(&s.journal).unwrap();
            assert!(!matches!(out, Outcome::InUse { .. }), "{state:?}: {out:?}");
        }
    }

    #[test]
    fn a_journal_being_made_is_locked_before_it_has_its_name() {
        let s = setup(41);
        let path = s.journals.join("new.iocj");
        let writer = JournalWriter::create(&path, 4096).unwrap();
        assert!(!path.with_extension(journal::MAKING_EXTENSION).exists());
        let out = recover(&path).unwrap();
        assert!(matches!(out, Outcome::InUse { .. }), "{out:?}");
        assert!(path.exists());
        drop(writer);
        unlocked(&path);
        let out = recover(&path).unwrap();
        assert_eq!(out, Outcome::Discarded { target: None });
        assert!(!path.exists());
    }

    #[test]
    fn two_recovers_at_once_restore_once_and_the_other_stands_aside() {
        for seed in 50..58 {
            let s = setup(seed);
            let outcomes: Vec<Result<Outcome>> = std::thread::scope(|scope| {
                let a = scope.spawn(|| recover(&s.journal));
                let b = scope.spawn(|| recover(&s.journal));
                vec![a.join().unwrap(), b.join().unwrap()]
            });
            let restored = outcomes
                .iter()
                .filter(|o| matches!(o, Ok(Outcome::Restored { .. })))
                .count();
            assert_eq!(restored, 1, "seed {seed}: {outcomes:?}");
            for o in &outcomes {
                match o {
                    // Met it held, or met it done after the first let go.
                    Ok(Outcome::Restored { .. } | Outcome::InUse { .. } | Outcome::AlreadyDone) => {
                    }
                    // The first had finished and removed it already.
                    Err(e) => {
                        let e = format!("{e:#}");
                        assert!(
                            e.contains("there is no journal") || e.contains("No such file"),
                            "seed {seed}: {e}"
                        );
                    }
                    Ok(other) => panic!("seed {seed}: {other:?}"),
                }
            }
            assert_eq!(contents(&s), s.original, "seed {seed}");
            assert!(!s.journal.exists());
        }
    }

    #[test]
    fn another_medium_is_refused() {
        let s = setup(5);
        let other = s.target.with_extension("new");
        std::fs::write(&other, &s.written).unwrap();
        std::fs::rename(&other, &s.target).unwrap();
        let e = recover(&s.journal).unwrap_err();
        assert!(e.to_string().contains("not the medium"), "{e}");
        assert_eq!(crate::error::exit_code(&e), 2);
        assert_eq!(contents(&s), s.written);
        assert!(s.journal.exists(), "the journal is kept");
    }

    /// The structural points of an armed journal: every prefix field, the
    /// metadata's first, middle and last bytes, each chunk's first and last.
    fn structural_points(j: &Path) -> Vec<u64> {
        let journal = Journal::peek(j).unwrap();
        let meta_len = serde_json::to_vec(journal.meta.as_ref().unwrap())
            .unwrap()
            .len() as u64;
        let mut points: Vec<u64> = vec![0, 7, 8, 15, 16, 23, 24, 31, 32, 35, 36, 39, 40, 63];
        points.extend([64, 64 + meta_len / 2, 64 + meta_len - 1]);
        for c in journal.chunks() {
            points.extend([c.journal_offset, c.journal_offset + c.len - 1]);
        }
        points
    }

    fn assert_refused_untouched(s: &Setup, what: &str) {
        let before = std::fs::read(&s.journal).unwrap();
        match recover(&s.journal) {
            Err(e) => assert!(
                e.to_string().contains("refusing to use the journal"),
                "{what}: {e}"
            ),
            Ok(out) => panic!("{what}: accepted ({out:?})"),
        }
        assert_eq!(contents(s), s.written, "{what}: the target was written");
        assert_eq!(
            std::fs::read(&s.journal).unwrap(),
            before,
            "{what}: journal changed"
        );
    }

    #[test]
    fn a_flipped_byte_anywhere_structural_is_refused_whole() {
        let s = setup(6);
        let pristine = std::fs::read(&s.journal).unwrap();
        for at in structural_points(&s.journal) {
            let mut bad = pristine.clone();
            bad[at as usize] ^= 0x01;
            std::fs::write(&s.journal, &bad).unwrap();
            assert_refused_untouched(&s, &format!("flip at {at}"));
        }
    }

    #[test]
    fn a_truncated_journal_is_refused_whole() {
        let s = setup(7);
        let pristine = std::fs::read(&s.journal).unwrap();
        let mut cuts: Vec<u64> = structural_points(&s.journal);
        cuts.push(pristine.len() as u64 - 1);
        for cut in cuts {
            std::fs::write(&s.journal, &pristine[..cut as usize]).unwrap();
            assert_refused_untouched(&s, &format!("cut at {cut}"));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn any_damage_outside_padding_is_caught(pos in 0.0f64..1.0, xor in 1u8..=255, seed in 0u64..4) {
            let s = setup(100 + seed);
            let mut bytes = std::fs::read(&s.journal).unwrap();
            let journal = Journal::peek(&s.journal).unwrap();
            let meta_end = 64 + serde_json::to_vec(journal.meta.as_ref().unwrap()).unwrap().len();
            // Covered bytes: the prefix but the state word, the metadata, the data.
            let covered: Vec<usize> = (0..8).chain(16..meta_end).chain(journal.data_offset as usize..bytes.len()).collect();
            let at = covered[((covered.len() - 1) as f64 * pos) as usize];
            bytes[at] ^= xor;
            std::fs::write(&s.journal, &bytes).unwrap();
            let out = recover(&s.journal);
            prop_assert!(out.is_err(), "damage at {} accepted: {:?}", at, out);
            prop_assert_eq!(contents(&s), s.written.clone());
        }
    }
}
