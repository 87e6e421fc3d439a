//! iocurve in the environments it meets and the harness that fakes them:
//! real block devices, ext4 images, the FUSE fault device (and its own self
//! test), the HTML report in a real browser, and MPI jobs on this host and
//! on fake hosts made of namespaces. These tests skip, saying
//! why, where the machine cannot provide the environment. See
//! tests/README.md.

#[path = "common/mod.rs"]
mod common;

#[path = "environments/block_device.rs"]
mod block_device;
#[path = "environments/device_stack.rs"]
mod device_stack;
#[path = "environments/faultdev_selftest.rs"]
mod faultdev_selftest;
#[cfg(feature = "mpi")]
#[path = "environments/mpi.rs"]
mod mpi;
#[path = "environments/report_browser.rs"]
mod report_browser;
#[path = "environments/unaligned.rs"]
mod unaligned;
