//! The vocabulary every layer shares: the closed sets of values (directions,
//! data patterns, I/O modes, read methods, copy syncs, presets, formats) and
//! the typed, validated configurations of the measuring commands. Closed sets
//! are enums, never strings, so a misspelt value cannot travel past the
//! argument parser; `cli` turns arguments into these types, and everything
//! below it names them from here rather than reaching up into the parser.

pub mod config;
pub mod limits;
pub mod options;
pub mod output;
pub mod pattern;
pub mod presets;
pub mod rw;
pub mod wide;

pub use pattern::Pattern;
pub use rw::Rw;
