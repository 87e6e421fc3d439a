//! Unit tests of `files`, kept beside it so the module reads as the
//! code it is.

use super::*;
use crate::engine::MonotonicClock;

/// A temporary folder (gone when dropped) and the path `s.bin` in it.
fn scratch() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.bin");
    (dir, path)
}

/// `len` bytes of the random pattern of `seed`.
fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut data = vec![0u8; len];
    Pattern::Random.fill(&mut data, seed);
    data
}

#[test]
fn the_default_count_holds_16_mib_between_4_and_200_files() {
    assert_eq!(default_count(1536), 200);
    assert_eq!(default_count(1 << 20), 16);
    assert_eq!(default_count(16 << 20), 4);
    assert_eq!(default_count(0), 200);
}

#[test]
fn sizes_of_zero_or_above_1_gib_are_refused_naming_the_option() {
    assert!(check_sizes(&[1, 1 << 30], "--sizes").is_ok());
    let none = check_sizes(&[], "--sizes").unwrap_err().to_string();
    assert_eq!(none, "--sizes needs sizes above 0, such as 8k or 1M");
    let big = check_sizes(&[(1 << 30) + 1], "--size")
        .unwrap_err()
        .to_string();
    assert!(big.starts_with("--size: "), "{big}");
    assert!(
        big.ends_with("is larger than the 1 GiB iocurve holds in memory"),
        "{big}"
    );
}

#[test]
fn the_stdio_call_size_must_be_1_byte_to_1_gib() {
    let stdio = |bs| read_method(FileReadMethod::Stdio, bs);
    assert_eq!(stdio(1).unwrap(), FileRead::Stdio(1));
    assert_eq!(stdio(1 << 30).unwrap(), FileRead::Stdio(1 << 30));
    assert!(stdio(0).is_err());
    assert!(stdio((1 << 30) + 1).is_err());
    assert_eq!(
        read_method(FileReadMethod::Pread, 0).unwrap(),
        FileRead::Read
    );
    assert_eq!(
        describe_method(FileRead::Stdio(4096)),
        LoadMethod::Stdio { call_bytes: 4096 }
    );
    assert_eq!(describe_method(FileRead::Mmap), LoadMethod::Mmap);
}

#[test]
fn a_full_file_system_is_named_with_its_fix() {
    let full = io::Error::from_raw_os_error(libc::ENOSPC);
    let text = save_failure(Path::new("d/save-4096.bin"), 4096, CopySync::End, &full);
    assert!(
        text.starts_with("saving d/save-4096.bin with 4096-byte write calls failed: "),
        "{text}"
    );
    assert!(
        text.ends_with("; the file system is full: free some space or give a smaller --size"),
        "{text}"
    );
}

#[test]
fn save_then_check_finds_every_byte_right() {
    let (_dir, path) = scratch();
    let data = random_bytes(10_000, 7);
    let t = save_with_calls(&path, &data, 1636, CopySync::End, MonotonicClock::new()).unwrap();
    assert_eq!(t.calls, 7);
    let check = check_saved(&path, &data).unwrap();
    assert!(check.ok());
    assert_eq!(check.bytes_checked, 10_000);
}

#[test]
fn o_direct_takes_only_calls_and_files_of_whole_blocks() {
    assert_eq!(direct_refusal(512, 256 << 10, 512), None);
    assert_eq!(direct_refusal(65536, 256 << 10, 4096), None);
    for (call, file, align) in [
        (768, 256 << 10, 512),
        (4096, 10_000, 512),
        (512, 256 << 10, 4096),
    ] {
        let why = direct_refusal(call, file, align).expect("refused");
        assert_eq!(why, SaveSkip::DirectUnaligned { align_bytes: align });
    }
}

#[test]
fn each_mode_saves_every_byte_without_a_final_fsync() {
    let (_dir, path) = scratch();
    let data = random_bytes(5000, 3);
    for sync in [CopySync::None, CopySync::Each] {
        let t = save_with_calls(&path, &data, 768, sync, MonotonicClock::new()).unwrap();
        assert_eq!((t.calls, t.fsync_ns), (7, 0), "{sync:?}");
        assert!(check_saved(&path, &data).unwrap().ok(), "{sync:?}");
    }
}

#[test]
fn check_finds_a_changed_byte() {
    let (_dir, path) = scratch();
    let data = vec![5u8; 4096];
    save_with_calls(&path, &data, 512, CopySync::End, MonotonicClock::new()).unwrap();
    let mut other = data.clone();
    other[1000] = 6;
    let check = check_saved(&path, &other).unwrap();
    assert_eq!(check.bytes_wrong, 1);
    assert_eq!(check.first_wrong_offset, Some(1000));
}

#[test]
fn loads_are_timed_per_file() {
    let dir = tempfile::tempdir().unwrap();
    let paths = create_files(dir.path(), 8192, 3, 1).unwrap();
    let mut buf = vec![0u8; 8192];
    let mut times = Vec::new();
    time_loads(
        &paths,
        &mut buf,
        &mut times,
        FileRead::Read,
        &AtomicBool::new(false),
        MonotonicClock::new(),
    )
    .unwrap();
    assert_eq!(times.len(), 3);
    assert!(times.iter().all(|&t| t > 0));
}

#[test]
fn every_method_reads_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let paths = create_files(dir.path(), 10_000, 2, 7).unwrap();
    let expected: Vec<u8> = std::fs::read(&paths[1]).unwrap();
    for how in [
        FileRead::Read,
        FileRead::Mmap,
        FileRead::Stdio(1),
        FileRead::Stdio(4096),
    ] {
        let mut buf = vec![0u8; 10_000];
        let mut times = Vec::new();
        let bytes = time_loads(
            &paths,
            &mut buf,
            &mut times,
            how,
            &AtomicBool::new(false),
            MonotonicClock::new(),
        )
        .unwrap();
        assert_eq!(bytes, 20_000, "{how:?}");
        assert_eq!(buf, expected, "{how:?}: the last file's bytes");
    }
}
