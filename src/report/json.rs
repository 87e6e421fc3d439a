//! The JSON document: the whole result, `schema_version` first; and the
//! start and result lines of `--json-lines` (see
//! [`crate::result::live::JsonLine`]). Their schemas are in schema/.

use super::Export;
use crate::result::RunResult;
use crate::result::live::{JsonLine, StartLine};

pub struct Json;

impl Export for Json {
    fn render(&self, result: &RunResult) -> String {
        let mut out = serde_json::to_string_pretty(result)
            .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
        out.push('\n');
        out
    }
}

/// The first line of a measuring command's JSON lines, printed before it
/// measures: the command, the target and the plan (see
/// [`super::text_plan`]), `type` first as a reader looks for it.
pub fn start_line(result: &RunResult) -> String {
    JsonLine::Start(StartLine {
        command: result.command(),
        target: &result.target,
        plan: super::text_plan::plan(result),
    })
    .to_line()
}

/// The last line of a measuring command's JSON lines: the whole result,
/// `{"type":"result", ...}`, the object `--json` prints with its tag.
pub fn result_line(result: &RunResult) -> String {
    JsonLine::Result(result).to_line()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::RunResult;

    #[test]
    fn the_document_carries_the_ranks_and_reads_back_whole() {
        let r = crate::testdata::mpi_result();
        let doc = Json.render(&r);
        let v: serde_json::Value = serde_json::from_str(&doc).unwrap();
        assert_eq!(v["mpi"]["size"], 4);
        assert_eq!(v["mpi"]["ranks"].as_array().unwrap().len(), 4);
        assert_eq!(v["mpi"]["ranks"][3]["host"], "node-b");
        assert_eq!(v["mpi"]["read_other_host"]["read_from"][0], 2);
        let back = RunResult::from_json(&doc).unwrap();
        let json = |r: &RunResult| serde_json::to_value(&r.mpi).unwrap();
        assert!(crate::testdata::same_json(&json(&back), &json(&r)));
        // A run on one host has no `mpi` key at all.
        let one = crate::testdata::run(None, "2024-03-01T10:00:00Z", &[20.0], &[10.0]);
        let v: serde_json::Value = serde_json::from_str(&Json.render(&one)).unwrap();
        assert!(v.get("mpi").is_none());
    }

    /// `tests/fixtures/mpi-result.json` is [`crate::testdata::mpi_result`]
    /// as `--json` prints it, for the integration tests, which cannot
    /// reach the unit tests' fixtures; `IOCURVE_BLESS=1` writes it anew
    /// after the fixture changed on purpose.
    #[test]
    fn the_fixture_file_is_the_mpi_fixture() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mpi-result.json");
        let doc = Json.render(&crate::testdata::mpi_result());
        if std::env::var_os("IOCURVE_BLESS").is_some() {
            std::fs::write(&path, &doc).unwrap();
        }
        let stored = std::fs::read_to_string(&path).unwrap();
        let value = |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap();
        assert!(
            crate::testdata::same_json(&value(&stored), &value(&doc)),
            "{} is not the fixture: run this test with IOCURVE_BLESS=1",
            path.display()
        );
    }

    #[test]
    fn the_start_line_is_one_object_naming_command_target_and_plan() {
        let r = crate::testdata::run(None, "2024-03-01T10:00:00Z", &[20.0], &[10.0]);
        let line = start_line(&r);
        assert!(!line.contains('\n'));
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["type"], "start");
        assert_eq!(v["command"], r.command());
        assert_eq!(v["target"]["path"], r.target.path.as_str());
        assert_eq!(
            v["plan"],
            serde_json::json!(crate::report::text_plan::plan(&r))
        );
    }
}
