//! `profile --tests`: the rows of a profile written as CrystalDiskMark
//! names them (`SEQ1M:Q8T1,RND4K:Q32T16`), parsed and checked before
//! anything is opened.

use crate::vocab::limits::{QUEUE_DEPTH, THREADS};
use crate::vocab::presets::ProfileRow;

/// The rows `--tests` asked for, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileRows(pub Vec<ProfileRow>);

/// At most this many rows: each is measured twice (read, write) and
/// repeated, so more would take longer than anyone waits for a profile.
const MAX_ROWS: usize = 16;
/// Transfers from one sector...
const MIN_BLOCK: u64 = 512;
/// ...to 64 MiB, each a whole number of sectors (O_DIRECT needs it).
const MAX_BLOCK: u64 = 64 << 20;

const EXAMPLE: &str = "e.g. --tests SEQ1M:Q8T1,RND4K:Q32T16";

/// Parses `SEQ1M:Q8T1,RND4K:Q32T16`: each row is SEQ or RND, a size, then
/// Q<depth> and optionally T<jobs> (1 when left out), with `:` or a space
/// (or nothing) before the Q.
pub fn parse_rows(text: &str) -> Result<ProfileRows, String> {
    let rows: Vec<ProfileRow> = text.split(',').map(parse_row).collect::<Result<_, _>>()?;
    if rows.len() > MAX_ROWS {
        return Err(format!("at most {MAX_ROWS} rows, {EXAMPLE}"));
    }
    Ok(ProfileRows(rows))
}

fn parse_row(item: &str) -> Result<ProfileRow, String> {
    let item = item.trim();
    let upper = item.to_ascii_uppercase();
    let random = match upper.get(..3) {
        Some("SEQ") => false,
        Some("RND") => true,
        _ => return Err(format!("{item:?}: a row starts with SEQ or RND, {EXAMPLE}")),
    };
    let rest = &upper[3..];
    let q = rest
        .rfind('Q')
        .ok_or_else(|| format!("{item:?}: give the queue depth as Q<n>, {EXAMPLE}"))?;
    let size_text = rest[..q].trim_end_matches([':', ' ']);
    let block_size = parse_block(size_text).map_err(|why| format!("{item:?}: {why}"))?;
    let (queue_depth, threads) =
        parse_depth(&rest[q..]).map_err(|why| format!("{item:?}: {why}"))?;
    Ok(ProfileRow::new(random, block_size, queue_depth, threads))
}

/// `4K`, `128K`, `1M`, `512B`, `512` (binary units).
fn parse_block(text: &str) -> Result<u64, String> {
    let text = text.trim().trim_end_matches("IB");
    let (digits, shift) = match text.char_indices().last() {
        Some((i, 'K')) => (&text[..i], 10),
        Some((i, 'M')) => (&text[..i], 20),
        Some((i, 'G')) => (&text[..i], 30),
        Some((i, 'B')) => (&text[..i], 0),
        _ => (text, 0),
    };
    let bytes = plain_number(digits)
        .and_then(|n| u64::from(n).checked_mul(1 << shift))
        .ok_or_else(|| format!("the size is a number with K, M or G, {EXAMPLE}"))?;
    if !(MIN_BLOCK..=MAX_BLOCK).contains(&bytes) || !bytes.is_multiple_of(MIN_BLOCK) {
        return Err("the size is from 512B to 64M in whole 512-byte sectors".to_string());
    }
    Ok(bytes)
}

/// `Q8T1`, `Q32T16`, `Q1` (one job).
fn parse_depth(text: &str) -> Result<(u32, u32), String> {
    let text = text.trim().trim_start_matches('Q');
    let (q, t) = text.split_once('T').unwrap_or((text, "1"));
    let depth = QUEUE_DEPTH.check(q).map_err(|why| format!("Q: {why}"))?;
    let jobs = THREADS.check(t).map_err(|why| format!("T: {why}"))?;
    Ok((depth, jobs))
}

/// Plain decimal digits that fit a u32 (no sign, no spaces).
fn plain_number(digits: &str) -> Option<u32> {
    let plain = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    plain.then(|| digits.parse().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn names(text: &str) -> Vec<String> {
        parse_rows(text)
            .unwrap()
            .0
            .iter()
            .map(|r| r.to_string())
            .collect()
    }

    #[test]
    fn crystaldiskmark_names_are_read_in_every_spelling() {
        assert_eq!(
            names("SEQ1M:Q8T1,RND4K:Q32T16"),
            ["SEQ1M Q8T1", "RND4K Q32T16"]
        );
        assert_eq!(
            names("seq128k q32t1, rnd4KiB Q1"),
            ["SEQ128K Q32T1", "RND4K Q1T1"]
        );
        assert_eq!(
            names("SEQ512BQ4T2,RND1536:Q2"),
            ["SEQ512B Q4T2", "RND1536B Q2T1"]
        );
    }

    #[test]
    fn a_row_reads_as_its_parts() {
        let rows = parse_rows("RND4K:Q32T16").unwrap().0;
        assert_eq!(rows, [ProfileRow::new(true, 4096, 32, 16)]);
    }

    #[test]
    fn a_bad_row_is_refused_with_an_example() {
        for (bad, says) in [
            ("", "SEQ or RND"),
            ("MIX4K:Q1T1", "SEQ or RND"),
            ("SEQ1M", "Q<n>"),
            ("SEQ1M:Q0T1", "I/Os in flight"),
            ("SEQ1M:Q8T0", "parallel jobs"),
            ("SEQ100:Q1", "512-byte sectors"),
            ("SEQ128M:Q1", "512B to 64M"),
            ("SEQ:Q1", "number with K, M or G"),
            ("SEQ-4K:Q1", "number with K, M or G"),
            ("SEQ99999999999G:Q1", "number with K, M or G"),
        ] {
            let e = parse_rows(bad).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
        let many = vec!["RND4K:Q1"; 17].join(",");
        assert!(parse_rows(&many).unwrap_err().contains("at most 16"));
    }

    proptest! {
        /// No input panics; whatever is accepted is a valid row.
        #[test]
        fn any_text_is_parsed_or_refused(text in ".{0,40}") {
            if let Ok(rows) = parse_rows(&text) {
                for r in rows.0 {
                    prop_assert!(r.block_size >= MIN_BLOCK && r.block_size <= MAX_BLOCK);
                    prop_assert!(r.queue_depth >= 1 && r.threads >= 1);
                }
            }
        }

        /// A row's name reads back as the same row.
        #[test]
        fn a_name_reads_back_as_its_row(
            random: bool,
            sectors in 1u64..=(MAX_BLOCK / MIN_BLOCK),
            depth in 1u32..=1024,
            jobs in 1u32..=256,
        ) {
            let row = ProfileRow::new(random, sectors * MIN_BLOCK, depth, jobs);
            prop_assert_eq!(parse_rows(&row.to_string()).unwrap().0, vec![row]);
        }
    }
}
