//! The [`Wire`] over MPI (rsmpi, Open MPI or MPICH underneath): the
//! world communicator, point-to-point messages of bytes, and `MPI_Abort`.
//!
//! MPI is initialised with `MPI_THREAD_SERIALIZED`: three threads speak
//! (the command's, the stonewall's watcher and the liveness beat), one at
//! a time, each call taken under one lock. A message is taken only once a
//! matched probe found it, so no call ever blocks while holding the lock.

use super::wire::{Tag, Wire};
use mpi::environment::{Threading, Universe};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::{Destination, MatchedReceiveVec, Source};
use std::cell::RefCell;
use std::sync::{Mutex, MutexGuard};

/// One MPI call at a time, whichever thread makes it.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

thread_local! {
    /// The initialised MPI; dropping it calls `MPI_Finalize`, which every
    /// rank must do before it exits or the launcher reports a failure.
    static UNIVERSE: RefCell<Option<Universe>> = const { RefCell::new(None) };
}

/// The world communicator of this process.
pub struct MpiWire {
    rank: u32,
    size: u32,
}

impl MpiWire {
    /// Initialises MPI on the calling (main) thread; `None` when MPI could
    /// not be initialised or gives less than serialized threading.
    pub fn init() -> Option<MpiWire> {
        let (universe, threading) = mpi::initialize_with_threading(Threading::Serialized)?;
        if threading < Threading::Serialized {
            return None;
        }
        let world = universe.world();
        let wire = MpiWire {
            rank: world.rank() as u32,
            size: world.size() as u32,
        };
        UNIVERSE.with(|u| *u.borrow_mut() = Some(universe));
        Some(wire)
    }

    /// `MPI_Finalize`, on the thread that called [`MpiWire::init`].
    pub fn finalize() {
        let _one = serial();
        UNIVERSE.with(|u| drop(u.borrow_mut().take()));
    }

    /// Leaves without `MPI_Finalize`: after another rank died, finalize
    /// would wait for it. (The universe is a thread-local whose drop
    /// finalizes, and `exit` runs the main thread's destructors.)
    pub fn forsake() {
        UNIVERSE.with(|u| std::mem::forget(u.borrow_mut().take()));
    }

    fn world() -> SimpleCommunicator {
        SimpleCommunicator::world()
    }
}

impl Wire for MpiWire {
    fn rank(&self) -> u32 {
        self.rank
    }

    fn size(&self) -> u32 {
        self.size
    }

    fn send(&self, to: u32, tag: Tag, bytes: &[u8]) {
        let _one = serial();
        Self::world()
            .process_at_rank(to as i32)
            .send_with_tag(bytes, tag as i32);
    }

    fn try_receive(&self, from: Option<u32>, tag: Tag) -> Option<(u32, Vec<u8>)> {
        let _one = serial();
        let world = Self::world();
        let found = match from {
            Some(rank) => world
                .process_at_rank(rank as i32)
                .immediate_matched_probe_with_tag(tag as i32)?,
            None => world
                .any_process()
                .immediate_matched_probe_with_tag(tag as i32)?,
        };
        let (bytes, status) = found.matched_receive_vec::<u8>();
        Some((status.source_rank() as u32, bytes))
    }

    fn abort(&self, code: i32) -> ! {
        // Not under the lock: a thread stuck in a call must not keep the
        // job alive.
        Self::world().abort(code)
    }
}
