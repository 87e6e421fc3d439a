//! Data safety for write tests on media that hold data: `--preserve` copies
//! what a test overwrites into a crash-proof journal ([`journal`]) on another
//! file system and puts it back afterwards ([`preserve`]); `iocurve recover`
//! finishes the job after a crash. [`identity`] makes sure a journal is only
//! ever written back to the medium it came from ([`birth`]: not to a new
//! file that took a deleted one's inode), and [`trust`] that it is one
//! iocurve could have made, not one planted for root to apply.

pub mod birth;
pub mod identity;
pub mod journal;
pub mod lock;
pub mod preserve;
#[cfg(test)]
mod scratch;
pub mod trust;
