//! Turning measured figures into answers: what a transfer-size curve says
//! about the fixed cost per request, the bandwidth, where the device
//! misbehaves, and whether a figure could have come through the link at all.
//! Pure functions of results; no I/O.

pub mod cluster;
pub mod compare;
pub mod copy;
pub mod curve;
pub mod curve_reading;
pub mod files;
pub mod flash;
pub mod ranks;
pub mod surface;
pub mod sustain;
