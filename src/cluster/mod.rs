//! Many hosts at once: `mpirun -n N iocurve …` (or `srun`), each rank
//! measuring its own target, rank 0 merging the ranks' results exactly.
//!
//! MPI is the transport because it is what every cluster already launches
//! with: process placement, failure handling and collectives come from the
//! launcher (IOR and mdtest do the same). This module speaks to the other
//! ranks through one small wire (rsmpi behind the `mpi` feature;
//! threads in one process for the unit tests), measures the clocks, holds
//! every rank at the start of each counted pass, and hands rank 0 what the
//! pure merge in [`crate::analysis::cluster`] needs.
