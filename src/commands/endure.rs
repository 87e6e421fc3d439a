//! placeholder
pub fn endure(_a: &crate::cli::EndureArgs) -> anyhow::Result<i32> {
    todo!()
}
