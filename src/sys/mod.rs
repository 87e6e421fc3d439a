//! The floor under everything: every foreign call and every `unsafe` block
//! that no safe wrapper (rustix, std) covers, one file per kernel concept, as
//! the io-uring crate lays out its own. Nothing here knows about benchmarks;
//! each function is a thin, documented doorway to one system call, and each
//! `unsafe` block says what keeps it sound (Cargo.toml denies `unsafe`
//! everywhere else, and clippy denies an undocumented block).

pub mod affinity;
pub mod buffer;
pub mod inode_version;
pub mod loop_device;
pub mod mmap;
pub mod page_cache;
pub mod reopen;
pub mod rusage;
pub mod sqlite;
pub mod stdio;
pub mod test_pause;
pub mod uring;

pub use affinity::{allowed_cpus, pin_current_thread};
pub use inode_version::inode_generation;
pub use loop_device::{LoopInfo64, loop_status64};
pub use page_cache::{evict_file, resident_pages};
pub use rusage::{cpu_seconds, thread_cpu_seconds};
pub use sqlite::sqlite_system_errno;
