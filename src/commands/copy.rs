//! placeholder
pub fn copy(_a: &crate::cli::CopyArgs) -> anyhow::Result<i32> {
    todo!()
}
