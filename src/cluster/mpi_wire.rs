//! The [`Wire`] over MPI (rsmpi, Open MPI or MPICH underneath): the
//! world communicator, point-to-point messages of bytes, and `MPI_Abort`.
//!
//! MPI is initialised with `MPI_THREAD_SERIALIZED`: the stonewall's watcher
//! thread probes for a finished rank while the main thread waits for the
//! counted pass, and never at the same time as another MPI call.

use super::wire::{Tag, Wire};
use mpi::environment::{Threading, Universe};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::{Destination, Source};
use std::cell::RefCell;

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
        Self::world()
            .process_at_rank(to as i32)
            .send_with_tag(bytes, tag as i32);
    }

    fn receive(&self, from: u32, tag: Tag) -> Vec<u8> {
        Self::world()
            .process_at_rank(from as i32)
            .receive_vec_with_tag::<u8>(tag as i32)
            .0
    }

    fn receive_any(&self, tag: Tag) -> (u32, Vec<u8>) {
        let (bytes, status) = Self::world()
            .any_process()
            .receive_vec_with_tag::<u8>(tag as i32);
        (status.source_rank() as u32, bytes)
    }

    fn probe(&self, tag: Tag) -> bool {
        Self::world()
            .any_process()
            .immediate_probe_with_tag(tag as i32)
            .is_some()
    }

    fn probe_from(&self, from: u32, tag: Tag) -> bool {
        Self::world()
            .process_at_rank(from as i32)
            .immediate_probe_with_tag(tag as i32)
            .is_some()
    }

    fn abort(&self, code: i32) -> ! {
        Self::world().abort(code)
    }
}
