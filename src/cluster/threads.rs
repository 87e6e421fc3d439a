//! Ranks as threads of one process: the [`Wire`] the unit tests run every
//! exchange on (clock ping-pong, the checked barrier, the gather and the
//! merge), without MPI.

use super::wire::{Tag, Wire};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// One mailbox per rank: (from, tag, bytes) in arrival order.
#[derive(Default)]
struct Mailbox {
    queue: Mutex<VecDeque<(u32, Tag, Vec<u8>)>>,
}

/// A rank of an in-process job.
pub struct ThreadWire {
    rank: u32,
    boxes: Arc<Vec<Mailbox>>,
}

impl ThreadWire {
    /// The ranks of a job of `size`, one wire each.
    pub fn job(size: u32) -> Vec<ThreadWire> {
        let boxes: Arc<Vec<Mailbox>> = Arc::new((0..size).map(|_| Mailbox::default()).collect());
        (0..size)
            .map(|rank| ThreadWire {
                rank,
                boxes: Arc::clone(&boxes),
            })
            .collect()
    }
}

impl Wire for ThreadWire {
    fn rank(&self) -> u32 {
        self.rank
    }

    fn size(&self) -> u32 {
        self.boxes.len() as u32
    }

    fn send(&self, to: u32, tag: Tag, bytes: &[u8]) {
        let mailbox = &self.boxes[to as usize];
        mailbox
            .queue
            .lock()
            .unwrap()
            .push_back((self.rank, tag, bytes.to_vec()));
    }

    fn try_receive(&self, from: Option<u32>, tag: Tag) -> Option<(u32, Vec<u8>)> {
        let mailbox = &self.boxes[self.rank as usize];
        let mut queue = mailbox.queue.lock().unwrap();
        let i = queue
            .iter()
            .position(|(f, t, _)| *t == tag && from.is_none_or(|want| want == *f))?;
        let (from, _, bytes) = queue.remove(i)?;
        Some((from, bytes))
    }

    fn abort(&self, code: i32) -> ! {
        panic!("rank {} aborted the job with code {code}", self.rank)
    }
}
