//! Who owns a journal or a medium right now: advisory locks that die with
//! their process.
//!
//! A journal's state word says what the journal holds, not whether a test
//! is still working on it: a `FILLING` journal may belong to a test that is
//! copying the original data at this moment, and an `ARMED` one to a test
//! that is writing. So the test takes an exclusive `flock(2)` on its journal
//! before the file has its final name and keeps it until the file is gone;
//! `recover` takes the same lock without waiting before it reads, discards
//! or restores anything, and leaves a journal alone while someone else holds
//! it. A second lock on the medium itself (the target's own inode, so every
//! path and every journal directory that leads to it meets the same lock)
//! keeps two write tests, or a test and a `recover`, off one medium at once.
//!
//! `flock` locks belong to the open file description: the kernel drops them
//! when the last descriptor closes, which a SIGKILL does, so no lock
//! outlives its test and none needs cleaning up after a crash. The holder's
//! pid, for the message, is read from `/proc/locks` (the kernel lists each
//! lock with its pid and the device and inode it covers).

use rustix::fs::FlockOperation;
use std::fs::File;
use std::io;
use std::os::unix::fs::MetadataExt;

/// Whether an exclusive lock was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lock {
    /// Ours now, until the descriptor closes.
    Taken,
    /// Another open file description holds it; the pid when it could be
    /// found (another pid namespace, a lock gone since: `None`).
    Held(Option<u32>),
}

/// Takes an exclusive lock on `file` without waiting.
pub fn try_exclusive(file: &File) -> io::Result<Lock> {
    match rustix::fs::flock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(Lock::Taken),
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => Ok(Lock::Held(holder(file))),
        Err(e) => Err(e.into()),
    }
}

/// Who holds a lock, for a message: `process N`, or `another process`
/// where `/proc/locks` did not show the pid.
pub fn holder_name(pid: Option<u32>) -> String {
    pid.map_or_else(|| "another process".to_string(), |p| format!("process {p}"))
}

/// The pid holding a `flock` on the inode `file` refers to, from
/// `/proc/locks`.
pub fn holder(file: &File) -> Option<u32> {
    let meta = file.metadata().ok()?;
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    let dev = (rustix::fs::major(meta.dev()), rustix::fs::minor(meta.dev()));
    holder_in(&locks, dev, meta.ino(), std::process::id())
}

/// The first pid other than `me` listed in `locks` (the text of
/// `/proc/locks`) with a FLOCK on device `dev`, inode `ino`. A line reads
/// `12: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF`, the device numbers
/// in hexadecimal; lines marked `->` are waiters, not holders.
fn holder_in(locks: &str, dev: (u32, u32), ino: u64, me: u32) -> Option<u32> {
    locks.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.get(1) != Some(&"FLOCK") {
            return None;
        }
        let pid: u32 = fields.get(4)?.parse().ok()?;
        let mut parts = fields.get(5)?.split(':');
        let major = u32::from_str_radix(parts.next()?, 16).ok()?;
        let minor = u32::from_str_radix(parts.next()?, 16).ok()?;
        let inode: u64 = parts.next()?.parse().ok()?;
        ((major, minor) == dev && inode == ino && pid != me).then_some(pid)
    })
}

/// Whether `a` and `b` are the same inode.
pub fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCKS: &str = "1: POSIX  ADVISORY  WRITE 900 08:01:77 0 EOF\n\
        2: FLOCK  ADVISORY  WRITE 4242 fd:1a:1234 0 EOF\n\
        2: -> FLOCK  ADVISORY  WRITE 5151 fd:1a:1234 0 EOF\n\
        3: FLOCK  ADVISORY  WRITE 17 08:01:1234 0 EOF\n";

    #[test]
    fn the_holder_is_found_by_device_and_inode_in_hexadecimal() {
        assert_eq!(holder_in(LOCKS, (0xfd, 0x1a), 1234, 1), Some(4242));
        assert_eq!(holder_in(LOCKS, (8, 1), 1234, 1), Some(17));
        assert_eq!(holder_in(LOCKS, (8, 1), 77, 1), None, "POSIX locks differ");
        assert_eq!(holder_in(LOCKS, (8, 1), 1234, 17), None, "not ourselves");
    }

    #[test]
    fn a_lock_excludes_a_second_description_and_dies_with_it() {
        let (_dir, path) = crate::safety::scratch::file_holding("j", b"x");
        let first = File::open(&path).unwrap();
        assert_eq!(try_exclusive(&first).unwrap(), Lock::Taken);
        let second = File::open(&path).unwrap();
        assert!(matches!(try_exclusive(&second).unwrap(), Lock::Held(_)));
        drop(first);
        // A fork in another test thread may hold a copy of `first` until
        // its child execs: the lock goes with the last copy.
        let started = std::time::Instant::now();
        while try_exclusive(&second).unwrap() != Lock::Taken {
            assert!(
                started.elapsed().as_secs() < 10,
                "the lock outlived its holder"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}
