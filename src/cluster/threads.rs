//! Ranks as threads of one process: the [`Wire`] the unit tests run every
//! exchange on (clock ping-pong, the checked barrier, the gather and the
//! merge), without MPI.

use super::wire::{Tag, Wire};
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};

/// One mailbox per rank: (from, tag, bytes) in arrival order.
#[derive(Default)]
struct Mailbox {
    queue: Mutex<VecDeque<(u32, Tag, Vec<u8>)>>,
    arrived: Condvar,
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

    fn take(&self, pick: impl Fn(u32, Tag) -> bool) -> (u32, Vec<u8>) {
        let mailbox = &self.boxes[self.rank as usize];
        let mut queue = mailbox.queue.lock().unwrap();
        loop {
            if let Some(i) = queue.iter().position(|(f, t, _)| pick(*f, *t)) {
                let (from, _, bytes) = queue.remove(i).unwrap();
                return (from, bytes);
            }
            queue = mailbox.arrived.wait(queue).unwrap();
        }
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
        mailbox.arrived.notify_all();
    }

    fn receive(&self, from: u32, tag: Tag) -> Vec<u8> {
        self.take(|f, t| f == from && t == tag).1
    }

    fn receive_any(&self, tag: Tag) -> (u32, Vec<u8>) {
        self.take(|_, t| t == tag)
    }

    fn probe(&self, tag: Tag) -> bool {
        let mailbox = &self.boxes[self.rank as usize];
        let queue = mailbox.queue.lock().unwrap();
        queue.iter().any(|(_, t, _)| *t == tag)
    }

    fn probe_from(&self, from: u32, tag: Tag) -> bool {
        let mailbox = &self.boxes[self.rank as usize];
        let queue = mailbox.queue.lock().unwrap();
        queue.iter().any(|(f, t, _)| *f == from && *t == tag)
    }

    fn abort(&self, code: i32) -> ! {
        panic!("rank {} aborted the job with code {code}", self.rank)
    }
}
