//! The bytes written: incompressible random data unless asked otherwise.
//!
//! Compressing or deduplicating controllers (many SSDs, some USB bridges,
//! zram) would flatter a benchmark that writes zeros, so the default is
//! random data, generated before timing starts.

use serde::Serialize;

/// What write buffers are filled with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase", tag = "kind", content = "byte")]
pub enum Pattern {
    Random,
    Zeros,
    Byte(
        /// The byte every write buffer is filled with, 0 to 255.
        u8,
    ),
}

impl Pattern {
    /// Parses `random`, `zeros` or `0xNN`.
    pub fn parse(text: &str) -> Result<Pattern, String> {
        match text {
            "random" => Ok(Pattern::Random),
            "zeros" | "zero" => Ok(Pattern::Zeros),
            hex if hex.starts_with("0x") || hex.starts_with("0X") => {
                u8::from_str_radix(&hex[2..], 16)
                    .map(Pattern::Byte)
                    .map_err(|_| format!("'{text}' is not a byte; write it as 0x00 to 0xff"))
            }
            _ => Err(format!(
                "'{text}' is not a pattern; use random, zeros or 0xNN (e.g. 0xa5)"
            )),
        }
    }

    /// Fills `buf`; random data comes from a generator seeded with `seed`.
    pub fn fill(self, buf: &mut [u8], seed: u64) {
        match self {
            Pattern::Random => fill_random(buf, seed),
            Pattern::Zeros => buf.fill(0),
            Pattern::Byte(b) => buf.fill(b),
        }
    }

    pub fn describe(self) -> String {
        match self {
            Pattern::Random => "random".into(),
            Pattern::Zeros => "zeros".into(),
            Pattern::Byte(b) => format!("0x{b:02x}"),
        }
    }
}

fn fill_random(buf: &mut [u8], seed: u64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut chunks = buf.chunks_exact_mut(8);
    for chunk in &mut chunks {
        chunk.copy_from_slice(&rng.u64(..).to_le_bytes());
    }
    let rest = chunks.into_remainder();
    let tail = rng.u64(..).to_le_bytes();
    rest.copy_from_slice(&tail[..rest.len()]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses() {
        assert_eq!(Pattern::parse("random"), Ok(Pattern::Random));
        assert_eq!(Pattern::parse("0xa5"), Ok(Pattern::Byte(0xa5)));
        assert!(Pattern::parse("0x1ff").is_err());
        assert!(Pattern::parse("ones").is_err());
    }

    #[test]
    fn random_data_does_not_repeat() {
        let mut buf = vec![0u8; 1 << 16];
        Pattern::Random.fill(&mut buf, 1);
        let distinct: std::collections::HashSet<_> = buf.chunks(8).collect();
        assert_eq!(distinct.len(), buf.len() / 8);
    }
}
