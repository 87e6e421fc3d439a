//! Tests that change or measure something the whole process or machine
//! shares, so they cannot run beside the other crates' tests: `cpu_load`
//! counts the CPU time of this whole process, and `no_uring` switches
//! io_uring off for the whole machine for a moment. Cargo runs test
//! binaries one after another, so nothing else runs with them; the two may
//! run together, since neither uses what the other changes or burns CPU
//! time in this process the other would count. A new test joins them only
//! under the same condition. See tests/README.md.

#[path = "common/mod.rs"]
mod common;

#[path = "alone/cpu_load.rs"]
mod cpu_load;
#[path = "alone/no_uring.rs"]
mod no_uring;
