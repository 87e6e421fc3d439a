//! The JSON document: the whole result, `schema_version` first.

use super::Export;
use crate::result::RunResult;

pub struct Json;

impl Export for Json {
    fn render(&self, result: &RunResult) -> String {
        let mut out = serde_json::to_string_pretty(result)
            .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
        out.push('\n');
        out
    }
}
