//! The closed sets a result records that no configuration names: why a
//! sustained write stopped, which side held a copy back, and a test's
//! direction and engine as recorded (iocurve's own, or an imported tool's
//! word for one iocurve has not).
//!
//! Why a module of its own: these were strings, so a renderer could meet a
//! value no code produces and a typo went unnoticed. Each serializes to the
//! exact text it was stored as, so documents of every schema read the same.

use crate::vocab::Rw;
use crate::vocab::options::EngineKind;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// What ended a sustained write.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
pub enum EndedBy {
    /// The planned bytes were written.
    #[default]
    #[serde(rename = "bytes")]
    Bytes,
    /// The time limit came first.
    #[serde(rename = "time")]
    Time,
    /// More was asked than the target holds: the plan stopped at its end.
    #[serde(rename = "end of target")]
    EndOfTarget,
    /// Ctrl-C or SIGTERM.
    #[serde(rename = "interrupted")]
    Interrupted,
    /// A write failed.
    #[serde(rename = "error")]
    Error,
}

impl EndedBy {
    /// The words results and reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            EndedBy::Bytes => "bytes",
            EndedBy::Time => "time",
            EndedBy::EndOfTarget => "end of target",
            EndedBy::Interrupted => "interrupted",
            EndedBy::Error => "error",
        }
    }
}

impl fmt::Display for EndedBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The slower side of a copy, each measured alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Bottleneck {
    /// Reading the image.
    Source,
    /// Writing the device.
    Destination,
}

impl Bottleneck {
    pub fn as_str(self) -> &'static str {
        match self {
            Bottleneck::Source => "source",
            Bottleneck::Destination => "destination",
        }
    }
}

impl fmt::Display for Bottleneck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A test's direction as recorded: one of iocurve's, or an imported job's
/// that iocurve has no word for (fio's `trim`), spelled as that tool did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestRw {
    Ours(Rw),
    Imported(String),
}

impl TestRw {
    /// Reads a recorded spelling; fio's `readwrite` is iocurve's `rw`.
    pub fn parse(text: &str) -> TestRw {
        Rw::parse(text).map_or_else(|| TestRw::Imported(text.to_string()), TestRw::Ours)
    }

    pub fn as_str(&self) -> &str {
        match self {
            TestRw::Ours(rw) => rw.name(),
            TestRw::Imported(text) => text,
        }
    }

    /// iocurve's direction, when the test had one.
    pub fn ours(&self) -> Option<Rw> {
        match self {
            TestRw::Ours(rw) => Some(*rw),
            TestRw::Imported(_) => None,
        }
    }

    /// Whether the test read: by iocurve's direction, or an imported word
    /// that names reading (or fio's mixed `rw`).
    pub fn reads(&self) -> bool {
        match self {
            TestRw::Ours(rw) => rw.reads(),
            TestRw::Imported(word) => word.contains("read") || word.contains("rw"),
        }
    }

    /// Whether the test wrote (fio's `trimwrite` did).
    pub fn writes(&self) -> bool {
        match self {
            TestRw::Ours(rw) => rw.writes(),
            TestRw::Imported(word) => word.contains("write") || word.contains("rw"),
        }
    }

    /// The one direction of a test that only reads (`Some(false)`) or only
    /// writes (`Some(true)`), for a table with a read and a write column;
    /// an imported word by its ending (fio's `trimwrite` is a write).
    pub fn column(&self) -> Option<bool> {
        match self {
            TestRw::Ours(rw) if rw.is_mixed() => None,
            TestRw::Ours(rw) => Some(rw.writes()),
            TestRw::Imported(word) if word.ends_with("write") => Some(true),
            TestRw::Imported(word) if word.ends_with("read") => Some(false),
            TestRw::Imported(_) => None,
        }
    }
}

impl From<Rw> for TestRw {
    fn from(rw: Rw) -> TestRw {
        TestRw::Ours(rw)
    }
}

impl From<&str> for TestRw {
    fn from(text: &str) -> TestRw {
        TestRw::parse(text)
    }
}

/// Compares the spelling, as filters by a direction's name do.
impl PartialEq<&str> for TestRw {
    fn eq(&self, text: &&str) -> bool {
        self.as_str() == *text
    }
}

impl PartialEq<Rw> for TestRw {
    fn eq(&self, rw: &Rw) -> bool {
        self.ours() == Some(*rw)
    }
}

/// The engine a test ran on, as recorded: iocurve's engines by name (the
/// stdio call size is in the run's access section), or an imported tool's
/// (`fio:libaio`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestEngine {
    Sync,
    Uring,
    /// io_uring with a kernel thread polling its submission queue
    /// (`--sqpoll`): compared only with runs made the same way.
    UringPolled,
    Mmap,
    Stdio,
    Imported(String),
}

impl TestEngine {
    pub fn parse(text: &str) -> TestEngine {
        match text {
            "sync" => TestEngine::Sync,
            "uring" => TestEngine::Uring,
            "uring-sqpoll" => TestEngine::UringPolled,
            "mmap" => TestEngine::Mmap,
            "stdio" => TestEngine::Stdio,
            other => TestEngine::Imported(other.to_string()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            TestEngine::Sync => "sync",
            TestEngine::Uring => "uring",
            TestEngine::UringPolled => "uring-sqpoll",
            TestEngine::Mmap => "mmap",
            TestEngine::Stdio => "stdio",
            TestEngine::Imported(text) => text,
        }
    }
}

impl From<EngineKind> for TestEngine {
    fn from(kind: EngineKind) -> TestEngine {
        match kind {
            EngineKind::Sync => TestEngine::Sync,
            EngineKind::Uring => TestEngine::Uring,
            EngineKind::Mmap => TestEngine::Mmap,
            EngineKind::Stdio(_) => TestEngine::Stdio,
        }
    }
}

impl From<&str> for TestEngine {
    fn from(text: &str) -> TestEngine {
        TestEngine::parse(text)
    }
}

/// `Display`, serde and the schema of a type recorded as one word: written
/// with its `as_str`, read back with its `parse` (which takes any word),
/// and described in the schema as a string by `$doc`.
macro_rules! recorded_as_word {
    ($ty:ident, $doc:literal) => {
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$ty, D::Error> {
                Ok($ty::parse(&String::deserialize(d)?))
            }
        }

        impl schemars::JsonSchema for $ty {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($ty).into()
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({ "type": "string", "description": $doc })
            }
        }
    };
}

// One of iocurve's directions, or the imported tool's own word.
recorded_as_word!(
    TestRw,
    "The test's direction: one of iocurve's (read, write, randread, randwrite, rw, randrw), or an imported tool's own word (fio's trim)."
);

// The engine's name, or the imported tool's `tool:engine`.
recorded_as_word!(
    TestEngine,
    "The I/O engine: sync, uring, uring-sqpoll, mmap or stdio for iocurve's own runs; `tool:engine` (fio:libaio) for an imported run."
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_serializes_as_the_text_it_was_stored_as() {
        for e in [
            EndedBy::Bytes,
            EndedBy::Time,
            EndedBy::EndOfTarget,
            EndedBy::Interrupted,
            EndedBy::Error,
        ] {
            let text = serde_json::to_string(&e).unwrap();
            assert_eq!(text, format!("\"{}\"", e.as_str()));
            assert_eq!(serde_json::from_str::<EndedBy>(&text).unwrap(), e);
        }
        for b in [Bottleneck::Source, Bottleneck::Destination] {
            assert_eq!(
                serde_json::to_string(&b).unwrap(),
                format!("\"{}\"", b.as_str())
            );
        }
    }

    #[test]
    fn an_imported_direction_or_engine_keeps_its_spelling() {
        let rw: TestRw = serde_json::from_str("\"randtrim\"").unwrap();
        assert_eq!(rw, TestRw::Imported("randtrim".into()));
        assert_eq!(serde_json::to_string(&rw).unwrap(), "\"randtrim\"");
        let rw: TestRw = serde_json::from_str("\"randrw\"").unwrap();
        assert_eq!(rw, Rw::RandRw);
        let e: TestEngine = serde_json::from_str("\"fio:libaio\"").unwrap();
        assert_eq!(e.as_str(), "fio:libaio");
        let e: TestEngine = serde_json::from_str("\"uring\"").unwrap();
        assert_eq!(e, TestEngine::Uring);
        let e: TestEngine = serde_json::from_str("\"uring-sqpoll\"").unwrap();
        assert_eq!(e, TestEngine::UringPolled);
        assert_eq!(serde_json::to_string(&e).unwrap(), "\"uring-sqpoll\"");
        assert_eq!(TestEngine::from(EngineKind::Stdio(4096)).as_str(), "stdio");
    }

    #[test]
    fn a_direction_reads_writes_and_fills_a_column_by_its_kind() {
        let cases = [
            ("read", true, false, Some(false)),
            ("randwrite", false, true, Some(true)),
            ("randrw", true, true, None),
            ("readwrite", true, true, None),
            ("trim", false, false, None),
            ("trimwrite", false, true, Some(true)),
        ];
        for (word, reads, writes, column) in cases {
            let rw = TestRw::parse(word);
            assert_eq!(
                (rw.reads(), rw.writes(), rw.column()),
                (reads, writes, column),
                "{word}"
            );
        }
    }
}
