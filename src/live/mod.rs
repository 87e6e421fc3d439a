//! What a measuring command shows while it runs: the progress bar on the
//! terminal and the JSON lines streamed on stdout, one per interval. These
//! sit below the workloads that feed them and above the results they carry,
//! apart from `report`, which renders only finished results.

pub mod json_lines;
pub mod progress;
