//! The promises iocurve keeps over its whole surface, each enumerated rather
//! than shown by example: no byte of a target lost (`--preserve`, the safety
//! matrix, targets in use, panics, Ctrl-C, recover), writes only through the
//! write gate, errors that name the problem and the fix, a results database
//! that cannot be lost, one set of output flags, text that fits a terminal,
//! live output before the result, and outputs that change only on purpose
//! (snapshots, README's samples). See tests/README.md.

#[path = "common/mod.rs"]
mod common;

#[path = "promises/advice.rs"]
mod advice;
#[path = "promises/cluster_flags.rs"]
mod cluster_flags;
#[path = "promises/db_safety.rs"]
mod db_safety;
#[path = "promises/errors.rs"]
mod errors;
#[path = "promises/errors_keep_cause.rs"]
mod errors_keep_cause;
#[path = "promises/flash_options.rs"]
mod flash_options;
#[path = "promises/floors.rs"]
mod floors;
#[path = "promises/fuzz_args.rs"]
mod fuzz_args;
#[path = "promises/help_headings.rs"]
mod help_headings;
#[path = "promises/in_use.rs"]
mod in_use;
#[path = "promises/interrupt.rs"]
mod interrupt;
#[path = "promises/json_naming.rs"]
mod json_naming;
#[path = "promises/json_schema.rs"]
mod json_schema;
#[path = "promises/live_header.rs"]
mod live_header;
#[path = "promises/live_json_lines.rs"]
mod live_json_lines;
#[path = "promises/name_swaps.rs"]
mod name_swaps;
#[path = "promises/output_flags.rs"]
mod output_flags;
#[path = "promises/panic_restores.rs"]
mod panic_restores;
#[path = "promises/preserve.rs"]
mod preserve;
#[path = "promises/preserve_newer.rs"]
mod preserve_newer;
#[path = "promises/readme_samples.rs"]
mod readme_samples;
#[path = "promises/recover_identity.rs"]
mod recover_identity;
#[path = "promises/result_strings.rs"]
mod result_strings;
#[path = "promises/safety_matrix.rs"]
mod safety_matrix;
#[path = "promises/snapshots.rs"]
mod snapshots;
#[path = "promises/text_width.rs"]
mod text_width;
#[path = "promises/write_gate_structure.rs"]
mod write_gate_structure;
