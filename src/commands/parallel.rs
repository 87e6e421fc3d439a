//! placeholder
use crate::cli::config::RunConfig;
pub fn run(_cfg: &RunConfig) -> anyhow::Result<i32> {
    todo!()
}
