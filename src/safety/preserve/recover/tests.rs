//! The unit tests of `recover` (kept apart: the file would outgrow its
//! limit), on the fixture's file targets.

use super::*;
use crate::safety::journal::{JournalWriter, Meta, Region};
use crate::safety::lock::Lock;
use crate::safety::preserve::fixture::{SIZE, Setup, contents, ended, opened, setup, unlocked};
use crate::safety::preserve::save::{new_meta, write_journal};
use proptest::prelude::*;
use std::sync::atomic::AtomicBool;

/// A journal of `meta` over the fixture's target, written and dropped at
/// once: its test is over (its lock gone), as after a kill.
fn journalled_and_ended(s: &Setup, meta: Meta) -> PathBuf {
    let journal = write_journal(
        &opened(&s.target),
        &s.target,
        meta,
        &s.journals,
        &AtomicBool::new(false),
    );
    ended(journal.unwrap())
}

/// Part 1 of the fixture's test, journalling `length` bytes at `offset`,
/// written and ended at once (as after a kill).
fn second_part(s: &Setup, offset: u64, length: u64) -> PathBuf {
    let later = Region { offset, length };
    let mut meta = new_meta(Identity::of_path(&s.target).unwrap(), vec![later], 4096);
    meta.part = 1;
    journalled_and_ended(s, meta)
}

#[test]
fn recover_restores_and_a_second_run_finds_nothing() {
    let s = setup(1);
    assert_eq!(Journal::peek(&s.journal).unwrap().state, State::Armed);
    let out = recover(&s.journal, false).unwrap();
    assert_eq!(
        out,
        Outcome::Restored {
            target: s.target.display().to_string(),
            bytes: 9000 + (SIZE as u64 - 20480),
            journals: 1,
            left: Vec::new(),
            kept: 0,
            evidence: Evidence::Quiet,
        }
    );
    assert_eq!(contents(&s), s.original);
    assert!(list(&s.journals).unwrap().is_empty());
    let again = recover(&s.journal, false).unwrap_err();
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
        let p1 = second_part(&s, 4096, 8192);
        let mut now = s.written.clone();
        now[4096..12288].fill(0xDD);
        std::fs::write(&s.target, &now).unwrap();
        let path = [&s.journal, &p1][named as usize];
        let out = recover(path, false).unwrap();
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
        let p1 = second_part(&s, 20480, 4096);
        let mut bytes = std::fs::read(&p1).unwrap();
        let at = if header { 16 } else { bytes.len() - 1 };
        bytes[at] ^= 0x10;
        std::fs::write(&p1, &bytes).unwrap();
        let e = recover(&s.journal, false).unwrap_err();
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
        recover(&s.journal, false).unwrap(),
        Outcome::Restored { .. }
    ));
    assert_eq!(contents(&s), s.original);

    // One that died after marking the journal done, before deleting it.
    let s = setup(3);
    let mut j = Journal::open(&s.journal).unwrap();
    j.set_state(State::Done).unwrap();
    assert_eq!(recover(&s.journal, false).unwrap(), Outcome::AlreadyDone);
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
    let out = recover(&s.journal, false).unwrap();
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
        let out = recover(&s.journal, false).unwrap();
        assert!(matches!(out, Outcome::InUse { .. }), "{state:?}: {out:?}");
        assert_eq!(contents(&s), s.written, "{state:?}: nothing written");
        assert!(s.journal.exists(), "{state:?}: journal kept");
        drop(held);
        unlocked(&s.journal);
        let out = recover(&s.journal, false).unwrap();
        assert!(!matches!(out, Outcome::InUse { .. }), "{state:?}: {out:?}");
    }
}

#[test]
fn a_journal_being_made_is_locked_before_it_has_its_name() {
    let s = setup(41);
    let path = s.journals.join("new.iocj");
    let writer = JournalWriter::create(&path, 4096).unwrap();
    assert!(!path.with_extension(journal::MAKING_EXTENSION).exists());
    let out = recover(&path, false).unwrap();
    assert!(matches!(out, Outcome::InUse { .. }), "{out:?}");
    assert!(path.exists());
    drop(writer);
    unlocked(&path);
    let out = recover(&path, false).unwrap();
    assert_eq!(out, Outcome::Discarded { target: None });
    assert!(!path.exists());
}

#[test]
fn two_recovers_at_once_restore_once_and_the_other_stands_aside() {
    for seed in 50..58 {
        let s = setup(seed);
        let outcomes: Vec<Result<Outcome>> = std::thread::scope(|scope| {
            let a = scope.spawn(|| recover(&s.journal, false));
            let b = scope.spawn(|| recover(&s.journal, false));
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
                Ok(Outcome::Restored { .. } | Outcome::InUse { .. } | Outcome::AlreadyDone) => {}
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
    let e = recover(&s.journal, false).unwrap_err();
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
    match recover(&s.journal, false) {
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
        let out = recover(&s.journal, false);
        prop_assert!(out.is_err(), "damage at {} accepted: {:?}", at, out);
        prop_assert_eq!(contents(&s), s.written.clone());
    }
}

/// A journal whose file was deleted and made again under its name, the
/// new one taking its inode (birth time or generation differ): set aside,
/// and the new file untouched.
#[test]
fn a_journal_of_a_file_made_again_is_set_aside_and_never_applied() {
    let s = setup(60);
    let id = Identity::of_path(&s.target).unwrap();
    let mut gone = id.clone();
    gone.generation = Some(id.generation.unwrap_or(7).wrapping_add(1));
    gone.birth = id.birth.map(|b| crate::safety::birth::Stamp {
        sec: b.sec - 1,
        ..b
    });
    let regions = vec![Region {
        offset: 0,
        length: 8192,
    }];
    let p = journalled_and_ended(&s, new_meta(gone, regions, 4096));
    let before = contents(&s);
    let out = recover(&p, false).unwrap();
    let Outcome::SetAside { kept_at, .. } = out else {
        panic!("{out:?}")
    };
    assert_eq!(contents(&s), before, "nothing written to the new file");
    assert!(
        !p.exists()
            && kept_at
                .iter()
                .all(|k| k.exists() && k.to_string_lossy().ends_with(".stale"))
    );
    assert!(!list(&s.journals).unwrap().contains(&p));
}

/// A test killed mid-run whose target was written well after its last
/// heartbeat: refused without --force, the journal kept; with --force
/// the originals go back.
#[test]
fn a_target_written_after_the_last_heartbeat_is_refused_unless_forced() {
    let s = setup(61);
    // The last beat, a minute before the target was changed.
    let j = Journal::open(&s.journal).unwrap();
    let mut last = j.last_beat().expect("armed journals beat");
    last.seq += 10;
    last.wall.sec -= 60;
    let room = j.meta.as_ref().unwrap().beat_offset(j.data_offset).unwrap();
    crate::safety::journal::beat::write_beat(&j.file, room, &last).unwrap();
    drop(j);
    let e = recover(&s.journal, false).unwrap_err();
    assert!(e.to_string().contains("--force"), "{e}");
    assert_eq!(crate::error::exit_code(&e), 2);
    assert_eq!(contents(&s), s.written, "nothing written");
    assert!(s.journal.exists());
    let out = recover(&s.journal, true).unwrap();
    assert!(
        matches!(
            out,
            Outcome::Restored {
                evidence: Evidence::Forced,
                ..
            }
        ),
        "{out:?}"
    );
    assert_eq!(contents(&s), s.original);
}

/// A journal the test had hashed (WRITTEN): blocks written since are left
/// as found, the others get their originals back.
#[test]
fn blocks_written_since_the_test_are_left_as_found() {
    let s = setup(62);
    let mut j = Journal::open(&s.journal).unwrap();
    let target = opened(&s.target);
    let reader = crate::safety::preserve::medium::reader_for(&target).unwrap();
    let table = crate::safety::preserve::writeback::hash_test_bytes(&j, &reader).unwrap();
    j.store_hashes(table).unwrap();
    drop(j);
    // The user writes one whole block and part of another after the test.
    let mut now = s.written.clone();
    now[4096..8192].fill(0x11);
    now[20480..20490].fill(0x22);
    std::fs::write(&s.target, &now).unwrap();
    let out = recover(&s.journal, false).unwrap();
    let Outcome::Restored {
        kept,
        bytes,
        evidence,
        ..
    } = out
    else {
        panic!("{out:?}")
    };
    assert_eq!((kept, evidence), (8192, Evidence::TestHashes));
    assert_eq!(bytes, 9000 + (SIZE as u64 - 20480) - 8192);
    let mut want = s.original.clone();
    want[4096..8192].copy_from_slice(&now[4096..8192]);
    want[20480..24576].copy_from_slice(&now[20480..24576]);
    assert_eq!(contents(&s), want);
}

/// A journal of format 1 (no heartbeat, no table) is still recovered,
/// whole, and the outcome says nothing could be told.
#[test]
fn a_format_1_journal_is_restored_whole_and_says_it_could_not_tell() {
    let s = setup(63);
    let mut meta = new_meta(
        Identity::of_path(&s.target).unwrap(),
        vec![Region {
            offset: 4096,
            length: 4096,
        }],
        4096,
    );
    meta.format = 1;
    meta.part = 1;
    let p = journalled_and_ended(&s, meta);
    assert!(Journal::peek(&p).unwrap().last_beat().is_none());
    std::fs::remove_file(&s.journal).unwrap();
    // Its test writes over what it journalled (the fixture's bytes).
    let mut now = s.written.clone();
    now[4096..8192].fill(0x33);
    std::fs::write(&s.target, &now).unwrap();
    let out = recover(&p, false).unwrap();
    assert!(
        matches!(
            out,
            Outcome::Restored {
                bytes: 4096,
                evidence: Evidence::Unknown(crate::safety::preserve::Unknowable::NoHeartbeat),
                ..
            }
        ),
        "{out:?}"
    );
    assert_eq!(contents(&s), s.written);
}
