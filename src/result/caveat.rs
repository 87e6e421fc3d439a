//! Caveats: what the reader must know about a figure before trusting it
//! (a cache answered, the file system lives in RAM, the card is simulated,
//! the test region was restored), as a closed set of kinds with their
//! sentence.
//!
//! The kind decides how a report treats the caveat (the HTML report marks
//! the ones that make a figure not the medium's speed); the text is for
//! people. Stored results keep the form they always had, one string
//! `"KIND: text"` (or the bare text for a plain note), so that JSON, CSV and
//! Markdown exports of old and new runs read the same; reading it back
//! recovers the kind from the label.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// What sort of caveat it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaveatKind {
    /// A cache (page cache, a loop device's backing file, the device's own
    /// cache) answered: the figure is not the medium's speed.
    Cache,
    /// The file system keeps its files in RAM: the figure is memory speed.
    Memory,
    /// The target is a simulated card on a virtual clock.
    Simulated,
    /// The original data of the test region was saved and put back.
    Preserved,
    /// A choice made or a limit met, in plain words.
    Note,
}

impl CaveatKind {
    /// Every kind that carries a label, in the order labels are tried.
    const LABELLED: [CaveatKind; 4] = [
        CaveatKind::Cache,
        CaveatKind::Memory,
        CaveatKind::Simulated,
        CaveatKind::Preserved,
    ];

    /// The capitalised word a reader sees before the sentence.
    pub fn label(self) -> Option<&'static str> {
        match self {
            CaveatKind::Cache => Some("CACHE"),
            CaveatKind::Memory => Some("MEMORY"),
            CaveatKind::Simulated => Some("SIMULATED"),
            CaveatKind::Preserved => Some("PRESERVED"),
            CaveatKind::Note => None,
        }
    }

    /// True when the figure it qualifies is not the storage medium's speed.
    pub fn undermines_figure(self) -> bool {
        matches!(self, CaveatKind::Cache | CaveatKind::Memory)
    }
}

/// One caveat: its kind and its sentence (without the label).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caveat {
    kind: CaveatKind,
    text: String,
}

impl Caveat {
    pub fn new(kind: CaveatKind, text: impl Into<String>) -> Caveat {
        Caveat {
            kind,
            text: text.into(),
        }
    }

    /// A cache answered (see [`CaveatKind::Cache`]).
    pub fn cache(text: impl Into<String>) -> Caveat {
        Caveat::new(CaveatKind::Cache, text)
    }

    /// The file system is in RAM (see [`CaveatKind::Memory`]).
    pub fn memory(text: impl Into<String>) -> Caveat {
        Caveat::new(CaveatKind::Memory, text)
    }

    /// The card is simulated (see [`CaveatKind::Simulated`]).
    pub fn simulated(text: impl Into<String>) -> Caveat {
        Caveat::new(CaveatKind::Simulated, text)
    }

    /// The test region was restored (see [`CaveatKind::Preserved`]).
    pub fn preserved(text: impl Into<String>) -> Caveat {
        Caveat::new(CaveatKind::Preserved, text)
    }

    /// A plain remark.
    pub fn note(text: impl Into<String>) -> Caveat {
        Caveat::new(CaveatKind::Note, text)
    }

    pub fn kind(&self) -> CaveatKind {
        self.kind
    }

    /// The sentence without its label.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Reads the stored form back: a known label before `": "` gives the
    /// kind; anything else is a plain note, kept whole.
    pub fn parse(stored: &str) -> Caveat {
        for kind in CaveatKind::LABELLED {
            let label = kind.label().unwrap_or_default();
            if let Some(text) = stored
                .strip_prefix(label)
                .and_then(|rest| rest.strip_prefix(": "))
            {
                return Caveat::new(kind, text);
            }
        }
        Caveat::note(stored)
    }
}

impl fmt::Display for Caveat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind.label() {
            Some(label) => write!(f, "{label}: {}", self.text),
            None => f.write_str(&self.text),
        }
    }
}

impl Serialize for Caveat {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Caveat {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Caveat, D::Error> {
        let stored = String::deserialize(deserializer)?;
        Ok(Caveat::parse(&stored))
    }
}

/// A caveat is stored as one string (see the module doc), so its schema
/// is a string with the labels spelled out.
impl schemars::JsonSchema for Caveat {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Caveat".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "What the reader must know about a figure before trusting it, as `LABEL: sentence` or a plain sentence. Labels: CACHE (a cache answered: not the medium's speed), MEMORY (the file system is in RAM), SIMULATED (a simulated card on a virtual clock), PRESERVED (the test region was saved and put back); no label: a plain note."
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_labelled_caveat_displays_and_stores_its_label() {
        let c = Caveat::cache("the page cache answered");
        assert_eq!(c.to_string(), "CACHE: the page cache answered");
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(json, "\"CACHE: the page cache answered\"");
        let back: Caveat = serde_json::from_str(&json).unwrap();
        assert_eq!(back, c);
        assert_eq!(back.kind(), CaveatKind::Cache);
    }

    #[test]
    fn a_plain_note_is_its_text_alone() {
        let c = Caveat::note("files go through the page cache");
        assert_eq!(c.to_string(), "files go through the page cache");
        assert_eq!(Caveat::parse(&c.to_string()), c);
    }

    #[test]
    fn a_word_in_capitals_without_the_separator_is_not_a_label() {
        for text in [
            "CACHE without colon",
            "CACHES: plural",
            "MEMORY:no space",
            "cache: lower",
        ] {
            assert_eq!(Caveat::parse(text).kind(), CaveatKind::Note, "{text}");
            assert_eq!(Caveat::parse(text).to_string(), text);
        }
    }

    #[test]
    fn only_cache_and_memory_undermine_a_figure() {
        let undermining: Vec<_> = CaveatKind::LABELLED
            .into_iter()
            .chain([CaveatKind::Note])
            .filter(|k| k.undermines_figure())
            .collect();
        assert_eq!(undermining, [CaveatKind::Cache, CaveatKind::Memory]);
    }

    proptest! {
        /// Any stored string reads back to a caveat that stores the same string.
        #[test]
        fn every_stored_string_round_trips(stored in ".{0,80}") {
            let c = Caveat::parse(&stored);
            prop_assert_eq!(c.to_string(), stored);
        }

        /// Any caveat made in code survives storing and reading.
        #[test]
        fn every_caveat_round_trips(kind in 0usize..5, text in "[^:]{0,60}") {
            let kind = [CaveatKind::Cache, CaveatKind::Memory, CaveatKind::Simulated,
                CaveatKind::Preserved, CaveatKind::Note][kind];
            let c = Caveat::new(kind, text);
            let back: Caveat = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
            prop_assert_eq!(back, c);
        }
    }
}
