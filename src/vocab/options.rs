//! The closed sets of values the command line accepts, as enums: clap parses
//! each spelling once, and the commands `match` on the result instead of
//! comparing strings. The spellings (and so `--help` and the JSON configs)
//! are the ones the options have always had.
//!
//! The variants carry `//` comments, not `///`: clap would print doc comments
//! beside each possible value and change the help text.

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

/// `profile --preset`: a set of rows people know from CrystalDiskMark 8
/// and KDiskMark.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize, schemars::JsonSchema,
)]
#[value(rename_all = "kebab-case")]
#[serde(rename_all = "kebab-case")]
pub enum ProfilePreset {
    // SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1.
    Default,
    // SEQ1M Q8T1, SEQ128K Q32T1, RND4K Q32T16, RND4K Q1T1.
    Nvme,
    // SEQ1M Q8T1, RND4K Q32T16.
    Peak,
    // SEQ1M Q1T1, RND4K Q1T1.
    RealWorld,
}

/// `--engine`: the backend asked for.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize, schemars::JsonSchema,
)]
#[value(rename_all = "lowercase")]
#[serde(rename_all = "lowercase")]
pub enum EngineChoice {
    // io_uring when more than one I/O is in flight, else sync.
    Auto,
    Sync,
    Uring,
}

impl EngineChoice {
    /// The engine named, or `None` for auto (decided with the queue depth).
    pub fn asked(self) -> Option<EngineKind> {
        match self {
            EngineChoice::Auto => None,
            EngineChoice::Sync => Some(EngineKind::Sync),
            EngineChoice::Uring => Some(EngineKind::Uring),
        }
    }
}

/// `run --method`: how reads reach the data.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize, schemars::JsonSchema,
)]
#[value(rename_all = "lowercase")]
#[serde(rename_all = "lowercase")]
pub enum ReadMethod {
    // The engines (pread/pwrite or io_uring) on the target's descriptor.
    Pread,
    // Page faults on a mapping.
    Mmap,
    // The C library's buffered fread, in --stdio-bs calls.
    Stdio,
}

impl ReadMethod {
    /// The spelling on the command line and in results.
    pub fn as_str(self) -> &'static str {
        match self {
            ReadMethod::Pread => "pread",
            ReadMethod::Mmap => "mmap",
            ReadMethod::Stdio => "stdio",
        }
    }
}

/// `files load --method`: how each file is read.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize, schemars::JsonSchema,
)]
#[value(rename_all = "lowercase")]
#[serde(rename_all = "lowercase")]
pub enum FileReadMethod {
    // read(2) into one buffer.
    Read,
    // Accepted as a synonym of read: whole files are read from their start.
    Pread,
    Mmap,
    Stdio,
}

/// `stream --rw`: a player reads, a recorder writes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize, schemars::JsonSchema,
)]
#[value(rename_all = "lowercase")]
#[serde(rename_all = "lowercase")]
pub enum StreamDirection {
    Read,
    Write,
}

impl StreamDirection {
    /// The spelling on the command line and in results.
    pub fn as_str(self) -> &'static str {
        match self {
            StreamDirection::Read => "read",
            StreamDirection::Write => "write",
        }
    }
}

/// `copy --sync`: when the data must be on the medium.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize, schemars::JsonSchema,
)]
#[value(rename_all = "lowercase")]
#[serde(rename_all = "lowercase")]
pub enum CopySync {
    // Page cache only, like `dd` alone.
    None,
    // One fsync at the end (`conv=fsync`).
    End,
    // Every write synchronous (`oflag=dsync`).
    Each,
    // O_DIRECT (`oflag=direct`), then fsync.
    Direct,
}

impl CopySync {
    /// The spelling on the command line and in results.
    pub fn as_str(self) -> &'static str {
        match self {
            CopySync::None => "none",
            CopySync::End => "end",
            CopySync::Each => "each",
            CopySync::Direct => "direct",
        }
    }

    /// The copy ends with an fsync of the destination.
    pub fn syncs_at_end(self) -> bool {
        matches!(self, CopySync::End | CopySync::Direct)
    }

    /// Extra `open` flags of the destination's page-cache descriptor.
    pub fn open_flags(self) -> i32 {
        match self {
            CopySync::Each => libc::O_DSYNC,
            CopySync::None | CopySync::End | CopySync::Direct => 0,
        }
    }
}

/// `export --format`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize, schemars::JsonSchema,
)]
#[value(rename_all = "lowercase")]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    Json,
    Csv,
    Markdown,
    // A short spelling of markdown; a variant of its own so that the help
    // lists it among the possible values, as it always has.
    Md,
}

/// `run --bs`: a size, or `max` (the device's largest request), which only
/// the opened device can turn into a size; see
/// [`super::config::RunConfig::resolve_blocks`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BlockSize {
    Bytes(u64),
    DeviceMax,
}

impl BlockSize {
    /// Stands in for `max` in the checks made before the device is open.
    pub const MAX_STAND_IN: u64 = 1 << 20;

    /// The size the checks before opening use.
    pub fn before_open(self) -> u64 {
        match self {
            BlockSize::Bytes(bytes) => bytes,
            BlockSize::DeviceMax => Self::MAX_STAND_IN,
        }
    }
}

/// The clap parser of `--bs`: a size within the block limits, or `max`.
pub fn parse_block_size(text: &str) -> Result<BlockSize, String> {
    match text.trim() {
        "max" => Ok(BlockSize::DeviceMax),
        other => crate::vocab::limits::BLOCK
            .check(other)
            .map(BlockSize::Bytes)
            .map_err(|e| format!("{e}, or max (the device's largest request)")),
    }
}

/// How data moves between iocurve and the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum IoMode {
    /// O_DIRECT: no page cache in between.
    Direct,
    /// Through the page cache, evicted before reads, fdatasync after writes.
    Buffered,
}

/// Which backend to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    /// pread/pwrite, one I/O at a time.
    Sync,
    /// io_uring with registered buffers and file, any queue depth.
    Uring,
    /// Reads copied out of a memory mapping (page faults); reads only.
    Mmap,
    /// Reads through the C library's buffered stream in calls of this many
    /// bytes (`--stdio-bs`); reads only.
    Stdio(
        /// Bytes per fread call.
        u32,
    ),
}

impl EngineKind {
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Sync => "sync",
            EngineKind::Uring => "uring",
            EngineKind::Mmap => "mmap",
            EngineKind::Stdio(_) => "stdio",
        }
    }
}

/// The five flash tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FlashTest {
    Align,
    OpenAu,
    Cache,
    Capacity,
    Class,
}

impl FlashTest {
    /// The subcommand's name.
    pub fn name(self) -> &'static str {
        match self {
            FlashTest::Align => "align",
            FlashTest::OpenAu => "open-au",
            FlashTest::Cache => "cache",
            FlashTest::Capacity => "capacity",
            FlashTest::Class => "class",
        }
    }

    /// Whether the test writes (all but `align`, which only reads).
    pub fn writes(self) -> bool {
        self != FlashTest::Align
    }
}

impl std::fmt::Display for FlashTest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every spelling clap accepts for `E`.
    fn names<E: ValueEnum>() -> Vec<String> {
        E::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value())
            .map(|p| p.get_name().to_string())
            .collect()
    }

    #[test]
    fn engine_spellings_and_meaning() {
        assert_eq!(names::<EngineChoice>(), ["auto", "sync", "uring"]);
        assert_eq!(EngineChoice::Auto.asked(), None);
        assert_eq!(EngineChoice::Uring.asked(), Some(EngineKind::Uring));
    }

    #[test]
    fn read_method_spellings_round_trip() {
        assert_eq!(names::<ReadMethod>(), ["pread", "mmap", "stdio"]);
        for m in ReadMethod::value_variants() {
            assert_eq!(ReadMethod::from_str(m.as_str(), false), Ok(*m));
        }
    }

    #[test]
    fn file_read_methods_keep_pread() {
        assert_eq!(
            names::<FileReadMethod>(),
            ["read", "pread", "mmap", "stdio"]
        );
    }

    #[test]
    fn stream_direction_round_trips() {
        assert_eq!(names::<StreamDirection>(), ["read", "write"]);
        for d in StreamDirection::value_variants() {
            assert_eq!(StreamDirection::from_str(d.as_str(), false), Ok(*d));
        }
    }

    #[test]
    fn copy_sync_says_when_it_syncs() {
        assert_eq!(names::<CopySync>(), ["none", "end", "each", "direct"]);
        for s in CopySync::value_variants() {
            assert_eq!(CopySync::from_str(s.as_str(), false), Ok(*s));
        }
        assert!(CopySync::End.syncs_at_end() && CopySync::Direct.syncs_at_end());
        assert!(!CopySync::None.syncs_at_end() && !CopySync::Each.syncs_at_end());
        assert_eq!(CopySync::Each.open_flags(), libc::O_DSYNC);
        assert_eq!(CopySync::End.open_flags(), 0);
    }

    #[test]
    fn export_formats_keep_md() {
        assert_eq!(names::<ExportFormat>(), ["json", "csv", "markdown", "md"]);
    }

    #[test]
    fn serde_spellings_match_the_command_line() {
        let json = serde_json::to_string(&(CopySync::None, ReadMethod::Stdio)).unwrap();
        assert_eq!(json, r#"["none","stdio"]"#);
        let back: StreamDirection = serde_json::from_str(r#""write""#).unwrap();
        assert_eq!(back, StreamDirection::Write);
    }

    #[test]
    fn block_size_takes_sizes_and_max() {
        assert_eq!(parse_block_size("4k"), Ok(BlockSize::Bytes(4096)));
        assert_eq!(parse_block_size(" max "), Ok(BlockSize::DeviceMax));
        assert!(parse_block_size("4q").unwrap_err().contains("or max"));
        assert_eq!(BlockSize::DeviceMax.before_open(), 1 << 20);
        assert_eq!(BlockSize::Bytes(512).before_open(), 512);
    }

    /// Parses `text` as `E` with and without case folding; either result is
    /// fine, a panic is not.
    fn parses_or_refuses<E: ValueEnum>(text: &str) {
        let _ = E::from_str(text, false);
        let _ = E::from_str(text, true);
    }

    proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in any::<String>()) {
            parses_or_refuses::<EngineChoice>(&text);
            parses_or_refuses::<ReadMethod>(&text);
            parses_or_refuses::<FileReadMethod>(&text);
            parses_or_refuses::<StreamDirection>(&text);
            parses_or_refuses::<CopySync>(&text);
            parses_or_refuses::<ExportFormat>(&text);
            parses_or_refuses::<crate::vocab::Rw>(&text);
            let _ = parse_block_size(&text);
            let _ = crate::vocab::Pattern::parse(&text);
        }

        #[test]
        fn accepted_text_is_a_listed_spelling(text in "[a-z]{1,9}") {
            if let Ok(m) = CopySync::from_str(&text, false) {
                prop_assert_eq!(m.as_str(), text.as_str());
            }
            if let Ok(m) = ReadMethod::from_str(&text, false) {
                prop_assert_eq!(m.as_str(), text.as_str());
            }
            if let Ok(rw) = crate::vocab::Rw::from_str(&text, false) {
                prop_assert_eq!(rw.name(), text.as_str());
            }
        }
    }
}
