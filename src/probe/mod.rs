//! Who the device is and what it sits behind, from sysfs.
//!
//! Results carry this so that figures can be judged against the link they
//! went through (a USB 2.0 reader caps any card near 40 MB/s) and so runs of
//! one device can be found again later.

pub mod link;

pub use link::{Interface, interface_of};
