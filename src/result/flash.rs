//! What a `flash` command found: the one-line verdict, its findings with
//! their confidence, and the detector's own figures.
//!
//! [`Confidence`] and [`Status`] are graded by the flash analysis
//! (`analysis::flash`) and defined here, below it, because a finding
//! records them.

use serde::{Deserialize, Serialize};

/// What a `flash` command found, as the result records it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FlashReport {
    /// `align`, `open-au`, `cache`, `capacity` or `class`.
    pub test: String,
    /// The one-line answer.
    pub verdict: String,
    pub findings: Vec<Finding>,
    /// The raw table (`--verbose`): header, then rows.
    pub table: Vec<Vec<String>>,
    /// True when the verdict is a failure (fake card, failed class).
    pub failed: bool,
    /// The detector's own figures, for JSON readers.
    pub details: serde_json::Value,
}

/// One line of a flash verdict: what was found, and how sure.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Finding {
    pub name: String,
    pub value: String,
    pub confidence: Option<Confidence>,
    /// PASS, FAIL or LINK for class requirements.
    pub status: Option<Status>,
    pub note: Option<String>,
}

impl Finding {
    pub fn new(name: &str, value: String, confidence: Option<Confidence>) -> Finding {
        Finding {
            name: name.into(),
            value,
            confidence,
            status: None,
            note: None,
        }
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Finding {
        self.note = Some(note.into());
        self
    }
}

/// How sure a decision is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    Low,
    Medium,
    High,
}

impl Confidence {
    pub fn name(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

/// A requirement's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    Pass,
    Fail,
    /// The link, not the card, keeps the requirement out of reach.
    Link,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Link => "LINK",
        }
    }
}
